// `housekeeping` (DESIGN §1): keeps the store lean. Later issues add what expires (idempotency keys past 24 h).
import type { Deps } from '../services/deps'
import type { Job } from './scheduler'

export const housekeepingJob: Job = {
  name: 'housekeeping',
  everyMs: 60 * 60 * 1000,
  runOnce(deps: Deps): number {
    // SQLite's own advice for long-lived connections: refresh planner statistics where they drifted.
    deps.store.sqlite.run('PRAGMA optimize')
    return 0
  },
}
