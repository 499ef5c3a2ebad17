// db/folio-reserver.ts and db/group-commit.ts (issue 17): folios are reserved in memory before a worker signs, stored
// with their document in a grouped commit, given back when the signature or the commit fails, and found again just below
// next_folio after a restart lost the memory. No folio is ever handed out twice.
import { expect, test } from 'bun:test'
import type { Database } from 'bun:sqlite'
import { advanceNextFolio, FolioReserver, HOLE_WINDOW } from '../../../src/db/folio-reserver'
import { GroupCommitter } from '../../../src/db/group-commit'
import { openDatabase, type Store } from '../../../src/db/open'
import { TimbreError } from '../../../src/errors'
import { tempDir } from '../../support/server'

const TODAY = '2026-11-24'

function seedEmpresa(sqlite: Database, empresaId = 'e1'): void {
  sqlite.run(
    "INSERT INTO empresas (id, rut, razon_social, giro, acteco, direccion, comuna, ciudad, ambiente, fecha_resolucion, numero_resolucion, created_at, updated_at) VALUES (?, ?, 'R', 'G', '[1]', 'D', 'C', 'C', 'certificacion', '2020-01-01', 0, 'x', 'x')",
    [empresaId, `${empresaId}-rut`],
  )
}

function seedCaf(sqlite: Database, opts: { id: string; desde: number; hasta: number; next?: number; venceEl?: string | null; empresaId?: string; tipo?: number }): void {
  sqlite.run(
    "INSERT INTO cafs (id, empresa_id, tipo_dte, folio_desde, folio_hasta, next_folio, fecha_autorizacion, vence_el, idk, ambiente, caf_xml, private_key_sealed, created_at) VALUES (?, ?, ?, ?, ?, ?, '2026-11-01', ?, 900, 'certificacion', '<CAF/>', x'00', 'x')",
    [opts.id, opts.empresaId ?? 'e1', opts.tipo ?? 33, opts.desde, opts.hasta, opts.next ?? opts.desde, opts.venceEl ?? null],
  )
}

/** A stored document of that folio, as issuance stores it (the folio's use and next_folio in one transaction). */
function storeDte(store: Store, cafId: string, folio: number, empresaId = 'e1'): void {
  store.db.transaction((tx) => {
    store.sqlite.run(
      "INSERT INTO dtes (id, empresa_id, tipo_dte, folio, caf_id, estado, rut_receptor, razon_social_receptor, fecha_emision, tasa_iva, monto_total, detalle, referencias, request, xml, auto_send, metadata, created_at, updated_at) VALUES (?, ?, 33, ?, ?, 'firmado', '1-9', 'R', '2026-01-01', 19, 1, '[]', '[]', '{}', x'00', 0, '{}', 'x', 'x')",
      [Bun.randomUUIDv7(), empresaId, folio, cafId],
    )
    advanceNextFolio(tx, cafId, folio)
  })
}

function freshStore(): Store {
  const store = openDatabase(tempDir('timbre-folios-'))
  seedEmpresa(store.sqlite)
  return store
}

test('folios come in order; one given back is handed out again first, one stored never', () => {
  const store = freshStore()
  seedCaf(store.sqlite, { id: 'caf-a', desde: 1, hasta: 10 })
  const r = new FolioReserver()
  const [a, b, c] = [1, 2, 3].map(() => r.reserve(store.db, 'e1', 33, TODAY)!)
  expect([a!.folio, b!.folio, c!.folio]).toEqual([1, 2, 3])
  storeDte(store, 'caf-a', 3)
  r.settle(c!, true)
  r.settle(b!, false) // its signature failed: folio 2 was never used
  expect(r.reserve(store.db, 'e1', 33, TODAY)!.folio).toBe(2)
  expect(r.reserve(store.db, 'e1', 33, TODAY)!.folio).toBe(4)
  // Settling twice, or a reservation this reserver never made, changes nothing.
  r.settle(c!, false)
  expect(r.reserve(store.db, 'e1', 33, TODAY)!.folio).toBe(5)
  expect((store.sqlite.query('SELECT next_folio FROM cafs').get() as { next_folio: number }).next_folio).toBe(4)
  store.close()
})

