// Spec 2.17: a producto's precio_unitario is int64. Every integer a JSON number carries exactly, up to 2^53 − 1
// (Number.MAX_SAFE_INTEGER), is stored as a SQLite INTEGER and read back digit for digit by GET, list and search;
// beyond it, and below 0, the price is 400 at precio_unitario.
import { describe, expect, test } from 'bun:test'
import { type Tenant, type TestServer, useTenant } from '../support/server'

const PRODUCTOS = '/api/v1/billing/productos'
let s: TestServer
let t: Tenant

useTenant((server, tenant) => {
  s = server
  t = tenant
})

const write = (method: 'POST' | 'PUT', path: string, rawBody: string) =>
  s.request(method, `${PRODUCTOS}${path}`, { headers: { 'X-Api-Key': t.writeKey, 'content-type': 'application/json' }, rawBody })
const get = (path: string) => s.request('GET', `${PRODUCTOS}${path}`, { headers: { 'X-Api-Key': t.readKey } })

/** How SQLite holds the row's price: its type and its value as text, computed by SQLite itself. */
function stored(id: string): { type: string; text: string } {
  return s.server.deps.store.sqlite
    .query<{ type: string; text: string }, [string]>('SELECT typeof(precio_unitario) AS type, CAST(precio_unitario AS TEXT) AS text FROM productos WHERE id = ?')
    .get(id)!
}

/** The texts are built by hand so the digits on the wire are exactly the ones written here. */
const PRICES = ['9007199254740991', '9000000000123']

describe('precio_unitario up to Number.MAX_SAFE_INTEGER', () => {
  test.each(PRICES)('create with %s: 201, stored as INTEGER, read back exactly by GET, list and search', async (price) => {
    const nombre = `Excavadora ${price}`
    const res = await write('POST', '', `{"nombre":"${nombre}","precio_unitario":${price}}`)
    expect(res.status).toBe(201)
    expect(res.text).toContain(`"precio_unitario":${price}`)
    expect(stored(res.json.id)).toEqual({ type: 'integer', text: price })
    const one = await get(`/${res.json.id}`)
    expect(one.text).toContain(`"precio_unitario":${price}`)
    expect(one.json.precio_unitario).toBe(Number(price))
    const list = await get('')
    expect(list.json.data.find((p: { id: string }) => p.id === res.json.id).precio_unitario).toBe(Number(price))
    expect(list.text).toContain(`"precio_unitario":${price}`)
    const found = await get(`/search?q=${encodeURIComponent(nombre)}`)
    expect(found.json.map((p: { id: string; precio_unitario: number }) => [p.id, p.precio_unitario])).toEqual([[res.json.id, Number(price)]])
    expect(found.text).toContain(`"precio_unitario":${price}`)
  })

  test.each(PRICES)('update to %s: 200, stored and read back exactly', async (price) => {
    const created = await write('POST', '', '{"nombre":"Grúa torre","precio_unitario":1}')
    const res = await write('PUT', `/${created.json.id}`, `{"precio_unitario":${price}}`)
    expect(res.status).toBe(200)
    expect(res.text).toContain(`"precio_unitario":${price}`)
    expect(stored(created.json.id)).toEqual({ type: 'integer', text: price })
    expect((await get(`/${created.json.id}`)).text).toContain(`"precio_unitario":${price}`)
  })
})

describe('beyond int64 as JSON carries it, or negative → 400 at precio_unitario', () => {
  // 9007199254740993 parses to 2^53 as well: past 2^53 − 1 a JSON number no longer names one integer.
  test.each(['9007199254740992', '9007199254740993', '-1', '-9007199254740991'])('%s on create and on update, nothing changed', async (price) => {
    const created = await write('POST', '', '{"nombre":"Perforadora","precio_unitario":500}')
    for (const res of [
      await write('POST', '', `{"nombre":"Perforadora ${price}","precio_unitario":${price}}`),
      await write('PUT', `/${created.json.id}`, `{"precio_unitario":${price}}`),
    ]) {
      expect(res.status).toBe(400)
      expect(res.json.code).toBe('VALIDATION_ERROR')
      expect(res.json.details).toEqual([{ field: 'precio_unitario', code: 'OUT_OF_RANGE', message: expect.any(String) }])
    }
    expect((await get(`/${created.json.id}`)).json.precio_unitario).toBe(500)
    expect((await get(`/search?q=${encodeURIComponent(`Perforadora ${price}`)}`)).json).toEqual([])
  })
})
