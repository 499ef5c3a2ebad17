// Data dirs made by past releases (test/fixtures/datadirs, each with a README saying which commit and script made it),
// copied to a temp dir for the current binary to run on: the fixture itself is never opened, so it stays as made.
import { Database } from 'bun:sqlite'
import { chmodSync, copyFileSync, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from './server'

/** The data dir release 0.1.0 at commit 61ebb99 made (schema 0010_dte_list_counts). */
export const FIXTURE_0010 = join(import.meta.dir, '../fixtures/datadirs/0010-61ebb99')

/** Long job periods: no job changes the stored data while a test compares two sets of answers (jobs run one period after start). */
export const QUIET_JOBS = ['--submit-every', '1h', '--track-every', '1h', '--deliver-every', '1h', '--inbox-every', '1h'] as const

export interface DataDirFixture {
  /** A fresh copy of the fixture's data dir, 0700 with its files 0600 as an installation has them (git keeps neither). */
  readonly dir: string
  /** What the release answered over HTTP before it stopped (scripts/make-datadir-fixture.ts). */
  readonly expected: any
  readonly writeKey: string
  readonly readKey: string
}

export function copyDataDirFixture(fixture: string = FIXTURE_0010): DataDirFixture {
  const dir = tempDir('timbre-fixture-')
  chmodSync(dir, 0o700)
  for (const f of ['timbre.db', 'master.key', 'jwt-private.pem']) {
    copyFileSync(join(fixture, f), join(dir, f))
    chmodSync(join(dir, f), 0o600)
  }
  const keys = JSON.parse(readFileSync(join(fixture, 'TEST-FIXTURE-ONLY-api-keys.json'), 'utf8')) as { write: { key: string }; read: { key: string } }
  const expected: unknown = JSON.parse(readFileSync(join(fixture, 'expected.json'), 'utf8'))
  return { dir, expected, writeKey: keys.write.key, readKey: keys.read.key }
}

/**
 * Rows per table of a database file, read from a scratch copy of it and its WAL (opening a WAL database writes beside
 * it). Of a live one only while nothing writes (QUIET_JOBS, no requests): the two files are copied one after the other.
 */
export function rowCounts(dbFile: string): Record<string, number> {
  const copy = join(tempDir('timbre-counts-'), 'copy.db')
  copyFileSync(dbFile, copy)
  if (existsSync(`${dbFile}-wal`)) copyFileSync(`${dbFile}-wal`, `${copy}-wal`)
  const db = new Database(copy)
  try {
    const tables = db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>
    return Object.fromEntries(tables.map(({ name }) => [name, (db.query(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n]))
  } finally {
    db.close()
  }
}

/** PRAGMA integrity_check and foreign_key_check of a stopped data dir's database. */
export function databaseChecks(dbFile: string): { integrity: string; foreignKeyErrors: number; migrations: number } {
  const db = new Database(dbFile)
  try {
    return {
      integrity: (db.query('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check,
      foreignKeyErrors: db.query('PRAGMA foreign_key_check').all().length,
      migrations: (db.query('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n,
    }
  } finally {
    db.close()
  }
}
