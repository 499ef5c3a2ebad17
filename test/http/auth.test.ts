// DESIGN §4: every way a caller is admitted or refused, against a real server on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { generateKeyPairSync, createHmac } from 'node:crypto'
import { renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SignJWT, exportJWK, calculateJwkThumbprint, decodeJwt, type JWTPayload } from 'jose'
import { tokenIssue } from '../../src/cli/token'
import { revokeApiKey, createApiKey } from '../../src/services/api-keys'
import { issueToken } from '../../src/services/tokens'
import { testClock } from '../support/clock'
import { startTestServer, tempDir, testRut, type Tenant, type TestServer } from '../support/server'

const EMPRESA = '/api/v1/billing/empresa'
let s: TestServer
let a: Tenant
let b: Tenant
// External token issuers (TIMBRE_JWT_PUBLIC_KEYS): their public keys are configured, their private keys sign tokens
// here. `external` is a bare path, as before issuers had an `iss`; `idp` must say iss and aud; `partner` only iss.
const external = generateKeyPairSync('rsa', { modulusLength: 2048 })
const idp = generateKeyPairSync('rsa', { modulusLength: 2048 })
const partner = generateKeyPairSync('rsa', { modulusLength: 2048 })
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 })
const IDP_ISS = 'https://idp.example/realms/facturas'
const PARTNER_ISS = 'https://partner.example'

const b64url = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')

beforeAll(async () => {
  const keyDir = tempDir('timbre-jwks-')
  const pem = (name: string, pair: typeof external) => {
    const path = join(keyDir, name)
    writeFileSync(path, pair.publicKey.export({ type: 'spki', format: 'pem' }))
    return path
  }
  const keys = [pem('issuer.pem', external), `${pem('idp.pem', idp)}#iss=${encodeURIComponent(IDP_ISS)}&aud=timbre`, `${pem('partner.pem', partner)}#iss=${PARTNER_ISS}`]
  s = await startTestServer({ env: { TIMBRE_JWT_PUBLIC_KEYS: keys.join(',') } })
  a = await s.tenant(testRut(), 'Empresa A SpA')
  b = await s.tenant(testRut(), 'Empresa B SpA')
})
afterAll(() => s.stop())

function expectEnvelope(res: { status: number; json: any; headers: Headers }, status: number, code: string) {
  expect(res.status).toBe(status)
  expect(res.json.code).toBe(code)
  expect(res.json.error).toBe(res.json.message)
  expect(typeof res.json.message).toBe('string')
  expect(res.json.context.request_id).toBe(res.headers.get('x-request-id'))
}

describe('API keys', () => {
  test('no credential → 401 UNAUTHORIZED', async () => {
    expectEnvelope(await s.request('GET', EMPRESA), 401, 'UNAUTHORIZED')
  })

  test('unknown, malformed and empty keys → 401', async () => {
    for (const key of ['timbre_' + 'x'.repeat(43), 'not-a-key', ' '])
      expectEnvelope(await s.request('GET', EMPRESA, { headers: { 'X-Api-Key': key } }), 401, 'UNAUTHORIZED')
  })

  test('a read key reads its own company', async () => {
    const res = await s.request('GET', EMPRESA, { headers: { 'X-Api-Key': a.readKey } })
    expect(res.status).toBe(200)
    expect(res.json.id).toBe(a.empresa.id)
    expect(res.json.rut).toBe(a.empresa.rut)
  })

  test('a read key cannot write: 403 API_KEY_READ_ONLY with an action, and nothing changes', async () => {
    const res = await s.request('PUT', EMPRESA, { headers: { 'X-Api-Key': a.readKey }, body: { giro: 'Otro giro' } })
    expectEnvelope(res, 403, 'API_KEY_READ_ONLY')
    expect(res.json.action).toContain('--write')
    const after = await s.request('GET', EMPRESA, { headers: { 'X-Api-Key': a.readKey } })
    expect(after.json.giro).toBe(a.empresa.giro)
  })

  test('a write key writes', async () => {
    const res = await s.request('PUT', EMPRESA, { headers: { 'X-Api-Key': a.writeKey }, body: { giro: 'Desarrollo de software' } })
    expect(res.status).toBe(200)
    expect(res.json.giro).toBe('Desarrollo de software')
  })

  test('a revoked key is refused on the very next request', async () => {
    const key = createApiKey(s.server.deps, { empresaId: a.empresa.id, write: false })
    expect((await s.request('GET', EMPRESA, { headers: { 'X-Api-Key': key.key } })).status).toBe(200)
    revokeApiKey(s.server.deps, { id: key.id })
    expectEnvelope(await s.request('GET', EMPRESA, { headers: { 'X-Api-Key': key.key } }), 401, 'UNAUTHORIZED')
  })

  test('an expired key is refused', async () => {
    const key = createApiKey(s.server.deps, { empresaId: a.empresa.id, write: false, expiresAt: new Date(Date.now() - 1000).toISOString() })
    expectEnvelope(await s.request('GET', EMPRESA, { headers: { 'X-Api-Key': key.key } }), 401, 'UNAUTHORIZED')
  })

  test('keys are stored only as SHA-256 hashes', () => {
    const rows = s.server.deps.store.sqlite.query('SELECT key_hash, prefix FROM api_keys').all() as Array<{ key_hash: string; prefix: string }>
    const dump = JSON.stringify(rows)
    expect(dump).not.toContain(a.readKey)
    expect(dump).not.toContain(a.writeKey)
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.key_hash) && r.prefix.length === 12)).toBe(true)
  })
})

