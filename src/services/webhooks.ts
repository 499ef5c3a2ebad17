// Webhook subscriptions and their delivery log (spec 4.4, DESIGN §7, §12).
import { randomBytes } from 'node:crypto'
import { isoTimestamp } from '../clock'
import { countLiveWebhooks, deleteWebhook, findDelivery, findWebhook, insertWebhook, listDeliveries, listDeliveriesOfEmpresa, listWebhooks as listRows, requeueDelivery, requeueEvent, cancelDeliveriesOfDeletedWebhooks } from '../db/webhook-store'
import type { DeliveryRow, WebhookRow } from '../db/schema'
import { PING, type EventType } from '../domain/events'
import { checkWebhookUrl, MAX_WEBHOOKS_PER_EMPRESA, refusedUrlError, refusesAnything, webhookPolicy, type AddressPolicy } from '../domain/webhooks'
import { TimbreError, validationError, type FieldError } from '../errors'
import { resolveDestination, systemLookup, type Lookup } from '../webhooks/destination'
import type { Deps } from './deps'
import { emitEvent } from './events'

/** Spec 2.15: the full secret only in the 201 of its creation; masked to its last 4 characters afterwards. */
export interface WebhookRecord {
  readonly id: string
  readonly url: string
  readonly events: string[]
  readonly secret: string
  readonly is_active: boolean
  readonly created_at: string
}

export interface DeliveryRecord {
  readonly id: string
  readonly event_id: string
  readonly event_type: string
  readonly attempt: number
  readonly status: string
  readonly status_code: number | null
  readonly duration_ms: number | null
  readonly error: string | null
  readonly delivered_at: string | null
  readonly next_retry_at: string | null
}

function masked(row: WebhookRow): WebhookRecord {
  return { id: row.id, url: row.url, events: row.events, secret: `…${row.secret_last4}`, is_active: row.deleted_at === null, created_at: row.created_at }
}

export function toDeliveryRecord(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    status: row.status,
    status_code: row.status_code,
    duration_ms: row.duration_ms,
    error: row.error,
    delivered_at: row.delivered_at,
    next_retry_at: row.status === 'pending' ? row.next_attempt_at : null,
  }
}

/** How long registration waits for the resolver before accepting the name unchecked (the delivery checks it anyway). */
const REGISTRATION_LOOKUP_MS = 3000

/**
 * A name that resolves to a refused address is refused at registration too, so the integrator learns it at once
 * rather than from a delivery log. A name that does not resolve (yet, or in time) is accepted: DNS may be set up after
 * the webhook, and the check that protects the network is the one made at every delivery (docs/decisions/webhooks.md).
 */
async function checkResolvedHost(url: string, policy: AddressPolicy, lookup: Lookup): Promise<FieldError[]> {
  if (!refusesAnything(policy)) return []
  const dest = await resolveDestination(new URL(url), policy, lookup, AbortSignal.timeout(REGISTRATION_LOOKUP_MS))
  return !dest.ok && dest.reason === 'refused' ? [refusedUrlError(dest.range, true)] : []
}

export async function registerWebhook(
  deps: Pick<Deps, 'store' | 'vault' | 'config' | 'clock'> & { readonly lookup?: Lookup },
  input: { empresaId: string; url: string; events: readonly EventType[]; secret?: string },
): Promise<WebhookRecord> {
  const policy = webhookPolicy(deps.config)
  const literalErrors = checkWebhookUrl(input.url, policy)
  const urlErrors = literalErrors.length > 0 ? literalErrors : await checkResolvedHost(input.url, policy, deps.lookup ?? systemLookup)
  if (urlErrors.length > 0) throw validationError(urlErrors)
  const secret = input.secret ?? `whsec_${randomBytes(32).toString('base64url')}`
  const id = Bun.randomUUIDv7()
  const secretSealed = Buffer.from(deps.vault.seal(Buffer.from(secret, 'utf8'), `webhook:${id}`))
  // Counted and inserted in one write transaction: registrations racing at 19 cannot both become the 20th.
  const row = deps.store.db.transaction(
    (tx) => {
      if (countLiveWebhooks(tx, input.empresaId) >= MAX_WEBHOOKS_PER_EMPRESA)
        throw new TimbreError('WEBHOOK_LIMIT_REACHED', { context: { max_webhooks: MAX_WEBHOOKS_PER_EMPRESA } })
      return insertWebhook(tx, {
        id,
        empresa_id: input.empresaId,
        url: input.url,
        events: [...new Set(input.events)],
        secret_sealed: secretSealed,
        secret_last4: secret.slice(-4),
        created_at: isoTimestamp(deps.clock.now()),
      })
    },
    { behavior: 'immediate' },
  )
  return { ...masked(row), secret }
}

