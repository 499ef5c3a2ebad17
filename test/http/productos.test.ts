// Spec 2.17, 4.6 with DESIGN §8, §12: every producto operation and error against the real server; codigo uniqueness,
// categoria filter, search by name or code, pagination, soft delete (issued DTEs untouched), tenancy, read-only keys.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testClock } from '../support/clock'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const PRODUCTOS = '/api/v1/billing/productos'
let s: TestServer
let t: Tenant
let other: Tenant
// Every reading of the clock a later millisecond, so an update's updated_at always moves without waiting.
const clock = testClock({ strictlyIncreasing: true })

beforeAll(async () => {
  s = await startTestServer({ clock })
  t = await s.tenant(testRut())
  other = await s.tenant(testRut())
})
afterAll(() => s.stop())

const post = (body: unknown, tenant = t) => s.request('POST', PRODUCTOS, { headers: { 'X-Api-Key': tenant.writeKey }, body })
const get = (path: string, tenant = t) => s.request('GET', `${PRODUCTOS}${path}`, { headers: { 'X-Api-Key': tenant.readKey } })
const put = (id: string, body: unknown, tenant = t) => s.request('PUT', `${PRODUCTOS}/${id}`, { headers: { 'X-Api-Key': tenant.writeKey }, body })
const del = (id: string, tenant = t) => s.request('DELETE', `${PRODUCTOS}/${id}`, { headers: { 'X-Api-Key': tenant.writeKey } })
const search = (q: string, tenant = t, extra = '') => get(`/search?q=${encodeURIComponent(q)}${extra}`, tenant)
const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id)

let seq = 0
async function create(fields: Record<string, unknown> = {}, tenant = t): Promise<Record<string, any>> {
  const res = await post({ nombre: `Producto ${++seq}`, ...fields }, tenant)
  if (res.status !== 201) throw new Error(res.text)
  return res.json
}

