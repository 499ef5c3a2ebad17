// Webhook events (spec §6, DESIGN §7): names, what fires them, their payloads, the retry schedule. Pure.

export const EVENT_TYPES = [
  'dte.created', 'dte.accepted', 'dte.rejected', 'dte.repaired', 'caf.low_stock', 'certificado.expiring',
  // The exchange with other companies (DESIGN §13).
  'recibido.created', 'recibido.plazo_por_vencer', 'recibido.accion', 'dte.acuse_recibo', 'dte.resultado_receptor', 'dte.aceptado_receptor', 'dte.reclamado',
  // The instance's scheduled backup failed (DESIGN §18, issue 26): sent to every company's webhooks subscribed to it.
  'backup.failed',
  // The month's close (DESIGN §16, issue 29): a sync of the RCV mirror ended, well (resultado ok) or not (fallido).
  'rcv.sincronizado',
  // Folios from the SII (DESIGN §17, issue 30): a requested CAF was stored, its folios were annulled, or either failed.
  'caf.obtenido', 'caf.anulado', 'caf.solicitud_fallida',
] as const
export type EventType = (typeof EVENT_TYPES)[number]
/** Sent only by POST /webhooks/{id}/test, whatever the subscription (DESIGN §12). */
export const PING = 'ping'

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value)
}

/** The final estado each `dte.*` event announces (DESIGN §7). */
export const FINAL_STATE_EVENTS: Readonly<Record<string, EventType>> = {
  aceptado: 'dte.accepted',
  rechazado: 'dte.rejected',
  con_reparos: 'dte.repaired',
}

/** After attempt n fails, wait RETRY_DELAYS_MS[n-1]; past the last, the delivery is failed (DESIGN §7). */
const MINUTE = 60_000
const HOUR = 60 * MINUTE
export const RETRY_DELAYS_MS: readonly number[] = [1 * MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]

/** Delay before the next attempt after `attempt` failed ones, or null when the schedule is over. */
export function nextRetryDelayMs(attempt: number, schedule: readonly number[] = RETRY_DELAYS_MS): number | null {
  return attempt >= 1 && attempt <= schedule.length ? schedule[attempt - 1]! : null
}

/** Days left at which certificado.expiring fires, once each (DESIGN §7). */
export const EXPIRY_THRESHOLDS_DAYS: readonly number[] = [30, 15, 7, 3, 1]

/** The threshold a certificate with `daysLeft` has reached, among those not yet announced; null when none. */
export function expiryThresholdDue(daysLeft: number, announced: readonly number[]): number | null {
  const due = EXPIRY_THRESHOLDS_DAYS.filter((d) => daysLeft <= d && !announced.includes(d))
  // Several at once (a certificate loaded with 5 days left) announce only the nearest one, and mark the rest done.
  return due.length === 0 ? null : Math.min(...due)
}

/** DTE summary carried by `dte.*` events (DESIGN §7). */
export interface DteSummary {
  readonly id: string
  readonly tipo_dte: number
  readonly folio: number
  readonly estado: string
  readonly rut_receptor: string
  readonly razon_social_receptor: string
  readonly fecha_emision: string
  readonly monto_total: number
  readonly tracking: Readonly<Record<string, unknown>>
  /** Spec 2.7; its `motivos` say why the SII rejected or repaired the DTE, so a receiver needs no second call (issue 13). */
  readonly sii_status: Readonly<Record<string, unknown>> | null
}
