// Two installations pointed at one backup folder (an office NAS, one env file copied to two PCs): each one's retention
// deletes only the copies it made, so neither ends up with none (review of issue 26: before, after 30 days the folder
// held only the second installation's copies, and the first one's /ready still said ok).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { backupConfigFrom } from '../../src/config'
import { runScheduledBackup } from '../../src/services/scheduled-backup'
import { testClock } from '../support/clock'
import { startTestServer, tempDir, testRut, type TestServer } from '../support/server'

const DAY = 24 * 60 * 60 * 1000
const MINUTE = 60 * 1000
let a: TestServer
let b: TestServer
let folder: string
const clockA = testClock({ at: new Date('2026-03-01T06:00:00Z') })
const clockB = testClock({ at: new Date('2026-03-01T06:05:00Z') })
const logsB: Array<{ event: string }> = []

beforeAll(async () => {
  folder = tempDir('timbre-shared-')
  a = await startTestServer({ clock: clockA, env: { TIMBRE_BACKUP_DIR: folder } })
  b = await startTestServer({ clock: clockB, env: { TIMBRE_BACKUP_DIR: folder } })
  await a.tenant(testRut())
  await b.tenant(testRut())
})
afterAll(async () => {
  await a?.stop()
  await b?.stop()
})

const instanceOf = (dataDir: string) => readFileSync(join(dataDir, 'backups', 'instance-id'), 'utf8').trim()
const copiesBy = (instance: string) =>
  readdirSync(folder)
    .filter((n) => n.endsWith('.verified.json'))
    .filter((n) => (JSON.parse(readFileSync(join(folder, n), 'utf8')) as { instance: string }).instance === instance)

test('each installation keeps its own copies by its own policy; the other one deletes none of them', async () => {
  const config = { ...backupConfigFrom({}, { TIMBRE_BACKUP_DIR: folder }), backupKeep: { days: 2, months: 0 } }
  const logB = { ...b.server.deps.log, warn: (event: string, fields?: Record<string, unknown>) => void logsB.push({ event, ...fields }) }
  for (let day = 0; day < 10; day++) {
    if (day > 0) {
      clockA.advance(DAY)
      clockB.advance(DAY)
    }
    expect((await runScheduledBackup(a.server.deps, config)).targets[0]!.ok).toBe(true)
    expect((await runScheduledBackup({ ...b.server.deps, log: logB }, config)).targets[0]!.ok).toBe(true)
  }
  const idA = instanceOf(a.server.deps.store.dataDir)
  const idB = instanceOf(b.server.deps.store.dataDir)
  expect(idA).not.toBe(idB)
  // KEEP 2d,0m each: the newest copy of each of its own last two days, whatever the other installation did.
  expect(copiesBy(idA).length).toBe(2)
  expect(copiesBy(idB).length).toBe(2)
  expect(readdirSync(folder).filter((n) => n.endsWith('.tar.gz')).length).toBe(4)
  expect(logsB.some((l) => l.event === 'backup.shared_target')).toBe(true)
  expect(clockB.now().getTime() - clockA.now().getTime()).toBe(5 * MINUTE)
}, 120_000)
