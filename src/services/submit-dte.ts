// The `sii-submit` use case (DESIGN §6): firmado → enviando → procesando. One envelope per DTE, built and signed once
// with the active certificate and kept, so every retry re-sends the same bytes; the DTE itself is never re-stamped or
// re-signed after its 201. Every upload outcome maps to exactly one row of DESIGN §6's table.
import { isoTimestamp, santiagoTimestamp } from '../clock'
import { claimDue, updateDteIf, type NewDte } from '../db/dte-store'
import { findEmpresaById } from '../db/empresa-store'
import { findEnvio, insertEnvio, setEnvioTrackId } from '../db/envio-store'
import type { DteRow, EmpresaRow, EnvioRow } from '../db/schema'
import { afterUpload, ESTADOS_POR_ENVIAR, isFinal, nextAttemptAt, siiTimingFor, type SiiTiming } from '../domain/estados'
import { TIPOS } from '../domain/tipos'
import type { TipoDte } from '../domain/emision'
import { TimbreError } from '../errors'
import type { SiiChannel, UploadOutcome } from '../domain/sii-respuestas'
import type { SiiCompany, SiiCredentials } from '../sii/client/client'
import { SII_RUT } from '../domain/rut'
import { openActiveCertificado } from './certificados'
import { UPLOAD_STATUS } from '../sii/client/codes'
import type { Deps } from './deps'
import { recordSiiAnswer, type SiiAnswer, type SiiStatus } from './dtes'
import { emitFinalState } from './events'

export type SubmitDeps = Pick<Deps, 'store' | 'vault' | 'log' | 'sii' | 'siiTiming' | 'clock' | 'tasks'>

const WAITING = ESTADOS_POR_ENVIAR
/** Longer than an SII call can take (30 s timeout, DESIGN §6) with its one token refresh. */
export const LEASE_MS = 2 * 60 * 1000

export function channelOf(tipoDte: number): SiiChannel {
  return TIPOS[tipoDte as TipoDte].envelope === 'EnvioBOLETA' ? 'boleta' : 'soap'
}

/** The stored envelope of this DTE, or a new one signed now, in a worker, with the active certificate (DESIGN §8). */
async function envelopeFor(deps: SubmitDeps, dte: DteRow, empresa: EmpresaRow, creds: SiiCredentials, now: Date): Promise<EnvioRow> {
  if (dte.envio_id) {
    const kept = findEnvio(deps.store.db, dte.empresa_id, dte.envio_id)
    if (kept) return kept
  }
  const canal = channelOf(dte.tipo_dte)
  const xml = await deps.tasks.run('build-envelope', {
    kind: canal === 'boleta' ? 'EnvioBOLETA' : 'EnvioDTE',
    dtes: [Buffer.from(dte.xml).toString('latin1')],
    caratula: {
      rutEmisor: empresa.rut,
      rutEnvia: creds.rutFirmante,
      rutReceptor: SII_RUT,
      fchResol: empresa.fecha_resolucion,
      nroResol: empresa.numero_resolucion,
      tmstFirmaEnv: santiagoTimestamp(now),
    },
    signer: openActiveCertificado(deps, { empresaId: dte.empresa_id, now }).material,
  })
  const at = isoTimestamp(now)
  return deps.store.db.transaction(
    (tx) => {
      const envio = insertEnvio(tx, {
        id: Bun.randomUUIDv7(),
        empresa_id: dte.empresa_id,
        canal,
        file_name: `${empresa.rut.replace('-', '')}_T${dte.tipo_dte}F${dte.folio}.xml`,
        xml: Buffer.from(xml),
        created_at: at,
      })
      updateDteIf(tx, dte.id, WAITING, { envio_id: envio.id, updated_at: at })
      return envio
    },
    { behavior: 'immediate' },
  )
}

/** The upload's outcome applied to the DTE: its transition (domain/estados.ts) and what it records. `attempt` is this upload's number. */
export function patchAfterUpload(outcome: UploadOutcome, attempt: number, trackIdBefore: string | null, now: Date, timing: SiiTiming): Partial<NewDte> {
  const at = isoTimestamp(now)
  const next = afterUpload(outcome)
  const nextAt = nextAttemptAt(next, now, attempt, timing)
  const base = { estado: next.estado, intentos: attempt, updated_at: at, next_attempt_at: nextAt === null ? null : isoTimestamp(nextAt) }
  switch (outcome.kind) {
    case 'received':
      return { ...base, track_id: outcome.trackId, estado_envio: 'REC', codigo_sii: '0', glosa_sii: 'Upload OK', consultas: 0 }
    case 'already_received':
      // STATUS 99: keep the first track id; without one, the document status query resolves it (DESIGN §6).
      return { ...base, track_id: outcome.trackId ?? trackIdBefore, codigo_sii: '99', glosa_sii: 'Envío ya recibido', consultas: 0 }
    case 'refused':
      // Final at upload: sii_status says why (issue 13), from the only SII answer this DTE will ever get.
      return { ...base, codigo_sii: outcome.status, glosa_sii: outcome.glosa, sii_status: { ...refusedStatus(outcome, at) } }
    case 'not_authorized':
      return { ...base, codigo_sii: outcome.status, glosa_sii: outcome.glosa }
    case 'retry':
      return { ...base, codigo_sii: outcome.status ?? null, glosa_sii: outcome.reason }
  }
}

function refusedStatus(outcome: Extract<UploadOutcome, { kind: 'refused' }>, at: string): SiiStatus {
  const first = outcome.motivos[0]
  return {
    source: 'upload', track_id: null, estado_sii: outcome.status, glosa: outcome.glosa, glosa_estado: first?.glosa ?? null, err_code: null,
    glosa_err: first?.detalle ?? null, num_atencion: null, checked_at: at, raw_xml: outcome.raw, motivos: outcome.motivos,
  }
}