export function listWebhooks(deps: Pick<Deps, 'store'>, input: { empresaId: string }): WebhookRecord[] {
  return listRows(deps.store.db, input.empresaId).map(masked)
}

export function removeWebhook(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; id: string }): { status: 'deleted' } {
  const at = isoTimestamp(deps.clock.now())
  const done = deps.store.db.transaction((tx) => deleteWebhook(tx, input.empresaId, input.id, at), { behavior: 'immediate' })
  if (!done) throw new TimbreError('NOT_FOUND')
  return { status: 'deleted' }
}

function liveWebhook(deps: Pick<Deps, 'store'>, empresaId: string, id: string): WebhookRow {
  const row = findWebhook(deps.store.db, empresaId, id)
  if (!row) throw new TimbreError('NOT_FOUND')
  return row
}

export function webhookDeliveries(
  deps: Pick<Deps, 'store'>,
  input: { empresaId: string; webhookId: string; afterId: string | null; limit: number },
): DeliveryRecord[] {
  liveWebhook(deps, input.empresaId, input.webhookId)
  return listDeliveries(deps.store.db, input.webhookId, input.afterId, input.limit).map(toDeliveryRecord)
}

export function redeliver(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; webhookId: string; deliveryId: string }): DeliveryRecord {
  const { empresaId, webhookId, deliveryId } = input
  liveWebhook(deps, empresaId, webhookId)
  if (!findDelivery(deps.store.db, webhookId, deliveryId)) throw new TimbreError('NOT_FOUND')
  return toDeliveryRecord(requeueDelivery(deps.store.db, deliveryId, isoTimestamp(deps.clock.now()))!)
}

/** POST /webhooks/{id}/test: a signed `ping` to this webhook only, whatever it subscribes to (DESIGN §12). */
export function sendTestPing(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; webhookId: string }): { event_id: string } {
  const { empresaId, webhookId } = input
  const webhook = liveWebhook(deps, empresaId, webhookId)
  const now = deps.clock.now()
  const eventId = deps.store.db.transaction(
    (tx) => emitEvent(tx, { empresaId, type: PING, data: { webhook_id: webhook.id, mensaje: 'Prueba de Timbre: la firma y la URL funcionan.' }, now, onlyWebhookId: webhook.id }),
    { behavior: 'immediate' },
  )
  return { event_id: eventId }
}

/** `timbre webhook deliveries`: the company's latest deliveries, or only the failed ones. */
export function companyDeliveries(
  deps: Pick<Deps, 'store'>,
  input: { empresaId: string; onlyFailed: boolean; limit?: number },
): Array<DeliveryRecord & { webhook_id: string }> {
  return listDeliveriesOfEmpresa(deps.store.db, input.empresaId, input.onlyFailed, input.limit ?? 100).map((row) => ({ ...toDeliveryRecord(row), webhook_id: row.webhook_id }))
}

/** `timbre webhook redeliver --event`: every delivery of the event goes out again now. */
export function redeliverEvent(deps: Pick<Deps, 'store' | 'clock'>, input: { eventId: string }): { event_id: string; requeued: number } {
  const { eventId } = input
  const at = isoTimestamp(deps.clock.now())
  const { requeued, ofDeletedWebhooks } = deps.store.db.transaction((tx) => requeueEvent(tx, eventId, at), { behavior: 'immediate' })
  if (requeued === 0 && ofDeletedWebhooks > 0)
    throw new TimbreError('NOT_FOUND', {
      message: `Las entregas del evento ${eventId} son de webhooks eliminados: no se reenvían. Registre el webhook de nuevo para recibir eventos futuros.`,
      context: { event_id: eventId, deliveries_of_deleted_webhooks: ofDeletedWebhooks },
    })
  if (requeued === 0) throw new TimbreError('NOT_FOUND', { message: `No hay entregas del evento ${eventId}.` })
  return { event_id: eventId, requeued }
}

/** Housekeeping: no delivery stays pending for a webhook that no longer exists (DESIGN §7: deleting one cancels them). */
export function cancelOrphanDeliveries(deps: Pick<Deps, 'store' | 'clock'>): number {
  return cancelDeliveriesOfDeletedWebhooks(deps.store.db, isoTimestamp(deps.clock.now()))
}
