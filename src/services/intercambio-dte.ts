// The issuer side of the exchange (DESIGN §13 "Sending" and "Issuer side of the same registry"): a DTE the SII
// accepted is queued for its receiver's exchange mailbox, the receiver's answers mailed back to the company are
// recorded on it, and for 33, 34 and 43 the receiver's actions are read from the SII's registry for 8 days.
// docs/decisions/intercambio.md "Sending DTEs to receivers" says why each choice was made.
import { isoTimestamp } from '../clock'
import { findClienteByRut } from '../db/cliente-store'
import { claimEventos, findAnsweredDte, findDteIntercambio, findDueEventos, insertDteIntercambio, updateDteIntercambio } from '../db/dte-intercambio-store'
import { findDte } from '../db/dte-store'
import { findEmpresaById } from '../db/empresa-store'
import { enqueueMail } from '../db/mail-outbox-store'
import type { Db } from '../db/open'
import type { DteIntercambioRow, DteRow } from '../db/schema'
import { isDocumentoDeCertificacion, isDocumentoDeSet } from '../domain/certificacion-casos'
import { isValidEmail } from '../domain/catalogo'
import type { SiiTiming } from '../domain/estados'
import type { EventType } from '../domain/events'
import { isAccion, isClaim, isMailedToReceiver, TIPOS_CON_ACCION } from '../domain/intercambio'
import { normalizeRut } from '../domain/rut'
import type { EventoReceptor } from '../domain/sii-respuestas'
import type { EnvioRecibosRead } from '../xml/envio-recibos'
import type { RespuestaDteRead } from '../xml/respuesta-dte'
import { inBatches } from './batches'
import { emailIntercambioOf } from './contribuyentes'
import type { Deps } from './deps'
import { toIntercambioRecord, type AcuseReceptor, type ReciboReceptor, type ResultadoReceptor } from './dtes'
import { dteSummary, emitEvent } from './events'
import { LEASE_MS, siiContextOf } from './submit-dte'

const DAY_MS = 24 * 60 * 60_000
/** DESIGN §13: the receiver acts within 8 days; the SII's registry is read that long after the acceptance. */
export const EVENTOS_DIAS = 8

/**
 * How often the receiver's events are read: twice the tracking back-off's cap (domain/estados.ts SiiTiming), so one
 * hour against the real SII (cap 30 min) — at most 192 questions per document over its 8 days — and two minutes
 * against the simulator (cap 1 min), where the demo and the tests see a receiver's action soon. The demo company keeps
 * the simulator's pace whatever the target, as for tracking (siiTimingFor).
 */
export function eventosIntervalMs(timing: SiiTiming): number {
  return 2 * timing.track.capMs
}

// ------------------------------------------------------------------------------------------------ the DTE accepted

/**
 * The receiver's exchange mailbox (DESIGN §13): the request's `receptor.email` (extension), else the company's cliente
 * with that RUT, else the address the SII lists for it (`timbre contribuyentes import`); null when none is known.
 */
export function receiverAddress(db: Db, dte: Pick<DteRow, 'empresa_id' | 'rut_receptor' | 'request'>): string | null {
  const receptor = (dte.request as { receptor?: { email?: unknown } }).receptor
  if (typeof receptor?.email === 'string' && isValidEmail(receptor.email)) return receptor.email
  const cliente = findClienteByRut(db, dte.empresa_id, dte.rut_receptor)?.email
  if (cliente && isValidEmail(cliente)) return cliente
  return emailIntercambioOf(db, dte.rut_receptor)
}

/**
 * Where a re-send goes (issue 27, review): the cliente's email as it is now comes first, because fixing the cliente
 * is how a person corrects an address that bounced, and the request's `receptor.email` would otherwise win for ever;
 * then the request's, then the SII's list. Null when none is known.
 */
