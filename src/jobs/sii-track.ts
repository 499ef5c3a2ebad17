// `sii-track` (DESIGN §6): asks the SII about DTEs it holds until each reaches a final state.
import { isoTimestamp } from '../clock'
import { findDueForTracking } from '../db/dte-store'
import type { Deps } from '../services/deps'
import { trackDte } from '../services/track-dte'
import { inBatches } from './batches'
import type { Job } from './scheduler'

const PER_RUN = 100
const AT_ONCE = 4

export function siiTrackJob(everyMs: number): Job {
  return {
    name: 'sii-track',
    everyMs,
    async runOnce(deps: Deps, now: Date): Promise<number> {
      const due = findDueForTracking(deps.store.db, isoTimestamp(now), PER_RUN)
      const results = await inBatches(due, AT_ONCE, (dte) => trackDte(deps, dte.id, dte.empresa_id, now))
      for (const r of results)
        if (r.status === 'rejected') deps.log.error('job.item_failed', { job: 'sii-track', error: String(r.reason), stack: (r.reason as Error)?.stack })
      return due.length
    },
  }
}
