// GET /dte's total_count comes from trigger-kept buckets and its pages from a walk the counts choose
// (docs/decisions/list-counts.md): whatever the data, the inserts and estado changes before, the filter, the plan, the
// spans or the cursor, they must equal what a plain query over dtes answers.
import type { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { countDtes, findDtePage, transitionDte, type DteFilter, type Plan } from '../../../src/db/dte-store'
import { MIGRATIONS } from '../../../src/db/migrations.gen'
import { openDatabase, type Store } from '../../../src/db/open'
import type { EstadoDte } from '../../../src/domain/estados'
import { tempDir } from '../../support/server'

const EMPRESAS = ['e1', 'e2']
const ESTADOS: readonly EstadoDte[] = ['firmado', 'enviando', 'procesando', 'aceptado', 'rechazado']
// Few values, so that buckets hold several DTEs each and their id spans interleave and nest.
const TIPOS = [33, 61]
const RUTS = ['76086428-5', '96874030-K']
const DAYS = ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04']

function seedCompanies(sqlite: Database): void {
  for (const [i, id] of EMPRESAS.entries()) {
    sqlite.run(
      "INSERT INTO empresas (id, rut, razon_social, giro, acteco, direccion, comuna, ciudad, ambiente, fecha_resolucion, numero_resolucion, created_at, updated_at) VALUES (?, ?, 'R', 'G', '[1]', 'D', 'C', 'C', 'certificacion', '2020-01-01', 0, 'x', 'x')",
      [id, `7608642${i}-5`],
    )
    for (const tipo of TIPOS)
      sqlite.run(
        "INSERT INTO cafs (id, empresa_id, tipo_dte, folio_desde, folio_hasta, next_folio, fecha_autorizacion, idk, ambiente, caf_xml, private_key_sealed, created_at) VALUES (?, ?, ?, 1, 100000, 1, '2026-01-01', 900, 'certificacion', '<CAF/>', x'00', 'x')",
        [`caf-${id}-${tipo}`, id, tipo],
      )
  }
}

interface NewRow {
  readonly empresa: number
  readonly tipo: number
  readonly estado: number
  readonly rut: number
  readonly day: number
}

let folio = 0
function insertRow(sqlite: Database, r: NewRow): string {
  const id = Bun.randomUUIDv7()
  const empresa = EMPRESAS[r.empresa]!
  const tipo = TIPOS[r.tipo]!
  sqlite.run(
    "INSERT INTO dtes (id, empresa_id, tipo_dte, folio, caf_id, estado, rut_receptor, razon_social_receptor, fecha_emision, tasa_iva, monto_total, detalle, referencias, request, xml, auto_send, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'R', ?, 19, 1, '[]', '[]', '{}', x'00', 0, '{}', 'x', 'x')",
    [id, empresa, tipo, ++folio, `caf-${empresa}-${tipo}`, ESTADOS[r.estado]!, RUTS[r.rut]!, DAYS[r.day]!],
  )
  return id
}

const arbRow: fc.Arbitrary<NewRow> = fc.record({
  empresa: fc.integer({ min: 0, max: EMPRESAS.length - 1 }),
  tipo: fc.integer({ min: 0, max: TIPOS.length - 1 }),
  estado: fc.integer({ min: 0, max: 1 }),
  rut: fc.integer({ min: 0, max: RUTS.length - 1 }),
  day: fc.integer({ min: 0, max: DAYS.length - 1 }),
})

/** Inserts, estado changes (through the store's own transition), no-op updates and (never done by Timbre) deletes. */
type Op = { kind: 'insert'; row: NewRow } | { kind: 'estado'; pick: number; estado: number } | { kind: 'touch'; pick: number } | { kind: 'delete'; pick: number }
const arbOp: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: arbRow.map((row) => ({ kind: 'insert' as const, row })) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('estado' as const), pick: fc.nat(), estado: fc.integer({ min: 0, max: ESTADOS.length - 1 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('touch' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }) },
)

function apply(store: Store, ops: readonly Op[]): void {
  const ids: string[] = []
  for (const op of ops) {
    if (op.kind === 'insert') {
      ids.push(insertRow(store.sqlite, op.row))
      continue
    }
    if (ids.length === 0) continue
    const id = ids[op.pick % ids.length]!
    const row = store.sqlite.query('SELECT empresa_id, estado FROM dtes WHERE id = ?').get(id) as { empresa_id: string; estado: EstadoDte }
    if (op.kind === 'estado') transitionDte(store.db, row.empresa_id, id, row.estado, { estado: ESTADOS[op.estado]!, updated_at: 'y' })
    if (op.kind === 'touch') store.sqlite.run('UPDATE dtes SET estado = estado, updated_at = ? WHERE id = ?', ['z', id])
    if (op.kind === 'delete') {
      store.sqlite.run('DELETE FROM dtes WHERE id = ?', [id])
      ids.splice(ids.indexOf(id), 1)
    }
  }
}