export function resendAddress(db: Db, dte: Pick<DteRow, 'empresa_id' | 'rut_receptor' | 'request'>): string | null {
  const cliente = findClienteByRut(db, dte.empresa_id, dte.rut_receptor)?.email
  if (cliente && isValidEmail(cliente)) return cliente
  return receiverAddress(db, dte)
}

/**
 * A step of sii-track, in the transaction that moves the DTE to aceptado or con_reparos: its exchange row and its mail
 * to the receiver (sent later by the outbox, DESIGN §13 "Issuance never waits for mail"). Boletas, and DTEs in any
 * other estado, get nothing. Returns the new row, or null when none was opened.
 */
export function openIntercambio(db: Db, dte: DteRow, input: { readonly now: Date; readonly timing: SiiTiming }): DteIntercambioRow | null {
  if (!isMailedToReceiver(dte.tipo_dte) || (dte.estado !== 'aceptado' && dte.estado !== 'con_reparos')) return null
  // Certification's documents go to the SII alone (DESIGN §15): a set case's receiver is a stand-in, and a simulation's
  // is a real cliente whose system must never book a test invoice. Neither is mailed.
  if (isDocumentoDeSet(dte.referencias) || isDocumentoDeCertificacion(dte.metadata)) return null
  const at = isoTimestamp(input.now)
  const email = receiverAddress(db, dte)
  const withEventos = (TIPOS_CON_ACCION as readonly number[]).includes(dte.tipo_dte)
  const row = insertDteIntercambio(db, {
    dte_id: dte.id,
    empresa_id: dte.empresa_id,
    estado: email === null ? 'sin_destinatario' : 'pendiente',
    email,
    eventos_receptor: [],
    eventos_hasta: withEventos ? isoTimestamp(new Date(input.now.getTime() + EVENTOS_DIAS * DAY_MS)) : null,
    next_eventos_at: withEventos ? isoTimestamp(new Date(input.now.getTime() + eventosIntervalMs(input.timing))) : null,
    updated_at: at,
  })
  if (!row) return null
  const empresa = findEmpresaById(db, dte.empresa_id)
  if (!empresa) throw new Error(`empresa ${dte.empresa_id} of DTE ${dte.id} is missing`)
  enqueueMail(db, {
    empresaId: dte.empresa_id,
    kind: 'envio_dte',
    dteId: dte.id,
    to: email,
    subject: envioDteSubject(dte, empresa.razon_social),
    attachment: null,
    attachmentName: null,
    at,
  })
  return row
}

export function envioDteSubject(dte: Pick<DteRow, 'tipo_dte' | 'folio'>, razonSocial: string): string {
  return `DTE ${dte.tipo_dte} N° ${dte.folio} de ${razonSocial}`
}

// ------------------------------------------------------------------------------------------------ the receiver's answers

type AnswerDeps = Pick<Deps, 'store' | 'clock' | 'log'>

/** One document an answer names, and what to write on its exchange row. */
interface Answered {
  readonly tipoDte: number
  readonly folio: number
  readonly rutEmisor: string
  readonly rutReceptor: string
  /** What to write, or null when the answer must not replace what is recorded (see `keeps`). */
  readonly patch: (row: DteIntercambioRow) => Pick<DteIntercambioRow, 'acuse' | 'resultado'> | null
}

/**
 * An answer whose signature did not verify is recorded (flagged `firma_valida: false`), except over one of the same
 * kind that did verify: anybody can mail the company an XML, and a forged answer must not erase the receiver's real one.
 */
function keeps(recorded: { firma_valida?: unknown } | null | undefined, firmaValida: boolean): boolean {
  return !firmaValida && recorded?.firma_valida === true
}

/**
 * The receiver's envelope receipt (RecepcionEnvio → `acuse`, `dte.acuse_recibo`) or commercial answer (ResultadoDTE →
 * `resultado`, `dte.resultado_receptor`) about the company's own DTEs. Documents of other issuers are ignored; one
 * transaction per answer. An answer whose signature did not verify is recorded with `firma_valida: false`.
 */
