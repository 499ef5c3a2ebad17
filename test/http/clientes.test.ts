// Spec 2.16, 4.5 with DESIGN §8, §12: every cliente operation and error against the real server; search folding,
// RUT spellings, pagination, soft delete, uniqueness after delete, tenancy, read-only keys, the OpenAPI document.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testClock } from '../support/clock'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const CLIENTES = '/api/v1/billing/clientes'
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

const dotted = (rut: string) => {
  const [body, dv] = rut.split('-') as [string, string]
  return `${body.replace(/\B(?=(\d{3})+(?!\d))/g, '.')}-${dv}`
}
const post = (body: unknown, tenant = t, key = tenant.writeKey) => s.request('POST', CLIENTES, { headers: { 'X-Api-Key': key }, body })
const get = (path: string, tenant = t) => s.request('GET', `${CLIENTES}${path}`, { headers: { 'X-Api-Key': tenant.readKey } })
const put = (id: string, body: unknown, tenant = t) => s.request('PUT', `${CLIENTES}/${id}`, { headers: { 'X-Api-Key': tenant.writeKey }, body })
const del = (id: string, tenant = t) => s.request('DELETE', `${CLIENTES}/${id}`, { headers: { 'X-Api-Key': tenant.writeKey } })
const search = (q: string, tenant = t, extra = '') => get(`/search?q=${encodeURIComponent(q)}${extra}`, tenant)
const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id)

async function create(fields: Record<string, unknown> = {}, tenant = t): Promise<Record<string, any>> {
  const res = await post({ rut: testRut(), razon_social: 'Cliente de Prueba SpA', ...fields }, tenant)
  if (res.status !== 201) throw new Error(res.text)
  return res.json
}

