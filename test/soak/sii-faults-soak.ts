// Issue 18, "SII faults" (DESIGN §6, §9): the compiled server issues DTEs at a steady pace against the compiled SII
// simulator (`timbre sii-simulator`, its own process and SQLite file) answering a share of requests with HTTP 503, an
// HTML maintenance page with HTTP 200, or the real answer after Timbre's call timeout (a hang: processed, the answer
// lost, so the retried upload meets STATUS 99 / RPT). Every few seconds the harness deletes every token from the
// simulator's store, as an SII that forgot its sessions. After the load stops, faults stay on while the DTEs settle.
// Then it checks: every DTE issued is final (aceptado / rechazado / con_reparos, as its receptor asks: 88888888-8 is
// rejected, 77777777-7 accepted with reparos), no document was taken by two envelopes at the simulator and Timbre's
// track id is the one the simulator gave it, Timbre obtained new tokens after they vanished and the SII calls carried
// on, no API answer was 5xx, no job item failed, and PRAGMA integrity_check is ok on both stores.
//
//   bun test/soak/sii-faults-soak.ts [--minutes 10] [--seed N] [--keep]
//
// The short form runs in `npm test` (test/sii/sii-faults-short.test.ts). Exit code 1 when anything was lost.
import { Database } from 'bun:sqlite'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { santiagoDate } from '../../src/clock'
import type { EmitirDte } from '../../src/domain/emision'
import { BINARY, createCompanyWithKey, ensureBinary, provisionOverHttp, startServe, type ServeProcess } from '../support/binary'
import { facturaSimple } from '../support/issuance'
import { makeTestCaf } from '../support/pki'
import { tempDir } from '../support/server'
import { prng } from '../support/prng'

const RUT = '76086428-5'
const RAZON = 'Ferretería Ñandú Ltda.'
const FINAL = ['aceptado', 'rechazado', 'con_reparos'] as const
/** DESIGN §9: the simulator's receptors for every outcome. */
const RECHAZO = '88888888-8'
const REPAROS = '77777777-7'
const SII_ESTADO_OF: Readonly<Record<string, string>> = { DOK: 'aceptado', RPR: 'con_reparos', RLV: 'con_reparos', RCH: 'rechazado' }

export interface SiiFaultsSoakOptions {
  /** How long the issuance load runs (fractions allowed: the short form runs less than a minute). */
  readonly minutes: number
  readonly seed: number
  /** Keeps the data dirs (they are always kept when something failed). */
  readonly keep?: boolean
  readonly log?: (line: string) => void
  /** DTEs issued per second during the load. Default 1. */
  readonly perSecond?: number
  /** Share of SII requests answered 503 / hung past the timeout / answered by an HTML page. Defaults 0.30, 0.05, 0.05. */
  readonly faultRate?: number
  readonly hangRate?: number
  readonly htmlRate?: number
  /** Timbre's `--sii-timeout` (default 5 s); the simulator's hangs last twice as long, so their answers are lost. */
  readonly siiTimeoutMs?: number
  /** Timbre's `--sii-backoff` (default `1s:10s`, instead of DESIGN §6's 30 s to 30 min). */
  readonly backoff?: string
  /** The simulator's tokens are deleted this often during the load. Default 30 s. */
  readonly tokenLossEveryMs?: number
  /** The longest wait, after the load, for every DTE to be final with faults still on. Default 5 min. */
  readonly settleMs?: number
  /** A progress line this often. Default 30 s. */
  readonly progressEveryMs?: number
}

export type FaultKind = 'ok' | '503' | 'hang' | 'html'

