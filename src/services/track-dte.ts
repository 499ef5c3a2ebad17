// The `sii-track` use case (DESIGN §6): procesando → aceptado | rechazado | con_reparos. Queries the envelope's status
// with back-off (30 s doubling to 30 min, never giving up) and, once processed, the document's own status for
// `sii_status`. Final states never change.
import { isoTimestamp } from '../clock'
import { claimDue, updateDteIf, type NewDte } from '../db/dte-store'
import { findEmpresaById } from '../db/empresa-store'
import type { DteRow } from '../db/schema'
import { backoffMs, estadoFromProcessedEnvio, isFinal, siiTimingFor, type BackoffPolicy, type EstadoFinal } from '../domain/estados'
import type { DteStatusOutcome, EnvioOutcome, SiiCompany, SiiCredentials } from '../sii/client/client'
import type { Deps } from './deps'
import { emitFinalState } from './events'
import { channelOf, LEASE_MS, siiCredentials } from './submit-dte'

export type TrackDeps = Pick<Deps, 'store' | 'vault' | 'log' | 'sii' | 'siiTiming'>
export type TrackResult = 'procesando' | EstadoFinal | 'skipped'

/** Spec 2.7. */
export interface SiiStatus {
  readonly source: string
  readonly track_id: string | null
  readonly estado_sii: string | null
  readonly glosa: string | null
  readonly glosa_estado: string | null
  readonly err_code: string | null
  readonly glosa_err: string | null
  readonly num_atencion: string | null
  readonly checked_at: string
  readonly raw_xml: string | null
}

function statusFromDocument(outcome: Extract<DteStatusOutcome, { kind: 'status' }>, trackId: string | null, source: string, at: string): SiiStatus {
  return {
    source,
    track_id: trackId,
    estado_sii: outcome.estado,
    glosa: [outcome.glosaEstado, outcome.glosaErr].filter((g) => g).join(' — ') || null,
    glosa_estado: outcome.glosaEstado,
    err_code: outcome.errCode,
    glosa_err: outcome.glosaErr,
    num_atencion: outcome.numAtencion,
    checked_at: at,
    raw_xml: outcome.raw,
  }
}

function statusFromEnvelope(outcome: Extract<EnvioOutcome, { kind: 'rejected' | 'processed' }>, trackId: string | null, detalle: string | null, at: string): SiiStatus {
  return {
    source: 'envio',
    track_id: trackId,
    estado_sii: detalle ?? outcome.estado,
    glosa: outcome.glosa,
    glosa_estado: outcome.glosa,
    err_code: null,
    glosa_err: null,
    num_atencion: null,
    checked_at: at,
    raw_xml: outcome.raw,
  }
}

function laterPatch(dte: DteRow, now: Date, policy: BackoffPolicy, extra: Partial<NewDte> = {}): Partial<NewDte> {
  const consultas = dte.consultas + 1
  return { consultas, next_attempt_at: isoTimestamp(new Date(now.getTime() + backoffMs(consultas, policy))), updated_at: isoTimestamp(now), ...extra }
}

async function documentStatus(deps: TrackDeps, company: SiiCompany, creds: SiiCredentials, dte: DteRow): Promise<DteStatusOutcome> {
  return deps.sii.queryDte(company, creds, channelOf(dte.tipo_dte), {
    tipoDte: dte.tipo_dte,
    folio: dte.folio,
    rutReceptor: dte.rut_receptor,
    fechaEmision: dte.fecha_emision,
    montoTotal: dte.monto_total,
  })
}