describe('POST /clientes', () => {
  test('201 with Location: RUT stored canonical, unsent fields null, GET returns the same record', async () => {
    const rut = testRut()
    const res = await post({ rut: dotted(rut).toLowerCase(), razon_social: 'Comercial Ñuñoa Limitada', giro: 'Comercio', email: 'pagos@nunoa.cl' })
    expect(res.status).toBe(201)
    expect(res.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      rut,
      razon_social: 'Comercial Ñuñoa Limitada',
      giro: 'Comercio',
      direccion: null,
      comuna: null,
      ciudad: null,
      email: 'pagos@nunoa.cl',
      telefono: null,
      contacto: null,
      notas: null,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      updated_at: res.json.created_at,
    })
    expect(res.headers.get('location')).toBe(`${CLIENTES}/${res.json.id}`)
    expect((await get(`/${res.json.id}`)).json).toEqual(res.json)
  })

  test('every field at its DESIGN §12 maximum is accepted; null reads as not sent', async () => {
    const body = {
      rut: testRut(),
      razon_social: 'r'.repeat(200),
      giro: 'g'.repeat(200),
      direccion: 'd'.repeat(300),
      comuna: 'c'.repeat(100),
      ciudad: 'c'.repeat(100),
      email: `${'a'.repeat(64)}@${'b'.repeat(61)}.${'c'.repeat(61)}.${'d'.repeat(62)}.cl`,
      telefono: '+56 2 2345 6789' + '0'.repeat(15),
      contacto: 'k'.repeat(200),
      notas: '✓ notas internas '.repeat(117).padEnd(2000, 'x'),
    }
    expect(body.email.length).toBe(254)
    expect(body.notas.length).toBe(2000)
    const res = await post(body)
    expect(res.status).toBe(201)
    expect(res.json).toMatchObject({ ...body, rut: body.rut })
    const nulls = await post({ rut: testRut(), razon_social: 'Sin datos', giro: null, email: null })
    expect(nulls.status).toBe(201)
    expect(nulls.json.giro).toBeNull()
    expect(nulls.json.email).toBeNull()
  })

  test('a RUT already registered, in any spelling → 409 CLIENTE_RUT_EXISTS with the existing id in context', async () => {
    const first = await create()
    const res = await post({ rut: ` ${first.rut.replace('-', '').toLowerCase()} `, razon_social: 'Otro nombre' })
    const again = await post({ rut: dotted(first.rut), razon_social: 'Otro nombre' })
    for (const r of [res, again]) {
      expect(r.status).toBe(409)
      expect(r.json.code).toBe('CLIENTE_RUT_EXISTS')
      expect(r.json.context).toMatchObject({ cliente_id: first.id, rut: first.rut, request_id: expect.any(String) })
    }
  })

  test('the same RUT in another company is a different cliente', async () => {
    const mine = await create()
    const res = await post({ rut: mine.rut, razon_social: 'El mismo, en otra empresa' }, other)
    expect(res.status).toBe(201)
    expect(res.json.id).not.toBe(mine.id)
  })

  const long = (n: number) => 'x'.repeat(n + 1)
  test.each([
    ['rut', 'INVALID_RUT', { rut: '11.111.111-2' }],
    ['rut', 'INVALID_RUT', { rut: 'no es rut' }],
    ['rut', 'REQUIRED', { rut: undefined }],
    ['rut', 'INVALID_TYPE', { rut: 76086428 }],
    ['razon_social', 'REQUIRED', { razon_social: undefined }],
    ['razon_social', 'REQUIRED', { razon_social: '' }],
    ['razon_social', 'REQUIRED', { razon_social: '   ' }],
    ['razon_social', 'INVALID_TYPE', { razon_social: null }],
    ['razon_social', 'TOO_LONG', { razon_social: long(200) }],
    ['razon_social', 'INVALID_VALUE', { razon_social: 'Café 😀 Limitada' }],
    ['giro', 'TOO_LONG', { giro: long(200) }],
    ['giro', 'INVALID_TYPE', { giro: 42 }],
    ['direccion', 'TOO_LONG', { direccion: long(300) }],
    ['direccion', 'INVALID_VALUE', { direccion: 'Calle → 1' }],
    ['comuna', 'TOO_LONG', { comuna: long(100) }],
    ['ciudad', 'TOO_LONG', { ciudad: long(100) }],
    ['email', 'INVALID_FORMAT', { email: 'no-es-correo' }],
    ['email', 'INVALID_FORMAT', { email: 'a@b' }],
    ['email', 'INVALID_FORMAT', { email: '' }],
    ['email', 'TOO_LONG', { email: `${'a'.repeat(250)}@b.cl` }],
    ['telefono', 'TOO_LONG', { telefono: long(30) }],
    ['contacto', 'TOO_LONG', { contacto: long(200) }],
    ['notas', 'TOO_LONG', { notas: long(2000) }],
    ['id', 'NOT_ALLOWED', { id: '0190a0e0-0000-7000-8000-000000000000' }],
  ])('%s %s → 400 VALIDATION_ERROR and nothing stored', async (field, code, patch) => {
    const tenant = await s.tenant(testRut())
    const res = await post({ rut: testRut(), razon_social: 'Válido', ...patch }, tenant) // undefined: not in the JSON
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.details).toContainEqual({ field, code, message: expect.any(String) })
    expect((await get('', tenant)).json.data).toEqual([])
  })

  test('every failing field is reported at once, shape and rules together', async () => {
    const res = await post({ rut: '12.345.678-9', razon_social: '', email: 'x', comuna: 'c'.repeat(101), extra: 1 })
    expect(res.status).toBe(400)
    expect(res.json.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual(
      ['comuna:TOO_LONG', 'email:INVALID_FORMAT', 'extra:NOT_ALLOWED', 'razon_social:REQUIRED', 'rut:INVALID_RUT'].sort(),
    )
  })

  test('a body that is not a JSON object → 400; not JSON at all → 400 on body; text/plain → 415', async () => {
    const arr = await post([{ rut: testRut(), razon_social: 'x' }])
    expect(arr.status).toBe(400)
    expect(arr.json.details[0].field).toBe('body')
    const bad = await s.request('POST', CLIENTES, { headers: { 'X-Api-Key': t.writeKey, 'content-type': 'application/json' }, rawBody: '{"rut":' })
    expect(bad.status).toBe(400)
    expect(bad.json.details[0].field).toBe('body')
    const text = await s.request('POST', CLIENTES, { headers: { 'X-Api-Key': t.writeKey, 'content-type': 'text/plain' }, rawBody: 'hola' })
    expect(text.status).toBe(415)
  })
})

describe('GET /clientes/{id}', () => {
  test("unknown, malformed and another company's ids are all 404 NOT_FOUND", async () => {
    const mine = await create()
    for (const [path, tenant] of [
      [`/${crypto.randomUUID()}`, t],
      ['/no-es-uuid', t],
      [`/${mine.id}`, other],
    ] as const) {
      const res = await get(path, tenant)
      expect(res.status).toBe(404)
      expect(res.json.code).toBe('NOT_FOUND')
    }
    expect((await get(`/${mine.id.toUpperCase()}`)).json.id).toBe(mine.id)
  })
})

