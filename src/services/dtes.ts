// DTE records and queries (spec 2.2, 4.1, 4.7) and the manual submission request (DESIGN §6).
import { isoTimestamp } from '../clock'
import { findDte, findDtePage, transitionDte, type DteFilter, type DteListRow } from '../db/dte-store'
import { findDteIntercambio, findDteIntercambios } from '../db/dte-intercambio-store'
import { insertTrackingEvent, lastTrackingEvent, listTrackingEvents } from '../db/dte-tracking-store'
import type { Db } from '../db/open'
import type { DteIntercambioRow, DteRow, DteTrackingEventRow } from '../db/schema'
import { ESTADOS_DTE, isEstadoDte, onSubmissionRequested } from '../domain/estados'
import type { EstadoIntercambio } from '../domain/intercambio'
import { isTipoDte } from '../domain/emision'
import { normalizeRut } from '../domain/rut'
import type { EnvioEstadistica, MotivoSii, OperacionSii, SiiChannel } from '../domain/sii-respuestas'
import { TimbreError, type FieldError } from '../errors'
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

/**
 * Spec 2.7, filled by the SII jobs with the reason of what the SII decided for THIS document (issue 13): for a rechazado
 * DTE its rejection, for a con_reparos one its observations. `motivos` (additive) lists each reason with its code.
 */
export interface SiiStatus {
  /** `documento` (getEstDte / boleta consulta), `envio` (the envelope's status), `upload` (refused at upload). */
  readonly source: 'documento' | 'envio' | 'upload'
  readonly track_id: string | null
  readonly estado_sii: string | null
  readonly glosa: string | null
  readonly glosa_estado: string | null
  readonly err_code: string | null
  readonly glosa_err: string | null
  readonly num_atencion: string | null
  readonly checked_at: string
  readonly raw_xml: string | null
  readonly motivos: MotivoSii[]
}

/** `sii_status` as stored: rows written before issue 13 have no `motivos`. */
export type SiiStatusRecord = Omit<SiiStatus, 'source' | 'motivos'> & { readonly source: string; readonly motivos?: MotivoSii[] }

/** One SII answer about the DTE, as `historial_sii` lists them (issue 13; docs/decisions/sii-client.md). */
export interface HistorialSii {
  readonly at: string
  readonly canal: SiiChannel
  readonly operacion: OperacionSii
  readonly track_id: string | null
  readonly estado: string | null
  readonly glosa: string | null
  readonly err_code: string | null
  readonly glosa_err: string | null
  readonly num_atencion: string | null
  readonly estadistica: Array<Record<string, number>> | null
  readonly motivos: MotivoSii[]
}

/**
 * The exchange with the receiver (DESIGN §13, additive): the mail of the DTE to the receiver's exchange mailbox, the
 * receiver's answers read back from the company's mailbox, and the receiver's actions as the SII's registry lists them.
 */
/** The receiver's RecepcionEnvio for this DTE (RespuestaDTE). `fecha` as the receiver wrote it (Chile local time). */
export interface AcuseReceptor {
  readonly estado_recep_env: number | null
  readonly estado_recep_dte: number | null
  readonly glosa: string | null
  readonly fecha: string | null
  /** False when the answer's signature did not verify: recorded anyway, flagged (docs/decisions/intercambio.md). */
  readonly firma_valida: boolean
  /** When Timbre read it, RFC 3339. */
  readonly recibido_at: string
}

/** The receiver's Recibo (EnvioRecibos, Ley 19.983): goods or services received. */
export interface ReciboReceptor {
  readonly recinto: string | null
  readonly fecha: string | null
  readonly firma_valida: boolean
  readonly recibido_at: string
}

/** The receiver's ResultadoDTE (estado_dte…) and/or its Recibo; each part present once the receiver sent it. */
export interface ResultadoReceptor {
  readonly estado_dte?: number
  readonly glosa?: string | null
  readonly fecha?: string | null
  readonly firma_valida?: boolean
  readonly recibido_at?: string
  readonly recibo?: ReciboReceptor
}

export interface IntercambioRecord {
  readonly estado: EstadoIntercambio
  readonly email: string | null
  readonly enviado_at: string | null
  readonly acuse: AcuseReceptor | null
  readonly resultado: ResultadoReceptor | null
  /** [{accion, fecha}] as listarEventosHistDoc lists them (33, 34, 43 within 8 days of the SII's acceptance). */
  readonly eventos_receptor: Array<{ accion: string; fecha: string }>
}

