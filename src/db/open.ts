// One way to open the store, for `serve` and every admin command (STYLE §6): checks the data dir, sets the pragmas,
// backs up before migrating, migrates, refuses a database written by a newer Timbre (DESIGN §1).
import { Database } from 'bun:sqlite'
import { accessSync, chmodSync, closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readdirSync, rmSync, type Stats } from 'node:fs'
import { join, resolve } from 'node:path'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { OperatorError } from '../errors'
import type { Logger } from '../log'
import { silentLogger } from '../log'
import { MIGRATIONS } from './migrations.gen'
import { protectDataDirOnWindows } from './windows-acl'
import { applyMigrations, schemaStatus, type EmbeddedMigration, type SchemaStatus } from './migrate'
import * as schema from './schema'

export type Db = BunSQLiteDatabase<typeof schema>

export interface Store {
  readonly db: Db
  readonly sqlite: Database
  readonly path: string
  readonly dataDir: string
  readonly schema: SchemaStatus
  close(): void
}

export class StoreError extends OperatorError {}

export const DB_FILE = 'timbre.db'
/** A busy database answers 503 after this long (DESIGN §12). */
export const BUSY_TIMEOUT_MS = 5000

/** SQLITE_BUSY after the busy timeout: another process held the write lock too long (DESIGN §12: 503). */
export function isDatabaseBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_') || code === 'SQLITE_LOCKED')
}

export function ensureDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    accessSync(dataDir, constants.W_OK | constants.R_OK)
  } catch (err) {
    throw new StoreError(`el directorio de datos ${dataDir} no existe o no se puede escribir: ${(err as Error).message}`)
  }
}

const BACKUPS_DIR = 'backups'
const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0')

/**
 * The data dir is 0700 and what is in it 0600 (issue 18, docs/decisions/operations.md): it holds the master key, the
 * JWT key and every company's documents. The binary makes its files so (main.ts sets the umask); this pass is for a dir
 * that existed with looser modes (an older Timbre, a `mkdir` under umask 022, a copied folder): it takes the group's
 * and others' bits off the dir, each entry in it and each entry of backups/, and logs what it changed. Symbolic links
 * are left alone (chmod would follow them out of the data dir). What it may not change (a dir the process does not
 * own, a read-only mount) is a warning, never a reason not to start: the owner is the one who can fix it.
 */
export function secureDataDir(dataDir: string, log: Logger, platform: NodeJS.Platform = process.platform): void {
  // Windows has no modes to tighten (every file reads 0666): its access rules do this job (windows-acl.ts, issue 26).
  if (platform === 'win32') return
  const changed: Array<{ path: string; from: string; to: string }> = []
  const refused: Array<{ path: string; mode: string; owner_uid: number; reason: string }> = []
  const tighten = (rel: string): Stats | null => {
    let st: Stats
    try {
      st = lstatSync(join(dataDir, rel))
    } catch {
      return null // removed meanwhile (a WAL at its last close)
    }
    const mode = st.mode & 0o777
    if (st.isSymbolicLink() || (mode & 0o077) === 0) return st
    try {
      chmodSync(join(dataDir, rel), mode & 0o700)
      changed.push({ path: rel || '.', from: octal(mode), to: octal(mode & 0o700) })
    } catch (err) {
      refused.push({ path: rel || '.', mode: octal(mode), owner_uid: st.uid, reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message })
    }
    return st
  }
  const dir = tighten('')
  for (const name of readdirSync(dataDir)) {
    const st = tighten(name)
    if (name === BACKUPS_DIR && st?.isDirectory() && !st.isSymbolicLink()) for (const inner of readdirSync(join(dataDir, name))) tighten(join(name, inner))
  }
  if (changed.length > 0) log.warn('data_dir.permissions_tightened', { data_dir: resolve(dataDir), changed })
  if (refused.length > 0)
    log.warn('data_dir.permissions_not_tightened', {
      data_dir: resolve(dataDir),
      owner_uid: dir?.uid ?? null,
      process_uid: process.getuid?.() ?? null,
      paths: refused,
      action: 'el dueño del directorio de datos debe dejarlo en 0700 y sus archivos en 0600, o Timbre debe correr como ese dueño',
    })
}

function setPragmas(sqlite: Database): void {
  // busy_timeout first: switching to WAL needs the lock another process may hold (docs/stack-notes.md).
  sqlite.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
  sqlite.run('PRAGMA journal_mode = WAL')
  // FULL: a 201 promises the signed document is durable, also across a power loss (README "Durabilidad").
  sqlite.run('PRAGMA synchronous = FULL')
  sqlite.run('PRAGMA foreign_keys = ON')
  // A statement that fires a trigger or runs in a savepoint keeps a per-statement rollback journal; on disk it was most
  // of an issuance's insert cost on a large store (170–230 µs against 30–45 µs in memory, docs/decisions/list-counts.md).
  sqlite.run('PRAGMA temp_store = MEMORY')
}

/** SQLite's advice for long-lived connections: refresh the planner statistics where they drifted (housekeeping). */
export function optimizeStore(store: Pick<Store, 'sqlite'>): void {
  store.sqlite.run('PRAGMA optimize')
}

