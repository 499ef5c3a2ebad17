// The raw HTTP fuzzer (issue 18, "Hostile input"): sends the hostile requests of mutations.ts over bare sockets, in
// parallel lanes, while slow clients trickle a byte a second and a probe asks /health twice a second; judges every
// answer, the server's own log (a 5xx answered to a client that had gone), and the stored data, which must not change.
// Used by the short form (test/security/fuzz.test.ts) and the long one (test/soak/fuzz-soak.ts).
import { STATUS } from '../../../src/contracts/statuses'
import type { ErrorCode } from '../../../src/errors'
import { buildCase, requestIdOf, type FuzzCase, type FuzzWorld } from './mutations'
import { exchange, head, type RawAnswer, type RawExchange } from './raw-http'
import { diffStore, snapshotStore, type StoreSnapshot } from './state'

export type FindingKind = '5xx' | 'non-envelope' | 'accepted' | 'state-change' | 'health-miss' | 'no-answer' | 'server-error-logged'

export interface Finding {
  readonly kind: FindingKind
  /** The request, when one is to blame (state changes name the window of requests instead). */
  readonly index?: number
  readonly message: string
  readonly reproducer?: string
}

export interface FuzzOptions {
  readonly world: FuzzWorld
  readonly seed: number
  readonly requests: number
  /** The first request's index (`--from`: a window a state change was found in). */
  readonly from?: number
  /** Replays these requests only (a finding's reproducer). */
  readonly only?: readonly number[]
  /** Replays this slow client only, at its slow pace. */
  readonly onlySlow?: number
  /** Parallel lanes of requests. */
  readonly concurrency: number
  /**
   * Clients that send a request a byte at a time, `slowByteMs` apart, one after another for as long as the run lasts
   * (every other one sends its head at once and trickles only the body).
   */
  readonly slowClients: number
  readonly slowByteMs?: number
  /** The SQLite file: snapshotted before, every `stateEvery` requests, and after. */
  readonly dbPath: string
  readonly stateEvery?: number
  /** The server's log lines so far (parsed JSON), for 5xx the client never saw. */
  readonly serverLog: () => ReadonlyArray<Record<string, unknown>>
  /** How long one request may take before it counts as unanswered; generous, the machine is shared. */
  readonly timeoutMs?: number
  readonly healthTimeoutMs?: number
  readonly healthEveryMs?: number
  readonly progress?: (line: string) => void
  readonly progressEvery?: number
  /** The command that replays one request, for reproducers (`bun test/soak/fuzz-soak.ts --seed 42 --only`). */
  readonly replayCommand?: string
}

export interface FuzzSummary {
  readonly seed: number
  requests: number
  faults: number
  answers: number
  readonly statuses: Record<string, number>
  fiveXx: number
  stateChanges: number
  nonEnvelope: number
  accepted: number
  noAnswer: number
  serverErrorsLogged: number
  healthProbes: number
  healthMisses: number
  /** Requests that went unanswered where that is fine (cut short by the client, or bytes no server answers). */
  unansweredAllowed: number
  /** Connections the server closed while the request was still being written (an answer may have been lost). */
  cutWhileSending: number
  /** Answers of Bun's HTTP parser, before any of Timbre's code: no X-Request-Id, no body. */
  parserRefusals: number
  /** Of which 5xx (505 to a request line ending in a bare LF): Bun's, documented in docs/decisions/hostile-input.md. */
  parser5xx: number
  slowStarted: number
  slowAnswered: number
  slowCut: number
  rowsWatched: number
  /** Operations of the route table aimed at (`METHOD path`), with how many requests each. */
  readonly operations: Record<string, number>
  readonly findings: Finding[]
  durationMs: number
}

const DETAIL_CODES = new Set(['REQUIRED', 'INVALID_TYPE', 'INVALID_FORMAT', 'INVALID_VALUE', 'TOO_LONG', 'TOO_MANY', 'TOO_FEW', 'OUT_OF_RANGE', 'INVALID_RUT', 'NOT_ALLOWED', 'INCONSISTENT'])
const SEVERITIES = new Set(['critical', 'error', 'warning', 'info'])

/**
 * Why an error answer is not the envelope of spec 2.18 / DESIGN §5, or null: JSON with `code` (one of the catalog's,
 * whose status is the answer's), `message`, `error` = message, `details` (each with a dot-path `field`, a DESIGN §5
 * `code` and a `message`), `action`, `severity`, and `context.request_id` = the X-Request-Id header.
 */
