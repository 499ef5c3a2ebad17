// DESIGN §7 "Where deliveries may go" through the API (issue 18, hole 1): refused ranges at registration, again after
// resolution at delivery time, and a delivery log (also behind POST /webhooks/{id}/test) that keeps coarse classes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { webhookDeliverJob } from '../../src/jobs/webhook-deliver'
import { registerWebhook } from '../../src/services/webhooks'
import type { ResolvedAddress } from '../../src/webhooks/destination'
import { TimbreError } from '../../src/errors'
import { testClock } from '../support/clock'
import { startReceiver } from '../support/receiver'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'
import { serverIdentity, startTlsReceiver } from '../support/webhook-tls'

const HOOKS = '/api/v1/billing/webhooks'
const deliver = webhookDeliverJob(3_600_000)
const clock = testClock()
let strict: TestServer
let dev: TestServer
let hosting: TestServer
let ts: Tenant
let td: Tenant
let th: Tenant

beforeAll(async () => {
  strict = await startTestServer({ clock, flags: { '--deliver-every': '1h' } })
  dev = await startTestServer({ clock, flags: { '--webhook-allow-http': 'true', '--deliver-every': '1h' } })
  hosting = await startTestServer({ clock, flags: { '--deliver-every': '1h' }, env: { TIMBRE_WEBHOOK_DENY_PRIVATE: 'true' } })
  ts = await strict.tenant(testRut())
  td = await dev.tenant(testRut())
  th = await hosting.tenant(testRut())
})
afterAll(async () => {
  await strict.stop()
  await dev.stop()
  await hosting.stop()
})

const register = (s: TestServer, t: Tenant, url: string) => s.request('POST', HOOKS, { headers: { 'X-Api-Key': t.writeKey }, body: { url, events: ['dte.created'] } })
const ping = (s: TestServer, t: Tenant, id: string) => s.request('POST', `${HOOKS}/${id}/test`, { headers: { 'X-Api-Key': t.writeKey } })
const lastDelivery = async (s: TestServer, t: Tenant, id: string) => (await s.request('GET', `${HOOKS}/${id}/deliveries`, { headers: { 'X-Api-Key': t.readKey } })).json.data[0]

function fakeDns(table: Record<string, readonly string[]>) {
  return async (hostname: string): Promise<ResolvedAddress[]> => {
    const answer = table[hostname]
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
}

describe('registration', () => {
  test.each([
    'https://127.0.0.1/h',
    'https://127.8.9.10:8443/h',
    'https://[::1]/h',
    'https://169.254.169.254/latest/meta-data/',
    'https://[fe80::1]/h',
    'https://0.0.0.0/h',
    'https://[::]/h',
    'https://224.0.0.1/h',
    'https://[ff02::1]/h',
    'https://[::ffff:127.0.0.1]/h',
    'https://[::ffff:169.254.169.254]/h',
    'https://2130706433/h',
    'https://0x7f.1/h',
    'https://localhost:9000/h',
    'https://api.localhost/h',
  ])('%s → 400 VALIDATION_ERROR NOT_ALLOWED at url; nothing registered', async (url) => {
    const res = await register(strict, ts, url)
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.details).toEqual([expect.objectContaining({ field: 'url', code: 'NOT_ALLOWED' })])
    expect((await strict.request('GET', HOOKS, { headers: { 'X-Api-Key': ts.readKey } })).json.map((w: { url: string }) => w.url)).not.toContain(url)
  })

  test('private ranges are the LAN: allowed, unless TIMBRE_WEBHOOK_DENY_PRIVATE=true', async () => {
    for (const url of ['https://10.0.0.5/h', 'https://172.16.3.4/h', 'https://192.168.1.10/h', 'https://[fd12:3456::1]/h']) {
      expect((await register(strict, ts, url)).status).toBe(201)
      const refused = await register(hosting, th, url)
      expect(refused.status).toBe(400)
      expect(refused.json.details).toEqual([expect.objectContaining({ field: 'url', code: 'NOT_ALLOWED' })])
    }
    expect((await register(hosting, th, 'https://200.1.2.3/h')).status).toBe(201)
  })

  test('with --webhook-allow-http (development) loopback receivers are accepted', async () => {
    expect((await register(dev, td, 'http://127.0.0.1:9/h')).status).toBe(201)
    expect((await register(dev, td, 'http://localhost:9/h')).status).toBe(201)
  })

  test('a name that resolves to a refused address is refused; one that does not resolve is accepted (checked at delivery)', async () => {
    const deps = { ...strict.server.deps, lookup: fakeDns({ 'interno.test': ['10.1.1.1', '169.254.169.254'] }) }
    const err = await registerWebhook(deps, { empresaId: ts.empresa.id, url: 'https://interno.test/h', events: ['dte.created'] }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(TimbreError)
    expect((err as TimbreError).code).toBe('VALIDATION_ERROR')
    expect((err as TimbreError).extra.details).toEqual([expect.objectContaining({ field: 'url', code: 'NOT_ALLOWED', message: expect.stringContaining('resuelve a') })])
    expect((await register(strict, ts, 'https://no-existe.invalid/h')).status).toBe(201)
  })
})

describe('delivery time', () => {
  test('a name that now resolves to loopback (DNS rebinding) is not connected to: address_refused in the log', async () => {
    const rx = startReceiver()
    try {
      const port = new URL(rx.url).port
      const hook = await register(strict, ts, `https://rebind.test:${port}/hooks/timbre`) // no answer at registration
      expect(hook.status).toBe(201)
      expect((await ping(strict, ts, hook.json.id)).status).toBe(202)
      const rebound = { ...strict.server.deps, lookup: fakeDns({ 'rebind.test': ['127.0.0.1'] }) }
      await deliver.runOnce(rebound)
      expect(rx.received).toHaveLength(0)
      expect(await lastDelivery(strict, ts, hook.json.id)).toMatchObject({ attempt: 1, status: 'pending', status_code: null, error: 'address_refused' })
    } finally {
      await rx.stop()
    }
  })

  test('the log and POST /webhooks/{id}/test keep a coarse class: dns, connection_refused, tls, http_status; never the socket text', async () => {
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('x') })
    const closedPort = closed.port
    await closed.stop(true)
    const failing = startReceiver()
    failing.script(500)
    const untrusted = await startTlsReceiver(serverIdentity(['hooks.test']))
    try {
      const cases = [
        ['dns', 'http://no-existe.invalid/h'],
        ['connection_refused', `http://127.0.0.1:${closedPort}/h`],
        ['tls', `https://hooks.test:${untrusted.port}/h`],
        ['http_status', failing.url],
      ] as const
      const ids: string[] = []
      for (const [, url] of cases) {
        const hook = await register(dev, td, url)
        expect(hook.status).toBe(201)
        expect((await ping(dev, td, hook.json.id)).status).toBe(202)
        ids.push(hook.json.id)
      }
      const resolving = { ...dev.server.deps, lookup: fakeDns({ 'hooks.test': ['127.0.0.1'] }) }
      await deliver.runOnce(resolving)
      for (const [i, [error]] of cases.entries()) {
        const log = await dev.request('GET', `${HOOKS}/${ids[i]}/deliveries`, { headers: { 'X-Api-Key': td.readKey } })
        expect(log.json.data[0]).toMatchObject({ attempt: 1, status: 'pending', error })
        expect(log.text).not.toMatch(/ECONN|getaddrinfo|ENOTFOUND|Unable to connect|certificate|socket|verbose/i)
      }
      expect(untrusted.received).toHaveLength(0)
    } finally {
      await failing.stop()
      await untrusted.stop()
    }
  })
})
