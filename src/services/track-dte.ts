// The `sii-track` use case (DESIGN §6): procesando → aceptado | rechazado | con_reparos. Queries the envelope's status
// with back-off (30 s doubling to 30 min, never giving up) and, once processed, the document's own status for
// `sii_status`. Final states never change. Every answer that says something new goes to the DTE's `historial_sii`, in
// the transaction of the change; the reasons the SII gives (issue 13) fill `sii_status`, `tracking.glosa_sii` and
// `sii_status.motivos`.
import { isoTimestamp } from '../clock'
import { claimDue, updateDteIf, type NewDte } from '../db/dte-store'
import type { DteRow } from '../db/schema'
import { afterDocumentStatus, afterEnvioStatus, ESTADOS_EN_EL_SII, isFinal, nextAttemptAt, type EstadoFinal, type SiiTiming, type Transicion } from '../domain/estados'
import {
  glosaDeMotivos, isReparo, uniqueMotivos,
  type DteStatusOutcome, type EnvioDocumento, type EnvioOutcome, type MotivoSii, type SiiChannel,
} from '../domain/sii-respuestas'
import type { SiiCompany, SiiCredentials } from '../sii/client/client'
import type { Deps } from './deps'
import { recordSiiAnswer, type SiiAnswer, type SiiStatus } from './dtes'
import { emitFinalState } from './events'
import { openIntercambio } from './intercambio-dte'
import { channelOf, LEASE_MS, siiContextOf } from './submit-dte'

export type TrackDeps = Pick<Deps, 'store' | 'vault' | 'log' | 'sii' | 'siiTiming' | 'clock'>
export type TrackResult = 'procesando' | EstadoFinal | 'skipped'

type DocumentStatus = Extract<DteStatusOutcome, { kind: 'status' }>
type EnvioFinal = Extract<EnvioOutcome, { kind: 'rejected' | 'processed' }>

/** What one tracking pass does to the DTE: the patch, and the SII answers to add to its history with it. */
interface Tracked {
  readonly patch: Partial<NewDte>
  readonly answers: readonly SiiAnswer[]
}

function statusFromDocument(doc: DocumentStatus, trackId: string | null, motivos: readonly MotivoSii[], at: string): SiiStatus {
  // The boleta consulta has no ERR_CODE/GLOSA_ERR (docs/sii-protocol.md §7.3 item 5): the envelope detail's first
  // reason stands in, so err_code/glosa_err name the document's reason on both channels.
  const first = motivos.find((m) => m.nivel !== null)
  return {
    source: 'documento',
    track_id: trackId,
    estado_sii: doc.estado,
    glosa: glosaDeMotivos(motivos) ?? ([doc.glosaEstado, doc.glosaErr].filter((g) => g).join(' — ') || null),
    glosa_estado: doc.glosaEstado,
    err_code: doc.errCode ?? first?.codigo ?? null,
    glosa_err: doc.glosaErr ?? first?.glosa ?? null,
    num_atencion: doc.numAtencion,
    checked_at: at,
    raw_xml: doc.raw,
    motivos: [...motivos],
  }
}

function statusFromEnvelope(envio: EnvioFinal, trackId: string | null, line: EnvioDocumento | undefined, motivos: readonly MotivoSii[], at: string): SiiStatus {
  const first = motivos.find((m) => m.nivel !== null)
  return {
    source: 'envio',
    track_id: trackId,
    estado_sii: line?.estado ?? envio.estado,
    glosa: glosaDeMotivos(motivos) ?? envio.glosa,
    glosa_estado: envio.glosa,
    err_code: first?.codigo ?? null,
    glosa_err: first?.glosa ?? null,
    num_atencion: envio.numAtencion ?? null,
    checked_at: at,
    raw_xml: envio.raw,
    motivos: [...motivos],
  }
}

function envioAnswer(canal: SiiChannel, trackId: string | null, envio: Exclude<EnvioOutcome, { kind: 'retry' }>, motivos: readonly MotivoSii[]): SiiAnswer {
  return {
    canal, operacion: 'estado_envio', trackId, estado: envio.estado, glosa: envio.glosa, numAtencion: envio.numAtencion ?? null,
    estadistica: envio.kind === 'processed' ? envio.estadistica : null, motivos,
  }
}

function documentAnswer(canal: SiiChannel, trackId: string | null, doc: DocumentStatus): SiiAnswer {
  return {
    canal, operacion: 'estado_dte', trackId, estado: doc.estado, glosa: doc.glosaEstado, errCode: doc.errCode, glosaErr: doc.glosaErr,
    numAtencion: doc.numAtencion, motivos: doc.motivos,
  }
}

/** This DTE's line of the envelope's detail (REST `detalle_rep_rech`; none on the SOAP channel). */
function lineOf(detalle: readonly EnvioDocumento[], dte: DteRow): EnvioDocumento | undefined {
  return detalle.find((d) => d.tipo === dte.tipo_dte && d.folio === dte.folio)
}

