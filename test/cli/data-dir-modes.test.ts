// The data dir holds the database, the master key and the JWT key (issue 18, hole 8): it is 0700 and everything the
// binary writes in it 0600, whatever the umask it was started with, also when the dir existed with looser modes
// (tightened at start, and logged). A dir the process does not own is warned about, never a reason not to start.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { MIGRATIONS } from '../../src/db/migrations.gen'
import { openDatabase } from '../../src/db/open'
import { BINARY, ensureBinary, runBinary, startServe, type ServeProcess } from '../support/binary'
import { tempDir } from '../support/server'

const umaskBefore = process.umask()
beforeAll(async () => {
  await ensureBinary()
}, 60_000)
afterAll(() => {
  process.umask(umaskBefore)
})

/** Every entry under the data dir, the dir itself as '.', with its permission bits. */
function modes(dataDir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const visit = (path: string) => {
    const st = lstatSync(path)
    out[relative(dataDir, path) || '.'] = (st.mode & 0o777).toString(8).padStart(4, '0')
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
  }
  visit(dataDir)
  return out
}

/** Each entry's expected mode: 0700 for folders, 0600 for files. */
function tight(dataDir: string): Record<string, string> {
  return Object.fromEntries(Object.keys(modes(dataDir)).map((p) => [p, lstatSync(join(dataDir, p)).isDirectory() ? '0700' : '0600']))
}

async function waitFor(what: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!what()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await Bun.sleep(20)
  }
}

describe.each(['022', '000'])('started with umask %s', (umask) => {
  let serve: ServeProcess
  afterAll(async () => {
    if (serve && serve.proc.exitCode === null) await serve.terminate()
  })

  test('a fresh data dir: 0700, and every file serve --demo writes (database, WAL, keys, lock, simulator) 0600', async () => {
    const dataDir = join(tempDir('timbre-modes-'), 'data')
    process.umask(parseInt(umask, 8))
    serve = await startServe(['--data-dir', dataDir, '--sii', 'simulado', '--demo'])
    await waitFor(() => serve.lines.some((l) => l.event === 'demo.ready') && existsSync(join(dataDir, 'jwt-private.pem')))
    const seen = modes(dataDir)
    for (const f of ['timbre.db', 'timbre.db-wal', 'timbre.db-shm', 'master.key', 'jwt-private.pem', 'serve.lock', 'serve.pid', 'demo-api-key', 'sii-simulator.db'])
      expect(`${f} ${seen[f]}`).toBe(`${f} 0600`)
    expect(seen).toEqual(tight(dataDir))

    const backup = runBinary(['backup', '--out', join(dataDir, 'backups', 'respaldo.tar.gz'), '--data-dir', dataDir])
    expect(backup.code).toBe(0)
    const after = modes(dataDir)
    expect(after['backups']).toBe('0700')
    expect(after['backups/respaldo.tar.gz']).toBe('0600')
    expect(after).toEqual(tight(dataDir))
    await serve.terminate()
  }, 30_000)
})

test('a data dir that existed 0755 with a 0644 timbre.db of an older schema: tightened at start, logged, and the pre-migration copy is 0600', async () => {
  const dataDir = join(tempDir('timbre-modes-old-'), 'data')
  const old = openDatabase(dataDir, { migrations: MIGRATIONS.slice(0, -1) })
  old.close()
  writeFileSync(join(dataDir, 'master.key'), `${Buffer.alloc(32, 3).toString('base64')}\n`)
  mkdirSync(join(dataDir, 'backups'))
  writeFileSync(join(dataDir, 'backups', 'viejo.db'), 'x')
  for (const f of ['timbre.db', 'master.key', 'backups/viejo.db']) chmodSync(join(dataDir, f), 0o644)
  chmodSync(join(dataDir, 'backups'), 0o755)
  chmodSync(dataDir, 0o755)

  process.umask(0o022)
  const serve = await startServe(['--data-dir', dataDir, '--sii', 'simulado'])
  try {
    await waitFor(() => existsSync(join(dataDir, 'jwt-private.pem')))
    const seen = modes(dataDir)
    expect(seen['.']).toBe('0700')
    expect(seen['timbre.db']).toBe('0600')
    expect(Object.keys(seen).filter((p) => /^backups\/timbre-.*-before-.*\.db$/.test(p))).toHaveLength(1)
    expect(seen).toEqual(tight(dataDir))
    const logged = serve.lines.find((l) => l.event === 'data_dir.permissions_tightened') as { level: string; changed: Array<{ path: string; from: string; to: string }> } | undefined
    expect(logged?.level).toBe('warn')
    expect(logged?.changed).toEqual(
      expect.arrayContaining([
        { path: '.', from: '0755', to: '0700' },
        { path: 'timbre.db', from: '0644', to: '0600' },
        { path: 'master.key', from: '0644', to: '0600' },
        { path: 'backups', from: '0755', to: '0700' },
        { path: 'backups/viejo.db', from: '0644', to: '0600' },
      ]),
    )
    expect(runBinary(['backup', '--out', join(dataDir, 'backups', 'respaldo.tar.gz'), '--data-dir', dataDir]).code).toBe(0)
    expect(modes(dataDir)).toEqual(tight(dataDir))
  } finally {
    await serve.terminate()
  }
}, 30_000)

test('an admin command tightens too, and says so on stderr', () => {
  const dataDir = join(tempDir('timbre-modes-cli-'), 'data')
  openDatabase(dataDir).close()
  chmodSync(join(dataDir, 'timbre.db'), 0o644)
  chmodSync(dataDir, 0o755)
  process.umask(0o022)
  const r = runBinary(['empresa', 'list', '--data-dir', dataDir])
  expect(r.code).toBe(0)
  expect(r.stderr).toContain('data_dir.permissions_tightened')
  expect(modes(dataDir)).toEqual(tight(dataDir))
})

// Only root can start a process as another user; as any other user the case cannot be set up.
test.skipIf(process.getuid?.() !== 0)('a data dir the process does not own: a warning naming it, serve starts, its own files 0600', async () => {
  const parent = tempDir('timbre-modes-other-')
  chmodSync(parent, 0o755)
  const dataDir = join(parent, 'data')
  mkdirSync(dataDir)
  chmodSync(dataDir, 0o777) // owned by root, writable by nobody: only its owner can tighten it
  process.umask(0o022)
  const proc = Bun.spawn(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', BINARY, 'serve', '--port', '0', '--data-dir', dataDir, '--sii', 'simulado'], {
    env: { PATH: process.env.PATH ?? '', HOME: '/tmp' },
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
  })
  let out = ''
  void (async () => {
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) out += Buffer.from(chunk).toString()
  })()
  try {
    await waitFor(() => out.includes('"server.started"') || proc.exitCode !== null)
    expect(proc.exitCode).toBeNull()
    const warning = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.event === 'data_dir.permissions_not_tightened')
    expect(warning).toMatchObject({ level: 'warn', data_dir: dataDir, owner_uid: 0, process_uid: 65534 })
    expect(lstatSync(dataDir).mode & 0o777).toBe(0o777)
    await waitFor(() => existsSync(join(dataDir, 'jwt-private.pem')))
    const seen = modes(dataDir)
    delete seen['.']
    expect(Object.keys(seen).length).toBeGreaterThan(4)
    for (const [path, mode] of Object.entries(seen)) expect(`${path} ${mode}`).toBe(`${path} 0600`)
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
}, 30_000)
