// `backup` (DESIGN §18, issue 26): a verified copy to the configured folder and/or S3 bucket every TIMBRE_BACKUP_EVERY.
// The tick is short and the run asks whether a copy is due from the last attempt on record: a server restarted every
// night still copies daily (the scheduler's first tick comes one period after start), and a failed copy is retried
// within the hour instead of the next day. No target configured: no job (src/cli/serve.ts).
import type { RunRecord } from '../domain/backups'
import type { BackupTarget } from '../services/backup-targets'
import { configuredTargets } from '../services/backup-targets'
import type { Deps } from '../services/deps'
import { isScheduledBackupDue, runScheduledBackup, type BackupConfig } from '../services/scheduled-backup'
import type { Job } from './scheduler'

const TICK_MS = 5 * 60 * 1000

/** Null when no target is set. `targets` replaces the configured ones (tests: a target that fails on purpose). */
export function backupJob(config: BackupConfig, opts: { targets?: readonly BackupTarget[] } = {}): Job | null {
  if (configuredTargets(config).length === 0 && opts.targets === undefined) return null
  let last: RunRecord | null = null
  return {
    name: 'backup',
    everyMs: Math.min(config.backupEveryMs, TICK_MS),
    async runOnce(deps: Deps): Promise<number> {
      if (!isScheduledBackupDue(deps, config, last)) return 0
      const result = await runScheduledBackup(deps, config, opts)
      last = { at: new Date(result.created_at), ok: result.targets.every((t) => t.ok) }
      return result.targets.filter((t) => t.ok).length
    },
  }
}
