// `--sii-timeout` and `--sii-backoff` (config.ts, docs/decisions/sii-client.md "Timeouts"): the server's SII client
// gives up on a hanging SII after the configured time instead of DESIGN §6's 30 s, and the upload retries wait the
// configured back-off. An SII that never answers on 127.0.0.1; the jobs run by hand, the clock moved
// to each next attempt (STYLE §5).
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { testClock } from '../support/clock'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const clock = testClock()
let hanging: ReturnType<typeof Bun.serve>
const waiting = new Set<() => void>()
let requests = 0
let s: TestServer
let tenant: Tenant

beforeAll(async () => {
  hanging = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => {
      requests++
      return new Promise<Response>((resolve) => waiting.add(() => resolve(new Response('late'))))
    },
  })
  s = await startTestServer({
    clock,
    flags: { '--sii': `http://127.0.0.1:${hanging.port}`, '--sii-timeout': '1s', '--sii-backoff': '2s:8s', '--submit-every': '1h', '--track-every': '1h' },
  })
  tenant = await s.tenant(testRut())
  await provisionIssuer(s, tenant, { folios: 10, tipos: [33] })
})

afterAll(async () => {
  for (const release of waiting) release()
  await hanging.stop(true)
  await s.stop()
})

test('--sii-timeout 1s: each attempt gives up after 1 s; --sii-backoff 2s:8s: retried 2, 4, 8, 8 s later', async () => {
  const res = await issue(s, tenant, facturaSimple())
  expect(res.status).toBe(201)
  const submit = siiSubmitJob(3_600_000)
  const waits: number[] = []
  for (let attempt = 1; attempt <= 4; attempt++) {
    const started = Date.now()
    await submit.runOnce(s.server.deps)
    // Far below DESIGN §6's 30 s, with room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(15_000)
    const db = new Database(join(s.dataDir, 'timbre.db'), { readonly: true })
    const row = db.query('SELECT estado, intentos, glosa_sii, next_attempt_at, updated_at FROM dtes WHERE id = ?').get(res.json.id) as { estado: string; intentos: number; glosa_sii: string; next_attempt_at: string; updated_at: string }
    db.close()
    expect(row).toMatchObject({ estado: 'enviando', intentos: attempt })
    expect(row.glosa_sii).toContain('timeout after 1000 ms')
    // Both written from the attempt's one instant.
    const wait = Date.parse(row.next_attempt_at) - Date.parse(row.updated_at)
    waits.push(wait)
    clock.advance(wait)
  }
  expect(waits).toEqual([2000, 4000, 8000, 8000])
  expect(requests).toBe(4)  // one getSeed per attempt: the token request is the call that hangs
}, 60_000)
