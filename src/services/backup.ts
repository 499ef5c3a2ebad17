// `timbre backup` / `timbre restore` (DESIGN §3): one .tar.gz with a consistent online snapshot and the instance keys.
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, copyFileSync, chmodSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { TarOptionsWithAliasesAsyncFile } from 'tar'
import { isoTimestamp } from '../clock'
import { DB_FILE, ensureDataDir, openDatabase, snapshotDatabase } from '../db/open'
import { JWT_PRIVATE_KEY_FILE, MASTER_KEY_FILE } from '../crypto/instance-keys'
import { OperatorError, TimbreError } from '../errors'
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

export async function createBackup(deps: Pick<Deps, 'store' | 'clock'>, input: { out: string; includeKeys: boolean }): Promise<BackupResult> {
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
    const manifest = { timbre: VERSION, schema: store.schema.binaryVersion, created_at: isoTimestamp(deps.clock.now()), files, includes_keys: input.includeKeys }
    await Bun.write(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
    const target = resolve(input.out)
    const tar = await loadTar()
    await tar.c({ gzip: true, file: target, cwd: staging, portable: true, mode: 0o600 } as TarOptionsWithAliasesAsyncFile, [MANIFEST, ...files])
    chmodSync(target, 0o600)
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
    rmSync(staging, { recursive: true, force: true })
  }
}

export interface RestoreResult {
  readonly data_dir: string
  readonly files: readonly string[]
  readonly schema: string
  readonly warning?: string
}

/**
 * Fills an empty data dir only: a restore never overwrites live data. No deps: there is no store yet to hand it (it
 * opens the restored one itself to check it), and nothing it writes carries a time.
 */
export async function restoreBackup(input: { from: string; dataDir: string }): Promise<RestoreResult> {
  const { from, dataDir } = input
  if (!existsSync(from)) throw new TimbreError('NOT_FOUND', { message: `No existe el archivo ${from}.` })
  ensureDataDir(dataDir)
  const present = readdirSync(dataDir).filter((f) => f !== '.gitkeep')
  if (present.length > 0) throw new RestoreError(`el directorio de datos ${dataDir} no está vacío (${present.slice(0, 3).join(', ')}); restaure en uno vacío`)
  const allowed = new Set([MANIFEST, DB_FILE, MASTER_KEY_FILE, JWT_PRIVATE_KEY_FILE])
  const tar = await loadTar()
  try {
    await tar.x({ file: from, cwd: dataDir, filter: (path: string) => allowed.has(path.replace(/^\.\//, '')) })
  } catch (err) {
    throw new RestoreError(`${from} no es un respaldo de Timbre legible: ${(err as Error).message}`)
  }
  if (!existsSync(join(dataDir, DB_FILE))) throw new RestoreError(`${from} no contiene ${DB_FILE}`)
  for (const f of [DB_FILE, MASTER_KEY_FILE, JWT_PRIVATE_KEY_FILE]) if (existsSync(join(dataDir, f))) chmodSync(join(dataDir, f), 0o600)
  const store = openDatabase(dataDir, { create: false })
  try {
    const check = store.sqlite.query('PRAGMA integrity_check').get() as { integrity_check: string }
    if (check.integrity_check !== 'ok') throw new RestoreError(`la base restaurada no pasa integrity_check: ${check.integrity_check}`)
    const files = readdirSync(dataDir).filter((f) => allowed.has(f))
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
