// Spec 4.2 with DESIGN §8: every CAF check, overlap, listing with filters and cursor, tenancy, key sealed at rest.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { santiagoDate } from '../../src/clock'
import { addDays } from '../../src/domain/folios'
import { makeTestCaf, testCafAuthority } from '../support/pki'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const CAF = '/api/v1/billing/caf'
let s: TestServer
let t: Tenant
let other: Tenant
const daysAgo = (n: number) => santiagoDate(new Date(Date.now() - n * 86_400_000))

beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut())
  other = await s.tenant(testRut())
})
afterAll(() => s.stop())

const post = (body: unknown, key = t.writeKey) => s.request('POST', CAF, { headers: { 'X-Api-Key': key }, body })
const cafFor = (tenant: Tenant, opts: Parameters<typeof makeTestCaf>[0] = {}) =>
  makeTestCaf({ rut: tenant.empresa.rut, razonSocial: tenant.empresa.razon_social, fechaAutorizacion: daysAgo(3), ...opts })

describe('POST /caf', () => {
  test('raw XML → 201 CAF record with Location', async () => {
    const res = await post({ tipo_dte: 33, caf_xml: cafFor(t, { folioDesde: 1, folioHasta: 50 }).xml })
    expect(res.status).toBe(201)
    expect(res.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      tipo_dte: 33,
      folio_desde: 1,
      folio_hasta: 50,
      folios_disponibles: 50,
      ambiente: 'certificacion',
      fecha_autorizacion: daysAgo(3),
      is_active: true,
      created_at: expect.any(String),
      vence_el: addDays(daysAgo(3), 180),
      anulacion: null,
      tramos: [{ desde: 1, hasta: 50, estado: 'disponible' }],
    })
    expect(res.headers.get('location')).toBe(`${CAF}/${res.json.id}`)
    const got = await s.request('GET', `${CAF}/${res.json.id}`, { headers: { 'X-Api-Key': t.readKey } })
    expect(got.json).toEqual(res.json)
  })

  test('base64 XML is accepted too', async () => {
    const res = await post({ tipo_dte: 39, caf_xml: Buffer.from(cafFor(t, { tipoDte: 39, folioDesde: 1, folioHasta: 10 }).bytes).toString('base64') })
    expect(res.status).toBe(201)
    expect(res.json.tipo_dte).toBe(39)
  })

  test('an overlapping range of the same type → 409 CAF_RANGE_EXISTS with the existing id; another type may reuse numbers', async () => {
    const first = await post({ tipo_dte: 61, caf_xml: cafFor(t, { tipoDte: 61, folioDesde: 100, folioHasta: 200 }).xml })
    const clash = await post({ tipo_dte: 61, caf_xml: cafFor(t, { tipoDte: 61, folioDesde: 200, folioHasta: 300 }).xml })
    expect(clash.status).toBe(409)
    expect(clash.json.code).toBe('CAF_RANGE_EXISTS')
    expect(clash.json.context.caf_id).toBe(first.json.id)
    expect((await post({ tipo_dte: 56, caf_xml: cafFor(t, { tipoDte: 56, folioDesde: 100, folioHasta: 200 }).xml })).status).toBe(201)
  })

  test.each([
    ['not XML', () => ({ tipo_dte: 33, caf_xml: 'hola' }), ''],
    ['another company', () => ({ tipo_dte: 33, caf_xml: cafFor(other, { folioDesde: 900, folioHasta: 901 }).xml }), 'RUT'],
    ['type differs from tipo_dte', () => ({ tipo_dte: 34, caf_xml: cafFor(t, { folioDesde: 900, folioHasta: 901 }).xml }), 'tipo'],
    ['FRMA of an unknown authority key', () => ({ tipo_dte: 33, caf_xml: cafFor(t, { folioDesde: 900, folioHasta: 901, authority: testCafAuthority() }).xml }), ''],
    ['tampered range', () => ({ tipo_dte: 33, caf_xml: cafFor(t, { folioDesde: 900, folioHasta: 901 }).xml.replace('<H>901</H>', '<H>999</H>') }), ''],
    ['expired (33 authorised 181 days ago)', () => ({ tipo_dte: 33, caf_xml: cafFor(t, { folioDesde: 900, folioHasta: 901, fechaAutorizacion: daysAgo(181) }).xml }), 'venció'],
  ])('%s → 400 INVALID_CAF and nothing stored', async (_name, body, words) => {
    const before = (await s.request('GET', `${CAF}?limit=100`, { headers: { 'X-Api-Key': t.readKey } })).json.data.length
    const res = await post(body())
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('INVALID_CAF')
    expect(res.json.message).toContain(words)
    expect((await s.request('GET', `${CAF}?limit=100`, { headers: { 'X-Api-Key': t.readKey } })).json.data.length).toBe(before)
  })

  test('a boleta CAF (39) does not expire: 400 days old is still accepted and active', async () => {
    const res = await post({ tipo_dte: 41, caf_xml: cafFor(t, { tipoDte: 41, folioDesde: 1, folioHasta: 5, fechaAutorizacion: daysAgo(400) }).xml })
    expect(res.status).toBe(201)
    expect(res.json.is_active).toBe(true)
  })

  test('shape errors are VALIDATION_ERROR with paths', async () => {
    const res = await post({ tipo_dte: 35, caf_xml: '' })
    expect(res.status).toBe(400)
    expect(res.json.details.map((d: { field: string }) => d.field).sort()).toEqual(['caf_xml', 'tipo_dte'])
  })

  test('the folio private key (RSASK) is not stored in clear', async () => {
    const caf = cafFor(t, { tipoDte: 52, folioDesde: 1, folioHasta: 3 })
    expect((await post({ tipo_dte: 52, caf_xml: caf.xml })).status).toBe(201)
    s.server.deps.store.sqlite.run('PRAGMA wal_checkpoint(TRUNCATE)')
    const raw = Buffer.from(await Bun.file(join(s.dataDir, 'timbre.db')).arrayBuffer())
    const rsask = /<RSASK>([\s\S]*?)<\/RSASK>/.exec(caf.xml)![1]!
    const body = rsask.split('\n').filter((l) => !l.startsWith('-----') && l.trim() !== '')[2]!
    expect(raw.includes(Buffer.from(body))).toBe(false)
    expect(raw.includes(caf.caf.privateKey.export({ type: 'pkcs8', format: 'der' }).subarray(20, 60))).toBe(false)
  })
})

