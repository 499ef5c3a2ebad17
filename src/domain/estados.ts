// The DTE's states and DESIGN §6's table of transitions after `firmado`, as pure functions from the SII's answers
// (domain/sii-respuestas.ts) to the next state and how long to wait; and the back-off of the SII jobs. The services
// apply these to the store; test/unit/domain/estados.test.ts checks them row by row against DESIGN §6.
import { isReparo, type DteStatusOutcome, type EnvioDocumento, type EnvioOutcome, type UploadOutcome } from './sii-respuestas'

/** Spec 2.1 EstadoDTE, every value; `borrador` and `generado` stay in the enumeration and are never stored (DESIGN §6). */
export const ESTADOS_DTE = ['borrador', 'generado', 'firmado', 'enviando', 'procesando', 'aceptado', 'rechazado', 'con_reparos'] as const
export type EstadoDte = (typeof ESTADOS_DTE)[number]

export const ESTADOS_FINALES = ['aceptado', 'rechazado', 'con_reparos'] as const
export type EstadoFinal = (typeof ESTADOS_FINALES)[number]

/** What the submission job takes: `firmado` with auto_send, and `enviando` (queued or being retried). */
export const ESTADOS_POR_ENVIAR = ['firmado', 'enviando'] as const satisfies readonly EstadoDte[]
/** What the tracking job queries: the SII holds it. */
export const ESTADOS_EN_EL_SII = ['procesando'] as const satisfies readonly EstadoDte[]

export function isEstadoDte(value: string): value is EstadoDte {
  return (ESTADOS_DTE as readonly string[]).includes(value)
}

export function isFinal(estado: string): estado is EstadoFinal {
  return (ESTADOS_FINALES as readonly string[]).includes(estado)
}

const SECOND = 1000
const MINUTE = 60 * SECOND

/** Upload retries: 30 s doubling to 30 min, never dropped (DESIGN §6). `attempt` counts from 1. */
export const SUBMIT_BACKOFF = { firstMs: 30 * SECOND, capMs: 30 * MINUTE } as const
/** STATUS 1 or 6 (sender or company not authorised): the same doubling, capped at 6 h (DESIGN §6). */
export const NOT_AUTHORIZED_BACKOFF = { firstMs: 30 * SECOND, capMs: 6 * 60 * MINUTE } as const
/** Status queries while procesando: 30 s to 30 min, never giving up (DESIGN §6). */
export const TRACK_BACKOFF = { firstMs: 30 * SECOND, capMs: 30 * MINUTE } as const

export interface BackoffPolicy {
  readonly firstMs: number
  readonly capMs: number
}

export interface SiiTiming {
  readonly submit: BackoffPolicy
  readonly notAuthorized: BackoffPolicy
  readonly track: BackoffPolicy
}

/** DESIGN §6, for the real SII. */
export const SII_TIMING: SiiTiming = { submit: SUBMIT_BACKOFF, notAuthorized: NOT_AUTHORIZED_BACKOFF, track: TRACK_BACKOFF }

/**
 * The simulator answers in about a second, so its back-offs start at 1 s and stop at 1 min: the demo's invoice reaches
 * its final state within seconds while the code path is the one the real SII gets.
 */
export const SIMULATOR_TIMING: SiiTiming = {
  submit: { firstMs: SECOND, capMs: MINUTE },
  notAuthorized: { firstMs: SECOND, capMs: MINUTE },
  track: { firstMs: SECOND, capMs: MINUTE },
}

/**
 * `--sii-backoff FIRST:CAP` (config.ts): upload retries and status queries at a soak's pace, so a few minutes against a
 * simulator failing on purpose see many retries and still end final. STATUS 1 or 6 keep DESIGN §6's 6 h cap: only
 * someone at the SII fixes those.
 */
export function timingWithBackoff(backoff: BackoffPolicy): SiiTiming {
  return { submit: backoff, track: backoff, notAuthorized: { firstMs: backoff.firstMs, capMs: Math.max(backoff.capMs, NOT_AUTHORIZED_BACKOFF.capMs) } }
}

/** The demo company is always served by the simulator (DESIGN §10), so it keeps the simulator's pace whatever the target. */
export function siiTimingFor(isDemo: boolean, configured: SiiTiming): SiiTiming {
  return isDemo ? SIMULATOR_TIMING : configured
}

export function backoffMs(attempt: number, policy: { readonly firstMs: number; readonly capMs: number }): number {
  const exponent = Math.max(0, Math.min(attempt - 1, 30))
  return Math.min(policy.capMs, policy.firstMs * 2 ** exponent)
}

/**
 * What an answer of the SII asks of the job besides the new state: nothing more (a final state, or query again at
 * once), or to wait by one of DESIGN §6's back-offs (SiiTiming: `submit`, `notAuthorized`, `track`).
 */
export type Espera = 'ninguna' | 'submit' | 'notAuthorized' | 'track'

export interface Transicion {
  readonly estado: EstadoDte
  readonly espera: Espera
}