describe('bearer tokens', () => {
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` })

  test('a valid instance token reads and writes its company', async () => {
    const token = await a.token()
    expect((await s.request('GET', EMPRESA, { headers: bearer(token) })).json.id).toBe(a.empresa.id)
    const put = await s.request('PUT', EMPRESA, { headers: bearer(token), body: { ciudad: 'Valparaíso' } })
    expect(put.status).toBe(200)
    expect(put.json.ciudad).toBe('Valparaíso')
  })

  test('the bearer token wins when both headers come', async () => {
    const res = await s.request('GET', EMPRESA, { headers: { ...bearer(await b.token()), 'X-Api-Key': a.readKey } })
    expect(res.json.id).toBe(b.empresa.id)
  })

  test('an expired token → 401', async () => {
    const now = Math.floor(Date.now() / 1000)
    const token = await new SignJWT({ empresa_id: a.empresa.id })
      .setProtectedHeader({ alg: 'RS256', kid: s.server.deps.keyring.signing.kid })
      .setIssuedAt(now - 7200)
      .setExpirationTime(now - 120)
      .sign(s.server.deps.keyring.signing.privateKey)
    expectEnvelope(await s.request('GET', EMPRESA, { headers: bearer(token) }), 401, 'UNAUTHORIZED')
  })

  test('expired by less than the 60 s clock skew is still accepted; nbf in the future is not', async () => {
    const now = Math.floor(Date.now() / 1000)
    const sign = (claims: { exp: number; nbf?: number }) => {
      const jwt = new SignJWT({ empresa_id: a.empresa.id }).setProtectedHeader({ alg: 'RS256', kid: s.server.deps.keyring.signing.kid }).setExpirationTime(claims.exp)
      if (claims.nbf) jwt.setNotBefore(claims.nbf)
      return jwt.sign(s.server.deps.keyring.signing.privateKey)
    }
    expect((await s.request('GET', EMPRESA, { headers: bearer(await sign({ exp: now - 20 })) })).status).toBe(200)
    expect((await s.request('GET', EMPRESA, { headers: bearer(await sign({ exp: now + 600, nbf: now + 300 })) })).status).toBe(401)
  })

  test('alg none → 401', async () => {
    const token = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ empresa_id: a.empresa.id, exp: Math.floor(Date.now() / 1000) + 600 })}.`
    expectEnvelope(await s.request('GET', EMPRESA, { headers: bearer(token) }), 401, 'UNAUTHORIZED')
  })

  test('HS256 signed with the public key as secret (algorithm confusion) → 401', async () => {
    const pem = s.server.deps.keyring.verifying.get(s.server.deps.keyring.signing.kid)!.key.export({ type: 'spki', format: 'pem' }).toString()
    const head = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ empresa_id: a.empresa.id, exp: Math.floor(Date.now() / 1000) + 600 })}`
    const token = `${head}.${createHmac('sha256', pem).update(head).digest('base64url')}`
    expectEnvelope(await s.request('GET', EMPRESA, { headers: bearer(token) }), 401, 'UNAUTHORIZED')
  })

  test('a token signed by an unknown key → 401; by the configured external issuer → 200, picked by kid', async () => {
    const claims = { empresa_id: b.empresa.id }
    const exp = Math.floor(Date.now() / 1000) + 600
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256' }).setExpirationTime(exp).sign(stranger.privateKey)
    expectEnvelope(await s.request('GET', EMPRESA, { headers: bearer(forged) }), 401, 'UNAUTHORIZED')
    const kid = await calculateJwkThumbprint(await exportJWK(external.publicKey))
    const good = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).setExpirationTime(exp).sign(external.privateKey)
    const res = await s.request('GET', EMPRESA, { headers: bearer(good) })
    expect(res.status).toBe(200)
    expect(res.json.id).toBe(b.empresa.id)
    const noKid = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256' }).setExpirationTime(exp).sign(external.privateKey)
    expect((await s.request('GET', EMPRESA, { headers: bearer(noKid) })).status).toBe(200)
    const wrongKid = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'nope' }).setExpirationTime(exp).sign(external.privateKey)
    expect((await s.request('GET', EMPRESA, { headers: bearer(wrongKid) })).status).toBe(401)
  })

  test('missing exp, missing or non-uuid empresa_id, or an unknown company → 401', async () => {
    const key = s.server.deps.keyring.signing.privateKey
    const kid = s.server.deps.keyring.signing.kid
    const exp = Math.floor(Date.now() / 1000) + 600
    const tokens = [
      await new SignJWT({ empresa_id: a.empresa.id }).setProtectedHeader({ alg: 'RS256', kid }).sign(key),
      await new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid }).setExpirationTime(exp).sign(key),
      await new SignJWT({ empresa_id: 'empresa-a' }).setProtectedHeader({ alg: 'RS256', kid }).setExpirationTime(exp).sign(key),
      await new SignJWT({ empresa_id: crypto.randomUUID() }).setProtectedHeader({ alg: 'RS256', kid }).setExpirationTime(exp).sign(key),
    ]
    for (const token of tokens) expectEnvelope(await s.request('GET', EMPRESA, { headers: bearer(token) }), 401, 'UNAUTHORIZED')
  })

  test('a malformed Authorization header → 401', async () => {
    for (const value of ['Bearer', 'Basic dXNlcjpwYXNz', 'Bearer a.b.c', 'Bearer x y'])
      expectEnvelope(await s.request('GET', EMPRESA, { headers: { Authorization: value } }), 401, 'UNAUTHORIZED')
  })
})

describe('token issuers: iss and aud per key (issue 18, hole 7)', () => {
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` })
  const get = async (token: string) => (await s.request('GET', EMPRESA, { headers: bearer(token) })).status
  const exp = () => Math.floor(Date.now() / 1000) + 600
  const kidOf = async (pair: typeof external) => calculateJwkThumbprint(await exportJWK(pair.publicKey))
  async function sign(pair: typeof external, claims: JWTPayload, opts: { kid?: boolean } = {}) {
    const header = opts.kid === false ? { alg: 'RS256' } : { alg: 'RS256', kid: await kidOf(pair) }
    return new SignJWT({ empresa_id: a.empresa.id, ...claims }).setProtectedHeader(header).setExpirationTime(exp()).sign(pair.privateKey)
  }

  test("a configured issuer's tokens must carry its iss and aud, else 401", async () => {
    expect(await get(await sign(idp, { iss: IDP_ISS, aud: 'timbre' }))).toBe(200)
    expect(await get(await sign(idp, { iss: IDP_ISS, aud: ['otra-app', 'timbre'] }))).toBe(200)
    expect(await get(await sign(idp, { iss: 'https://idp.example/realms/otro', aud: 'timbre' }))).toBe(401)
    expect(await get(await sign(idp, { aud: 'timbre' }))).toBe(401)
    expect(await get(await sign(idp, { iss: IDP_ISS }))).toBe(401)
    expect(await get(await sign(idp, { iss: IDP_ISS, aud: 'otra-app' }))).toBe(401)
    // Without aud configured, aud is not looked at; iss still is.
    expect(await get(await sign(partner, { iss: PARTNER_ISS, aud: 'cualquiera' }))).toBe(200)
    expect(await get(await sign(partner, { iss: IDP_ISS, aud: 'timbre' }))).toBe(401)
  })

  test("without kid the token's iss picks the key; a key's signature under another issuer's iss is refused", async () => {
    expect(await get(await sign(idp, { iss: IDP_ISS, aud: 'timbre' }, { kid: false }))).toBe(200)
    expect(await get(await sign(partner, { iss: PARTNER_ISS }, { kid: false }))).toBe(200)
    expect(await get(await sign(partner, { iss: IDP_ISS, aud: 'timbre' }, { kid: false }))).toBe(401)
    expect(await get(await sign(idp, { iss: `timbre:${s.server.deps.keyring.signing.kid}` }))).toBe(401)
  })

  test('a key configured as a bare path (as before) keeps accepting its tokens whatever their iss', async () => {
    expect(await get(await sign(external, {}))).toBe(200)
    expect(await get(await sign(external, { iss: 'https://anything.example' }))).toBe(200)
    // …and serve says so at start, for that key only.
    const warned = s.logs.filter((l) => l.event === 'auth.issuer_unchecked')
    expect(warned.map((l) => String(l.path).split('/').pop())).toEqual(['issuer.pem'])
  })

  test('instance tokens carry iss timbre:<kid> and are checked for it; those of older versions, without iss, still pass until they expire', async () => {
    const kid = s.server.deps.keyring.signing.kid
    const issued = await a.token()
    expect(decodeJwt(issued).iss).toBe(`timbre:${kid}`)
    expect(await get(issued)).toBe(200)
    const instance = { privateKey: s.server.deps.keyring.signing.privateKey } as typeof external
    const signed = (claims: JWTPayload) =>
      new SignJWT({ empresa_id: a.empresa.id, ...claims }).setProtectedHeader({ alg: 'RS256', kid }).setExpirationTime(exp()).sign(instance.privateKey)
    expect(await get(await signed({}))).toBe(200)
    expect(await get(await signed({ iss: IDP_ISS, aud: 'timbre' }))).toBe(401)
    expect(await get(await signed({ iss: 'timbre:otra-instancia' }))).toBe(401)
  })

  test('timbre token issue: 15 minutes unless --ttl says otherwise, iss timbre:<kid>, and the running server accepts it', async () => {
    const run = async (flags: Record<string, string>) =>
      ((await tokenIssue.run({ flags: { '--empresa': a.empresa.id, '--data-dir': s.dataDir, ...flags }, positionals: [] })) as { token: string }).token
    const token = await run({})
    const claims = decodeJwt(token)
    expect(claims.exp! - claims.iat!).toBe(15 * 60)
    expect(claims.iss).toBe(`timbre:${s.server.deps.keyring.signing.kid}`)
    expect(await get(token)).toBe(200)
    const longer = decodeJwt(await run({ '--ttl': '3600' }))
    expect(longer.exp! - longer.iat!).toBe(3600)
  })

  test("revoking (README): a new instance key refuses every token of the old one; removing an issuer's key refuses its tokens", async () => {
    const dataDir = tempDir('timbre-rotate-')
    const keyDir = tempDir('timbre-rotate-keys-')
    const idpPath = join(keyDir, 'idp.pem')
    writeFileSync(idpPath, idp.publicKey.export({ type: 'spki', format: 'pem' }))
    const first = await startTestServer({ dataDir, env: { TIMBRE_JWT_PUBLIC_KEYS: `${idpPath}#iss=${IDP_ISS}&aud=timbre` } })
    const tenant = await first.tenant(testRut())
    const old = await tenant.token()
    const fromIdp = await new SignJWT({ empresa_id: tenant.empresa.id, iss: IDP_ISS, aud: 'timbre' }).setProtectedHeader({ alg: 'RS256' }).setExpirationTime(exp()).sign(idp.privateKey)
    const asBearer = (t: TestServer, token: string) => t.request('GET', EMPRESA, { headers: bearer(token) })
    expect((await asBearer(first, old)).status).toBe(200)
    expect((await asBearer(first, fromIdp)).status).toBe(200)
    await first.stop()
    renameSync(join(dataDir, 'jwt-private.pem'), join(dataDir, 'jwt-private.pem.old'))
    const second = await startTestServer({ dataDir })
    try {
      expect((await asBearer(second, old)).status).toBe(401)
      expect((await asBearer(second, fromIdp)).status).toBe(401)
      const fresh = (await issueToken(second.server.deps, { empresaId: tenant.empresa.id, ttlSeconds: 60 })).token
      expect((await asBearer(second, fresh)).status).toBe(200)
    } finally {
      await second.stop()
      for (const dir of [dataDir, keyDir]) rmSync(dir, { recursive: true, force: true })
    }
  })

  test('HS256 signed with an external issuer\'s public key PEM as secret → 401, with or without its kid', async () => {
    const pem = idp.publicKey.export({ type: 'spki', format: 'pem' }).toString()
    for (const header of [{ alg: 'HS256', typ: 'JWT', kid: await kidOf(idp) }, { alg: 'HS256', typ: 'JWT' }]) {
      const head = `${b64url(header)}.${b64url({ empresa_id: a.empresa.id, iss: IDP_ISS, aud: 'timbre', exp: exp() })}`
      const token = `${head}.${createHmac('sha256', pem).update(head).digest('base64url')}`
      expectEnvelope(await s.request('GET', EMPRESA, { headers: bearer(token) }), 401, 'UNAUTHORIZED')
    }
  })

  test('alg none carrying a configured iss → 401; iat or nbf far ahead → 401', async () => {
    const none = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ empresa_id: a.empresa.id, iss: IDP_ISS, aud: 'timbre', exp: exp() })}.`
    expectEnvelope(await s.request('GET', EMPRESA, { headers: bearer(none) }), 401, 'UNAUTHORIZED')
    const ahead = Math.floor(Date.now() / 1000) + 3600
    const future = (claims: JWTPayload) =>
      new SignJWT({ empresa_id: a.empresa.id, iss: IDP_ISS, aud: 'timbre', ...claims }).setProtectedHeader({ alg: 'RS256' }).setExpirationTime(ahead + 600).sign(idp.privateKey)
    expect(await get(await future({ iat: ahead }))).toBe(401)
    expect(await get(await future({ nbf: ahead }))).toBe(401)
    expect(await get(await future({ iat: ahead - 3600 }))).toBe(200)
  })
})

describe('tenancy', () => {
  test("each credential sees its own company only, and writes land on its own company", async () => {
    await s.request('PUT', EMPRESA, { headers: { 'X-Api-Key': b.writeKey }, body: { razon_social: 'Empresa B Renombrada SpA' } })
    const seenByA = await s.request('GET', EMPRESA, { headers: { 'X-Api-Key': a.readKey } })
    const seenByB = await s.request('GET', EMPRESA, { headers: { 'X-Api-Key': b.readKey } })
    expect(seenByA.json.razon_social).toBe('Empresa A SpA')
    expect(seenByB.json.razon_social).toBe('Empresa B Renombrada SpA')
  })
})

describe('failed authentication throttling', () => {
  const bad = (i: number, more: Record<string, string> = {}) => ({ headers: { 'X-Api-Key': `timbre_bad${i}`, ...more } })
  /** Twenty failures use the address's minute; each must still be a 401. */
  async function fail20(t: TestServer, more: Record<string, string> = {}) {
    for (let i = 0; i < 20; i++) expect((await t.request('GET', EMPRESA, bad(i, more))).status).toBe(401)
  }
  async function withServer(opts: Parameters<typeof startTestServer>[0], run: (t: TestServer, good: Tenant) => Promise<void>) {
    const t = await startTestServer({ ...opts, flags: { '--rate-limit': '100', ...opts?.flags } })
    try {
      await run(t, await t.tenant(testRut()))
    } finally {
      await t.stop()
    }
  }

  test('past 20 failures a bad credential gets 429 with Retry-After, while a valid key or token from the same address is served', () =>
    withServer({}, async (t, good) => {
      await fail20(t)
      expectEnvelope(await t.request('GET', EMPRESA, bad(21)), 429, 'RATE_LIMITED')
      expect((await t.request('GET', EMPRESA, { headers: { 'X-Api-Key': good.readKey } })).status).toBe(200)
      expect((await t.request('GET', EMPRESA, { headers: { Authorization: `Bearer ${await good.token()}` } })).status).toBe(200)
      const res = await t.request('GET', EMPRESA, bad(22))
      expectEnvelope(res, 429, 'RATE_LIMITED')
      const retryAfter = Number(res.headers.get('retry-after'))
      expect(retryAfter).toBeGreaterThan(0)
      expect(retryAfter).toBeLessThanOrEqual(60)
      // A blocked caller learns nothing a 401 would not tell: no rate-limit headers of anyone's credential.
      expect(res.headers.get('x-ratelimit-limit')).toBeNull()
      for (const headers of [{}, { Authorization: 'Bearer a.b.c' }] as Array<Record<string, string>>)
        expectEnvelope(await t.request('GET', EMPRESA, { headers }), 429, 'RATE_LIMITED')
    }))

  test("the block lasts the failures' minute: a minute later a bad key is a 401 again, and 20 more block again", async () => {
    const clock = testClock()
    await withServer({ clock }, async (t, good) => {
      await fail20(t)
      expectEnvelope(await t.request('GET', EMPRESA, bad(21)), 429, 'RATE_LIMITED')
      clock.advance(60_000)
      await fail20(t)
      expectEnvelope(await t.request('GET', EMPRESA, bad(21)), 429, 'RATE_LIMITED')
      expect((await t.request('GET', EMPRESA, { headers: { 'X-Api-Key': good.readKey } })).status).toBe(200)
    })
  })

  test('behind a trusted proxy (TIMBRE_TRUST_PROXY) each client is its X-Forwarded-For address: one blocked client does not block another', () =>
    withServer({ env: { TIMBRE_TRUST_PROXY: '127.0.0.1, 10.0.0.0/8' } }, async (t) => {
      const from = (chain: string) => ({ 'X-Forwarded-For': chain })
      await fail20(t, from('203.0.113.7'))
      expectEnvelope(await t.request('GET', EMPRESA, bad(21, from('203.0.113.7'))), 429, 'RATE_LIMITED')
      expectEnvelope(await t.request('GET', EMPRESA, bad(21, from('203.0.113.8'))), 401, 'UNAUTHORIZED')
      // The right-most address no trusted proxy added is the client: what it wrote to the left is not believed, and a
      // second trusted hop (10.0.0.0/8) is looked through.
      expectEnvelope(await t.request('GET', EMPRESA, bad(22, from('198.51.100.1, 203.0.113.7'))), 429, 'RATE_LIMITED')
      expectEnvelope(await t.request('GET', EMPRESA, bad(22, from('203.0.113.7, 10.1.2.3'))), 429, 'RATE_LIMITED')
      expectEnvelope(await t.request('GET', EMPRESA, bad(22, from('203.0.113.7, 198.51.100.2'))), 401, 'UNAUTHORIZED')
    }))

  test('without TIMBRE_TRUST_PROXY, or from a socket it does not name, X-Forwarded-For is ignored', async () => {
    for (const env of [{}, { TIMBRE_TRUST_PROXY: '10.0.0.1' }] as Array<Record<string, string>>)
      await withServer({ env }, async (t) => {
        await fail20(t, { 'X-Forwarded-For': '203.0.113.7' })
        expectEnvelope(await t.request('GET', EMPRESA, bad(21, { 'X-Forwarded-For': '203.0.113.8' })), 429, 'RATE_LIMITED')
        expectEnvelope(await t.request('GET', EMPRESA, bad(21)), 429, 'RATE_LIMITED')
      })
  })
})
