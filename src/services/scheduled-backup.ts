// Scheduled, verified backups (DESIGN §18, issue 26; docs/decisions/backups.md). One run: a consistent snapshot on
// the backup thread, the same archive as `timbre backup` put on each target, read back FROM the target and verified
// (integrity_check, DTE count), a verification record beside it, then retention. A copy that fails is removed, never
// counted, alerts (log, `backup.failed` webhooks, /ready, console), and the target's older copies stay untouched.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isoTimestamp } from '../clock'
import type { BackupConfig } from '../config'
import { JWT_PRIVATE_KEY_FILE, MASTER_KEY_FILE } from '../crypto/instance-keys'
import { startBackupThread, type BackupThread } from '../db/backup-thread'
import type { ArchiveMade, SnapshotAnswer } from '../db/backup-worker'
import { listWebhooks } from '../db/webhook-store'
import { backupName, copiesToDelete, isBackupDue, parseBackupName, VERIFIED_SUFFIX, type RunRecord, type StoredCopy } from '../domain/backups'
import { OperatorError } from '../errors'
import { VERSION } from '../version'
import { removeTree } from './backup'
import { backupTargets, stalePartials, type BackupTarget, type TargetEntry } from './backup-targets'
import { isFailing, readBackupStatus, writeBackupStatus, type BackupStatus, type TargetStatus } from './backup-status'
import type { Deps } from './deps'
import { listEmpresas } from './empresas'
import { emitEvent } from './events'

export type BackupDeps = Pick<Deps, 'store' | 'clock' | 'log'>
/** The settings a run reads (config.ts), named here for the jobs door, which does not import config.ts (STYLE §1). */
export type { BackupConfig }

export interface TargetOutcome {
  readonly target: BackupTarget['kind']
  readonly location: string
  readonly ok: boolean
  readonly copy: string
  readonly bytes: number | null
  readonly includes_keys: boolean
  readonly reason: string | null
  /** Copies retention removed after this verified one (none after a failure). */
  readonly deleted: readonly string[]
}

export interface BackupRunResult {
  readonly copy: string
  readonly created_at: string
  readonly dte_count: number | null
  readonly targets: readonly TargetOutcome[]
}

/** What a verification record (`<copy>.verified.json`) says: `timbre backup list` reads it, never the archive. */
export interface VerificationRecord {
  readonly copy: string
  readonly verified_at: string
  readonly bytes: number
  readonly sha256: string
  readonly dte_count: number
  readonly includes_keys: boolean
  readonly schema: string
  readonly timbre: string
  /**
   * The installation that made the copy (backups/instance-id of its data dir). Retention deletes only its own copies:
   * two installations pointed at one NAS folder or one bucket prefix would otherwise delete each other's, until one had
   * none (review of issue 26).
   */
  readonly instance: string
}

/**
 * This data dir's installation id, made at its first scheduled copy. Not in the backups themselves: a data dir restored
 * from one is a new installation, whose copies start anew beside the old ones, which it never deletes.
 */
export function backupInstanceId(dataDir: string): string {
  const path = join(dataDir, 'backups', 'instance-id')
  const known = existsSync(path) ? readFileSync(path, 'utf8').trim() : ''
  if (/^[0-9a-f-]{36}$/.test(known)) return known
  const id = Bun.randomUUIDv7()
  mkdirSync(join(dataDir, 'backups'), { recursive: true, mode: 0o700 })
  writeFileSync(path, `${id}\n`, { mode: 0o600 })
  return id
}

class VerificationError extends OperatorError {}

/**
 * Whether the job should copy now: from the later of the last attempt in the status file (which `backup run` from
 * cron also writes) and `remembered`, this process's own last attempt, so a status file that cannot be written (a
 * full or read-only data dir) does not turn the period into one copy per tick (domain/backups.ts isBackupDue).
 */
export function isScheduledBackupDue(deps: Pick<Deps, 'store' | 'clock'>, config: BackupConfig, remembered: RunRecord | null = null): boolean {
  const recorded = readBackupStatus(deps.store.dataDir).last_run
  const onFile = recorded === null ? null : { at: new Date(recorded.at), ok: recorded.ok }
  const last = onFile === null || (remembered !== null && remembered.at > onFile.at) ? remembered : onFile
  return isBackupDue(last, deps.clock.now(), config.backupEveryMs)
}

