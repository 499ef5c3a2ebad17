// The scheduled backup's thread (DESIGN §18, issue 26): its own connection to the data dir's database. A VACUUM INTO
// of a multi-GB database, its gzip, and the verification of a copy read back from a target (gunzip, integrity_check
// over every page, a count) take seconds to minutes of CPU and disk; here they never stall the thread that serves
// every company (the 2-core rule, docs/decisions/backups.md). One request at a time, one answer each.
import { S3Client } from 'bun'
import { Database } from 'bun:sqlite'
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { c as tarCreate, x as tarExtract, type TarOptionsWithAliasesAsyncFile } from 'tar'

declare const self: Worker

export const SNAPSHOT_FILE = 'timbre.db'
export const MANIFEST_FILE = 'manifest.json'

export interface SnapshotRequest {
  readonly kind: 'snapshot'
  readonly dbPath: string
  readonly stagingDir: string
  /** What every archive's manifest says besides its files and counts. */
  readonly manifest: { readonly timbre: string; readonly schema: string; readonly created_at: string }
  /** Instance keys that exist, by archive name (master.key, jwt-private.pem). */
  readonly keyFiles: ReadonlyArray<{ readonly name: string; readonly path: string }>
  /** One archive per key choice the targets need (folder with keys, S3 without, by default). */
  readonly archives: ReadonlyArray<{ readonly path: string; readonly includeKeys: boolean }>
}

export interface SnapshotAnswer {
  readonly kind: 'snapshot'
  /** Live DTE rows before and after the snapshot: rows are never deleted, so its count lies between them. */
  readonly liveBefore: number
  readonly liveAfter: number
  readonly dteCount: number
  readonly archives: ReadonlyArray<ArchiveMade>
}

export interface ArchiveMade {
  readonly path: string
  readonly bytes: number
  readonly sha256: string
  /** The target's choice this archive serves (with or without the keys); `files` says what it really holds. */
  readonly includesKeys: boolean
  readonly files: readonly string[]
}

export interface VerifyRequest {
  readonly kind: 'verify'
  readonly archive: string
  readonly workDir: string
}

export interface VerifyAnswer {
  readonly kind: 'verify'
  readonly bytes: number
  readonly sha256: string
  readonly integrity: string
  readonly dteCount: number
  readonly manifest: Readonly<Record<string, unknown>>
}

/** Where an S3 transfer goes: Bun's S3Client options. */
export interface S3Access {
  readonly endpoint: string
  readonly bucket: string
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly region?: string
}

/**
 * An upload or download of one object, here rather than on the serving thread: Bun's S3 client hashes and reads the
 * body on the thread that calls it (measured: a 25 MB `write` of a file stalled the calling thread 400 ms).
 */
export interface TransferRequest {
  readonly kind: 's3-put' | 's3-get'
  readonly s3: S3Access
  readonly key: string
  readonly path: string
  /** A server that accepts and never answers must fail the copy (and alert), not hold the job for ever. */
  readonly timeoutMs: number
}

export type BackupWorkerRequest = SnapshotRequest | VerifyRequest | TransferRequest
export type BackupWorkerAnswer = SnapshotAnswer | VerifyAnswer | { readonly kind: 'done' } | { readonly kind: 'error'; readonly message: string }

function countDtes(db: Database): number {
  return (db.query('SELECT count(*) AS n FROM dtes').get() as { n: number }).n
}

async function sha256Of(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256')
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk)
  return hasher.digest('hex')
}

async function snapshot(req: SnapshotRequest): Promise<SnapshotAnswer> {
  const db = new Database(req.dbPath)
  const snapshotPath = join(req.stagingDir, SNAPSHOT_FILE)
  let liveBefore: number
  let liveAfter: number
  try {
    db.run('PRAGMA busy_timeout = 5000')
    liveBefore = countDtes(db)
    // One read transaction over the whole database: serve keeps writing meanwhile (WAL readers never block writers).
    db.run('VACUUM INTO ?', [snapshotPath])
    liveAfter = countDtes(db)
  } finally {
    db.close()
  }
  chmodSync(snapshotPath, 0o600)
  const copy = new Database(snapshotPath, { readonly: true })
  let dteCount: number
  try {
    dteCount = countDtes(copy)
  } finally {
    copy.close()
  }
  for (const key of req.keyFiles) copyFileSync(key.path, join(req.stagingDir, key.name))
  const archives: ArchiveMade[] = []
  for (const archive of req.archives) archives.push(await pack(req, archive, dteCount))
  return { kind: 'snapshot', liveBefore, liveAfter, dteCount, archives }
}

