// The `webhook-deliver` use case (DESIGN §7): due deliveries are POSTed with each company served in turn, so one
// company's slow receiver (10 s at most an attempt) never holds another company's deliveries back. Outcomes follow the
// retry schedule; then failed.
import { isoTimestamp } from '../clock'
import { claimDelivery, findDueDeliveries, findDueDeliveriesOf, recordAttempt, type DueDelivery } from '../db/webhook-store'
import type { Store } from '../db/open'
import { nextRetryDelayMs } from '../domain/events'
import { webhookPolicy } from '../domain/webhooks'
import type { Lookup } from '../webhooks/destination'
import { DELIVERY_TIMEOUT_MS, postEvent } from '../webhooks/post'
import { VERSION } from '../version'
import type { Deps } from './deps'

/** Attempts in flight in the process, over every company. */
const AT_ONCE = 32
/** …of one company: the rest of AT_ONCE stays for the others whatever one company's receivers do. */
const PER_EMPRESA_AT_ONCE = 4
/** …to one webhook: a company's hanging receiver leaves room for its other webhooks. */
const PER_WEBHOOK_AT_ONCE = 2
/** Deliveries a window reads per company, and in all; a pass reads windows until its period ends or none is due. */
const PER_EMPRESA_PER_PASS = 50
const PER_PASS = 1000
/** Longer than one attempt can take, so no other pass sends the same delivery meanwhile. */
const LEASE_MS = DELIVERY_TIMEOUT_MS * 3

/** `lookup` replaces the system resolver (tests: a name that answers loopback, or answers once). */
export type DeliverDeps = Pick<Deps, 'store' | 'vault' | 'log' | 'clock' | 'config'> & { readonly lookup?: Lookup }

/**
 * The attempts of this process still in flight, per store (one per server; tests run several). A pass may return
 * before its attempts end, so the next pass must know which companies' and webhooks' places are still taken.
 */
interface InFlight {
  total: number
  readonly byEmpresa: Map<string, number>
  readonly byWebhook: Map<string, number>
  readonly ids: Set<string>
  /** Called when an attempt ends: a pass waiting for a free place looks again. */
  readonly waiters: Set<() => void>
}

const inFlightByStore = new WeakMap<Store, InFlight>()

function inFlightOf(store: Store): InFlight {
  let f = inFlightByStore.get(store)
  if (f === undefined) {
    f = { total: 0, byEmpresa: new Map(), byWebhook: new Map(), ids: new Set(), waiters: new Set() }
    inFlightByStore.set(store, f)
  }
  return f
}

function hasRoom(f: InFlight, d: DueDelivery['delivery']): boolean {
  return f.total < AT_ONCE && (f.byEmpresa.get(d.empresa_id) ?? 0) < PER_EMPRESA_AT_ONCE && (f.byWebhook.get(d.webhook_id) ?? 0) < PER_WEBHOOK_AT_ONCE
}

function count(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by
  if (n === 0) map.delete(key)
  else map.set(key, n)
}