describe('POST /productos', () => {
  test('201 with Location: unidad UN and es_exento false by default, unsent fields null; GET returns the same', async () => {
    const res = await post({ nombre: 'Martillo carpintero 16 oz', precio_unitario: 8990 })
    expect(res.status).toBe(201)
    expect(res.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      codigo: null,
      nombre: 'Martillo carpintero 16 oz',
      descripcion: null,
      precio_unitario: 8990,
      unidad: 'UN',
      es_exento: false,
      categoria: null,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      updated_at: res.json.created_at,
    })
    expect(res.headers.get('location')).toBe(`${PRODUCTOS}/${res.json.id}`)
    expect((await get(`/${res.json.id}`)).json).toEqual(res.json)
  })

  test('every field, at its DESIGN §12 maximum', async () => {
    const body = {
      codigo: 'C'.repeat(50),
      nombre: 'N'.repeat(200),
      descripcion: 'D'.repeat(1000),
      precio_unitario: 999_999_999_999,
      unidad: 'M3',
      es_exento: true,
      categoria: 'K'.repeat(100),
    }
    const res = await post(body)
    expect(res.status).toBe(201)
    expect(res.json).toMatchObject(body)
    expect((await post({ nombre: 'Gratis', precio_unitario: 0 })).json.precio_unitario).toBe(0)
  })

  test.each(['UN', 'HR', 'KG', 'LT', 'MT', 'M2', 'M3'])('unidad %s is accepted', async (unidad) => {
    expect((await create({ unidad })).unidad).toBe(unidad)
  })

  test('a codigo already used by a live producto → 409 PRODUCTO_CODIGO_EXISTS with the existing id; productos without codigo never clash', async () => {
    const first = await create({ codigo: 'SKU-409' })
    const res = await post({ nombre: 'Otro', codigo: 'SKU-409' })
    expect(res.status).toBe(409)
    expect(res.json.code).toBe('PRODUCTO_CODIGO_EXISTS')
    expect(res.json.context).toMatchObject({ producto_id: first.id, codigo: 'SKU-409' })
    expect((await post({ nombre: 'Sin código' })).status).toBe(201)
    expect((await post({ nombre: 'Sin código', codigo: null })).status).toBe(201)
    expect((await post({ nombre: 'Mismo código', codigo: 'SKU-409' }, other)).status).toBe(201)
  })

  const long = (n: number) => 'x'.repeat(n + 1)
  test.each([
    ['nombre', 'REQUIRED', { nombre: undefined }],
    ['nombre', 'REQUIRED', { nombre: '' }],
    ['nombre', 'REQUIRED', { nombre: '  ' }],
    ['nombre', 'INVALID_TYPE', { nombre: null }],
    ['nombre', 'TOO_LONG', { nombre: long(200) }],
    ['nombre', 'INVALID_VALUE', { nombre: 'Taza ☕' }],
    ['codigo', 'TOO_LONG', { codigo: long(50) }],
    ['codigo', 'REQUIRED', { codigo: '' }],
    ['descripcion', 'TOO_LONG', { descripcion: long(1000) }],
    ['descripcion', 'INVALID_VALUE', { descripcion: 'Ω' }],
    ['categoria', 'TOO_LONG', { categoria: long(100) }],
    ['precio_unitario', 'OUT_OF_RANGE', { precio_unitario: -1 }],
    ['precio_unitario', 'OUT_OF_RANGE', { precio_unitario: 9_007_199_254_740_992 }],
    ['precio_unitario', 'INVALID_TYPE', { precio_unitario: 10.5 }],
    ['precio_unitario', 'INVALID_TYPE', { precio_unitario: '100' }],
    ['unidad', 'INVALID_VALUE', { unidad: 'CAJA' }],
    ['unidad', 'INVALID_VALUE', { unidad: 'un' }],
    ['unidad', 'INVALID_VALUE', { unidad: null }],
    ['es_exento', 'INVALID_TYPE', { es_exento: 'true' }],
    ['es_exento', 'INVALID_TYPE', { es_exento: null }],
    ['stock', 'NOT_ALLOWED', { stock: 3 }],
  ])('%s %s → 400 VALIDATION_ERROR and nothing stored', async (field, code, patch) => {
    const tenant = await s.tenant(testRut())
    const res = await post({ nombre: 'Válido', ...patch }, tenant)
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.details).toContainEqual({ field, code, message: expect.any(String) })
    expect((await get('', tenant)).json.data).toEqual([])
  })

  test('every failing field is reported at once', async () => {
    const res = await post({ nombre: '', precio_unitario: -5, unidad: 'XX', descripcion: '€uro' })
    expect(res.json.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual(
      ['descripcion:INVALID_VALUE', 'nombre:REQUIRED', 'precio_unitario:OUT_OF_RANGE', 'unidad:INVALID_VALUE'].sort(),
    )
  })
})

describe('GET /productos/{id}', () => {
  test("unknown, malformed and another company's ids are all 404 NOT_FOUND", async () => {
    const mine = await create()
    for (const [path, tenant] of [
      [`/${crypto.randomUUID()}`, t],
      ['/123', t],
      [`/${mine.id}`, other],
    ] as const) {
      const res = await get(path, tenant)
      expect(res.status).toBe(404)
      expect(res.json.code).toBe('NOT_FOUND')
    }
  })
})

