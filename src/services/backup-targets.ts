// Where scheduled backups go (DESIGN §18, issue 26): a folder (second disk, USB drive, NAS share) and an S3-compatible
// bucket through Bun's built-in S3 client. A copy appears under its final name only once complete: renamed from a
// temporary name in a folder, a finished PUT (or completed multipart upload) in S3; docs/decisions/backups.md.
import { S3Client } from 'bun'
import { statSync } from 'node:fs'
import { open, readdir, rename, rm, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { BackupConfig } from '../config'
import type { BackupThread } from '../db/backup-thread'
import type { S3Access } from '../db/backup-worker'
import { OperatorError } from '../errors'
import { protectFileOnWindows } from '../db/windows-acl'
import { silentLogger, type Logger } from '../log'

export interface TargetEntry {
  readonly name: string
  readonly bytes: number
}

export interface BackupTarget {
  readonly kind: 'folder' | 's3'
  /** The folder's absolute path or `s3://bucket/prefix`: what logs, /ready and alerts name. */
  readonly location: string
  /** Whether this target's copies carry master.key and jwt-private.pem (docs/decisions/backups.md "Keys"). */
  readonly includesKeys: boolean
  list(): Promise<TargetEntry[]>
  /**
   * Complete or absent under `name`: never a partial file under a final name. `offload`, when given, carries the
   * transfer off the calling thread (the S3 target uses it; a folder copy is already chunked async writes).
   */
  put(localPath: string, name: string, offload?: BackupThread): Promise<void>
  get(name: string, localPath: string, offload?: BackupThread): Promise<void>
  readText(name: string): Promise<string>
  writeText(name: string, text: string): Promise<void>
  remove(name: string): Promise<void>
}

export class BackupTargetError extends OperatorError {}

const PARTIAL = /^\.timbre-.*\.partial$/

/**
 * A folder target. It must exist: a missing folder is a USB drive unplugged or a share not mounted, and creating it
 * would fill the disk under the mount point instead. Copies are written to `.NAME.<id>.partial`, flushed to the device
 * (fsync) and renamed: a rename within one folder is atomic, so the final name always holds a whole archive.
 * `onChunk` is for tests: the target disappearing between two chunks of a copy.
 */
export function folderTarget(
  dir: string,
  opts: { includesKeys: boolean; log?: Logger; onChunk?: (written: number) => Promise<void> | void; timeouts?: S3Timeouts },
): BackupTarget {
  const root = resolve(dir)
  const path = (name: string) => join(root, name)
  // Every call on the folder is async (libuv's threads) and has a deadline: a NAS share that hangs (a hard NFS mount, an
  // SMB server gone) must neither stall the thread that serves every company nor hold the job, which never overlaps
  // itself, for ever (review of issue 26). The deadlines are the S3 ones: a share is a network target too.
  const t = opts.timeouts ?? S3_TIMEOUTS
  const transferMs = (bytes: number) => t.floorMs + Math.ceil((bytes / t.minBytesPerSecond) * 1000)
  const share = <T>(work: Promise<T>, ms: number, what: string) => within(work, ms, what, `la carpeta de respaldos ${root}`)
  const requireDir = async () => {
    const st = await share(stat(root), t.callMs, 'revisar').catch((err: unknown) => {
      if (err instanceof BackupTargetError) throw err
      return null
    })
    if (st === null || !st.isDirectory())
      throw new BackupTargetError(`la carpeta de respaldos ${root} no existe o no es una carpeta (¿disco desconectado o unidad de red sin montar?)`)
  }
  const sizeOf = async (file: string) => (await stat(file)).size
  return {
    kind: 'folder',
    location: root,
    includesKeys: opts.includesKeys,
    async list() {
      await requireDir()
      return share(
        (async () => {
          const out: TargetEntry[] = []
          for (const name of await readdir(root)) {
            if (name.startsWith('.')) continue
            const st = await stat(path(name)).catch(() => null)
            if (st?.isFile()) out.push({ name, bytes: st.size })
          }
          return out
        })(),
        t.callMs,
        'listar',
      )
    },
    async put(localPath, name) {
      await requireDir()
      if (await share(exists(path(name)), t.callMs, 'revisar')) throw new BackupTargetError(`ya existe ${path(name)}; no se sobrescribe una copia`)
      const partial = path(`.${name}.${Bun.randomUUIDv7()}.partial`)
      try {
        await share(copyInChunks(localPath, partial, opts.onChunk), transferMs(await sizeOf(localPath)), 'escribir la copia')
        // On Windows the copy (master.key inside) would keep the folder's inherited rules: a second drive lets every
        // Authenticated User read. Restricted before it gets its final name (issue 26 review; a no-op elsewhere: 0600).
        protectFileOnWindows(partial, opts.log ?? silentLogger)
        await share(rename(partial, path(name)), t.callMs, 'renombrar')
        await share(syncFolder(root), t.callMs, 'sincronizar')
      } catch (err) {
        void rm(partial, { force: true }).catch(() => undefined) // not awaited: on a hung share it would hang too
        throw err
      }
    },
    async get(name, localPath) {
      await requireDir()
      await share(copyInChunks(path(name), localPath), transferMs(await share(sizeOf(path(name)), t.callMs, 'revisar')), 'leer la copia')
    },
    readText: (name) => share(Bun.file(path(name)).text(), t.callMs, 'leer'),
    async writeText(name, text) {
      await requireDir()
      const partial = path(`.${name}.${Bun.randomUUIDv7()}.partial`)
      await share(writeDurably(partial, text), t.callMs, 'escribir el registro')
      await share(rename(partial, path(name)), t.callMs, 'renombrar')
      // The record is what makes the copy count, and retention deletes older copies right after it: both names must be
      // on the device first, or a power cut (a FAT/exFAT USB drive) could leave the old copies gone and the new one
      // nameless (review of issue 26).
      await share(syncFolder(root), t.callMs, 'sincronizar')
    },
    async remove(name) {
      await share(rm(path(name), { force: true }), t.callMs, 'borrar')
    },
  }
}

/** Partial files a crashed run left in a folder target, older than a day (a concurrent run's are younger). */
export async function stalePartials(dir: string, now: Date): Promise<string[]> {
  if (!(await exists(dir))) return []
  const old: string[] = []
  for (const name of await readdir(dir)) {
    if (!PARTIAL.test(name)) continue
    const st = await stat(join(dir, name)).catch(() => null)
    if (st !== null && now.getTime() - st.mtimeMs > 24 * 60 * 60 * 1000) old.push(join(dir, name))
  }
  return old
}

const exists = (file: string): Promise<boolean> => stat(file).then(() => true, () => false)

async function writeDurably(file: string, text: string): Promise<void> {
  const out = await open(file, 'wx', 0o600)
  try {
    await out.writeFile(text)
    await out.sync()
  } finally {
    await out.close()
  }
}

/**
 * fsync of the folder, which makes a rename in it durable (POSIX). Windows cannot open a folder as a file, and its
 * renames are journaled by NTFS, so there it is skipped.
 */
async function syncFolder(dir: string): Promise<void> {
  if (process.platform === 'win32') return
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** A stream copy with its fsync, in the event loop's turns: no thread blocked on a multi-GB file. */
async function copyInChunks(from: string, to: string, onChunk?: (written: number) => Promise<void> | void): Promise<void> {
  const out = await open(to, 'wx', 0o600)
  try {
    let written = 0
    for await (const chunk of Bun.file(from).stream()) {
      let offset = 0
      while (offset < chunk.byteLength) offset += (await out.write(chunk, offset, chunk.byteLength - offset)).bytesWritten
      written += chunk.byteLength
      await onChunk?.(written)
    }
    await out.sync()
  } finally {
    await out.close()
  }
}

export interface S3Settings {
  readonly url: string
  readonly bucket: string
  readonly accessKey: string
  readonly secretKey: string
  readonly region: string | null
}

function s3Access(s: S3Settings, bucket = s.bucket): S3Access {
  return { endpoint: s.url, bucket, accessKeyId: s.accessKey, secretAccessKey: s.secretKey, ...(s.region ? { region: s.region } : {}) }
}

function s3Client(s: S3Settings, bucket = s.bucket): S3Client {
  return new S3Client(s3Access(s, bucket))
}

/**
 * How long S3 may take. A transfer gets `floorMs` plus its size at `minBytesPerSecond` (64 KB/s: a 1 GB archive gets
 * about 4.5 h); a listing, a record or a delete gets `callMs`. A server that accepts and never answers then fails the
 * copy, which alerts and is retried, instead of holding the job (which never overlaps itself) for ever.
 */
export interface S3Timeouts {
  readonly callMs: number
  readonly floorMs: number
  readonly minBytesPerSecond: number
}

export const S3_TIMEOUTS: S3Timeouts = { callMs: 60_000, floorMs: 5 * 60_000, minBytesPerSecond: 64 * 1024 }

function within<T>(work: Promise<T>, ms: number, what: string, who = 'el servidor S3'): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BackupTargetError(`${who} no respondió en ${Math.round(ms / 1000)} s (${what})`)), ms)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