/**
 * `tracking.glosa_sii` of a final DTE: its reasons when the SII gave any. Without them, a rejection or a reparo says so
 * and where the SII tells why: on the SOAP channel the SII sends each document's reason only in its result e-mail
 * ("Resultado de Revision Envio", docs/sii-protocol.md §6.5), so a real SII's EPR with RECHAZADOS 1 may come with no
 * reason at all.
 */
function finalGlosa(
  estado: EstadoFinal, motivos: readonly MotivoSii[], envio: Extract<EnvioOutcome, { kind: 'processed' }>, line: EnvioDocumento | undefined, trackId: string | null,
): string | null {
  const reasons = glosaDeMotivos(motivos)
  if (estado === 'aceptado' || motivos.some((m) => m.nivel !== null)) return reasons ?? line?.descripcion ?? envio.glosa
  const what = estado === 'rechazado' ? 'Documento rechazado por el SII' : 'Documento aceptado con reparos por el SII'
  const where = `el SII informa el motivo en su correo "Resultado de Revision Envio ${trackId ?? ''}"`
  return [`${what} (envío ${envio.estado}: ${envio.informados} informados, ${envio.rechazados} rechazados, ${envio.reparos} con reparos)`, reasons, line ? null : where]
    .filter((t) => t !== null)
    .join('; ')
}

/** A query that changed nothing final: the transition's state and its wait, counted as one more query (DESIGN §6). */
function laterPatch(dte: DteRow, now: Date, timing: SiiTiming, next: Transicion, extra: Partial<NewDte> = {}): Partial<NewDte> {
  const consultas = dte.consultas + 1
  const nextAt = nextAttemptAt(next, now, consultas, timing)
  return { estado: next.estado, consultas, next_attempt_at: nextAt === null ? null : isoTimestamp(nextAt), updated_at: isoTimestamp(now), ...extra }
}

/** Still with the SII and nothing to go on (no certificate to ask with): query again after the tracking back-off. */
const STILL_PROCESANDO: Transicion = { estado: 'procesando', espera: 'track' }

// MontoDte is the document's MntTotal (docs/sii-protocol.md §6.6): for an export, its own total in its currency, not the
// peso `monto_total`, or the SII answers DNK "Datos No Coinciden" (DESIGN §12 "Exports"). The stored text is the XML's
// decimal, canonical (no trailing zeros, no exponent); the client's MontoDte is a number, which prints back as that same
// text for any total of up to 15 significant digits (USD 99 999 999 999.9999).
async function documentStatus(deps: TrackDeps, company: SiiCompany, creds: SiiCredentials, dte: DteRow): Promise<DteStatusOutcome> {
  return deps.sii.queryDte(company, creds, channelOf(dte.tipo_dte), {
    tipoDte: dte.tipo_dte,
    folio: dte.folio,
    rutReceptor: dte.rut_receptor,
    fechaEmision: dte.fecha_emision,
    montoTotal: dte.monto_total_moneda === null ? dte.monto_total : Number(dte.monto_total_moneda),
  })
}

/** With a track id: the envelope's status decides (DESIGN §6 table); the document query fills sii_status and the reasons. */
async function trackByEnvelope(deps: TrackDeps, dte: DteRow, company: SiiCompany, creds: SiiCredentials, now: Date): Promise<Tracked> {
  const at = isoTimestamp(now)
  const canal = channelOf(dte.tipo_dte)
  const trackId = dte.track_id
  const envio = await deps.sii.queryEnvio(company, creds, canal, trackId!)
  switch (envio.kind) {
    case 'retry':
      return { patch: laterPatch(dte, now, deps.siiTiming, afterEnvioStatus(envio, undefined)), answers: [] }
    case 'pending':
      return {
        patch: laterPatch(dte, now, deps.siiTiming, afterEnvioStatus(envio, undefined), { estado_envio: envio.estado, glosa_sii: envio.glosa }),
        answers: [envioAnswer(canal, trackId, envio, [])],
      }
    case 'rejected': {
      const line = lineOf(envio.detalle, dte)
      const next = afterEnvioStatus(envio, line)
      // RPT: the domain keeps the DTE procesando (not a refusal of it); the document's own status decides from now on.
      if (next.estado === 'procesando') return trackRepeated(deps, dte, company, creds, now, envio)
      // The whole envelope refused (RSC, RCT, RFR, …): its reasons, or this document's line of the REST detail.
      const motivos = line !== undefined && line.motivos.length > 0 ? line.motivos : envio.motivos
      return {
        patch: {
          estado: next.estado, estado_envio: envio.estado, glosa_sii: glosaDeMotivos(motivos) ?? envio.glosa,
          sii_status: { ...statusFromEnvelope(envio, trackId, line, motivos, at) }, next_attempt_at: null, updated_at: at,
        },
        answers: [envioAnswer(canal, trackId, envio, motivos)],
      }
    }
    case 'processed': {
      const line = lineOf(envio.detalle, dte)
      const estado = afterEnvioStatus(envio, line).estado as EstadoFinal
      const doc = await documentStatus(deps, company, creds, dte)
      // The envelope's detail for this document (REST) and what its own status says (GLOSA_ERR, the consulta).
      const motivos = uniqueMotivos([...(line?.motivos ?? []), ...(doc.kind === 'status' ? doc.motivos : [])])
      const siiStatus = doc.kind === 'status' ? statusFromDocument(doc, trackId, motivos, at) : statusFromEnvelope(envio, trackId, line, motivos, at)
      return {
        patch: {
          estado,
          estado_envio: envio.estado,
          glosa_sii: finalGlosa(estado, motivos, envio, line, trackId),
          informados: envio.informados,
          aceptados: envio.aceptados,
          rechazados: envio.rechazados,
          reparos: envio.reparos,
          sii_status: { ...siiStatus },
          next_attempt_at: null,
          updated_at: at,
        },
        answers: [envioAnswer(canal, trackId, envio, line?.motivos ?? []), ...(doc.kind === 'status' ? [documentAnswer(canal, trackId, doc)] : [])],
      }
    }
  }
}

