// What an uploaded envelope reports as time passes: a pure function of its upload time and "now" (the injected
// clock), so tests move time instead of sleeping (STYLE §5). docs/sii-protocol.md §6.5: REC → SOK → CRT → FOK → PRD → EPR, or a
// rejection at the stage that failed (RSC where SOK would be, RCT at CRT, RFR at FOK).
import type { EnvioRow } from './store'

const LADDER = ['REC', 'SOK', 'CRT', 'FOK', 'PRD'] as const
const FINAL_STEP = LADDER.length

/** The step at which each rejection shows: the stage that would have said it passed (docs/sii-protocol.md §6.5 order). */
const REJECTION_STEP: Readonly<Record<string, number>> = { RSC: 1, RCT: 2, RFR: 3 }

/** Glosas of the envelope states, as the SII words them in getEstUp's GLOSA (docs/sii-protocol.md §6.5). */
export const ESTADO_GLOSA: Readonly<Record<string, string>> = {
  REC: 'Envio Recibido Conforme',
  SOK: 'Schema Validado',
  CRT: 'Caratula OK',
  FOK: 'Firma de Envio Validada',
  PRD: 'Envio en Proceso',
  EPR: 'Envio Procesado',
  RSC: 'Rechazado por Error en Schema',
  RCT: 'Rechazado por Error en Caratula',
  RFR: 'Rechazado por Error en Firma',
}

export interface EnvioState {
  readonly estado: string
  readonly glosa: string
  /** True once the envelope's outcome is out: EPR or its rejection. Documents become visible to getEstDte then. */
  readonly isFinal: boolean
}

/**
 * The state at `now`: the delay fixed at upload is split into five equal steps (REC, SOK, CRT, FOK, PRD), then the
 * final state. A rejection replaces the ladder from its stage on. A delay of 0 answers the final state at once.
 */
export function envioState(envio: Pick<EnvioRow, 'received_at' | 'delay_ms' | 'rejection'>, now: Date): EnvioState {
  const elapsed = now.getTime() - envio.received_at
  const step = envio.delay_ms <= 0 ? FINAL_STEP : Math.max(0, Math.min(FINAL_STEP, Math.floor((elapsed * FINAL_STEP) / envio.delay_ms)))
  const rejection = envio.rejection
  if (rejection !== null && step >= (REJECTION_STEP[rejection.estado] ?? FINAL_STEP)) {
    return { estado: rejection.estado, glosa: rejection.glosa, isFinal: true }
  }
  if (step >= FINAL_STEP) return { estado: 'EPR', glosa: ESTADO_GLOSA.EPR ?? '', isFinal: true }
  const estado = LADDER[step] ?? 'REC'
  return { estado, glosa: ESTADO_GLOSA[estado] ?? '', isFinal: false }
}
