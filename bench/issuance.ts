// Issuance and list load against the compiled binary (issue 17 rows 2, 3, 5, 6, 8; bench/run.ts prints them): a
// provisioned company, POST /dte at a given concurrency, GET /dte/{id}/pdf loops, GET /dte on a table filled to a
// million rows. The load generator is this process: on the same cores as the server, so it takes a share of them.
import { Database } from 'bun:sqlite'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { santiagoDate } from '../src/clock'
import { computeDv } from '../src/domain/rut'
import { exportPfx, makeCertificate, makeTestCaf } from '../test/support/pki'
import { run, startServer, summarize } from './support'

export const RUT = '76543210-3'
export type Server = { url: string; key: string; proc: ReturnType<typeof Bun.spawn> }

export const factura = (i: number) => ({
  tipo_dte: 33,
  receptor: { rut: '76086428-5', razon_social: 'Ferretería y Construcción Ñuble Limitada', giro: 'Construcción', direccion: 'Av. O’Higgins 1234', comuna: 'Chillán', ciudad: 'Chillán' },
  detalle: [
    { nombre: 'Martillo carpintero 16 oz', cantidad: 3, precio: 8990 },
    { nombre: 'Clavos 2½" (caja 1 kg)', cantidad: 2, precio: 2490, descuento_pct: 10 },
  ],
  metadata: { n: i },
  // Issuance alone: with auto_send the in-process simulator would validate every envelope on the same two cores.
  auto_send: false,
})

/** A company with a write key, a certificate and a CAF of 5 000 000 folios (enough for a million issuances), served by dist/timbre. */
export async function provision(dataDir: string): Promise<Server> {
  run(['empresa', 'create', '--rut', RUT, '--razon-social', 'Bench SpA', '--giro', 'Ferretería', '--acteco', '475200', '--direccion', 'Calle 1', '--comuna', 'Santiago', '--ciudad', 'Santiago', '--data-dir', dataDir])
  const key = (JSON.parse(run(['apikey', 'create', '--empresa', RUT, '--write', '--data-dir', dataDir])) as { key: string }).key
  const server = await startServer(dataDir)
  const h = { 'X-Api-Key': key, 'content-type': 'application/json' }
  const signer = makeCertificate({ rut: '7880442-4', keySlot: 11 })
  const pfx = await fetch(`${server.url}/api/v1/billing/empresa/certificado/pfx`, { method: 'POST', headers: h, body: JSON.stringify({ pfx_base64: Buffer.from(exportPfx(signer, 'x', '3des')).toString('base64'), password: 'x' }) })
  if (pfx.status >= 300) throw new Error(`certificate upload: ${pfx.status} ${await pfx.text()}`)
  const caf = makeTestCaf({ rut: RUT, razonSocial: 'Bench SpA', folioDesde: 1, folioHasta: 5_000_000, fechaAutorizacion: santiagoDate(new Date()) })
  const res = await fetch(`${server.url}/api/v1/billing/caf`, { method: 'POST', headers: h, body: JSON.stringify({ tipo_dte: 33, caf_xml: caf.xml }) })
  if (res.status !== 201) throw new Error(`CAF upload: ${res.status} ${await res.text()}`)
  return { ...server, key }
}

export async function stopServer(server: Pick<Server, 'proc'>): Promise<void> {
  server.proc.kill('SIGTERM')
  await server.proc.exited
}

/** CPU seconds (user + system, every thread) a process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100  // utime, stime in clock ticks (USER_HZ = 100 on Linux)
}

/** CPU seconds per kind of thread: the main thread (HTTP, validation, the database), the Workers, and the rest (JIT, GC, pools). */
export function threadCpuSeconds(pid: number): { main: number; workers: number; other: number } {
  const out = { main: 0, workers: 0, other: 0 }
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const seconds = (Number(fields[11]) + Number(fields[12])) / 100
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      if (tid === String(pid)) out.main += seconds
      else if (name === 'Worker') out.workers += seconds
      else out.other += seconds
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out
}

export type LoadResult = {
  requests: number
  seconds: number
  perSecond: number
  p50: number
  p99: number
  errors: number
  firstError: string | null
  /** Cores the server and this load generator kept busy on average (1.0 = one core). */
  serverCores: number
  /** The server's cores by thread kind; a Worker that ended during the load is missing from `workers`. */
  serverThreadCores: { main: number; workers: number; other: number }
  generatorCores: number
  /** Ids of some issued DTEs (up to 500), for the PDF loops. */
  ids: string[]
}

