// DESIGN §5 and §12 protocol rules: envelopes, request ids, 404/405/413/415, malformed JSON, 500 without a stack, logs.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const EMPRESA = '/api/v1/billing/empresa'
let s: TestServer
let t: Tenant

beforeAll(async () => {
  s = await startTestServer({ env: { TIMBRE_CORS_ORIGINS: 'https://app.example.cl' } })
  t = await s.tenant(testRut())
})
afterAll(() => s.stop())

const write = () => ({ 'X-Api-Key': t.writeKey })

describe('request ids', () => {
  test('every response carries X-Request-Id, errors repeat it in context.request_id', async () => {
    for (const [method, path, headers] of [
      ['GET', '/health', {}],
      ['GET', '/nope', {}],
      ['GET', EMPRESA, {}],
      ['GET', EMPRESA, write()],
    ] as const) {
      const res = await s.request(method, path, { headers })
      const id = res.headers.get('x-request-id')
      expect(id).toMatch(/^[0-9a-f-]{36}$/)
      if (res.status >= 400) expect(res.json.context.request_id).toBe(id)
    }
  })

  test("a client's safe X-Request-Id is echoed; an unsafe one is replaced", async () => {
    const kept = await s.request('GET', '/health', { headers: { 'X-Request-Id': 'pos-42.caja_3' } })
    expect(kept.headers.get('x-request-id')).toBe('pos-42.caja_3')
    const replaced = await s.request('GET', '/health', { headers: { 'X-Request-Id': 'a b<script>' } })
    expect(replaced.headers.get('x-request-id')).not.toBe('a b<script>')
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  })
})

describe('routing errors', () => {
  test('unknown route → 404 NOT_FOUND envelope (also under the API prefix)', async () => {
    for (const path of ['/nope', '/api/v1/billing/nada']) {
      const res = await s.request('GET', path, { headers: write() })
      expect(res.status).toBe(404)
      expect(res.json).toMatchObject({ code: 'NOT_FOUND', severity: 'error', details: [] })
    }
  })

  test('wrong method → 405 METHOD_NOT_ALLOWED with Allow', async () => {
    const res = await s.request('DELETE', EMPRESA, { headers: write() })
    expect(res.status).toBe(405)
    expect(res.json.code).toBe('METHOD_NOT_ALLOWED')
    expect(res.headers.get('allow')).toBe('GET, HEAD, PUT')
  })
})

describe('bodies', () => {
  test('malformed JSON → 400 VALIDATION_ERROR on field body, nothing changes', async () => {
    const res = await s.request('PUT', EMPRESA, { headers: { ...write(), 'content-type': 'application/json' }, rawBody: '{"giro": "x",' })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.details).toEqual([{ field: 'body', code: 'INVALID_FORMAT', message: expect.any(String) }])
  })

  test('a non-JSON content type → 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await s.request('PUT', EMPRESA, { headers: { ...write(), 'content-type': type }, rawBody: 'giro=x' })
      expect(res.status).toBe(415)
      expect(res.json.code).toBe('UNSUPPORTED_MEDIA_TYPE')
    }
  })

  test('a body over 5 MB → 413 PAYLOAD_TOO_LARGE, nothing changes', async () => {
    const big = JSON.stringify({ giro: 'x'.repeat(5 * 1024 * 1024) })
    const res = await s.request('PUT', EMPRESA, { headers: { ...write(), 'content-type': 'application/json' }, rawBody: big })
    expect(res.status).toBe(413)
    expect(res.json.code).toBe('PAYLOAD_TOO_LARGE')
    expect((await s.request('GET', EMPRESA, { headers: write() })).json.giro).toBe(t.empresa.giro)
  })

  test('a body just under 5 MB is read (and then validated)', async () => {
    const body = JSON.stringify({ giro: 'x'.repeat(5 * 1024 * 1024 - 100) })
    const res = await s.request('PUT', EMPRESA, { headers: { ...write(), 'content-type': 'application/json' }, rawBody: body })
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual(expect.objectContaining({ field: 'giro', code: 'TOO_LONG' }))
  })
})

