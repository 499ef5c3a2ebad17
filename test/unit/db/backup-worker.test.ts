// Issue 26: the backup thread's verification opens what it reads back and runs integrity_check over every page, so a
// copy whose bytes arrive intact but whose database is damaged (a snapshot spoiled before packing) is not "good".
import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, openSync, writeSync, closeSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { c as tarCreate } from 'tar'
import { startBackupThread } from '../../../src/db/backup-thread'
import { tempDir } from '../../support/server'

const thread = startBackupThread()
afterAll(() => thread.close())

/** An archive as Timbre packs it, around a database of `rows` DTE-shaped rows; `spoil` damages the file first. */
async function archiveWith(rows: number, spoil?: (path: string) => void): Promise<string> {
  const dir = tempDir('timbre-worker-')
  const staging = join(dir, 'staging')
  mkdirSync(staging)
  const db = new Database(join(staging, 'timbre.db'))
  db.run('CREATE TABLE dtes (id TEXT PRIMARY KEY, xml BLOB)')
  const insert = db.prepare('INSERT INTO dtes VALUES (?, ?)')
  db.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run(`dte-${String(i).padStart(6, '0')}`, Buffer.alloc(300, i % 251))
  })()
  db.close()
  spoil?.(join(staging, 'timbre.db'))
  writeFileSync(join(staging, 'manifest.json'), JSON.stringify({ dte_count: rows }))
  const archive = join(dir, 'copia.tar.gz')
  await tarCreate({ gzip: true, file: archive, cwd: staging, portable: true }, ['manifest.json', 'timbre.db'])
  return archive
}

test('a sound copy: integrity ok, its DTE count and manifest', async () => {
  const archive = await archiveWith(2000)
  const v = await thread.verify({ archive, workDir: join(tempDir('timbre-verify-'), 'x') })
  expect(v).toMatchObject({ integrity: 'ok', dteCount: 2000, manifest: { dte_count: 2000 } })
  expect(v.sha256).toMatch(/^[0-9a-f]{64}$/)
})

test('a damaged database inside an intact archive fails integrity_check', async () => {
  const archive = await archiveWith(2000, (path) => {
    // Garbage over pages 20-24 (4 KB pages): leaf pages of the table's b-tree, the header left alone.
    const fd = openSync(path, 'r+')
    writeSync(fd, Buffer.alloc(5 * 4096, 0x5a), 0, 5 * 4096, 20 * 4096)
    closeSync(fd)
  })
  const v = await thread.verify({ archive, workDir: join(tempDir('timbre-verify-'), 'x') })
  expect(v.integrity).toMatch(/malformed|corrupt|error|Page|page/)
  expect(v.dteCount).toBe(-1)
})
