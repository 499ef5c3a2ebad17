// Searches with control characters (issue 18, "Hostile input", found by test/soak/fuzz-soak.ts seed 20261127 #15383):
// 200, and a term among control characters is still found. Failed before: a NUL in `q` reached FTS5's MATCH, whose
// query parser stops at it ("SQLiteError: unterminated string"): 500 INTERNAL_ERROR and an error line per request.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

let s: TestServer
let t: Tenant

beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut())
  const post = (path: string, body: unknown) => s.request('POST', path, { headers: { 'X-Api-Key': t.writeKey }, body })
  expect((await post('/api/v1/billing/productos', { nombre: 'Martillo carpintero', codigo: 'MAR-16' })).status).toBe(201)
  expect((await post('/api/v1/billing/clientes', { rut: '11.111.111-1', razon_social: 'Martillos del Sur' })).status).toBe(201)
})
afterAll(() => s.stop())

test.each([['productos'], ['clientes']])('/%s/search with control characters: 200 (400 at q when nothing else is left), the term around them found', async (kind) => {
  for (const q of ['\u0000martillo', 'martillo\u0000', '\u0000z\u0002\u0000\u0006z\u007fz', '\u0000', 'mar\u0000', '\u0007martillo\u001b']) {
    const res = await s.request('GET', `/api/v1/billing/${kind}/search?q=${encodeURIComponent(q)}`, { headers: { 'X-Api-Key': t.readKey } })
    // Only a query of control characters alone is empty once they are folded away: 400 at q, like an empty q.
    const blank = q.replace(/[\u0000-\u001f\u007f]/g, '').trim() === ''
    expect({ q, status: res.status }).toEqual({ q, status: blank ? 400 : 200 })
    if (blank) expect(res.json.details.map((d: { field: string }) => d.field)).toEqual(['q'])
    if (q.includes('martillo')) expect({ q, found: res.json.length }).toEqual({ q, found: 1 })
  }
  expect(s.logs.filter((l) => l.level === 'error')).toEqual([])
})
