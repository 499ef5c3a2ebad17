// DTE records and queries (spec 2.2, 4.1, 4.7) and the manual submission request (DESIGN §6).
import { isoTimestamp } from '../clock'
import { countDtes, findDte, listDtes as listRows, transitionDte, type DteFilter, type DteListRow } from '../db/dte-store'
import type { DteRow } from '../db/schema'
import { TimbreError } from '../errors'
import type { Deps } from './deps'

/** Spec 2.6: always an object, nulls and zero counters before submission (DESIGN §6). */
export interface Tracking {
  readonly envio_id: string | null
  readonly track_id: string | null
  readonly estado_envio: string | null
  readonly codigo_sii: string | null
  readonly glosa_sii: string | null
  readonly informados: number
  readonly aceptados: number
  readonly rechazados: number
  readonly reparos: number
  readonly intentos: number
}

/** Spec 2.2, with `sii_status` at the top level beside `tracking` (DESIGN §6) and `auto_send` (additive). */
export interface DteRecord {
  readonly id: string
  readonly tipo_dte: number
  readonly folio: number
  readonly estado: string
  readonly rut_receptor: string
  readonly razon_social_receptor: string
  readonly fecha_emision: string
  readonly monto_neto: number | null
  readonly monto_exento: number | null
  readonly tasa_iva: number
  readonly iva: number | null
  readonly monto_total: number
  readonly detalle: unknown[]
  readonly referencias: unknown[]
  readonly tracking: Tracking
  readonly sii_status: Record<string, unknown> | null
  readonly auto_send: boolean
  readonly metadata: Record<string, unknown>
  readonly created_at: string
  readonly updated_at: string
  readonly xml_documento?: string
}

export function toDteRecord(row: DteListRow | DteRow, opts: { includeXml?: boolean } = {}): DteRecord {
  const record: DteRecord = {
    id: row.id,
    tipo_dte: row.tipo_dte,
    folio: row.folio,
    estado: row.estado,
    rut_receptor: row.rut_receptor,
    razon_social_receptor: row.razon_social_receptor,
    fecha_emision: row.fecha_emision,
    monto_neto: row.monto_neto,
    monto_exento: row.monto_exento,
    tasa_iva: row.tasa_iva,
    iva: row.iva,
    monto_total: row.monto_total,
    detalle: row.detalle,
    referencias: row.referencias,
    tracking: {
      envio_id: row.envio_id,
      track_id: row.track_id,
      estado_envio: row.estado_envio,
      codigo_sii: row.codigo_sii,
      glosa_sii: row.glosa_sii,
      informados: row.informados,
      aceptados: row.aceptados,
      rechazados: row.rechazados,
      reparos: row.reparos,
      intentos: row.intentos,
    },
    sii_status: row.sii_status ?? null,
    auto_send: row.auto_send,
    metadata: row.metadata,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
  if (opts.includeXml && 'xml' in row) return { ...record, xml_documento: Buffer.from(row.xml).toString('latin1') }
  return record
}

export function getDte(deps: Pick<Deps, 'store'>, empresaId: string, id: string, opts: { includeXml?: boolean } = {}): DteRecord {
  const row = findDte(deps.store.db, empresaId, id)
  if (!row) throw new TimbreError('NOT_FOUND')
  return toDteRecord(row, opts)
}

/** The signed standalone DTE, ISO-8859-1 bytes exactly as signed (DESIGN §12). */
export function getDteXml(deps: Pick<Deps, 'store'>, empresaId: string, id: string): { bytes: Uint8Array; tipoDte: number; folio: number } {
  const row = findDte(deps.store.db, empresaId, id)
  if (!row) throw new TimbreError('NOT_FOUND')
  return { bytes: row.xml, tipoDte: row.tipo_dte, folio: row.folio }
}

export function listDtes(
  deps: Pick<Deps, 'store'>,
  empresaId: string,
  filter: DteFilter,
  page: { afterId: string | null; limit: number },
): { rows: DteRecord[]; total: number } {
  const rows = listRows(deps.store.db, empresaId, filter, page.afterId, page.limit).map((r) => toDteRecord(r))
  return { rows, total: countDtes(deps.store.db, empresaId, filter) }
}

/** POST /dte/{id}/enviar: firmado → enviando, due now; anything else is 409 DTE_NOT_SENDABLE (DESIGN §6). */
export function requestSubmission(deps: Pick<Deps, 'store'>, empresaId: string, id: string, now: Date): DteRecord {
  const at = isoTimestamp(now)
  return deps.store.db.transaction(
    (tx) => {
      const row = findDte(tx, empresaId, id)
      if (!row) throw new TimbreError('NOT_FOUND')
      const moved = transitionDte(tx, empresaId, id, 'firmado', { estado: 'enviando', next_attempt_at: at, updated_at: at })
      if (!moved) throw new TimbreError('DTE_NOT_SENDABLE', { context: { dte_id: id, estado: row.estado } })
      return toDteRecord(moved)
    },
    { behavior: 'immediate' },
  )
}