export type LoadOptions = {
  concurrency: number
  /** Stop after this many requests, or when `stop` says so, whichever comes first. */
  total: number
  stop?: () => boolean
  /** Called after each answer with the number answered so far. */
  onAnswer?: (answered: number) => void
}

/** `concurrency` clients, each sending its next POST /dte as soon as the previous one is answered (closed loop). */
export async function issueLoad(server: Server, options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = []
  const ids: string[] = []
  let next = 0
  let errors = 0
  let firstError: string | null = null
  const client = async () => {
    while (next < options.total && !(options.stop?.() ?? false)) {
      const i = next++
      const t0 = performance.now()
      const res = await fetch(`${server.url}/api/v1/billing/dte`, {
        method: 'POST',
        headers: { 'X-Api-Key': server.key, 'content-type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
        body: JSON.stringify(factura(i)),
      })
      const text = await res.text()
      latencies.push(performance.now() - t0)
      if (res.status !== 201) {
        errors++
        firstError ??= `${res.status} ${text.slice(0, 300)}`
      } else if (ids.length < 500) ids.push((JSON.parse(text) as { id: string }).id)
      options.onAnswer?.(latencies.length)
    }
  }
  const cpu0 = cpuSeconds(server.proc.pid)
  const threads0 = threadCpuSeconds(server.proc.pid)
  const own0 = process.cpuUsage()
  const start = performance.now()
  await Promise.all(Array.from({ length: options.concurrency }, client))
  const seconds = (performance.now() - start) / 1000
  const own = process.cpuUsage(own0)
  return {
    requests: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    ...summarize(latencies),
    errors,
    firstError,
    serverCores: (cpuSeconds(server.proc.pid) - cpu0) / seconds,
    serverThreadCores: (() => {
      const t = threadCpuSeconds(server.proc.pid)
      return { main: (t.main - threads0.main) / seconds, workers: (t.workers - threads0.workers) / seconds, other: (t.other - threads0.other) / seconds }
    })(),
    generatorCores: (own.user + own.system) / 1e6 / seconds,
    ids,
  }
}

/** `clients` loops of GET /dte/{id}/pdf over `ids` until `stop()`; each render's latency. */
export async function pdfLoad(server: Server, ids: readonly string[], clients: number, stop: () => boolean): Promise<{ renders: number; p50: number; p99: number; errors: number }> {
  const latencies: number[] = []
  let errors = 0
  let next = 0
  const client = async () => {
    while (!stop()) {
      const id = ids[next++ % ids.length]!
      const t0 = performance.now()
      const res = await fetch(`${server.url}/api/v1/billing/dte/${id}/pdf`, { headers: { 'X-Api-Key': server.key } })
      await res.arrayBuffer()
      latencies.push(performance.now() - t0)
      if (res.status !== 200) errors++
    }
  }
  await Promise.all(Array.from({ length: clients }, client))
  return { renders: latencies.length, ...summarize(latencies), errors }
}

/** 50 receptors, so a rut_receptor filter matches 2 % of the rows (a customer's documents), not a fifth of them. */
export const RECEPTORES = Array.from({ length: 50 }, (_, i) => {
  const body = String(76_000_000 + i * 12_347)
  return `${body}-${computeDv(body)}`
})
/** Spread of estados in the filled table: mostly aceptado, as an older history is. */
const ESTADO_CASE = `CASE n % 20 WHEN 14 THEN 'rechazado' WHEN 15 THEN 'con_reparos' WHEN 16 THEN 'procesando' WHEN 17 THEN 'firmado' WHEN 18 THEN 'firmado' WHEN 19 THEN 'firmado' ELSE 'aceptado' END`
export const FILL_DAYS = 400

/**
 * Fills `dtes` to `size` rows in SQL (INSERT … SELECT over a counter, no row crosses into JavaScript): copies of one
 * issued row (its XML and request at their real size, unless `stubXml`) with new UUIDv7 ids, folios past the CAF's
 * range, receptors, estados, and creation times spread evenly over the last 400 days, so ids, created_at and
 * fecha_emision grow together as issuance makes them. Runs with the server stopped; no ANALYZE (the server's own
 * PRAGMA optimize decides what statistics it has). Returns the seconds taken.
 */
export function fillDtes(dataDir: string, size: number, stubXml: boolean): number {
  const started = performance.now()
  const db = new Database(join(dataDir, 'timbre.db'))
  // No journal while filling (a crash here only loses a bench's data dir): every page is written once, not to the WAL
  // and then again by the checkpoint. The server's open sets WAL again.
  db.run('PRAGMA journal_mode = DELETE')
  db.run('PRAGMA journal_mode = OFF')
  db.run('PRAGMA synchronous = OFF')
  db.run('PRAGMA cache_size = -262144')
  const have = (db.query('SELECT count(*) AS n FROM dtes').get() as { n: number }).n
  const templateId = (db.query('SELECT id FROM dtes ORDER BY id LIMIT 1').get() as { id: string }).id
  const columns = (db.query('SELECT name FROM pragma_table_info(\'dtes\')').all() as Array<{ name: string }>).map((c) => c.name)
  const ms = `(${Date.now() - (FILL_DAYS + 1) * 86_400_000} + n * ${(FILL_DAYS * 86_400_000) / size})`
  const hex = `printf('%012x', CAST(${ms} AS INTEGER))`
  const overrides: Record<string, string> = {
    id: `substr(${hex}, 1, 8) || '-' || substr(${hex}, 9, 4) || '-7' || printf('%03x', n % 4096) || '-' || printf('%x%03x', 8 + (n / 4096) % 4, (n / 16384) % 4096) || '-' || printf('%012x', n)`,
    folio: '10000000 + n',
    estado: ESTADO_CASE,
    rut_receptor: `json_extract(?, '$[' || (n % ${RECEPTORES.length}) || ']')`,
    fecha_emision: `date(${ms} / 1000, 'unixepoch', '-3 hours')`,
    created_at: `strftime('%Y-%m-%dT%H:%M:%fZ', ${ms} / 1000.0, 'unixepoch')`,
    updated_at: `strftime('%Y-%m-%dT%H:%M:%fZ', ${ms} / 1000.0, 'unixepoch')`,
    next_attempt_at: 'NULL',
    ...(stubXml ? { xml: `CAST('<DTE/>' AS BLOB)` } : {}),
  }
  const select = columns.map((c) => overrides[c] ?? `t."${c}"`).join(', ')
  const insert = db.prepare(
    `WITH RECURSIVE seq(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ?)
     INSERT INTO dtes (${columns.map((c) => `"${c}"`).join(', ')}) SELECT ${select} FROM seq, (SELECT * FROM dtes WHERE id = ?) AS t`,
  )
  const BATCH = 100_000
  for (let from = 0; from < size - have; from += BATCH) {
    insert.run(have + from, have + Math.min(size - have, from + BATCH), JSON.stringify(RECEPTORES), templateId)
    process.stderr.write(`\r  filling dtes: ${have + Math.min(size - have, from + BATCH)} / ${size}   `)
  }
  process.stderr.write('\n')
  db.run('PRAGMA journal_mode = WAL')
  db.close()
  return (performance.now() - started) / 1000
}

/** Sequential GET /dte`query` (one client), `n` times or for `capSeconds`, whichever ends first, after 10 warm-ups. */
export async function listLatency(server: Server, query: string, n: number, capSeconds: number): Promise<{ p50: number; p99: number; n: number; totalCount: number }> {
  const get = async () => {
    const t0 = performance.now()
    const res = await fetch(`${server.url}/api/v1/billing/dte${query}`, { headers: { 'X-Api-Key': server.key } })
    const body = (await res.json()) as { total_count?: number }
    if (res.status !== 200) throw new Error(`GET /dte${query}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`)
    return { ms: performance.now() - t0, totalCount: body.total_count ?? Number.NaN }
  }
  let totalCount = Number.NaN
  for (let i = 0; i < 10; i++) totalCount = (await get()).totalCount
  const latencies: number[] = []
  const deadline = performance.now() + capSeconds * 1000
  while (latencies.length < n && performance.now() < deadline) latencies.push((await get()).ms)
  return { ...summarize(latencies), totalCount }
}
