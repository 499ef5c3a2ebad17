// Spec 4.3 obtenerEmpresa / actualizarEmpresa with the SII schema's lengths (DESIGN §8, §12).
import { describe, expect, test } from 'bun:test'
import { type Tenant, type TestServer, useTenant } from '../support/server'

const EMPRESA = '/api/v1/billing/empresa'
let s: TestServer
let t: Tenant

useTenant((server, tenant) => {
  s = server
  t = tenant
})

const get = () => s.request('GET', EMPRESA, { headers: { 'X-Api-Key': t.readKey } })
const put = (body: unknown) => s.request('PUT', EMPRESA, { headers: { 'X-Api-Key': t.writeKey }, body })

describe('GET /empresa', () => {
  test('returns the company record of spec 2.13 plus acteco', async () => {
    const res = await get()
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({
      id: t.empresa.id,
      rut: t.empresa.rut,
      razon_social: 'Empresa de Prueba Ltda.',
      giro: 'Servicios informáticos',
      acteco: [620200],
      direccion: 'Calle Falsa 123',
      comuna: 'Ñuñoa',
      ciudad: 'Santiago',
      ambiente: 'certificacion',
      fecha_resolucion: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      numero_resolucion: 0,
      inbound_email: null,
      inbound_status: 'sin_configurar',
    })
    expect(res.json.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  })
})

describe('PUT /empresa', () => {
  test('changes only the fields sent and bumps updated_at', async () => {
    const before = (await get()).json
    await Bun.sleep(5)
    const res = await put({ direccion: 'Av. Irarrázaval 5185', acteco: [620200, 631100] })
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ ...before, direccion: 'Av. Irarrázaval 5185', acteco: [620200, 631100], updated_at: expect.any(String) })
    expect(res.json.updated_at > before.updated_at).toBe(true)
    expect((await get()).json.direccion).toBe('Av. Irarrázaval 5185')
  })

  test('accepts the SII maxima exactly (razón social 100, giro 80, dirección 70, comuna 20, ciudad 20)', async () => {
    const body = { razon_social: 'R'.repeat(100), giro: 'G'.repeat(80), direccion: 'D'.repeat(70), comuna: 'Ñ'.repeat(20), ciudad: 'C'.repeat(20) }
    const res = await put(body)
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject(body)
  })

  test.each([
    [{ razon_social: 'R'.repeat(101) }, 'razon_social', 'TOO_LONG'],
    [{ giro: 'G'.repeat(81) }, 'giro', 'TOO_LONG'],
    [{ direccion: 'D'.repeat(71) }, 'direccion', 'TOO_LONG'],
    [{ comuna: 'C'.repeat(21) }, 'comuna', 'TOO_LONG'],
    [{ ciudad: 'C'.repeat(21) }, 'ciudad', 'TOO_LONG'],
    [{ giro: '' }, 'giro', 'REQUIRED'],
    [{ giro: '   ' }, 'giro', 'REQUIRED'],
    [{ giro: 42 }, 'giro', 'INVALID_TYPE'],
    [{ acteco: [] }, 'acteco', 'TOO_FEW'],
    [{ acteco: [1, 2, 3, 4, 5] }, 'acteco', 'TOO_MANY'],
    [{ acteco: [0] }, 'acteco.0', 'OUT_OF_RANGE'],
    [{ acteco: ['620200'] }, 'acteco.0', 'INVALID_TYPE'],
    [{ acteco: [6202.5] }, 'acteco.0', 'INVALID_TYPE'],
    [{ rut: '11111111-1' }, 'rut', 'NOT_ALLOWED'],
    [{ ambiente: 'produccion' }, 'ambiente', 'NOT_ALLOWED'],
    [{ numero_resolucion: 80 }, 'numero_resolucion', 'NOT_ALLOWED'],
    [{ razon_social: 'Comercial € Ltda' }, 'razon_social', 'INVALID_VALUE'],
  ])('%j → 400 %s %s and nothing changes', async (body, field, code) => {
    const before = (await get()).json
    const res = await put(body)
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.details).toContainEqual({ field, code, message: expect.any(String) })
    expect((await get()).json).toEqual(before)
  })

  test('every failing field is reported at once', async () => {
    const res = await put({ giro: 'G'.repeat(81), comuna: '', acteco: [1, 2, 3, 4, 5], rut: '1-9' })
    expect(res.status).toBe(400)
    expect(res.json.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual(
      ['acteco:TOO_MANY', 'comuna:REQUIRED', 'giro:TOO_LONG', 'rut:NOT_ALLOWED'].sort(),
    )
  })

  test('a rule and a shape failure are reported together: razón social outside ISO-8859-1, giro past 80 (DESIGN §5)', async () => {
    const before = (await get()).json
    const res = await put({ razon_social: 'Ñandú €', giro: 'x'.repeat(81) })
    expect(res.status).toBe(400)
    expect(res.json.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual(['giro:TOO_LONG', 'razon_social:INVALID_VALUE'])
    expect((await get()).json).toEqual(before)
  })

  test('a body that is not an object → 400', async () => {
    const res = await s.request('PUT', EMPRESA, { headers: { 'X-Api-Key': t.writeKey, 'content-type': 'application/json' }, rawBody: '[1,2]' })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
  })
})