/**
 * RPT: this track id names a repeat the SII refused because it already holds the envelope (domain/estados.ts
 * isRepeatedEnvio), typically a re-upload whose first answer was lost. The DTE is not rejected: its document sits in
 * that earlier envelope, so the track id is dropped (it names the repeat, not the envelope holding the document) and the
 * document's status decides now and at every later query, as for STATUS 99 without a track id (DESIGN §6).
 */
async function trackRepeated(deps: TrackDeps, dte: DteRow, company: SiiCompany, creds: SiiCredentials, now: Date, envio: Extract<EnvioOutcome, { kind: 'rejected' }>): Promise<Tracked> {
  const byDocument = await trackByDocument(deps, dte, company, creds, now)
  return {
    patch: { ...byDocument.patch, track_id: null, estado_envio: envio.estado },
    answers: [envioAnswer(channelOf(dte.tipo_dte), dte.track_id, envio, []), ...byDocument.answers],
  }
}

/**
 * STATUS 99 without a track id: only the document's status can tell (DESIGN §6 "resolve by getEstDte"). DOK is final:
 * con_reparos when its detail lists reparos (nivel below 3), else aceptado.
 */
async function trackByDocument(deps: TrackDeps, dte: DteRow, company: SiiCompany, creds: SiiCredentials, now: Date): Promise<Tracked> {
  const at = isoTimestamp(now)
  const doc = await documentStatus(deps, company, creds, dte)
  const next = afterDocumentStatus(doc)
  if (doc.kind === 'retry') return { patch: laterPatch(dte, now, deps.siiTiming, next), answers: [] }
  const answers = [documentAnswer(channelOf(dte.tipo_dte), null, doc)]
  const siiStatus = { ...statusFromDocument(doc, null, doc.motivos, at) }
  if (!isFinal(next.estado)) return { patch: laterPatch(dte, now, deps.siiTiming, next, { sii_status: siiStatus }), answers }
  const estado = next.estado
  return { patch: { estado, glosa_sii: glosaDeMotivos(doc.motivos) ?? doc.glosaEstado, sii_status: siiStatus, next_attempt_at: null, updated_at: at }, answers }
}

export async function trackDte(configured: TrackDeps, input: { dteId: string; empresaId: string }): Promise<TrackResult> {
  const { dteId, empresaId } = input
  const now = configured.clock.now()
  const at = isoTimestamp(now)
  const dte = claimDue(configured.store.db, dteId, ESTADOS_EN_EL_SII, at, { next_attempt_at: isoTimestamp(new Date(now.getTime() + LEASE_MS)) })
  if (!dte || dte.empresa_id !== empresaId) return 'skipped'
  const { deps, company, creds } = siiContextOf(configured, dte, now)
  if (!creds) {
    updateDteIf(deps.store.db, dte.id, ESTADOS_EN_EL_SII, laterPatch(dte, now, deps.siiTiming, STILL_PROCESANDO))
    return 'procesando'
  }
  const { patch, answers } = dte.track_id ? await trackByEnvelope(deps, dte, company, creds, now) : await trackByDocument(deps, dte, company, creds, now)
  const updated = deps.store.db.transaction(
    (tx) => {
      const row = updateDteIf(tx, dte.id, ESTADOS_EN_EL_SII, patch)
      if (row) for (const answer of answers) recordSiiAnswer(tx, row, answer, at)
      if (row && isFinal(row.estado)) {
        emitFinalState(tx, row, now)
        // Accepted (con reparos or not): the mail to the receiver is queued with the change (DESIGN §13).
        openIntercambio(tx, row, { now, timing: deps.siiTiming })
      }
      return row
    },
    { behavior: 'immediate' },
  )
  const estado = (updated?.estado ?? 'procesando') as TrackResult
  if (estado !== 'procesando') deps.log.info('sii.final', { empresa_id: empresaId, dte_id: dte.id, tipo_dte: dte.tipo_dte, folio: dte.folio, estado })
  return estado
}