/**
 * One copy now to every configured target (serve's job when due, `timbre backup run`). `targets` replaces the
 * configured ones (tests: a target that fails on purpose). Never throws for a failure, even one before any target is
 * reached (a full data dir): it is in the result, and it alerts like the others.
 */
export async function runScheduledBackup(
  deps: BackupDeps,
  config: BackupConfig,
  opts: { targets?: readonly BackupTarget[]; freeBytes?: (dir: string) => number } = {},
): Promise<BackupRunResult> {
  const targets = opts.targets ?? backupTargets(config, deps.log)
  const now = deps.clock.now()
  const copy = backupName(now)
  const started = performance.now()
  const run = await withStaging(deps, now, (staging, thread) => copyEverywhere(deps, config, thread, { targets, copy, staging, now }), opts.freeBytes).catch(
    (err: unknown) => ({ dteCount: null, outcomes: targets.map((t) => failed(t, copy, `no se pudo preparar la copia: ${messageOf(err)}`)) }),
  )
  await recordRun(deps, targets, run.outcomes, now)
  deps.log.info('backup.run', { copy, dte_count: run.dteCount, ok: run.outcomes.every((o) => o.ok), duration_ms: Math.round(performance.now() - started) })
  return { copy, created_at: isoTimestamp(now), dte_count: run.dteCount, targets: run.outcomes }
}

/**
 * Room a run needs on the data dir's disk before it stages anything: the snapshot (about the database), its archives
 * (smaller) and a read-back, so twice the database, plus a margin for the issuance that goes on meanwhile. A backup that
 * filled the disk would stop issuance (SQLITE_FULL, a 503) for the sake of a copy (review of issue 26).
 */
export function stagingRoomNeeded(databaseBytes: number): number {
  return 2 * databaseBytes + 64 * 1024 * 1024 // 64 MB: thousands of DTEs of issuance meanwhile
}

function assertStagingRoom(deps: BackupDeps, freeBytes: (dir: string) => number): void {
  const databaseBytes = ['', '-wal'].reduce((sum, suffix) => sum + (statSync(`${deps.store.path}${suffix}`, { throwIfNoEntry: false })?.size ?? 0), 0)
  const needed = stagingRoomNeeded(databaseBytes)
  const free = freeBytes(deps.store.dataDir)
  if (free < needed)
    throw new Error(
      `no hay espacio para preparar la copia en el disco del directorio de datos: hay ${mb(free)} MB libres y se necesitan ${mb(needed)} MB ` +
        '(el doble de la base y un margen para seguir emitiendo); libere espacio en ese disco',
    )
}

const mb = (bytes: number) => Math.floor(bytes / 1024 / 1024)

/** Free bytes for this account on the disk of `dir`. */
export function freeBytesOf(dir: string): number {
  const fs = statfsSync(dir)
  return fs.bavail * fs.bsize
}

/** A staging folder in `<data-dir>/backups/` (the database's disk, not a RAM /tmp) and a backup thread, for one run. */
async function withStaging<T>(deps: BackupDeps, now: Date, work: (staging: string, thread: BackupThread) => Promise<T>, freeBytes: (dir: string) => number = freeBytesOf): Promise<T> {
  removeStaleStaging(deps, now)
  assertStagingRoom(deps, freeBytes)
  const staging = join(deps.store.dataDir, 'backups', `.staging-${Bun.randomUUIDv7()}`)
  mkdirSync(staging, { recursive: true, mode: 0o700 })
  const thread = startBackupThread()
  try {
    return await work(staging, thread)
  } finally {
    thread.close()
    // Never fails the run it ends: the copies are judged already; a staging folder left is removed a day later.
    try {
      removeTree(staging)
    } catch (err) {
      deps.log.warn('backup.staging_not_removed', { path: staging, reason: messageOf(err) })
    }
  }
}

