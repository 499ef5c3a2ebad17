// What GET /ready and `timbre version` report of this process (DESIGN §1, §12): the store answers and speaks this
// binary's schema; when the SII last gave a real answer, and how long the oldest DTE has waited for it.
import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { oldestPendingCreatedAt } from '../db/dte-store'
import { OperatorError } from '../errors'
import { schemaStatus } from '../db/migrate'
import { MIGRATIONS } from '../db/migrations.gen'
import type { Deps } from './deps'

export type Check = 'ok' | 'fail'

export function storeReadiness(deps: Pick<Deps, 'store'>): { readonly database: Check; readonly migrations: Check } {
  try {
    deps.store.sqlite.query('SELECT 1').get()
  } catch {
    return { database: 'fail', migrations: 'fail' }
  }
  const schema = schemaStatus(deps.store.sqlite, MIGRATIONS)
  return { database: 'ok', migrations: schema.pending === 0 && !schema.isNewer ? 'ok' : 'fail' }
}

export function siiReadiness(deps: Pick<Deps, 'store' | 'clock' | 'siiHealth'>): { last_ok_at: string | null; oldest_pending_s: number | null } {
  const oldest = oldestPendingCreatedAt(deps.store.db)
  return {
    last_ok_at: deps.siiHealth.lastOkAt(),
    oldest_pending_s: oldest === null ? null : Math.max(0, Math.round((deps.clock.now().getTime() - Date.parse(oldest)) / 1000)),
  }
}

/** The schema this binary speaks: the newest embedded migration and how many there are. */
export function binarySchema(): { readonly schema: string | null; readonly migrations: number } {
  return { schema: MIGRATIONS.at(-1)?.tag ?? null, migrations: MIGRATIONS.length }
}

/**
 * Where a data dir's database stands for this binary (`timbre version --data-dir`): its schema, how many migrations a
 * start would apply, whether a newer binary made it. Read-only: nothing is migrated, backed up or created.
 */
export function dataDirSchema(dataDir: string): { readonly path: string; readonly schema: string | null; readonly pending_migrations: number; readonly is_newer: boolean } {
  const path = join(dataDir, 'timbre.db')
  if (!existsSync(path)) throw new OperatorError(`no hay base de datos en ${path}`)
  const sqlite = new Database(path, { readonly: true })
  try {
    const status = schemaStatus(sqlite, MIGRATIONS)
    return { path: dataDir, schema: status.databaseVersion, pending_migrations: status.pending, is_newer: status.isNewer }
  } finally {
    sqlite.close()
  }
}
