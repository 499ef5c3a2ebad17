// The follow-up of received documents with the SII (DESIGN §13), one pass of the `intercambio` job: for each document
// whose `next_sii_at` has come, ask the SII when it received it (consultarFechaRecepcionSii: the 8 days run from
// there), register the actions queued while the SII could not be reached, warn two days before the plazo
// (`recibido.plazo_por_vencer`, once) and, past it with no action, record the tacit acceptance (Ley 19.983 art. 3).
import { isoTimestamp } from '../clock'
import { claimDueRecibido, findDueRecibidos, findRecibido } from '../db/recibido-store'
import type { RecibidoRow } from '../db/schema'
import { isPlazoPorVencer, plazoFrom } from '../domain/intercambio'
import type { Deps } from './deps'
import { emitEvent } from './events'
import {
  accionContextOf,
  accionesOf,
  hasAcciones,
  nextSiiAt,
  recordOf,
  registerAccion,
  retryAt,
  storedAcciones,
  updateRecibidoRow,
  type AccionContext,
  type AccionDeps,
} from './recibidos'
import { LEASE_MS } from './submit-dte'

/** Per pass: the rest wait for the next one (every TIMBRE_INBOX_EVERY). */
export const MAX_RECIBIDOS_PER_PASS = 50

/** One pass; returns how many documents it looked at. */
export async function followRecibidos(deps: AccionDeps): Promise<number> {
  const now = deps.clock.now()
  let followed = 0
  for (const due of findDueRecibidos(deps.store.db, isoTimestamp(now), MAX_RECIBIDOS_PER_PASS)) if (await followRecibido(deps, due, now)) followed++
  return followed
}

async function followRecibido(deps: AccionDeps, due: RecibidoRow, now: Date): Promise<boolean> {
  const at = isoTimestamp(now)
  // Leased past an SII call's timeout: no other pass (this process or another) follows it meanwhile.
  const row = claimDueRecibido(deps.store.db, due.empresa_id, due.id, at, isoTimestamp(new Date(now.getTime() + LEASE_MS)))
  if (!row) return false
  const ctx = accionContextOf(deps, row.empresa_id, now)
  let fecha: string | null = null
  let fechaAt: Date | null = null
  if (row.estado === 'recibido' && hasAcciones(row.tipo_dte) && row.fecha_recepcion_sii === null) {
    if (ctx) {
      const asked = await deps.sii.fechaRecepcion(ctx.company, ctx.creds, { rutEmisor: row.rut_emisor, tipoDte: row.tipo_dte, folio: row.folio })
      // `rechazada`: the SII does not hold it yet (the issuer's upload may still be on its way): ask again later.
      if (asked.kind === 'fecha') fecha = asked.fecha
      else fechaAt = new Date(retryAt(ctx.retry, row.recibido_at, now))
      deps.log.info('recibidos.fecha_recepcion', { empresa_id: row.empresa_id, recibido_id: row.id, outcome: asked.kind, reason: asked.kind === 'retry' ? asked.reason : undefined })
    } else fechaAt = new Date(retryAt(siiWaitWithoutCertificate(deps), row.recibido_at, now))
  }
  if (ctx) await retryPendingAcciones(deps, ctx, row, now)
  // Without a certificate a queued action cannot be sent either: it waits, and is not due again at every pass.
  const pendingFloor = ctx ? null : new Date(retryAt(siiWaitWithoutCertificate(deps), row.recibido_at, now))
  settle(deps, row, { fecha, fechaAt, pendingFloor, now })
  return true
}

/** Without a certificate nothing can be asked of the SII: look again at the tracking policy's slowest pace. */
function siiWaitWithoutCertificate(deps: AccionDeps): { firstMs: number; capMs: number } {
  return { firstMs: deps.siiTiming.track.capMs, capMs: deps.siiTiming.track.capMs }
}

async function retryPendingAcciones(deps: AccionDeps, ctx: AccionContext, row: RecibidoRow, now: Date): Promise<void> {
  const acciones = accionesOf(row)
  for (let i = 0; i < acciones.length; i++) {
    const a = acciones[i]!
    if (a.estado !== 'pendiente' || (a.retry_at && new Date(a.retry_at).getTime() > now.getTime())) continue
    const current = findRecibido(deps.store.db, row.empresa_id, row.id)
    if (current) await registerAccion(deps, ctx, current, i, { emit: true })
  }
}

/**
 * The pass's last transaction, on the row as it is now (a request may have acted on it meanwhile): the reception
 * date and its plazo, the warning, the tacit acceptance, and the next time to look.
 */
function settle(deps: AccionDeps, claimed: RecibidoRow, input: { fecha: string | null; fechaAt: Date | null; pendingFloor: Date | null; now: Date }): void {
  const { now } = input
  const at = isoTimestamp(now)
  deps.store.db.transaction(
    (tx) => {
      const cur = findRecibido(tx, claimed.empresa_id, claimed.id)
      if (!cur) return
      let row: RecibidoRow = cur
      if (input.fecha !== null && row.fecha_recepcion_sii === null)
        row = { ...row, fecha_recepcion_sii: input.fecha, plazo: isoTimestamp(plazoFrom(new Date(input.fecha))) }
      const floor = input.pendingFloor === null ? null : isoTimestamp(input.pendingFloor)
      const acciones = accionesOf(row).map((a) => (floor !== null && a.estado === 'pendiente' && (a.retry_at ?? '') < floor ? { ...a, retry_at: floor } : a))
      const quiet = row.estado === 'recibido' && !acciones.some((a) => a.estado === 'pendiente' || a.estado === 'registrada')
      let warn = false
      if (quiet && row.plazo !== null) {
        const plazo = new Date(row.plazo)
        if (now.getTime() > plazo.getTime()) row = { ...row, estado: 'aceptado_tacito' }
        else if (!row.plazo_avisado && isPlazoPorVencer(plazo, now)) {
          row = { ...row, plazo_avisado: true }
          warn = true
        }
      }
      // The reception date is asked only by this pass (the request paths keep the row's schedule for it).
      const fechaAt = input.fechaAt ?? now
      const updated = updateRecibidoRow(tx, row, {
        fecha_recepcion_sii: row.fecha_recepcion_sii, plazo: row.plazo, estado: row.estado, plazo_avisado: row.plazo_avisado, acciones: storedAcciones(acciones),
        next_sii_at: nextSiiAt(row, acciones, fechaAt), updated_at: row === cur ? cur.updated_at : at,
      })
      if (warn) emitEvent(tx, { empresaId: updated.empresa_id, type: 'recibido.plazo_por_vencer', data: { recibido: recordOf(tx, updated) }, now })
    },
    { behavior: 'immediate' },
  )
}
