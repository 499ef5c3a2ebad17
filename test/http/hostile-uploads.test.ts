// Issue 12: no single request may freeze the server, whose one event loop every company, the jobs and /health share.
// Each upload below held it for seconds to hours; each is now answered within 100 ms, and nothing is stored.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import forge from 'node-forge'
import { exportPfx, makeCertificate } from '../support/pki'
import { startTestServer, testRut, type Tenant, type TestResponse, type TestServer } from '../support/server'
import { fastestOf } from '../support/timing'

const CERT = '/api/v1/billing/empresa/certificado'
const PFX = `${CERT}/pfx`
const CAF = '/api/v1/billing/caf'
const PASSWORD = 'clave secreta'
const day = 86_400_000
let s: TestServer
let t: Tenant

const identity = (keySlot: number) =>
  makeCertificate({ rut: '07880442-4', notBefore: new Date(Date.now() - 30 * day), notAfter: new Date(Date.now() + 400 * day), keySlot })

beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut())
  // A certificate is already loaded: a refused upload must leave it the active one.
  const first = await s.request('POST', PFX, { headers: { 'X-Api-Key': t.writeKey }, body: { pfx_base64: Buffer.from(exportPfx(identity(1), PASSWORD, '3des')).toString('base64'), password: PASSWORD } })
  expect(first.status).toBe(201)
})
afterAll(() => s.stop())

/** The fastest of a few identical requests (test/support/timing.ts); each refused one changes nothing. */
async function timed(send: () => Promise<TestResponse>): Promise<{ readonly res: TestResponse; readonly ms: number }> {
  const { value, ms } = await fastestOf(send)
  return { res: value, ms }
}

const certificado = async () => (await s.request('GET', CERT, { headers: { 'X-Api-Key': t.readKey } })).json
const cafCount = async () => (await s.request('GET', `${CAF}?limit=100`, { headers: { 'X-Api-Key': t.readKey } })).json.data.length

/** An OpenSSL 3 file whose MAC declares 2^31 - 1 iterations: forge used to count them (about two hours) before the password. */
function pfxWithHostileMac(): Uint8Array {
  const root = forge.asn1.fromDer(forge.util.createBuffer(Buffer.from(exportPfx(identity(2), PASSWORD, 'aes256')).toString('binary')))
  const macData = (root.value as forge.asn1.Asn1[])[2] as forge.asn1.Asn1
  const iterations = (macData.value as forge.asn1.Asn1[])[2] as forge.asn1.Asn1
  iterations.value = forge.asn1.integerToDer(2 ** 31 - 1).getBytes()
  return Buffer.from(forge.asn1.toDer(root).getBytes(), 'binary')
}

