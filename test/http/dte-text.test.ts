// DESIGN §12 "Text" through the whole pipeline: what the integrator types comes back from the signed XML as they typed
// it (or as the documented transliteration), and every referee still agrees (xmllint, xmlsec1, the TED).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { parseXml, findElement, textOf } from '../../src/xml/latin1'
import { readTed, verifyTed } from '../../src/xml/ted'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'
import { schemaErrors, xmlsec1Verifies } from '../support/xml-tools'

let s: TestServer
let t: Tenant

beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut())
  await provisionIssuer(s, t, { tipos: [33], folios: 50 })
})
afterAll(() => s.stop())

test.each([
  ['text that looks like an entity stays literal', 'Pérez &amp; Cía. &#209;uble &lt;x&gt; &A;', 'Pérez &amp; Cía. &#209;uble &lt;x&gt; &A;'],
  ['quotes, apostrophes, < > &', `O'Brien & "Hijos" <Ltda>`, `O'Brien & "Hijos" <Ltda>`],
  ['C1 controls from a wrong code page become spaces (U+0085 would split xmldom from libxml2)', 'Ferretería\u0085Central\u0096', 'Ferretería Central '],
  ['typographic characters are transliterated', 'Comercial “La Ñusta” — Sucursal…', 'Comercial "La Ñusta" - Sucursal...'],
])('%s', async (_name, typed, written) => {
  const res = await issue(s, t, facturaSimple({ receptor: { rut: '76086428-5', razon_social: typed, giro: 'Comercio', direccion: 'Calle 1', comuna: 'Santiago', ciudad: 'Santiago' }, detalle: [{ nombre: typed.slice(0, 80), cantidad: 1, precio: 1000 }] }))
  expect(res.status).toBe(201)
  const bytes = new Uint8Array(await (await fetch(`${s.url}/api/v1/billing/dte/${res.json.id}/xml`, { headers: { 'X-Api-Key': t.readKey } })).arrayBuffer())
  const text = Buffer.from(bytes).toString('latin1')
  const doc = parseXml(text)
  expect(textOf(findElement(doc.documentElement as unknown as Element, 'RznSocRecep')!)).toBe(written)
  expect(readTed(text).data.razonSocialReceptor).toBe(written.slice(0, 40))
  expect(verifyTed(text)).toBe(true)
  expect(xmlsec1Verifies(bytes, 33)).toBe(true)
  expect(schemaErrors(bytes, 33)).toEqual([])
  // The JSON keeps what was sent.
  const record = await s.request('GET', `/api/v1/billing/dte/${res.json.id}`, { headers: { 'X-Api-Key': t.readKey } })
  expect(record.json.razon_social_receptor).toBe(typed)
})
