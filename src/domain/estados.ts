// DTE states after `firmado` (DESIGN §6) and the back-off of the SII jobs. Pure.

export const ESTADOS_FINALES = ['aceptado', 'rechazado', 'con_reparos'] as const
export type EstadoFinal = (typeof ESTADOS_FINALES)[number]

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

/** The demo company is always served by the simulator (DESIGN §10), so it keeps the simulator's pace whatever the target. */
export function siiTimingFor(isDemo: boolean, configured: SiiTiming): SiiTiming {
  return isDemo ? SIMULATOR_TIMING : configured
}

export function backoffMs(attempt: number, policy: { readonly firstMs: number; readonly capMs: number }): number {
  const exponent = Math.max(0, Math.min(attempt - 1, 30))
  return Math.min(policy.capMs, policy.firstMs * 2 ** exponent)
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

/** The SII answer a reason came in (issue 13): the upload, the envelope's status, the document's status. */
export const OPERACIONES_SII = ['upload', 'estado_envio', 'estado_dte'] as const
export type OperacionSii = (typeof OPERACIONES_SII)[number]

/**
 * One reason the SII gave for a document, as the SII wrote it: `codigo` is its code (`DTE-3-101`, the upload's STATUS
 * `7`, an ESTADO `RFR` or `FAU`), `glosa` its text, `detalle` what the SII added (a schema message, the REST error's
 * `detalle`), `nivel` the SII's level when it gives one (3 rejects; 2 and 1 are reparos, docs/sii-protocol.md §7.3).
 */
export interface MotivoSii {
  readonly codigo: string
  readonly glosa: string
  readonly detalle: string | null
  readonly nivel: number | null
  readonly fuente: OperacionSii
}

/** A reparo (an observation on an accepted document) rather than a rejection: the SII's nivel below 3. */
export function isReparo(motivo: Pick<MotivoSii, 'nivel'>): boolean {
  return motivo.nivel !== null && motivo.nivel < 3
}

/** The same reason said twice (the envelope's detail and the document's status) is kept once, first one wins. */
export function uniqueMotivos(motivos: readonly MotivoSii[]): MotivoSii[] {
  const seen = new Set<string>()
  return motivos.filter((m) => {
    const key = `${m.codigo}\u0000${m.glosa}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/** `tracking.glosa_sii` and `sii_status.glosa` from the reasons: "DTE-3-101: Folio … ; RCV-2-2: …"; null when none. */
export function glosaDeMotivos(motivos: readonly MotivoSii[]): string | null {
  return motivos.length === 0 ? null : motivos.map((m) => `${m.codigo}: ${m.glosa}`).join('; ')
}