/**
 * An S3 target. A PUT (or a multipart upload, which Bun uses for large bodies) creates the object only when it
 * completes, so an upload cut short leaves nothing under the name. Keys are `prefix + name`.
 */
export function s3Target(s: S3Settings, opts: { prefix: string; includesKeys: boolean; timeouts?: S3Timeouts }): BackupTarget {
  const client = s3Client(s)
  const key = (name: string) => `${opts.prefix}${name}`
  const t = opts.timeouts ?? S3_TIMEOUTS
  const transferMs = (bytes: number) => t.floorMs + Math.ceil((bytes / t.minBytesPerSecond) * 1000)
  /** Sizes this target uploaded, so reading a copy back gets the same allowance. */
  const putBytes = new Map<string, number>()
  return {
    kind: 's3',
    location: `s3://${s.bucket}/${opts.prefix}`,
    includesKeys: opts.includesKeys,
    async list() {
      const out: TargetEntry[] = []
      let token: string | undefined
      do {
        const page = await within(client.list({ prefix: opts.prefix, ...(token ? { continuationToken: token } : {}) }), t.callMs, 'listar')
        for (const o of page.contents ?? []) {
          const name = o.key.slice(opts.prefix.length)
          if (name !== '' && !name.includes('/')) out.push({ name, bytes: o.size ?? 0 })
        }
        token = page.isTruncated ? page.nextContinuationToken : undefined
      } while (token)
      return out
    },
    async put(localPath, name, offload) {
      const bytes = statSync(localPath).size
      putBytes.set(name, bytes)
      if (offload) await offload.s3('put', s3Access(s), key(name), localPath, transferMs(bytes))
      else await within(client.write(key(name), Bun.file(localPath)), transferMs(bytes), 'subir')
    },
    async get(name, localPath, offload) {
      const ms = transferMs(putBytes.get(name) ?? 0)
      if (offload) await offload.s3('get', s3Access(s), key(name), localPath, ms)
      else await within(Bun.write(localPath, client.file(key(name))), ms, 'descargar')
    },
    readText: (name) => within(client.file(key(name)).text(), t.callMs, 'leer'),
    async writeText(name, text) {
      await within(client.write(key(name), text, { type: 'application/json' }), t.callMs, 'escribir')
    },
    async remove(name) {
      await within(client.delete(key(name)), t.callMs, 'borrar')
    },
  }
}

