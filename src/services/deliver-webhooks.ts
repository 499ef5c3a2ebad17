// The `webhook-deliver` use case (DESIGN §7): every due delivery is POSTed, all at once up to a bound, so a slow
// receiver (10 s at most) never holds the others back. Outcomes follow the retry schedule; then failed.
import { isoTimestamp } from '../clock'
import { claimDelivery, findDueDeliveries, recordAttempt, type DueDelivery } from '../db/webhook-store'
import { nextRetryDelayMs } from '../domain/events'
import { webhookPolicy } from '../domain/webhooks'
import type { Lookup } from '../webhooks/destination'
import { DELIVERY_TIMEOUT_MS, postEvent } from '../webhooks/post'
import { VERSION } from '../version'
import type { Deps } from './deps'

const PER_RUN = 200
const AT_ONCE = 32
/** Longer than one attempt can take, so no other pass sends the same delivery meanwhile. */
const LEASE_MS = DELIVERY_TIMEOUT_MS * 3

/** `lookup` replaces the system resolver (tests: a name that answers loopback, or answers once). */
export type DeliverDeps = Pick<Deps, 'store' | 'vault' | 'log' | 'clock' | 'config'> & { readonly lookup?: Lookup }

async function attempt(deps: DeliverDeps, due: DueDelivery, now: Date): Promise<void> {
  const d = due.delivery
  const secret = deps.vault.open(due.secretSealed, `webhook:${d.webhook_id}`).toString('utf8')
  const result = await postEvent({
    url: due.url,
    secret,
    eventId: d.event_id,
    eventType: d.event_type,
    body: due.body,
    userAgent: `Timbre/${VERSION}`,
    nowSeconds: Math.floor(deps.clock.now().getTime() / 1000),
    policy: webhookPolicy(deps.config),
    lookup: deps.lookup,
  })
  const attemptNo = d.attempt + 1
  const at = isoTimestamp(deps.clock.now())
  const delay = result.ok ? null : nextRetryDelayMs(attemptNo)
  recordAttempt(deps.store.db, d.id, {
    attempt: attemptNo,
    status: result.ok ? 'delivered' : delay === null ? 'failed' : 'pending',
    status_code: result.statusCode,
    duration_ms: result.durationMs,
    error: result.error,
    delivered_at: result.ok ? at : null,
    next_attempt_at: delay === null ? null : isoTimestamp(new Date(now.getTime() + delay)),
    updated_at: at,
  })
  deps.log.info('webhook.attempt', { empresa_id: d.empresa_id, webhook_id: d.webhook_id, event_id: d.event_id, event_type: d.event_type, attempt: attemptNo, ok: result.ok, status_code: result.statusCode, duration_ms: result.durationMs, error: result.error, cause: result.cause })
}

export async function deliverDue(deps: DeliverDeps): Promise<number> {
  const now = deps.clock.now()
  const nowIso = isoTimestamp(now)
  const leaseUntil = isoTimestamp(new Date(now.getTime() + LEASE_MS))
  const claimed = findDueDeliveries(deps.store.db, nowIso, PER_RUN).filter((due) => claimDelivery(deps.store.db, due.delivery.id, nowIso, leaseUntil))
  let next = 0
  const worker = async () => {
    while (next < claimed.length) {
      const due = claimed[next++]!
      try {
        await attempt(deps, due, now)
      } catch (err) {
        deps.log.error('webhook.attempt_failed', { delivery_id: due.delivery.id, error: String(err) })
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, claimed.length) }, worker))
  return claimed.length
}
