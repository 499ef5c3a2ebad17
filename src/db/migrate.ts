// Migrations embedded in the binary, applied with Drizzle's own dialect function so the bookkeeping
// (__drizzle_migrations, hashes, folderMillis) is exactly drizzle-kit's (docs/stack-notes.md "Drizzle migrations").
import { createHash } from 'node:crypto'
import type { Database } from 'bun:sqlite'
import type { BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import type { MigrationMeta } from 'drizzle-orm/migrator'

export interface EmbeddedMigration {
  readonly tag: string
  readonly when: number
  readonly breakpoints: boolean
  readonly sql: string
}

export interface SchemaStatus {
  /** Migrations recorded in the database. */
  readonly applied: number
  /** Embedded migrations the database does not have yet. */
  readonly pending: number
  /** The database was migrated by a newer Timbre: it must be refused (DESIGN §1). */
  readonly isNewer: boolean
  /** Tag of the newest embedded migration: the schema version this binary speaks. */
  readonly binaryVersion: string
  /** Tag (or creation time when unknown) of the newest migration in the database. */
  readonly databaseVersion: string | null
}

export function toMigrationMeta(m: EmbeddedMigration): MigrationMeta {
  return {
    sql: m.sql.split('--> statement-breakpoint'),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: createHash('sha256').update(m.sql).digest('hex'),
  }
}

export function schemaStatus(sqlite: Database, migrations: readonly EmbeddedMigration[]): SchemaStatus {
  const hasTable = sqlite.query("SELECT 1 FROM sqlite_master WHERE type='table' AND name='__drizzle_migrations'").get() !== null
  const rows = hasTable
    ? (sqlite.query('SELECT hash, created_at FROM __drizzle_migrations ORDER BY created_at').all() as Array<{ hash: string; created_at: number }>)
    : []
  const last = migrations.at(-1)
  const lastApplied = rows.at(-1)
  const byWhen = new Map(migrations.map((m) => [m.when, m.tag]))
  const known = new Set(migrations.map((m) => toMigrationMeta(m).hash))
  const isNewer = rows.some((r) => !known.has(r.hash)) || (lastApplied !== undefined && last !== undefined && Number(lastApplied.created_at) > last.when)
  const newestApplied = lastApplied ? Number(lastApplied.created_at) : 0
  return {
    applied: rows.length,
    pending: migrations.filter((m) => m.when > newestApplied).length,
    isNewer,
    binaryVersion: last?.tag ?? 'none',
    databaseVersion: lastApplied ? (byWhen.get(Number(lastApplied.created_at)) ?? String(lastApplied.created_at)) : null,
  }
}

type DialectMigrator = { dialect: { migrate(m: MigrationMeta[], session: unknown, config: object): void }; session: unknown }

/** Same call the stock bun-sqlite migrator makes, with embedded files instead of a folder. */
export function applyMigrations(db: BunSQLiteDatabase<Record<string, unknown>>, migrations: readonly EmbeddedMigration[]): void {
  const internal = db as unknown as DialectMigrator
  internal.dialect.migrate(migrations.map(toMigrationMeta), internal.session, {})
}