/** One snapshot, then each target in turn; a snapshot that failed fails every target with its reason. */
async function copyEverywhere(
  deps: BackupDeps,
  config: BackupConfig,
  thread: BackupThread,
  run: { targets: readonly BackupTarget[]; copy: string; staging: string; now: Date },
): Promise<{ dteCount: number | null; outcomes: TargetOutcome[] }> {
  let snapshot: SnapshotAnswer
  try {
    snapshot = await takeSnapshot(deps, thread, run.staging, run.now, run.targets)
  } catch (err) {
    return { dteCount: null, outcomes: run.targets.map((t) => failed(t, run.copy, `la copia de la base falló: ${messageOf(err)}`)) }
  }
  const outcomes: TargetOutcome[] = []
  for (const target of run.targets) {
    const archive = snapshot.archives.find((a) => a.includesKeys === target.includesKeys)!
    outcomes.push(await copyToTarget(deps, config, thread, { target, archive, copy: run.copy, staging: run.staging, snapshot }))
  }
  return { dteCount: snapshot.dteCount, outcomes }
}

async function takeSnapshot(deps: BackupDeps, thread: BackupThread, staging: string, now: Date, targets: readonly BackupTarget[]): Promise<SnapshotAnswer> {
  const keyChoices = [...new Set(targets.map((t) => t.includesKeys))]
  const keyFiles = [MASTER_KEY_FILE, JWT_PRIVATE_KEY_FILE].map((name) => ({ name, path: join(deps.store.dataDir, name) })).filter((k) => existsSync(k.path))
  const snap = await thread.snapshot({
    dbPath: deps.store.path,
    stagingDir: staging,
    manifest: { timbre: VERSION, schema: deps.store.schema.binaryVersion ?? 'none', created_at: isoTimestamp(now) },
    keyFiles,
    archives: keyChoices.map((includeKeys) => ({ path: join(staging, includeKeys ? 'with-keys.tar.gz' : 'without-keys.tar.gz'), includeKeys })),
  })
  // DTE rows are never deleted: a snapshot whose count is outside the live counts around it is not the database.
  if (snap.dteCount < snap.liveBefore || snap.dteCount > snap.liveAfter)
    throw new Error(`la copia tiene ${snap.dteCount} DTE, la base tenía entre ${snap.liveBefore} y ${snap.liveAfter}`)
  return snap
}

interface CopyJob {
  readonly target: BackupTarget
  readonly archive: ArchiveMade
  readonly copy: string
  readonly staging: string
  readonly snapshot: SnapshotAnswer
}

async function copyToTarget(deps: BackupDeps, config: BackupConfig, thread: BackupThread, job: CopyJob): Promise<TargetOutcome> {
  const { target, archive, copy } = job
  try {
    await target.put(archive.path, copy, thread)
  } catch (err) {
    return failed(target, copy, `no se pudo escribir la copia: ${messageOf(err)}`)
  }
  try {
    const record = await verifyFromTarget(deps, thread, job)
    await target.writeText(`${copy}${VERIFIED_SUFFIX}`, `${JSON.stringify(record, null, 2)}\n`)
  } catch (err) {
    // Removed rather than renamed aside: a copy that failed verification restores nothing, and one kept per failed day
    // on a dying disk would fill it. The reason and the archive's digest are in the log and the alert.
    await target.remove(copy).catch(() => undefined)
    return failed(target, copy, `${err instanceof VerificationError ? 'la verificación falló' : 'no se pudo verificar'}: ${messageOf(err)}`)
  }
  const deleted = await applyRetention(deps, config, target).catch((err: unknown) => {
    deps.log.warn('backup.retention_failed', { target: target.kind, location: target.location, error: messageOf(err) })
    return [] as string[]
  })
  deps.log.info('backup.completed', { target: target.kind, location: target.location, copy, bytes: archive.bytes, dte_count: job.snapshot.dteCount, deleted })
  return { target: target.kind, location: target.location, ok: true, copy, bytes: archive.bytes, includes_keys: archive.files.includes(MASTER_KEY_FILE), reason: null, deleted }
}

