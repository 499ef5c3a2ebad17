// Issue 8 benchmark (DESIGN §8): cliente and producto search with 100 000 records per company, p50/p99 per kind of
// query, in the service (fold, FTS5 trigram or LIKE walk, mapping) and over HTTP (GET …/search on 127.0.0.1, server in
// this process, concurrency 1). A second company with its own 100 000 clientes shares the instance's index, as it would.
//   bun bench/catalogs.ts [--records 100000] [--iterations 300]
import { rmSync } from 'node:fs'
import { systemClock } from '../src/clock'
import { loadConfig } from '../src/config'
import { runServer } from '../src/cli/serve'
import { insertCliente } from '../src/db/cliente-store'
import { openDatabase, type Store } from '../src/db/open'
import { insertProducto } from '../src/db/producto-store'
import { foldText } from '../src/domain/catalogo'
import { computeDv } from '../src/domain/rut'
import { createApiKey } from '../src/services/api-keys'
import { searchClientes } from '../src/services/clientes'
import { createEmpresa } from '../src/services/empresas'
import { searchProductos } from '../src/services/productos'
import { silentLogger } from '../src/log'
import { summarize, tempDir } from './support'

const args = process.argv.slice(2)
const flag = (name: string, fallback: string) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1]! : fallback
}
const RECORDS = Number(flag('--records', '100000'))
const ITERATIONS = Number(flag('--iterations', '300'))

// mulberry32: a deterministic PRNG, so every run searches the same data.
let state = 42
const rand = (n: number) => {
  state = (state + 0x6d2b79f5) | 0
  let x = Math.imul(state ^ (state >>> 15), 1 | state)
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
  return ((x ^ (x >>> 14)) >>> 0) % n
}
const pick = <T>(xs: readonly T[]) => xs[rand(xs.length)]!

const PREFIJOS = ['Comercial', 'Inversiones', 'Constructora', 'Distribuidora', 'Transportes', 'Servicios', 'Agrícola', 'Importadora', 'Sociedad', 'Ferretería']
const NOMBRES = ['Ñuñoa', 'Peñalolén', 'Los Ángeles', 'Concepción', 'Valparaíso', 'Araucanía', 'Chillán', 'Maipú', 'Curicó', 'Temuco', 'Rancagua', 'Quilpué', 'Pérez', 'González', 'Muñoz', 'Rojas', 'Díaz', 'Soto', 'Contreras', 'Silva', 'Martínez', 'Sepúlveda', 'Morales', 'Rodríguez', 'López', 'Fuentes', 'Hernández', 'Torres', 'Araya', 'Flores']
const SUFIJOS = ['Limitada', 'Ltda.', 'S.A.', 'SpA', 'E.I.R.L.', 'y Compañía Limitada']
const PRODUCTOS = ['Martillo', 'Taladro', 'Clavos', 'Tornillos', 'Cemento', 'Pintura', 'Asesoría', 'Arriendo', 'Café', 'Té', 'Harina', 'Aceite', 'Cable', 'Tubería', 'Guantes', 'Casco']
const CALIFICATIVOS = ['Profesional', 'Económico', 'Galvanizado', 'Orgánico', 'Industrial', 'Premium', 'Básico', 'Eléctrico', 'Térmico', 'Reforzado']

const rutOf = (i: number, offset: number) => {
  const body = String(10_000_000 + offset + i * 7)
  return `${body}-${computeDv(body)}`
}
const dotted = (rut: string) => rut.replace(/^(\d{1,2})(\d{3})(\d{3})-/, '$1.$2.$3-')

function seed(store: Store, empresaId: string, offset: number, withProductos: boolean): void {
  const at = new Date().toISOString()
  const BATCH = 10_000
  for (let from = 0; from < RECORDS; from += BATCH)
    store.db.transaction((tx) => {
      for (let i = from; i < Math.min(RECORDS, from + BATCH); i++) {
        // Every 20 000th cliente is the rare name a "few matches" search looks for.
        const razon = i % 20_000 === 7 ? `Quetzalcóatl ${pick(NOMBRES)} SpA` : `${pick(PREFIJOS)} ${pick(NOMBRES)} ${pick(NOMBRES)} ${pick(SUFIJOS)}`
        insertCliente(tx, { id: Bun.randomUUIDv7(), empresa_id: empresaId, rut: rutOf(i, offset), razon_social: razon, busqueda: foldText(razon), created_at: at, updated_at: at })
        if (!withProductos) continue
        const nombre = `${pick(PRODUCTOS)} ${pick(CALIFICATIVOS)} ${rand(1000)} ${pick(['UN', 'kg', 'mm', 'lt'])}`
        const codigo = `SKU-${String(i).padStart(6, '0')}`
        insertProducto(tx, {
          id: Bun.randomUUIDv7(),
          empresa_id: empresaId,
          codigo,
          nombre,
          precio_unitario: 100 + rand(100_000),
          unidad: 'UN',
          es_exento: false,
          busqueda: foldText(nombre),
          busqueda_codigo: foldText(codigo),
          created_at: at,
          updated_at: at,
        })
      }
    })
}

type Row = { kind: string; q: string; matches: number; service: { p50: number; p99: number }; http?: { p50: number; p99: number } }

function time(fn: () => unknown): number[] {
  for (let i = 0; i < 20; i++) fn()
  const ms: number[] = []
  for (let i = 0; i < ITERATIONS; i++) {
    const t0 = performance.now()
    fn()
    ms.push(performance.now() - t0)
  }
  return ms
}