test('the oldest active CAF serves first, then the next; an expired one never; none left is undefined', () => {
  const store = freshStore()
  seedCaf(store.sqlite, { id: 'caf-1', desde: 1, hasta: 2 })
  seedCaf(store.sqlite, { id: 'caf-0-expired', desde: 100, hasta: 200, venceEl: '2026-11-23' })
  seedCaf(store.sqlite, { id: 'caf-2', desde: 3, hasta: 3 })
  const r = new FolioReserver()
  const got = [1, 2, 3].map(() => r.reserve(store.db, 'e1', 33, TODAY))
  expect(got.map((g) => [g!.caf.id, g!.folio])).toEqual([['caf-1', 1], ['caf-1', 2], ['caf-2', 3]])
  expect(r.reserve(store.db, 'e1', 33, TODAY)).toBeUndefined()
  expect(r.reserve(store.db, 'e1', 34, TODAY)).toBeUndefined()
  // A folio given back on a CAF the database already counts as spent is still handed out.
  r.settle(got[0]!, false)
  storeDte(store, 'caf-1', 2)
  storeDte(store, 'caf-2', 3)
  expect(r.reserve(store.db, 'e1', 33, TODAY)).toMatchObject({ caf: { id: 'caf-1' }, folio: 1 })
  store.close()
})

test('after a restart, folios reserved but never stored below next_folio are found and reused before new ones', () => {
  const store = freshStore()
  seedCaf(store.sqlite, { id: 'caf-a', desde: 1, hasta: 100 })
  seedCaf(store.sqlite, { id: 'caf-spent', desde: 200, hasta: 204, tipo: 34 })
  const before = new FolioReserver()
  const taken = Array.from({ length: 8 }, () => before.reserve(store.db, 'e1', 33, TODAY)!)
  // Committed out of order, then the process died with 2, 5 and 6 reserved and not stored (next_folio = 9).
  for (const f of [1, 3, 4, 7, 8]) storeDte(store, 'caf-a', f)
  const spent = Array.from({ length: 5 }, () => before.reserve(store.db, 'e1', 34, TODAY)!)
  for (const f of [200, 201, 203, 204]) {
    store.sqlite.run(
      "INSERT INTO dtes (id, empresa_id, tipo_dte, folio, caf_id, estado, rut_receptor, razon_social_receptor, fecha_emision, tasa_iva, monto_total, detalle, referencias, request, xml, auto_send, metadata, created_at, updated_at) VALUES (?, 'e1', 34, ?, 'caf-spent', 'firmado', '1-9', 'R', '2026-01-01', 19, 1, '[]', '[]', '{}', x'00', 0, '{}', 'x', 'x')",
      [Bun.randomUUIDv7(), f],
    )
    advanceNextFolio(store.db, 'caf-spent', f)
  }
  expect(taken.length + spent.length).toBe(13)
  const after = new FolioReserver()
  expect([1, 2, 3, 4].map(() => after.reserve(store.db, 'e1', 33, TODAY)!.folio)).toEqual([2, 5, 6, 9])
  // The spent CAF (next_folio past folio_hasta) still gives its hole, then the type has none.
  expect(after.reserve(store.db, 'e1', 34, TODAY)).toMatchObject({ caf: { id: 'caf-spent' }, folio: 202 })
  expect(after.reserve(store.db, 'e1', 34, TODAY)).toBeUndefined()
  store.close()
})

test('a folio left unsettled a window behind stops new reservations with a 503, not a hole a restart would miss', () => {
  expect(HOLE_WINDOW).toBeGreaterThanOrEqual(10_000 * 2) // 10 s of signing at 1 000 DTE/s, twice over
  const WINDOW = 64
  const store = freshStore()
  seedCaf(store.sqlite, { id: 'caf-big', desde: 1, hasta: WINDOW + 10 })
  const r = new FolioReserver(WINDOW)
  const stuck = r.reserve(store.db, 'e1', 33, TODAY)!
  for (let i = 1; i < WINDOW; i++) r.settle(r.reserve(store.db, 'e1', 33, TODAY)!, true)
  const refused = (() => {
    try {
      r.reserve(store.db, 'e1', 33, TODAY)
      return null
    } catch (err) {
      return err
    }
  })()
  expect(refused).toBeInstanceOf(TimbreError)
  expect((refused as TimbreError).code).toBe('SERVICE_UNAVAILABLE')
  r.settle(stuck, true)
  expect(r.reserve(store.db, 'e1', 33, TODAY)!.folio).toBe(WINDOW + 1)
  store.close()
})