async function attempt(deps: DeliverDeps, due: DueDelivery): Promise<void> {
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
  const now = deps.clock.now()
  const at = isoTimestamp(now)
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

/** Claims (a lease, so no other pass or process takes it) and starts one attempt; false when it is no longer due. */
function start(deps: DeliverDeps, f: InFlight, due: DueDelivery): Promise<void> | null {
  const now = deps.clock.now()
  const d = due.delivery
  if (!claimDelivery(deps.store.db, d.id, isoTimestamp(now), isoTimestamp(new Date(now.getTime() + LEASE_MS)))) return null
  f.total++
  count(f.byEmpresa, d.empresa_id, 1)
  count(f.byWebhook, d.webhook_id, 1)
  f.ids.add(d.id)
  return attempt(deps, due)
    .catch((err: unknown) => deps.log.error('webhook.attempt_failed', { delivery_id: d.id, error: String(err) }))
    .finally(() => {
      f.total--
      count(f.byEmpresa, d.empresa_id, -1)
      count(f.byWebhook, d.webhook_id, -1)
      f.ids.delete(d.id)
      for (const wake of [...f.waiters]) wake()
    })
}

/** The pass's due deliveries as one queue per company, companies in the order of their oldest due delivery. */
function lanesOf(due: readonly DueDelivery[], f: InFlight): Map<string, DueDelivery[]> {
  const lanes = new Map<string, DueDelivery[]>()
  for (const item of due) {
    if (f.ids.has(item.delivery.id)) continue
    const lane = lanes.get(item.delivery.empresa_id)
    if (lane) lane.push(item)
    else lanes.set(item.delivery.empresa_id, [item])
  }
  return lanes
}

/**
 * One round: each company in turn takes at most one delivery, the first of its queue whose webhook has room, and
 * starts it (unless another pass claimed it meanwhile). A queue it empties is refilled with that company's next window
 * at once, at the back of the round: so no company waits for another's queue to drain (a receiver that hangs keeps
 * its company's queue full for the whole period). Returns how many were taken; a company with nothing more due leaves
 * the map.
 */
function round(deps: DeliverDeps, f: InFlight, lanes: Map<string, DueDelivery[]>, started: Promise<void>[]): number {
  let taken = 0
  for (const [empresaId, lane] of [...lanes]) {
    const i = lane.findIndex((item) => hasRoom(f, item.delivery))
    if (i < 0) continue
    const [item] = lane.splice(i, 1)
    taken++
    const running = start(deps, f, item!)
    if (running) started.push(running)
    if (lane.length > 0) continue
    lanes.delete(empresaId)
    // Claimed and attempted rows are leased or rescheduled, never due again at once, so refilling ends when none is due.
    const next = lanesOf(findDueDeliveriesOf(deps.store.db, empresaId, isoTimestamp(deps.clock.now()), PER_EMPRESA_PER_PASS), f).get(empresaId)
    if (next) lanes.set(empresaId, next)
  }
  return taken
}

/** Resolves when `work` settles or at `deadline` (performance.now() time), whichever comes first. */
async function until(work: Promise<unknown>, deadline: number): Promise<void> {
  if (deadline === Number.POSITIVE_INFINITY) {
    await work
    return
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - performance.now()))))])
  clearTimeout(timer)
}

/** Resolves when any attempt of the process ends (a place frees up). */
function placeFreed(f: InFlight): { readonly promise: Promise<void>; cancel(): void } {
  let wake = () => {}
  const promise = new Promise<void>((resolve) => (wake = resolve))
  f.waiters.add(wake)
  return { promise, cancel: () => f.waiters.delete(wake) }
}

/** The due deliveries not already in flight here, as one queue per company. */
function readLanes(deps: DeliverDeps, f: InFlight): Map<string, DueDelivery[]> {
  return lanesOf(findDueDeliveries(deps.store.db, isoTimestamp(deps.clock.now()), PER_EMPRESA_PER_PASS, PER_PASS), f)
}

/**
 * One pass. It starts the due deliveries company by company as places free up, and returns once all of them have
 * ended, or after `waitMs` (the job's period): then it starts nothing more and leaves the attempts still running to
 * end on their own, their places taken until they do. So a receiver that hangs for its full 10 s delays neither the
 * other companies' attempts of this pass nor the next pass. A company's window started before the period ends is
 * followed by its next one (round): no company is capped at one window a period, whatever the others' receivers do,
 * so a backlog drains as fast as its receivers answer. Returns how many attempts the pass started.
 */
export async function deliverDue(deps: DeliverDeps, opts: { readonly waitMs?: number } = {}): Promise<number> {
  const f = inFlightOf(deps.store)
  let lanes = readLanes(deps, f)
  const deadline = performance.now() + (opts.waitMs ?? Number.POSITIVE_INFINITY)
  const started: Promise<void>[] = []
  while (lanes.size > 0 && performance.now() < deadline) {
    // With nothing of this process in flight every queue has room, so a round that takes nothing always has an end to wait for.
    const freed = placeFreed(f)
    if (round(deps, f, lanes, started) === 0) await until(freed.promise, deadline)
    freed.cancel()
    // Companies whose deliveries fell due during the pass, once every queue is drained (they wait at most a period).
    if (lanes.size === 0 && performance.now() < deadline) lanes = readLanes(deps, f)
  }
  await until(Promise.all(started), deadline)
  return started.length
}