export function envelopeProblem(answer: RawAnswer, isHead = false): string | null {
  const requestId = answer.headers['x-request-id']?.[0]
  if (!requestId) return 'no X-Request-Id header'
  if (!(answer.headers['content-type']?.[0] ?? '').startsWith('application/json')) return `content-type ${answer.headers['content-type']?.[0] ?? '(none)'}`
  if (isHead) return null
  let body: Record<string, unknown>
  try {
    body = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>
  } catch {
    return `body is not JSON: ${answer.body.toString('utf8').slice(0, 80)}`
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'body is not an object'
  const code = body.code
  if (typeof code !== 'string' || !(code in STATUS)) return `code ${JSON.stringify(code)} is not in the catalog`
  if (STATUS[code as ErrorCode] !== answer.status) return `code ${code} belongs to ${STATUS[code as ErrorCode]}, answered ${answer.status}`
  if (typeof body.message !== 'string' || body.message === '') return 'message missing'
  if (body.error !== body.message) return 'error differs from message'
  if (typeof body.action !== 'string') return 'action missing'
  if (typeof body.severity !== 'string' || !SEVERITIES.has(body.severity)) return `severity ${JSON.stringify(body.severity)}`
  const context = body.context as Record<string, unknown> | undefined
  if (!context || typeof context !== 'object' || context.request_id !== requestId) return 'context.request_id differs from X-Request-Id'
  if (!Array.isArray(body.details)) return 'details is not a list'
  for (const d of body.details as Array<Record<string, unknown>>) {
    if (typeof d?.field !== 'string' || d.field === '') return `detail without field: ${JSON.stringify(d)}`
    if (typeof d.code !== 'string' || !DETAIL_CODES.has(d.code)) return `detail code ${JSON.stringify(d.code)} at ${d.field}`
    if (typeof d.message !== 'string' || d.message === '') return `detail without message at ${d.field}`
  }
  return null
}

/** The request's bytes as a reproducer: JSON-escaped latin1, long bodies cut in the middle. */
export function bytesForReport(bytes: Buffer, max = 1500): string {
  const text = bytes.toString('latin1')
  return JSON.stringify(text.length <= max ? text : `${text.slice(0, max - 200)}…[${text.length - max} bytes]…${text.slice(-200)}`)
}

function newSummary(seed: number): FuzzSummary {
  return {
    seed, requests: 0, faults: 0, answers: 0, statuses: {}, fiveXx: 0, stateChanges: 0, nonEnvelope: 0, accepted: 0, noAnswer: 0,
    serverErrorsLogged: 0, healthProbes: 0, healthMisses: 0, unansweredAllowed: 0, cutWhileSending: 0, parserRefusals: 0, parser5xx: 0,
    slowStarted: 0, slowAnswered: 0, slowCut: 0, rowsWatched: 0, operations: {}, findings: [], durationMs: 0,
  }
}

/** One line, as the soak and the short form print it last. */
export function summaryLine(s: FuzzSummary): string {
  return (
    `fuzz: seed ${s.seed}, requests tried ${s.requests}, faults injected ${s.faults}, 5xx found ${s.fiveXx}, ` +
    `state changes found ${s.stateChanges}, non-envelope answers ${s.nonEnvelope}, /health misses ${s.healthMisses} of ${s.healthProbes}, ` +
    `hostile requests accepted ${s.accepted}, unanswered ${s.noAnswer}, server errors logged ${s.serverErrorsLogged}; ` +
    `cut short by design ${s.unansweredAllowed}, closed by the server while sending ${s.cutWhileSending}, Bun parser refusals ${s.parserRefusals} (5xx ${s.parser5xx}), ` +
    `slow clients ${s.slowStarted} (answered ${s.slowAnswered}, cut by the server ${s.slowCut}), rows watched ${s.rowsWatched}, ` +
    `${Math.round(s.durationMs / 1000)} s`
  )
}

export const findingsOf = (s: FuzzSummary) => s.fiveXx + s.stateChanges + s.nonEnvelope + s.healthMisses + s.accepted + s.noAnswer + s.serverErrorsLogged

/** Runs the fuzzer; never throws for what it finds (the summary holds it). */
export async function runFuzz(o: FuzzOptions): Promise<FuzzSummary> {
  const summary = newSummary(o.seed)
  const started = performance.now()
  const timeoutMs = o.timeoutMs ?? 30_000
  const replay = o.replayCommand ?? `bun test/soak/fuzz-soak.ts --seed ${o.seed} --only`
  const cases = new Map<string, FuzzCase>()
  const find = (f: Finding) => {
    summary.findings.push(f)
    o.progress?.(`FINDING ${f.kind}${f.index === undefined ? '' : ` #${f.index}`}: ${f.message}${f.reproducer ? `\n  reproduce: ${f.reproducer}` : ''}`)
  }
  const reproduce = (c: FuzzCase) => `${replay} ${c.index}   # ${c.op} [${c.faults.join(', ')}]\n  bytes: ${bytesForReport(c.bytes)}`

  function judge(c: FuzzCase, ex: RawExchange, slow = false): void {
    const reproducer = (c: FuzzCase) => (slow ? `${replay.replace(/--only$/, '--only-slow')} ${c.index}   # sent a byte a second; ${c.op} [${c.faults.join(', ')}]` : reproduce(c))
    summary.requests++
    summary.faults += c.faults.length
    summary.operations[c.op] = (summary.operations[c.op] ?? 0) + 1
    if (ex.answers.length === 0) {
      // A server may refuse from the head and close (413 does, with Connection: close): the answer then races the
      // client's unsent bytes, and the reset can discard it. Counted apart, not a finding.
      if (ex.cutWhileSending) summary.cutWhileSending++
      else if (c.mayGoUnanswered || c.endAfterSend) summary.unansweredAllowed++
      else {
        summary.noAnswer++
        find({ kind: 'no-answer', index: c.index, message: `${c.op}: no answer (${ex.timedOut ? 'timed out' : 'connection closed'}${ex.socketError ? `, ${ex.socketError}` : ''})`, reproducer: reproducer(c) })
      }
      return
    }
    ex.answers.forEach((answer, i) => {
      summary.answers++
      summary.statuses[answer.status] = (summary.statuses[answer.status] ?? 0) + 1
      const fromTimbre = answer.headers['x-request-id'] !== undefined
      if (!fromTimbre && answer.status >= 400 && answer.body.length === 0) {
        summary.parserRefusals++
        if (answer.status >= 500) summary.parser5xx++
        return
      }
      if (answer.status >= 500) {
        summary.fiveXx++
        find({ kind: '5xx', index: c.index, message: `${c.op}: ${answer.status} ${answer.body.toString('utf8').slice(0, 200)}`, reproducer: reproducer(c) })
      }
      if (answer.status >= 400) {
        const problem = envelopeProblem(answer, c.isHead || (i === 0 && c.method === 'HEAD'))
        if (problem) {
          summary.nonEnvelope++
          find({ kind: 'non-envelope', index: c.index, message: `${c.op}: ${answer.status}, ${problem}`, reproducer: reproducer(c) })
        }
      } else if (c.mustRefuse || i > 0) {
        summary.accepted++
        find({ kind: 'accepted', index: c.index, message: `${c.op}: ${answer.status} to a request it must refuse${i > 0 ? ' (a second request in the same bytes)' : ''}`, reproducer: reproducer(c) })
      }
    })
  }

  // ---- stored state
  let baseline: StoreSnapshot = snapshotStore(o.dbPath)
  let checkedUpTo = o.from ?? 0
  const checkState = (upTo: number) => {
    const now = snapshotStore(o.dbPath)
    const changes = diffStore(baseline, now)
    if (changes.length > 0) {
      summary.stateChanges++
      const first = o.only ? o.only.join(',') : `${checkedUpTo}..${upTo - 1}`
      find({
        kind: 'state-change',
        message: `stored data changed during requests ${first}: ${changes.map((c) => `${c.kind} ${c.table} ${c.key}${c.before && c.after ? ` ${c.before} → ${c.after}` : ` ${c.after ?? c.before}`}`.slice(0, 600)).join('; ')}`,
        reproducer: o.only ? undefined : `bun test/soak/fuzz-soak.ts --seed ${o.seed} --from ${checkedUpTo} --requests ${upTo - checkedUpTo}`,
      })
      baseline = now
    }
    checkedUpTo = upTo
  }
  summary.rowsWatched = [...baseline.tables.values()].reduce((n, rows) => n + rows.size, 0)

  // ---- /health, all along
  let running = true
  const health = (async () => {
    while (running) {
      const ex = await exchange(o.world.port, [{ bytes: Buffer.from(head('GET', '/health', [['Host', `127.0.0.1:${o.world.port}`]]), 'latin1') }], { timeoutMs: o.healthTimeoutMs ?? 10_000 })
      summary.healthProbes++
      if (ex.answers[0]?.status !== 200) {
        summary.healthMisses++
        find({ kind: 'health-miss', message: `/health: ${ex.answers[0]?.status ?? (ex.timedOut ? 'no answer in time' : 'connection closed')}` })
      }
      await Bun.sleep(o.healthEveryMs ?? 500)
    }
  })()

  // ---- slow clients: a byte every slowByteMs while the run lasts, then the rest at once
  const pace = { delayMs: o.slowByteMs ?? 1000 }
  const slowSeed = (o.seed ^ 0x5a5a5a5a) >>> 0
  let slowNext = o.onlySlow ?? 0
  const slow = Array.from({ length: o.onlySlow !== undefined ? 1 : o.only ? 0 : o.slowClients }, async () => {
    while (running) {
      const k = slowNext++
      const c = buildCase(o.world, slowSeed, k)
      summary.slowStarted++
      // Every other slow client sends its head at once and only its body a byte at a time.
      const slowFrom = k % 2 === 1 ? c.bytes.indexOf('\r\n\r\n') + 4 : 0
      const ex = await exchange(o.world.port, c.pieces, { timeoutMs: c.bytes.length * pace.delayMs + timeoutMs, answers: c.answers, endAfterSend: c.endAfterSend, isHead: c.isHead, pace, slowFrom })
      // Bun cuts a request that is not complete 10 s after it began (its idleTimeout), a byte a second or not.
      if (ex.answers.length > 0) summary.slowAnswered++
      else summary.slowCut++
      // A slow client the server cut before the end is its right (idle timeout); anything it did answer is judged.
      if (ex.answers.length > 0) judge({ ...c, op: `slow client: ${c.op}` }, ex, true)
      if (o.onlySlow !== undefined) return
    }
  })

  // ---- the requests
  const indexes = o.onlySlow !== undefined ? [] : (o.only ?? Array.from({ length: o.requests }, (_, i) => i + checkedUpTo))
  let cursor = 0
  let done = 0
  const every = o.stateEvery ?? 1000
  const progressEvery = o.progressEvery ?? 1000
  const serverLogSeen = { count: o.serverLog().length }
  const scanServerLog = () => {
    const lines = o.serverLog()
    for (const line of lines.slice(serverLogSeen.count)) {
      const status = Number(line.status ?? 0)
      const isError = line.event === 'http.unhandled' || line.event === 'http.server_error' || (line.event === 'http.request' && status >= 500)
      if (!isError) continue
      summary.serverErrorsLogged++
      const c = cases.get(String(line.request_id ?? ''))
      find({
        kind: 'server-error-logged',
        index: c?.index,
        message: `server logged ${String(line.event)} ${status || ''} ${String(line.error ?? line.route ?? '')}`.trim(),
        reproducer: c ? reproduce(c) : undefined,
      })
    }
    serverLogSeen.count = lines.length
  }
  const lanes = Array.from({ length: Math.max(1, o.concurrency) }, async () => {
    for (;;) {
      const at = cursor++
      if (at >= indexes.length) return
      const c = buildCase(o.world, o.seed, indexes[at]!)
      cases.set(requestIdOf(o.seed, c.index), c)
      if (cases.size > 50_000) cases.delete(cases.keys().next().value!)
      const ex = await exchange(o.world.port, c.pieces, { timeoutMs, answers: c.answers, endAfterSend: c.endAfterSend, isHead: c.isHead })
      judge(c, ex)
      done++
      if (done % every === 0) {
        scanServerLog()
        checkState(indexes[Math.min(at, indexes.length - 1)]! + 1)
      }
      if (done % progressEvery === 0) {
        const rate = Math.round(done / ((performance.now() - started) / 1000))
        o.progress?.(`[fuzz] ${done}/${indexes.length} requests, ${summary.faults} faults, 5xx ${summary.fiveXx}, state changes ${summary.stateChanges}, non-envelope ${summary.nonEnvelope}, accepted ${summary.accepted}, /health misses ${summary.healthMisses}, ${rate} req/s`)
      }
    }
  })
  await Promise.all(lanes)
  if (o.onlySlow !== undefined) await Promise.all(slow)
  running = false
  pace.delayMs = 0
  await Promise.all(slow)
  await health
  // Give the server a moment to log what the last clients left behind, then look at everything once more.
  await Bun.sleep(300)
  scanServerLog()
  checkState((o.only ? 0 : indexes[indexes.length - 1] ?? 0) + 1)
  summary.durationMs = performance.now() - started
  return summary
}
