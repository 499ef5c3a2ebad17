// Issue 26 (DESIGN §18): scheduled, verified backups through real parts: a real server with issued DTEs, the backup job's
// runOnce on the service's clock (no sleeps, STYLE §5), a real folder and a real S3-compatible server (s3rver). Each
// copy is checked here on its own (extract, open, integrity_check, count), a restore from each target gives the same
// documents, a copy corrupted on purpose alerts and is never counted, and a target that vanishes mid-copy loses nothing.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { S3Client } from 'bun'
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { x as tarExtract } from 'tar'
import { backupConfigFrom, type BackupConfig } from '../../src/config'
import { backupJob } from '../../src/jobs/backup'
import { webhookDeliverJob } from '../../src/jobs/webhook-deliver'
import { folderTarget, s3Target, type BackupTarget } from '../../src/services/backup-targets'
import { backupConsoleLine } from '../../src/services/backup-status'
import { restoreCopy } from '../../src/services/backup-copies'
import { runScheduledBackup, stagingRoomNeeded } from '../../src/services/scheduled-backup'
import { testClock, type TestClock } from '../support/clock'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startReceiver, type Receiver } from '../support/receiver'
import { cuttingProxy, silentServer, startS3, type TestS3 } from '../support/s3'
import { consoleAdmin } from '../support/console'
import { startTestServer, tempDir, testRut, type Tenant, type TestServer } from '../support/server'

const DAY = 24 * 60 * 60 * 1000
const HOUR = 60 * 60 * 1000
/** Today 06:00 UTC: the test certificate and CAFs are valid around the real date, so the service's clock starts there. */
const START = Math.floor(Date.now() / DAY) * DAY + 6 * HOUR
/** The copy's name for an instant, spelled here rather than by the code under test. */
const nameAt = (ms: number) => `timbre-${new Date(ms).toISOString().replace(/[-:]/g, '').slice(0, 15)}Z.tar.gz`
const isoAt = (ms: number) => new Date(ms).toISOString()
let s: TestServer
let tenant: Tenant
let s3: TestS3
let receiver: Receiver
let clock: TestClock
let folder: string
let config: BackupConfig

