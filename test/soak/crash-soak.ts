// Issue 18, "Crash safety" (DESIGN §11, §7): the compiled server issues DTEs to 8–16 concurrent clients, with a webhook
// subscribed to every event and the SII jobs running against the simulator, and is killed with SIGKILL at a random
// moment, cycle after cycle, on the same data dir. After each restart every key whose answer never came is retried once
// (it must replay or issue once), and the store is checked: every 201 stored with its folio, no folio and no key stored
// twice. At the end a quiet run issues as many DTEs as there are unused folios below next_folio (the restarted server
// reuses them first: docs/decisions/issuance.md, there is no gap table), then every folio below next_folio must be
// stored, the receiver must have every event of the outbox (dte.created of every stored DTE among them), and
// PRAGMA integrity_check must say ok.
//
//   bun test/soak/crash-soak.ts [--cycles 200] [--seed N] [--keep]
//
// The short form runs in `npm test` (test/cli/crash-soak-short.test.ts). Exit code 1 when anything was lost.
import { Database } from 'bun:sqlite'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { EVENT_TYPES } from '../../src/domain/events'
import { verifySignature } from '../../src/webhooks/signature'
import { createCompanyWithKey, ensureBinary, provisionOverHttp, startServe, type ServeProcess } from '../support/binary'
import { facturaSimple } from '../support/issuance'
import { tempDir } from '../support/server'
import { prng } from '../support/prng'

const RUT = '76086428-5'
const RAZON = 'Ferretería Ñandú Ltda.'
/** Enough folios for 200 cycles of a few hundred issuances each. */
const FOLIOS = 200_000
/**
 * The settle waits while deliveries keep arriving, and gives up after this long without a new one: a delivery claimed
 * just before a kill is leased for 3 × the 10 s delivery timeout (services/deliver-webhooks.ts), so a quiet spell of
 * 45 s means the rest is stuck, not late. The backlog a long run leaves (the in-process simulator takes most of the
 * CPU while 10 000s of DTEs wait to be submitted) takes minutes to drain, which is not a loss.
 */
const STALL_MS = 45_000
/** …and stops at this in any case. */
const SETTLE_CAP_MS = 20 * 60_000

export interface SoakOptions {
  readonly cycles: number
  readonly seed: number
  /** Keeps the data dir (it is always kept when something failed). */
  readonly keep?: boolean
  readonly log?: (line: string) => void
}

export interface SoakSummary {
  seed: number
  cycles: number
  requests: number
  created: number
  kills: number
  retried: number
  replayed: number
  losses: number
  duplicates: number
  /** Unused folios below next_folio found after each restart (a crash leaves them; later issuances reuse them). */
  gapsSeen: number
  /** Unused folios below next_folio after the final quiet run: must be 0. */
  gaps: number
  events: number
  undelivered: number
  badSignatures: number
  integrity: string
  /** DTEs per estado at the end: shows the SII jobs ran (submitted, tracked) between the kills. */
  estados: Record<string, number>
  dataDir: string
  failures: string[]
}


interface Answer {
  readonly id: string
  readonly folio: number
  readonly cycle: number
}