export interface SiiFaultsSummary {
  seed: number
  minutes: number
  issued: number
  /** Issuance requests that got no 201 (any status, or no answer). */
  issueFailures: number
  /** SII requests the simulator logged, by the fault it drew ('ok': none). */
  requests: Record<FaultKind, number>
  /** Envelope uploads (DTEUpload and the boleta envío) the simulator logged, by fault. */
  uploads: Record<FaultKind, number>
  /** Envelopes the simulator stored (first receptions, each with a new track id). */
  envelopes: number
  /** Timbre's upload outcomes (its `sii.upload` lines): received, already_received (STATUS 99 / RPT), retry, … */
  uploadOutcomes: Record<string, number>
  /** How many times the harness deleted the simulator's tokens, and how many rows that removed. */
  tokenLosses: number
  tokensDeleted: number
  /** Timbre's log: tokens the SII refused (`sii.token.rejected`), tokens obtained, requests for one that failed. */
  tokensRefused: number
  tokensObtained: number
  tokenFailures: number
  /** getToken requests (SOAP and boleta) the simulator saw, whatever their fault. */
  getTokenRequests: number
  /** Token losses after which Timbre obtained a new token before the next loss (or the end). */
  tokenLossesRenewed: number
  estados: Record<string, number>
  notFinal: number
  /** Documents the simulator took in more than one envelope (two track ids). */
  doubleUploads: number
  /** DTEs whose stored track id is not the one under which the simulator holds the document (or holds none). */
  trackIdMismatches: number
  /** DTEs whose final estado is not what the simulator decided, or not what their receptor asks for. */
  wrongEstados: number
  api5xx: number
  apiRequests: number
  /** error lines in Timbre's log (a job item that threw, a 500…). */
  errorLines: number
  integrity: string
  simulatorIntegrity: string
  settleMs: number
  dataDir: string
  failures: string[]
}


const zeroFaults = (): Record<FaultKind, number> => ({ ok: 0, '503': 0, hang: 0, html: 0 })

interface SimulatorProcess {
  url: string
  readonly proc: ReturnType<typeof Bun.spawn>
  readonly requests: Record<FaultKind, number>
  readonly uploads: Record<FaultKind, number>
  getTokenRequests: number
  stderr(): string
}

const UPLOAD_PATHS = new Set(['/cgi_dte/UPL/DTEUpload', '/recursos/v1/boleta.electronica.envio'])
const TOKEN_PATHS = new Set(['/DTEWS/GetTokenFromSeed.jws', '/recursos/v1/boleta.electronica.token'])

/** `timbre sii-simulator` on a free port, its request log (one JSON line per request, with the fault drawn) tallied. */
async function startSimulatorProcess(dataDir: string, faults: { errorRate: number; hangRate: number; htmlRate: number; hangMs: number }): Promise<SimulatorProcess> {
  const proc = Bun.spawn(
    [BINARY, 'sii-simulator', '--port', '0', '--data-dir', dataDir, '--fault-rate', String(faults.errorRate), '--hang-rate', String(faults.hangRate),
      '--html-rate', String(faults.htmlRate), '--hang-ms', String(faults.hangMs)],
    { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' },
  )
  let err = ''
  void (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) err += Buffer.from(chunk).toString()
  })()
  const sim: SimulatorProcess = { url: '', proc, requests: zeroFaults(), uploads: zeroFaults(), getTokenRequests: 0, stderr: () => err }
  void (async () => {
    let pending = ''
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      pending += Buffer.from(chunk).toString()
      let nl: number
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl)
        pending = pending.slice(nl + 1)
        let parsed: { event?: string; url?: string; fault?: string; path?: string; method?: string }
        try {
          parsed = JSON.parse(line)
        } catch {
          continue  // not a log line of ours
        }
        if (parsed.event === 'sii_simulator.started') sim.url = String(parsed.url)
        if (parsed.event !== 'sii_simulator.request') continue
        const kind: FaultKind = parsed.fault === 'none' ? 'ok' : (parsed.fault as FaultKind)
        sim.requests[kind]++
        if (parsed.method === 'POST' && UPLOAD_PATHS.has(parsed.path ?? '')) sim.uploads[kind]++
        if (TOKEN_PATHS.has(parsed.path ?? '')) sim.getTokenRequests++
      }
    }
  })()
  const deadline = Date.now() + 15_000
  while (sim.url === '') {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`sii-simulator did not start: ${err}`)
    await Bun.sleep(20)
  }
  return sim
}

/** What Timbre's log says, read as it comes (the lines are dropped once counted). */
interface TimbreLogTally {
  uploadOutcomes: Record<string, number>
  tokensRefused: number
  tokensObtained: number
  tokenFailures: number
  /** Instants (ms) of `sii.token.obtained`, of uploads the SII took (received, already received), of status answers. */
  obtainedAt: number[]
  uploadedAt: number[]
  answeredAt: number[]
  errorLines: string[]
}

