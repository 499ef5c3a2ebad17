// DESIGN §7: at most 64 KB of a receiver's answer is read, and nothing is decompressed beyond it (issue 18, hole 2: a
// 100 KB gzip answer grew memory by 112 MB). Real receivers on 127.0.0.1, the real delivery job, memory measured.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { webhookDeliverJob } from '../../src/jobs/webhook-deliver'
import { testClock } from '../support/clock'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const HOOKS = '/api/v1/billing/webhooks'
const MB = 1024 * 1024
const deliver = webhookDeliverJob(3_600_000)
const clock = testClock()
let s: TestServer
let t: Tenant

/** 100 MB of zeros as gzip (about 100 KB), made a megabyte at a time so the test itself never holds the 100 MB. */
async function gzipBomb(megabytes: number): Promise<Uint8Array> {
  const zeros = new Uint8Array(MB)
  const stream = new Blob(Array.from({ length: megabytes }, () => zeros)).stream().pipeThrough(new CompressionStream('gzip'))
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

/** A receiver whose every answer is `answer()`: a status, headers and a body. */
function answering(answer: () => Response) {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 30, fetch: async (req) => (await req.text(), answer()) })
  return { url: `http://127.0.0.1:${server.port}/h`, stop: () => server.stop(true) }
}

/** Peak growth of this process's RSS while `work` runs, after a full collection, in MB. */
async function rssGrowthMb(work: () => unknown): Promise<number> {
  Bun.gc(true)
  await Bun.sleep(50)
  const before = process.memoryUsage().rss
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2)
  try {
    await work()
    await Bun.sleep(100)
    peak = Math.max(peak, process.memoryUsage().rss)
  } finally {
    clearInterval(sampler)
  }
  return (peak - before) / MB
}

beforeAll(async () => {
  s = await startTestServer({ clock, flags: { '--webhook-allow-http': 'true', '--deliver-every': '1h' } })
  t = await s.tenant(testRut())
})
afterAll(() => s.stop())

async function pingThrough(url: string): Promise<string> {
  const hook = await s.request('POST', HOOKS, { headers: { 'X-Api-Key': t.writeKey }, body: { url, events: ['dte.created'] } })
  expect(hook.status).toBe(201)
  expect((await s.request('POST', `${HOOKS}/${hook.json.id}/test`, { headers: { 'X-Api-Key': t.writeKey } })).status).toBe(202)
  return hook.json.id
}
const lastDelivery = async (id: string) => (await s.request('GET', `${HOOKS}/${id}/deliveries`, { headers: { 'X-Api-Key': t.readKey } })).json.data[0]

describe("a receiver's answer", () => {
  test('a gzip bomb (100 KB → 100 MB) with 200: delivered, and memory grows by a few MB at most', async () => {
    const bomb = await gzipBomb(100)
    expect(bomb.byteLength).toBeLessThan(200 * 1024)
    const rx = answering(() => new Response(bomb.buffer as ArrayBuffer, { headers: { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' } }))
    try {
      // A first attempt warms the client up (TLS-less, but its buffers and the job's statements), then the measured one.
      await pingThrough(rx.url)
      await deliver.runOnce(s.server.deps)
      const id = await pingThrough(rx.url)
      const growth = await rssGrowthMb(() => deliver.runOnce(s.server.deps))
      expect(await lastDelivery(id)).toMatchObject({ attempt: 1, status: 'delivered', status_code: 200, error: null })
      expect(growth).toBeLessThan(8)
    } finally {
      await rx.stop()
    }
  }, 60_000)

  test('a 50 MB plain body with 200 is delivered without being held; with 500 it is http_status', async () => {
    const chunk = new Uint8Array(MB).fill(97)
    let status = 200
    // Streamed a megabyte at a time as the connection takes it, so the receiver (in this process too) holds little.
    const body = () => {
      let sent = 0
      return new ReadableStream<Uint8Array>({ pull: (c) => (sent++ < 50 ? c.enqueue(chunk) : c.close()) }, { highWaterMark: 0 })
    }
    const rx = answering(() => new Response(body(), { status }))
    try {
      const ok = await pingThrough(rx.url)
      const growth = await rssGrowthMb(() => deliver.runOnce(s.server.deps))
      expect(await lastDelivery(ok)).toMatchObject({ status: 'delivered', status_code: 200, error: null })
      expect(growth).toBeLessThan(8)
      status = 500
      const failing = await pingThrough(rx.url)
      await deliver.runOnce(s.server.deps)
      expect(await lastDelivery(failing)).toMatchObject({ status: 'pending', status_code: 500, error: 'http_status' })
    } finally {
      await rx.stop()
    }
  }, 60_000)

  test('a body that trickles forever after a 200 still ends the attempt by the timeout, delivered', async () => {
    const rx = answering(
      () =>
        new Response(
          new ReadableStream({
            async pull(c) {
              await Bun.sleep(200)
              c.enqueue(new Uint8Array(10))
            },
          }),
        ),
    )
    try {
      const id = await pingThrough(rx.url)
      await deliver.runOnce(s.server.deps)
      expect(await lastDelivery(id)).toMatchObject({ status: 'delivered', status_code: 200, error: null })
    } finally {
      await rx.stop()
    }
  }, 30_000)
})
