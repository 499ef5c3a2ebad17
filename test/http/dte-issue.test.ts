// Spec 4.1 emitirDTE / 4.8 with DESIGN §6, §11, §12 against the real server: every type stamped and signed, every error
// with nothing changed, idempotency, concurrency.
import { describe, expect, test } from 'bun:test'
import type { TipoDte } from '../../src/domain/emision'
import { verifyTed } from '../../src/xml/ted'
import { facturaSimple, issue, provisionIssuer, uploadCaf, uploadCertificate, useIssuer } from '../support/issuance'
import { fixtureOfEachType } from '../support/fixtures'
import { type Tenant, testRut, type TestServer } from '../support/server'
import { schemaErrors, xmlsec1Verifies } from '../support/xml-tools'

const DTE = '/api/v1/billing/dte'
let s: TestServer
let t: Tenant

useIssuer((server, tenant) => {
  s = server
  t = tenant
}, { folios: 200 })

const count = async (tenant = t) => (await s.request('GET', DTE, { headers: { 'X-Api-Key': tenant.readKey } })).json.total_count as number
const xmlOf = async (id: string, tenant = t) => {
  const res = await fetch(`${s.url}${DTE}/${id}/xml`, { headers: { 'X-Api-Key': tenant.readKey } })
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) }
}

describe('every type of spec 2.1', () => {
  // The first fixture of each type (test/fixtures/dte): realistic documents, dated today by the server.
  for (const { name, request } of fixtureOfEachType())
    test(`${name}: 201, stored XML valid against the XSD, signature verifies with xmlsec1, TED verifies`, async () => {
      const res = await issue(s, t, request)
      expect(res.status).toBe(201)
      expect(Object.keys(res.json).sort()).toEqual(['created_at', 'estado', 'folio', 'id', 'monto_total', 'tipo_dte'])
      expect(res.json).toMatchObject({ tipo_dte: request.tipo_dte, estado: 'firmado' })
      expect(res.headers.get('location')).toBe(`${DTE}/${res.json.id}`)
      const { res: xmlRes, bytes } = await xmlOf(res.json.id)
      expect(xmlRes.headers.get('content-type')).toBe('application/xml; charset=ISO-8859-1')
      expect(schemaErrors(bytes, request.tipo_dte as TipoDte)).toEqual([])
      expect(xmlsec1Verifies(bytes, request.tipo_dte as TipoDte)).toBe(true)
      const text = Buffer.from(bytes).toString('latin1')
      expect(verifyTed(text)).toBe(true)
      expect(text).toContain(`<Folio>${res.json.folio}</Folio>`)
      // One byte changed: the referees notice.
      const tampered = Buffer.from(text.replace(`<Folio>${res.json.folio}</Folio>`, `<Folio>${res.json.folio + 1}</Folio>`), 'latin1')
      expect(xmlsec1Verifies(tampered, request.tipo_dte as TipoDte)).toBe(false)
    })
})

describe('the stored record', () => {
  test('GET /dte/{id} is the full record of spec 2.2; xml_documento only with include_xml=true, equal to the stored bytes', async () => {
    const body = facturaSimple({ metadata: { pedido: 'A-1001', sucursal: 3 }, auto_send: false })
    const created = await issue(s, t, body)
    const got = await s.request('GET', `${DTE}/${created.json.id}`, { headers: { 'X-Api-Key': t.readKey } })
    expect(got.status).toBe(200)
    expect(got.json).toMatchObject({
      id: created.json.id,
      tipo_dte: 33,
      folio: created.json.folio,
      estado: 'firmado',
      rut_receptor: '76086428-5',
      razon_social_receptor: 'Ferretería y Construcción Ñuble Limitada',
      monto_neto: 31452,
      monto_exento: null,
      tasa_iva: 19,
      iva: 5976,
      monto_total: 37428,
      referencias: [],
      metadata: { pedido: 'A-1001', sucursal: 3 },
      auto_send: false,
      sii_status: null,
      tracking: { envio_id: null, track_id: null, estado_envio: null, codigo_sii: null, glosa_sii: null, informados: 0, aceptados: 0, rechazados: 0, reparos: 0, intentos: 0 },
    })
    expect(got.json.detalle).toEqual(body.detalle)
    expect(got.json.fecha_emision).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(got.json.xml_documento).toBeUndefined()
    const withXml = await s.request('GET', `${DTE}/${created.json.id}?include_xml=true`, { headers: { 'X-Api-Key': t.readKey } })
    const { bytes } = await xmlOf(created.json.id)
    expect(withXml.json.xml_documento).toBe(Buffer.from(bytes).toString('latin1'))
    // JSON keeps the text as sent; the XML writes the transliterated one (DESIGN §12 "Text").
    expect(got.json.detalle[1].nombre).toBe('Clavos 2½" (caja 1 kg)')
    expect(withXml.json.xml_documento).toContain('Av. Libertador Bernardo O\'Higgins 1234')
  })
})