export function applyRespuestaDte(deps: AnswerDeps, input: { readonly empresaId: string; readonly read: RespuestaDteRead; readonly at?: Date }): { matched: number } {
  const at = isoTimestamp(input.at ?? deps.clock.now())
  const { read } = input
  const firma_valida = read.signatureOk
  if (read.kind === 'recepcion') {
    const docs = read.envios.flatMap((envio) =>
      envio.documentos.map((d): Answered => {
        const acuse: AcuseReceptor = {
          estado_recep_env: envio.estadoRecepEnv,
          estado_recep_dte: d.estadoRecepDte,
          glosa: d.glosa || envio.glosa || null,
          fecha: envio.fchRecep || null,
          firma_valida,
          recibido_at: at,
        }
        return { ...d, patch: (row) => (keeps(row.acuse, firma_valida) ? null : { acuse: { ...acuse }, resultado: row.resultado }) }
      }),
    )
    return applyAnswer(deps, { empresaId: input.empresaId, docs, event: 'dte.acuse_recibo', at, signatureOk: firma_valida })
  }
  const docs = read.resultados.map((r): Answered => {
    const resultado: ResultadoReceptor = { estado_dte: r.estadoDte, glosa: r.glosa || null, fecha: read.tmst || null, firma_valida, recibido_at: at }
    // A Recibo that came first stays beside the commercial answer.
    return {
      ...r,
      patch: (row) => (keeps(resultadoOf(row), firma_valida) ? null : { acuse: row.acuse, resultado: { ...reciboOf(row), ...resultado } }),
    }
  })
  return applyAnswer(deps, { empresaId: input.empresaId, docs, event: 'dte.resultado_receptor', at, signatureOk: firma_valida })
}

/** The receiver's receipt of goods or services (Ley 19.983): `resultado.recibo`, `dte.resultado_receptor`. */
export function applyEnvioRecibos(deps: AnswerDeps, input: { readonly empresaId: string; readonly read: EnvioRecibosRead; readonly at?: Date }): { matched: number } {
  const at = isoTimestamp(input.at ?? deps.clock.now())
  const firma_valida = input.read.signatureOk
  const docs = input.read.recibos.map((r): Answered => {
    const recibo: ReciboReceptor = { recinto: r.recinto || null, fecha: r.tmst || null, firma_valida, recibido_at: at }
    return {
      tipoDte: r.tipoDoc,
      folio: r.folio,
      rutEmisor: r.rutEmisor,
      rutReceptor: r.rutRecep,
      patch: (row) => (keeps(resultadoOf(row)?.recibo, firma_valida) ? null : { acuse: row.acuse, resultado: { ...(row.resultado ?? {}), recibo: { ...recibo } } }),
    }
  })
  return applyAnswer(deps, { empresaId: input.empresaId, docs, event: 'dte.resultado_receptor', at, signatureOk: firma_valida })
}

function registryStillRead(row: DteIntercambioRow, at: string): boolean {
  return row.eventos_hasta !== null && at < row.eventos_hasta
}

function resultadoOf(row: DteIntercambioRow): ResultadoReceptor | null {
  return row.resultado as ResultadoReceptor | null
}

/** The commercial answer and the receipt of goods are separate answers: a new one of either keeps the other. */
function reciboOf(row: DteIntercambioRow): Record<string, unknown> {
  const recibo = resultadoOf(row)?.recibo
  return recibo ? { recibo } : {}
}

