// insertDte answers the row without reading it back (issue 17): what it returns must be exactly what a read returns,
// defaults, nulls, JSON columns, the boolean and the XML blob included.
import { expect, test } from 'bun:test'
import { findDte, insertDte } from '../../../src/db/dte-store'
import { openDatabase } from '../../../src/db/open'
import { tempDir } from '../../support/server'

test('the row insertDte returns is the row stored', () => {
  const store = openDatabase(tempDir('timbre-insert-'))
  store.sqlite.run(
    "INSERT INTO empresas (id, rut, razon_social, giro, acteco, direccion, comuna, ciudad, ambiente, fecha_resolucion, numero_resolucion, created_at, updated_at) VALUES ('e1', '1-9', 'R', 'G', '[1]', 'D', 'C', 'C', 'certificacion', '2020-01-01', 0, 'x', 'x')",
  )
  store.sqlite.run(
    "INSERT INTO cafs (id, empresa_id, tipo_dte, folio_desde, folio_hasta, next_folio, fecha_autorizacion, idk, ambiente, caf_xml, private_key_sealed, created_at) VALUES ('c1', 'e1', 110, 1, 10, 1, '2026-01-01', 900, 'certificacion', '<CAF/>', x'00', 'x')",
  )
  const at = '2026-11-24T10:00:00.000Z'
  const rows = [
    { auto_send: true, moneda: 'DOLAR USA', monto_total_moneda: '1234.5678', monto_neto: null, next_attempt_at: at, metadata: { pedido: 'Ñ-1', n: 2 } },
    { auto_send: false, moneda: null, monto_total_moneda: null, monto_neto: 1000, next_attempt_at: null, metadata: {} },
  ].map((v, i) =>
    insertDte(store.db, {
      id: Bun.randomUUIDv7(),
      empresa_id: 'e1',
      tipo_dte: 110,
      folio: i + 1,
      caf_id: 'c1',
      estado: 'firmado',
      rut_receptor: '76086428-5',
      razon_social_receptor: 'Ñandú & Cía.',
      fecha_emision: '2026-11-24',
      monto_exento: 5,
      tasa_iva: 0,
      iva: null,
      monto_total: 987654321,
      detalle: [{ nombre: 'Café "molido"', cantidad: 1.5, precio: 12.3456 }],
      referencias: [],
      request: { tipo_dte: 110, anidado: { a: [1, 2, { b: null }] } },
      xml: Buffer.from([0x3c, 0xd1, 0xe9, 0x00, 0xff, 0x3e]),
      created_at: at,
      updated_at: at,
      ...v,
    }),
  )
  for (const row of rows) {
    const read = findDte(store.db, 'e1', row.id)!
    expect({ ...row, xml: Buffer.from(row.xml).toString('hex') }).toEqual({ ...read, xml: Buffer.from(read.xml).toString('hex') })
    expect(read.informados).toBe(0)
    expect(read.sii_status).toBeNull()
  }
  store.close()
})
