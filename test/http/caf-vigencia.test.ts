// DESIGN §8: a CAF of 33, 43, 46, 56 or 61 stops counting 180 days after its authorisation; a CAF's IDK environment
// must be the company's.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { santiagoDate } from '../../src/clock'
import { updateEmpresaAdmin } from '../../src/services/empresas'
import { testClock } from '../support/clock'
import { facturaSimple, issue, uploadCertificate } from '../support/issuance'
import { makeTestCaf } from '../support/pki'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const clock = testClock()
let s: TestServer
let t: Tenant
const DAY = 86_400_000

beforeAll(async () => {
  s = await startTestServer({ clock })
  t = await s.tenant(testRut())
  await uploadCertificate(s, t)
})
afterAll(() => s.stop())

test('a 33 CAF authorised 179 days ago issues today and stops on day 181, freeing no folio', async () => {
  const caf = makeTestCaf({ rut: t.empresa.rut, razonSocial: t.empresa.razon_social, tipoDte: 33, folioDesde: 1, folioHasta: 50, fechaAutorizacion: santiagoDate(new Date(Date.now() - 179 * DAY)) })
  const up = await s.request('POST', '/api/v1/billing/caf', { headers: { 'X-Api-Key': t.writeKey }, body: { tipo_dte: 33, caf_xml: caf.xml } })
  expect(up.json.is_active).toBe(true)
  expect((await issue(s, t, facturaSimple())).status).toBe(201)
  clock.offsetMs = 2 * DAY
  const later = await s.request('GET', `/api/v1/billing/caf/${up.json.id}`, { headers: { 'X-Api-Key': t.readKey } })
  expect(later.json).toMatchObject({ is_active: false, folios_disponibles: 49 })
  expect((await s.request('GET', '/api/v1/billing/caf?is_active=true', { headers: { 'X-Api-Key': t.readKey } })).json.data).toEqual([])
  const res = await issue(s, t, facturaSimple())
  expect(res.status).toBe(422)
  expect(res.json.code).toBe('NO_FOLIOS_AVAILABLE')
  clock.offsetMs = 0
})

test('a certificación CAF (IDK 900) is refused for a company in producción', async () => {
  const prod = await s.tenant(testRut())
  updateEmpresaAdmin(s.server.deps, { ref: prod.empresa.id, cambios: { ambiente: 'produccion' } })
  const caf = makeTestCaf({ rut: prod.empresa.rut, razonSocial: prod.empresa.razon_social, tipoDte: 33, folioDesde: 1, folioHasta: 5, fechaAutorizacion: santiagoDate(new Date()) })
  const res = await s.request('POST', '/api/v1/billing/caf', { headers: { 'X-Api-Key': prod.writeKey }, body: { tipo_dte: 33, caf_xml: caf.xml } })
  expect(res.status).toBe(400)
  expect(res.json.code).toBe('INVALID_CAF')
  expect(res.json.message).toContain('produccion')
})
