// The SII's certification set for the factura de compra (46), through the real server: the 46 with total IVA retention
// (code 15 at 19 %), a credit note 61 of it, and a debit note 56 that annuls that 61 and carries the 46's retention
// (docs/sii-protocol.md §2.4 "Factura de compra", §2.5; DESIGN §12 "SII certification"). A note keeps the retention codes
// when its references lead to a 46, directly or through the company's own notes; a note not in the store is accepted.
import { describe, expect, test } from 'bun:test'
import type { EmitirDte, Linea, Referencia, TipoDte } from '../../src/domain/emision'
import { dteCount, facturaSimple, issue, storedXml, useIssuer } from '../support/issuance'
import type { Tenant, TestServer } from '../support/server'
import { schemaErrors, xmlsec1Verifies } from '../support/xml-tools'

const DTE = '/api/v1/billing/dte'
let s: TestServer
let t: Tenant

useIssuer((server, tenant) => {
  s = server
  t = tenant
}, { folios: 50, tipos: [33, 46, 56, 61] })

const get = async (id: string) => (await s.request('GET', `${DTE}/${id}`, { headers: { 'X-Api-Key': t.readKey } })).json
const xmlOf = (id: string) => storedXml(s, t, id)
const count = () => dteCount(s, t)

/** Lines bought from a seller without IVA standing: every one retains the whole IVA (code 15). */
const retenidas = (...precios: number[]): Linea[] => precios.map((precio, i) => ({ nombre: `Chatarra lote ${i + 1}`, cantidad: 1, precio, cod_imp_adic: 15 }))
const RETENCION_15 = [{ tipo_imp: 15, tasa_imp: 19 }]

function ref(doc: { tipo_dte: TipoDte; folio: number; fecha_emision: string }, codigo_ref: 1 | 2 | 3, razon_ref: string): Referencia {
  return { tipo_doc_ref: doc.tipo_dte, folio_ref: doc.folio, fecha_ref: doc.fecha_emision, codigo_ref, razon_ref }
}

function nota(tipo_dte: 56 | 61, referencias: Referencia[], detalle: Linea[], extra: Partial<EmitirDte> = {}): EmitirDte {
  return { ...facturaSimple(), tipo_dte, referencias, detalle, ...extra }
}

/** The stored record (spec 2.2), as far as these tests read it. */
interface DteRecord {
  readonly tipo_dte: TipoDte
  readonly folio: number
  readonly fecha_emision: string
  readonly [field: string]: unknown
}

/** Issues, expects 201, and checks the stored XML against the XSD and its signature with xmlsec1. */
async function issued(body: EmitirDte): Promise<{ record: DteRecord; xml: string }> {
  const res = await issue(s, t, body)
  expect(res.status).toBe(201)
  const bytes = await xmlOf(res.json.id)
  expect(schemaErrors(bytes, body.tipo_dte)).toEqual([])
  expect(xmlsec1Verifies(bytes, body.tipo_dte)).toBe(true)
  return { record: await get(res.json.id), xml: Buffer.from(bytes).toString('latin1') }
}

const impuesto = (xml: string) => /<ImptoReten>([\s\S]*?)<\/ImptoReten>/.exec(xml)?.[1]

describe('the certification set of the factura de compra', () => {
  test('46 with IVA retention → 61 of the 46 → 56 annulling the 61 with the retention: 201 each, totals of code 15 at 19 %', async () => {
    const compra = await issued({ ...facturaSimple(), tipo_dte: 46, detalle: retenidas(60000, 40000), impuestos_retenciones: RETENCION_15 })
    // IVA retained in full: MntTotal = MntNeto (docs/sii-protocol.md §2.4, LibreDTE vector 046_003).
    expect(compra.record).toMatchObject({ tipo_dte: 46, monto_neto: 100000, iva: 19000, monto_total: 100000 })
    expect(impuesto(compra.xml)).toBe('<TipoImp>15</TipoImp><TasaImp>19</TasaImp><MontoImp>19000</MontoImp>')

    const credito = await issued(nota(61, [ref(compra.record, 3, 'Devolución de un lote')], retenidas(40000), { impuestos_retenciones: RETENCION_15 }))
    expect(credito.record).toMatchObject({ tipo_dte: 61, monto_neto: 40000, iva: 7600, monto_total: 40000 })
    expect(impuesto(credito.xml)).toBe('<TipoImp>15</TipoImp><TasaImp>19</TasaImp><MontoImp>7600</MontoImp>')

    const debito = await issued(nota(56, [ref(credito.record, 1, 'Anula nota de crédito')], retenidas(40000), { impuestos_retenciones: RETENCION_15 }))
    expect(debito.record).toMatchObject({ tipo_dte: 56, monto_neto: 40000, iva: 7600, monto_total: 40000 })
    expect(impuesto(debito.xml)).toBe('<TipoImp>15</TipoImp><TasaImp>19</TasaImp><MontoImp>7600</MontoImp>')
    expect(debito.xml).toContain(`<TpoDocRef>61</TpoDocRef><FolioRef>${credito.record.folio}</FolioRef>`)
    expect(debito.xml).not.toContain('<IVANoRet>')

    // And further down the chain: a 61 annulling that 56 still leads to the 46.
    const otra = await issued(nota(61, [ref(debito.record, 1, 'Anula nota de débito')], retenidas(40000), { impuestos_retenciones: RETENCION_15 }))
    expect(otra.record).toMatchObject({ monto_neto: 40000, iva: 7600, monto_total: 40000 })
  })
})

describe('notes whose chain does not lead to a 46', () => {
  test('a 56 with retention over a 61 of a 33 in the store → 400 NOT_ALLOWED at the retention codes, no folio used', async () => {
    const factura = await issued(facturaSimple())
    const credito = await issued(nota(61, [ref(factura.record, 3, 'Descuento')], [{ nombre: 'Descuento', cantidad: 1, precio: 1000 }]))
    const before = await count()
    const res = await issue(s, t, nota(56, [ref(credito.record, 1, 'Anula nota de crédito')], retenidas(1000), { impuestos_retenciones: RETENCION_15 }))
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual(
      ['detalle.0.cod_imp_adic:NOT_ALLOWED', 'impuestos_retenciones.0.tipo_imp:NOT_ALLOWED'],
    )
    expect(await count()).toBe(before)
    // The same 56 without the retention is an ordinary debit note.
    const sinRetencion = await issue(s, t, nota(56, [ref(credito.record, 1, 'Anula nota de crédito')], [{ nombre: 'Anula', cantidad: 1, precio: 1000 }]))
    expect(sinRetencion.status).toBe(201)
  })

  test('a 56 with retention over a 61 folio not in the store → 201 (the note may lead to a 46: nothing says otherwise)', async () => {
    const ajena = { tipo_dte: 61 as const, folio: 49, fecha_emision: '2025-01-15' }
    const debito = await issued(nota(56, [ref(ajena, 1, 'Anula nota de crédito')], retenidas(10000), { impuestos_retenciones: RETENCION_15 }))
    expect(debito.record).toMatchObject({ monto_neto: 10000, iva: 1900, monto_total: 10000 })
  })

  test('a 61 with retention over a 33 directly is still refused at the door', async () => {
    const res = await issue(s, t, nota(61, [{ tipo_doc_ref: 33, folio_ref: 1, fecha_ref: '2025-01-15', codigo_ref: 3, razon_ref: 'x' }], retenidas(1000)))
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual(expect.objectContaining({ field: 'detalle.0.cod_imp_adic', code: 'NOT_ALLOWED' }))
  })
})