function applyAnswer(
  deps: AnswerDeps,
  input: { empresaId: string; docs: readonly Answered[]; event: EventType; at: string; signatureOk: boolean },
): { matched: number } {
  const empresa = findEmpresaById(deps.store.db, input.empresaId)
  if (!empresa) throw new Error(`empresa ${input.empresaId} is missing`)
  const now = new Date(input.at)
  const matched = deps.store.db.transaction(
    (tx) => {
      let n = 0
      for (const doc of input.docs) {
        // Only the company's own DTEs: an answer may list documents of other issuers (one mailbox, many senders).
        if (normalizeRut(doc.rutEmisor) !== empresa.rut) continue
        const rutReceptor = normalizeRut(doc.rutReceptor)
        const found = rutReceptor === null ? undefined : findAnsweredDte(tx, { empresaId: empresa.id, tipoDte: doc.tipoDte, folio: doc.folio, rutReceptor })
        if (!found?.intercambio) {
          deps.log.warn('intercambio.answer_unmatched', { empresa_id: empresa.id, event: input.event, tipo_dte: doc.tipoDte, folio: doc.folio, rut_receptor: doc.rutReceptor })
          continue
        }
        const patch = doc.patch(found.intercambio)
        if (patch === null) {
          deps.log.warn('intercambio.answer_unsigned_ignored', { empresa_id: empresa.id, dte_id: found.dte.id, event: input.event })
          continue
        }
        // The receiver says it accepted or claimed: the SII's registry is read on the next pass, not at the next
        // interval, so the DTE shows the registered event (and its webhook) minutes sooner.
        const soon = input.event === 'dte.resultado_receptor' && input.signatureOk && registryStillRead(found.intercambio, input.at) ? { next_eventos_at: input.at } : {}
        const updated = updateDteIntercambio(tx, found.dte.id, { ...patch, ...soon, updated_at: input.at })!
        emitEvent(tx, { empresaId: empresa.id, type: input.event, data: { dte: dteSummary(found.dte), intercambio: toIntercambioRecord(updated) }, now })
        n++
      }
      return n
    },
    { behavior: 'immediate' },
  )
  if (!input.signatureOk && matched > 0) deps.log.warn('intercambio.answer_unsigned', { empresa_id: empresa.id, event: input.event, matched })
  return { matched }
}

// ------------------------------------------------------------------------------------------------ the SII's registry

const EVENTOS_PER_PASS = 100
/** A few SII calls in flight: one slow answer (30 s timeout) does not hold the rest. */
const AT_ONCE = 4

export type EventosDeps = Pick<Deps, 'store' | 'vault' | 'log' | 'sii' | 'siiTiming' | 'clock'>

/**
 * For the company's own 33, 34 and 43 within 8 days of the SII's acceptance (DESIGN §13): the receiver's actions as
 * `listarEventosHistDoc` lists them, asked with the company's own SII identity. New events are appended to
 * `eventos_receptor`; the first acceptance (ACD, ERM) fires `dte.aceptado_receptor`, the first claim (RCD, RFP, RFT)
 * `dte.reclamado`. Returns how many DTEs were due.
 */
export async function followReceiverEvents(deps: EventosDeps): Promise<number> {
  const now = deps.clock.now()
  const due = findDueEventos(deps.store.db, isoTimestamp(now), EVENTOS_PER_PASS)
  const results = await inBatches(due, AT_ONCE, (row) => followOne(deps, row, now))
  for (const r of results)
    if (r.status === 'rejected') deps.log.error('job.item_failed', { job: 'eventos_receptor', error: String(r.reason), stack: (r.reason as Error)?.stack })
  return due.length
}

/** The next question: one interval on, the last one at `eventos_hasta` itself, then none. */
function nextEventosAt(now: Date, intervalMs: number, hasta: string): string | null {
  const nowIso = isoTimestamp(now)
  if (nowIso >= hasta) return null
  const next = isoTimestamp(new Date(now.getTime() + intervalMs))
  return next < hasta ? next : hasta
}

