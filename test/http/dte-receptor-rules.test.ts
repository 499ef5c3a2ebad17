// Issue 13 item 4 against the real server: the receptor fields the SII requires of each type (SII-FMT v2.2 graded 1,
// docs/decisions/receptor-rules.md) are 400 REQUIRED at their field with the rule in the message, before any folio is
// taken; the types that do not require them issue without them; a boleta's missing RUT names 66666666-6.
import { describe, expect, test } from 'bun:test'
import type { EmitirDte, TipoDte } from '../../src/domain/emision'
import { fixtureOfEachType } from '../support/fixtures'
import { dteCount, facturaSimple, issue, useIssuer } from '../support/issuance'
import type { Tenant, TestServer } from '../support/server'

const DTE = '/api/v1/billing/dte'
let s: TestServer
let t: Tenant

useIssuer((server, tenant) => {
  s = server
  t = tenant
}, { folios: 50 })

const count = () => dteCount(s, t)

/** The first fixture of the type (test/fixtures/dte), every receptor field it has. */
function fixture(tipo: TipoDte): EmitirDte {
  return structuredClone(fixtureOfEachType().find((f) => f.request.tipo_dte === tipo)!.request)
}

/** Only the RUT and the name: what the spec requires of every receptor. */
function withBareReceptor(request: EmitirDte): EmitirDte {
  return { ...request, receptor: { rut: request.receptor.rut, razon_social: request.receptor.razon_social } }
}

describe('receptor fields the SII requires', () => {
  test('a 33 without comuna → 400 REQUIRED at receptor.comuna with the rule, no folio consumed', async () => {
    const before = await count()
    const body = facturaSimple()
    delete body.receptor.comuna
    const res = await issue(s, t, body)
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.details).toEqual([
      {
        field: 'receptor.comuna',
        code: 'REQUIRED',
        message: 'El SII exige la comuna del receptor (CmnaRecep) en la factura electrónica (tipo 33); Formato DTE v2.2.',
      },
    ])
    expect(await count()).toBe(before)
    // The CAF starts at 1 and no 33 was issued yet: the refused request took none.
    const next = await issue(s, t, facturaSimple())
    expect(next.status).toBe(201)
    expect(next.json.folio).toBe(1)
  })

  test.each<[TipoDte, string[]]>([
    [34, ['receptor.giro', 'receptor.direccion', 'receptor.comuna']],
    [43, ['receptor.giro', 'receptor.direccion', 'receptor.comuna']],
    [46, ['receptor.giro', 'receptor.direccion', 'receptor.comuna']],
    [52, ['receptor.giro', 'receptor.direccion', 'receptor.comuna']],
    [110, ['receptor.direccion', 'receptor.ciudad']],
  ])('a %i with only rut and razon_social → 400 REQUIRED at %j', async (tipo, fields) => {
    const before = await count()
    const res = await issue(s, t, withBareReceptor(fixture(tipo)))
    expect(res.status).toBe(400)
    expect(res.json.details.map((d: { field: string; code: string }) => [d.field, d.code])).toEqual(fields.map((f) => [f, 'REQUIRED']))
    for (const d of res.json.details) expect(d.message).toContain(`(tipo ${tipo}); Formato DTE v2.2.`)
    expect(await count()).toBe(before)
  })

  test('a blank giro counts as missing', async () => {
    const res = await issue(s, t, facturaSimple({ receptor: { ...facturaSimple().receptor, giro: '   ' } }))
    expect(res.status).toBe(400)
    expect(res.json.details).toEqual([expect.objectContaining({ field: 'receptor.giro', code: 'REQUIRED' })])
  })
})

describe('types that require none of them', () => {
  test('a 39 to 66666666-6 without giro or dirección → 201', async () => {
    const res = await issue(s, t, { ...fixture(39), receptor: { rut: '66666666-6', razon_social: 'Consumidor final' } })
    expect(res.status).toBe(201)
    expect(res.json.tipo_dte).toBe(39)
  })

  test.each<TipoDte>([41, 56, 61, 111, 112])('a %i with only rut and razon_social → 201', async (tipo) => {
    const res = await issue(s, t, withBareReceptor(fixture(tipo)))
    expect(res.status).toBe(201)
  })
})

describe('a boleta without the receptor RUT', () => {
  test('a blank RUT on a 39 → 400 REQUIRED at receptor.rut, naming 66666666-6 as the anonymous consumer', async () => {
    const before = await count()
    const res = await issue(s, t, { ...fixture(39), receptor: { rut: '  ', razon_social: 'Consumidor final' } })
    expect(res.status).toBe(400)
    expect(res.json.details).toEqual([expect.objectContaining({ field: 'receptor.rut', code: 'REQUIRED' })])
    expect(res.json.details[0].message).toContain('use 66666666-6, el consumidor final anónimo')
    expect(await count()).toBe(before)
  })

  test('no RUT at all on a 41 → 400 REQUIRED at receptor.rut, also naming 66666666-6', async () => {
    // The schema refuses the absent field first; the rule reaches the same verdict and its message, which says more,
    // is the one kept (http/validation.ts mergeDetails).
    const res = await issue(s, t, { ...fixture(41), receptor: { razon_social: 'Consumidor final' } })
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual(expect.objectContaining({ field: 'receptor.rut', code: 'REQUIRED', message: expect.stringContaining('66666666-6') }))
  })
})

describe('the API description says it', () => {
  test('/docs/json names, per receptor field, the types that require it (from the same table as the rule)', async () => {
    const doc = (await s.request('GET', '/docs/json')).json
    const schema = doc.components?.schemas?.EmitirDTERequest ?? doc.paths['/api/v1/billing/dte'].post.requestBody.content['application/json'].schema
    const receptor = schema.properties.receptor.properties
    expect(receptor.comuna.description).toContain('Obligatorio en los tipos 33, 34, 43, 46, 52')
    expect(receptor.ciudad.description).toContain('Obligatorio en los tipos 110')
  })
})
