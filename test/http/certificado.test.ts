// Spec 4.3 / 2.14 with DESIGN §8: PFX upload (multipart or JSON), status, replacement, errors, key sealed at rest.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { santiagoDate } from '../../src/clock'
import { exportPfx, makeCertificate } from '../support/pki'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const CERT = '/api/v1/billing/empresa/certificado'
const PFX = `${CERT}/pfx`
let s: TestServer
let t: Tenant

beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut())
})
afterAll(() => s.stop())

const day = 86_400_000
const identity = (rut: string, notAfter = new Date(Date.now() + 400 * day), keySlot = 1) =>
  makeCertificate({ rut, commonName: 'MARÍA JOSÉ PÉREZ', notBefore: new Date(Date.now() - 30 * day), notAfter, keySlot })

function multipart(pfx: Uint8Array, password: string): FormData {
  const form = new FormData()
  form.append('archivo', new Blob([Buffer.from(pfx)]), 'certificado.pfx')
  form.append('password', password)
  return form
}

describe('GET /empresa/certificado', () => {
  test('404 CERTIFICATE_NOT_FOUND while none was ever loaded', async () => {
    const fresh = await s.tenant(testRut())
    const res = await s.request('GET', CERT, { headers: { 'X-Api-Key': fresh.readKey } })
    expect(res.status).toBe(404)
    expect(res.json.code).toBe('CERTIFICATE_NOT_FOUND')
  })
})