describe('PUT /productos/{id}', () => {
  test('changes only the fields sent; null clears codigo, descripcion, precio_unitario, categoria', async () => {
    const p = await create({ codigo: 'PUT-1', descripcion: 'Desc', precio_unitario: 100, categoria: 'Ferretería' })
    const res = await put(p.id, { precio_unitario: 150, unidad: 'KG' })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ ...p, precio_unitario: 150, unidad: 'KG', updated_at: expect.any(String) })
    expect(res.json.updated_at > p.updated_at).toBe(true)
    const cleared = await put(p.id, { codigo: null, descripcion: null, precio_unitario: null, categoria: null })
    expect(cleared.json).toMatchObject({ codigo: null, descripcion: null, precio_unitario: null, categoria: null, nombre: p.nombre, unidad: 'KG' })
    expect((await get(`/${p.id}`)).json).toEqual(cleared.json)
    expect((await put(p.id, {})).json).toEqual(cleared.json)
  })

  test("a codigo of another live producto → 409 with its id; its own codigo, or a deleted one's, is fine", async () => {
    const a = await create({ codigo: 'PUT-A' })
    const b = await create({ codigo: 'PUT-B' })
    const clash = await put(b.id, { codigo: 'PUT-A' })
    expect(clash.status).toBe(409)
    expect(clash.json.code).toBe('PRODUCTO_CODIGO_EXISTS')
    expect(clash.json.context.producto_id).toBe(a.id)
    expect((await put(b.id, { codigo: 'PUT-B', nombre: 'Renombrado' })).status).toBe(200)
    await del(a.id)
    expect((await put(b.id, { codigo: 'PUT-A' })).json.codigo).toBe('PUT-A')
  })

  test.each([
    ['nombre', 'INVALID_TYPE', { nombre: null }],
    ['unidad', 'INVALID_VALUE', { unidad: null }],
    ['es_exento', 'INVALID_TYPE', { es_exento: null }],
    ['precio_unitario', 'OUT_OF_RANGE', { precio_unitario: -1 }],
    ['id', 'NOT_ALLOWED', { id: crypto.randomUUID() }],
  ])('%s %s → 400 and the producto is unchanged', async (field, code, body) => {
    const p = await create({ precio_unitario: 10 })
    const res = await put(p.id, body)
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual({ field, code, message: expect.any(String) })
    expect((await get(`/${p.id}`)).json).toEqual(p)
  })

  test("unknown, malformed, deleted and another company's ids → 404", async () => {
    const p = await create()
    const gone = await create()
    await del(gone.id)
    for (const [id, tenant] of [
      [crypto.randomUUID(), t],
      ['abc', t],
      [gone.id, t],
      [p.id, other],
    ] as const)
      expect((await put(id, { nombre: 'Hackeado' }, tenant)).status).toBe(404)
    expect((await get(`/${p.id}`)).json.nombre).toBe(p.nombre)
  })
})

describe('DELETE /productos/{id}', () => {
  test('204 without a body; gone from get, list and search; codigo free again; a second delete is 404', async () => {
    const p = await create({ nombre: 'Producto Efímero Quásar', codigo: 'DEL-1' })
    expect(ids((await search('quasar')).json)).toEqual([p.id])
    const res = await del(p.id)
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    expect((await get(`/${p.id}`)).status).toBe(404)
    expect(ids((await get('?limit=100')).json.data)).not.toContain(p.id)
    expect((await search('quasar')).json).toEqual([])
    expect((await search('del-1')).json).toEqual([])
    expect((await del(p.id)).status).toBe(404)
    const again = await post({ nombre: 'Reemplazo', codigo: 'DEL-1' })
    expect(again.status).toBe(201)
    expect(ids((await search('DEL-1')).json)).toEqual([again.json.id])
  })

  test("another company's producto → 404 and it stays", async () => {
    const p = await create()
    expect((await del(p.id, other)).status).toBe(404)
    expect((await get(`/${p.id}`)).status).toBe(200)
  })

  test('a DTE issued with a producto is untouched by editing and deleting it', async () => {
    const tenant = await s.tenant(testRut())
    await provisionIssuer(s, tenant, { tipos: [33], folios: 5 })
    const p = await create({ codigo: 'MART-16', nombre: 'Martillo carpintero 16 oz', precio_unitario: 8990, unidad: 'UN' }, tenant)
    const linea = { nombre: p.nombre, cantidad: 2, precio: p.precio_unitario, unidad: p.unidad }
    const dte = await issue(s, tenant, facturaSimple({ detalle: [linea], auto_send: false }))
    expect(dte.status).toBe(201)
    const before = await s.request('GET', `/api/v1/billing/dte/${dte.json.id}?include_xml=true`, { headers: { 'X-Api-Key': tenant.readKey } })
    await put(p.id, { nombre: 'Martillo nuevo', precio_unitario: 9990 }, tenant)
    expect((await del(p.id, tenant)).status).toBe(204)
    const after = await s.request('GET', `/api/v1/billing/dte/${dte.json.id}?include_xml=true`, { headers: { 'X-Api-Key': tenant.readKey } })
    expect(after.json).toEqual(before.json)
    expect(after.json.detalle[0]).toMatchObject({ nombre: 'Martillo carpintero 16 oz', precio: 8990 })
  })
})

