// GET /ready is unauthenticated and answers the age of the oldest DTE waiting on the SII (issue 18, hole 5): its cost
// must not grow with the firmado DTEs an integrator keeps unsent (auto_send false), which never wait on the SII. The
// plan is read rather than timed: one seek into the pending rows' own index, whatever else the table holds.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Database } from 'bun:sqlite'
import { oldestPendingCreatedAt, oldestPendingSql } from '../../../src/db/dte-store'
import { openDatabase, optimizeStore, type Store } from '../../../src/db/open'
import { tempDir } from '../../support/server'

const UNSENT = 50_000
let store: Store

function seedEmpresa(sqlite: Database): void {
  sqlite.run(
    "INSERT INTO empresas (id, rut, razon_social, giro, acteco, direccion, comuna, ciudad, ambiente, fecha_resolucion, numero_resolucion, created_at, updated_at) VALUES ('e1', '1-9', 'R', 'G', '[1]', 'D', 'C', 'C', 'certificacion', '2020-01-01', 0, 'x', 'x')",
  )
  sqlite.run(
    "INSERT INTO cafs (id, empresa_id, tipo_dte, folio_desde, folio_hasta, next_folio, fecha_autorizacion, idk, ambiente, caf_xml, private_key_sealed, created_at) VALUES ('c1', 'e1', 33, 1, 1000000, 1, '2026-01-01', 900, 'certificacion', '<CAF/>', x'00', 'x')",
  )
}

let folio = 0
function insertDtes(sqlite: Database, rows: ReadonlyArray<{ estado: string; autoSend: boolean; createdAt: string }>): string[] {
  const insert = sqlite.prepare(
    "INSERT INTO dtes (id, empresa_id, tipo_dte, folio, caf_id, estado, rut_receptor, razon_social_receptor, fecha_emision, tasa_iva, monto_total, detalle, referencias, request, xml, auto_send, metadata, created_at, updated_at) VALUES (?, 'e1', 33, ?, 'c1', ?, '1-9', 'R', '2026-01-01', 19, 1, '[]', '[]', '{}', x'00', ?, '{}', ?, ?)",
  )
  const ids: string[] = []
  sqlite.transaction(() => {
    for (const row of rows) {
      const id = Bun.randomUUIDv7()
      insert.run(id, ++folio, row.estado, row.autoSend ? 1 : 0, row.createdAt, row.createdAt)
      ids.push(id)
    }
  })()
  return ids
}

const at = (day: number, second: number) => new Date(Date.UTC(2026, 0, day, 0, 0, second)).toISOString()

let oldestPendingId: string
beforeAll(() => {
  store = openDatabase(tempDir())
  seedEmpresa(store.sqlite)
  // The unsent rows are all older than any pending one: an answer taken from them would be visibly wrong.
  insertDtes(store.sqlite, Array.from({ length: UNSENT }, (_, i) => ({ estado: 'firmado', autoSend: false, createdAt: at(1, i) })))
  insertDtes(store.sqlite, [
    { estado: 'aceptado', autoSend: true, createdAt: at(2, 0) },
    { estado: 'rechazado', autoSend: true, createdAt: at(2, 1) },
    { estado: 'procesando', autoSend: false, createdAt: at(3, 30) },
    { estado: 'enviando', autoSend: true, createdAt: at(3, 20) },
  ])
  oldestPendingId = insertDtes(store.sqlite, [{ estado: 'firmado', autoSend: true, createdAt: at(3, 10) }])[0]!
})
afterAll(() => store.close())

function plan(): string[] {
  return (store.sqlite.query(`EXPLAIN QUERY PLAN ${oldestPendingSql(store.db)}`).all() as Array<{ detail: string }>).map((r) => r.detail)
}

test(`oldest pending among ${UNSENT} unsent firmado DTEs: the firmado with auto_send, then the next one once it is answered`, () => {
  expect(oldestPendingCreatedAt(store.db)).toBe(at(3, 10))
  store.sqlite.run("UPDATE dtes SET estado = 'aceptado' WHERE id = ?", [oldestPendingId])
  expect(oldestPendingCreatedAt(store.db)).toBe(at(3, 20))
  store.sqlite.run("UPDATE dtes SET estado = 'firmado' WHERE id = ?", [oldestPendingId])
  expect(oldestPendingCreatedAt(store.db)).toBe(at(3, 10))
})

test('the query is one seek into the pending rows index, never a walk over the firmado rows', () => {
  expect(plan()).toEqual([expect.stringMatching(/^SEARCH dtes USING (COVERING )?INDEX dtes_pending_sii\b/)])
  // Planner statistics (housekeeping runs PRAGMA optimize) must not move it back to a walk.
  store.sqlite.run('ANALYZE')
  optimizeStore(store)
  expect(plan()).toEqual([expect.stringMatching(/^SEARCH dtes USING (COVERING )?INDEX dtes_pending_sii\b/)])
})

test('with nothing pending the answer is null', () => {
  const empty = openDatabase(tempDir())
  try {
    seedEmpresa(empty.sqlite)
    insertDtes(empty.sqlite, [{ estado: 'firmado', autoSend: false, createdAt: at(1, 0) }])
    expect(oldestPendingCreatedAt(empty.db)).toBeNull()
  } finally {
    empty.close()
  }
})
