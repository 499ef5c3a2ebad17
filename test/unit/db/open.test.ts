// DESIGN §1: embedded migrations match drizzle-kit's folder, apply once, back up before migrating, refuse newer schemas.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { migrate } from 'drizzle-orm/bun-sqlite/migrator'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import { Database } from 'bun:sqlite'
import { MIGRATIONS } from '../../../src/db/migrations.gen'
import { openDatabase, StoreError } from '../../../src/db/open'
import { schemaStatus, toMigrationMeta } from '../../../src/db/migrate'
import { tempDir } from '../../support/server'

const ROOT = join(import.meta.dir, '../../..')

describe('embedded migrations', () => {
  test('are exactly drizzle/ (journal order, same SQL): regenerate with npm run db:generate', () => {
    const journal = JSON.parse(readFileSync(join(ROOT, 'drizzle/meta/_journal.json'), 'utf8')) as { entries: Array<{ tag: string; when: number }> }
    expect(MIGRATIONS.map((m) => [m.tag, m.when])).toEqual(journal.entries.map((e) => [e.tag, e.when]))
    for (const m of MIGRATIONS) expect(m.sql).toBe(readFileSync(join(ROOT, 'drizzle', `${m.tag}.sql`), 'utf8'))
  })

  test('record the same hashes as the stock drizzle migrator reading the folder', () => {
    const dir = tempDir()
    const stock = new Database(join(dir, 'stock.db'))
    migrate(drizzle(stock), { migrationsFolder: join(ROOT, 'drizzle') })
    const stockHashes = stock.query('SELECT hash, created_at FROM __drizzle_migrations ORDER BY id').all()
    stock.close()
    const ours = openDatabase(join(dir, 'ours'))
    const ourHashes = ours.sqlite.query('SELECT hash, created_at FROM __drizzle_migrations ORDER BY id').all()
    ours.close()
    expect(ourHashes).toEqual(stockHashes)
    expect(ourHashes.length).toBe(MIGRATIONS.length)
  })
})

describe('openDatabase', () => {
  test('sets WAL, foreign keys, busy timeout and FULL sync', () => {
    const store = openDatabase(tempDir())
    const q = (p: string) => Object.values(store.sqlite.query(`PRAGMA ${p}`).get() as object)[0]
    expect(q('journal_mode')).toBe('wal')
    expect(q('foreign_keys')).toBe(1)
    expect(q('busy_timeout')).toBe(5000)
    expect(q('synchronous')).toBe(2)
    store.close()
  })

  test('is idempotent: a second open applies nothing and makes no backup', () => {
    const dir = tempDir()
    openDatabase(dir).close()
    const again = openDatabase(dir)
    expect(again.schema).toMatchObject({ applied: MIGRATIONS.length, pending: 0, isNewer: false })
    again.close()
    expect(readdirSync(dir)).not.toContain('backups')
  })

  test('backs the database up before applying a new migration, and the backup is the old schema with the old rows', () => {
    const dir = tempDir()
    const v1 = openDatabase(dir)
    v1.sqlite.run("INSERT INTO empresas (id, rut, razon_social, giro, acteco, direccion, comuna, ciudad, ambiente, fecha_resolucion, numero_resolucion, created_at, updated_at) VALUES ('e1', '1-9', 'R', 'G', '[1]', 'D', 'C', 'C', 'certificacion', '2020-01-01', 0, 'x', 'x')")
    v1.close()
    const next = [...MIGRATIONS, { tag: '9999_test_next', when: MIGRATIONS.at(-1)!.when + 1, breakpoints: true, sql: 'CREATE TABLE next_thing (id text PRIMARY KEY);' }]
    const logs: string[] = []
    const v2 = openDatabase(dir, {
      migrations: next,
      log: { debug() {}, info: (e) => logs.push(e), warn() {}, error() {} },
    })
    expect(v2.schema).toMatchObject({ pending: 0, databaseVersion: '9999_test_next' })
    v2.close()
    expect(logs).toEqual(expect.arrayContaining(['db.backup.before_migration', 'db.migrated']))
    const backups = readdirSync(join(dir, 'backups'))
    expect(backups).toHaveLength(1)
    const old = new Database(join(dir, 'backups', backups[0]!), { readonly: true })
    expect(old.query("SELECT name FROM sqlite_master WHERE name = 'next_thing'").get()).toBeNull()
    expect(old.query('SELECT rut FROM empresas').all()).toEqual([{ rut: '1-9' }])
    old.close()
    // And the old binary now refuses the newer database.
    expect(() => openDatabase(dir)).toThrow(StoreError)
  })

  test('schemaStatus sees an unknown migration hash as newer', () => {
    const dir = tempDir()
    const store = openDatabase(dir)
    store.sqlite.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('abc', 1)")
    expect(schemaStatus(store.sqlite, MIGRATIONS).isNewer).toBe(true)
    store.close()
  })

  test('migration hashes are sha256 of the SQL text, as drizzle-kit computes them', () => {
    const meta = toMigrationMeta(MIGRATIONS[0]!)
    expect(meta.hash).toBe(new Bun.CryptoHasher('sha256').update(MIGRATIONS[0]!.sql).digest('hex'))
    expect(meta.sql.length).toBeGreaterThan(1)
  })

  test('two processes opening a fresh data dir at once both succeed with one schema', async () => {
    const dir = tempDir()
    const script = `import { openDatabase } from ${JSON.stringify(join(ROOT, 'src/db/open.ts'))}; const s = openDatabase(${JSON.stringify(dir)}); console.log(s.schema.applied); s.close()`
    const procs = [0, 1, 2].map(() => Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'pipe' }))
    const codes = await Promise.all(procs.map((p) => p.exited))
    expect(codes).toEqual([0, 0, 0])
    const store = openDatabase(dir)
    expect(store.sqlite.query('SELECT count(*) AS n FROM __drizzle_migrations').get()).toEqual({ n: MIGRATIONS.length })
    store.close()
  })
})
