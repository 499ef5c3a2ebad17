// Issue 27 "Mail": the request's receptor.email is written as CorreoRecep in the signed DTE, where DTE_v10.xsd puts it
// (after GiroRecep/Contacto, before DirRecep), and every referee still agrees (xmllint, xmlsec1, the TED). An address
// longer than SiiTypes MailType's 80 characters is left out of the XML, not cut, and still kept in the request for the
// mail (docs/decisions/intercambio.md "CorreoRecep").
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { childElements, findElement, parseXml } from '../../src/xml/latin1'
import { verifyTed } from '../../src/xml/ted'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'
import { schemaErrors, xmlsec1Verifies } from '../support/xml-tools'

let s: TestServer
let t: Tenant

beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut())
  await provisionIssuer(s, t, { tipos: [33, 39], folios: 20 })
})
afterAll(() => s.stop())

const receptor = (email: string) => ({ rut: '76086428-5', razon_social: 'Comercial Ñandú SpA', giro: 'Comercio', direccion: 'Av. Matta 1020', comuna: 'Santiago', ciudad: 'Santiago', email })

async function xmlOf(id: string): Promise<Uint8Array> {
  return new Uint8Array(await (await fetch(`${s.url}/api/v1/billing/dte/${id}/xml`, { headers: { 'X-Api-Key': t.readKey } })).arrayBuffer())
}

/** The Receptor's child element names in document order, and the text of CorreoRecep (null when absent). */
function receptorOf(bytes: Uint8Array): { order: string[]; correo: string | null } {
  const doc = parseXml(Buffer.from(bytes).toString('latin1'))
  const rec = findElement(doc.documentElement as unknown as Element, 'Receptor')!
  const kids = childElements(rec)
  const correo = kids.find((e) => e.localName === 'CorreoRecep')
  return { order: kids.map((e) => e.localName), correo: correo ? (correo.textContent ?? '') : null }
}

test('receptor.email → CorreoRecep between GiroRecep and DirRecep; the XSD validates it and the signature verifies', async () => {
  const res = await issue(s, t, facturaSimple({ receptor: receptor('dte.intercambio@comercial-nandu.cl') as never }))
  expect(res.status).toBe(201)
  const bytes = await xmlOf(res.json.id)
  expect(receptorOf(bytes)).toEqual({
    order: ['RUTRecep', 'RznSocRecep', 'GiroRecep', 'CorreoRecep', 'DirRecep', 'CmnaRecep', 'CiudadRecep'],
    correo: 'dte.intercambio@comercial-nandu.cl',
  })
  expect(schemaErrors(bytes, 33)).toEqual([])
  expect(xmlsec1Verifies(bytes, 33)).toBe(true)
  expect(verifyTed(Buffer.from(bytes).toString('latin1'))).toBe(true)
})

test('exactly 80 characters is written; 81 is left out of the XML (never cut) and kept in the request for the mail', async () => {
  const domain = '@receptor.cl'
  const at80 = `${'a'.repeat(80 - domain.length)}${domain}`
  const at81 = `b${at80}`
  expect([at80.length, at81.length]).toEqual([80, 81])
  const fits = await issue(s, t, facturaSimple({ receptor: receptor(at80) as never }))
  expect(fits.status).toBe(201)
  const fitsXml = await xmlOf(fits.json.id)
  expect(receptorOf(fitsXml).correo).toBe(at80)
  expect(schemaErrors(fitsXml, 33)).toEqual([])

  const long = await issue(s, t, facturaSimple({ receptor: receptor(at81) as never }))
  expect(long.status).toBe(201)
  const longXml = await xmlOf(long.json.id)
  expect(receptorOf(longXml)).toEqual({ order: ['RUTRecep', 'RznSocRecep', 'GiroRecep', 'DirRecep', 'CmnaRecep', 'CiudadRecep'], correo: null })
  expect(schemaErrors(longXml, 33)).toEqual([])
  expect(xmlsec1Verifies(longXml, 33)).toBe(true)
  const stored = s.server.deps.store.sqlite.query('SELECT request FROM dtes WHERE id = ?').get(long.json.id) as { request: string }
  expect(JSON.parse(stored.request).receptor.email).toBe(at81)
})

test('a boleta (EnvioBOLETA_v11.xsd has no CorreoRecep) leaves it out and still validates', async () => {
  const body = facturaSimple({ tipo_dte: 39, receptor: { rut: '66666666-6', razon_social: 'Consumidor final', email: 'cliente@correo.cl' } as never })
  const res = await issue(s, t, body)
  expect(res.status).toBe(201)
  const bytes = await xmlOf(res.json.id)
  expect(receptorOf(bytes).correo).toBeNull()
  expect(schemaErrors(bytes, 39)).toEqual([])
  expect(xmlsec1Verifies(bytes, 39)).toBe(true)
})