/** The plain answer: every match of the filter, newest first, read from the table without the list's indexes. */
function bruteForce(sqlite: Database, empresaId: string, f: DteFilter): string[] {
  const where = ['empresa_id = $e']
  if (f.tipoDte !== undefined) where.push('tipo_dte = $tipo')
  if (f.estado !== undefined) where.push('estado = $estado')
  if (f.rutReceptor !== undefined) where.push('rut_receptor = $rut')
  if (f.fechaDesde !== undefined) where.push('fecha_emision >= $desde')
  if (f.fechaHasta !== undefined) where.push('fecha_emision <= $hasta')
  const params = { e: empresaId, tipo: f.tipoDte ?? null, estado: f.estado ?? null, rut: f.rutReceptor ?? null, desde: f.fechaDesde ?? null, hasta: f.fechaHasta ?? null }
  const used = Object.fromEntries(Object.entries(params).filter(([k]) => k === 'e' || where.some((w) => w.includes(`$${k}`))))
  return (sqlite.query(`SELECT id FROM dtes NOT INDEXED WHERE ${where.join(' AND ')} ORDER BY id DESC`).all(used) as Array<{ id: string }>).map((r) => r.id)
}

/** Every page from the first to the last, following the cursor as GET /dte does. */
function walkPages(store: Store, empresaId: string, f: DteFilter, limit: number, force: { plan?: Plan; spans?: boolean }): { ids: string[]; totals: number[] } {
  const ids: string[] = []
  const totals: number[] = []
  let after: string | null = null
  for (let guard = 0; guard < 1000; guard++) {
    const page = findDtePage(store.db, empresaId, f, after, limit + 1, force)
    totals.push(page.total)
    const items = page.rows.slice(0, limit)
    ids.push(...items.map((r) => r.id))
    if (page.rows.length <= limit) return { ids, totals }
    after = items.at(-1)!.id
  }
  throw new Error('the walk did not end')
}

/** The plans that can serve a filter: a walk by estado, tipo or receptor needs that filter's value. */
function plansFor(f: DteFilter): Plan[] {
  const plans: Plan[] = ['id', 'fecha']
  if (f.estado !== undefined) plans.push('estado')
  if (f.tipoDte !== undefined) plans.push('tipo')
  if (f.rutReceptor !== undefined) plans.push('rut')
  return plans
}

const arbFilter: fc.Arbitrary<DteFilter> = fc
  .record({
    tipoDte: fc.option(fc.constantFrom(...TIPOS), { nil: undefined, freq: 1 }),
    estado: fc.option(fc.constantFrom(...ESTADOS), { nil: undefined, freq: 1 }),
    rutReceptor: fc.option(fc.constantFrom(...RUTS), { nil: undefined, freq: 1 }),
    fechaDesde: fc.option(fc.constantFrom(...DAYS), { nil: undefined, freq: 1 }),
    fechaHasta: fc.option(fc.constantFrom(...DAYS), { nil: undefined, freq: 1 }),
  })
  .filter((f) => f.fechaDesde === undefined || f.fechaHasta === undefined || f.fechaDesde <= f.fechaHasta)

/** Each bucket table equals a GROUP BY of dtes: the same counts, no empty bucket, and bounds around every id. */
function expectBucketsExact(sqlite: Database): void {
  for (const [table, keys] of [
    ['dte_counts', 'empresa_id, tipo_dte, estado'],
    ['dte_counts_dia', 'empresa_id, fecha_emision, tipo_dte, estado'],
    ['dte_counts_receptor', 'empresa_id, rut_receptor, fecha_emision, tipo_dte, estado'],
  ] as const) {
    const actual = sqlite.query(`SELECT ${keys}, n FROM ${table} ORDER BY ${keys}`).all()
    const expected = sqlite.query(`SELECT ${keys}, count(*) AS n FROM dtes NOT INDEXED GROUP BY ${keys} ORDER BY ${keys}`).all()
    expect({ table, rows: actual }).toEqual({ table, rows: expected })
    const join = keys.split(', ').map((k) => `b.${k} = d.${k}`).join(' AND ')
    expect(sqlite.query(`SELECT count(*) AS n FROM dtes d JOIN ${table} b ON ${join} WHERE d.id < b.min_id OR d.id > b.max_id`).get()).toEqual({ n: 0 })
  }
}

