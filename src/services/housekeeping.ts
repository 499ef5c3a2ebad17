// `housekeeping` (DESIGN §1): forgets idempotency keys past their 24 h (spec 4.8), cancels deliveries no job would take,
// and keeps the planner statistics fresh.
import { isoTimestamp } from '../clock'
import { deleteIdempotencyKeysBefore } from '../db/idempotency-store'
import { optimizeStore } from '../db/open'
import type { Deps } from './deps'
import { IDEMPOTENCY_RETENTION_MS } from './issue-dte'
import { cancelOrphanDeliveries } from './webhooks'

/** One pass; returns how many idempotency keys it forgot. */
export function runHousekeeping(deps: Pick<Deps, 'store' | 'clock'>): number {
  const now = deps.clock.now()
  const pruned = deleteIdempotencyKeysBefore(deps.store.db, isoTimestamp(new Date(now.getTime() - IDEMPOTENCY_RETENTION_MS)))
  cancelOrphanDeliveries(deps)
  optimizeStore(deps.store)
  return pruned
}