async function followOne(deps: EventosDeps, due: DteIntercambioRow, now: Date): Promise<void> {
  const nowIso = isoTimestamp(now)
  const db = deps.store.db
  if (due.eventos_hasta === null || nowIso > due.eventos_hasta) {
    updateDteIntercambio(db, due.dte_id, { next_eventos_at: null, updated_at: nowIso })
    return
  }
  const row = claimEventos(db, due.dte_id, nowIso, isoTimestamp(new Date(now.getTime() + LEASE_MS)))
  if (!row) return
  const dte = findDte(db, row.empresa_id, row.dte_id)
  if (!dte) throw new Error(`DTE ${row.dte_id} of an intercambio row is missing`)
  const ctx = siiContextOf(deps, dte, now)
  const next = nextEventosAt(now, eventosIntervalMs(ctx.deps.siiTiming), row.eventos_hasta!)
  if (!ctx.creds) {
    // Without an active certificate the SII cannot be asked (DESIGN §8); ask again at the next turn.
    updateDteIntercambio(db, row.dte_id, { next_eventos_at: next, updated_at: nowIso })
    return
  }
  const outcome = await deps.sii.listarEventos(ctx.company, ctx.creds, { rutEmisor: ctx.empresa.rut, tipoDte: dte.tipo_dte, folio: dte.folio })
  if (outcome.kind !== 'eventos') {
    deps.log.warn('intercambio.eventos_unanswered', {
      empresa_id: dte.empresa_id, dte_id: dte.id, tipo_dte: dte.tipo_dte, folio: dte.folio, outcome: outcome.kind,
      ...(outcome.kind === 'rechazada' ? { cod_resp: outcome.codResp, desc_resp: outcome.descResp } : { reason: outcome.reason }),
    })
    updateDteIntercambio(db, row.dte_id, { next_eventos_at: next, updated_at: nowIso })
    return
  }
  recordEventos(deps, { dte, eventos: outcome.eventos, next, now })
}

function recordEventos(deps: EventosDeps, input: { dte: DteRow; eventos: readonly EventoReceptor[]; next: string | null; now: Date }): void {
  const { dte, now } = input
  const at = isoTimestamp(now)
  deps.store.db.transaction(
    (tx) => {
      const current = findDteIntercambio(tx, dte.empresa_id, dte.id)
      if (!current) return
      const known = new Set(current.eventos_receptor.map(eventKey))
      const nuevos = input.eventos.map((e) => ({ accion: e.accion, fecha: e.fecha })).filter((e) => !known.has(eventKey(e)))
      const eventos_receptor = [...current.eventos_receptor, ...nuevos]
      const updated = updateDteIntercambio(tx, dte.id, { eventos_receptor, next_eventos_at: input.next, updated_at: at })!
      const fired = firstOfKind(current.eventos_receptor, nuevos)
      for (const type of fired) emitEvent(tx, { empresaId: dte.empresa_id, type, data: { dte: dteSummary(dte), intercambio: toIntercambioRecord(updated) }, now })
      if (nuevos.length > 0) deps.log.info('intercambio.eventos', { empresa_id: dte.empresa_id, dte_id: dte.id, nuevos: nuevos.map((e) => e.accion) })
    },
    { behavior: 'immediate' },
  )
}

function eventKey(e: { accion: string; fecha: string }): string {
  return `${e.accion}\u0000${e.fecha}`
}

/** `dte.aceptado_receptor` at the first acceptance (ACD, ERM), `dte.reclamado` at the first claim (RCD, RFP, RFT). */
function firstOfKind(before: ReadonlyArray<{ accion: string }>, nuevos: ReadonlyArray<{ accion: string }>): EventType[] {
  const kind = (e: { accion: string }): 'acepta' | 'reclama' | null => (isAccion(e.accion) ? (isClaim(e.accion) ? 'reclama' : 'acepta') : null)
  const had = new Set(before.map(kind))
  const has = new Set(nuevos.map(kind))
  const fired: EventType[] = []
  if (has.has('acepta') && !had.has('acepta')) fired.push('dte.aceptado_receptor')
  if (has.has('reclama') && !had.has('reclama')) fired.push('dte.reclamado')
  return fired
}
