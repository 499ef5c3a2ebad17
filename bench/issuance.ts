// Issue 5 benchmark (DESIGN §11): POST /dte over HTTP against the compiled binary at concurrency 1 and 32 (DTE/s, p50,
// p99) beside the crypto floor measured in the same run; GET /dte p50/p99 with 100 000 and 1 000 000 stored DTEs;
// server memory at rest and under load.
//   bun scripts/build.ts && bun bench/issuance.ts [--requests N] [--skip-list] [--list-sizes 100000,1000000]
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { santiagoDate } from '../src/clock'
import { exportPfx, makeCertificate, makeTestCaf } from '../test/support/pki'
import { cryptoFloorPerSecond, rssMb, run, startServer, summarize, tempDir } from './support'

const args = process.argv.slice(2)
const flag = (name: string, fallback: string) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1]! : fallback
}
const REQUESTS = Number(flag('--requests', '2000'))
const LIST_SIZES = flag('--list-sizes', '100000,1000000').split(',').map(Number)
const RUT = '76543210-3'

const factura = (i: number) => ({
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

async function provision(dataDir: string): Promise<{ url: string; key: string; proc: ReturnType<typeof Bun.spawn> }> {
  run(['empresa', 'create', '--rut', RUT, '--razon-social', 'Bench SpA', '--giro', 'Ferretería', '--acteco', '475200', '--direccion', 'Calle 1', '--comuna', 'Santiago', '--ciudad', 'Santiago', '--data-dir', dataDir])
  const key = (JSON.parse(run(['apikey', 'create', '--empresa', RUT, '--write', '--data-dir', dataDir])) as { key: string }).key
  const server = await startServer(dataDir)
  const h = { 'X-Api-Key': key, 'content-type': 'application/json' }
  const signer = makeCertificate({ rut: '7880442-4', keySlot: 11 })
  await fetch(`${server.url}/api/v1/billing/empresa/certificado/pfx`, { method: 'POST', headers: h, body: JSON.stringify({ pfx_base64: Buffer.from(exportPfx(signer, 'x', '3des')).toString('base64'), password: 'x' }) })
  const caf = makeTestCaf({ rut: RUT, razonSocial: 'Bench SpA', folioDesde: 1, folioHasta: 5_000_000, fechaAutorizacion: santiagoDate(new Date()) })
  const res = await fetch(`${server.url}/api/v1/billing/caf`, { method: 'POST', headers: h, body: JSON.stringify({ tipo_dte: 33, caf_xml: caf.xml }) })
  if (res.status !== 201) throw new Error(await res.text())
  return { ...server, key }
}

async function issueLoad(url: string, key: string, concurrency: number, total: number): Promise<{ perSecond: number; p50: number; p99: number; errors: number }> {
  const latencies: number[] = []
  let next = 0
  let errors = 0
  const worker = async () => {
    while (next < total) {
      const i = next++
      const t0 = performance.now()
      const res = await fetch(`${url}/api/v1/billing/dte`, {
        method: 'POST',
        headers: { 'X-Api-Key': key, 'content-type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
        body: JSON.stringify(factura(i)),
      })
      await res.arrayBuffer()
      latencies.push(performance.now() - t0)
      if (res.status !== 201) errors++
    }
  }
  const start = performance.now()
  await Promise.all(Array.from({ length: concurrency }, worker))
  const seconds = (performance.now() - start) / 1000
  return { perSecond: total / seconds, ...summarize(latencies), errors }
}

/** Fills the dtes table to `size` rows by copying one issued row with new ids, folios and dates (list never reads XML). */
function fillDtes(dataDir: string, size: number): void {
  const db = new Database(join(dataDir, 'timbre.db'))
  db.run('PRAGMA synchronous = OFF')
  const have = (db.query('SELECT count(*) AS n FROM dtes').get() as { n: number }).n
  const template = db.query('SELECT * FROM dtes LIMIT 1').get() as Record<string, unknown>
  const columns = Object.keys(template)
  const insert = db.prepare(`INSERT INTO dtes (${columns.join(',')}) VALUES (${columns.map(() => '?').join(',')})`)
  const maxFolio = (db.query('SELECT max(folio) AS f FROM dtes').get() as { f: number }).f
  const estados = ['aceptado', 'aceptado', 'aceptado', 'rechazado', 'con_reparos', 'procesando', 'firmado']
  const ruts = ['76086428-5', '96874030-K', '77879240-0', '76555835-2', '60910000-1']
  const base = Date.now() - 400 * 86_400_000
  const stub = Buffer.from('<DTE/>')
  let folio = maxFolio
  const batch = db.transaction((n: number) => {
    for (let i = 0; i < n; i++) {
      folio++
      const row = { ...template, id: Bun.randomUUIDv7(), folio, estado: estados[folio % estados.length], rut_receptor: ruts[folio % ruts.length], fecha_emision: santiagoDate(new Date(base + (folio % 400) * 86_400_000)), xml: stub, request: '{}' }
      insert.run(...(columns.map((c) => row[c as keyof typeof row]) as Array<string | number | null | Uint8Array>))
    }
  })
  for (let left = size - have; left > 0; left -= 50_000) {
    batch(Math.min(50_000, left))
    process.stderr.write(`\r  filling dtes: ${size - Math.max(0, left - 50_000)} / ${size}   `)
  }
  process.stderr.write('\n')
  db.run('UPDATE cafs SET next_folio = ? WHERE tipo_dte = 33', [folio + 1])
  db.run('ANALYZE')
  db.close()
}

async function listLatency(url: string, key: string, query: string, n: number): Promise<{ p50: number; p99: number }> {
  const latencies: number[] = []
  for (let i = 0; i < 10; i++) await (await fetch(`${url}/api/v1/billing/dte${query}`, { headers: { 'X-Api-Key': key } })).arrayBuffer()
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    const res = await fetch(`${url}/api/v1/billing/dte${query}`, { headers: { 'X-Api-Key': key } })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`${query}: ${res.status}`)
    latencies.push(performance.now() - t0)
  }
  return summarize(latencies)
}

const fmt = (n: number, d = 1) => n.toFixed(d).padStart(8)

console.log(`Timbre issuance benchmark — ${new Date().toISOString()}, ${navigator.hardwareConcurrency} cores`)
const floor = cryptoFloorPerSecond(3)
console.log(`crypto floor (one core): ${fmt(floor, 0)} documents/s  (RSA-2048 signature + CAF-key signature each)`)

const dataDir = tempDir('timbre-bench-')
const server = await provision(dataDir)
console.log(`server RSS at rest: ${fmt(rssMb(server.proc.pid), 0)} MB`)
for (const concurrency of [1, 32]) {
  const r = await issueLoad(server.url, server.key, concurrency, concurrency === 1 ? Math.min(REQUESTS, 1000) : REQUESTS)
  console.log(
    `POST /dte c=${String(concurrency).padEnd(3)} ${fmt(r.perSecond, 0)} DTE/s  p50 ${fmt(r.p50, 2)} ms  p99 ${fmt(r.p99, 2)} ms  ${((r.perSecond / floor) * 100).toFixed(0)} % of the floor  errors ${r.errors}  RSS ${rssMb(server.proc.pid).toFixed(0)} MB`,
  )
}
server.proc.kill('SIGTERM')
await server.proc.exited

if (!args.includes('--skip-list'))
  for (const size of LIST_SIZES) {
    fillDtes(dataDir, size)
    const s = await startServer(dataDir)
    for (const [label, query] of [
      ['first page', ''],
      ['estado=aceptado', '?estado=aceptado'],
      ['rut_receptor', '?rut_receptor=96874030-K'],
      ['fecha range', `?fecha_desde=${santiagoDate(new Date(Date.now() - 200 * 86_400_000))}&fecha_hasta=${santiagoDate(new Date(Date.now() - 100 * 86_400_000))}`],
    ] as const) {
      const r = await listLatency(s.url, server.key, query, 100)
      console.log(`GET /dte ${String(size).padStart(8)} rows  ${label.padEnd(16)} p50 ${fmt(r.p50, 2)} ms  p99 ${fmt(r.p99, 2)} ms`)
    }
    console.log(`server RSS after list load: ${fmt(rssMb(s.proc.pid), 0)} MB`)
    s.proc.kill('SIGTERM')
    await s.proc.exited
  }