test('group commit: writes queued together share one transaction; a failing one rolls back alone; all settle after COMMIT', async () => {
  const store = freshStore()
  store.sqlite.run('CREATE TABLE t (v INTEGER PRIMARY KEY)')
  const committer = new GroupCommitter(store.db, store.sqlite)
  const seenInside: number[] = []
  const writes = [1, 2, 2, 3].map((v) =>
    committer.submit((tx) => {
      tx.run(`INSERT INTO t (v) VALUES (${v})` as never)
      seenInside.push(store.sqlite.inTransaction ? 1 : 0)
      return v
    }),
  )
  const outcomes = await Promise.allSettled(writes)
  expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
  expect(seenInside).toEqual([1, 1, 1]) // the duplicate threw before it got there
  expect(committer.stats).toEqual({ groups: 1, writes: 4, largest: 4 })
  expect(store.sqlite.query('SELECT v FROM t ORDER BY v').all()).toEqual([{ v: 1 }, { v: 2 }, { v: 3 }])
  // Resolved means committed: another connection sees the rows.
  const other = new (await import('bun:sqlite')).Database(store.path, { readonly: true })
  expect(other.query('SELECT count(*) AS n FROM t').get()).toEqual({ n: 3 })
  other.close()
  store.close()
})

test('group commit: when COMMIT itself fails, every write of the group is refused and nothing is stored', async () => {
  const store = freshStore()
  store.sqlite.run('CREATE TABLE p (id INTEGER PRIMARY KEY)')
  store.sqlite.run('CREATE TABLE c (p INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)')
  const committer = new GroupCommitter(store.db, store.sqlite)
  const ok = committer.submit((tx) => tx.run('INSERT INTO p (id) VALUES (1)' as never))
  // A deferred foreign key fails only at COMMIT: the whole group fails there.
  const bad = committer.submit((tx) => tx.run('INSERT INTO c (p) VALUES (99)' as never))
  const outcomes = await Promise.allSettled([ok, bad])
  expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected'])
  expect(store.sqlite.query('SELECT count(*) AS n FROM p').get()).toEqual({ n: 0 })
  expect(store.sqlite.inTransaction).toBe(false)
  store.close()
})

test('a CAF closed for annulment hands out nothing from the first folio never handed out; a reopened one serves again', () => {
  const store = freshStore()
  seedCaf(store.sqlite, { id: 'caf-a', desde: 1, hasta: 10 })
  seedCaf(store.sqlite, { id: 'caf-b', desde: 11, hasta: 20 })
  const r = new FolioReserver()
  const [one, two] = [r.reserve(store.db, 'e1', 33, TODAY)!, r.reserve(store.db, 'e1', 33, TODAY)!]
  storeDte(store, 'caf-a', 1)
  r.settle(one, true)
  const row = store.sqlite.query("SELECT * FROM cafs WHERE id = 'caf-a'").get() as never
  // Folio 2 is still signing: the annulment starts after it.
  expect(r.close(store.db, row)).toBe(3)
  expect(r.reserve(store.db, 'e1', 33, TODAY)).toMatchObject({ caf: { id: 'caf-b' }, folio: 11 })
  // Folio 2's signature fails: it comes back to a closed CAF and is not handed out.
  r.settle(two, false)
  expect(r.reserve(store.db, 'e1', 33, TODAY)).toMatchObject({ caf: { id: 'caf-b' }, folio: 12 })
  r.reopen('caf-a')
  expect(r.reserve(store.db, 'e1', 33, TODAY)).toMatchObject({ caf: { id: 'caf-a' }, folio: 2 })
  // After a restart the database's anulacion_estado keeps it closed: caf-b serves (from 11: nothing of it was stored).
  store.sqlite.run("UPDATE cafs SET anulacion_estado = 'en_curso' WHERE id = 'caf-a'")
  const restarted = new FolioReserver()
  expect(restarted.reserve(store.db, 'e1', 33, TODAY)).toMatchObject({ caf: { id: 'caf-b' }, folio: 11 })
  store.close()
})