/** Reads the copy back from the target (re-read, re-download) and checks it on the backup thread. */
async function verifyFromTarget(deps: BackupDeps, thread: BackupThread, job: CopyJob): Promise<VerificationRecord> {
  const local = join(job.staging, `verify-${job.target.kind}.tar.gz`)
  rmSync(local, { force: true })
  await job.target.get(job.copy, local, thread)
  const workDir = join(job.staging, `verify-${job.target.kind}`)
  removeTree(workDir)
  const v = await thread.verify({ archive: local, workDir }).catch((err: unknown) => {
    throw new VerificationError(`la copia leída de vuelta no se abre: ${messageOf(err)}`)
  })
  removeTree(workDir)
  rmSync(local, { force: true })
  const expected = job.snapshot.dteCount
  if (v.sha256 !== job.archive.sha256) throw new VerificationError(`los bytes leídos de vuelta no son los escritos (sha256 ${v.sha256.slice(0, 12)}… ≠ ${job.archive.sha256.slice(0, 12)}…)`)
  if (v.integrity !== 'ok') throw new VerificationError(`integrity_check: ${v.integrity.slice(0, 200)}`)
  if (v.manifest.dte_count !== expected || v.dteCount !== expected)
    throw new VerificationError(`DTE: la copia tiene ${v.dteCount}, su manifiesto dice ${String(v.manifest.dte_count)}, la base tenía ${expected}`)
  return {
    copy: job.copy,
    verified_at: isoTimestamp(deps.clock.now()),
    bytes: v.bytes,
    sha256: v.sha256,
    dte_count: v.dteCount,
    includes_keys: job.archive.files.includes(MASTER_KEY_FILE),
    schema: String(v.manifest.schema),
    timbre: String(v.manifest.timbre),
    instance: backupInstanceId(deps.store.dataDir),
  }
}

/** The target's copies as retention sees them: verified when their record is there. */
export function storedCopies(entries: readonly TargetEntry[]): StoredCopy[] {
  const names = new Set(entries.map((e) => e.name))
  return entries.flatMap((e) => {
    const at = parseBackupName(e.name)
    return at === null ? [] : [{ name: e.name, at, verified: names.has(`${e.name}${VERIFIED_SUFFIX}`) }]
  })
}

/**
 * The copies this installation made: those whose record names it. A record that cannot be read is not known to be
 * ours, so it is never deleted; another installation's copies are said once per run (backup.shared_target).
 */
async function ownCopies(deps: BackupDeps, target: BackupTarget): Promise<StoredCopy[]> {
  const instance = backupInstanceId(deps.store.dataDir)
  const all = storedCopies(await target.list())
  const own: StoredCopy[] = []
  let foreign = 0
  for (const copy of all) {
    if (!copy.verified) {
      own.push(copy) // unverified: whoever made it, it restores nothing; copiesToDelete still waits a day for it
      continue
    }
    const record = await target.readText(`${copy.name}${VERIFIED_SUFFIX}`).then((t) => JSON.parse(t) as Partial<VerificationRecord>).catch(() => null)
    if (record?.instance === instance) own.push(copy)
    else foreign++
  }
  if (foreign > 0)
    deps.log.warn('backup.shared_target', {
      target: target.kind,
      location: target.location,
      foreign_copies: foreign,
      message: 'el destino tiene copias de otra instalación de Timbre (o de esta antes de restaurarla): no se borran; use una carpeta o prefijo por instalación',
    })
  return own
}

/** Only after this run's copy on the target verified: a failing target keeps every older copy (issue 26). */
async function applyRetention(deps: BackupDeps, config: BackupConfig, target: BackupTarget): Promise<string[]> {
  const doomed = copiesToDelete(await ownCopies(deps, target), deps.clock.now(), config.backupKeep)
  for (const name of doomed) {
    // The record first: a copy whose removal is cut short is then merely unverified, never a record without its archive.
    await target.remove(`${name}${VERIFIED_SUFFIX}`)
    await target.remove(name)
  }
  if (target.kind === 'folder') for (const path of await stalePartials(target.location, deps.clock.now())) rmSync(path, { force: true })
  return doomed
}

function failed(target: BackupTarget, copy: string, reason: string): TargetOutcome {
  return { target: target.kind, location: target.location, ok: false, copy, bytes: null, includes_keys: target.includesKeys, reason, deleted: [] }
}

/** Staging folders of runs that died (a kill, a power cut), left in backups/: older than a day, so not a running one. */
function removeStaleStaging(deps: BackupDeps, now: Date): void {
  const dir = join(deps.store.dataDir, 'backups')
  if (!existsSync(dir)) return
  for (const name of readdirSync(dir))
    if (name.startsWith('.staging-') && now.getTime() - statSync(join(dir, name)).mtimeMs > 24 * 60 * 60 * 1000) removeTree(join(dir, name))
}