describe('simulated CAFs against the real SII', () => {
  test('IDK 900 is refused when the SII target is the real SII', async () => {
    const real = await startTestServer({ flags: { '--sii': 'sii' } })
    try {
      const tenant = await real.tenant(testRut())
      const res = await real.request('POST', CAF, { headers: { 'X-Api-Key': tenant.writeKey }, body: { tipo_dte: 33, caf_xml: cafFor(tenant).xml } })
      expect(res.status).toBe(400)
      expect(res.json.code).toBe('INVALID_CAF')
    } finally {
      await real.stop()
    }
  })
})

describe('GET /caf', () => {
  test('filters by tipo_dte and is_active, newest first, walks pages by cursor', async () => {
    const tenant = await s.tenant(testRut())
    const ids: string[] = []
    for (let i = 0; i < 5; i++)
      ids.push((await post({ tipo_dte: 33, caf_xml: cafFor(tenant, { folioDesde: i * 10 + 1, folioHasta: i * 10 + 10 }).xml }, tenant.writeKey)).json.id)
    await post({ tipo_dte: 34, caf_xml: cafFor(tenant, { tipoDte: 34, folioDesde: 1, folioHasta: 10 }).xml }, tenant.writeKey)
    const h = { 'X-Api-Key': tenant.readKey }
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const res = await s.request('GET', `${CAF}?tipo_dte=33&limit=2${cursor ? `&cursor=${cursor}` : ''}`, { headers: h })
      expect(res.status).toBe(200)
      expect(res.json.data.length).toBeLessThanOrEqual(2)
      seen.push(...res.json.data.map((c: { id: string }) => c.id))
      cursor = res.json.next_cursor
    } while (cursor)
    expect(seen).toEqual([...ids].reverse())
    expect((await s.request('GET', `${CAF}?is_active=false`, { headers: h })).json.data).toEqual([])
    expect((await s.request('GET', `${CAF}?is_active=true&tipo_dte=34`, { headers: h })).json.data).toHaveLength(1)
    const all = await s.request('GET', CAF, { headers: h })
    expect(all.json.next_cursor).toBeNull()
    expect(all.json.data).toHaveLength(6)
  })

  test.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['cursor=garbage', 'cursor'],
    ['tipo_dte=35', 'tipo_dte'],
    ['is_active=yes', 'is_active'],
  ])('?%s → 400 on %s', async (query, field) => {
    const res = await s.request('GET', `${CAF}?${query}`, { headers: { 'X-Api-Key': t.readKey } })
    expect(res.status).toBe(400)
    expect(res.json.details[0].field).toBe(field)
  })

  test("another company's CAF is 404 and absent from its list; a malformed id is 404", async () => {
    const mine = (await post({ tipo_dte: 33, caf_xml: cafFor(t, { folioDesde: 5000, folioHasta: 5001 }).xml })).json.id
    expect((await s.request('GET', `${CAF}/${mine}`, { headers: { 'X-Api-Key': other.readKey } })).status).toBe(404)
    expect((await s.request('GET', CAF, { headers: { 'X-Api-Key': other.readKey } })).json.data).toEqual([])
    const bad = await s.request('GET', `${CAF}/no-es-uuid`, { headers: { 'X-Api-Key': t.readKey } })
    expect(bad.status).toBe(404)
    expect(bad.json.code).toBe('NOT_FOUND')
  })
})