export function s3SettingsOf(config: BackupConfig): S3Settings | null {
  const { backupS3Url: url, backupS3Bucket: bucket, backupS3AccessKey: accessKey, backupS3SecretKey: secretKey } = config
  if (url === null || bucket === null || accessKey === null || secretKey === null) return null
  return { url, bucket, accessKey, secretKey, region: config.backupS3Region }
}

/** Kind and location of each configured target, without opening anything (GET /ready, the console). */
export function configuredTargets(config: BackupConfig): Array<{ kind: BackupTarget['kind']; location: string }> {
  const out: Array<{ kind: BackupTarget['kind']; location: string }> = []
  if (config.backupDir !== null) out.push({ kind: 'folder', location: resolve(config.backupDir) })
  if (s3SettingsOf(config) !== null) out.push({ kind: 's3', location: `s3://${config.backupS3Bucket}/${config.backupS3Prefix}` })
  return out
}

/** The targets the settings name: the folder includes the keys, S3 only with TIMBRE_BACKUP_S3_KEYS=true. */
export function backupTargets(config: BackupConfig, log?: Logger): BackupTarget[] {
  const targets: BackupTarget[] = []
  if (config.backupDir !== null) targets.push(folderTarget(config.backupDir, { includesKeys: true, ...(log ? { log } : {}) }))
  const s3 = s3SettingsOf(config)
  if (s3 !== null) targets.push(s3Target(s3, { prefix: config.backupS3Prefix, includesKeys: config.backupS3Keys }))
  return targets
}

/** `s3://bucket/key` → its parts; null for anything else (a plain file path). */
export function parseS3Name(from: string): { bucket: string; key: string } | null {
  const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(from)
  return m ? { bucket: m[1]!, key: m[2]! } : null
}

/** Downloads one copy for `timbre restore --from s3://bucket/key`, with the endpoint and credentials of the settings. */
export async function downloadS3Copy(config: BackupConfig, from: { bucket: string; key: string }, localPath: string): Promise<void> {
  const s3 = s3SettingsOf({ ...config, backupS3Bucket: config.backupS3Bucket ?? from.bucket })
  if (s3 === null)
    throw new BackupTargetError('restaurar desde s3:// necesita TIMBRE_BACKUP_S3_URL, TIMBRE_BACKUP_S3_ACCESS_KEY y TIMBRE_BACKUP_S3_SECRET_KEY')
  const file = s3Client(s3, from.bucket).file(from.key)
  if (!(await file.exists())) throw new BackupTargetError(`no existe s3://${from.bucket}/${from.key}`)
  await Bun.write(localPath, file)
}