describe('POST /empresa/certificado/pfx', () => {
  test('multipart upload → 201 status record with Location; GET returns it', async () => {
    const pfx = exportPfx(identity('07880442-4'), 'clave secreta', '3des')
    const res = await fetch(s.url + PFX, { method: 'POST', headers: { 'X-Api-Key': t.writeKey }, body: multipart(pfx, 'clave secreta') })
    expect(res.status).toBe(201)
    expect(res.headers.get('location')).toBe(CERT)
    const body = (await res.json()) as Record<string, unknown>
    expect(body).toEqual({
      has_certificado: true,
      rut_firmante: '7880442-4',
      fecha_vencimiento: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      dias_para_vencimiento: expect.any(Number),
      is_active: true,
      uploaded_at: expect.any(String),
      titular: 'MARÍA JOSÉ PÉREZ',
      // Self-signed: the issuer is the holder.
      emisor_certificado: 'MARÍA JOSÉ PÉREZ',
      fecha_inicio_vigencia: santiagoDate(new Date(Date.now() - 30 * day)),
    })
    expect(body.dias_para_vencimiento).toBeGreaterThanOrEqual(398)
    expect(body.dias_para_vencimiento).toBeLessThanOrEqual(400)
    expect((await s.request('GET', CERT, { headers: { 'X-Api-Key': t.readKey } })).json).toEqual(body)
  })

  test('issued by a CA: the record names the holder, the CA and the first day of validity', async () => {
    const tenant = await s.tenant(testRut())
    const ca = makeCertificate({ rut: null, commonName: 'E-CERTCHILE CA FIRMA ELECTRONICA SIMPLE', isCa: true, keySlot: 4 })
    const notBefore = new Date('2026-03-02T12:00:00Z')
    const leaf = makeCertificate({ rut: '07880442-4', commonName: 'JOSÉ MIGUEL ÑÚÑEZ', issuer: ca, notBefore, notAfter: new Date(Date.now() + 300 * day), keySlot: 5 })
    const res = await s.request('POST', PFX, { headers: { 'X-Api-Key': tenant.writeKey }, body: { pfx_base64: Buffer.from(exportPfx(leaf, 'x', '3des')).toString('base64'), password: 'x' } })
    expect(res.status).toBe(201)
    const expected = { titular: 'JOSÉ MIGUEL ÑÚÑEZ', emisor_certificado: 'E-CERTCHILE CA FIRMA ELECTRONICA SIMPLE', fecha_inicio_vigencia: '2026-03-02', rut_firmante: '7880442-4' }
    expect(res.json).toMatchObject(expected)
    expect((await s.request('GET', CERT, { headers: { 'X-Api-Key': tenant.readKey } })).json).toMatchObject(expected)
  })

  test('an authority whose name holds a comma and quotes is shown as written, not escaped (review)', async () => {
    const tenant = await s.tenant(testRut())
    const ca = makeCertificate({ rut: null, commonName: 'Acepta, CA "Clase 3" Ñuñoa', isCa: true, keySlot: 4 })
    const leaf = makeCertificate({ rut: '07880442-4', commonName: 'ANA PÉREZ', issuer: ca, notAfter: new Date(Date.now() + 300 * day), keySlot: 5 })
    const res = await s.request('POST', PFX, { headers: { 'X-Api-Key': tenant.writeKey }, body: { pfx_base64: Buffer.from(exportPfx(leaf, 'x', '3des')).toString('base64'), password: 'x' } })
    expect(res.status).toBe(201)
    expect(res.json.emisor_certificado).toBe('Acepta, CA "Clase 3" Ñuñoa')
  })

  test('JSON upload (OpenSSL 3 AES) replaces the active certificate; the old one is kept inactive', async () => {
    const pfx = exportPfx(identity('11111111-1', new Date(Date.now() + 100 * day), 2), 'otra', 'aes256')
    const res = await s.request('POST', PFX, { headers: { 'X-Api-Key': t.writeKey }, body: { pfx_base64: Buffer.from(pfx).toString('base64'), password: 'otra' } })
    expect(res.status).toBe(201)
    expect(res.json.rut_firmante).toBe('11111111-1')
    const rows = s.server.deps.store.sqlite
      .query('SELECT rut_firmante, is_active FROM certificados WHERE empresa_id = ? ORDER BY id')
      .all(t.empresa.id) as Array<{ rut_firmante: string; is_active: number }>
    expect(rows).toEqual([
      { rut_firmante: '7880442-4', is_active: 0 },
      { rut_firmante: '11111111-1', is_active: 1 },
    ])
  })

  test.each([
    ['wrong password', () => ({ pfx_base64: Buffer.from(exportPfx(identity('11111111-1'), 'a', '3des')).toString('base64'), password: 'b' }), 'contraseña'],
    ['not PKCS#12', () => ({ pfx_base64: Buffer.from('esto no es un pfx').toString('base64'), password: 'x' }), 'PKCS#12'],
    ['expired', () => ({ pfx_base64: Buffer.from(exportPfx(identity('11111111-1', new Date(Date.now() - day)), 'x', '3des')).toString('base64'), password: 'x' }), 'venció'],
    ['no signer RUT', () => ({ pfx_base64: Buffer.from(exportPfx(makeCertificate({ rut: null, keySlot: 3 }), 'x', '3des')).toString('base64'), password: 'x' }), 'RUT'],
  ])('%s → 400 INVALID_CERTIFICATE and nothing changes', async (_name, body, words) => {
    const before = (await s.request('GET', CERT, { headers: { 'X-Api-Key': t.readKey } })).json
    const res = await s.request('POST', PFX, { headers: { 'X-Api-Key': t.writeKey }, body: body() })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('INVALID_CERTIFICATE')
    expect(res.json.message).toContain(words)
    expect((await s.request('GET', CERT, { headers: { 'X-Api-Key': t.readKey } })).json).toEqual(before)
  })

  test('missing fields are validation errors with their paths', async () => {
    const json = await s.request('POST', PFX, { headers: { 'X-Api-Key': t.writeKey }, body: { pfx_base64: '%%%' } })
    expect(json.status).toBe(400)
    expect(json.json.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual(['password:REQUIRED', 'pfx_base64:INVALID_FORMAT'])
    const form = new FormData()
    form.append('password', 'x')
    const multi = await fetch(s.url + PFX, { method: 'POST', headers: { 'X-Api-Key': t.writeKey }, body: form })
    expect(multi.status).toBe(400)
    expect(((await multi.json()) as { details: unknown[] }).details).toEqual([expect.objectContaining({ field: 'archivo', code: 'REQUIRED' })])
  })

  test('a read-only key cannot upload', async () => {
    const res = await s.request('POST', PFX, { headers: { 'X-Api-Key': t.readKey }, body: { pfx_base64: 'AA==', password: 'x' } })
    expect(res.status).toBe(403)
  })

  test('the private key is sealed at rest: neither the PFX password nor the key appear in the database file', async () => {
    const id = identity('7880442-4', new Date(Date.now() + 50 * day), 4)
    await s.request('POST', PFX, { headers: { 'X-Api-Key': t.writeKey }, body: { pfx_base64: Buffer.from(exportPfx(id, 'pw-unica-123', '3des')).toString('base64'), password: 'pw-unica-123' } })
    s.server.deps.store.sqlite.run('PRAGMA wal_checkpoint(TRUNCATE)')
    const raw = Buffer.from(await Bun.file(join(s.dataDir, 'timbre.db')).arrayBuffer())
    const pkcs8 = id.privateKey.export({ type: 'pkcs8', format: 'der' })
    expect(raw.includes(pkcs8.subarray(30, 94))).toBe(false)
    expect(raw.includes(Buffer.from('pw-unica-123'))).toBe(false)
    const db = new Database(join(s.dataDir, 'timbre.db'), { readonly: true })
    const sealed = (db.query('SELECT private_key_sealed FROM certificados ORDER BY id DESC LIMIT 1').get() as { private_key_sealed: Uint8Array }).private_key_sealed
    db.close()
    expect(Buffer.from(sealed).includes(pkcs8.subarray(30, 94))).toBe(false)
    expect(JSON.stringify(s.logs)).not.toContain('pw-unica-123')
  })
})
