// A healthy database is healthy to the system's own SQLite too (issue 27): Debian 12's sqlite3 and Python's sqlite3
// module (3.40) reported the bucket tables of 0010 (WITHOUT ROWID, key columns not declared first) as corrupt, so an
// operator checking a backup with them was told it was damaged. 0013 rebuilds them key columns first.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { cpSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/open'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startTestServer, tempDir, testRut, type TestServer } from '../support/server'

const FIXTURE = join(import.meta.dir, '../fixtures/datadirs/0010-61ebb99')

/** What the system's SQLite says of a database file: the sqlite3 command and Python's module. */
function systemIntegrity(path: string): { sqlite3: string; python: string } {
  const cli = spawnSync('sqlite3', ['-readonly', path, 'PRAGMA integrity_check'], { encoding: 'utf8' })
  const py = spawnSync('python3', ['-c', 'import sqlite3,sys; print("\\n".join(r[0] for r in sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check")))', path], {
    encoding: 'utf8',
  })
  if (cli.error || py.error) throw new Error(`sqlite3 or python3 missing: ${String(cli.error ?? py.error)}`)
  return { sqlite3: (cli.stdout + cli.stderr).trim(), python: (py.stdout + py.stderr).trim() }
}

/** The buckets hold exactly what a recount of `dtes` gives (the triggers and the rebuild agree). */
function bucketsMatchDtes(path: string): void {
  const db = new Database(path, { readonly: true })
  try {
    const recount = (keys: string) => db.query(`SELECT ${keys}, count(*) AS n FROM dtes GROUP BY ${keys} ORDER BY ${keys}`).all()
    expect(db.query('SELECT empresa_id, fecha_emision, tipo_dte, estado, n FROM dte_counts_dia ORDER BY empresa_id, fecha_emision, tipo_dte, estado').all()).toEqual(
      recount('empresa_id, fecha_emision, tipo_dte, estado'),
    )
    expect(
      db.query('SELECT empresa_id, rut_receptor, fecha_emision, tipo_dte, estado, n FROM dte_counts_receptor ORDER BY empresa_id, rut_receptor, fecha_emision, tipo_dte, estado').all(),
    ).toEqual(recount('empresa_id, rut_receptor, fecha_emision, tipo_dte, estado'))
  } finally {
    db.close()
  }
}

describe('the system SQLite (3.40) finds nothing wrong with a healthy database', () => {
  test('a data dir of release 0010 is reported corrupt by it before the upgrade, and ok after 0013', () => {
    const dir = tempDir('timbre-sysqlite-')
    cpSync(FIXTURE, dir, { recursive: true })
    const path = join(dir, 'timbre.db')
    const before = systemIntegrity(path)
    // Only an SQLite older than 3.42 has the false report; where the system's is newer, the "before" proves nothing.
    const version = spawnSync('sqlite3', ['--version'], { encoding: 'utf8' }).stdout
    if (/^3\.(\d+)\./.exec(version) && Number(/^3\.(\d+)\./.exec(version)![1]) < 42) expect(before.sqlite3).toContain('NULL value in dte_counts_receptor')
    openDatabase(dir, { create: false }).close()
    expect(systemIntegrity(path)).toEqual({ sqlite3: 'ok', python: 'ok' })
    bucketsMatchDtes(path)
  })

  describe('a database made by this release, with documents to several receptors', () => {
    let s: TestServer
    beforeAll(async () => {
      s = await startTestServer({ flags: { '--submit-every': '1h', '--track-every': '1h' } })
      const tenant = await s.tenant(testRut())
      await provisionIssuer(s, tenant)
      for (const rut of ['76086428-5', '96790240-3', '77777777-7']) {
        const body = facturaSimple()
        body.receptor.rut = rut
        expect((await issue(s, tenant, body)).status).toBe(201)
      }
    })
    afterAll(() => s?.stop())

    test('sqlite3 and Python say ok, and the buckets are the recount of its DTEs', async () => {
      s.server.deps.store.sqlite.run('PRAGMA wal_checkpoint(TRUNCATE)')
      const path = s.server.deps.store.path
      expect(systemIntegrity(path)).toEqual({ sqlite3: 'ok', python: 'ok' })
      bucketsMatchDtes(path)
    })
  })
})