function drainLog(serve: ServeProcess, t: TimbreLogTally): void {
  for (const line of serve.lines.splice(0)) {
    const event = line.event
    if (line.level === 'error') t.errorLines.push(JSON.stringify(line).slice(0, 400))
    if (event === 'sii.upload' && line.dte_id !== undefined) {
      t.uploadOutcomes[String(line.outcome)] = (t.uploadOutcomes[String(line.outcome)] ?? 0) + 1
      if (line.outcome === 'received' || line.outcome === 'already_received') t.uploadedAt.push(Date.parse(String(line.ts)))
    } else if ((event === 'sii.query_envio' || event === 'sii.query_dte') && line.outcome !== 'retry') t.answeredAt.push(Date.parse(String(line.ts)))
    else if (event === 'sii.token.rejected') t.tokensRefused++
    else if (event === 'sii.token.failed') t.tokenFailures++
    else if (event === 'sii.token.obtained') {
      t.tokensObtained++
      t.obtainedAt.push(Date.parse(String(line.ts)))
    }
  }
}

interface Issued {
  readonly id: string
  readonly tipo: number
  readonly folio: number
  readonly expected: (typeof FINAL)[number]
}

function requestFor(tipo: 33 | 39, receptorRut: string): EmitirDte {
  const receptor = { rut: receptorRut, razon_social: receptorRut === RECHAZO ? 'Rechazo de Prueba SpA' : receptorRut === REPAROS ? 'Reparos de Prueba Ltda.' : 'Ferretería y Construcción Ñuble Limitada' }
  if (tipo === 39) return { tipo_dte: 39, receptor, detalle: [{ nombre: 'Completo italiano', cantidad: 2, precio: 2500 }] } as EmitirDte
  return facturaSimple({ receptor: { ...facturaSimple().receptor, ...receptor } })
}