describe('GET /productos', () => {
  test('newest first; a walk by cursor sees every producto once; categoria filters exactly', async () => {
    const tenant = await s.tenant(testRut())
    const made: Array<{ id: string; categoria: string }> = []
    for (let i = 0; i < 9; i++) {
      const categoria = i % 3 === 0 ? 'Herramientas' : 'Insumos'
      made.push({ id: (await create({ categoria }, tenant)).id, categoria })
    }
    await del(made[4]!.id, tenant)
    const live = made.filter((_, i) => i !== 4).reverse()
    const walk = async (query: string) => {
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const res = await get(`?limit=2${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, tenant)
        expect(res.status).toBe(200)
        expect(res.json.data.length).toBeLessThanOrEqual(2)
        seen.push(...ids(res.json.data))
        cursor = res.json.next_cursor
      } while (cursor)
      return seen
    }
    expect(await walk('')).toEqual(live.map((p) => p.id))
    expect(await walk('&categoria=Herramientas')).toEqual(live.filter((p) => p.categoria === 'Herramientas').map((p) => p.id))
    expect(await walk(`&categoria=${encodeURIComponent('Insumos')}`)).toEqual(live.filter((p) => p.categoria === 'Insumos').map((p) => p.id))
    expect((await get('?categoria=insumos', tenant)).json).toEqual({ data: [], next_cursor: null })
    expect((await get('', tenant)).json.data).toHaveLength(8)
    expect(ids((await get('?limit=100', other)).json.data)).not.toContain(live[0]!.id)
  })

  test.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['cursor=c1.bm9wZQ', 'cursor'],
    ['categoria=', 'categoria'],
    ['orden=asc', 'orden'],
  ])('?%s → 400 on %s', async (query, field) => {
    const res = await get(`?${query}`)
    expect(res.status).toBe(400)
    expect(res.json.details[0].field).toBe(field)
  })
})

describe('GET /productos/search', () => {
  let tenant: Tenant
  const p: Record<string, Record<string, any>> = {}
  beforeAll(async () => {
    tenant = await s.tenant(testRut())
    p.cafe = await create({ nombre: 'Café de Grano Orgánico 1 kg', codigo: 'CAF-001' }, tenant)
    p.te = await create({ nombre: 'Té Verde en Hojas', codigo: 'TÉ-Ñ42' }, tenant)
    p.asesoria = await create({ nombre: 'Asesoría Contable Mensual', codigo: null, categoria: 'Servicios' }, tenant)
    await create({ nombre: 'Café de Grano Orgánico (otra empresa)', codigo: 'CAF-001' }, other)
  })
  const found = async (q: string, extra = '') => {
    const res = await search(q, tenant, extra)
    expect(res.status).toBe(200)
    expect(Array.isArray(res.json)).toBe(true)
    return ids(res.json)
  }

  test.each([
    ['cafe', 'cafe'],
    ['CAFÉ DE GRANO', 'cafe'],
    ['organico', 'cafe'],
    ['caf-001', 'cafe'],
    ['001', 'cafe'],
    ['te-n4', 'te'],
    ['TÉ-Ñ42', 'te'],
    ['verde', 'te'],
    ['asesoria contable', 'asesoria'],
    ['ñ4', 'te'],
  ])('%p finds %s (name or code, case and accents ignored)', async (q, who) => {
    expect(await found(q)).toEqual([p[who]!.id])
  })

  test('a fragment in several productos lists them newest first; limit caps it', async () => {
    expect(await found('de')).toEqual([p.te!.id, p.cafe!.id])
    expect(await found('e', '&limit=2')).toEqual([p.asesoria!.id, p.te!.id])
    expect(await found('e')).toEqual([p.asesoria!.id, p.te!.id, p.cafe!.id])
  })

  test("another company's productos are never found; a renamed producto is found by its new name", async () => {
    expect(await found('otra empresa')).toEqual([])
    const x = await create({ nombre: 'Tornillo Hexagonal', codigo: 'TOR-1' }, tenant)
    await put(x.id, { nombre: 'Perno Hexagonal', codigo: 'PER-1' }, tenant)
    expect(await found('tornillo')).toEqual([])
    expect(await found('tor-1')).toEqual([])
    expect(await found('perno')).toEqual([x.id])
    expect(await found('per-1')).toEqual([x.id])
  })

  test.each([
    ['', 'q', 'REQUIRED'],
    ['?limit=5', 'q', 'REQUIRED'],
    ['?q=', 'q', 'REQUIRED'],
    [`?q=${'z'.repeat(101)}`, 'q', 'TOO_LONG'],
    ['?q=abc&limit=51', 'limit', 'OUT_OF_RANGE'],
  ])('GET /productos/search%s → 400 %s %s', async (query, field, code) => {
    const res = await s.request('GET', `${PRODUCTOS}/search${query}`, { headers: { 'X-Api-Key': t.readKey } })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.details[0]).toMatchObject({ field, code })
  })
})

describe('credentials', () => {
  test('a read-only key reads but every write is 403 API_KEY_READ_ONLY', async () => {
    const p = await create()
    for (const [method, path, body] of [
      ['POST', PRODUCTOS, { nombre: 'x' }],
      ['PUT', `${PRODUCTOS}/${p.id}`, { nombre: 'x' }],
      ['DELETE', `${PRODUCTOS}/${p.id}`, undefined],
    ] as const) {
      const res = await s.request(method, path, { headers: { 'X-Api-Key': t.readKey }, body })
      expect(res.status).toBe(403)
      expect(res.json.code).toBe('API_KEY_READ_ONLY')
    }
    expect((await get(`/${p.id}`)).json).toEqual(p)
    for (const path of ['', `/${p.id}`, '/search?q=abc']) expect((await get(path)).status).toBe(200)
  })

  test('no credential → 401', async () => {
    for (const [method, path] of [
      ['GET', PRODUCTOS],
      ['POST', PRODUCTOS],
      ['GET', `${PRODUCTOS}/search?q=abc`],
      ['DELETE', `${PRODUCTOS}/${crypto.randomUUID()}`],
    ] as const)
      expect((await s.request(method, path)).status).toBe(401)
  })
})

test('/docs/json lists the six producto operations', async () => {
  const doc = (await s.request('GET', '/docs/json')).json
  const paths = doc.paths as Record<string, Record<string, { operationId?: string; requestBody?: any }>>
  expect(paths[PRODUCTOS]!.get!.operationId).toBe('listProductos')
  expect(paths[PRODUCTOS]!.post!.operationId).toBe('createProducto')
  expect(paths[`${PRODUCTOS}/search`]!.get!.operationId).toBe('searchProductos')
  expect(paths[`${PRODUCTOS}/{id}`]!.get!.operationId).toBe('getProducto')
  expect(paths[`${PRODUCTOS}/{id}`]!.put!.operationId).toBe('updateProducto')
  expect(paths[`${PRODUCTOS}/{id}`]!.delete!.operationId).toBe('deleteProducto')
  const create = paths[PRODUCTOS]!.post!.requestBody.content['application/json'].schema
  expect(create.required).toEqual(['nombre'])
  expect(create.properties.precio_unitario).toMatchObject({ type: 'integer', minimum: 0 })
})