/** The webhook receiver: deduplicates by Timbre-Event-Id, checks every signature, answers 200 at once. */
function startReceiver(secret: () => string | null) {
  const seen = new Map<string, { type: string; dteId: string | null }>()
  let posts = 0
  let badSignatures = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 30,
    async fetch(req) {
      const body = await req.text()
      posts++
      const s = secret()
      const sig = req.headers.get('timbre-signature') ?? ''
      if (s === null || !verifySignature(s, sig, body, Math.floor(Date.now() / 1000))) {
        badSignatures++
        return new Response('firma', { status: 400 })
      }
      const id = req.headers.get('timbre-event-id') ?? ''
      const parsed = JSON.parse(body) as { type: string; data?: { dte?: { id?: string } } }
      if (!seen.has(id)) seen.set(id, { type: parsed.type, dteId: parsed.data?.dte?.id ?? null })
      return new Response('ok')
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}/hooks/timbre`,
    seen,
    posts: () => posts,
    badSignatures: () => badSignatures,
    stop: () => server.stop(true),
  }
}

export async function runCrashSoak(opts: SoakOptions): Promise<SoakSummary> {
  const log = opts.log ?? ((line: string) => console.log(line))
  const rand = prng(opts.seed)
  const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1))
  await ensureBinary()
  const dir = tempDir('timbre-crash-soak-')
  const key = createCompanyWithKey(dir, RUT, RAZON)
  const h = { 'X-Api-Key': key, 'content-type': 'application/json' }
  const args = ['--data-dir', dir, '--sii', 'simulado', '--webhook-allow-http', '--rate-limit', '0', '--submit-every', '1s', '--track-every', '1s', '--deliver-every', '1s']
  // The quiet run holds the SII jobs (an hour away), so the outbox it must deliver whole stops growing: with them on, each
  // of the ~100 000 DTEs a long run issues on a quiet machine adds its dte.accepted as the simulator gets to it, one
  // envelope each, for half an hour after the last kill.
  const quietArgs = args.map((a, i) => (args[i - 1] === '--submit-every' || args[i - 1] === '--track-every' ? '1h' : a))
  let hookSecret: string | null = null
  const rx = startReceiver(() => hookSecret)
  const s: SoakSummary = { seed: opts.seed, cycles: 0, requests: 0, created: 0, kills: 0, retried: 0, replayed: 0, losses: 0, duplicates: 0, gapsSeen: 0, gaps: 0, events: 0, undelivered: 0, badSignatures: 0, integrity: '', estados: {}, dataDir: dir, failures: [] }
  const reported = new Set<string>()
  /** Each problem once, at the first check that sees it (the store is checked again after every restart). */
  const fail = (cycle: number | 'final', what: string, counter?: 'losses' | 'duplicates'): void => {
    if (reported.has(what)) return
    reported.add(what)
    if (counter) s[counter]++
    s.failures.push(`cycle ${cycle}: ${what}`)
    log(`  FAIL (seed ${opts.seed}, cycle ${cycle}): ${what}`)
  }
  const answered = new Map<string, Answer>() // Idempotency-Key → the 201 it got
  let unanswered: string[] = [] // keys sent whose answer never came (the kill cut them)
  let serve: ServeProcess | null = null

  const issue = async (url: string, k: string, cycle: number): Promise<{ status: number; replay: boolean; body: Answer | null } | null> => {
    s.requests++
    try {
      const res = await fetch(`${url}/api/v1/billing/dte`, { method: 'POST', headers: { ...h, 'Idempotency-Key': k }, body: JSON.stringify(facturaSimple({ metadata: { k } })) })
      const text = await res.text()
      if (res.status !== 201) return { status: res.status, replay: false, body: null }
      const b = JSON.parse(text) as { id: string; folio: number }
      return { status: 201, replay: res.headers.get('x-idempotency-replay') === 'true', body: { id: b.id, folio: b.folio, cycle } }
    } catch {
      return null // no answer: the connection died with the process (or never reached it)
    }
  }
  const record = (k: string, a: Answer, cycle: number | 'final') => {
    const before = answered.get(k)
    if (before && (before.id !== a.id || before.folio !== a.folio)) {
      fail(cycle, `key ${k} answered twice with different documents: ${before.id}/${before.folio} then ${a.id}/${a.folio}`, 'duplicates')
    }
    if (!before) s.created++
    answered.set(k, a)
  }

  /** The checks that hold at any moment after a restart; returns the unused folios below next_folio. */
  const checkStore = (cycle: number | 'final'): number => {
    const db = new Database(join(dir, 'timbre.db'), { readonly: true })
    try {
      const rows = db.query("SELECT id, folio, json_extract(metadata, '$.k') AS k FROM dtes WHERE tipo_dte = 33").all() as Array<{ id: string; folio: number; k: string | null }>
      const byId = new Map(rows.map((r) => [r.id, r]))
      const byFolio = new Map<number, number>()
      const byKey = new Map<string, number>()
      for (const r of rows) {
        byFolio.set(r.folio, (byFolio.get(r.folio) ?? 0) + 1)
        if (r.k !== null) byKey.set(r.k, (byKey.get(r.k) ?? 0) + 1)
      }
      for (const [folio, n] of byFolio) if (n > 1) fail(cycle, `folio ${folio} stored ${n} times`, 'duplicates')
      for (const [k, n] of byKey) if (n > 1) fail(cycle, `Idempotency-Key ${k} stored ${n} times`, 'duplicates')
      for (const [k, a] of answered) {
        const got = byId.get(a.id)
        if (!got || got.folio !== a.folio || got.k !== k) fail(cycle, `201 of cycle ${a.cycle} lost: key ${k}, id ${a.id}, folio ${a.folio} (stored: ${got ? `folio ${got.folio}` : 'nothing'})`, 'losses')
      }
      const folioOwners = new Map<number, string>()
      for (const a of answered.values()) {
        const other = folioOwners.get(a.folio)
        if (other && other !== a.id) fail(cycle, `folio ${a.folio} answered for two documents: ${other} and ${a.id}`, 'duplicates')
        folioOwners.set(a.folio, a.id)
      }
      const next = (db.query('SELECT next_folio FROM cafs WHERE tipo_dte = 33').get() as { next_folio: number }).next_folio
      let holes = 0
      for (let f = 1; f < next; f++) if (!byFolio.has(f)) holes++
      return holes
    } finally {
      db.close()
    }
  }

  try {
    // Set-up: certificate, CAF and the webhook, on a first clean run.
    serve = await startServe(args)
    await provisionOverHttp(serve.url, key, { rut: RUT, razonSocial: RAZON, folios: FOLIOS })
    const hook = await fetch(`${serve.url}/api/v1/billing/webhooks`, { method: 'POST', headers: h, body: JSON.stringify({ url: rx.url, events: [...EVENT_TYPES] }) })
    if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${await hook.text()}`)
    hookSecret = ((await hook.json()) as { secret: string }).secret
    expectExit(await serve.terminate(), 'set-up run')
    serve = null

    for (let cycle = 1; cycle <= opts.cycles; cycle++) {
      const started = Date.now()
      serve = await startServe(args)
      const url = serve.url
      const holesAfterCrash = checkStore(cycle)
      s.gapsSeen += holesAfterCrash

      // Every key the last kill left unanswered, once: it replays (stored before the kill) or issues now.
      let replayed = 0
      const retry = unanswered
      unanswered = []
      await Promise.all(
        retry.map(async (k) => {
          s.retried++
          const got = await issue(url, k, cycle)
          if (got?.status !== 201 || !got.body) {
            fail(cycle, `retry of unanswered key ${k} got ${got ? got.status : 'no answer'} instead of 201`, 'losses')
            return
          }
          if (got.replay) replayed++
          record(k, got.body, cycle)
        }),
      )
      s.replayed += replayed

      // The burst: N clients with fresh keys until SIGKILL, at a random moment.
      const clients = between(8, 16)
      const killAfter = between(50, 1500)
      let killed = false
      let sent = 0
      let ok = 0
      const statuses = new Map<number, number>()
      const client = async () => {
        while (!killed) {
          const k = crypto.randomUUID()
          sent++
          const got = await issue(url, k, cycle)
          if (got === null) unanswered.push(k)
          else if (got.status === 201 && got.body) {
            ok++
            record(k, got.body, cycle)
          } else statuses.set(got.status, (statuses.get(got.status) ?? 0) + 1)
        }
      }
      const running = Promise.all(Array.from({ length: clients }, client))
      await Bun.sleep(killAfter)
      const proc = serve.proc
      killed = true // first, so no client starts a request against the dead port (refused: it would only inflate the retries)
      proc.kill('SIGKILL')
      await proc.exited
      s.kills++
      await running
      serve = null
      for (const [status, n] of statuses) fail(cycle, `${n} answers ${status} during the burst (only 201 or no answer expected)`)
      s.cycles++
      log(
        `cycle ${cycle}/${opts.cycles}: ${clients} clients, kill at ${killAfter} ms, sent ${sent}, 201 ${ok}, unanswered ${unanswered.length}, retried ${retry.length} (${replayed} replayed), unused folios after restart ${holesAfterCrash}, ${Date.now() - started} ms`,
      )
    }

    // The quiet run: the last unanswered keys, then as many DTEs as there are unused folios (reused first), then the
    // deliveries settle and everything is checked.
    serve = await startServe(quietArgs)
    const url = serve.url
    s.gapsSeen += checkStore('final')
    const retriedFinal = unanswered.length
    for (const k of unanswered) {
      s.retried++
      const got = await issue(url, k, opts.cycles + 1)
      if (got?.status !== 201 || !got.body) {
        fail('final', `retry of unanswered key ${k} got ${got ? got.status : 'no answer'} instead of 201`, 'losses')
      } else {
        if (got.replay) s.replayed++
        record(k, got.body, opts.cycles + 1)
      }
    }
    unanswered = []
    const fill = checkStore('final')
    for (let i = 0; i < fill; i++) {
      const k = crypto.randomUUID()
      const got = await issue(url, k, opts.cycles + 1)
      if (got?.status === 201 && got.body) record(k, got.body, opts.cycles + 1)
      else fail('final', `quiet issuance got ${got ? got.status : 'no answer'}`)
    }
    s.gaps = checkStore('final')
    if (s.gaps > 0) fail('final', `${s.gaps} folios below next_folio have no document after a quiet run that issued ${fill}`)

    // Deliveries: every event of the outbox reaches the receiver, dte.created of every stored DTE among them.
    const pendingEvents = () => {
      const db = new Database(join(dir, 'timbre.db'), { readonly: true })
      try {
        const events = db.query('SELECT id, type FROM events').all() as Array<{ id: string; type: string }>
        const dtes = db.query('SELECT id FROM dtes').all() as Array<{ id: string }>
        return { events, dtes }
      } finally {
        db.close()
      }
    }
    const settleStart = Date.now()
    const seenAtStart = rx.seen.size
    let lastProgress = settleStart
    let seenBefore = rx.seen.size
    let snapshot = pendingEvents()
    while (snapshot.events.some((e) => !rx.seen.has(e.id)) && Date.now() - lastProgress < STALL_MS && Date.now() - settleStart < SETTLE_CAP_MS) {
      await Bun.sleep(1000)
      if (rx.seen.size > seenBefore) [seenBefore, lastProgress] = [rx.seen.size, Date.now()]
      snapshot = pendingEvents()
    }
    s.events = snapshot.events.length
    const settledMs = Date.now() - settleStart
    log(
      `final: retried ${retriedFinal}, issued ${fill} into unused folios, deliveries settled in ${settledMs} ms (${rx.seen.size - seenAtStart} events delivered meanwhile, ${Math.round(((rx.seen.size - seenAtStart) * 1000) / Math.max(1, settledMs))}/s)`,
    )
    const missing = snapshot.events.filter((e) => !rx.seen.has(e.id))
    s.undelivered = missing.length
    if (missing.length > 0) fail('final', `${missing.length} events not delivered (none arrived in the last ${Math.round((Date.now() - lastProgress) / 1000)} s of a ${Math.round(settledMs / 1000)} s settle), e.g. ${missing.slice(0, 3).map((e) => `${e.type} ${e.id}`).join(', ')}`)
    const createdFor = new Set([...rx.seen.values()].filter((e) => e.type === 'dte.created').map((e) => e.dteId))
    const withoutCreated = snapshot.dtes.filter((d) => !createdFor.has(d.id))
    if (withoutCreated.length > 0) {
      s.undelivered += withoutCreated.length
      fail('final', `${withoutCreated.length} stored DTEs whose dte.created never reached the receiver, e.g. ${withoutCreated.slice(0, 3).map((d) => d.id).join(', ')}`)
    }
    s.badSignatures = rx.badSignatures()
    if (s.badSignatures > 0) fail('final', `${s.badSignatures} deliveries with a signature that does not verify`)

    expectExit(await serve.terminate(), 'quiet run')
    serve = null
    const db = new Database(join(dir, 'timbre.db'), { readonly: true })
    s.integrity = (db.query('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check
    for (const r of db.query('SELECT estado, count(*) AS n FROM dtes GROUP BY estado').all() as Array<{ estado: string; n: number }>) s.estados[r.estado] = r.n
    db.close()
    if (s.integrity !== 'ok') fail('final', `integrity_check: ${s.integrity}`)
  } finally {
    if (serve && serve.proc.exitCode === null && serve.proc.signalCode === null) serve.proc.kill('SIGKILL')
    await rx.stop()
    if (s.failures.length === 0 && !opts.keep) rmSync(dir, { recursive: true, force: true })
  }

  function expectExit(code: number, what: string) {
    if (code !== 0) fail('final', `${what}: serve exited ${code} on SIGTERM`)
  }
  return s
}