describe('errors change nothing', () => {
  test('validation → 400 with every failing field, no folio used', async () => {
    const before = await count()
    const res = await issue(s, t, { ...facturaSimple(), receptor: { rut: '76086428-4', razon_social: '' }, detalle: [] })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    const fields = res.json.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`)
    expect(fields).toEqual(expect.arrayContaining(['detalle:TOO_FEW']))
    expect(await count()).toBe(before)
    const next = await issue(s, t, facturaSimple())
    const last = (await s.request('GET', `${DTE}?tipo_dte=33&limit=2`, { headers: { 'X-Api-Key': t.readKey } })).json.items[1]
    expect(next.json.folio).toBe(last.folio + 1)
  })

  test('receptor.rut with a wrong check digit → INVALID_RUT at receptor.rut', async () => {
    const res = await issue(s, t, facturaSimple({ receptor: { rut: '76086428-4', razon_social: 'X' } }))
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual(expect.objectContaining({ field: 'receptor.rut', code: 'INVALID_RUT' }))
  })

  test.each([
    [{}, 'REQUIRED'],
    [{ 'Idempotency-Key': 'abc' }, 'INVALID_FORMAT'],
  ])('Idempotency-Key %j → 400 at field Idempotency-Key (%s)', async (headers, code) => {
    const res = await s.request('POST', DTE, { headers: { 'X-Api-Key': t.writeKey, ...headers }, body: facturaSimple() })
    expect(res.status).toBe(400)
    expect(res.json.details).toEqual([expect.objectContaining({ field: 'Idempotency-Key', code })])
  })

  test('no certificate → 422 CERTIFICATE_REQUIRED; no CAF → 422 NO_FOLIOS_AVAILABLE; nothing stored either time', async () => {
    const fresh = await s.tenant(testRut())
    await uploadCaf(s, fresh, 33, 1, 5)
    const noCert = await issue(s, fresh, facturaSimple())
    expect(noCert.status).toBe(422)
    expect(noCert.json.code).toBe('CERTIFICATE_REQUIRED')
    await uploadCertificate(s, fresh)
    const noCaf = await issue(s, fresh, facturaSimple({ tipo_dte: 34, detalle: [{ nombre: 'Asesoría', cantidad: 1, precio: 1000 }] }))
    expect(noCaf.status).toBe(422)
    expect(noCaf.json.code).toBe('NO_FOLIOS_AVAILABLE')
    expect(await count(fresh)).toBe(0)
    const caf = await s.request('GET', '/api/v1/billing/caf?tipo_dte=33', { headers: { 'X-Api-Key': fresh.readKey } })
    expect(caf.json.data[0].folios_disponibles).toBe(5)
  })

  test('a CAF used up → NO_FOLIOS_AVAILABLE, is_active false, folios_disponibles 0', async () => {
    const fresh = await s.tenant(testRut())
    await uploadCertificate(s, fresh)
    await uploadCaf(s, fresh, 33, 10, 11)
    expect((await issue(s, fresh, facturaSimple())).json.folio).toBe(10)
    expect((await issue(s, fresh, facturaSimple())).json.folio).toBe(11)
    expect((await issue(s, fresh, facturaSimple())).json.code).toBe('NO_FOLIOS_AVAILABLE')
    const caf = (await s.request('GET', '/api/v1/billing/caf', { headers: { 'X-Api-Key': fresh.readKey } })).json.data[0]
    expect(caf).toMatchObject({ folios_disponibles: 0, is_active: false })
  })

  test('folios come from the oldest active CAF first, then the next one', async () => {
    const fresh = await s.tenant(testRut())
    await uploadCertificate(s, fresh)
    await uploadCaf(s, fresh, 33, 500, 500)
    await uploadCaf(s, fresh, 33, 100, 101)
    const folios = []
    for (let i = 0; i < 3; i++) folios.push((await issue(s, fresh, facturaSimple())).json.folio)
    expect(folios).toEqual([500, 100, 101])
  })
})

describe('idempotency (spec 4.8, DESIGN §12)', () => {
  test('a retry with the same key replays status, body and Location with X-Idempotency-Replay; key order does not matter', async () => {
    const key = crypto.randomUUID()
    const first = await issue(s, t, facturaSimple(), key)
    const { detalle, receptor, tipo_dte } = facturaSimple()
    const again = await issue(s, t, { detalle, tipo_dte, receptor }, key)
    expect(again.status).toBe(201)
    expect(again.json).toEqual(first.json)
    expect(again.headers.get('location')).toBe(first.headers.get('location'))
    expect(again.headers.get('x-idempotency-replay')).toBe('true')
    expect(first.headers.get('x-idempotency-replay')).toBeNull()
  })

  test('the same key with another body → 422 IDEMPOTENCY_BODY_MISMATCH, nothing issued', async () => {
    const key = crypto.randomUUID()
    await issue(s, t, facturaSimple(), key)
    const before = await count()
    const res = await issue(s, t, facturaSimple({ metadata: { otro: true } }), key)
    expect(res.status).toBe(422)
    expect(res.json.code).toBe('IDEMPOTENCY_BODY_MISMATCH')
    expect(await count()).toBe(before)
  })

  test('a failed request is not stored: the same key may be retried with a corrected body', async () => {
    const key = crypto.randomUUID()
    expect((await issue(s, t, facturaSimple({ detalle: [] }), key)).status).toBe(400)
    expect((await issue(s, t, facturaSimple(), key)).status).toBe(201)
  })

  test('keys are scoped per company', async () => {
    const other = await s.tenant(testRut())
    await provisionIssuer(s, other, { tipos: [33], folios: 10 })
    const key = crypto.randomUUID()
    const a = await issue(s, t, facturaSimple(), key)
    const b = await issue(s, other, facturaSimple(), key)
    expect(b.status).toBe(201)
    expect(b.json.id).not.toBe(a.json.id)
    expect(b.headers.get('x-idempotency-replay')).toBeNull()
  })

  test('a burst of 20 concurrent requests with one key makes one document', async () => {
    const key = crypto.randomUUID()
    const before = await count()
    const answers = await Promise.all(Array.from({ length: 20 }, () => issue(s, t, facturaSimple(), key)))
    for (const a of answers) expect([201, 409]).toContain(a.status)
    const created = answers.filter((a) => a.status === 201)
    expect(new Set(created.map((a) => a.json.id)).size).toBe(1)
    expect(created.filter((a) => a.headers.get('x-idempotency-replay') === null)).toHaveLength(1)
    expect(await count()).toBe(before + 1)
  })
})

describe('concurrency', () => {
  test('64 concurrent issuances with distinct keys get 64 distinct, contiguous folios', async () => {
    const fresh = await s.tenant(testRut())
    await uploadCertificate(s, fresh)
    await uploadCaf(s, fresh, 39, 1, 100)
    const boleta = { tipo_dte: 39, receptor: { rut: '66666666-6', razon_social: 'Consumidor final' }, detalle: [{ nombre: 'Café americano', cantidad: 1, precio: 2500 }] }
    const answers = await Promise.all(Array.from({ length: 64 }, () => issue(s, fresh, boleta)))
    expect(answers.every((a) => a.status === 201)).toBe(true)
    const folios = answers.map((a) => a.json.folio as number).sort((x, y) => x - y)
    expect(folios).toEqual(Array.from({ length: 64 }, (_, i) => i + 1))
  }, 30_000)
})
