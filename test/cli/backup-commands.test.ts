// Issue 26 (DESIGN §18): `timbre backup run`, `timbre backup list` and `timbre restore --from s3://…` as an operator (or
// cron) runs them, `bun src/main.ts …`, beside a running server whose data dir holds issued DTEs, against a real folder
// and a real S3-compatible server.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startS3, type TestS3 } from '../support/s3'
import { startTestServer, tempDir, testRut, type TestServer } from '../support/server'

const MAIN = join(import.meta.dir, '../../src/main.ts')
let s: TestServer
let s3: TestS3
let folder: string

async function run(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string; json: () => any }> {
  const p = Bun.spawn([process.execPath, MAIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { code, stdout, stderr, json: () => JSON.parse(stdout) }
}

const targetsEnv = () => ({ TIMBRE_DATA_DIR: s.dataDir, TIMBRE_BACKUP_DIR: folder, ...s3.env })

function dteRows(dataDir: string): unknown[] {
  const db = new Database(join(dataDir, 'timbre.db'), { readonly: true })
  try {
    return db.query('SELECT id, tipo_dte, folio, hex(xml) AS xml FROM dtes ORDER BY id').all()
  } finally {
    db.close()
  }
}

beforeAll(async () => {
  s3 = await startS3()
  folder = tempDir('timbre-nas-')
  s = await startTestServer({ flags: { '--submit-every': '1h', '--track-every': '1h' } })
  const tenant = await s.tenant(testRut())
  await provisionIssuer(s, tenant)
  for (let i = 0; i < 2; i++) expect((await issue(s, tenant, facturaSimple())).status).toBe(201)
}, 60_000)
afterAll(async () => {
  await s?.stop()
  await s3?.stop()
})

describe('help', () => {
  test.each(['backup run', 'backup list', 'restore'])('timbre %s --help is Spanish and exits 0', async (command) => {
    const r = await run([...command.split(' '), '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Uso: timbre')
  })
})

describe('backup run, list, restore --from s3://', () => {
  let copy: string

  test('backup run (beside a running serve) copies to both targets, verified, and prints the result as JSON', async () => {
    const r = await run(['backup', 'run'], targetsEnv())
    expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 0 })
    const result = r.json()
    copy = result.copy
    expect(result).toMatchObject({ dte_count: 2, targets: [{ target: 'folder', ok: true, includes_keys: true }, { target: 's3', ok: true, includes_keys: false }] })
    expect(r.stderr).toContain('backup.s3_without_keys')
    expect(r.stderr).toContain('backup.same_disk') // the test's folder and data dir share /tmp's disk
  }, 30_000)

  test('backup list shows both copies: target, time, bytes, verified, includes_keys; and warns about the master key', async () => {
    const r = await run(['backup', 'list'], targetsEnv())
    expect(r.code).toBe(0)
    const listing = r.json()
    expect(listing.targets).toEqual([
      { target: 'folder', location: folder, error: null },
      { target: 's3', location: `s3://${s3.bucket}/`, error: null },
    ])
    expect(listing.copies).toEqual([
      expect.objectContaining({ name: copy, target: 'folder', verified: true, includes_keys: true, dte_count: 2, restore_from: join(folder, copy) }),
      expect.objectContaining({ name: copy, target: 's3', verified: true, includes_keys: false, dte_count: 2, restore_from: `s3://${s3.bucket}/${copy}` }),
    ])
    for (const c of listing.copies) expect(c.bytes).toBeGreaterThan(1000)
    expect(listing.warning).toContain('master.key')
  }, 30_000)

  test('restore --from s3://bucket/key fills an empty data dir with the same documents', async () => {
    const dir = join(tempDir('timbre-restore-'), 'data')
    // The bucket is the name's own: TIMBRE_BACKUP_S3_BUCKET need not be set on the machine that restores.
    const { TIMBRE_BACKUP_S3_BUCKET: _bucket, ...withoutBucket } = s3.env
    const r = await run(['restore', '--from', `s3://${s3.bucket}/${copy}`, '--data-dir', dir], withoutBucket)
    expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 0 })
    expect(r.json()).toMatchObject({ data_dir: dir, warning: expect.stringContaining('master.key') })
    expect([...r.json().files].sort()).toEqual(['manifest.json', 'timbre.db'])
    expect(dteRows(dir)).toEqual(dteRows(s.dataDir))
    expect(existsSync(join(dir, 'master.key'))).toBe(false)
  }, 30_000)

  test('restore --from s3:// of a name that is not there exits 1 and writes nothing', async () => {
    const dir = join(tempDir('timbre-restore-'), 'data')
    const r = await run(['restore', '--from', `s3://${s3.bucket}/no-existe.tar.gz`, '--data-dir', dir], s3.env)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('no existe')
    expect(existsSync(join(dir, 'timbre.db'))).toBe(false)
  }, 30_000)
})

describe('refusals', () => {
  test('backup run without a target exits 1 saying what to set', async () => {
    const r = await run(['backup', 'run'], { TIMBRE_DATA_DIR: s.dataDir })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('TIMBRE_BACKUP_DIR')
  })

  test('a half-configured S3 target exits 1 naming what is missing', async () => {
    const r = await run(['backup', 'list'], { TIMBRE_BACKUP_S3_URL: s3.url, TIMBRE_BACKUP_S3_BUCKET: s3.bucket })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('TIMBRE_BACKUP_S3_ACCESS_KEY, TIMBRE_BACKUP_S3_SECRET_KEY')
  })

  test('a folder that is not there (drive unplugged) fails the run with exit 1, and is not created', async () => {
    const gone = join(tempDir('timbre-mnt-'), 'usb')
    const r = await run(['backup', 'run'], { TIMBRE_DATA_DIR: s.dataDir, TIMBRE_BACKUP_DIR: gone })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('no existe')
    expect(existsSync(gone)).toBe(false)
  }, 30_000)
})
