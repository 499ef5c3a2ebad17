// Issue 13 item 4, the simulator's side (docs/decisions/receptor-rules.md): the SII rejects on arrival only what its
// schema requires of the receptor. A liquidación-factura (43) without GiroRecep fails EnvioDTE_v10.xsd, and the
// simulator ends its envelope RSC; a factura (33) without it is schema-valid, and the simulator accepts it, as the SII does.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { validateSchema } from '../../src/xml/xsd'
import { fromLatin1Bytes, toLatin1Bytes } from '../../src/xml/latin1'
import { fixtureOfEachType } from '../support/fixtures'
import { issue, provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'
import { dte, envioDte } from './simulator-helpers'

let s: TestServer
let t: Tenant

beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut())
  await provisionIssuer(s, t, { folios: 10, tipos: [43] })
})
afterAll(() => s.stop())

const withoutGiroRecep = (xml: string) => xml.replace(/<GiroRecep>[^<]*<\/GiroRecep>/, '')

describe('receptor fields the SII schema requires', () => {
  test('a 43 without GiroRecep fails the SII schema, naming the receptor', async () => {
    const request = fixtureOfEachType().find((f) => f.request.tipo_dte === 43)!.request
    const issued = await issue(s, t, { ...request, auto_send: false })
    expect(issued.status).toBe(201)
    const res = await fetch(`${s.url}/api/v1/billing/dte/${issued.json.id}/xml`, { headers: { 'X-Api-Key': t.readKey } })
    const signed = fromLatin1Bytes(new Uint8Array(await res.arrayBuffer()))
    expect(signed).toContain('<GiroRecep>')
    const caratula = { rutEmisor: t.empresa.rut }
    const intact = await validateSchema(envioDte([signed], caratula), 'EnvioDTE')
    expect(intact).toEqual({ isValid: true, errors: [] })
    const cut = await validateSchema(envioDte([withoutGiroRecep(signed)], caratula), 'EnvioDTE')
    expect(cut.isValid).toBe(false)
    expect(cut.errors.join(' ')).toMatch(/GiroRecep|DirRecep|Receptor/)
  })

  test('a 33 without GiroRecep is schema-valid: the SII does not reject it on arrival', async () => {
    const envelope = envioDte([withoutGiroRecep(dte({ folio: 77 }))])
    expect(fromLatin1Bytes(envelope)).not.toContain('<GiroRecep>')
    expect(await validateSchema(toLatin1Bytes(fromLatin1Bytes(envelope)), 'EnvioDTE')).toEqual({ isValid: true, errors: [] })
  })
})