describe('PUT /clientes/{id}', () => {
  test('changes only the fields sent, null clears an optional one, updated_at moves', async () => {
    const c = await create({ giro: 'Comercio', direccion: 'Calle 1', email: 'a@b.cl' })
    const res = await put(c.id, { direccion: 'Avenida 2', email: null })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ ...c, direccion: 'Avenida 2', email: null, updated_at: expect.any(String) })
    expect(res.json.updated_at > c.updated_at).toBe(true)
    expect((await get(`/${c.id}`)).json).toEqual(res.json)
  })

  test('an empty body changes nothing', async () => {
    const c = await create()
    const res = await put(c.id, {})
    expect(res.status).toBe(200)
    expect(res.json).toEqual(c)
  })

  test('the same RUT in another spelling is accepted; a different or invalid one → 400 NOT_ALLOWED on rut', async () => {
    const c = await create()
    expect((await put(c.id, { rut: dotted(c.rut), razon_social: 'Renombrada' })).json).toMatchObject({ rut: c.rut, razon_social: 'Renombrada' })
    for (const rut of [testRut(), 'basura', null, 123]) {
      const res = await put(c.id, { rut, giro: 'Otro' })
      expect(res.status).toBe(400)
      expect(res.json.details).toEqual([{ field: 'rut', code: 'NOT_ALLOWED', message: expect.stringContaining(c.rut) }])
    }
    expect((await get(`/${c.id}`)).json.giro).toBeNull()
  })

  test.each([
    ['razon_social', 'INVALID_TYPE', { razon_social: null }],
    ['razon_social', 'REQUIRED', { razon_social: ' ' }],
    ['email', 'INVALID_FORMAT', { email: 'sin arroba' }],
    ['notas', 'TOO_LONG', { notas: 'n'.repeat(2001) }],
    ['created_at', 'NOT_ALLOWED', { created_at: '2020-01-01T00:00:00.000Z' }],
  ])('%s %s → 400 and the cliente is unchanged', async (field, code, body) => {
    const c = await create({ email: 'ok@ok.cl' })
    const res = await put(c.id, body)
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual({ field, code, message: expect.any(String) })
    expect((await get(`/${c.id}`)).json).toEqual(c)
  })

  test("unknown, malformed, deleted and another company's ids → 404, nothing changes", async () => {
    const c = await create()
    const gone = await create()
    await del(gone.id)
    for (const [id, tenant] of [
      [crypto.randomUUID(), t],
      ['xyz', t],
      [gone.id, t],
      [c.id, other],
    ] as const)
      expect((await put(id, { giro: 'Hackeado' }, tenant)).status).toBe(404)
    expect((await get(`/${c.id}`)).json.giro).toBeNull()
  })
})

describe('DELETE /clientes/{id}', () => {
  test('204 without a body; then gone from get, list and search; a second delete is 404', async () => {
    const c = await create({ razon_social: 'Borrable Quimérica Limitada' })
    expect(ids((await search('quimerica')).json)).toEqual([c.id])
    const res = await del(c.id)
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    expect((await get(`/${c.id}`)).status).toBe(404)
    expect(ids((await get('?limit=100')).json.data)).not.toContain(c.id)
    expect((await search('quimerica')).json).toEqual([])
    expect((await search(c.rut)).json).toEqual([])
    expect((await del(c.id)).status).toBe(404)
  })

  test('its RUT can be registered again, as a new cliente', async () => {
    const c = await create()
    await del(c.id)
    const again = await post({ rut: c.rut, razon_social: 'Vuelve' })
    expect(again.status).toBe(201)
    expect(again.json.id).not.toBe(c.id)
    expect(ids((await search(c.rut)).json)).toEqual([again.json.id])
    expect((await post({ rut: c.rut, razon_social: 'Otra vez' })).status).toBe(409)
  })

  test("another company's cliente → 404 and it stays", async () => {
    const c = await create()
    expect((await del(c.id, other)).status).toBe(404)
    expect((await del('no-uuid')).status).toBe(404)
    expect((await get(`/${c.id}`)).status).toBe(200)
  })
})

