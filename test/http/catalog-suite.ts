// The conventions clientes and productos share (DESIGN §8, §12), as one table-driven suite against the real server:
// create 201 + Location, 409 with the existing id in context, get, list with cursor and limit bounds, search rules,
// partial update with null clearing, soft delete freeing the unique key, every field error at once, 404 for unknown,
// malformed, deleted and other companies' ids, read-only keys, no credential, the OpenAPI operations.
// A resource's test file calls catalogSuite(its table) and keeps only what is its own (STYLE §5).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testClock } from '../support/clock'
import { startTestServer, testRut, type Tenant, type TestResponse, type TestServer } from '../support/server'

type Body = Record<string, unknown>
type Row = Record<string, any>
/** A field, the code it fails with, and what makes it fail (undefined: not in the JSON). */
type FieldError = readonly [field: string, code: string, patch: Body]

export interface CatalogTable {
  /** The resource as the path and the messages say it: `clientes`. */
  readonly plural: string
  /** One of them: `cliente` (the OpenAPI operation ids say `createCliente`). */
  readonly singular: string
  /** A valid create body, new at each call: its unique value, if it has one, not taken yet. */
  readonly validBody: () => Body
  /** The text field that names a record, required Latin-1 text of up to 200 characters: search finds a record by it. */
  readonly nameField: string
  /** The first POST: what the 201 test's title says, the body sent and the record stored but id and timestamps. */
  readonly created: { readonly says: string; readonly make: () => { readonly body: Body; readonly stored: Body } }
  /** A body with every field at its DESIGN §12 maximum. */
  readonly atMaximum: () => Body
  /** The field unique among a company's live records, and its 409. */
  readonly unique: {
    readonly field: string
    readonly code: string
    /** The key of the existing record's id in the 409's context: `cliente_id`. */
    readonly idKey: string
    /** A value not taken yet. */
    readonly value: () => string
    /** Other spellings of a value that clash with it too, if it has any. */
    readonly spellings?: (value: string) => string[]
  }
  /** POST bodies (the patch over validBody()) refused, besides an `id` and the name field's rules. */
  readonly createErrors: readonly FieldError[]
  /** A body with several failing fields, shape and rules mixed, and every `field:code` the 400 must report. */
  readonly allErrorsAtOnce: { readonly body: Body; readonly errors: readonly string[] }
  /** A partial update: the record before, a change (a null among it clears), then every optional field set to null. */
  readonly update: { readonly before: Body; readonly change: Body; readonly clear: Body }
  /** PUT bodies refused on a record created with `before`, besides an `id`, a `created_at` and a null or blank name. */
  readonly updateErrors: { readonly before: Body; readonly rows: readonly FieldError[] }
  /** List queries refused, `[query, field]`, besides the limit and cursor bounds every list has. */
  readonly listErrors: ReadonlyArray<readonly [query: string, field: string]>
  readonly search: {
    /** Created in this order in a company of their own before any test; the resource's own tests read them by key. */
    readonly records: Readonly<Record<string, Body>>
    /** A record of another company, and a query only it would match. */
    readonly otherCompany: { readonly record: Body; readonly query: string }
    /** `[q, key]`: q finds exactly the record of that key. The first row is also asked from another company. */
    readonly finds: ReadonlyArray<readonly [q: string, key: string]>
    /** What the finds show, for their title: `case, accents, typographic quotes, whitespace`. */
    readonly findsShow: string
  }
  readonly openapi: { readonly required: readonly string[]; readonly property: readonly [name: string, schema: Body] }
}

/** The running suite, for the resource's own tests: its server, companies and requests. */
export interface Catalog {
  readonly s: TestServer
  /** The company every request goes to unless told otherwise. */
  readonly t: Tenant
  /** Another company, whose records must never be seen from `t`. */
  readonly other: Tenant
  /** The table's search records, created (by key). */
  readonly records: Readonly<Record<string, Row>>
  post(body: unknown, tenant?: Tenant): Promise<TestResponse>
  get(path: string, tenant?: Tenant): Promise<TestResponse>
  put(id: string, body: unknown, tenant?: Tenant): Promise<TestResponse>
  del(id: string, tenant?: Tenant): Promise<TestResponse>
  search(q: string, tenant?: Tenant, extra?: string): Promise<TestResponse>
  /** validBody() with `fields` over it, created (201) and returned. */
  create(fields?: Body, tenant?: Tenant): Promise<Row>
  /** The ids search answers in the company of the search records (or `tenant`), once it answered 200 with an array. */
  found(q: string, extra?: string, tenant?: Tenant): Promise<string[]>
  /** Every id of the list, page by page (`limit` a page, `query` appended), checking each page. */
  walk(query: string, tenant: Tenant, limit: number): Promise<string[]>
}

