// Issue 12 item 2 (DESIGN §5): `details` lists every failing field at once, the schema's and the rules' together,
// and such a request changes nothing.
import { describe, expect, test } from 'bun:test'
import { dteCount, facturaSimple, issue, useIssuer } from '../support/issuance'
import type { Tenant, TestServer } from '../support/server'

let s: TestServer
let t: Tenant

useIssuer((server, tenant) => {
  s = server
  t = tenant
}, { folios: 20, tipos: [33, 61] })

const fieldsOf = (details: Array<{ field: string; code: string }>) => details.map((d) => `${d.field} ${d.code}`).sort()
const count = () => dteCount(s, t)

describe('schema and rule errors in one answer', () => {
  test("a receptor RUT with a wrong check digit beside a line with cantidad 0 and a name of 201 characters: all three", async () => {
    const base = facturaSimple()
    const body = {
      ...base,
      receptor: { ...base.receptor, rut: '76086428-4' },
      detalle: [{ ...base.detalle[0]!, cantidad: 0 }, { ...base.detalle[0]!, nombre: 'x'.repeat(201) }],
    }
    const before = await count()
    const res = await issue(s, t, body)
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(fieldsOf(res.json.details)).toEqual(['detalle.0.cantidad OUT_OF_RANGE', 'detalle.1.nombre TOO_LONG', 'receptor.rut INVALID_RUT'])
    expect(await count()).toBe(before)
  })

  test('rules about other fields still run when whole parts are missing or of the wrong type', async () => {
    const base = facturaSimple()
    // tipo_dte unknown, detalle not a list: the RUT rule and the date rule can still judge their fields.
    const res = await issue(s, t, { ...base, tipo_dte: 35, detalle: 'nada', receptor: { ...base.receptor, rut: '1-1' }, fecha_emision: '2024-02-30' })
    expect(res.status).toBe(400)
    expect(fieldsOf(res.json.details)).toEqual(['detalle INVALID_TYPE', 'fecha_emision INVALID_FORMAT', 'receptor.rut INVALID_RUT', 'tipo_dte INVALID_VALUE'])
  })

  test('a credit note without referencias and with an unknown field on a line: both', async () => {
    const base = facturaSimple()
    const res = await issue(s, t, { ...base, tipo_dte: 61, detalle: [{ ...base.detalle[0]!, color: 'rojo' }] })
    expect(res.status).toBe(400)
    expect(fieldsOf(res.json.details)).toEqual(['detalle.0.color NOT_ALLOWED', 'referencias REQUIRED'])
  })

  test('a rule never repeats or contradicts the schema at the same field', async () => {
    const base = facturaSimple()
    // descuento_pct 150 is out of the schema's range; the rule about line discounts must not add a second verdict.
    const res = await issue(s, t, { ...base, detalle: [{ ...base.detalle[0]!, descuento_pct: 150 }] })
    expect(res.status).toBe(400)
    expect(res.json.details).toEqual([{ field: 'detalle.0.descuento_pct', code: 'OUT_OF_RANGE', message: expect.any(String) }])
  })
})
