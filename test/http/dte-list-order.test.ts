// Issue 27 (defect): GET /dte pages newest first by id, and created_at must agree. Requests that start in one order
// and finish in another (a 60-line document signs and builds slower than a 1-line one) used to get created_at from
// their start and the id from their store, so a page could show created_at going up on the way down.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

let s: TestServer
let t: Tenant
beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut())
  await provisionIssuer(s, t, { tipos: [33], folios: 200 })
})
afterAll(() => s.stop())

const largo = Array.from({ length: 60 }, (_, i) => ({ nombre: `Artículo de inventario número ${i + 1}`, cantidad: 1 + (i % 7), precio: 1000 + i * 37 }))

test('under concurrency created_at never increases down the pages, and the ids strictly decrease', async () => {
  const bodies = Array.from({ length: 80 }, (_, i) => facturaSimple(i % 3 === 0 ? { detalle: largo, auto_send: false } : { auto_send: false }))
  const answers = await Promise.all(bodies.map((b) => issue(s, t, b)))
  for (const a of answers) expect(a.status).toBe(201)

  const seen: Array<{ id: string; created_at: string }> = []
  let cursor: string | null = null
  do {
    const res = await s.request('GET', `/api/v1/billing/dte?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { 'X-Api-Key': t.readKey } })
    expect(res.status).toBe(200)
    seen.push(...res.json.items)
    cursor = res.json.next_cursor
  } while (cursor)

  expect(seen.map((d) => d.id).sort()).toEqual(answers.map((a) => a.json.id as string).sort())
  for (let i = 1; i < seen.length; i++) {
    expect(seen[i]!.id < seen[i - 1]!.id).toBe(true)
    expect(Date.parse(seen[i]!.created_at)).toBeLessThanOrEqual(Date.parse(seen[i - 1]!.created_at))
  }
  // The 201's created_at is the record's.
  const byId = new Map(seen.map((d) => [d.id, d.created_at]))
  for (const a of answers) expect(a.json.created_at).toBe(byId.get(a.json.id)!)
})