export const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id)

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const MALFORMED_IDS = ['no-es-uuid', '123']
const capitalized = (s: string) => s[0]!.toUpperCase() + s.slice(1)

/** Registers the shared describe blocks for one catalog resource; returns its handle for the resource's own tests. */
export function catalogSuite(table: CatalogTable): Catalog {
  const { plural, singular, nameField, unique } = table
  const BASE = `/api/v1/billing/${plural}`
  let s: TestServer
  let t: Tenant
  let other: Tenant
  let searchTenant: Tenant
  const records: Record<string, Row> = {}

  const post = (body: unknown, tenant = t) => s.request('POST', BASE, { headers: { 'X-Api-Key': tenant.writeKey }, body })
  const get = (path: string, tenant = t) => s.request('GET', `${BASE}${path}`, { headers: { 'X-Api-Key': tenant.readKey } })
  const put = (id: string, body: unknown, tenant = t) => s.request('PUT', `${BASE}/${id}`, { headers: { 'X-Api-Key': tenant.writeKey }, body })
  const del = (id: string, tenant = t) => s.request('DELETE', `${BASE}/${id}`, { headers: { 'X-Api-Key': tenant.writeKey } })
  const search = (q: string, tenant = t, extra = '') => get(`/search?q=${encodeURIComponent(q)}${extra}`, tenant)

  async function create(fields: Body = {}, tenant = t): Promise<Row> {
    const res = await post({ ...table.validBody(), ...fields }, tenant)
    if (res.status !== 201) throw new Error(res.text)
    return res.json
  }

  async function found(q: string, extra = '', tenant = searchTenant): Promise<string[]> {
    const res = await search(q, tenant, extra)
    expect(res.status).toBe(200)
    expect(Array.isArray(res.json)).toBe(true)
    return ids(res.json)
  }

  async function walk(query: string, tenant: Tenant, limit: number): Promise<string[]> {
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const res = await get(`?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, tenant)
      expect(res.status).toBe(200)
      expect(res.json.data.length).toBeLessThanOrEqual(limit)
      seen.push(...ids(res.json.data))
      cursor = res.json.next_cursor
    } while (cursor)
    return seen
  }

  // Every reading of the clock a later millisecond, so an update's updated_at always moves without waiting.
  beforeAll(async () => {
    s = await startTestServer({ clock: testClock({ strictlyIncreasing: true }) })
    t = await s.tenant(testRut())
    other = await s.tenant(testRut())
    searchTenant = await s.tenant(testRut())
    for (const [key, fields] of Object.entries(table.search.records)) records[key] = await create(fields, searchTenant)
    await create(table.search.otherCompany.record, other)
  })
  afterAll(() => s.stop())

  describe(`POST /${plural}`, () => {
    test(`201 with Location: ${table.created.says}, unsent fields null; GET returns the same record`, async () => {
      const { body, stored } = table.created.make()
      const res = await post(body)
      expect(res.status).toBe(201)
      expect(res.json).toEqual({ id: expect.stringMatching(UUID_V7), ...stored, created_at: expect.stringMatching(RFC3339_MS), updated_at: res.json.created_at })
      expect(res.headers.get('location')).toBe(`${BASE}/${res.json.id}`)
      expect((await get(`/${res.json.id}`)).json).toEqual(res.json)
    })

    test('every field at its DESIGN §12 maximum is accepted', async () => {
      const body = table.atMaximum()
      const res = await post(body)
      expect(res.status).toBe(201)
      expect(res.json).toMatchObject(body)
    })

    test(`a ${unique.field} already used by a live ${singular}${unique.spellings ? ', in any spelling,' : ''} → 409 ${unique.code} with the existing id in context`, async () => {
      const first = await create({ [unique.field]: unique.value() })
      const value = first[unique.field] as string
      for (const spelled of [value, ...(unique.spellings?.(value) ?? [])]) {
        const res = await post({ ...table.validBody(), [unique.field]: spelled })
        expect(res.status).toBe(409)
        expect(res.json.code).toBe(unique.code)
        expect(res.json.context).toMatchObject({ [unique.idKey]: first.id, [unique.field]: value, request_id: expect.any(String) })
      }
    })

    test(`the same ${unique.field} in another company is a different ${singular}`, async () => {
      const mine = await create({ [unique.field]: unique.value() })
      const res = await post({ ...table.validBody(), [unique.field]: mine[unique.field] }, other)
      expect(res.status).toBe(201)
      expect(res.json.id).not.toBe(mine.id)
    })

    test.each<FieldError>([
      ['id', 'NOT_ALLOWED', { id: '0190a0e0-0000-7000-8000-000000000000' }],
      [nameField, 'REQUIRED', { [nameField]: undefined }],
      [nameField, 'REQUIRED', { [nameField]: '' }],
      [nameField, 'REQUIRED', { [nameField]: '   ' }],
      [nameField, 'INVALID_TYPE', { [nameField]: null }],
      [nameField, 'TOO_LONG', { [nameField]: 'x'.repeat(201) }],
      [nameField, 'INVALID_VALUE', { [nameField]: 'Café 😀 Limitada' }],
      [nameField, 'INVALID_VALUE', { [nameField]: 'Taza ☕' }],
      ...table.createErrors,
    ])(
      '%s %s → 400 VALIDATION_ERROR and nothing stored',
      async (field, code, patch) => {
        const tenant = await s.tenant(testRut())
        const res = await post({ ...table.validBody(), ...patch }, tenant) // undefined: not in the JSON
        expect(res.status).toBe(400)
        expect(res.json.code).toBe('VALIDATION_ERROR')
        expect(res.json.details).toContainEqual({ field, code, message: expect.any(String) })
        expect((await get('', tenant)).json.data).toEqual([])
      },
    )

    test('every failing field is reported at once, shape and rules together', async () => {
      const res = await post(table.allErrorsAtOnce.body)
      expect(res.status).toBe(400)
      expect(res.json.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual([...table.allErrorsAtOnce.errors].sort())
    })

    test('a body that is not a JSON object → 400; not JSON at all → 400 on body; text/plain → 415', async () => {
      const arr = await post([table.validBody()])
      expect(arr.status).toBe(400)
      expect(arr.json.details[0].field).toBe('body')
      const bad = await s.request('POST', BASE, { headers: { 'X-Api-Key': t.writeKey, 'content-type': 'application/json' }, rawBody: `{"${nameField}":` })
      expect(bad.status).toBe(400)
      expect(bad.json.details[0].field).toBe('body')
      const text = await s.request('POST', BASE, { headers: { 'X-Api-Key': t.writeKey, 'content-type': 'text/plain' }, rawBody: 'hola' })
      expect(text.status).toBe(415)
    })
  })

  describe(`GET /${plural}/{id}`, () => {
    test("unknown, malformed and another company's ids are all 404 NOT_FOUND; the id in capitals is found", async () => {
      const mine = await create()
      for (const [path, tenant] of [[`/${crypto.randomUUID()}`, t], ...MALFORMED_IDS.map((id) => [`/${id}`, t] as const), [`/${mine.id}`, other]] as const) {
        const res = await get(path, tenant)
        expect(res.status).toBe(404)
        expect(res.json.code).toBe('NOT_FOUND')
      }
      expect((await get(`/${mine.id.toUpperCase()}`)).json.id).toBe(mine.id)
    })
  })

  describe(`PUT /${plural}/{id}`, () => {
    test('changes only the fields sent, null clears an optional one, updated_at moves', async () => {
      const before = await create(table.update.before)
      const res = await put(before.id, table.update.change)
      expect(res.status).toBe(200)
      expect(res.json).toEqual({ ...before, ...table.update.change, updated_at: expect.any(String) })
      expect(res.json.updated_at > before.updated_at).toBe(true)
      expect((await get(`/${before.id}`)).json).toEqual(res.json)
      const cleared = await put(before.id, table.update.clear)
      expect(cleared.json).toEqual({ ...res.json, ...table.update.clear, updated_at: expect.any(String) })
      expect((await get(`/${before.id}`)).json).toEqual(cleared.json)
      expect((await put(before.id, {})).json).toEqual(cleared.json)
    })

    test('an empty body changes nothing, not even updated_at', async () => {
      const r = await create()
      const res = await put(r.id, {})
      expect(res.status).toBe(200)
      expect(res.json).toEqual(r)
    })

    test.each<FieldError>([
      ['id', 'NOT_ALLOWED', { id: crypto.randomUUID() }],
      ['created_at', 'NOT_ALLOWED', { created_at: '2020-01-01T00:00:00.000Z' }],
      [nameField, 'INVALID_TYPE', { [nameField]: null }],
      [nameField, 'REQUIRED', { [nameField]: ' ' }],
      ...table.updateErrors.rows,
    ])(`%s %s → 400 and the ${singular} is unchanged`, async (field, code, body) => {
      const r = await create(table.updateErrors.before)
      const res = await put(r.id, body)
      expect(res.status).toBe(400)
      expect(res.json.details).toContainEqual({ field, code, message: expect.any(String) })
      expect((await get(`/${r.id}`)).json).toEqual(r)
    })

    test("unknown, malformed, deleted and another company's ids → 404, nothing changes", async () => {
      const r = await create()
      const gone = await create()
      await del(gone.id)
      for (const [id, tenant] of [[crypto.randomUUID(), t], ...MALFORMED_IDS.map((id) => [id, t] as const), [gone.id, t], [r.id, other]] as const)
        expect((await put(id, table.update.change, tenant)).status).toBe(404)
      expect((await get(`/${r.id}`)).json).toEqual(r)
    })
  })

  describe(`DELETE /${plural}/{id}`, () => {
    test('204 without a body; then gone from get, list and search; a second delete is 404', async () => {
      const r = await create({ [nameField]: 'Registro Efímero Quásar', [unique.field]: unique.value() })
      const value = r[unique.field] as string
      expect(ids((await search('quasar')).json)).toEqual([r.id])
      const res = await del(r.id)
      expect(res.status).toBe(204)
      expect(res.text).toBe('')
      expect((await get(`/${r.id}`)).status).toBe(404)
      expect(ids((await get('?limit=100')).json.data)).not.toContain(r.id)
      expect((await search('quasar')).json).toEqual([])
      expect((await search(value.toLowerCase())).json).toEqual([])
      expect((await del(r.id)).status).toBe(404)
    })

    test(`its ${unique.field} is free again: registered anew as a new ${singular}`, async () => {
      const r = await create({ [unique.field]: unique.value() })
      const value = r[unique.field] as string
      await del(r.id)
      const again = await post({ ...table.validBody(), [unique.field]: value })
      expect(again.status).toBe(201)
      expect(again.json.id).not.toBe(r.id)
      expect(ids((await search(value)).json)).toEqual([again.json.id])
      expect((await post({ ...table.validBody(), [unique.field]: value })).status).toBe(409)
    })

    test(`another company's ${singular} → 404 and it stays; a malformed id → 404`, async () => {
      const r = await create()
      expect((await del(r.id, other)).status).toBe(404)
      for (const id of MALFORMED_IDS) expect((await del(id)).status).toBe(404)
      expect((await get(`/${r.id}`)).status).toBe(200)
    })
  })

  describe(`GET /${plural}`, () => {
    test(`\`data\` newest first, \`next_cursor\`; a walk by cursor sees every ${singular} once; default limit 20`, async () => {
      const tenant = await s.tenant(testRut())
      const made: string[] = []
      for (let i = 0; i < 23; i++) made.push((await create({}, tenant)).id)
      await del(made[5]!, tenant)
      const live = made.filter((_, i) => i !== 5).reverse()
      const first = await get('', tenant)
      expect(first.status).toBe(200)
      expect(ids(first.json.data)).toEqual(live.slice(0, 20))
      expect(first.json.next_cursor).toEqual(expect.any(String))
      expect(await walk('', tenant, 4)).toEqual(live)
      expect((await get('?limit=100', tenant)).json.next_cursor).toBeNull()
      expect(ids((await get('?limit=100', other)).json.data)).not.toContain(live[0])
    })

    test.each([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['cursor=garbage', 'cursor'],
      ['cursor=c1.bm9wZQ', 'cursor'],
      ['desde=1', 'desde'],
      ['orden=asc', 'orden'],
      ...table.listErrors,
    ])('?%s → 400 on %s', async (query, field) => {
      const res = await get(`?${query}`)
      expect(res.status).toBe(400)
      expect(res.json.details[0].field).toBe(field)
    })
  })

  describe(`GET /${plural}/search`, () => {
    test.each(table.search.finds)(`%p finds %s (${table.search.findsShow})`, async (q, key) => {
      expect(await found(q)).toEqual([records[key]!.id])
    })

    test('no match, and quotes or FTS syntax in q, answer an empty array', async () => {
      for (const q of ['inexistente', 'a" OR "b', 'NEAR(x y)', '*', 'ferr*']) expect(await found(q)).toEqual([])
    })

    test('limit: default 10, at most 50; newest first', async () => {
      const many = await s.tenant(testRut())
      const made: string[] = []
      for (let i = 0; i < 12; i++) made.push((await create({ [nameField]: `Serie Repetida ${i}` }, many)).id)
      expect(await found('repetida', '', many)).toEqual(made.slice(2).reverse())
      expect(await found('repetida', '&limit=3', many)).toEqual(made.slice(9).reverse())
      expect(await found('repetida', '&limit=50', many)).toHaveLength(12)
    })

    test(`an edited ${nameField} is searched by its new name only`, async () => {
      const tenant = await s.tenant(testRut())
      const x = await create({ [nameField]: 'Nombre Antiguo Zeta' }, tenant)
      await put(x.id, { [nameField]: 'Nombre Nuevo Omega' }, tenant)
      expect(await found('antiguo', '', tenant)).toEqual([])
      expect(await found('omega', '', tenant)).toEqual([x.id])
    })

    test(`another company's ${plural} are never found`, async () => {
      const [q, key] = table.search.finds[0]!
      expect(await found(table.search.otherCompany.query)).toEqual([])
      expect(ids((await search(q, other)).json)).not.toContain(records[key]!.id)
    })

    test.each([
      ['', 'q', 'REQUIRED'],
      ['?limit=5', 'q', 'REQUIRED'],
      ['?q=', 'q', 'REQUIRED'],
      ['?q=%20%20', 'q', 'REQUIRED'],
      [`?q=${'a'.repeat(101)}`, 'q', 'TOO_LONG'],
      ['?q=abc&limit=51', 'limit', 'OUT_OF_RANGE'],
      ['?q=abc&limit=0', 'limit', 'OUT_OF_RANGE'],
      ['?q=abc&limit=x', 'limit', 'INVALID_FORMAT'],
    ])(`GET /${plural}/search%s → 400 %s %s`, async (query, field, code) => {
      const res = await s.request('GET', `${BASE}/search${query}`, { headers: { 'X-Api-Key': t.readKey } })
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
      const r = await create()
      for (const [method, path, body] of [
        ['POST', BASE, table.validBody()],
        ['PUT', `${BASE}/${r.id}`, table.update.change],
        ['DELETE', `${BASE}/${r.id}`, undefined],
      ] as const) {
        const res = await s.request(method, path, { headers: { 'X-Api-Key': t.readKey }, body })
        expect(res.status).toBe(403)
        expect(res.json.code).toBe('API_KEY_READ_ONLY')
      }
      expect((await get(`/${r.id}`)).json).toEqual(r)
      for (const path of ['', `/${r.id}`, '/search?q=abc']) expect((await get(path)).status).toBe(200)
      const token = await t.token()
      const res = await s.request('POST', BASE, { headers: { authorization: `Bearer ${token}` }, body: table.validBody() })
      expect(res.status).toBe(201)
    })

    test('no credential → 401 on every operation', async () => {
      for (const [method, path] of [
        ['GET', BASE],
        ['POST', BASE],
        ['GET', `${BASE}/search?q=abc`],
        ['GET', `${BASE}/${crypto.randomUUID()}`],
        ['PUT', `${BASE}/${crypto.randomUUID()}`],
        ['DELETE', `${BASE}/${crypto.randomUUID()}`],
      ] as const)
        expect((await s.request(method, path)).status).toBe(401)
    })
  })

  test(`/docs/json lists the six ${singular} operations with their bodies and the 204 of delete`, async () => {
    const doc = (await s.request('GET', '/docs/json')).json
    const paths = doc.paths as Record<string, Record<string, { operationId?: string; requestBody?: any; responses?: any }>>
    const [One, Many] = [capitalized(singular), capitalized(plural)]
    expect(paths[BASE]!.get!.operationId).toBe(`list${Many}`)
    expect(paths[BASE]!.post!.operationId).toBe(`create${One}`)
    expect(paths[`${BASE}/search`]!.get!.operationId).toBe(`search${Many}`)
    expect(paths[`${BASE}/{id}`]!.get!.operationId).toBe(`get${One}`)
    expect(paths[`${BASE}/{id}`]!.put!.operationId).toBe(`update${One}`)
    expect(paths[`${BASE}/{id}`]!.delete!.operationId).toBe(`delete${One}`)
    const createSchema = paths[BASE]!.post!.requestBody.content['application/json'].schema
    expect(createSchema.required.sort()).toEqual([...table.openapi.required].sort())
    const [name, schema] = table.openapi.property
    expect(createSchema.properties[name]).toMatchObject(schema)
    expect(paths[`${BASE}/{id}`]!.delete!.responses['204']).toBeDefined()
  })

  return {
    get s() {
      return s
    },
    get t() {
      return t
    },
    get other() {
      return other
    },
    records,
    post,
    get,
    put,
    del,
    search,
    create,
    found,
    walk,
  }
}
