// `housekeeping` (DESIGN §1): forgets idempotency keys past their 24 h (spec 4.8), cancels deliveries no job would take,
// and keeps the planner statistics fresh.
import { isoTimestamp } from '../clock'
import { deleteIdempotencyKeysBefore } from '../db/idempotency-store'
import type { Deps } from '../services/deps'
import { IDEMPOTENCY_RETENTION_MS } from '../services/issue-dte'
import { cancelOrphanDeliveries } from '../services/webhooks'
import type { Job } from './scheduler'

export const housekeepingJob: Job = {
  name: 'housekeeping',
  everyMs: 10 * 60 * 1000,
  runOnce(deps: Deps, now: Date): number {
    const pruned = deleteIdempotencyKeysBefore(deps.store.db, isoTimestamp(new Date(now.getTime() - IDEMPOTENCY_RETENTION_MS)))
    cancelOrphanDeliveries(deps, now)
    // SQLite's advice for long-lived connections: refresh planner statistics where they drifted.
    deps.store.sqlite.run('PRAGMA optimize')
    return pruned
  },
}