describe('GET /clientes', () => {
  test('`data` newest first, `next_cursor`; a walk by cursor sees every cliente once; default limit 20', async () => {
    const tenant = await s.tenant(testRut())
    const created: string[] = []
    for (let i = 0; i < 23; i++) created.push((await create({ razon_social: `Cliente ${i}` }, tenant)).id)
    await del(created[5]!, tenant)
    const live = created.filter((_, i) => i !== 5).reverse()
    const first = await get('', tenant)
    expect(first.status).toBe(200)
    expect(ids(first.json.data)).toEqual(live.slice(0, 20))
    expect(first.json.next_cursor).toEqual(expect.any(String))
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const res = await get(`?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, tenant)
      expect(res.json.data.length).toBeLessThanOrEqual(4)
      seen.push(...ids(res.json.data))
      cursor = res.json.next_cursor
    } while (cursor)
    expect(seen).toEqual(live)
    const all = await get('?limit=100', tenant)
    expect(all.json.next_cursor).toBeNull()
    expect(ids((await get('', other)).json.data)).not.toContain(live[0])
  })

  test.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['cursor=garbage', 'cursor'],
    ['desde=1', 'desde'],
  ])('?%s → 400 on %s', async (query, field) => {
    const res = await get(`?${query}`)
    expect(res.status).toBe(400)
    expect(res.json.details[0].field).toBe(field)
  })
})

describe('GET /clientes/search', () => {
  let tenant: Tenant
  const c: Record<string, Record<string, any>> = {}
  beforeAll(async () => {
    tenant = await s.tenant(testRut())
    c.nunoa = await create({ rut: '76.086.428-5', razon_social: 'Ferretería Ñuñoa Limitada' }, tenant)
    c.k = await create({ rut: '96874030-k', razon_social: 'Constructora ÁRBOL Alto S.A.' }, tenant)
    c.ohiggins = await create({ rut: '97975000-5', razon_social: 'Distribuidora O’Higgins 100% Ltda.' }, tenant)
    c.under = await create({ rut: '12345678-5', razon_social: 'Importadora foo_bar "Citas" SpA' }, tenant)
    await create({ rut: '76.086.428-5', razon_social: 'Ferretería Ñuñoa Limitada (de otra empresa)' }, other)
  })
  const found = async (q: string, extra = '') => {
    const res = await search(q, tenant, extra)
    expect(res.status).toBe(200)
    expect(Array.isArray(res.json)).toBe(true)
    return ids(res.json)
  }

  test.each([
    ['nunoa', 'nunoa'],
    ['Ñuñoa', 'nunoa'],
    ['ÑUÑOA', 'nunoa'],
    ['ferreteria nun', 'nunoa'],
    ['  ferretería   ñuñoa ', 'nunoa'],
    ['arbol', 'k'],
    ['árbol alto', 'k'],
    ["o'higgins", 'ohiggins'],
    ['100%', 'ohiggins'],
    ['foo_bar', 'under'],
    ['"citas"', 'under'],
  ])('name: %p finds %s (case, accents, typographic quotes, whitespace)', async (q, who) => {
    expect(await found(q)).toEqual([c[who]!.id])
  })

  test.each([
    ['76.086.428-5', 'nunoa'],
    ['76086428-5', 'nunoa'],
    ['760864285', 'nunoa'],
    ['76086428', 'nunoa'],
    ['086.428', 'nunoa'],
    ['96.874.030-K', 'k'],
    ['96874030-k', 'k'],
    ['96874030K', 'k'],
    ['4030k', 'k'],
  ])('RUT: %p finds %s (with or without dots and dash, k or K, partial)', async (q, who) => {
    expect(await found(q)).toEqual([c[who]!.id])
  })

  test('short queries (1–2 characters, below the trigram) search the same way, newest first', async () => {
    expect(await found('ñu')).toEqual([c.nunoa!.id])
    expect(await found('%')).toEqual([c.ohiggins!.id])
    expect(await found('_')).toEqual([c.under!.id])
    expect(await found('a')).toEqual([c.under!.id, c.ohiggins!.id, c.k!.id, c.nunoa!.id])
    expect(await found('zz')).toEqual([])
    expect(await found('0k')).toEqual([c.k!.id])
    expect(await found('0-K')).toEqual([c.k!.id])
    expect(await found('28')).toEqual([c.nunoa!.id])
  })

  test('no match, and quotes or FTS syntax in q, answer an empty array', async () => {
    for (const q of ['inexistente', 'a" OR "b', 'NEAR(x y)', '*', 'ferr*']) expect(await found(q)).toEqual([])
  })

  test('limit: default 10, at most 50; newest first', async () => {
    const many = await s.tenant(testRut())
    const made: string[] = []
    for (let i = 0; i < 12; i++) made.push((await create({ razon_social: `Serie Repetida ${i}` }, many)).id)
    expect(ids((await search('repetida', many)).json)).toEqual(made.slice(2).reverse())
    expect(ids((await search('repetida', many, '&limit=3')).json)).toEqual(made.slice(9).reverse())
    expect((await search('repetida', many, '&limit=50')).json).toHaveLength(12)
  })

  test('an edited razón social is searched by its new name only', async () => {
    const x = await create({ razon_social: 'Nombre Antiguo Zeta' }, tenant)
    await put(x.id, { razon_social: 'Nombre Nuevo Omega' }, tenant)
    expect(await found('antiguo')).toEqual([])
    expect(await found('omega')).toEqual([x.id])
  })

  test("another company's clientes are never found", async () => {
    expect(await found('de otra empresa')).toEqual([])
    expect(ids((await search('nunoa', other)).json)).not.toContain(c.nunoa!.id)
  })

  test.each([
    ['', 'q', 'REQUIRED'],
    ['?q=', 'q', 'REQUIRED'],
    ['?q=%20%20', 'q', 'REQUIRED'],
    [`?q=${'a'.repeat(101)}`, 'q', 'TOO_LONG'],
    ['?q=abc&limit=51', 'limit', 'OUT_OF_RANGE'],
    ['?q=abc&limit=0', 'limit', 'OUT_OF_RANGE'],
    ['?q=abc&limit=x', 'limit', 'INVALID_FORMAT'],
  ])('GET /clientes/search%s → 400 %s %s', async (query, field, code) => {
    const res = await s.request('GET', `${CLIENTES}/search${query}`, { headers: { 'X-Api-Key': t.readKey } })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.details[0]).toMatchObject({ field, code })
  })

  test('q of exactly 100 characters is accepted', async () => {
    expect(await found('a'.repeat(100))).toEqual([])
  })
})

describe('credentials', () => {
  test('a read-only key reads but every write is 403 API_KEY_READ_ONLY; a bearer token writes', async () => {
    const c = await create()
    for (const [method, path, body] of [
      ['POST', CLIENTES, { rut: testRut(), razon_social: 'x' }],
      ['PUT', `${CLIENTES}/${c.id}`, { giro: 'x' }],
      ['DELETE', `${CLIENTES}/${c.id}`, undefined],
    ] as const) {
      const res = await s.request(method, path, { headers: { 'X-Api-Key': t.readKey }, body })
      expect(res.status).toBe(403)
      expect(res.json.code).toBe('API_KEY_READ_ONLY')
    }
    expect((await get(`/${c.id}`)).json).toEqual(c)
    for (const path of ['', `/${c.id}`, '/search?q=abc']) expect((await get(path)).status).toBe(200)
    const token = await t.token()
    const res = await s.request('POST', CLIENTES, { headers: { authorization: `Bearer ${token}` }, body: { rut: testRut(), razon_social: 'Con token' } })
    expect(res.status).toBe(201)
  })

  test('no credential → 401 on every operation', async () => {
    for (const [method, path] of [
      ['GET', CLIENTES],
      ['POST', CLIENTES],
      ['GET', `${CLIENTES}/search?q=abc`],
      ['GET', `${CLIENTES}/${crypto.randomUUID()}`],
      ['PUT', `${CLIENTES}/${crypto.randomUUID()}`],
      ['DELETE', `${CLIENTES}/${crypto.randomUUID()}`],
    ] as const)
      expect((await s.request(method, path)).status).toBe(401)
  })
})

test('/docs/json lists the six cliente operations with their bodies and the 204 of delete', async () => {
  const doc = (await s.request('GET', '/docs/json')).json
  const paths = doc.paths as Record<string, Record<string, { operationId?: string; requestBody?: any; responses?: any }>>
  expect(paths[CLIENTES]!.get!.operationId).toBe('listClientes')
  expect(paths[CLIENTES]!.post!.operationId).toBe('createCliente')
  expect(paths[`${CLIENTES}/search`]!.get!.operationId).toBe('searchClientes')
  expect(paths[`${CLIENTES}/{id}`]!.get!.operationId).toBe('getCliente')
  expect(paths[`${CLIENTES}/{id}`]!.put!.operationId).toBe('updateCliente')
  expect(paths[`${CLIENTES}/{id}`]!.delete!.operationId).toBe('deleteCliente')
  const create = paths[CLIENTES]!.post!.requestBody.content['application/json'].schema
  expect(create.required.sort()).toEqual(['razon_social', 'rut'])
  expect(create.properties.direccion).toMatchObject({ maxLength: 300, nullable: true })
  expect(paths[`${CLIENTES}/{id}`]!.delete!.responses['204']).toBeDefined()
})