export async function runSiiFaultsSoak(opts: SiiFaultsSoakOptions): Promise<SiiFaultsSummary> {
  const log = opts.log ?? ((line: string) => console.log(line))
  // Three streams, so the receptors and types drawn do not depend on how reads and losses interleave with them.
  const rand = prng(opts.seed)
  const readRand = prng(opts.seed ^ 0x5bd1e995)
  const lossRand = prng(opts.seed ^ 0x9e3779b9)
  const perSecond = opts.perSecond ?? 1
  const timeoutMs = opts.siiTimeoutMs ?? 5000
  const tokenLossEveryMs = opts.tokenLossEveryMs ?? 30_000
  const settleLimitMs = opts.settleMs ?? 5 * 60_000
  const progressEveryMs = opts.progressEveryMs ?? 30_000
  const faults = { errorRate: opts.faultRate ?? 0.3, hangRate: opts.hangRate ?? 0.05, htmlRate: opts.htmlRate ?? 0.05, hangMs: 2 * timeoutMs }
  await ensureBinary()
  const dir = tempDir('timbre-sii-faults-soak-')
  const timbreDir = join(dir, 'timbre')
  const simDir = join(dir, 'sii')
  mkdirSync(simDir, { mode: 0o700 })
  const s: SiiFaultsSummary = {
    seed: opts.seed, minutes: opts.minutes, issued: 0, issueFailures: 0, requests: zeroFaults(), uploads: zeroFaults(), envelopes: 0, uploadOutcomes: {},
    tokenLosses: 0, tokensDeleted: 0, tokensRefused: 0, tokensObtained: 0, tokenFailures: 0, getTokenRequests: 0, tokenLossesRenewed: 0,
    estados: {}, notFinal: 0, doubleUploads: 0, trackIdMismatches: 0, wrongEstados: 0, api5xx: 0, apiRequests: 0, errorLines: 0,
    integrity: '', simulatorIntegrity: '', settleMs: 0, dataDir: dir, failures: [],
  }
  const fail = (what: string): void => {
    s.failures.push(what)
    log(`  FAIL (seed ${opts.seed}): ${what}`)
  }
  const tally: TimbreLogTally = { uploadOutcomes: {}, tokensRefused: 0, tokensObtained: 0, tokenFailures: 0, obtainedAt: [], uploadedAt: [], answeredAt: [], errorLines: [] }
  const issued = new Map<string, Issued>()
  const api5xx: string[] = []
  let sim: SimulatorProcess | null = null
  let serve: ServeProcess | null = null

  const timbreDb = () => new Database(join(timbreDir, 'timbre.db'), { readonly: true })
  const simDb = (readonly: boolean) => {
    const db = new Database(join(simDir, 'sii-simulator.db'), readonly ? { readonly: true } : {})
    db.exec('PRAGMA busy_timeout = 5000')
    return db
  }
  const estadosNow = (): Record<string, number> => {
    const db = timbreDb()
    try {
      return Object.fromEntries((db.query('SELECT estado, count(*) AS n FROM dtes GROUP BY estado').all() as Array<{ estado: string; n: number }>).map((r) => [r.estado, r.n]))
    } finally {
      db.close()
    }
  }
  const apiCall = async (url: string, init: RequestInit, what: string): Promise<Response | null> => {
    s.apiRequests++
    try {
      const res = await fetch(url, init)
      if (res.status >= 500) {
        s.api5xx++
        api5xx.push(`${what}: ${res.status} ${(await res.clone().text()).slice(0, 200)}`)
      }
      return res
    } catch (err) {
      fail(`${what}: no answer (${err instanceof Error ? err.message : String(err)})`)
      return null
    }
  }

  try {
    sim = await startSimulatorProcess(simDir, faults)
    const key = createCompanyWithKey(timbreDir, RUT, RAZON)
    const h = { 'X-Api-Key': key, 'content-type': 'application/json' }
    serve = await startServe([
      '--data-dir', timbreDir, '--sii', sim.url, '--rate-limit', '0', '--submit-every', '1s', '--track-every', '1s',
      '--sii-timeout', `${timeoutMs}ms`, '--sii-backoff', opts.backoff ?? '1s:10s', '--log', 'debug',
    ])
    const url = serve.url
    // The test certificate, a type 33 CAF and a type 39 one, all signed by the simulator's authority (IDK 900).
    const folios = Math.ceil(opts.minutes * 60 * perSecond * 2) + 100
    await provisionOverHttp(url, key, { rut: RUT, razonSocial: RAZON, folios })
    const caf39 = makeTestCaf({ rut: RUT, razonSocial: RAZON, tipoDte: 39, folioDesde: 1, folioHasta: folios, fechaAutorizacion: santiagoDate(new Date(Date.now() - 86_400_000)) })
    const up39 = await fetch(`${url}/api/v1/billing/caf`, { method: 'POST', headers: h, body: JSON.stringify({ tipo_dte: 39, caf_xml: caf39.xml }) })
    if (up39.status !== 201) throw new Error(`CAF 39 upload: ${up39.status} ${await up39.text()}`)
    log(`sii-faults-soak: simulator ${sim.url} (503 ${faults.errorRate}, hang ${faults.hangRate} for ${faults.hangMs} ms, html ${faults.htmlRate}), timbre ${url} (--sii-timeout ${timeoutMs}ms --sii-backoff ${opts.backoff ?? '1s:10s'}), data ${dir}`)

    // The load: one issuance every 1/perSecond s, each in its own promise (a slow answer does not slow the pace); a
    // fifth of them boletas (the REST channel), 15 % to each test receptor.
    const started = Date.now()
    const loadEnd = started + opts.minutes * 60_000
    const inFlight = new Set<Promise<void>>()
    const issueOne = async (): Promise<void> => {
      const draw = rand()
      const receptorRut = draw < 0.15 ? RECHAZO : draw < 0.3 ? REPAROS : '76086428-5'
      const tipo = rand() < 0.2 ? 39 : 33
      const expected = receptorRut === RECHAZO ? 'rechazado' : receptorRut === REPAROS ? 'con_reparos' : 'aceptado'
      const res = await apiCall(`${url}/api/v1/billing/dte`, { method: 'POST', headers: { ...h, 'Idempotency-Key': crypto.randomUUID() }, body: JSON.stringify(requestFor(tipo, receptorRut)) }, 'POST /dte')
      if (res === null) {
        s.issueFailures++
        return
      }
      const text = await res.text()
      if (res.status !== 201) {
        s.issueFailures++
        fail(`issuance answered ${res.status}: ${text.slice(0, 300)}`)
        return
      }
      const body = JSON.parse(text) as { id: string; folio: number }
      issued.set(body.id, { id: body.id, tipo, folio: body.folio, expected })
    }
    // Reads beside the load: the list and one DTE, every second.
    const reader = async (): Promise<void> => {
      while (Date.now() < loadEnd) {
        await apiCall(`${url}/api/v1/billing/dte?limit=20`, { headers: h }, 'GET /dte')
        const ids = [...issued.keys()]
        if (ids.length > 0) await apiCall(`${url}/api/v1/billing/dte/${ids[Math.floor(readRand() * ids.length)]}`, { headers: h }, 'GET /dte/{id}')
        await Bun.sleep(1000)
      }
    }
    const reading = reader()

    // Token losses: every tokenLossEveryMs (± 20 %), only while the load runs and not in its last seconds, so DTEs issued
    // after the last loss need a new token to reach their final state.
    const losses: number[] = []
    const loseTokens = (): void => {
      const db = simDb(false)
      try {
        s.tokensDeleted += db.query('DELETE FROM token').run().changes
      } finally {
        db.close()
      }
      losses.push(Date.now())
      s.tokenLosses++
    }
    let nextLoss = started + tokenLossEveryMs * (0.8 + 0.4 * lossRand())
    let nextProgress = started + progressEveryMs
    let nextIssue = started
    while (Date.now() < loadEnd) {
      const now = Date.now()
      if (now >= nextIssue) {
        const p = issueOne().finally(() => inFlight.delete(p))
        inFlight.add(p)
        nextIssue += 1000 / perSecond
      }
      if (now >= nextLoss && now < loadEnd - Math.min(10_000, tokenLossEveryMs / 2)) {
        loseTokens()
        nextLoss = now + tokenLossEveryMs * (0.8 + 0.4 * lossRand())
      }
      if (now >= nextProgress) {
        drainLog(serve, tally)
        log(progress(`load ${Math.round((now - started) / 1000)} s`, issued.size, estadosNow(), sim, tally, s))
        nextProgress += progressEveryMs
      }
      drainLog(serve, tally)
      await Bun.sleep(Math.max(1, Math.min(nextIssue, nextProgress) - Date.now()))
    }
    await Promise.all(inFlight)
    await reading
    s.issued = issued.size
    log(`load over: ${s.issued} DTEs issued in ${Math.round((Date.now() - started) / 1000)} s, ${s.tokenLosses} token losses; settling with the faults on`)

    // Settle: faults stay on until every DTE is final, or the limit.
    const settleStart = Date.now()
    let nextSettleProgress = settleStart + Math.min(progressEveryMs, 15_000)
    let pending = Number.POSITIVE_INFINITY
    while (Date.now() - settleStart < settleLimitMs) {
      drainLog(serve, tally)
      const estados = estadosNow()
      pending = Object.entries(estados).filter(([e]) => !(FINAL as readonly string[]).includes(e)).reduce((n, [, v]) => n + v, 0)
      if (pending === 0) break
      if (Date.now() >= nextSettleProgress) {
        log(progress(`settle ${Math.round((Date.now() - settleStart) / 1000)} s`, issued.size, estados, sim, tally, s))
        nextSettleProgress += Math.min(progressEveryMs, 15_000)
      }
      await Bun.sleep(500)
    }
    s.settleMs = Date.now() - settleStart

    // Tokens renewed: after each loss, Timbre obtained a new one before the next loss (or the end).
    drainLog(serve, tally)
    const ends = [...losses.slice(1), Number.POSITIVE_INFINITY]
    s.tokenLossesRenewed = losses.filter((at, i) => tally.obtainedAt.some((t) => t > at && t < ends[i]!)).length
    // Submissions and tracking carried on: after the last loss (so after every one) the SII took uploads and answered queries.
    const lastLoss = losses[losses.length - 1]
    if (lastLoss !== undefined) {
      if (!tally.obtainedAt.some((t) => t > lastLoss)) fail('no new token obtained after the last token loss')
      if (!tally.uploadedAt.some((t) => t > lastLoss)) fail('no upload taken by the SII after the last token loss')
      if (!tally.answeredAt.some((t) => t > lastLoss)) fail('no status query answered after the last token loss')
    }

    const exit = await serve.terminate()
    await Bun.sleep(300)  // the last lines still in the pipe
    drainLog(serve, tally)
    serve = null
    if (exit !== 0) fail(`serve exited ${exit} on SIGTERM`)
    sim.proc.kill('SIGTERM')
    const simExit = await sim.proc.exited
    if (simExit !== 0) fail(`sii-simulator exited ${simExit} on SIGTERM: ${sim.stderr().slice(0, 300)}`)

    Object.assign(s, { requests: sim.requests, uploads: sim.uploads, getTokenRequests: sim.getTokenRequests })
    Object.assign(s, { uploadOutcomes: tally.uploadOutcomes, tokensRefused: tally.tokensRefused, tokensObtained: tally.tokensObtained, tokenFailures: tally.tokenFailures })
    s.errorLines = tally.errorLines.length
    for (const line of tally.errorLines.slice(0, 5)) fail(`error in Timbre's log: ${line}`)
    if (tally.errorLines.length > 5) fail(`… and ${tally.errorLines.length - 5} more error lines in Timbre's log`)
    for (const what of api5xx.slice(0, 5)) fail(`API 5xx: ${what}`)
    if (api5xx.length > 5) fail(`… and ${api5xx.length - 5} more API 5xx`)
    if (s.tokenLosses > 0 && s.tokensDeleted === 0) fail('the token losses deleted no token: Timbre never held one?')
    // A loss while Timbre holds a token makes the SII refuse it at its next call; over several losses that must happen.
    if (s.tokenLosses >= 5 && s.tokensRefused === 0) fail(`${s.tokenLosses} token losses, and the SII never refused Timbre's token`)
    checkStores(s, { timbreDir, simDir, issued, fail })
  } finally {
    if (serve && serve.proc.exitCode === null && serve.proc.signalCode === null) serve.proc.kill('SIGKILL')
    if (sim && sim.proc.exitCode === null && sim.proc.signalCode === null) sim.proc.kill('SIGKILL')
    if (s.failures.length === 0 && !opts.keep) rmSync(dir, { recursive: true, force: true })
  }
  return s
}

