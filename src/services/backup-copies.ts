// What is done with copies already made (DESIGN §18, issue 26): `timbre backup list` over both targets, reading the
// verification records rather than the archives, and `timbre restore --from FILE|s3://bucket/key`.
import { rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { isoTimestamp } from '../clock'
import type { BackupConfig } from '../config'
import { VERIFIED_SUFFIX, type StoredCopy } from '../domain/backups'
import type { Logger } from '../log'
import { restoreBackup, type RestoreResult } from './backup'
import { S3_WITHOUT_KEYS_WARNING } from './backup-status'
import { backupTargets, downloadS3Copy, parseS3Name, type BackupTarget } from './backup-targets'
import { storedCopies, type VerificationRecord } from './scheduled-backup'

export interface ListedCopy {
  readonly name: string
  readonly target: BackupTarget['kind']
  readonly location: string
  /** The snapshot's instant, from the name. */
  readonly at: string
  readonly bytes: number
  readonly verified: boolean
  /** From the verification record; null for an unverified copy (its archive is not opened to find out). */
  readonly includes_keys: boolean | null
  readonly dte_count: number | null
  /** What to pass to `timbre restore --from`. */
  readonly restore_from: string
}

export interface BackupListing {
  readonly targets: ReadonlyArray<{ readonly target: BackupTarget['kind']; readonly location: string; readonly error: string | null }>
  readonly copies: readonly ListedCopy[]
  readonly warning?: string
}

/** `timbre backup list`: the copies of every configured target, newest first; a target that cannot be read says why. */
export async function listBackupCopies(config: BackupConfig, opts: { targets?: readonly BackupTarget[] } = {}): Promise<BackupListing> {
  const targets = opts.targets ?? backupTargets(config)
  const listed: BackupListing['targets'][number][] = []
  const copies: ListedCopy[] = []
  for (const target of targets) {
    try {
      const entries = await target.list()
      const bytes = new Map(entries.map((e) => [e.name, e.bytes]))
      for (const c of storedCopies(entries)) copies.push(await listedCopy(target, c, bytes.get(c.name) ?? 0))
      listed.push({ target: target.kind, location: target.location, error: null })
    } catch (err) {
      listed.push({ target: target.kind, location: target.location, error: (err as Error)?.message ?? String(err) })
    }
  }
  copies.sort((a, b) => (a.at === b.at ? a.location.localeCompare(b.location) : a.at < b.at ? 1 : -1))
  const s3WithoutKeys = targets.some((t) => t.kind === 's3' && !t.includesKeys)
  return { targets: listed, copies, ...(s3WithoutKeys ? { warning: S3_WITHOUT_KEYS_WARNING } : {}) }
}

async function listedCopy(target: BackupTarget, c: StoredCopy, bytes: number): Promise<ListedCopy> {
  const record = c.verified ? await target.readText(`${c.name}${VERIFIED_SUFFIX}`).then((t) => JSON.parse(t) as VerificationRecord).catch(() => null) : null
  return {
    name: c.name,
    target: target.kind,
    location: target.location,
    at: isoTimestamp(c.at),
    bytes,
    verified: record !== null && record.bytes === bytes,
    includes_keys: record?.includes_keys ?? null,
    dte_count: record?.dte_count ?? null,
    restore_from: target.kind === 'folder' ? join(target.location, c.name) : `${target.location}${c.name}`,
  }
}

/**
 * `timbre restore --from FILE|s3://bucket/key`: an s3:// name is downloaded (endpoint and credentials of the backup
 * settings) beside the data dir, on its disk rather than a RAM-backed /tmp, then restored as a file is.
 */
export async function restoreCopy(input: { from: string; dataDir: string; log?: Logger; config: BackupConfig }): Promise<RestoreResult> {
  const s3 = parseS3Name(input.from)
  if (s3 === null) return restoreBackup(input)
  const local = `${resolve(input.dataDir)}.download-${Bun.randomUUIDv7()}.tar.gz`
  try {
    await downloadS3Copy(input.config, s3, local)
    return await restoreBackup({ ...input, from: local })
  } finally {
    rmSync(local, { force: true })
  }
}
