// `sii-submit` (DESIGN §6): takes due DTEs to the SII. A few uploads run at once so one slow answer (30 s timeout)
// does not hold the rest; croner's `protect` keeps runs from overlapping.
import { isoTimestamp } from '../clock'
import { findDueForSubmission } from '../db/dte-store'
import type { Deps } from '../services/deps'
import { submitDte } from '../services/submit-dte'
import { inBatches } from './batches'
import type { Job } from './scheduler'

const PER_RUN = 50
const AT_ONCE = 4

export function siiSubmitJob(everyMs: number): Job {
  return {
    name: 'sii-submit',
    everyMs,
    async runOnce(deps: Deps, now: Date): Promise<number> {
      const due = findDueForSubmission(deps.store.db, isoTimestamp(now), PER_RUN)
      const results = await inBatches(due, AT_ONCE, (dte) => submitDte(deps, dte.id, dte.empresa_id, now))
      for (const r of results)
        if (r.status === 'rejected') deps.log.error('job.item_failed', { job: 'sii-submit', error: String(r.reason), stack: (r.reason as Error)?.stack })
      return due.length
    },
  }
}
