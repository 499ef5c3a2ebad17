// DESIGN §7 (issue 18, hole 3): at most 20 webhooks per company, and each company's deliveries are served in turn, so
// one company's receiver that hangs cannot delay another company's deliveries, within a pass or across passes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { webhookDeliverJob } from '../../src/jobs/webhook-deliver'
import { testClock } from '../support/clock'
import { startReceiver } from '../support/receiver'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const HOOKS = '/api/v1/billing/webhooks'
const clock = testClock()
let s: TestServer

beforeAll(async () => {
  s = await startTestServer({ clock, flags: { '--webhook-allow-http': 'true', '--deliver-every': '1h' } })
})
afterAll(() => s.stop())

const register = (t: Tenant, url: string) => s.request('POST', HOOKS, { headers: { 'X-Api-Key': t.writeKey }, body: { url, events: ['dte.created'] } })
const ping = async (t: Tenant, id: string) => expect((await s.request('POST', `${HOOKS}/${id}/test`, { headers: { 'X-Api-Key': t.writeKey } })).status).toBe(202)
const listed = async (t: Tenant) => (await s.request('GET', HOOKS, { headers: { 'X-Api-Key': t.readKey } })).json as Array<{ id: string }>

async function until(what: string, probe: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now()
  while (!probe()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(10)
  }
  return Date.now() - started
}

describe('at most 20 webhooks per company', () => {
  test('the 21st is 422 WEBHOOK_LIMIT_REACHED and registers nothing; other companies are not counted; a DELETE frees a place', async () => {
    const a = await s.tenant(testRut())
    const b = await s.tenant(testRut())
    for (let i = 0; i < 20; i++) expect((await register(a, `http://127.0.0.1:9/h${i}`)).status).toBe(201)
    const refused = await register(a, 'http://127.0.0.1:9/h20')
    expect(refused.status).toBe(422)
    expect(refused.json).toMatchObject({ code: 'WEBHOOK_LIMIT_REACHED', context: { max_webhooks: 20 } })
    expect(refused.json.action).toContain('DELETE')
    expect(await listed(a)).toHaveLength(20)
    expect((await register(b, 'http://127.0.0.1:9/b')).status).toBe(201)
    const [first] = await listed(a)
    expect((await s.request('DELETE', `${HOOKS}/${first!.id}`, { headers: { 'X-Api-Key': a.writeKey } })).status).toBe(200)
    expect((await register(a, 'http://127.0.0.1:9/h21')).status).toBe(201)
    expect((await register(a, 'http://127.0.0.1:9/h22')).status).toBe(422)
  })

  test('30 registrations at once: exactly 20 are accepted', async () => {
    const c = await s.tenant(testRut())
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => register(c, `http://127.0.0.1:9/p${i}`).then((r) => r.status)))
    expect(statuses.filter((x) => x === 201)).toHaveLength(20)
    expect(statuses.filter((x) => x === 422)).toHaveLength(10)
    expect(await listed(c)).toHaveLength(20)
  })
})

describe('deliveries served per company in turn', () => {
  test("company A's 40 due deliveries to a hanging receiver do not delay company B's: delivered within 1 s of the pass", async () => {
    const a = await s.tenant(testRut())
    const b = await s.tenant(testRut())
    const hanging = startReceiver()
    hanging.script(...Array<number>(40).fill(15_000))
    const fast = startReceiver()
    try {
      for (const n of [0, 1]) {
        const hook = await register(a, `${hanging.url}?n=${n}`)
        for (let i = 0; i < 20; i++) await ping(a, hook.json.id)
      }
      clock.advance(1000) // A's deliveries are older than B's: a queue by due time alone serves all of A first
      await ping(b, (await register(b, fast.url)).json.id)
      const pass = webhookDeliverJob(3_600_000).runOnce(s.server.deps)
      const waitedMs = await until("B's delivery", () => fast.received.length === 1, 5000)
      expect(waitedMs).toBeLessThan(1000)
      // A's receiver hangs up: its remaining attempts fail at once and the pass ends.
      await hanging.stop()
      await pass
    } finally {
      await hanging.stop()
      await fast.stop()
    }
  }, 60_000)

  test("a pass does not wait for A's hanging attempts: the next pass serves B while they are in flight, and starts no more of A's", async () => {
    const a = await s.tenant(testRut())
    const b = await s.tenant(testRut())
    const hanging = startReceiver()
    hanging.script(...Array<number>(20).fill(15_000))
    const fast = startReceiver()
    try {
      const hookA = await register(a, hanging.url)
      for (let i = 0; i < 20; i++) await ping(a, hookA.json.id)
      const hookB = await register(b, fast.url)
      const job = webhookDeliverJob(1000) // the scheduler's pass: waits at most one period for its attempts
      const started = Date.now()
      await job.runOnce(s.server.deps)
      expect(Date.now() - started).toBeLessThan(3000)
      const hangingNow = hanging.received.length
      expect(hangingNow).toBeGreaterThan(0)
      expect(hangingNow).toBeLessThanOrEqual(4)
      await ping(b, hookB.json.id)
      const second = Date.now()
      await job.runOnce(s.server.deps)
      await until("B's delivery", () => fast.received.length === 1, 2000)
      expect(Date.now() - second).toBeLessThan(1500)
      expect(hanging.received.length).toBe(hangingNow) // A's place is full until its attempts end
      await hanging.stop()
    } finally {
      await hanging.stop()
      await fast.stop()
    }
  }, 60_000)

  test('a pass is not capped at one window: 130 due deliveries of one company all go in one pass of the period', async () => {
    const a = await s.tenant(testRut())
    const fast = startReceiver()
    try {
      const hook = await register(a, fast.url)
      for (let i = 0; i < 130; i++) await ping(a, hook.json.id)
      const started = await webhookDeliverJob(20_000).runOnce(s.server.deps)
      expect(started).toBeGreaterThanOrEqual(130) // with what earlier tests left due
      expect(fast.received).toHaveLength(130)
      const log = (await s.request('GET', `${HOOKS}/${hook.json.id}/deliveries?limit=100`, { headers: { 'X-Api-Key': a.readKey } })).json.data as Array<{ status: string }>
      expect(log.every((d) => d.status === 'delivered')).toBe(true)
    } finally {
      await fast.stop()
    }
  }, 60_000)

  test("a company's receiver that hangs does not cap another company at one window: B's 130 all go in the pass", async () => {
    const a = await s.tenant(testRut())
    const b = await s.tenant(testRut())
    const hanging = startReceiver()
    hanging.script(...Array<number>(10).fill(15_000))
    const fast = startReceiver()
    try {
      const hookA = await register(a, hanging.url)
      for (let i = 0; i < 10; i++) await ping(a, hookA.json.id)
      const hookB = await register(b, fast.url)
      for (let i = 0; i < 130; i++) await ping(b, hookB.json.id)
      // A's queue keeps items for the whole pass (2 in flight to its webhook, each hanging 15 s).
      const pass = Promise.resolve(webhookDeliverJob(20_000).runOnce(s.server.deps))
      await until("B's 130 deliveries", () => fast.received.length >= 130, 15_000)
      // A's receiver hangs up: its remaining attempts fail at once and the pass ends.
      await hanging.stop()
      await pass
      expect(fast.received).toHaveLength(130)
    } finally {
      await hanging.stop()
      await fast.stop()
    }
  }, 60_000)
})
