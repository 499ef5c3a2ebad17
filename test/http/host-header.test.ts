// Requests whose Host Bun cannot make a URL of, or Elysia cannot route (issue 18, "Hostile input"): HTTP/1.0 without
// Host, an empty or malformed Host, a Host under 4 characters, two Host lines. Failed before: the first three were a bare
// 500 {"code":"INTERNAL_ERROR"} from Bun's error handler (new URL threw), a short Host a 405 naming the very method
// sent, two Host lines were served as the first one's.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { exchange, head } from '../security/fuzz/raw-http'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

let s: TestServer
let t: Tenant
let port: number

beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut())
  port = Number(new URL(s.url).port)
})
afterAll(() => s.stop())

async function send(bytes: string) {
  const res = await exchange(port, [{ bytes: Buffer.from(bytes, 'latin1') }], { timeoutMs: 10_000 })
  expect(res.answers.length).toBe(1)
  const answer = res.answers[0]!
  return { status: answer.status, headers: answer.headers, json: JSON.parse(answer.body.toString('utf8')) }
}

test('HTTP/1.0 without Host is served: /health and an authenticated read', async () => {
  expect((await send(head('GET', '/health', [], 'HTTP/1.0'))).status).toBe(200)
  const empresa = await send(head('GET', '/api/v1/billing/empresa', [['X-Api-Key', t.writeKey]], 'HTTP/1.0'))
  expect(empresa.status).toBe(200)
  expect(empresa.json.rut).toBe(t.empresa.rut)
})

test.each([[''], ['a b'], ['x:99999'], ['@evil'], ['[::1']])('Host %p is 400 VALIDATION_ERROR at Host, in the envelope', async (host) => {
  const res = await send(head('GET', '/api/v1/billing/empresa', [['Host', host], ['X-Api-Key', t.writeKey]]))
  expect(res.status).toBe(400)
  expect(res.json).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'Host', code: 'INVALID_FORMAT' }] })
  expect(res.json.context.request_id).toBe(res.headers['x-request-id']![0])
})

test.each([['x'], ['ab'], ['x:1'], ['abc']])('a short Host %p routes like any other', async (host) => {
  const read = await send(head('GET', '/api/v1/billing/empresa', [['Host', host], ['X-Api-Key', t.writeKey]]))
  expect(read.status).toBe(200)
  const body = JSON.stringify({ rut: '11111111-2', razon_social: 'x' })
  const write = await send(head('POST', '/api/v1/billing/clientes', [['Host', host], ['X-Api-Key', t.writeKey], ['Content-Type', 'application/json'], ['Content-Length', String(body.length)]]) + body)
  expect(write.status).toBe(400)
  expect(write.json.details).toContainEqual(expect.objectContaining({ field: 'rut', code: 'INVALID_RUT' }))
})

test('two Host lines are 400 VALIDATION_ERROR at Host (RFC 9112 §3.2), whichever comes first', async () => {
  for (const hosts of [['localhost', 'evil.example'], ['evil.example', 'localhost'], ['localhost', 'localhost']]) {
    const res = await send(head('GET', '/api/v1/billing/empresa', [...hosts.map((h) => ['Host', h] as const), ['X-Api-Key', t.writeKey]]))
    expect(res.status).toBe(400)
    expect(res.json.details).toEqual([expect.objectContaining({ field: 'Host', code: 'INVALID_FORMAT' })])
  }
})
