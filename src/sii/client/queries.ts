// What the SOAP status queries say, mapped to outcomes: QueryEstUp.getEstUp for an envelope (docs/sii-protocol.md §6.5) and
// QueryEstDte.getEstDte for one document (§6.6). Pure functions over the parsed SII:RESPUESTA, so the SII's literal
// answers can pin them in tests.
import type { DteStatusOutcome, EnvioDocumento, EnvioEstadistica, EnvioOutcome, MotivoSii } from '../../domain/sii-respuestas'
import { detalleMotivos } from '../../domain/sii-respuestas'
import { ENVIO_ESTADOS, TOKEN_INVALID_ESTADOS, TOKEN_INVALID_FAULT } from './codes'
import type { Respuesta, SoapOutcome } from './soap'

export interface QueryTokenRejected {
  readonly kind: 'token_invalid'
  readonly estado: string
  readonly raw: string
}

/** getEstUp's answer → outcome; ESTADO 001/002/003 → the token is invalid (§6.5). */
export function envioOutcome(reply: SoapOutcome): EnvioOutcome | QueryTokenRejected {
  if (reply.kind !== 'respuesta') return unanswered(reply)
  const { hdr } = reply.respuesta
  const raw = reply.raw
  const estado = hdr.ESTADO ?? ''
  const glosa = hdr.GLOSA || null
  const numAtencion = hdr.NUM_ATENCION || null
  if (estado === '') return { kind: 'retry', reason: 'getEstUp answer without ESTADO', raw }
  if (TOKEN_INVALID_ESTADOS.has(estado)) return { kind: 'token_invalid', estado, raw }
  // DSPY: -11 with ERR_CODE 2 is "process error, not ready yet": poll again (§6.5).
  if (estado === '-11' && hdr.ERR_CODE === '2') return { kind: 'pending', estado, glosa, numAtencion, raw }
  if (/^-?\d+$/.test(estado)) return { kind: 'retry', reason: `ESTADO ${estado}: ${glosa ?? hdr.GLOSA_ERR ?? 'sin glosa'}`, raw }
  const known = ENVIO_ESTADOS[estado]
  if (known?.kind === 'rejected') return { kind: 'rejected', estado, glosa, numAtencion, motivos: envioMotivos(estado, glosa), detalle: [], raw }
  if (known?.kind === 'processed') return { ...processed(estado, glosa, estadisticaOf(reply.respuesta), raw), numAtencion }
  // REC, SOK, CRT, FOK, PDR/PRD, and any code not in the table: still in the SII's hands, ask again later.
  return { kind: 'pending', estado, glosa, numAtencion, raw }
}

/**
 * Why an envelope was rejected, from its ESTADO and GLOSA: getEstUp says no more (§6.5). A GLOSA holding the SII's
 * detail lines (`(CRT-3-14) …`) gives one reason per line; otherwise the ESTADO is the code and the GLOSA (or the
 * code's meaning) its text.
 */
export function envioMotivos(estado: string, glosa: string | null): MotivoSii[] {
  const lines = detalleMotivos(glosa, 'estado_envio')
  if (lines.length > 0) return lines
  return [{ codigo: estado, glosa: glosa ?? ENVIO_ESTADOS[estado]?.glosa ?? estado, detalle: null, nivel: null, fuente: 'estado_envio' }]
}

/** EPR's counters: RESP_BODY repeats TIPO_DOCTO, INFORMADOS, ACEPTADOS, RECHAZADOS, REPAROS per type, unwrapped (§6.5). */
export function estadisticaOf(respuesta: Respuesta): EnvioEstadistica[] {
  const groups: EnvioEstadistica[] = []
  let current: { tipo: number; informados: number; aceptados: number; rechazados: number; reparos: number } | null = null
  for (const { name, text } of respuesta.body) {
    const n = /^\d+$/.test(text) ? Number(text) : 0
    if (name === 'TIPO_DOCTO') {
      current = { tipo: n, informados: 0, aceptados: 0, rechazados: 0, reparos: 0 }
      groups.push(current)
    } else if (current !== null && COUNTERS[name] !== undefined) {
      current[COUNTERS[name]] = n
    }
  }
  return groups
}