/**
 * When the SII jobs look at the DTE next, after a transition (DESIGN §6): never once final, at once when nothing is to
 * be waited for, else after the back-off of its kind for this `attempt` (1 for the first upload or query).
 */
export function nextAttemptAt(next: Transicion, now: Date, attempt: number, timing: SiiTiming): Date | null {
  if (isFinal(next.estado)) return null
  if (next.espera === 'ninguna') return now
  return new Date(now.getTime() + backoffMs(attempt, timing[next.espera]))
}

/**
 * What the submission job takes (DESIGN §6 rows 1–2): `enviando`, and `firmado` with auto_send; `firmado` with
 * auto_send false stays until `POST /dte/{id}/enviar`. db/dte-store.ts findDueForSubmission says the same in SQL.
 */
export function isTakenBySubmission(estado: EstadoDte, autoSend: boolean): boolean {
  return estado === 'enviando' || (estado === 'firmado' && autoSend)
}

/** firmado → enviando: `POST /dte/{id}/enviar`, or the submission job taking a DTE with auto_send. Null: not sendable. */
export function onSubmissionRequested(estado: EstadoDte): 'enviando' | null {
  return estado === 'firmado' ? 'enviando' : null
}

/** enviando → … by the upload's outcome (DESIGN §6 rows 3–6; the SII's STATUS codes are classified in sii/client/codes.ts). */
export function afterUpload(outcome: UploadOutcome): Transicion {
  switch (outcome.kind) {
    case 'received':
    case 'already_received':
      // STATUS 0 with a track id, or 99 / RPT "already received": the SII holds it; ask about it at once.
      return { estado: 'procesando', espera: 'ninguna' }
    case 'refused':
      // STATUS 2, 7, 8: the file itself is refused, final.
      return { estado: 'rechazado', espera: 'ninguna' }
    case 'not_authorized':
      // STATUS 1 or 6: someone must act at the SII; retried, capped at 6 h.
      return { estado: 'enviando', espera: 'notAuthorized' }
    case 'retry':
      // STATUS 3, 5, 9, a timeout, HTML, an empty or 5xx answer, the network: retried, never dropped.
      return { estado: 'enviando', espera: 'submit' }
  }
}

/** procesando → … by the envelope's status (DESIGN §6 rows 7–9); `line` is this DTE's line of the envelope's detail. */
export function afterEnvioStatus(envio: EnvioOutcome, line: Pick<EnvioDocumento, 'estado'> | undefined): Transicion {
  switch (envio.kind) {
    case 'retry':
    case 'pending':
      // REC, SOK, FOK, PRD, CRT…, or no answer: still with the SII.
      return { estado: 'procesando', espera: 'track' }
    case 'rejected':
      // RPT is not a refusal of this DTE: the SII already holds it in an earlier envelope (see isRepeatedEnvio).
      if (isRepeatedEnvio(envio)) return { estado: 'procesando', espera: 'ninguna' }
      // RSC, RCT, RFR, RCH, RCO, VOF…: the whole envelope refused.
      return { estado: 'rechazado', espera: 'ninguna' }
    case 'processed':
      return { estado: estadoFromProcessedEnvio(envio, line), espera: 'ninguna' }
  }
}

/**
 * RPT, "envío repetido" (docs/sii-protocol.md §6.5, §7.3): the SII took these bytes again under a new track id and
 * refused the copy because it already holds the envelope, e.g. when the first upload's answer was lost. DESIGN §6 reads it
 * as "99 / RPT already received": the documents are in that earlier envelope, whose track id Timbre may never have
 * heard, so only the document's status can tell (getEstDte), as for STATUS 99 without a track id.
 */
export function isRepeatedEnvio(envio: EnvioOutcome): boolean {
  return envio.kind === 'rejected' && envio.estado === 'RPT'
}

/**
 * procesando without a track id (STATUS 99 that named none): only the document's status can tell (DESIGN §6 "resolve by
 * getEstDte"). DOK is final, con_reparos when its detail lists reparos; anything else, ask again later.
 */
export function afterDocumentStatus(doc: DteStatusOutcome): Transicion {
  if (doc.kind === 'retry' || doc.estado !== 'DOK') return { estado: 'procesando', espera: 'track' }
  return { estado: doc.motivos.some(isReparo) ? 'con_reparos' : 'aceptado', espera: 'ninguna' }
}

/**
 * The final estado of one document of a processed envelope (EPR): its own line of the detail when the SII gives one,
 * else the envelope's counters, which with one DTE per envelope describe that DTE (DESIGN §6).
 */
export function estadoFromProcessedEnvio(
  counters: { readonly rechazados: number; readonly reparos: number },
  detalle: { readonly estado: string } | undefined,
): EstadoFinal {
  if (detalle) {
    if (detalle.estado === 'RCH') return 'rechazado'
    if (detalle.estado === 'RPR' || detalle.estado === 'RLV') return 'con_reparos'
    if (detalle.estado === 'DOK') return 'aceptado'
  }
  if (counters.rechazados > 0) return 'rechazado'
  if (counters.reparos > 0) return 'con_reparos'
  return 'aceptado'
}