export function summaryLine(s: SoakSummary): string {
  return `crash-soak seed ${s.seed}: cycles ${s.cycles}, requests tried ${s.requests}, 201s ${s.created}, kills ${s.kills}, retried ${s.retried} (${s.replayed} replayed), losses found ${s.losses}, duplicates ${s.duplicates}, gaps ${s.gaps} (unused folios seen after restarts ${s.gapsSeen}), events ${s.events}, undelivered events ${s.undelivered}, bad signatures ${s.badSignatures}, integrity ${s.integrity || 'not checked'}, estados ${JSON.stringify(s.estados)}, failures ${s.failures.length}`
}

function flag(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}

if (import.meta.main) {
  const argv = process.argv.slice(2)
  const cycles = Number(flag(argv, '--cycles') ?? 200)
  const seed = Number(flag(argv, '--seed') ?? Math.floor(Math.random() * 2 ** 31))
  if (!Number.isInteger(cycles) || cycles < 1 || !Number.isInteger(seed)) {
    console.error('usage: bun test/soak/crash-soak.ts [--cycles 200] [--seed N] [--keep]')
    process.exit(2)
  }
  console.log(`crash-soak: ${cycles} cycles, seed ${seed} (repeat with --seed ${seed})`)
  const summary = await runCrashSoak({ cycles, seed, keep: argv.includes('--keep') })
  console.log(summaryLine(summary))
  if (summary.failures.length > 0) {
    console.log(`data dir kept: ${summary.dataDir}`)
    process.exit(1)
  }
}
