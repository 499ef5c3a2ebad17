// `housekeeping` (DESIGN §1), every 10 minutes: the pass itself is services/housekeeping.ts.
import type { Deps } from '../services/deps'
import { runHousekeeping } from '../services/housekeeping'
import type { Job } from './scheduler'

export const housekeepingJob: Job = {
  name: 'housekeeping',
  everyMs: 10 * 60 * 1000,
  runOnce: (deps: Deps) => runHousekeeping(deps),
}
