// "Zero changes to stored state" (issue 18, hostile input): every table of the SQLite file, row by row, read through a
// read-only connection while the server runs (WAL lets it read the last committed state), minus what an answered
// request legitimately writes on its way in. docs/decisions/hostile-input.md says why each exclusion is there.
import { Database } from 'bun:sqlite'

/**
 * Columns a refused request may still write, by table. api_keys.last_used_at: a valid key is "used" by every request
 * it authenticates, a refused one included (it is written at most once a minute per key, services/api-keys.ts), and
 * the column is operator information, not data an integrator stored.
 */
export const VOLATILE_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  api_keys: ['last_used_at'],
}

/** Tables that are not the API's data: the migrations ledger (changes only on upgrade). */
const SKIPPED_TABLES = new Set(['__drizzle_migrations'])

export interface StoreSnapshot {
  /** Per table: row key → the row as canonical JSON (volatile columns removed). */
  readonly tables: ReadonlyMap<string, ReadonlyMap<string, string>>
}

export interface StoreChange {
  readonly table: string
  readonly kind: 'added' | 'removed' | 'changed'
  readonly key: string
  readonly before?: string
  readonly after?: string
}

function rowKey(row: Record<string, unknown>, keyColumns: readonly string[]): string {
  return JSON.stringify(keyColumns.map((c) => row[c]))
}

function canonical(row: Record<string, unknown>, dropped: readonly string[]): string {
  const kept: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(row)) {
    if (dropped.includes(k)) continue
    kept[k] = v instanceof Uint8Array ? `bytes:${Bun.hash(v).toString(16)}:${v.byteLength}` : v
  }
  return JSON.stringify(kept)
}

/** Every row of every table of `dbPath`, keyed by primary key (rowid when the table has none). */
export function snapshotStore(dbPath: string): StoreSnapshot {
  const db = new Database(dbPath, { readonly: true })
  try {
    db.run('PRAGMA busy_timeout = 10000')
    const tables = new Map<string, Map<string, string>>()
    const names = db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>
    // One read transaction: every table as of the same commit.
    db.transaction(() => {
      for (const { name } of names) {
        if (SKIPPED_TABLES.has(name)) continue
        const quoted = `"${name.replace(/"/g, '""')}"`
        const info = db.query(`PRAGMA table_info(${quoted})`).all() as Array<{ name: string; pk: number }>
        const pk = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name)
        const withoutRowid = (db.query("SELECT sql FROM sqlite_master WHERE name = ?").get(name) as { sql: string }).sql.toUpperCase().includes('WITHOUT ROWID')
        const keyColumns = pk.length > 0 ? pk : ['__rowid']
        const select = pk.length > 0 || withoutRowid ? `SELECT * FROM ${quoted}` : `SELECT rowid AS __rowid, * FROM ${quoted}`
        const rows = new Map<string, string>()
        for (const row of db.query(select).all() as Array<Record<string, unknown>>) rows.set(rowKey(row, keyColumns), canonical(row, VOLATILE_COLUMNS[name] ?? []))
        tables.set(name, rows)
      }
    })()
    return { tables }
  } finally {
    db.close()
  }
}

/** What differs between two snapshots, table by table (at most `limit` rows reported). */
export function diffStore(before: StoreSnapshot, after: StoreSnapshot, limit = 20): StoreChange[] {
  const changes: StoreChange[] = []
  const names = new Set([...before.tables.keys(), ...after.tables.keys()])
  for (const table of [...names].sort()) {
    const a = before.tables.get(table) ?? new Map<string, string>()
    const b = after.tables.get(table) ?? new Map<string, string>()
    for (const [key, row] of a) {
      const now = b.get(key)
      if (now === undefined) changes.push({ table, kind: 'removed', key, before: row })
      else if (now !== row) changes.push({ table, kind: 'changed', key, before: row, after: now })
    }
    for (const [key, row] of b) if (!a.has(key)) changes.push({ table, kind: 'added', key, after: row })
  }
  return changes.slice(0, limit)
}

/** Rows per table, for the summary. */
export function rowCount(s: StoreSnapshot): number {
  let n = 0
  for (const rows of s.tables.values()) n += rows.size
  return n
}