async function timeHttp(url: string): Promise<number[]> {
  for (let i = 0; i < 20; i++) await (await fetch(url, { headers })).arrayBuffer()
  const ms: number[] = []
  for (let i = 0; i < ITERATIONS; i++) {
    const t0 = performance.now()
    const res = await fetch(url, { headers })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`)
    ms.push(performance.now() - t0)
  }
  return ms
}

let headers: Record<string, string> = {}
const fmt = (n: number) => n.toFixed(2).padStart(7)

const dataDir = tempDir('timbre-bench-catalogs-')
const store = openDatabase(dataDir, { log: silentLogger })
const deps = { store, clock: systemClock }
const a = createEmpresa(deps, { rut: '76543210-3', razon_social: 'Bench A SpA', giro: 'Comercio', acteco: [475200], direccion: 'Calle 1', comuna: 'Santiago', ciudad: 'Santiago' })
const b = createEmpresa(deps, { rut: '96874030-K', razon_social: 'Bench B SpA', giro: 'Comercio', acteco: [475200], direccion: 'Calle 2', comuna: 'Santiago', ciudad: 'Santiago' })
const t0 = performance.now()
seed(store, a.id, 0, true)
seed(store, b.id, 3, false)
const seededS = (performance.now() - t0) / 1000
const key = createApiKey(deps, { empresaId: a.id, write: false, nombre: 'bench' }).key
store.sqlite.run('PRAGMA wal_checkpoint(TRUNCATE)')
const dbMb = Number(store.sqlite.query('SELECT page_count * page_size AS b FROM pragma_page_count(), pragma_page_size()').get()!['b' as never]) / 1e6
console.log(
  `seeded ${RECORDS} clientes + ${RECORDS} productos (company A) and ${RECORDS} clientes (company B) in ${seededS.toFixed(1)} s ` +
    `(${((3 * RECORDS) / seededS).toFixed(0)} rows/s with their index entries); database ${dbMb.toFixed(0)} MB`,
)

const middle = rutOf(Math.floor(RECORDS / 2), 0)
const CLIENTE_QUERIES: Array<[string, string]> = [
  ['common word (about 1 in 6 rows)', 'limitada'],
  ['accented, typed without accents', 'nunoa'],
  ['two words', 'comercial penalolen'],
  ['rare name (1 in 20 000 rows)', 'quetzalcoatl'],
  ['no match', 'zzqxw'],
  ['full RUT with dots', dotted(middle)],
  ['RUT without dash', middle.replace('-', '')],
  ['RUT fragment (6 digits)', middle.slice(2, 8)],
  ['2 characters, many matches (no trigram: walk)', 'ña'],
  ['2 characters, no match (walk: worst case)', 'qx'],
]
const PRODUCTO_QUERIES: Array<[string, string]> = [
  ['name word', 'martillo'],
  ['accented name, typed without accents', 'electrico'],
  ['code, exact', `SKU-${String(Math.floor(RECORDS / 3)).padStart(6, '0')}`],
  ['code fragment', 'sku-0421'],
  ['no match', 'zzqxw'],
  ['2 characters, no match (walk: worst case)', 'qx'],
]

const rows: Row[] = []
for (const [kind, q] of CLIENTE_QUERIES) {
  const matches = searchClientes(deps, { empresaId: a.id, q, limit: 50 }).length
  rows.push({ kind: `clientes: ${kind}`, q, matches, service: summarize(time(() => searchClientes(deps, { empresaId: a.id, q, limit: 10 }))) })
}
for (const [kind, q] of PRODUCTO_QUERIES) {
  const matches = searchProductos(deps, { empresaId: a.id, q, limit: 50 }).length
  rows.push({ kind: `productos: ${kind}`, q, matches, service: summarize(time(() => searchProductos(deps, { empresaId: a.id, q, limit: 10 }))) })
}
store.close()

const config = loadConfig({ '--host': '127.0.0.1', '--port': '0', '--data-dir': dataDir, '--sii': 'simulado', '--rate-limit': '0', '--log': 'error' }, {})
const server = await runServer(config, { log: silentLogger })
headers = { 'X-Api-Key': key }
try {
  for (const row of rows) {
    const path = row.kind.startsWith('clientes') ? 'clientes' : 'productos'
    row.http = summarize(await timeHttp(`${server.url}/api/v1/billing/${path}/search?q=${encodeURIComponent(row.q)}`))
  }
  const list = summarize(await timeHttp(`${server.url}/api/v1/billing/clientes?limit=20`))
  console.log(`\nsearch, limit 10, ${ITERATIONS} runs each, ms          (matches ≤ 50)   service p50     p99 |  HTTP p50     p99`)
  for (const r of rows)
    console.log(`${`${r.kind} [${r.q}]`.padEnd(78)} ${String(r.matches).padStart(3)}  ${fmt(r.service.p50)} ${fmt(r.service.p99)} | ${fmt(r.http!.p50)} ${fmt(r.http!.p99)}`)
  console.log(`${'GET /clientes?limit=20 (first page)'.padEnd(78)}      ${''.padStart(15)} | ${fmt(list.p50)} ${fmt(list.p99)}`)
} finally {
  await server.stop()
}
rmSync(dataDir, { recursive: true, force: true })
