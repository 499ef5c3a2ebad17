// One delivery attempt against real sockets (DESIGN §7 "Where deliveries may go", issue 18 hole 1): the name is resolved
// once, every address is checked, the connection goes to the checked address with the name as Host, SNI and the name
// the certificate is verified against; failures keep a coarse class, never the socket's words.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ResolvedAddress } from '../../../src/webhooks/destination'
import { postEvent } from '../../../src/webhooks/post'
import { startReceiver, type Receiver } from '../../support/receiver'
import { serverIdentity, startTlsReceiver, type TlsIdentity, type TlsReceiver } from '../../support/webhook-tls'

const STRICT = { allowHttp: false, denyPrivate: false }
const DEV = { allowHttp: true, denyPrivate: false }
const CLASSES = ['timeout', 'connection_refused', 'tls', 'dns', 'http_status', 'too_large', 'address_refused']

let identity: TlsIdentity
let tls: TlsReceiver
let plain: Receiver

beforeAll(async () => {
  identity = serverIdentity(['hooks.test'])
  tls = await startTlsReceiver(identity)
  plain = startReceiver()
})
afterAll(async () => {
  await tls.stop()
  await plain.stop()
})

/** A resolver that answers from a table and counts its calls; a name outside the table does not exist. */
function fakeDns(table: Record<string, readonly string[]>) {
  const calls: string[] = []
  const lookup = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname)
    const answer = table[hostname]
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
  return { lookup, calls }
}

const attempt = (url: string, extra: Partial<Parameters<typeof postEvent>[0]> = {}) =>
  postEvent({ url, secret: 'secreto de prueba 123456', eventId: crypto.randomUUID(), eventType: 'ping', body: '{"id":"x"}', userAgent: 'Timbre/test', nowSeconds: 1_700_000_000, policy: DEV, ...extra })

describe('connecting to the checked address', () => {
  test('https to a name: one lookup, the connection goes to its address, SNI and the certificate check use the name', async () => {
    const dns = fakeDns({ 'hooks.test': ['127.0.0.1'] })
    const before = tls.received.length
    const result = await attempt(`https://hooks.test:${tls.port}/h?x=1`, { lookup: dns.lookup, ca: identity.caPem })
    expect(result).toMatchObject({ ok: true, statusCode: 200, error: null })
    // hooks.test exists only in the fake resolver: had the client looked the name up again, it would have failed.
    expect(dns.calls).toEqual(['hooks.test'])
    expect(tls.received.slice(before)).toEqual([{ sni: 'hooks.test', host: `hooks.test:${tls.port}`, body: '{"id":"x"}' }])
  })

  test('the certificate is verified against the name, not the address: another name on the same address is tls', async () => {
    const dns = fakeDns({ 'otro.test': ['127.0.0.1'] })
    const before = tls.received.length
    expect(await attempt(`https://otro.test:${tls.port}/h`, { lookup: dns.lookup, ca: identity.caPem })).toMatchObject({ ok: false, statusCode: null, error: 'tls' })
    expect(tls.received.length).toBe(before)
  })

  test('a certificate from a root the system does not trust is tls', async () => {
    const dns = fakeDns({ 'hooks.test': ['127.0.0.1'] })
    expect(await attempt(`https://hooks.test:${tls.port}/h`, { lookup: dns.lookup })).toMatchObject({ ok: false, error: 'tls' })
  })

  test('a self-signed certificate is tls', async () => {
    const self = await startTlsReceiver(serverIdentity(['hooks.test'], { selfSigned: true }))
    try {
      const dns = fakeDns({ 'hooks.test': ['127.0.0.1'] })
      expect(await attempt(`https://hooks.test:${self.port}/h`, { lookup: dns.lookup, ca: identity.caPem })).toMatchObject({ ok: false, error: 'tls' })
      expect(self.received).toHaveLength(0)
    } finally {
      await self.stop()
    }
  })

  test('plain http to a name (development): the checked address, with the name as Host', async () => {
    const dns = fakeDns({ 'rebind.test': ['127.0.0.1'] })
    const before = plain.received.length
    const port = new URL(plain.url).port
    expect(await attempt(`http://rebind.test:${port}/hooks/timbre`, { lookup: dns.lookup })).toMatchObject({ ok: true, statusCode: 200 })
    expect(dns.calls).toEqual(['rebind.test'])
    expect(plain.received.slice(before).map((r) => r.headers.host)).toEqual([`rebind.test:${port}`])
  })
})

describe('refused destinations are never connected to', () => {
  test.each([
    ['loopback', ['127.0.0.1']],
    ['the cloud metadata address', ['169.254.169.254']],
    ['an IPv4-mapped loopback', ['::ffff:127.0.0.1']],
    ['one refused address among public ones', ['200.1.2.3', '127.0.0.1']],
    ['an unspecified address', ['0.0.0.0']],
  ])('a name resolving to %s → address_refused', async (_, addresses) => {
    const dns = fakeDns({ 'hooks.test': addresses })
    const before = tls.received.length
    const result = await attempt(`https://hooks.test:${tls.port}/h`, { lookup: dns.lookup, ca: identity.caPem, policy: STRICT })
    expect(result).toMatchObject({ ok: false, statusCode: null, error: 'address_refused' })
    expect(tls.received.length).toBe(before)
  })

  test('an address in the URL, however spelt, is checked without a lookup', async () => {
    const dns = fakeDns({})
    for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '[::ffff:127.0.0.1]', '[::1]'])
      expect(await attempt(`https://${host}:${tls.port}/h`, { lookup: dns.lookup, policy: STRICT })).toMatchObject({ error: 'address_refused' })
    expect(dns.calls).toEqual([])
  })

  test('private ranges are refused with deny-private', async () => {
    const dns = fakeDns({ 'lan.test': ['192.168.10.5'] })
    expect(await attempt('https://lan.test/h', { lookup: dns.lookup, policy: { allowHttp: false, denyPrivate: true } })).toMatchObject({ error: 'address_refused' })
  })
})

describe('coarse error classes', () => {
  test('dns, connection_refused, http_status, timeout: a class each, never the socket error text', async () => {
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('x') })
    const closedPort = closed.port
    await closed.stop(true)
    const failing = startReceiver()
    failing.script(500)
    const hanging = startReceiver()
    hanging.script(5000)
    try {
      const results = {
        dns: await attempt('https://no-existe.invalid/h'),
        connection_refused: await attempt(`http://127.0.0.1:${closedPort}/h`),
        http_status: await attempt(failing.url),
        timeout: await attempt(hanging.url, { timeoutMs: 300 }),
        slowDns: await attempt('https://lento.test/h', { lookup: () => new Promise(() => undefined), timeoutMs: 300 }),
      }
      expect(results.dns).toMatchObject({ ok: false, statusCode: null, error: 'dns' })
      expect(results.connection_refused).toMatchObject({ ok: false, statusCode: null, error: 'connection_refused' })
      expect(results.http_status).toMatchObject({ ok: false, statusCode: 500, error: 'http_status' })
      expect(results.timeout).toMatchObject({ ok: false, statusCode: null, error: 'timeout' })
      expect(results.slowDns).toMatchObject({ ok: false, statusCode: null, error: 'timeout' })
      for (const r of Object.values(results)) expect(CLASSES).toContain(r.error!)
    } finally {
      await failing.stop()
      await hanging.stop()
    }
  })
})
