// Issue 26, the 2-core rule: how long does a scheduled backup block the thread that serves every company? A data dir
// with N DTEs (20 000 by default: one real signed XML copied by SQL, plus 1 000 random bytes each so gzip cannot fold
// the copies into one), then one scheduled copy to a folder, and to an S3
// server running in another process, while a 1 ms timer on the main thread records every late tick. For reference,
// the same measure around `timbre backup`'s createBackup, which snapshots and packs on the calling thread.
//   bun bench/backup-stall.ts [--dtes 20000]
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { backupConfigFrom } from '../src/config'
import { createBackup } from '../src/services/backup'
import { runScheduledBackup } from '../src/services/scheduled-backup'
import { facturaSimple, issue, provisionIssuer } from '../test/support/issuance'
import { startTestServer, tempDir, testRut } from '../test/support/server'

const args = process.argv.slice(2)
const dtes = Number(args[args.indexOf('--dtes') + 1] ?? 0) || 20_000

/** Runs `work` while a 1 ms interval measures how late each tick comes: the longest stall and the time lost to stalls. */
async function stalls<T>(work: () => Promise<T>): Promise<{ result: T; wall_ms: number; longest_stall_ms: number; stalls_over_10ms: number; blocked_ms: number }> {
  let last = performance.now()
  let longest = 0
  let over10 = 0
  let blocked = 0
  const timer = setInterval(() => {
    const now = performance.now()
    const late = now - last - 1
    if (late > longest) longest = late
    if (late > 10) over10++
    if (late > 2) blocked += late
    last = now
  }, 1)
  const started = performance.now()
  const result = await work()
  const wall = performance.now() - started
  clearInterval(timer)
  const r = (n: number) => Math.round(n * 10) / 10
  return { result, wall_ms: r(wall), longest_stall_ms: r(longest), stalls_over_10ms: over10, blocked_ms: r(blocked) }
}

const s = await startTestServer({ flags: { '--submit-every': '1h', '--track-every': '1h', '--deliver-every': '1h' } })
const tenant = await s.tenant(testRut())
await provisionIssuer(s, tenant)
if ((await issue(s, tenant, facturaSimple())).status !== 201) throw new Error('issue failed')
const db = s.server.deps.store.sqlite
const columns = (db.query("SELECT name FROM pragma_table_info('dtes')").all() as Array<{ name: string }>).map((c) => c.name)
const select = columns.map((c) => (c === 'id' ? "printf('bench-%08d', n)" : c === 'folio' ? '100000 + n' : c === 'xml' ? 't.xml || randomblob(1000)' : `t."${c}"`)).join(', ')
db.run(
  `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ${dtes - 1})
   INSERT INTO dtes (${columns.map((c) => `"${c}"`).join(', ')}) SELECT ${select} FROM seq, (SELECT * FROM dtes LIMIT 1) AS t`,
)
db.run('PRAGMA wal_checkpoint(TRUNCATE)')
console.error('[bench] filled')
const count = (db.query('SELECT count(*) AS n FROM dtes').get() as { n: number }).n
const dbBytes = (db.query('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()').get() as { n: number }).n

// The S3 server in its own process, as a real one would be: its work must not count as ours.
const s3Dir = tempDir('timbre-bench-s3-')
const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
const port = probe.port
probe.stop(true)
const s3Proc = Bun.spawn([process.execPath, '-e', `
  const S3rver = require('s3rver'); new S3rver({ port: ${port}, address: '127.0.0.1', directory: ${JSON.stringify(s3Dir)}, silent: true, configureBuckets: [{ name: 'b', configs: [] }] }).run()`], { cwd: join(import.meta.dir, '..'), stdout: 'ignore' })
for (let i = 0; i < 100; i++) {
  const up = await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false)
  if (up) break
  await Bun.sleep(100)
}
const folder = tempDir('timbre-bench-folder-')
mkdirSync(folder, { recursive: true })
const folderOnly = backupConfigFrom({}, { TIMBRE_BACKUP_DIR: folder })
const s3Only = backupConfigFrom({}, { TIMBRE_BACKUP_S3_URL: `http://127.0.0.1:${port}`, TIMBRE_BACKUP_S3_BUCKET: 'b', TIMBRE_BACKUP_S3_ACCESS_KEY: 'S3RVER', TIMBRE_BACKUP_S3_SECRET_KEY: 'S3RVER' })

const out: Record<string, unknown> = { dtes: count, db_mb: Math.round(dbBytes / 1e5) / 10 }
console.error('[bench] s3 on port', port)
const folderRun = await stalls(() => runScheduledBackup(s.server.deps, folderOnly))
out.scheduled_to_folder = { ...folderRun, result: undefined, ok: folderRun.result.targets.every((t) => t.ok), archive_mb: Math.round((folderRun.result.targets[0]?.bytes ?? 0) / 1e5) / 10 }
console.error('[bench] folder done')
// A second copy needs a new second for its name.
await Bun.sleep(1100)
const s3Run = await stalls(() => runScheduledBackup(s.server.deps, s3Only))
out.scheduled_to_s3 = { ...s3Run, result: undefined, ok: s3Run.result.targets.every((t) => t.ok) }
const manual = await stalls(() => createBackup(s.server.deps, { out: join(tempDir('timbre-bench-manual-'), 'x.tar.gz'), includeKeys: true }))
out.reference_timbre_backup_on_calling_thread = { ...manual, result: undefined }
console.log(JSON.stringify(out, null, 2))
s3Proc.kill()
await s.stop()
process.exit(0)