/**
 * The upload's answer as a line of `historial_sii`: its STATUS (REST `estado`) and meaning, with the reasons of a
 * refusal. A retry without an SII status (a timeout, a network error, an HTML page) is not an answer of the SII.
 */
export function uploadAnswer(outcome: UploadOutcome, canal: SiiChannel): SiiAnswer | null {
  const answer = (estado: string, glosa: string | null, trackId: string | null = null, motivos: SiiAnswer['motivos'] = []): SiiAnswer =>
    ({ canal, operacion: 'upload', trackId, estado, glosa, motivos })
  switch (outcome.kind) {
    case 'received':
      return canal === 'soap' ? answer('0', UPLOAD_STATUS['0']?.glosa ?? null, outcome.trackId) : answer('REC', 'Envío recibido', outcome.trackId)
    case 'already_received':
      return canal === 'soap' ? answer('99', UPLOAD_STATUS['99']?.glosa ?? null, outcome.trackId) : answer('RPT', 'Envío ya recibido', outcome.trackId)
    case 'refused':
    case 'not_authorized':
      return answer(outcome.status, outcome.glosa, null, outcome.motivos)
    case 'retry':
      return outcome.status === undefined ? null : answer(outcome.status, outcome.reason)
  }
}

/**
 * The active certificate as the SII client takes it; null while the company has none (DESIGN §8: submissions wait).
 * A step of submitDte and trackDte, with the instant they read from their clock.
 */
export function siiCredentials(deps: Pick<Deps, 'store' | 'vault'>, input: { empresaId: string; now: Date }): SiiCredentials | null {
  try {
    const cert = openActiveCertificado(deps, input)
    return { certificateId: cert.id, rutFirmante: cert.rutFirmante, signer: cert.signer }
  } catch (err) {
    if (err instanceof TimbreError && err.code === 'CERTIFICATE_REQUIRED') return null
    throw err
  }
}

export type SubmitResult = 'procesando' | 'rechazado' | 'enviando' | 'waiting_certificate' | 'skipped'

/**
 * What both SII jobs need of a claimed DTE's company: the company as the SII client sees it (the demo is routed to the
 * simulator, DESIGN §10), its pace (the demo keeps the simulator's back-offs), and the active certificate's credentials
 * (null while it has none: the DTE waits, DESIGN §8).
 */
export function siiContextOf<D extends Pick<Deps, 'store' | 'vault' | 'siiTiming'>>(
  configured: D,
  dte: Pick<DteRow, 'id' | 'empresa_id'>,
  now: Date,
): { readonly deps: D; readonly empresa: EmpresaRow; readonly company: SiiCompany; readonly creds: SiiCredentials | null } {
  const empresa = findEmpresaById(configured.store.db, dte.empresa_id)
  if (!empresa) throw new Error(`empresa ${dte.empresa_id} of DTE ${dte.id} is missing`)
  const deps = { ...configured, siiTiming: siiTimingFor(empresa.is_demo, configured.siiTiming) }
  const company: SiiCompany = { rut: empresa.rut, ambiente: empresa.ambiente, isDemo: empresa.is_demo }
  return { deps, empresa, company, creds: siiCredentials(deps, { empresaId: dte.empresa_id, now }) }
}

/** One DTE through one upload attempt. Safe to run beside another process: every write checks the estado it expects. */
export async function submitDte(configured: SubmitDeps, input: { dteId: string; empresaId: string }): Promise<SubmitResult> {
  const { dteId, empresaId } = input
  const now = configured.clock.now()
  const at = isoTimestamp(now)
  // firmado → enviando, leased past the upload's timeout: no other pass uploads it meanwhile; if this one dies, the
  // lease runs out and the same stored envelope is sent again (answered "already received").
  const dte = claimDue(configured.store.db, dteId, WAITING, at, { estado: 'enviando', next_attempt_at: isoTimestamp(new Date(now.getTime() + LEASE_MS)), updated_at: at })
  if (!dte || dte.empresa_id !== empresaId) return 'skipped'
  const { deps, empresa, company, creds } = siiContextOf(configured, dte, now)
  if (!creds) {
    // Without an active certificate submissions wait (DESIGN §8); look again in a while.
    updateDteIf(deps.store.db, dte.id, ['enviando'], { next_attempt_at: isoTimestamp(new Date(now.getTime() + deps.siiTiming.submit.capMs)), glosa_sii: 'Sin certificado activo para firmar el envío', updated_at: at })
    return 'waiting_certificate'
  }
  const envio = await envelopeFor(deps, dte, empresa, creds, now)
  const outcome = await deps.sii.upload(company, creds, envio.canal, envio.xml, envio.file_name)
  const patch = patchAfterUpload(outcome, dte.intentos + 1, dte.track_id, now, deps.siiTiming)
  const answer = uploadAnswer(outcome, envio.canal)
  deps.store.db.transaction(
    (tx) => {
      const updated = updateDteIf(tx, dte.id, ['enviando'], patch)
      if (updated && answer) recordSiiAnswer(tx, updated, answer, at)
      if (patch.track_id) setEnvioTrackId(tx, envio.id, patch.track_id)
      // Refused at upload (STATUS 2, 7, 8) is final: its event goes out with the change (DESIGN §7).
      if (updated && isFinal(updated.estado)) emitFinalState(tx, updated, now)
    },
    { behavior: 'immediate' },
  )
  deps.log.info('sii.upload', { empresa_id: empresaId, dte_id: dte.id, tipo_dte: dte.tipo_dte, folio: dte.folio, outcome: outcome.kind, status: 'status' in outcome ? outcome.status : undefined, attempt: dte.intentos + 1 })
  return patch.estado as SubmitResult
}
