// Writes events to the outbox (DESIGN §7), always inside the transaction of the change they report, so a crash can
// lose neither the change nor its event. Delivery happens later, at least once, from the webhook-deliver job. Steps of
// other use cases, not use cases: they take the caller's `tx` and its instant, never deps and a clock of their own.
import { isoTimestamp, santiagoDate } from '../clock'
import { foliosLeft } from '../db/caf-store'
import type { Db } from '../db/open'
import type { DteRow } from '../db/schema'
import { insertEventWithDeliveries, isCafAlertArmed, setCafAlertArmed } from '../db/webhook-store'
import { FINAL_STATE_EVENTS, type DteSummary, type EventType } from '../domain/events'
import { toDteRecord } from './dtes'

export function emitEvent(db: Db, input: { empresaId: string; type: EventType | 'ping'; data: unknown; now: Date; onlyWebhookId?: string }): string {
  const id = Bun.randomUUIDv7()
  const created_at = isoTimestamp(input.now)
  const body = JSON.stringify({ id, type: input.type, created_at, empresa_id: input.empresaId, data: input.data })
  insertEventWithDeliveries(db, { id, empresa_id: input.empresaId, type: input.type, body, created_at }, input.onlyWebhookId)
  return id
}

export function dteSummary(row: DteRow): DteSummary {
  const r = toDteRecord(row)
  return {
    id: r.id,
    tipo_dte: r.tipo_dte,
    folio: r.folio,
    estado: r.estado,
    rut_receptor: r.rut_receptor,
    razon_social_receptor: r.razon_social_receptor,
    fecha_emision: r.fecha_emision,
    monto_total: r.monto_total,
    tracking: r.tracking as unknown as Record<string, unknown>,
    sii_status: r.sii_status,
  }
}

export function emitDteCreated(db: Db, dte: DteRow, now: Date): void {
  emitEvent(db, { empresaId: dte.empresa_id, type: 'dte.created', data: { dte: dteSummary(dte) }, now })
}

/** dte.accepted / dte.rejected / dte.repaired for a DTE that just reached aceptado / rechazado / con_reparos. */
export function emitFinalState(db: Db, dte: DteRow, now: Date): void {
  const type = FINAL_STATE_EVENTS[dte.estado]
  if (type) emitEvent(db, { empresaId: dte.empresa_id, type, data: { dte: dteSummary(dte) }, now })
}

/**
 * caf.low_stock when the type's free folios (over its active CAFs) are at or below the threshold and the alert is
 * armed; it then disarms until a new CAF of the type re-arms it (DESIGN §7: once per crossing).
 */
export function checkCafStock(db: Db, input: { empresaId: string; tipoDte: number; threshold: number; cafId: string | null; now: Date }): boolean {
  // Every issuance asks: the cheap primary-key read of the alert goes first, so a disarmed type skips the folio sum.
  if (!isCafAlertArmed(db, input.empresaId, input.tipoDte)) return false
  const left = foliosLeft(db, input.empresaId, input.tipoDte, santiagoDate(input.now))
  if (left > input.threshold) return false
  setCafAlertArmed(db, input.empresaId, input.tipoDte, false)
  emitEvent(db, {
    empresaId: input.empresaId,
    type: 'caf.low_stock',
    data: { tipo_dte: input.tipoDte, folios_disponibles: left, umbral: input.threshold, caf_id: input.cafId },
    now: input.now,
  })
  return true
}