/** Consistent online snapshot of the live database (used before migrations and by `timbre backup`). */
export function snapshotDatabase(sqlite: Database, target: string): void {
  sqlite.run('VACUUM INTO ?', [target])
}

/**
 * Pre-migration copies kept in backups/: each is a whole database, made at every start that migrates, so without a
 * bound an installation that upgrades through many releases fills its disk, and a full disk stops every issuance
 * (503). The newest three cover a rollback through the last upgrades; `timbre backup` is the backup to keep.
 */
export const PRE_MIGRATION_COPIES_KEPT = 3
const PRE_MIGRATION_COPY = /^timbre-.+-before-.+\.db$/

/**
 * Removes all but the newest `keep` pre-migration copies of backups/ (names carry their ISO timestamp, so they sort by
 * age). Only files this code names that way are touched: what an operator put there (`backup --out`) is left alone.
 */
export function prunePreMigrationCopies(dataDir: string, log: Logger, keep = PRE_MIGRATION_COPIES_KEPT): string[] {
  const dir = join(dataDir, BACKUPS_DIR)
  if (!existsSync(dir)) return []
  const copies = readdirSync(dir).filter((name) => PRE_MIGRATION_COPY.test(name) && lstatSync(join(dir, name)).isFile()).sort()
  const removed = copies.slice(0, Math.max(0, copies.length - keep)).map((name) => join(dir, name))
  for (const path of removed) rmSync(path, { force: true })
  if (removed.length > 0) log.info('db.backup.pruned', { removed, kept: keep })
  return removed
}

function backupBeforeMigrating(sqlite: Database, dataDir: string, status: SchemaStatus, log: Logger): string {
  const dir = join(dataDir, BACKUPS_DIR)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const target = join(dir, `timbre-${stamp}-before-${status.binaryVersion}.db`)
  snapshotDatabase(sqlite, target)
  chmodSync(target, 0o600) // VACUUM INTO makes it 0644 less the umask
  log.info('db.backup.before_migration', { path: target, from: status.databaseVersion, to: status.binaryVersion })
  return target
}

function migrate(sqlite: Database, db: Db, dataDir: string, migrations: readonly EmbeddedMigration[], log: Logger): SchemaStatus {
  const before = schemaStatus(sqlite, migrations)
  if (before.isNewer)
    throw new StoreError(
      `la base de datos fue migrada por una versión más nueva de Timbre (esquema ${before.databaseVersion}; este binario conoce hasta ${before.binaryVersion}); actualice el binario`,
    )
  if (before.pending === 0) return before
  if (before.applied > 0) backupBeforeMigrating(sqlite, dataDir, before, log)
  try {
    applyMigrations(db as unknown as BunSQLiteDatabase<Record<string, unknown>>, migrations)
  } catch (err) {
    // Another process (serve beside a CLI command) may have migrated between our check and our BEGIN.
    if (schemaStatus(sqlite, migrations).pending > 0) throw err
  }
  const after = schemaStatus(sqlite, migrations)
  log.info('db.migrated', { from: before.databaseVersion, to: after.databaseVersion, applied: before.pending })
  // Only after a migration that worked: a failed one keeps every copy, the newest being the one to go back to.
  prunePreMigrationCopies(dataDir, log)
  return after
}

/**
 * DESIGN §3: only `serve`, `empresa create` and `restore` create a data dir's database. Every other command opens an
 * existing one, so a command run from the wrong folder fails naming the path it looked at instead of answering `[]`
 * or "not found" from a fresh, empty store (a revoked key that is not revoked).
 */
export function assertDatabaseExists(dataDir: string): void {
  const path = resolve(dataDir, DB_FILE)
  if (!existsSync(path))
    throw new StoreError(`no hay una base de datos de Timbre en ${path}; indique el directorio de datos con --data-dir o TIMBRE_DATA_DIR`)
}

export function openDatabase(dataDir: string, opts: { log?: Logger; migrations?: readonly EmbeddedMigration[]; create?: boolean } = {}): Store {
  const log = opts.log ?? silentLogger
  if (opts.create === false) assertDatabaseExists(dataDir)
  const isNew = !existsSync(dataDir)
  ensureDataDir(dataDir)
  if (isNew) protectDataDirOnWindows(dataDir, log)
  secureDataDir(dataDir, log)
  const path = join(dataDir, DB_FILE)
  // SQLite makes a new database 0644 less the umask, and gives its -wal and -shm the database's mode: made 0600 first.
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600))
  const sqlite = new Database(path, { create: true, strict: true })
  try {
    setPragmas(sqlite)
    const db = drizzle(sqlite, { schema })
    const status = migrate(sqlite, db, dataDir, opts.migrations ?? MIGRATIONS, log)
    return {
      db,
      sqlite,
      path,
      dataDir,
      schema: status,
      close: () => {
        // Fold the WAL back into the main file so a copied data dir is complete (DESIGN §12 shutdown).
        try {
          sqlite.run('PRAGMA wal_checkpoint(TRUNCATE)')
        } finally {
          sqlite.close()
        }
      },
    }
  } catch (err) {
    sqlite.close()
    throw err
  }
}