/** What a copy holds, read here without Timbre's code: extracted with tar, opened with SQLite. */
async function openCopy(archive: string): Promise<{ files: string[]; manifest: Record<string, unknown>; integrity: string; dtes: number; rows: unknown[] }> {
  const dir = tempDir('timbre-copy-')
  await tarExtract({ file: archive, cwd: dir, strict: true })
  const db = new Database(join(dir, 'timbre.db'), { readonly: true })
  try {
    return {
      files: readdirSync(dir).sort(),
      manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>,
      integrity: (db.query('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check,
      dtes: (db.query('SELECT count(*) AS n FROM dtes').get() as { n: number }).n,
      rows: dteRows(db),
    }
  } finally {
    db.close()
  }
}

/** The documents as stored: every DTE row's identity, estado and signed XML bytes. */
function dteRows(db: Database): unknown[] {
  return db.query('SELECT id, empresa_id, tipo_dte, folio, estado, monto_total, hex(xml) AS xml FROM dtes ORDER BY id').all()
}

function liveRows(): unknown[] {
  const db = new Database(join(s.dataDir, 'timbre.db'), { readonly: true })
  try {
    return dteRows(db)
  } finally {
    db.close()
  }
}

function liveIntegrity(): string {
  return (s.server.deps.store.sqlite.query('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check
}

function s3Client(): S3Client {
  return new S3Client({ endpoint: s3.url, bucket: s3.bucket, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey })
}

async function s3Names(): Promise<string[]> {
  return ((await s3Client().list({ prefix: '' })).contents ?? []).map((o) => o.key).sort()
}

const folderNames = () => readdirSync(folder).filter((n) => !n.startsWith('.')).sort()

async function ready(): Promise<{ status: number; body: { checks: Record<string, string>; backup: { targets: Array<Record<string, unknown>> } } }> {
  const res = await fetch(`${s.url}/ready`)
  return { status: res.status, body: (await res.json()) as never }
}

beforeAll(async () => {
  s3 = await startS3()
  receiver = startReceiver()
  folder = tempDir('timbre-usb-')
  clock = testClock({ at: new Date(START) })
  const env = { TIMBRE_BACKUP_DIR: folder, ...s3.env }
  config = backupConfigFrom({}, env)
  // SII and delivery jobs an hour apart: the DTEs' estado stays as issued, so a copy and the live base compare equal.
  s = await startTestServer({ clock, env, flags: { '--webhook-allow-http': 'true', '--submit-every': '1h', '--track-every': '1h', '--deliver-every': '1h' } })
  tenant = await s.tenant(testRut())
  await provisionIssuer(s, tenant)
  for (let i = 0; i < 3; i++) expect((await issue(s, tenant, facturaSimple())).status).toBe(201)
  const hook = await s.request('POST', '/api/v1/billing/webhooks', { headers: { 'X-Api-Key': tenant.writeKey }, body: { url: receiver.url, events: ['backup.failed'] } })
  expect(hook.status).toBe(201)
}, 60_000)

afterAll(async () => {
  await s?.stop()
  await s3?.stop()
  await receiver?.stop()
})

describe('scheduled copies', () => {
  test('no target, no job; a target, a job', () => {
    expect(backupJob(backupConfigFrom({}, {}))).toBeNull()
    expect(backupJob(config)?.name).toBe('backup')
  })

  test('the job copies to the folder and to S3; each copy opens, passes integrity_check and holds the DTEs of the live base', async () => {
    const job = backupJob(config)!
    expect(await job.runOnce(s.server.deps)).toBe(2)
    const name = nameAt(START)
    expect(folderNames()).toEqual([name, `${name}.verified.json`])
    expect(await s3Names()).toEqual([name, `${name}.verified.json`])

    const fromFolder = await openCopy(join(folder, name))
    expect(fromFolder).toMatchObject({ integrity: 'ok', dtes: 3, manifest: { dte_count: 3, includes_keys: true } })
    expect(fromFolder.files).toEqual(['jwt-private.pem', 'manifest.json', 'master.key', 'timbre.db'])
    expect(fromFolder.rows).toEqual(liveRows())

    // The S3 copy is downloaded here with its own client; by default it carries no keys (docs/decisions/backups.md).
    const local = join(tempDir('timbre-dl-'), name)
    await Bun.write(local, s3Client().file(name))
    const fromS3 = await openCopy(local)
    expect(fromS3).toMatchObject({ integrity: 'ok', dtes: 3, manifest: { dte_count: 3, includes_keys: false } })
    expect(fromS3.files).toEqual(['manifest.json', 'timbre.db'])

    const record = JSON.parse(readFileSync(join(folder, `${name}.verified.json`), 'utf8')) as Record<string, unknown>
    expect(record).toMatchObject({ copy: name, dte_count: 3, includes_keys: true, bytes: Bun.file(join(folder, name)).size })
    const r = await ready()
    expect(r.status).toBe(200)
    expect(r.body.checks.backup).toBe('ok')
    expect(r.body.backup.targets.map((t) => [t.kind, t.state, t.last_good_at, t.last_failure_at])).toEqual([
      ['folder', 'ok', isoAt(START), null],
      ['s3', 'ok', isoAt(START), null],
    ])
  }, 30_000)

  test('not due again before the period; due once it has passed, with a new DTE in the copy', async () => {
    const job = backupJob(config)!
    clock.advance(DAY - 60_000)
    expect(await job.runOnce(s.server.deps)).toBe(0)
    expect((await issue(s, tenant, facturaSimple())).status).toBe(201)
    clock.advance(60_000)
    expect(await job.runOnce(s.server.deps)).toBe(2)
    const name = nameAt(START + DAY)
    expect(folderNames()).toContain(name)
    expect((await openCopy(join(folder, name))).dtes).toBe(4)
  }, 30_000)

  test('a restore from each target gives the same documents as the live base', async () => {
    const name = nameAt(START + DAY)
    const fromFolder = join(tempDir('timbre-restore-'), 'data')
    await restoreCopy({ from: join(folder, name), dataDir: fromFolder, config })
    const fromS3 = join(tempDir('timbre-restore-'), 'data')
    const restored = await restoreCopy({ from: `s3://${s3.bucket}/${name}`, dataDir: fromS3, config })
    expect(restored.warning).toContain('master.key')
    for (const dir of [fromFolder, fromS3]) {
      const db = new Database(join(dir, 'timbre.db'), { readonly: true })
      try {
        expect(dteRows(db)).toEqual(liveRows())
      } finally {
        db.close()
      }
    }
    expect(existsSync(join(fromFolder, 'master.key'))).toBe(true)
    expect(existsSync(join(fromS3, 'master.key'))).toBe(false)
  }, 30_000)
})

/** The folder target, whose archive is spoiled right after it is written: a disk that returns other bytes. */
function corruptingFolder(): BackupTarget {
  const real = folderTarget(folder, { includesKeys: true })
  return {
    ...real,
    async put(localPath, name) {
      await real.put(localPath, name)
      const bytes = readFileSync(join(folder, name))
      for (let i = Math.floor(bytes.length / 2); i < Math.floor(bytes.length / 2) + 64; i++) bytes[i] = bytes[i]! ^ 0xff
      writeFileSync(join(folder, name), bytes)
    },
  }
}

describe('a copy that fails verification', () => {
  test('is removed, never counted, alerts by webhook, log and /ready; retention keeps the older good copy', async () => {
    clock.advance(DAY)
    const before = folderNames()
    const spoiled = nameAt(START + 2 * DAY)
    // KEEP 0d,0m: had the spoiled copy counted, retention would have deleted every older one.
    const strict = { ...config, backupKeep: { days: 0, months: 0 } }
    const result = await runScheduledBackup(s.server.deps, strict, { targets: [corruptingFolder()] })
    expect(result.targets[0]).toMatchObject({ ok: false, copy: spoiled, deleted: [] })
    expect(result.targets[0]!.reason).toMatch(/verificación falló/)
    expect(folderNames()).toEqual(before)
    expect(liveIntegrity()).toBe('ok')

    const r = await ready()
    expect(r.status).toBe(200) // reported, not routed on (docs/decisions/backups.md)
    expect(r.body.checks.backup).toBe('fail')
    expect(r.body.backup.targets[0]).toEqual({ kind: 'folder', state: 'failing', last_good_at: isoAt(START + DAY), last_failure_at: isoAt(START + 2 * DAY) })
    // Where the copies go and why they failed is for the administrator, not for whoever reaches the port.
    expect(JSON.stringify(r.body)).not.toContain(folder)
    expect(backupConsoleLine({ store: s.server.deps.store, config, clock: s.server.deps.clock }, (iso) => iso)).toContain(`FALLÓ ${isoAt(START + 2 * DAY)}: la verificación falló`)
    expect(s.logs.some((l) => l.event === 'backup.failed' && l.level === 'error')).toBe(true)
    // The administrator's console says it in one Spanish line, as an alert.
    const page = await (await consoleAdmin(s)).get('/console/empresas')
    expect(page.html).toMatch(/<p class="error-summary" id="respaldos" role="alert">Respaldo \(carpeta [^<]*: última copia verificada [^<]*; FALLÓ [^<]*: la verificación falló/)

    expect(await webhookDeliverJob(2000).runOnce(s.server.deps)).toBeGreaterThanOrEqual(1)
    const events = receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> })
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'backup.failed',
        data: expect.objectContaining({ target: 'folder', location: folder, last_good_at: isoAt(START + DAY), last_good_copy: nameAt(START + DAY) }),
      }),
    )
  }, 30_000)

  test('the next good run clears /ready', async () => {
    clock.advance(HOUR)
    expect(await backupJob(config)!.runOnce(s.server.deps)).toBe(2)
    expect((await ready()).body.checks.backup).toBe('ok')
    const page = await (await consoleAdmin(s)).get('/console/empresas')
    expect(page.html).toMatch(/<p class="card muted" id="respaldos">Respaldo \(carpeta [^<]*: última copia verificada/)
    expect(page.html).not.toContain('FALLÓ')
  }, 30_000)

  test('no verified copy for more than two periods (a job that stopped, a hung share) is stale: /ready and the console say so', async () => {
    clock.advance(2 * config.backupEveryMs + 2 * HOUR) // no run in between: as if the job had stopped
    const r = await ready()
    expect(r.status).toBe(200)
    expect(r.body.checks.backup).toBe('fail')
    expect(r.body.backup.targets.map((t) => t.state)).toEqual(['stale', 'stale'])
    expect(backupConsoleLine({ store: s.server.deps.store, config, clock: s.server.deps.clock }, (iso) => iso)).toContain('SIN COPIA RECIENTE')
    expect(await backupJob(config)!.runOnce(s.server.deps)).toBe(2)
    expect((await ready()).body.checks.backup).toBe('ok')
  }, 30_000)
})

describe('the target disappears mid-copy', () => {
  test('a folder unplugged during the copy: nothing lost, nothing counted, the next run succeeds', async () => {
    clock.advance(DAY)
    const before = folderNames()
    const unplugged = `${folder}-desconectado`
    const vanishing = folderTarget(folder, { includesKeys: true, onChunk: () => renameSync(folder, unplugged) })
    const result = await runScheduledBackup(s.server.deps, config, { targets: [vanishing] })
    expect(result.targets[0]).toMatchObject({ ok: false, deleted: [] })
    expect(result.targets[0]!.reason).toMatch(/no se pudo escribir la copia: ENOENT/)
    expect(existsSync(folder)).toBe(false)
    renameSync(unplugged, folder) // plugged back in
    expect(folderNames()).toEqual(before) // no copy under a final name, every older copy and record still there
    expect(liveIntegrity()).toBe('ok')
    expect((await ready()).body.checks.backup).toBe('fail')

    clock.advance(HOUR) // a failure is retried within the hour
    expect(await backupJob(config)!.runOnce(s.server.deps)).toBe(2)
    expect(folderNames().length).toBeGreaterThan(before.length)
    expect((await ready()).body.checks.backup).toBe('ok')
  }, 30_000)

  test('an S3 server that stops mid-upload: no object under the name, older copies kept, the next run succeeds', async () => {
    clock.advance(DAY)
    const before = await s3Names()
    const proxy = await cuttingProxy(s3.url, 4096)
    const cut = s3Target({ url: proxy.url, bucket: s3.bucket, accessKey: s3.accessKey, secretKey: s3.secretKey, region: null }, { prefix: '', includesKeys: false })
    const result = await runScheduledBackup(s.server.deps, config, { targets: [cut] })
    expect(proxy.isCut()).toBe(true)
    expect(result.targets[0]).toMatchObject({ ok: false, deleted: [] })
    expect(result.targets[0]!.reason).toMatch(/no se pudo escribir la copia/)
    expect(await s3Names()).toEqual(before)
    expect(liveIntegrity()).toBe('ok')

    clock.advance(HOUR)
    expect(await backupJob(config)!.runOnce(s.server.deps)).toBe(2)
    const after = await s3Names()
    expect(after).toEqual([...before, nameAt(clock.now().getTime()), `${nameAt(clock.now().getTime())}.verified.json`].sort())
  }, 30_000)
})

test('an S3 server that accepts and never answers: the copy fails at its deadline and alerts instead of hanging the job', async () => {
  clock.advance(DAY)
  const hung = await silentServer()
  try {
    const target = s3Target(
      { url: hung.url, bucket: s3.bucket, accessKey: s3.accessKey, secretKey: s3.secretKey, region: null },
      { prefix: '', includesKeys: false, timeouts: { callMs: 300, floorMs: 300, minBytesPerSecond: 1024 * 1024 * 1024 } },
    )
    const started = performance.now()
    const result = await runScheduledBackup(s.server.deps, config, { targets: [target] })
    expect(performance.now() - started).toBeLessThan(10_000)
    expect(result.targets[0]).toMatchObject({ ok: false, deleted: [] })
    expect(result.targets[0]!.reason).toMatch(/no terminó la transferencia|no respondió/)
    expect((await ready()).body.checks.backup).toBe('fail')
  } finally {
    hung.stop()
  }
  clock.advance(HOUR)
  expect(await backupJob(config)!.runOnce(s.server.deps)).toBe(2)
}, 30_000)

test('a backup folder that hangs mid-copy (a NAS share gone): the copy fails at its deadline, the serving thread never waits', async () => {
  clock.advance(DAY)
  const before = folderNames()
  // The share stops answering after the first chunk, until the test lets it go (a real hung write keeps its file
  // handle referenced; one left unreachable here would be closed by the GC, which Bun treats as an error).
  let letGo: () => void = () => undefined
  const hung = new Promise<void>((resolve) => (letGo = resolve))
  const target = folderTarget(folder, {
    includesKeys: true,
    onChunk: () => hung,
    timeouts: { callMs: 300, floorMs: 300, minBytesPerSecond: 1024 * 1024 * 1024 },
  })
  let ticks = 0
  const ticker = setInterval(() => ticks++, 10)
  try {
    const started = performance.now()
    const result = await runScheduledBackup(s.server.deps, config, { targets: [target] })
    const elapsed = performance.now() - started
    expect(elapsed).toBeLessThan(10_000)
    expect(result.targets[0]).toMatchObject({ ok: false, deleted: [] })
    expect(result.targets[0]!.reason).toMatch(/la carpeta de respaldos .* no respondió en 0 s \(escribir la copia\)/)
    // The event loop went on meanwhile: a timer every 10 ms kept firing through the hung copy.
    expect(ticks).toBeGreaterThan(elapsed / 10 / 4)
  } finally {
    clearInterval(ticker)
    letGo()
  }
  expect(folderNames()).toEqual(before)
  expect((await ready()).body.checks.backup).toBe('fail')
  clock.advance(HOUR)
  expect(await backupJob(config)!.runOnce(s.server.deps)).toBe(2)
}, 30_000)

test('a run that cannot even stage its snapshot (the data dir full or broken) fails every target and alerts, without throwing', async () => {
  clock.advance(DAY)
  const backups = join(s.dataDir, 'backups')
  renameSync(backups, `${backups}-aparte`)
  writeFileSync(backups, 'no es una carpeta')
  try {
    const before = folderNames()
    const result = await runScheduledBackup(s.server.deps, config)
    expect(result.targets.map((t) => [t.target, t.ok])).toEqual([
      ['folder', false],
      ['s3', false],
    ])
    for (const t of result.targets) expect(t.reason).toMatch(/no se pudo preparar la copia/)
    expect(folderNames()).toEqual(before)
    expect(s.logs.filter((l) => l.event === 'backup.failed' && String(l.reason).includes('no se pudo preparar')).length).toBe(2)
  } finally {
    rmSync(backups, { force: true })
    renameSync(`${backups}-aparte`, backups)
  }
}, 30_000)

test('a data dir disk without room for the staging copy: the run fails before writing anything, issuance keeps its space', async () => {
  clock.advance(DAY)
  const before = folderNames()
  const database = Bun.file(s.server.deps.store.path).size
  const result = await runScheduledBackup(s.server.deps, config, { freeBytes: () => stagingRoomNeeded(database) - 1 })
  expect(result.targets.map((t) => [t.target, t.ok])).toEqual([
    ['folder', false],
    ['s3', false],
  ])
  for (const t of result.targets) expect(t.reason).toMatch(/no hay espacio para preparar la copia/)
  expect(readdirSync(join(s.dataDir, 'backups')).filter((n) => n.startsWith('.staging-'))).toEqual([])
  expect(folderNames()).toEqual(before)
  // With room, the same run goes through.
  const next = await runScheduledBackup(s.server.deps, config, { freeBytes: () => stagingRoomNeeded(database) + 1024 * 1024 * 1024 })
  expect(next.targets.every((t) => t.ok)).toBe(true)
}, 30_000)