/** With a track id: the envelope's status decides (DESIGN §6 table); the document query only fills sii_status. */
async function trackByEnvelope(deps: TrackDeps, dte: DteRow, company: SiiCompany, creds: SiiCredentials, now: Date): Promise<Partial<NewDte>> {
  const at = isoTimestamp(now)
  const envio = await deps.sii.queryEnvio(company, creds, channelOf(dte.tipo_dte), dte.track_id!)
  switch (envio.kind) {
    case 'retry':
      return laterPatch(dte, now, deps.siiTiming.track)
    case 'pending':
      return laterPatch(dte, now, deps.siiTiming.track, { estado_envio: envio.estado, glosa_sii: envio.glosa })
    case 'rejected':
      return { estado: 'rechazado', estado_envio: envio.estado, glosa_sii: envio.glosa, sii_status: { ...statusFromEnvelope(envio, dte.track_id, null, at) }, next_attempt_at: null, updated_at: at }
    case 'processed': {
      const line = envio.detalle.find((d) => d.tipo === dte.tipo_dte && d.folio === dte.folio)
      const estado = estadoFromProcessedEnvio(envio, line)
      const doc = await documentStatus(deps, company, creds, dte)
      const siiStatus = doc.kind === 'status' ? statusFromDocument(doc, dte.track_id, 'documento', at) : statusFromEnvelope(envio, dte.track_id, line?.estado ?? null, at)
      return {
        estado,
        estado_envio: envio.estado,
        glosa_sii: line?.descripcion ?? envio.glosa,
        informados: envio.informados,
        aceptados: envio.aceptados,
        rechazados: envio.rechazados,
        reparos: envio.reparos,
        sii_status: { ...siiStatus },
        next_attempt_at: null,
        updated_at: at,
      }
    }
  }
}

/** STATUS 99 without a track id: only the document's status can tell (DESIGN §6 "resolve by getEstDte"). */
async function trackByDocument(deps: TrackDeps, dte: DteRow, company: SiiCompany, creds: SiiCredentials, now: Date): Promise<Partial<NewDte>> {
  const doc = await documentStatus(deps, company, creds, dte)
  if (doc.kind === 'retry' || doc.estado !== 'DOK') return laterPatch(dte, now, deps.siiTiming.track, doc.kind === 'status' ? { sii_status: { ...statusFromDocument(doc, null, 'documento', isoTimestamp(now)) } } : {})
  return { estado: 'aceptado', sii_status: { ...statusFromDocument(doc, null, 'documento', isoTimestamp(now)) }, next_attempt_at: null, updated_at: isoTimestamp(now) }
}

export async function trackDte(configured: TrackDeps, dteId: string, empresaId: string, now: Date): Promise<TrackResult> {
  let deps = configured
  const at = isoTimestamp(now)
  const dte = claimDue(deps.store.db, dteId, ['procesando'], at, { next_attempt_at: isoTimestamp(new Date(now.getTime() + LEASE_MS)) })
  if (!dte || dte.empresa_id !== empresaId) return 'skipped'
  const empresa = findEmpresaById(deps.store.db, empresaId)
  if (!empresa) throw new Error(`empresa ${empresaId} of DTE ${dteId} is missing`)
  deps = { ...deps, siiTiming: siiTimingFor(empresa.is_demo, deps.siiTiming) }
  const creds = siiCredentials(deps, empresaId, now)
  if (!creds) {
    updateDteIf(deps.store.db, dte.id, ['procesando'], laterPatch(dte, now, deps.siiTiming.track))
    return 'procesando'
  }
  const company: SiiCompany = { rut: empresa.rut, ambiente: empresa.ambiente, isDemo: empresa.is_demo }
  const patch = dte.track_id ? await trackByEnvelope(deps, dte, company, creds, now) : await trackByDocument(deps, dte, company, creds, now)
  const updated = deps.store.db.transaction(
    (tx) => {
      const row = updateDteIf(tx, dte.id, ['procesando'], patch)
      if (row && isFinal(row.estado)) emitFinalState(tx, row, now)
      return row
    },
    { behavior: 'immediate' },
  )
  const estado = (updated?.estado ?? 'procesando') as TrackResult
  if (estado !== 'procesando') deps.log.info('sii.final', { empresa_id: empresaId, dte_id: dte.id, tipo_dte: dte.tipo_dte, folio: dte.folio, estado })
  return estado
}