const COUNTERS: Readonly<Record<string, 'informados' | 'aceptados' | 'rechazados' | 'reparos'>> = {
  INFORMADOS: 'informados', ACEPTADOS: 'aceptados', RECHAZADOS: 'rechazados', REPAROS: 'reparos',
}

/** The `processed` outcome: counters summed over every type of the envelope. */
export function processed(
  estado: string, glosa: string | null, estadistica: readonly EnvioEstadistica[], raw: string,
  detalle: EnvioDocumento[] = [],
): Extract<EnvioOutcome, { kind: 'processed' }> {
  const sum = (k: 'informados' | 'aceptados' | 'rechazados' | 'reparos'): number => estadistica.reduce((acc, g) => acc + g[k], 0)
  return {
    kind: 'processed', estado, glosa, informados: sum('informados'), aceptados: sum('aceptados'), rechazados: sum('rechazados'),
    reparos: sum('reparos'), estadistica: [...estadistica], detalle, raw,
  }
}

/** getEstDte's answer → outcome (§6.6). Negative ESTADOs are the service failing, not a state of the document. */
export function dteStatusOutcome(reply: SoapOutcome): DteStatusOutcome | QueryTokenRejected {
  if (reply.kind !== 'respuesta') return unanswered(reply)
  const { hdr } = reply.respuesta
  const raw = reply.raw
  const estado = hdr.ESTADO ?? ''
  if (estado === '') return { kind: 'retry', reason: 'getEstDte answer without ESTADO', raw }
  if (TOKEN_INVALID_ESTADOS.has(estado)) return { kind: 'token_invalid', estado, raw }
  if (/^-\d+$/.test(estado)) return { kind: 'retry', reason: `ESTADO ${estado}: ${hdr.GLOSA_ESTADO || hdr.GLOSA_ERR || hdr.GLOSA || 'sin glosa'}`, raw }
  const glosaEstado = hdr.GLOSA_ESTADO || null
  const errCode = hdr.ERR_CODE || null
  const glosaErr = hdr.GLOSA_ERR || null
  return { kind: 'status', estado, glosaEstado, errCode, glosaErr, numAtencion: hdr.NUM_ATENCION || null, motivos: dteMotivos(estado, glosaEstado, errCode, glosaErr), raw }
}

/**
 * Why, from a document status: the detail lines GLOSA_ERR holds (`(RCV-3-1) …`, the REVISIONDTE form), else, for any
 * ESTADO but DOK, the ESTADO with its GLOSA_ESTADO and GLOSA_ERR (DNK: which data differ; FAU: not received). DOK
 * without detail is no reason at all.
 */
export function dteMotivos(estado: string, glosaEstado: string | null, errCode: string | null, glosaErr: string | null): MotivoSii[] {
  const lines = detalleMotivos(glosaErr, 'estado_dte')
  if (lines.length > 0) return lines
  if (estado === 'DOK') return []
  const detalle = [errCode === null ? null : `ERR_CODE ${errCode}`, glosaErr].filter((d) => d !== null).join(': ') || null
  return [{ codigo: estado, glosa: glosaEstado ?? glosaErr ?? estado, detalle, nivel: null, fuente: 'estado_dte' }]
}

/** A SOAP fault: "TOKEN invalido" asks for a new token (§6.3, §6.7); any other is a passing fault. */
/** A reply without an SII:RESPUESTA, for either query: a transport failure is retried, a fault may name the token. */
function unanswered(reply: Exclude<SoapOutcome, { kind: 'respuesta' }>): { kind: 'retry'; reason: string; raw?: string } | QueryTokenRejected {
  if (reply.kind === 'fault') return faultOutcome(reply.faultString, reply.raw)
  return reply.raw === undefined ? { kind: 'retry', reason: reply.reason } : { kind: 'retry', reason: reply.reason, raw: reply.raw }
}

function faultOutcome(faultString: string, raw: string): { kind: 'retry'; reason: string; raw: string } | QueryTokenRejected {
  if (TOKEN_INVALID_FAULT.test(faultString)) return { kind: 'token_invalid', estado: 'FAULT', raw }
  return { kind: 'retry', reason: `SOAP fault: ${faultString}`, raw }
}
