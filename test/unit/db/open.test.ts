// DESIGN §1: embedded migrations match drizzle-kit's folder, apply once, back up before migrating, refuse newer schemas.
import { describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { migrate } from 'drizzle-orm/bun-sqlite/migrator'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import { Database } from 'bun:sqlite'
import { MIGRATIONS } from '../../../src/db/migrations.gen'
import { openDatabase, secureDataDir, StoreError } from '../../../src/db/open'
import { createLogger } from '../../../src/log'
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

  test('after a migration that worked, only the newest 3 pre-migration copies stay; what else is in backups/ stays too', () => {
    const dir = tempDir()
    openDatabase(dir).close()
    const backups = join(dir, 'backups')
    mkdirSync(backups, { mode: 0o700 })
    // Four copies left by earlier upgrades, oldest first by their timestamp, and an operator's own backup.
    const earlier = ['2025-01-02T10-00-00-000Z', '2025-06-30T10-00-00-000Z', '2026-01-15T10-00-00-000Z', '2026-03-01T10-00-00-000Z'].map((t) => `timbre-${t}-before-0009_x.db`)
    for (const name of [...earlier, 'mine.tar.gz']) writeFileSync(join(backups, name), 'x')
    const logs: Array<[string, unknown]> = []
    const next = [...MIGRATIONS, { tag: '9999_test_next', when: MIGRATIONS.at(-1)!.when + 1, breakpoints: true, sql: 'CREATE TABLE next_thing (id text PRIMARY KEY);' }]
    openDatabase(dir, { migrations: next, log: { debug() {}, info: (e, f) => logs.push([e, f]), warn() {}, error() {} } }).close()
    const left = readdirSync(backups).sort()
    const made = left.find((n) => n.endsWith('-before-9999_test_next.db'))
    expect(made).toBeDefined()
    expect(left).toEqual([earlier[2]!, earlier[3]!, 'mine.tar.gz', made!].sort())
    expect(logs.find(([e]) => e === 'db.backup.pruned')?.[1]).toEqual({ removed: [join(backups, earlier[0]!), join(backups, earlier[1]!)], kept: 3 })
  })

  test('a migration that fails removes no pre-migration copy', () => {
    const dir = tempDir()
    openDatabase(dir).close()
    const backups = join(dir, 'backups')
    mkdirSync(backups, { mode: 0o700 })
    const earlier = ['2025-01-02T10-00-00-000Z', '2025-06-30T10-00-00-000Z', '2026-01-15T10-00-00-000Z'].map((t) => `timbre-${t}-before-0009_x.db`)
    for (const name of earlier) writeFileSync(join(backups, name), 'x')
    const broken = [...MIGRATIONS, { tag: '9999_broken', when: MIGRATIONS.at(-1)!.when + 1, breakpoints: true, sql: 'CREATE TABLE empresas (id text);' }]
    expect(() => openDatabase(dir, { migrations: broken })).toThrow()
    expect(readdirSync(backups)).toHaveLength(4)
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

describe('secureDataDir (issue 18)', () => {
  test('takes group and other bits off the dir, its entries and backups/, never follows a link out, never loosens', () => {
    const outside = join(tempDir(), 'fuera.txt')
    writeFileSync(outside, 'x')
    chmodSync(outside, 0o644)
    const dir = join(tempDir(), 'data')
    mkdirSync(join(dir, 'backups', 'dentro'), { recursive: true })
    mkdirSync(join(dir, 'otra', 'honda'), { recursive: true })
    writeFileSync(join(dir, 'otra', 'honda', 'f'), 'x')
    writeFileSync(join(dir, 'solo-lectura'), 'x')
    symlinkSync(outside, join(dir, 'enlace'))
    chmodSync(join(dir, 'otra', 'honda', 'f'), 0o644)
    chmodSync(join(dir, 'solo-lectura'), 0o400)
    for (const d of ['backups/dentro', 'backups', 'otra/honda', 'otra', '.']) chmodSync(join(dir, d), 0o755)
    const lines: Array<Record<string, unknown>> = []
    secureDataDir(dir, createLogger('debug', (l) => lines.push(JSON.parse(l) as Record<string, unknown>)))
    const mode = (p: string) => (statSync(join(dir, p)).mode & 0o777).toString(8)
    expect([mode('.'), mode('backups'), mode('backups/dentro'), mode('otra'), mode('solo-lectura')]).toEqual(['700', '700', '700', '700', '400'])
    // Only the binary's own folder is walked; a link is not followed (chmod would change the file outside).
    expect([mode('otra/honda'), mode('otra/honda/f')]).toEqual(['755', '644'])
    expect(statSync(outside).mode & 0o777).toBe(0o644)
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', event: 'data_dir.permissions_tightened' })])
    expect((lines[0]!.changed as Array<{ path: string }>).map((c) => c.path).sort()).toEqual(['.', 'backups', 'backups/dentro', 'otra'])
    lines.length = 0
    secureDataDir(dir, createLogger('debug', (l) => lines.push(JSON.parse(l) as Record<string, unknown>)))
    expect(lines).toEqual([]) // nothing left to tighten, nothing logged
  })

  test('on Windows it changes nothing and logs nothing: modes mean nothing there, access rules do the job (issue 26)', () => {
    const dir = join(tempDir(), 'data')
    mkdirSync(dir)
    writeFileSync(join(dir, 'master.key'), 'x')
    chmodSync(join(dir, 'master.key'), 0o644)
    chmodSync(dir, 0o755)
    const lines: Array<Record<string, unknown>> = []
    secureDataDir(dir, createLogger('debug', (l) => lines.push(JSON.parse(l) as Record<string, unknown>)), 'win32')
    expect(lines).toEqual([])
    expect([statSync(dir).mode & 0o777, statSync(join(dir, 'master.key')).mode & 0o777]).toEqual([0o755, 0o644])
  })

  test('a database made by openDatabase is 0600 with its WAL and shared memory, whatever the umask', () => {
    const before = process.umask(0o000)
    try {
      const store = openDatabase(join(tempDir(), 'data'))
      store.sqlite.run('CREATE TABLE t (x)')
      for (const f of ['timbre.db', 'timbre.db-wal', 'timbre.db-shm']) expect(`${f} ${(statSync(join(store.dataDir, f)).mode & 0o777).toString(8)}`).toBe(`${f} 600`)
      expect(statSync(store.dataDir).mode & 0o777).toBe(0o700)
      store.close()
    } finally {
      process.umask(before)
    }
  })
})
