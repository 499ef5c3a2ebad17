// Issue 12 items 1, 3 and 6: every 413 is the envelope with X-Request-Id (declared or streamed size), the rate-limit
// headers ride on every authenticated answer (403 included), and JSON nested past 64 levels is refused unread.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const EMPRESA = '/api/v1/billing/empresa'
const MB = 1024 * 1024
let s: TestServer
let t: Tenant

beforeAll(async () => {
  s = await startTestServer({ flags: { '--rate-limit': '50' } })
  t = await s.tenant(testRut())
})
afterAll(() => s.stop())

const write = () => ({ 'X-Api-Key': t.writeKey })

function expectEnvelope413(res: { status: number; headers: Headers; json: any }): void {
  expect(res.status).toBe(413)
  expect(res.json).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', severity: 'error', details: [] })
  expect(typeof res.json.message).toBe('string')
  const id = res.headers.get('x-request-id')
  expect(id).toMatch(/^[0-9a-f-]{36}$/)
  expect(res.json.context.request_id).toBe(id)
}

/** A body sent chunked (no Content-Length): Bun's fetch streams a ReadableStream body with Transfer-Encoding. */
function chunked(totalBytes: number): ReadableStream<Uint8Array> {
  const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
  let sent = 0
  return new ReadableStream({
    pull(controller) {
      if (sent === 0) controller.enqueue(new TextEncoder().encode('{"giro":"'))
      if (sent >= totalBytes) {
        controller.enqueue(new TextEncoder().encode('"}'))
        controller.close()
        return
      }
      controller.enqueue(chunk)
      sent += chunk.length
    },
  })
}

async function rawRequest(port: number, head: string, body = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head + body))
    let out = ''
    socket.setEncoding('latin1')
    socket.on('data', (d) => {
      out += d
      // One answer is enough: the head and a JSON body that closes.
      if (/\r\n\r\n[\s\S]*\}$/.test(out)) socket.destroy()
    })
    socket.on('close', () => resolve(out))
    socket.on('error', reject)
    setTimeout(() => socket.destroy(), 5000)
  })
}

describe('413 PAYLOAD_TOO_LARGE is always the envelope (DESIGN §5)', () => {
  test('a declared body well over 5 MB: envelope, X-Request-Id, nothing changes', async () => {
    const big = JSON.stringify({ giro: 'x'.repeat(8 * MB) })
    const res = await s.request('PUT', EMPRESA, { headers: { ...write(), 'content-type': 'application/json' }, rawBody: big })
    expectEnvelope413(res)
    expect((await s.request('GET', EMPRESA, { headers: write() })).json.giro).toBe(t.empresa.giro)
  })

  test('a chunked body found too large while reading: envelope, X-Request-Id, nothing changes', async () => {
    const res = await fetch(s.url + EMPRESA, {
      method: 'PUT',
      headers: { ...write(), 'content-type': 'application/json' },
      body: chunked(7 * MB),
      // @ts-expect-error Bun's fetch streams a ReadableStream body; `duplex` is the WHATWG switch for it.
      duplex: 'half',
    })
    const text = await res.text()
    expectEnvelope413({ status: res.status, headers: res.headers, json: JSON.parse(text) })
    expect((await s.request('GET', EMPRESA, { headers: write() })).json.giro).toBe(t.empresa.giro)
  })

  test('a chunked body under the limit is read and validated as usual', async () => {
    const res = await fetch(s.url + EMPRESA, {
      method: 'PUT',
      headers: { ...write(), 'content-type': 'application/json' },
      body: chunked(300 * 1024),
      // @ts-expect-error as above
      duplex: 'half',
    })
    expect(res.status).toBe(400)
    const json = (await res.json()) as any
    expect(json.details).toContainEqual(expect.objectContaining({ field: 'giro', code: 'TOO_LONG' }))
  })

  test('a Content-Length of 10 GB is refused from the headers alone, with the envelope', async () => {
    const port = Number(new URL(s.url).port)
    const answer = await rawRequest(
      port,
      `PUT ${EMPRESA} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${t.writeKey}\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n`,
      '{"giro":"',
    )
    expect(answer).toStartWith('HTTP/1.1 413')
    expect(answer).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/i)
    expect(answer).toContain('"code":"PAYLOAD_TOO_LARGE"')
  })
})

describe('X-RateLimit-* on every authenticated answer (DESIGN §12)', () => {
  test('200, 404, 400 and 403 API_KEY_READ_ONLY all carry them', async () => {
    const answers = [
      await s.request('GET', EMPRESA, { headers: { 'X-Api-Key': t.readKey } }),
      await s.request('GET', '/api/v1/billing/dte/0190f000-0000-7000-8000-000000000000', { headers: { 'X-Api-Key': t.readKey } }),
      await s.request('PUT', EMPRESA, { headers: write(), body: { giro: 5 } }),
      await s.request('PUT', EMPRESA, { headers: { 'X-Api-Key': t.readKey }, body: { giro: 'Otro giro' } }),
    ]
    expect(answers.map((a) => a.status)).toEqual([200, 404, 400, 403])
    expect(answers[3]!.json.code).toBe('API_KEY_READ_ONLY')
    for (const a of answers) {
      expect(a.headers.get('x-ratelimit-limit')).toBe('100')
      expect(Number(a.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0)
      expect(a.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/)
    }
  })
})

describe('JSON nested deeper than 64 levels (issue 12 item 6)', () => {
  const nested = (depth: number, inner = '1') => '['.repeat(depth) + inner + ']'.repeat(depth)

  test('refused with 400 VALIDATION_ERROR at body on every JSON route, nothing changes', async () => {
    const deep = `{"giro":"Nuevo giro","metadata":${'{"a":'.repeat(70)}1${'}'.repeat(70)}}`
    for (const [method, path] of [
      ['PUT', EMPRESA],
      ['POST', '/api/v1/billing/dte'],
      ['POST', '/api/v1/billing/clientes'],
      ['POST', '/api/v1/billing/webhooks'],
      ['POST', '/api/v1/billing/caf'],
    ] as const) {
      const res = await s.request(method, path, {
        headers: { ...write(), 'content-type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
        rawBody: deep,
      })
      expect(res.status).toBe(400)
      expect(res.json.code).toBe('VALIDATION_ERROR')
      expect(res.json.details).toEqual([{ field: 'body', code: 'TOO_MANY', message: expect.stringContaining('64') }])
    }
    expect((await s.request('GET', EMPRESA, { headers: write() })).json.giro).toBe(t.empresa.giro)
  })

  test('a million opening brackets are refused at once, without parsing', async () => {
    const started = performance.now()
    const res = await s.request('PUT', EMPRESA, { headers: { ...write(), 'content-type': 'application/json' }, rawBody: '['.repeat(1_000_000) })
    expect(res.status).toBe(400)
    expect(res.json.details[0]).toMatchObject({ field: 'body', code: 'TOO_MANY' })
    expect(performance.now() - started).toBeLessThan(1000)
  })

  test('64 levels are still parsed (and then validated); brackets inside strings do not count', async () => {
    const at64 = await s.request('PUT', EMPRESA, { headers: { ...write(), 'content-type': 'application/json' }, rawBody: `{"giro":${nested(63)}}` })
    expect(at64.status).toBe(400)
    expect(at64.json.details).toContainEqual(expect.objectContaining({ field: 'giro', code: 'INVALID_TYPE' }))
    const inString = await s.request('PUT', EMPRESA, { headers: write(), body: { giro: `Giro ${'['.repeat(60)}"{{` } })
    expect(inString.status).toBe(200)
    expect(inString.json.giro).toStartWith('Giro [[[')
  })
})