describe('POST /empresa/certificado/pfx', () => {
  test.each([
    ['multipart', (pfx: Uint8Array) => {
      const form = new FormData()
      form.append('archivo', new Blob([Buffer.from(pfx)]), 'certificado.pfx')
      form.append('password', PASSWORD)
      return s.request('POST', PFX, { headers: { 'X-Api-Key': t.writeKey }, rawBody: form })
    }],
    ['JSON', (pfx: Uint8Array) => s.request('POST', PFX, { headers: { 'X-Api-Key': t.writeKey }, body: { pfx_base64: Buffer.from(pfx).toString('base64'), password: PASSWORD } })],
  ])('%s: a PFX whose MAC asks for 2^31 - 1 iterations → 400 INVALID_CERTIFICATE within 100 ms, the certificate unchanged', async (_form, send) => {
    const before = await certificado()
    const pfx = pfxWithHostileMac()
    const { res, ms } = await timed(() => send(pfx))
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('INVALID_CERTIFICATE')
    expect(res.json.message).toContain('iteraciones')
    expect(ms).toBeLessThan(100)
    expect(await certificado()).toEqual(before)
  })

  test('pfx_base64 of 40 000 spaces, tabs and newlines then "!" → 400 INVALID_FORMAT within 100 ms, the certificate unchanged', async () => {
    const before = await certificado()
    const { res, ms } = await timed(() =>
      s.request('POST', PFX, { headers: { 'X-Api-Key': t.writeKey }, body: { pfx_base64: `${' \t\n\r'.repeat(10_000)}!`, password: PASSWORD } }),
    )
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.details).toEqual([{ field: 'pfx_base64', code: 'INVALID_FORMAT', message: 'No es base64 válido.' }])
    expect(ms).toBeLessThan(100)
    expect(await certificado()).toEqual(before)
  })

  test.each([
    ['padding, then whitespace', (b64: string) => `${b64}\n`],
    ['wrapped at 64 characters, CRLF, as PEM bodies are', (b64: string) => `${b64.replace(/.{64}/g, '$&\r\n')}\r\n`],
    ['spaces around', (b64: string) => `  ${b64}  `],
  ])('base64 with %s is still accepted', async (_name, wrap) => {
    const pfx = Buffer.from(exportPfx(identity(3), PASSWORD, '3des')).toString('base64')
    const res = await s.request('POST', PFX, { headers: { 'X-Api-Key': t.writeKey }, body: { pfx_base64: wrap(pfx), password: PASSWORD } })
    expect(res.status).toBe(201)
  })

  test.each([
    ['a = in the middle', 'AAAA=AAAA'],
    ['three =', 'AAAA==='],
    ['whitespace between the =', 'AAA= ='],
    ['a character outside base64', 'AAAA*AAA'],
  ])('base64 with %s is still refused', async (_name, pfxBase64) => {
    const res = await s.request('POST', PFX, { headers: { 'X-Api-Key': t.writeKey }, body: { pfx_base64: pfxBase64, password: PASSWORD } })
    expect(res.status).toBe(400)
    expect(res.json.details).toEqual([{ field: 'pfx_base64', code: 'INVALID_FORMAT', message: 'No es base64 válido.' }])
  })
})

describe('POST /caf', () => {
  // 60 000 characters: under caf_xml's 64 KB bound, still seconds for the old quadratic pre-scan.
  test.each([
    ['60 000 characters of unclosed <!--', '<!--'.repeat(15_000)],
    ['60 000 characters of unclosed <? after a root element', `<AUTORIZACION/>${'<?'.repeat(30_000)}`],
  ])('%s → 400 INVALID_CAF within 100 ms, nothing stored', async (_name, cafXml) => {
    const before = await cafCount()
    const { res, ms } = await timed(() => s.request('POST', CAF, { headers: { 'X-Api-Key': t.writeKey }, body: { tipo_dte: 33, caf_xml: cafXml } }))
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('INVALID_CAF')
    expect(ms).toBeLessThan(100)
    expect(await cafCount()).toBe(before)
  })

  test('a caf_xml past 64 KB (a real CAF is ~2 KB) is refused unparsed: 400 TOO_LONG at caf_xml', async () => {
    const res = await s.request('POST', CAF, { headers: { 'X-Api-Key': t.writeKey }, body: { tipo_dte: 33, caf_xml: `<AUTORIZACION>${'<!'.repeat(500_000)}</AUTORIZACION>` } })
    expect(res.status).toBe(400)
    expect(res.json.details).toEqual([expect.objectContaining({ field: 'caf_xml', code: 'TOO_LONG' })])
  })
})

describe('POST /dte', () => {
  test('1.5 million empty lines: 400 at once, at most 100 details', async () => {
    const body = `{"tipo_dte":33,"receptor":{"rut":"76086428-5","razon_social":"X"},"detalle":[${Array.from({ length: 1_500_000 }, () => '{}').join(',')}]}`
    const { res, ms } = await timed(() =>
      s.request('POST', '/api/v1/billing/dte', { headers: { 'X-Api-Key': t.writeKey, 'Idempotency-Key': crypto.randomUUID(), 'content-type': 'application/json' }, rawBody: body }),
    )
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual(expect.objectContaining({ field: 'detalle', code: 'TOO_MANY' }))
    expect(res.json.details.length).toBeLessThanOrEqual(100)
    // The body is 4.5 MB to read and parse; listing 1.5 million errors took 15 s before the cap.
    expect(ms).toBeLessThan(2_000)
  })
})