export function toIntercambioRecord(row: DteIntercambioRow): IntercambioRecord {
  return {
    estado: row.estado,
    email: row.email,
    enviado_at: row.enviado_at,
    // Written only by services/intercambio-dte.ts, in these shapes.
    acuse: (row.acuse as unknown as AcuseReceptor | null) ?? null,
    resultado: (row.resultado as unknown as ResultadoReceptor | null) ?? null,
    eventos_receptor: row.eventos_receptor,
  }
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
  /** Exports (110–112): the currency of the document's own amounts (TpoMoneda, `PESO CL` included); null otherwise (DESIGN §12). */
  readonly moneda: string | null
  /** Exports: the document's MntTotal in `moneda`, up to 4 decimals; `monto_total` stays in pesos. Null otherwise. */
  readonly monto_total_moneda: number | null
  readonly detalle: unknown[]
  readonly referencias: unknown[]
  readonly tracking: Tracking
  readonly sii_status: SiiStatusRecord | null
  readonly auto_send: boolean
  /** Null until the DTE reaches aceptado or con_reparos, and always for boletas (DESIGN §13). */
  readonly intercambio: IntercambioRecord | null
  readonly metadata: Record<string, unknown>
  readonly created_at: string
  readonly updated_at: string
  readonly xml_documento?: string
  /** Only on GET /dte/{id}: every SII answer about this DTE, oldest first (additive, issue 13). */
  readonly historial_sii?: HistorialSii[]
}

export function toDteRecord(row: DteListRow | DteRow, opts: { includeXml?: boolean; intercambio?: DteIntercambioRow | null } = {}): DteRecord {
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
    moneda: row.moneda,
    // Stored as the XML's decimal text (schema.ts); as a JSON number it is the same decimal.
    monto_total_moneda: row.monto_total_moneda === null ? null : Number(row.monto_total_moneda),
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
    sii_status: (row.sii_status as SiiStatusRecord | null) ?? null,
    auto_send: row.auto_send,
    intercambio: opts.intercambio ? toIntercambioRecord(opts.intercambio) : null,
    metadata: row.metadata,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
  if (opts.includeXml && 'xml' in row) return { ...record, xml_documento: Buffer.from(row.xml).toString('latin1') }
  return record
}

export function getDte(deps: Pick<Deps, 'store'>, input: { empresaId: string; id: string; includeXml?: boolean }): DteRecord {
  const row = findDte(deps.store.db, input.empresaId, input.id)
  if (!row) throw new TimbreError('NOT_FOUND')
  const intercambio = findDteIntercambio(deps.store.db, input.empresaId, input.id)
  return { ...toDteRecord(row, { includeXml: input.includeXml, intercambio }), historial_sii: listTrackingEvents(deps.store.db, input.empresaId, input.id).map(toHistorial) }
}

function toHistorial(e: DteTrackingEventRow): HistorialSii {
  return {
    at: e.at, canal: e.canal, operacion: e.operacion, track_id: e.track_id, estado: e.estado, glosa: e.glosa, err_code: e.err_code,
    glosa_err: e.glosa_err, num_atencion: e.num_atencion, estadistica: e.estadistica ?? null, motivos: e.motivos,
  }
}

/** One SII answer about a DTE, before it is stored (the SII jobs build it from the client's outcome). */
export interface SiiAnswer {
  readonly canal: SiiChannel
  readonly operacion: OperacionSii
  readonly trackId: string | null
  readonly estado: string | null
  readonly glosa: string | null
  readonly errCode?: string | null
  readonly glosaErr?: string | null
  readonly numAtencion?: string | null
  readonly estadistica?: readonly EnvioEstadistica[] | null
  readonly motivos: readonly MotivoSii[]
}

/**
 * Appends the answer to the DTE's `historial_sii`, in the caller's transaction (so `db`, not deps: a step of the SII
 * jobs' use cases, with their instant as `at`). An answer is kept only when it differs from the latest one of its
 * kind (upload, envelope status, document status), so tracking's polls (30 s to 30 min, for as long as the SII takes)
 * and the upload retries of a DTE the SII keeps refusing (STATUS 1 or 6, retried forever) add a line when the SII says
 * something new, not at every question; `tracking.intentos` still counts every upload.
 */
export function recordSiiAnswer(db: Db, dte: Pick<DteRow, 'id' | 'empresa_id'>, answer: SiiAnswer, at: string): void {
  const row = {
    empresa_id: dte.empresa_id, dte_id: dte.id, at, canal: answer.canal, operacion: answer.operacion, track_id: answer.trackId,
    estado: answer.estado, glosa: answer.glosa, err_code: answer.errCode ?? null, glosa_err: answer.glosaErr ?? null,
    num_atencion: answer.numAtencion ?? null, estadistica: answer.estadistica ? answer.estadistica.map((g) => ({ ...g })) : null,
    motivos: [...answer.motivos],
  }
  const last = lastTrackingEvent(db, dte.empresa_id, dte.id, answer.operacion)
  if (last && sameStatus(last, row)) return
  insertTrackingEvent(db, row)
}

