// `timbre restore` reads an archive an operator was handed (issue 18, hole 6): an entry that is a link, a device or a
// fifo, or whose path is absolute, climbs with `..` or names a folder, could make the restore write, chmod or open a
// file outside the data dir. Each is refused with a clear error and a non-zero exit, before anything is written.
// The archives are built by hand, header by header, so each carries exactly the hostile entry under test.
import { beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as tar from 'tar'
import { ensureBinary, runBinary } from '../support/binary'
import { tempDir } from '../support/server'

const RUT = '76086428-5'
/** The files of a real backup made by the binary: manifest.json, timbre.db, master.key, jwt-private.pem. */
const good = new Map<string, Buffer>()
/** A file outside any data dir that a hostile entry points at: it must keep its bytes and its mode. */
let victim: string
const VICTIM_TEXT = 'fuera del directorio de datos\n'

beforeAll(async () => {
  await ensureBinary()
  const source = tempDir('timbre-restore-src-')
  const made = runBinary(['empresa', 'create', '--rut', RUT, '--razon-social', 'Ferretería SpA', '--giro', 'Ferretería', '--acteco', '475200', '--direccion', 'Calle 1', '--comuna', 'Santiago', '--ciudad', 'Santiago', '--data-dir', source])
  expect(made.code).toBe(0)
  expect(runBinary(['token', 'issue', '--empresa', RUT, '--data-dir', source]).code).toBe(0) // makes jwt-private.pem
  writeFileSync(join(source, 'master.key'), `${Buffer.alloc(32, 1).toString('base64')}\n`, { mode: 0o600 }) // serve would make it
  const archive = join(tempDir('timbre-restore-bk-'), 'respaldo.tar.gz')
  expect(runBinary(['backup', '--out', archive, '--data-dir', source]).code).toBe(0)
  const out = tempDir('timbre-restore-x-')
  await tar.x({ file: archive, cwd: out })
  for (const name of readdirSync(out)) good.set(name, readFileSync(join(out, name)))
  expect([...good.keys()].sort()).toEqual(['jwt-private.pem', 'manifest.json', 'master.key', 'timbre.db'])
  victim = join(tempDir('timbre-victim-'), 'secreto.txt')
  writeFileSync(victim, VICTIM_TEXT)
  chmodSync(victim, 0o644)
}, 30_000)

type Entry = { readonly path: string; readonly type?: tar.HeaderData['type']; readonly linkpath?: string; readonly body?: Buffer }

/** One ustar header block (and the body padded to 512 bytes) per entry, two zero blocks, gzip. */
function buildArchive(entries: readonly Entry[]): string {
  const blocks: Buffer[] = []
  for (const e of entries) {
    const body = e.body ?? Buffer.alloc(0)
    const header = new tar.Header({ path: e.path, type: e.type ?? 'File', linkpath: e.linkpath, mode: 0o644, uid: 0, gid: 0, size: body.length, mtime: new Date() })
    const block = Buffer.alloc(512)
    if (header.encode(block, 0)) throw new Error(`${e.path}: needs a pax header, keep test paths short`)
    blocks.push(block, body, Buffer.alloc((512 - (body.length % 512)) % 512))
  }
  blocks.push(Buffer.alloc(1024))
  const file = join(tempDir('timbre-hostile-'), 'respaldo.tar.gz')
  writeFileSync(file, Bun.gzipSync(Buffer.concat(blocks)))
  return file
}

const files = (...names: string[]): Entry[] => names.map((path) => ({ path, body: good.get(path)! }))
const ALL = ['manifest.json', 'timbre.db', 'master.key', 'jwt-private.pem']
const except = (name: string) => files(...ALL.filter((n) => n !== name))

/** Runs the restore into an existing, empty data dir inside a fresh parent folder. */
function restoreInto(archive: string) {
  const parent = tempDir('timbre-restore-target-')
  const dataDir = join(parent, 'data')
  mkdirSync(dataDir)
  return { parent, dataDir, result: runBinary(['restore', '--from', archive, '--data-dir', dataDir]) }
}

test('control: the same hand-built archive without a hostile entry restores and serves its company', () => {
  const { dataDir, result } = restoreInto(buildArchive(files(...ALL)))
  expect(result.code).toBe(0)
  expect(readdirSync(dataDir).sort()).toEqual(ALL.slice().sort())
  const listed = runBinary(['empresa', 'list', '--data-dir', dataDir])
  expect(listed.json().map((e: { rut: string }) => e.rut)).toEqual([RUT])
})

describe('a hostile entry is refused: exit 1, a message naming it, the data dir left empty, nothing outside touched', () => {
  const absoluteTarget = join(tempDir('timbre-abs-'), 'fuera.txt')
  const cases: ReadonlyArray<readonly [string, () => Entry[], string]> = [
    ['timbre.db a symlink to a file outside', () => [...except('timbre.db'), { path: 'timbre.db', type: 'SymbolicLink', linkpath: victim }], 'timbre.db'],
    ['master.key a symlink to a file outside', () => [...except('master.key'), { path: 'master.key', type: 'SymbolicLink', linkpath: victim }], 'master.key'],
    ['manifest.json a symlink to /etc/passwd', () => [...except('manifest.json'), { path: 'manifest.json', type: 'SymbolicLink', linkpath: '/etc/passwd' }], 'manifest.json'],
    ['jwt-private.pem a relative symlink that climbs out', () => [...except('jwt-private.pem'), { path: 'jwt-private.pem', type: 'SymbolicLink', linkpath: '../../secreto.txt' }], 'jwt-private.pem'],
    ['master.key a hard link to timbre.db', () => [...except('master.key'), { path: 'master.key', type: 'Link', linkpath: 'timbre.db' }], 'master.key'],
    ['timbre.db a hard link to a file outside', () => [...except('timbre.db'), { path: 'timbre.db', type: 'Link', linkpath: victim }], 'timbre.db'],
    ['a file named ../escape', () => [...files(...ALL), { path: '../escape', body: Buffer.from('x') }], '../escape'],
    ['a file whose path climbs through a folder', () => [...files(...ALL), { path: 'x/../../escape', body: Buffer.from('x') }], 'x/../../escape'],
    ['a file with an absolute path', () => [...files(...ALL), { path: absoluteTarget, body: Buffer.from('x') }], absoluteTarget],
    ['jwt-private.pem a fifo', () => [...except('jwt-private.pem'), { path: 'jwt-private.pem', type: 'FIFO' }], 'jwt-private.pem'],
    ['master.key a character device', () => [...except('master.key'), { path: 'master.key', type: 'CharacterDevice' }], 'master.key'],
    ['a folder inside the archive', () => [...files(...ALL), { path: 'backups/', type: 'Directory' }], 'backups/'],
  ]

  test.each(cases)('%s', (_name, entries, named) => {
    const { parent, dataDir, result } = restoreInto(buildArchive(entries()))
    expect(result.code).toBe(1)
    const error = JSON.parse(result.stderr.trim().split('\n').at(-1)!) as { code: string; message: string }
    expect(error.code).toBe('ERROR')
    expect(error.message).toContain(named)
    expect(error.message).toContain('respaldo')
    expect(readdirSync(dataDir)).toEqual([])
    expect(readdirSync(parent)).toEqual(['data'])
    expect(existsSync(absoluteTarget)).toBe(false)
    expect(readFileSync(victim, 'utf8')).toBe(VICTIM_TEXT)
    expect(statSync(victim).mode & 0o777).toBe(0o644)
  })

  test('a data dir that did not exist is not created', () => {
    const dataDir = join(tempDir('timbre-restore-target-'), 'nuevo')
    const r = runBinary(['restore', '--from', buildArchive([...except('timbre.db'), { path: 'timbre.db', type: 'SymbolicLink', linkpath: victim }]), '--data-dir', dataDir])
    expect(r.code).toBe(1)
    expect(existsSync(dataDir)).toBe(false)
  })
})

test('a timbre.db that is not a database is refused after extraction, and the data dir is emptied again', () => {
  const { dataDir, result } = restoreInto(buildArchive([...except('timbre.db'), { path: 'timbre.db', body: Buffer.alloc(8192, 7) }]))
  expect(result.code).toBe(1)
  expect(readdirSync(dataDir)).toEqual([])
})

test('an archive made with the system tar from inside a data dir (./ entries) restores', () => {
  const folder = tempDir('timbre-restore-sys-')
  for (const [name, body] of good) writeFileSync(join(folder, name), body)
  const archive = join(tempDir('timbre-restore-sys-bk-'), 'respaldo.tar.gz')
  expect(Bun.spawnSync(['tar', '-czf', archive, '-C', folder, '.']).exitCode).toBe(0)
  const { dataDir, result } = restoreInto(archive)
  expect(result.code).toBe(0)
  expect(readdirSync(dataDir).sort()).toEqual(ALL.slice().sort())
})
