// GET /ready's `sii` block (DESIGN §12): when the SII last gave a real answer, and how long the oldest DTE has waited.
import { oldestPendingCreatedAt } from '../db/dte-store'
import type { Deps } from './deps'

export function siiReadiness(deps: Pick<Deps, 'store' | 'clock' | 'siiHealth'>): { last_ok_at: string | null; oldest_pending_s: number | null } {
  const oldest = oldestPendingCreatedAt(deps.store.db)
  return {
    last_ok_at: deps.siiHealth.lastOkAt(),
    oldest_pending_s: oldest === null ? null : Math.max(0, Math.round((deps.clock.now().getTime() - Date.parse(oldest)) / 1000)),
  }
}
