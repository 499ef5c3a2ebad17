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