/**
 * The end state of both stores. Timbre's: every 201 stored, final, as its receptor asks; the simulator's: each document
 * of exactly one envelope, whose track id is Timbre's; both intact.
 */
function checkStores(
  s: SiiFaultsSummary,
  ctx: { timbreDir: string; simDir: string; issued: ReadonlyMap<string, Issued>; fail: (what: string) => void },
): void {
  const { fail } = ctx
  const db = new Database(join(ctx.timbreDir, 'timbre.db'), { readonly: true })
  const simDb = new Database(join(ctx.simDir, 'sii-simulator.db'), { readonly: true })
  try {
    s.integrity = (db.query('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check
    s.simulatorIntegrity = (simDb.query('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check
    if (s.integrity !== 'ok') fail(`timbre.db integrity_check: ${s.integrity}`)
    if (s.simulatorIntegrity !== 'ok') fail(`sii-simulator.db integrity_check: ${s.simulatorIntegrity}`)
    const dtes = db.query('SELECT id, tipo_dte, folio, estado, track_id FROM dtes').all() as Array<{ id: string; tipo_dte: number; folio: number; estado: string; track_id: string | null }>
    for (const d of dtes) s.estados[d.estado] = (s.estados[d.estado] ?? 0) + 1
    const byId = new Map(dtes.map((d) => [d.id, d]))
    // Every envelope Timbre built is kept; one per DTE (a second would mean the DTE was sent in new bytes).
    for (const r of db.query("SELECT file_name, count(*) AS n FROM envios GROUP BY file_name HAVING n > 1").all() as Array<{ file_name: string; n: number }>)
      fail(`Timbre built ${r.n} envelopes for ${r.file_name}`)
    const docs = simDb.query('SELECT d.track_id, d.tipo, d.folio, d.estado, e.channel FROM documento d JOIN envio e ON e.track_id = d.track_id WHERE d.rut_emisor = ?').all(RUT) as Array<{ track_id: string; tipo: number; folio: number; estado: string; channel: string }>
    s.envelopes = (simDb.query('SELECT count(*) AS n FROM envio').get() as { n: number }).n
    const docsOf = new Map<string, typeof docs>()
    for (const d of docs) docsOf.set(`${d.tipo}/${d.folio}`, [...(docsOf.get(`${d.tipo}/${d.folio}`) ?? []), d])
    for (const [doc, copies] of docsOf) {
      const trackIds = new Set(copies.map((c) => c.track_id))
      if (trackIds.size > 1) {
        s.doubleUploads++
        fail(`document ${doc} taken by ${trackIds.size} envelopes at the SII: track ids ${[...trackIds].join(', ')}`)
      }
    }
    const notFinal: string[] = []
    for (const it of ctx.issued.values()) {
      const d = byId.get(it.id)
      if (!d) {
        fail(`201 lost: DTE ${it.id} (${it.tipo}/${it.folio}) not stored`)
        continue
      }
      if (!(FINAL as readonly string[]).includes(d.estado)) {
        notFinal.push(`${it.tipo}/${it.folio} ${d.estado}`)
        continue
      }
      const copies = docsOf.get(`${it.tipo}/${it.folio}`) ?? []
      const first = copies[0]
      if (first === undefined || d.track_id !== first.track_id) {
        s.trackIdMismatches++
        fail(`DTE ${it.tipo}/${it.folio}: Timbre's track id ${d.track_id} but the SII holds it under ${first ? first.track_id : 'none'}`)
      }
      if (first !== undefined && SII_ESTADO_OF[first.estado] !== d.estado) {
        s.wrongEstados++
        fail(`DTE ${it.tipo}/${it.folio}: ${d.estado} in Timbre, ${first.estado} at the SII`)
      } else if (d.estado !== it.expected) {
        s.wrongEstados++
        fail(`DTE ${it.tipo}/${it.folio}: ${d.estado}, its receptor asks for ${it.expected}`)
      }
    }
    s.notFinal = notFinal.length
    if (notFinal.length > 0) fail(`${notFinal.length} DTEs not final after the settle phase (${Math.round(s.settleMs / 1000)} s), e.g. ${notFinal.slice(0, 5).join(', ')}`)
    if (dtes.length !== ctx.issued.size) fail(`${dtes.length} DTEs stored, ${ctx.issued.size} answered 201`)
  } finally {
    db.close()
    simDb.close()
  }
}

function progress(phase: string, issued: number, estados: Record<string, number>, sim: SimulatorProcess, t: TimbreLogTally, s: SiiFaultsSummary): string {
  return `${phase}: issued ${issued}, estados ${JSON.stringify(estados)}, SII requests ${JSON.stringify(sim.requests)}, uploads ${JSON.stringify(t.uploadOutcomes)}, token losses ${s.tokenLosses} (refused ${t.tokensRefused}, obtained ${t.tokensObtained}), API 5xx ${s.api5xx}`
}

export function summaryLine(s: SiiFaultsSummary): string {
  const r = s.requests
  const u = s.uploads
  const o = s.uploadOutcomes
  return `sii-faults-soak seed ${s.seed}: minutes ${s.minutes}, DTEs issued ${s.issued} (issuance failures ${s.issueFailures}), SII requests ${r.ok + r['503'] + r.hang + r.html} (ok ${r.ok}, 503 ${r['503']}, hang ${r.hang}, html ${r.html}), uploads ${u.ok + u['503'] + u.hang + u.html} (ok ${u.ok}, 503 ${u['503']}, hang ${u.hang}, html ${u.html}), Timbre upload outcomes received ${o.received ?? 0} / already received ${o.already_received ?? 0} / retried ${o.retry ?? 0}, envelopes at the SII ${s.envelopes}, tokens invalidated ${s.tokenLosses}x (${s.tokensDeleted} tokens) and renewed after ${s.tokenLossesRenewed} of them (Timbre refused ${s.tokensRefused}, obtained ${s.tokensObtained}, getToken requests ${s.getTokenRequests}), estados ${JSON.stringify(s.estados)}, not final ${s.notFinal}, double uploads ${s.doubleUploads}, track id mismatches ${s.trackIdMismatches}, wrong estados ${s.wrongEstados}, API 5xx ${s.api5xx} of ${s.apiRequests}, error log lines ${s.errorLines}, integrity ${s.integrity || 'not checked'} / simulator ${s.simulatorIntegrity || 'not checked'}, settle ${Math.round(s.settleMs / 1000)} s, failures ${s.failures.length}`
}

function flag(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}

if (import.meta.main) {
  const argv = process.argv.slice(2)
  const minutes = Number(flag(argv, '--minutes') ?? 10)
  const seed = Number(flag(argv, '--seed') ?? Math.floor(Math.random() * 2 ** 31))
  if (!Number.isFinite(minutes) || minutes <= 0 || !Number.isInteger(seed)) {
    console.error('usage: bun test/soak/sii-faults-soak.ts [--minutes 10] [--seed N] [--keep]')
    process.exit(2)
  }
  console.log(`sii-faults-soak: ${minutes} minutes of load, seed ${seed} (repeat with --seed ${seed})`)
  const summary = await runSiiFaultsSoak({ minutes, seed, keep: argv.includes('--keep') })
  console.log(summaryLine(summary))
  if (summary.failures.length > 0) {
    console.log(`data dir kept: ${summary.dataDir}`)
    process.exit(1)
  }
}
