// `timbre backup` / `timbre restore` (DESIGN §3): one .tar.gz with a consistent online snapshot and the instance keys.
import { type Dirent, chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import type { TarOptionsWithAliasesAsyncFile } from 'tar'
import { isoTimestamp } from '../clock'
import { DB_FILE, ensureDataDir, openDatabase, snapshotDatabase } from '../db/open'
import { protectDataDirOnWindows, protectFileOnWindows } from '../db/windows-acl'
import { countSnapshotDtes } from '../db/backup-thread'
import { JWT_PRIVATE_KEY_FILE, MASTER_KEY_FILE } from '../crypto/instance-keys'
import { OperatorError, TimbreError } from '../errors'
import { silentLogger, type Logger } from '../log'
import { VERSION } from '../version'
import type { Deps } from './deps'

const MANIFEST = 'manifest.json'

/** tar loads with the first backup or restore: `serve`, which shares the binary, never needs it (issue 17: memory at rest). */
const loadTar = () => import('tar')

export interface BackupResult {
  readonly path: string
  readonly bytes: number
  readonly files: readonly string[]
  readonly includes_keys: boolean
  readonly schema: string
  readonly warning?: string
}

export async function createBackup(deps: Pick<Deps, 'store' | 'clock'> & { log?: Logger }, input: { out: string; includeKeys: boolean }): Promise<BackupResult> {
  const { store } = deps
  const staging = mkdtempSync(join(tmpdir(), 'timbre-backup-'))
  try {
    // VACUUM INTO reads one consistent snapshot while serve keeps writing (WAL readers never block writers).
    snapshotDatabase(store.sqlite, join(staging, DB_FILE))
    const files = [DB_FILE]
    if (input.includeKeys)
      for (const name of [MASTER_KEY_FILE, JWT_PRIVATE_KEY_FILE])
        if (existsSync(join(store.dataDir, name))) {
          copyFileSync(join(store.dataDir, name), join(staging, name))
          files.push(name)
        }
    const manifest = {
      timbre: VERSION,
      schema: store.schema.binaryVersion,
      created_at: isoTimestamp(deps.clock.now()),
      files,
      includes_keys: input.includeKeys,
      // Issue 26: what a verification compares the restored copy with (scheduled copies record it too).
      dte_count: countSnapshotDtes(join(staging, DB_FILE)),
    }
    await Bun.write(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
    const target = resolve(input.out)
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 }) // e.g. <data-dir>/backups/, which a fresh dir lacks
    const tar = await loadTar()
    await tar.c({ gzip: true, file: target, cwd: staging, portable: true, mode: 0o600 } as TarOptionsWithAliasesAsyncFile, [MANIFEST, ...files])
    chmodSync(target, 0o600)
    // chmod means nothing on Windows: the archive (master.key inside) gets the data dir's access rules (issue 26 review).
    protectFileOnWindows(target, deps.log ?? silentLogger)
    return {
      path: target,
      bytes: statSync(target).size,
      files,
      includes_keys: input.includeKeys,
      schema: manifest.schema,
      ...(input.includeKeys
        ? {}
        : { warning: 'El respaldo no incluye master.key: sin ella los certificados y CAF guardados no se pueden usar. Respáldela por separado.' }),
    }
  } finally {
    // A staging folder left in the temp dir must not turn a written, good backup into a failure (Defender may hold the
    // fresh copy a moment on Windows): said, not thrown (issue 26 review).
    try {
      removeTree(staging)
    } catch (err) {
      ;(deps.log ?? silentLogger).warn('backup.staging_not_removed', { path: staging, reason: (err as Error).message })
    }
  }
}

/**
 * Removes a folder Timbre made (a staging folder) with everything in it, file by file and folder by folder. Bun's
 * recursive rmSync failed on Windows: under Wine it throws EFAULT for any folder, even an empty one, after an archive
 * was written (issue 26, docs/decisions/platforms.md); unlink and rmdir work there. Links are unlinked, never followed.
 * A folder that is not there is nothing to do.
 */
export function removeTree(dir: string): void {
  let entries: Dirent[]
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return
    throw err
  }
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) removeTree(path)
    else unlinkSync(path)
  }
  rmdirSync(dir)
}

export interface RestoreResult {
  readonly data_dir: string
  readonly files: readonly string[]
  readonly schema: string
  readonly warning?: string
}

/** What a Timbre backup holds; a restore writes these names and nothing else. */
const RESTORABLE: ReadonlySet<string> = new Set([MANIFEST, DB_FILE, MASTER_KEY_FILE, JWT_PRIVATE_KEY_FILE])
/** tar's types for a plain file (`OldFile` and `ContiguousFile` are older spellings of the same). */
const REGULAR_FILE: ReadonlySet<string> = new Set(['File', 'OldFile', 'ContiguousFile'])
/** What opening the restored store may add beside the files (SQLite's journals, the pre-migration snapshot). */
const OPENED = [`${DB_FILE}-wal`, `${DB_FILE}-shm`, `${DB_FILE}-journal`, 'backups']

export interface ArchiveEntry {
  readonly path: string
  readonly type: string
  readonly linkpath?: string
}

/**
 * Why an archive entry may not be restored, or null (issue 18): a link, a device or a fifo would make the restore write,
 * chmod or open a file outside the data dir, and so would a path that is absolute, climbs with `..` or has folders.
 * A backup is a flat list of regular files (createBackup); only `./`, the folder itself, may come with them, as
 * `tar -C dir .` writes it.
 */