function sameStatus(a: Pick<DteTrackingEventRow, 'track_id' | 'estado' | 'glosa' | 'err_code' | 'glosa_err' | 'motivos'>, b: typeof a): boolean {
  return a.track_id === b.track_id && a.estado === b.estado && a.glosa === b.glosa && a.err_code === b.err_code && a.glosa_err === b.glosa_err &&
    JSON.stringify(a.motivos) === JSON.stringify(b.motivos)
}

/** The signed standalone DTE, ISO-8859-1 bytes exactly as signed (DESIGN §12). */
export function getDteXml(deps: Pick<Deps, 'store'>, input: { empresaId: string; id: string }): { bytes: Uint8Array; tipoDte: number; folio: number } {
  const row = findDte(deps.store.db, input.empresaId, input.id)
  if (!row) throw new TimbreError('NOT_FOUND')
  return { bytes: row.xml, tipoDte: row.tipo_dte, folio: row.folio }
}

/** The filters of `GET /dte` as they come in the query (spec 4.1); their shape is checked by the route's schema. */
export interface DteListQuery {
  readonly tipo_dte?: string
  readonly estado?: string
  readonly fecha_desde?: string
  readonly fecha_hasta?: string
  readonly rut_receptor?: string
}

/** The query's filters, or VALIDATION_ERROR naming every bad one: an unknown type or estado, a bad RUT, an empty range. */
function dteFilterOf(q: DteListQuery): DteFilter {
  const errors: FieldError[] = []
  const tipo = q.tipo_dte === undefined ? undefined : Number(q.tipo_dte)
  if (tipo !== undefined && !isTipoDte(tipo)) errors.push({ field: 'tipo_dte', code: 'INVALID_VALUE', message: 'Tipo de DTE desconocido.' })
  if (q.estado !== undefined && !isEstadoDte(q.estado)) errors.push({ field: 'estado', code: 'INVALID_VALUE', message: `Estado desconocido; valores aceptados: ${ESTADOS_DTE.join(', ')}.` })
  const rut = q.rut_receptor === undefined ? undefined : normalizeRut(q.rut_receptor)
  if (rut === null) errors.push({ field: 'rut_receptor', code: 'INVALID_RUT', message: 'RUT inválido.' })
  if (q.fecha_desde !== undefined && q.fecha_hasta !== undefined && q.fecha_desde > q.fecha_hasta)
    errors.push({ field: 'fecha_desde', code: 'INCONSISTENT', message: 'fecha_desde es posterior a fecha_hasta.' })
  if (errors.length > 0) throw new TimbreError('VALIDATION_ERROR', { details: errors })
  const estado = q.estado !== undefined && isEstadoDte(q.estado) ? q.estado : undefined
  return { tipoDte: tipo, estado, fechaDesde: q.fecha_desde, fechaHasta: q.fecha_hasta, rutReceptor: rut ?? undefined }
}

/** `GET /dte` (spec 4.1): newest first, with `total_count` over every match of the filters (DESIGN §8). */
export function listDtes(
  deps: Pick<Deps, 'store'>,
  input: { empresaId: string; query: DteListQuery; afterId: string | null; limit: number },
): { rows: DteRecord[]; total: number } {
  const page = findDtePage(deps.store.db, input.empresaId, dteFilterOf(input.query), input.afterId, input.limit)
  const intercambios = findDteIntercambios(deps.store.db, input.empresaId, page.rows.map((r) => r.id))
  return { rows: page.rows.map((r) => toDteRecord(r, { intercambio: intercambios.get(r.id) })), total: page.total }
}

/** POST /dte/{id}/enviar: firmado → enviando, due now; anything else is 409 DTE_NOT_SENDABLE (DESIGN §6). */
export function requestSubmission(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; id: string }): DteRecord {
  const { empresaId, id } = input
  const at = isoTimestamp(deps.clock.now())
  return deps.store.db.transaction(
    (tx) => {
      const row = findDte(tx, empresaId, id)
      if (!row) throw new TimbreError('NOT_FOUND')
      const next = onSubmissionRequested(row.estado)
      const moved = next === null ? undefined : transitionDte(tx, empresaId, id, row.estado, { estado: next, next_attempt_at: at, updated_at: at })
      if (!moved) throw new TimbreError('DTE_NOT_SENDABLE', { context: { dte_id: id, estado: row.estado } })
      return toDteRecord(moved)
    },
    { behavior: 'immediate' },
  )
}
