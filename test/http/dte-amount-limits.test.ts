// Amounts past what the SII's XSD types take (MontoType and MntImpType: 18 digits; Timbre keeps 15 so every amount is
// an exact JSON number, emision-rules MONTO_MAX) are refused before a folio is taken: a line whose DescuentoMonto would
// be (10^12 − 1)² used to be signed as 9.99999999998e+23, schema-invalid, its folio lost. The largest amounts accepted
// are issued, validate against DTE_v10.xsd and verify with xmlsec1.
import { describe, expect, test } from 'bun:test'
import type { EmitirDte, TipoDte } from '../../src/domain/emision'
import { buildDteXml } from '../../src/xml/dte-xml'
import { dteCount, facturaSimple, issue, storedXml, useIssuer } from '../support/issuance'
import type { Tenant, TestServer } from '../support/server'
import { schemaErrors, xmlsec1Verifies } from '../support/xml-tools'

const DTE = '/api/v1/billing/dte'
let s: TestServer
let t: Tenant

useIssuer((server, tenant) => {
  s = server
  t = tenant
}, { folios: 20, tipos: [33, 34] })

const count = () => dteCount(s, t)
const xmlOf = (id: string) => storedXml(s, t, id)

/** The issue: 12-digit cantidad and precio, 100 % off. MontoItem 0, DescuentoMonto (10^12 − 1)². */
const enorme = (): EmitirDte => facturaSimple({ detalle: [{ nombre: 'Enorme', cantidad: 999_999_999_999, precio: 999_999_999_999, descuento_pct: 100 }] })

describe('a line past the limit', () => {
  test('→ 400 OUT_OF_RANGE at detalle.0.cantidad, and the next valid 33 gets the folio the failed one would have had', async () => {
    const res = await issue(s, t, enorme())
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.details).toEqual([{ field: 'detalle.0.cantidad', code: 'OUT_OF_RANGE', message: expect.stringContaining('999999999999999') }])
    expect(await count()).toBe(0)
    const next = await issue(s, t, facturaSimple())
    expect(next.status).toBe(201)
    expect(next.json).toMatchObject({ tipo_dte: 33, folio: 1 })
  })
})

describe('the largest amounts accepted', () => {
  test.each<[string, TipoDte, EmitirDte['detalle'], number]>([
    // 10^15 − 1 = 1271 × 786 782 061 369: the largest MontoItem, on an exempt invoice whose MntTotal is the line.
    ['34: a line of 999 999 999 999 999 computed as cantidad × precio', 34, [{ nombre: 'Represa', cantidad: 1271, precio: 786_782_061_369 }], 999_999_999_999_999],
    // round(840 336 134 453 781 × 1.19) = 999 999 999 999 999.
    ['33: the largest neto whose total with IVA fits', 33, [{ nombre: 'Puerto', monto_item: 840_336_134_453_781 }], 999_999_999_999_999],
  ])('%s → 201, exact in the record, valid XML, signature verifies', async (_, tipo_dte, detalle, total) => {
    const body = { ...facturaSimple(), tipo_dte, detalle }
    const res = await issue(s, t, body)
    expect(res.status).toBe(201)
    expect(res.json.monto_total).toBe(total)
    const bytes = await xmlOf(res.json.id)
    expect(schemaErrors(bytes, tipo_dte)).toEqual([])
    expect(xmlsec1Verifies(bytes, tipo_dte)).toBe(true)
    const xml = Buffer.from(bytes).toString('latin1')
    expect(xml).toContain(`<MntTotal>${total}</MntTotal>`)
    expect(xml).not.toMatch(/<\w+>-?[\d.]+e[+-]?\d+<\//i)
  })

  test('one peso more on the 34 line → 400 at detalle.0.cantidad', async () => {
    const res = await issue(s, t, { ...facturaSimple(), tipo_dte: 34, detalle: [{ nombre: 'Represa', cantidad: 1271, precio: 786_782_061_370 }] })
    expect(res.status).toBe(400)
    expect(res.json.details).toEqual([expect.objectContaining({ field: 'detalle.0.cantidad', code: 'OUT_OF_RANGE' })])
  })
})

test('the XML builder, handed such a line without the rules, throws rather than write a number in exponent form', () => {
  const empresa = { ...t.empresa, fecha_resolucion: '2014-08-22', numero_resolucion: 0 }
  const input = { empresa, folio: 1, request: enorme(), today: '2025-06-30', ted: '<TED version="1.0"></TED>', tmstFirma: '2025-06-30T10:00:00' }
  expect(() => buildDteXml(input)).toThrow('cannot be written to the DTE')
})