export function refusedEntry(entry: ArchiveEntry): string | null {
  const name = entry.path.replace(/^(\.\/)+/, '')
  if (entry.type === 'Directory' && (name === '' || name === '.')) return null
  if (isAbsolute(entry.path)) return 'tiene una ruta absoluta'
  if (entry.path.split('/').includes('..')) return 'sube de carpeta con ..'
  if (entry.type === 'SymbolicLink' || entry.type === 'Link') return `es un enlace${entry.type === 'Link' ? ' duro' : ' simbólico'} a ${entry.linkpath ?? '?'}`
  if (!REGULAR_FILE.has(entry.type)) return `no es un archivo regular (${entry.type})`
  if (name.includes('/')) return 'está dentro de una carpeta'
  if (!RESTORABLE.has(name)) return `no es un archivo de un respaldo de Timbre (${[...RESTORABLE].join(', ')})`
  return null
}

/** Reads the whole archive before anything is written: every entry must pass refusedEntry, each name once. */
async function checkArchive(from: string, dataDir: string): Promise<void> {
  const tar = await loadTar()
  const seen = new Set<string>()
  const refused: string[] = []
  try {
    await tar.t({
      file: from,
      strict: true,
      onReadEntry: (entry) => {
        const why = refusedEntry(entry)
        const name = entry.path.replace(/^(\.\/)+/, '')
        if (why !== null) refused.push(`"${entry.path}" ${why}`)
        else if (entry.type !== 'Directory' && seen.has(name)) refused.push(`"${entry.path}" aparece dos veces`)
        seen.add(name)
      },
    })
  } catch (err) {
    throw new RestoreError(`${from} no es un respaldo de Timbre legible: ${(err as Error).message}`)
  }
  if (refused.length > 0)
    throw new RestoreError(
      `${from} no se restaura: la entrada ${refused.slice(0, 3).join('; la entrada ')}${refused.length > 3 ? ` (y ${refused.length - 3} más)` : ''}. ` +
        `Un respaldo de Timbre solo contiene archivos regulares (${[...RESTORABLE].join(', ')}); no se escribió nada en ${resolve(dataDir)}.`,
    )
  if (!seen.has(DB_FILE)) throw new RestoreError(`${from} no contiene ${DB_FILE}`)
}

function assertEmpty(dataDir: string): void {
  if (!existsSync(dataDir)) return
  const present = readdirSync(dataDir).filter((f) => f !== '.gitkeep')
  if (present.length > 0) throw new RestoreError(`el directorio de datos ${dataDir} no está vacío (${present.slice(0, 3).join(', ')}); restaure en uno vacío`)
}

/**
 * Fills an empty data dir only: a restore never overwrites live data, and an archive it refuses leaves the data dir
 * as it found it. No deps: there is no store yet to hand it (it opens the restored one itself to check it), and nothing
 * it writes carries a time.
 */
export async function restoreBackup(input: { from: string; dataDir: string; log?: Logger }): Promise<RestoreResult> {
  const { from, dataDir } = input
  if (!existsSync(from)) throw new TimbreError('NOT_FOUND', { message: `No existe el archivo ${from}.` })
  assertEmpty(dataDir)
  await checkArchive(from, dataDir)
  ensureDataDir(dataDir)
  protectDataDirOnWindows(dataDir, input.log ?? silentLogger) // before the keys land in it (issue 26)
  assertEmpty(dataDir)
  try {
    return await extractAndCheck(from, dataDir, input.log ?? silentLogger)
  } catch (err) {
    // Only the names this restore writes: the data dir was empty, and it is left so.
    for (const f of [...RESTORABLE, ...OPENED]) {
      const path = join(dataDir, f)
      if (lstatSync(path, { throwIfNoEntry: false })?.isDirectory()) removeTree(path)
      else rmSync(path, { force: true })
    }
    throw err
  }
}

async function extractAndCheck(from: string, dataDir: string, log: Logger): Promise<RestoreResult> {
  const tar = await loadTar()
  try {
    // checkArchive refused the archive otherwise; the filter repeats it, should the file change in between.
    await tar.x({ file: from, cwd: dataDir, strict: true, filter: (path, entry) => 'type' in entry && REGULAR_FILE.has(entry.type) && refusedEntry(entry) === null })
  } catch (err) {
    throw new RestoreError(`${from} no es un respaldo de Timbre legible: ${(err as Error).message}`)
  }
  for (const f of RESTORABLE) {
    const path = join(dataDir, f)
    if (!existsSync(path)) continue
    if (!lstatSync(path).isFile()) throw new RestoreError(`${from} no se restaura: ${f} no quedó como archivo regular`)
    chmodSync(path, 0o600)
  }
  if (!existsSync(join(dataDir, DB_FILE))) throw new RestoreError(`${from} no contiene ${DB_FILE}`)
  const store = openDatabase(dataDir, { create: false, log })
  try {
    const check = store.sqlite.query('PRAGMA integrity_check').get() as { integrity_check: string }
    if (check.integrity_check !== 'ok') throw new RestoreError(`la base restaurada no pasa integrity_check: ${check.integrity_check}`)
    const files = readdirSync(dataDir).filter((f) => RESTORABLE.has(f))
    const manifest = existsSync(join(dataDir, MANIFEST)) ? (JSON.parse(readFileSync(join(dataDir, MANIFEST), 'utf8')) as { includes_keys?: boolean }) : {}
    return {
      data_dir: resolve(dataDir),
      files,
      schema: store.schema.databaseVersion ?? 'none',
      ...(manifest.includes_keys === false ? { warning: 'El respaldo no incluía master.key: copie la llave original al directorio de datos.' } : {}),
    }
  } finally {
    store.close()
  }
}

export class RestoreError extends OperatorError {}
