// What the scheduled backups last did (issue 26), kept in `<data-dir>/backups/status.json` so that GET /ready, the
// console and `timbre backup list` see the runs of serve's job and of a `timbre backup run` from cron alike, and a
// restart does not forget a failure. Written whole to a temporary name and renamed: a reader sees the old or the new.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { BackupConfig } from '../config'
import type { Clock } from '../clock'
import { CLOCK_SKEW_MS, RETRY_AFTER_FAILURE_MS } from '../domain/backups'
import { configuredTargets, s3SettingsOf, type BackupTarget } from './backup-targets'

export interface TargetStatus {
  readonly kind: BackupTarget['kind']
  readonly location: string
  /** The newest verified copy the target held after the last run. */
  readonly last_good: { readonly name: string; readonly at: string } | null
  readonly last_failure: { readonly at: string; readonly reason: string } | null
  /** When `backup.failed` last went out for this target: a target that keeps failing repeats it at most daily. */
  readonly last_alert_at?: string
}

export interface BackupStatus {
  readonly last_run: { readonly at: string; readonly ok: boolean } | null
  readonly targets: Readonly<Record<string, TargetStatus>>
}

const EMPTY: BackupStatus = { last_run: null, targets: {} }

export function backupStatusPath(dataDir: string): string {
  return join(dataDir, 'backups', 'status.json')
}

export function readBackupStatus(dataDir: string): BackupStatus {
  const path = backupStatusPath(dataDir)
  if (!existsSync(path)) return EMPTY
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as BackupStatus
  } catch {
    // A torn or hand-edited file: the next run writes a whole one; until then nothing is known.
    return EMPTY
  }
}

export function writeBackupStatus(dataDir: string, status: BackupStatus): void {
  const path = backupStatusPath(dataDir)
  mkdirSync(join(dataDir, 'backups'), { recursive: true, mode: 0o700 })
  const partial = `${path}.${process.pid}.partial`
  writeFileSync(partial, `${JSON.stringify(status, null, 2)}\n`, { mode: 0o600 })
  renameSync(partial, path)
}

/** A target is failing when its last failure is not older than its last verified copy. */
export function isFailing(t: TargetStatus): boolean {
  return t.last_failure !== null && (t.last_good === null || t.last_failure.at >= t.last_good.at)
}

/**
 * How a target stands at `now` (review of issue 26). `failing`: its last run failed. `stale`: its newest verified copy
 * is older than two periods and an hour (a job that stopped, a run that hangs on a dead share) or dated ahead of the
 * clock (a clock that jumped: that copy would otherwise hide every later failure). `ok` otherwise; a target never copied
 * and never failed is `ok` until its first run says otherwise.
 */
export type TargetState = 'ok' | 'failing' | 'stale'

export function targetState(t: TargetStatus, now: Date, everyMs: number): TargetState {
  if (t.last_good !== null) {
    const goodAt = Date.parse(t.last_good.at)
    if (goodAt > now.getTime() + CLOCK_SKEW_MS) return t.last_failure !== null ? 'failing' : 'stale'
    if (isFailing(t)) return 'failing'
    if (now.getTime() - goodAt > 2 * everyMs + RETRY_AFTER_FAILURE_MS) return 'stale'
    return 'ok'
  }
  return isFailing(t) ? 'failing' : 'ok'
}

export interface BackupReadiness {
  /** `off`: no target configured; `fail`: a target is failing or stale (it does not make /ready 503). */
  readonly check: 'ok' | 'fail' | 'off'
  readonly targets: ReadonlyArray<{
    readonly kind: BackupTarget['kind']
    readonly state: TargetState
    readonly location: string
    readonly last_good_at: string | null
    readonly last_good_copy: string | null
    readonly last_failure_at: string | null
    readonly last_failure_reason: string | null
  }>
}

/** GET /ready's view: one small file read, whatever the targets hold (docs/decisions/operations.md: constant time). */
export function backupReadiness(deps: { readonly store: { readonly dataDir: string }; readonly config: BackupConfig; readonly clock: Clock }): BackupReadiness {
  const now = deps.clock.now()
  const configured = configuredTargets(deps.config)
  if (configured.length === 0) return { check: 'off', targets: [] }
  const status = readBackupStatus(deps.store.dataDir)
  const targets = configured.map(({ kind, location }) => {
    const t = status.targets[location] ?? { kind, location, last_good: null, last_failure: null }
    return {
      kind,
      state: targetState(t, now, deps.config.backupEveryMs),
      location,
      last_good_at: t.last_good?.at ?? null,
      last_good_copy: t.last_good?.name ?? null,
      last_failure_at: t.last_failure?.at ?? null,
      last_failure_reason: t.last_failure?.reason ?? null,
    }
  })
  return { check: targets.some((t) => t.state !== 'ok') ? 'fail' : 'ok', targets }
}

const KIND_ES: Readonly<Record<BackupTarget['kind'], string>> = { folder: 'carpeta', s3: 'S3' }

/** The console's one line (Spanish), or null when no target is configured. */
export function backupConsoleLine(deps: { readonly store: { readonly dataDir: string }; readonly config: BackupConfig; readonly clock: Clock }, format: (iso: string) => string): string | null {
  const r = backupReadiness(deps)
  if (r.check === 'off') return null
  return r.targets
    .map((t) => {
      const good = t.last_good_at ? `última copia verificada ${format(t.last_good_at)}` : 'aún sin copia verificada'
      const failed = t.state === 'failing' && t.last_failure_at !== null ? `; FALLÓ ${format(t.last_failure_at)}: ${t.last_failure_reason}` : ''
      const stale = t.state === 'stale' ? '; SIN COPIA RECIENTE: revise que Timbre esté en marcha, el destino y la hora del equipo' : ''
      return `Respaldo (${KIND_ES[t.kind]} ${t.location}): ${good}${failed}${stale}.`
    })
    .join(' ')
}

/**
 * What an operator should hear at start (serve) and before a `backup run`: the S3 copies lack the master key, and a
 * backup folder on the data dir's own disk does not survive that disk (the one failure issue 26 is about).
 */
export async function backupSettingWarnings(config: BackupConfig, dataDir: string): Promise<Array<{ event: string; message: string }>> {
  const out: Array<{ event: string; message: string }> = []
  if (s3SettingsOf(config) !== null && !config.backupS3Keys) out.push({ event: 'backup.s3_without_keys', message: S3_WITHOUT_KEYS_WARNING })
  // Async and bounded: a backup folder on a NAS that hangs must not keep serve from starting (review of issue 26).
  const devOf = (dir: string) => Promise.race([stat(dir).then((s) => s.dev, () => null), Bun.sleep(5_000).then(() => null)])
  const backupDir = config.backupDir
  const [backupDev, dataDev] = backupDir === null ? [null, null] : await Promise.all([devOf(backupDir), devOf(dataDir)])
  if (backupDir !== null && backupDev !== null && backupDev === dataDev)
    out.push({
      event: 'backup.same_disk',
      message: `la carpeta de respaldos ${resolve(backupDir)} está en el mismo disco que el directorio de datos: si ese disco falla se pierden ambos; use otro disco, un USB o una carpeta de red`,
    })
  return out
}

export const S3_WITHOUT_KEYS_WARNING =
  'Las copias en S3 no incluyen master.key (TIMBRE_BACKUP_S3_KEYS=false): guarde la llave maestra aparte; sin ella los certificados y CAF restaurados no se pueden usar.'