describe('total_count and pages against a plain query', () => {
  test('random inserts, estado changes and deletes: every bucket exact, every count and every page as a plain query answers', () => {
    fc.assert(
      fc.property(fc.array(arbOp, { minLength: 1, maxLength: 150 }), fc.array(arbFilter, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 7 }), (ops, filters, limit) => {
        const store = openDatabase(tempDir())
        try {
          seedCompanies(store.sqlite)
          apply(store, ops)
          expectBucketsExact(store.sqlite)
          for (const f of filters)
            for (const empresa of EMPRESAS) {
              const expected = bruteForce(store.sqlite, empresa, f)
              expect(countDtes(store.db, empresa, f)).toBe(expected.length)
              for (const force of [{}, ...plansFor(f).flatMap((plan) => [{ plan, spans: false }, { plan, spans: true }])]) {
                const walked = walkPages(store, empresa, f, limit, force)
                expect({ f, force, ids: walked.ids }).toEqual({ f, force, ids: expected })
                expect(new Set(walked.totals)).toEqual(new Set([expected.length]))
              }
            }
        } finally {
          store.close()
        }
      }),
      { numRuns: 40 },
    )
  }, 120_000)

  test('every filter combination on one store, through estado changes: total_count exact before and after each change', () => {
    const store = openDatabase(tempDir())
    seedCompanies(store.sqlite)
    const rng = fc.sample(fc.array(arbRow, { minLength: 400, maxLength: 400 }), { numRuns: 1, seed: 17 })[0]!
    const ids = rng.map((r) => insertRow(store.sqlite, r))
    const filters: DteFilter[] = []
    for (const tipoDte of [undefined, ...TIPOS])
      for (const estado of [undefined, ...ESTADOS])
        for (const rutReceptor of [undefined, ...RUTS])
          for (const [fechaDesde, fechaHasta] of [[undefined, undefined], [DAYS[1], undefined], [undefined, DAYS[2]], [DAYS[1], DAYS[2]], [DAYS[3], DAYS[3]]])
            filters.push({ tipoDte, estado, rutReceptor, fechaDesde, fechaHasta })
    const check = () => {
      for (const f of filters) for (const empresa of EMPRESAS) expect({ f, n: countDtes(store.db, empresa, f) }).toEqual({ f, n: bruteForce(store.sqlite, empresa, f).length })
    }
    check()
    // The life of a DTE (DESIGN §6): firmado → enviando → procesando → aceptado or rechazado, for a third of them.
    for (const [i, id] of ids.entries()) {
      if (i % 3 !== 0) continue
      for (const next of ['enviando', 'procesando', i % 2 === 0 ? 'aceptado' : 'rechazado'] as const) {
        const row = store.sqlite.query('SELECT empresa_id, estado FROM dtes WHERE id = ?').get(id) as { empresa_id: string; estado: EstadoDte }
        transitionDte(store.db, row.empresa_id, id, row.estado, { estado: next, updated_at: 'y' })
      }
    }
    check()
    expectBucketsExact(store.sqlite)
    for (const f of filters.filter((_, i) => i % 7 === 0))
      for (const empresa of EMPRESAS) expect({ f, ids: walkPages(store, empresa, f, 9, {}).ids }).toEqual({ f, ids: bruteForce(store.sqlite, empresa, f) })
    store.close()
  }, 60_000)

  test('a rolled-back insert or estado change leaves every count as it was (the triggers run in the writer transaction)', () => {
    const store = openDatabase(tempDir())
    seedCompanies(store.sqlite)
    const id = insertRow(store.sqlite, { empresa: 0, tipo: 0, estado: 0, rut: 0, day: 0 })
    const before = countDtes(store.db, 'e1', { estado: 'firmado' })
    expect(() =>
      store.db.transaction((tx) => {
        transitionDte(tx, 'e1', id, 'firmado', { estado: 'aceptado', updated_at: 'y' })
        insertRow(store.sqlite, { empresa: 0, tipo: 0, estado: 0, rut: 0, day: 0 })
        expect(countDtes(tx, 'e1', { estado: 'aceptado' })).toBe(1)
        throw new Error('rollback')
      }),
    ).toThrow('rollback')
    expect(countDtes(store.db, 'e1', { estado: 'firmado' })).toBe(before)
    expect(countDtes(store.db, 'e1', { estado: 'aceptado' })).toBe(0)
    expectBucketsExact(store.sqlite)
    store.close()
  })
})

test('the migration backfills every bucket from the DTEs already stored, and the triggers keep them from there', () => {
  const dir = tempDir()
  const before = openDatabase(dir, { migrations: MIGRATIONS.filter((m) => m.tag < '0010') })
  seedCompanies(before.sqlite)
  const rows = fc.sample(arbRow, { numRuns: 300, seed: 10 })
  for (const r of rows) insertRow(before.sqlite, r)
  before.close()
  const store = openDatabase(dir)
  expectBucketsExact(store.sqlite)
  // Right after the backfill the bounds are exact: the first and last id of each bucket.
  expect(store.sqlite.query('SELECT min_id, max_id FROM dte_counts_dia ORDER BY empresa_id, fecha_emision, tipo_dte, estado').all()).toEqual(
    store.sqlite.query('SELECT min(id) AS min_id, max(id) AS max_id FROM dtes GROUP BY empresa_id, fecha_emision, tipo_dte, estado ORDER BY empresa_id, fecha_emision, tipo_dte, estado').all(),
  )
  insertRow(store.sqlite, { empresa: 1, tipo: 1, estado: 1, rut: 1, day: 3 })
  expectBucketsExact(store.sqlite)
  expect(countDtes(store.db, 'e1', {}) + countDtes(store.db, 'e2', {})).toBe(rows.length + 1)
  store.close()
})