/** The same archive as `timbre backup` (services/backup.ts): manifest first, then the database and the keys, flat. */
async function pack(req: SnapshotRequest, archive: SnapshotRequest['archives'][number], dteCount: number): Promise<ArchiveMade> {
  const files = [SNAPSHOT_FILE, ...(archive.includeKeys ? req.keyFiles.map((k) => k.name) : [])]
  // What was packed, not what the target asked for: with TIMBRE_MASTER_KEY in the environment there is no master.key
  // file to pack, and a copy that says it holds the key would let a restore skip its warning (review of issue 26).
  const manifest = { ...req.manifest, files, includes_keys: files.includes('master.key'), dte_count: dteCount }
  // Archives are packed one after the other, so each rewrites the one manifest with what it holds.
  writeFileSync(join(req.stagingDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 })
  await tarCreate({ gzip: true, file: archive.path, cwd: req.stagingDir, portable: true, mode: 0o600 } as TarOptionsWithAliasesAsyncFile, [MANIFEST_FILE, ...files])
  chmodSync(archive.path, 0o600)
  return { path: archive.path, bytes: statSync(archive.path).size, sha256: await sha256Of(archive.path), includesKeys: archive.includeKeys, files }
}

/** Only what a backup holds, flat and regular (the rules of services/backup.ts refusedEntry, for our own reading). */
const ARCHIVE_NAMES: ReadonlySet<string> = new Set([MANIFEST_FILE, SNAPSHOT_FILE, 'master.key', 'jwt-private.pem'])

/** `ok`, or what is wrong: SQLite reports some damage as rows and some by refusing to read on (SQLITE_CORRUPT). */
function integrityOf(db: Database): string {
  try {
    return (db.query('PRAGMA integrity_check').all() as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join('; ')
  } catch (err) {
    return (err as Error).message
  }
}

async function verify(req: VerifyRequest): Promise<VerifyAnswer> {
  const bytes = statSync(req.archive).size
  const sha256 = await sha256Of(req.archive)
  mkdirSync(req.workDir, { recursive: true, mode: 0o700 })
  await tarExtract({
    file: req.archive,
    cwd: req.workDir,
    strict: true,
    filter: (path, entry) => 'type' in entry && entry.type === 'File' && ARCHIVE_NAMES.has(path.replace(/^(\.\/)+/, '')),
  })
  const dbPath = join(req.workDir, SNAPSHOT_FILE)
  if (!existsSync(dbPath)) throw new Error(`la copia no contiene ${SNAPSHOT_FILE}`)
  const manifestPath = join(req.workDir, MANIFEST_FILE)
  const manifest = existsSync(manifestPath) ? (JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>) : {}
  const db = new Database(dbPath)
  try {
    const integrity = integrityOf(db)
    return { kind: 'verify', bytes, sha256, integrity, dteCount: integrity === 'ok' ? countDtes(db) : -1, manifest }
  } finally {
    db.close()
  }
}

async function transfer(req: TransferRequest): Promise<{ kind: 'done' }> {
  const file = new S3Client(req.s3).file(req.key)
  const work = req.kind === 's3-put' ? file.write(Bun.file(req.path)) : Bun.write(req.path, file)
  // On time-out the request may go on in the background; the run terminates this worker when it ends.
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`el servidor S3 no terminó la transferencia en ${Math.round(req.timeoutMs / 1000)} s`)), req.timeoutMs)
  })
  try {
    await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
  return { kind: 'done' }
}

function answer(req: BackupWorkerRequest): Promise<BackupWorkerAnswer> {
  if (req.kind === 'snapshot') return snapshot(req)
  if (req.kind === 'verify') return verify(req)
  return transfer(req)
}

self.onmessage = async (event: MessageEvent<BackupWorkerRequest>) => {
  try {
    const answer_ = await answer(event.data)
    self.postMessage(answer_ satisfies BackupWorkerAnswer)
  } catch (err) {
    self.postMessage({ kind: 'error', message: (err as Error)?.message ?? String(err) } satisfies BackupWorkerAnswer)
  }
}
