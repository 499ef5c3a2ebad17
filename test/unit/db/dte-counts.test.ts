// The unfiltered total_count comes from a trigger-kept counter: it must equal an exact COUNT, also for rows that were
// there before the migration that added it.
import { expect, test } from 'bun:test'
import { MIGRATIONS } from '../../../src/db/migrations.gen'
import { openDatabase } from '../../../src/db/open'
import { countDtes } from '../../../src/db/dte-store'
import { tempDir } from '../../support/server'

function seed(sqlite: import('bun:sqlite').Database, empresaId: string, rut: string, n: number, from: number): void {
  sqlite.run(
    "INSERT OR IGNORE INTO empresas (id, rut, razon_social, giro, acteco, direccion, comuna, ciudad, ambiente, fecha_resolucion, numero_resolucion, created_at, updated_at) VALUES (?, ?, 'R', 'G', '[1]', 'D', 'C', 'C', 'certificacion', '2020-01-01', 0, 'x', 'x')",
    [empresaId, rut],
  )
  sqlite.run(
    "INSERT OR IGNORE INTO cafs (id, empresa_id, tipo_dte, folio_desde, folio_hasta, next_folio, fecha_autorizacion, idk, ambiente, caf_xml, private_key_sealed, created_at) VALUES (?, ?, 33, 1, 100000, 1, '2026-01-01', 900, 'certificacion', '<CAF/>', x'00', 'x')",
    [`caf-${empresaId}`, empresaId],
  )
  for (let i = 0; i < n; i++)
    sqlite.run(
      "INSERT INTO dtes (id, empresa_id, tipo_dte, folio, caf_id, estado, rut_receptor, razon_social_receptor, fecha_emision, tasa_iva, monto_total, detalle, referencias, request, xml, auto_send, metadata, created_at, updated_at) VALUES (?, ?, 33, ?, ?, 'firmado', '1-9', 'R', '2026-01-01', 19, 1, '[]', '[]', '{}', x'00', 0, '{}', 'x', 'x')",
      [Bun.randomUUIDv7(), empresaId, from + i, `caf-${empresaId}`],
    )
}

test('the counter is backfilled by its migration and kept by the trigger, per company', () => {
  const dir = tempDir()
  const before = openDatabase(dir, { migrations: MIGRATIONS.filter((m) => m.tag < '0005') })
  seed(before.sqlite, 'e1', '1-9', 7, 1)
  seed(before.sqlite, 'e2', '11111111-1', 3, 1)
  before.close()
  const store = openDatabase(dir)
  expect(countDtes(store.db, 'e1', {})).toBe(7)
  expect(countDtes(store.db, 'e2', {})).toBe(3)
  seed(store.sqlite, 'e1', '1-9', 5, 100)
  expect(countDtes(store.db, 'e1', {})).toBe(12)
  expect(countDtes(store.db, 'e1', { tipoDte: 33 })).toBe(12)
  expect(countDtes(store.db, 'e3', {})).toBe(0)
  expect(store.sqlite.query('SELECT count(*) AS n FROM dtes WHERE empresa_id = ?').get('e1')).toEqual({ n: 12 })
  store.close()
})