describe('internal errors', () => {
  test('500 INTERNAL_ERROR carries context.request_id, never a stack; the log has the stack', async () => {
    const victim = await s.tenant(testRut())
    // Corrupt the store behind the server's back: the credential's company vanishes, which "cannot happen".
    const raw = new Database(join(s.dataDir, 'timbre.db'))
    raw.run('PRAGMA foreign_keys = OFF')
    raw.run('DELETE FROM empresas WHERE id = ?', [victim.empresa.id])
    raw.close()
    const res = await s.request('GET', EMPRESA, { headers: { 'X-Api-Key': victim.readKey } })
    expect(res.status).toBe(500)
    expect(res.json.code).toBe('INTERNAL_ERROR')
    expect(res.json.context).toEqual({ request_id: res.headers.get('x-request-id') })
    expect(res.text).not.toContain('at ')
    expect(res.text).not.toContain('.ts')
    const logged = s.logs.find((l) => l.event === 'http.unhandled' && l.request_id === res.headers.get('x-request-id'))
    expect(String(logged?.stack)).toContain('empresa')
  })
})

describe('request log', () => {
  test('one JSON line per request with the fields of DESIGN §12 and no secrets', async () => {
    const res = await s.request('PUT', EMPRESA, { headers: write(), body: { giro: 'Asesorías contables' } })
    const id = res.headers.get('x-request-id')
    const lines = s.logs.filter((l) => l.event === 'http.request' && l.request_id === id)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ level: 'info', empresa_id: t.empresa.id, method: 'PUT', route: '/api/v1/billing/empresa', status: 200 })
    expect(typeof lines[0]!.duration_ms).toBe('number')
    expect(typeof lines[0]!.ts).toBe('string')
    const everything = JSON.stringify(s.logs)
    expect(everything).not.toContain(t.writeKey)
    expect(everything).not.toContain(t.readKey)
    expect(everything).not.toContain('Asesorías contables')
  })
})

describe('CORS', () => {
  test('allowed origin gets CORS headers and a preflight answer; others get none', async () => {
    const pre = await s.request('OPTIONS', EMPRESA, { headers: { Origin: 'https://app.example.cl', 'Access-Control-Request-Method': 'PUT' } })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example.cl')
    expect(pre.headers.get('access-control-allow-headers')).toContain('X-Api-Key')
    const got = await s.request('GET', EMPRESA, { headers: { ...write(), Origin: 'https://app.example.cl' } })
    expect(got.headers.get('access-control-allow-origin')).toBe('https://app.example.cl')
    const other = await s.request('GET', EMPRESA, { headers: { ...write(), Origin: 'https://evil.example' } })
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('rate limit', () => {
  test('authenticated answers carry X-RateLimit-*; past the burst → 429 RATE_LIMITED with Retry-After', async () => {
    const limited = await startTestServer({ flags: { '--rate-limit': '2' } })
    try {
      const tenant = await limited.tenant(testRut())
      const h = { 'X-Api-Key': tenant.readKey }
      const first = await limited.request('GET', EMPRESA, { headers: h })
      expect(first.headers.get('x-ratelimit-limit')).toBe('4')
      expect(first.headers.get('x-ratelimit-remaining')).toBe('3')
      expect(Number(first.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(0)
      const statuses: number[] = []
      let refused: Awaited<ReturnType<typeof limited.request>> | null = null
      for (let i = 0; i < 6; i++) {
        const r = await limited.request('GET', EMPRESA, { headers: h })
        statuses.push(r.status)
        if (r.status === 429) refused ??= r
      }
      expect(statuses.filter((x) => x === 200).length).toBeLessThanOrEqual(4)
      expect(refused?.json.code).toBe('RATE_LIMITED')
      expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      // Another credential has its own bucket.
      expect((await limited.request('GET', EMPRESA, { headers: { 'X-Api-Key': tenant.writeKey } })).status).toBe(200)
    } finally {
      await limited.stop()
    }
  })
})

describe('busy database', () => {
  test('a write lock held by another process for more than 5 s → 503 SERVICE_UNAVAILABLE with Retry-After; nothing changes', async () => {
    const locker = new Database(join(s.dataDir, 'timbre.db'))
    locker.run('BEGIN IMMEDIATE')
    try {
      const res = await s.request('PUT', EMPRESA, { headers: write(), body: { giro: 'Bloqueado' } })
      expect(res.status).toBe(503)
      expect(res.json.code).toBe('SERVICE_UNAVAILABLE')
      expect(res.headers.get('retry-after')).toBe('5')
    } finally {
      locker.run('ROLLBACK')
      locker.close()
    }
    expect((await s.request('GET', EMPRESA, { headers: write() })).json.giro).not.toBe('Bloqueado')
  }, 20_000)
})