/** The status file, the error lines and the `backup.failed` events of a run. */
async function recordRun(deps: BackupDeps, targets: readonly BackupTarget[], outcomes: readonly TargetOutcome[], now: Date): Promise<void> {
  const before = readBackupStatus(deps.store.dataDir)
  const next: Record<string, TargetStatus> = { ...before.targets }
  for (const [i, o] of outcomes.entries()) {
    const prior = before.targets[o.location]
    const lastGood = o.ok ? { name: o.copy, at: isoTimestamp(now) } : await newestVerified(deps, targets[i]!).catch(() => prior?.last_good ?? null)
    const lastFailure = o.ok ? (prior?.last_failure ?? null) : { at: isoTimestamp(now), reason: o.reason ?? '' }
    const status: TargetStatus = { kind: o.target, location: o.location, last_good: lastGood ?? prior?.last_good ?? null, last_failure: lastFailure }
    if (o.ok) next[o.location] = status
    else {
      const notify = isAlertDue(prior, now)
      alert(deps, status, now, { notify })
      next[o.location] = { ...status, ...(notify ? { last_alert_at: isoTimestamp(now) } : prior?.last_alert_at ? { last_alert_at: prior.last_alert_at } : {}) }
    }
  }
  const status: BackupStatus = { last_run: { at: isoTimestamp(now), ok: outcomes.every((o) => o.ok) }, targets: next }
  try {
    writeBackupStatus(deps.store.dataDir, status)
  } catch (err) {
    deps.log.error('backup.status_not_written', { error: messageOf(err) })
  }
}

async function newestVerified(deps: BackupDeps, target: BackupTarget): Promise<{ name: string; at: string } | null> {
  const newest = (await ownCopies(deps, target))
    .filter((c) => c.verified)
    .sort((a, b) => b.at.getTime() - a.at.getTime())[0]
  return newest ? { name: newest.name, at: isoTimestamp(newest.at) } : null
}

/** While a target keeps failing, its `backup.failed` webhook repeats at most this often (the log line every time). */
export const REALERT_MS = 24 * 60 * 60 * 1000

/**
 * A new failure is announced at once; a target that keeps failing (a NAS off for a weekend, retried hourly) once a day,
 * not at every retry to every subscribed company (review of issue 26: ~60 runs × 40 companies = 2 400 POSTs).
 */
export function isAlertDue(prior: TargetStatus | undefined, now: Date): boolean {
  if (prior === undefined || !isFailing(prior) || prior.last_alert_at === undefined) return true
  return now.getTime() - Date.parse(prior.last_alert_at) >= REALERT_MS
}

/**
 * A failed copy: an error line, and `backup.failed` to every company's webhooks subscribed to it. The event is the
 * instance's, not a company's: whoever asked to hear about it (an accountant's own webhook, the firm's monitoring)
 * hears it; a company that did not subscribe gets nothing (docs/decisions/backups.md "Alerts").
 */
function alert(deps: BackupDeps, t: TargetStatus, now: Date, opts: { notify: boolean }): void {
  const data = { target: t.kind, location: t.location, reason: t.last_failure?.reason ?? '', last_good_at: t.last_good?.at ?? null, last_good_copy: t.last_good?.name ?? null }
  deps.log.error('backup.failed', { ...data, webhook: opts.notify })
  if (!opts.notify) return
  try {
    const subscribed = listEmpresas(deps).filter((e) => listWebhooks(deps.store.db, e.id).some((w) => w.events.includes('backup.failed')))
    if (subscribed.length === 0) return
    deps.store.db.transaction((tx) => {
      for (const e of subscribed) emitEvent(tx, { empresaId: e.id, type: 'backup.failed', data, now })
    }, { behavior: 'immediate' })
  } catch (err) {
    // The database itself may be what is failing (a full disk): the log line above still says it.
    deps.log.error('backup.alert_not_queued', { error: messageOf(err) })
  }
}

function messageOf(err: unknown): string {
  return (err as Error)?.message ?? String(err)
}
