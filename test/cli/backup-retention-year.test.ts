// Issue 26 (DESIGN §18): a year of daily copies on the service's clock (runOnce with the clock a day later each time,
// STYLE §5), with the default TIMBRE_BACKUP_KEEP=7d,12m. At the end the folder holds exactly the newest copy of each of
// the last 7 days and of each of the last 12 months (Santiago calendar), each with its verification record.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { backupConfigFrom } from '../../src/config'
import { backupJob } from '../../src/jobs/backup'
import { testClock } from '../support/clock'
import { startTestServer, tempDir, testRut, type TestServer } from '../support/server'

const DAY = 24 * 60 * 60 * 1000
let s: TestServer
let folder: string
const clock = testClock({ at: new Date('2026-01-01T06:00:00Z') })

beforeAll(async () => {
  folder = tempDir('timbre-year-')
  s = await startTestServer({ clock, env: { TIMBRE_BACKUP_DIR: folder } })
  await s.tenant(testRut())
})
afterAll(() => s?.stop())

test('365 daily runs keep 7 days and 12 months, exactly', async () => {
  const job = backupJob(backupConfigFrom({}, { TIMBRE_BACKUP_DIR: folder }))!
  for (let day = 0; day < 365; day++) {
    if (day > 0) clock.advance(DAY)
    expect({ day, copied: await job.runOnce(s.server.deps) }).toEqual({ day, copied: 1 })
  }
  expect(clock.now().toISOString()).toBe('2026-12-31T06:00:00.000Z')
  // 06:00 UTC is 02:00 or 03:00 in Santiago: the same calendar day all year, DST or not.
  const days = ['1225', '1226', '1227', '1228', '1229', '1230', '1231']
  const monthEnds = ['0131', '0228', '0331', '0430', '0531', '0630', '0731', '0831', '0930', '1031', '1130']
  const kept = [...monthEnds, ...days].map((d) => `timbre-2026${d}T060000Z.tar.gz`)
  expect(readdirSync(folder).sort()).toEqual(kept.flatMap((n) => [n, `${n}.verified.json`]).sort())
}, 300_000)
