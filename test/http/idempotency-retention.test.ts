// Spec 4.8 rule 5: completed keys are kept 24 hours; the housekeeping job forgets them afterwards (DESIGN §1).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { housekeepingJob } from '../../src/jobs/housekeeping'
import { testClock } from '../support/clock'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const clock = testClock()
let s: TestServer
let t: Tenant

beforeAll(async () => {
  s = await startTestServer({ clock })
  t = await s.tenant(testRut())
  await provisionIssuer(s, t, { tipos: [33], folios: 20 })
})
afterAll(() => s.stop())

const keys = () => (s.server.deps.store.sqlite.query('SELECT count(*) AS n FROM idempotency_keys').get() as { n: number }).n

test('a key replays for 24 h; past them housekeeping prunes it and the key issues a new document', async () => {
  const key = crypto.randomUUID()
  const first = await issue(s, t, facturaSimple(), key)
  clock.offsetMs = 23 * 3_600_000
  expect(housekeepingJob.runOnce(s.server.deps)).toBe(0)
  const replay = await issue(s, t, facturaSimple(), key)
  expect(replay.headers.get('x-idempotency-replay')).toBe('true')
  expect(replay.json.id).toBe(first.json.id)
  clock.offsetMs = 24 * 3_600_000 + 1000
  expect(housekeepingJob.runOnce(s.server.deps)).toBe(1)
  expect(keys()).toBe(0)
  const fresh = await issue(s, t, facturaSimple({ metadata: { otra: 'vez' } }), key)
  expect(fresh.status).toBe(201)
  expect(fresh.json.id).not.toBe(first.json.id)
  expect(fresh.headers.get('x-idempotency-replay')).toBeNull()
})

test('an expired key not yet pruned is free again too', async () => {
  clock.offsetMs = 0
  const key = crypto.randomUUID()
  const first = await issue(s, t, facturaSimple(), key)
  clock.offsetMs = 25 * 3_600_000
  const again = await issue(s, t, facturaSimple({ metadata: { cambio: 1 } }), key)
  expect(again.status).toBe(201)
  expect(again.json.id).not.toBe(first.json.id)
})
