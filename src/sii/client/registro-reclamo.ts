// RegistroReclamoDTE (docs/sii-protocol.md §6.7): the receiver's acceptance or claim of a 33, 34 or 43 registered at
// the SII (ingresarAceptacionReclamoDoc), the events registered on a document (listarEventosHistDoc) and the instant
// the SII received it (consultarFechaRecepcionSii). A JAX-WS service, RPC/literal, `SOAPAction: ""`, the DTEWS token
// in `Cookie: TOKEN=`. Its answers are structured (`return` with codResp, descResp, listaEventosDoc), not the escaped
// SII:RESPUESTA of DTEWS. The mapping to outcomes is pure, so the SII's literal answers pin it in tests.
import type { Accion } from '../../domain/intercambio'
import { normalizeRut } from '../../domain/rut'
import type { EventoReceptor, EventosOutcome, FechaRecepcionOutcome, RegistroDoc, RegistroOutcome } from '../../domain/sii-respuestas'
import { childElements, textOf } from '../../xml/latin1'
import { descRespOf, parseFechaSii, REGISTRO_RECLAMO_NS, type RegistroReclamoOperation } from '../registro-reclamo-protocol'
import { TOKEN_INVALID_FAULT } from './codes'
import { exchange } from './http'
import { literalEnvelope, literalOutcome, type LiteralOutcome, type SoapParam } from './soap'
import { rutParts } from './upload'

/** The service refused the token: a SOAP fault "Error de Autenticacion: TOKEN invalido" (ODOO), or HTTP 401 ([3P]). */
export interface RegistroTokenRejected {
  readonly kind: 'token_invalid'
  readonly raw: string
}

export type RegistroReply = LiteralOutcome | RegistroTokenRejected

/** listarEventosHistDoc codes that carry the events: 15 a list, 16 none, 8 the list of a document past its 8 days (LD). */
const EVENTOS_CODES: ReadonlySet<number> = new Set([15, 16, 8])
/** codResp -1: "Error Interno … debe reintentar enviar la transacción más tarde" (the manual): the SII failing. */
const COD_RESP_RETRY = -1
/** Timbre's code for an empty consultarFechaRecepcionSii answer: the one the other operations use for "not received". */
export const COD_RESP_NO_RECIBIDO = 18

/**
 * The parts, in the WSDL's parameterOrder: rutEmisor (the body, digits), dvEmisor (uppercase K), tipoDoc, folio, and
 * accionDoc for ingresarAceptacionReclamoDoc. A malformed RUT, type or folio is the caller's bug and throws.
 */
export function registroParams(doc: RegistroDoc, accion?: Accion): SoapParam[] {
  const emisor = rutParts(doc.rutEmisor, 'doc.rutEmisor')
  if (!Number.isInteger(doc.tipoDte) || doc.tipoDte <= 0) throw new Error(`SII client: tipoDte must be a positive integer: ${doc.tipoDte}`)
  if (!Number.isInteger(doc.folio) || doc.folio <= 0) throw new Error(`SII client: folio must be a positive integer: ${doc.folio}`)
  const params: SoapParam[] = [['rutEmisor', emisor.body], ['dvEmisor', emisor.dv.toUpperCase()], ['tipoDoc', String(doc.tipoDte)], ['folio', String(doc.folio)]]
  if (accion !== undefined) params.push(['accionDoc', accion])
  return params
}

export interface RegistroCall {
  readonly fetch: typeof fetch
  readonly timeoutMs: number
  readonly url: string
  readonly token: string
  readonly operation: RegistroReclamoOperation
  readonly params: readonly SoapParam[]
}

/** One request; HTTP 401 is a rejected token ([3P]), anything else is read by `literalOutcome`. */
export async function callRegistro(call: RegistroCall): Promise<RegistroReply> {
  const res = await exchange(call.fetch, {
    method: 'POST',
    url: call.url,
    headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '""', Accept: 'text/xml', Cookie: `TOKEN=${call.token}` },
    body: literalEnvelope(REGISTRO_RECLAMO_NS, call.operation, call.params),
  }, call.timeoutMs)
  if (res.kind === 'response' && res.status === 401) return { kind: 'token_invalid', raw: res.text }
  return literalOutcome(res, call.operation)
}

/** ingresarAceptacionReclamoDoc: 0 registered; -1 the SII failing (retry); any other code a refusal, final. */
export function registroOutcome(reply: RegistroReply): RegistroOutcome | RegistroTokenRejected {
  const answer = respuestaOf(reply, 'ingresarAceptacionReclamoDoc')
  if (answer.kind !== 'respuesta') return answer
  const { codResp, descResp } = answer
  if (codResp === 0) return { kind: 'registrada', codResp: 0, descResp }
  if (codResp === COD_RESP_RETRY) return { kind: 'retry', reason: `codResp -1: ${descResp}` }
  return { kind: 'rechazada', codResp, descResp }
}

/** listarEventosHistDoc: 15 (and 8) the events, 16 none ([]); -1 retry; any other code a refusal. */
export function eventosOutcome(reply: RegistroReply): EventosOutcome | RegistroTokenRejected {
  const answer = respuestaOf(reply, 'listarEventosHistDoc')
  if (answer.kind !== 'respuesta') return answer
  const { codResp, descResp } = answer
  if (codResp === COD_RESP_RETRY) return { kind: 'retry', reason: `codResp -1: ${descResp}` }
  if (!EVENTOS_CODES.has(codResp)) return { kind: 'rechazada', codResp, descResp }
  const eventos: EventoReceptor[] = []
  for (const element of childElements(answer.ret).filter((e) => e.localName === 'listaEventosDoc' && childElements(e).length > 0)) {
    const evento = eventoOf(element)
    if (typeof evento === 'string') return { kind: 'retry', reason: evento }
    eventos.push(evento)
  }
  return { kind: 'eventos', eventos }
}

/**
 * consultarFechaRecepcionSii answers a bare string, no code (§6.7): `dd-mm-yyyy hh:mm:ss`, or nothing for a document
 * the SII has not received (clients test for the empty answer: LD, and .NET clients). Empty or absent → `rechazada`
 * with 18 "Documento no ha sido recibido"; any other text is not understood → `retry` with it.
 */
export function fechaRecepcionOutcome(reply: RegistroReply): FechaRecepcionOutcome | RegistroTokenRejected {
  const ret = returnOf(reply)
  if (ret.kind !== 'return') return ret
  const text = ret.element === null ? '' : textOf(ret.element).trim()
  if (text === '') return { kind: 'rechazada', codResp: COD_RESP_NO_RECIBIDO, descResp: descRespOf(COD_RESP_NO_RECIBIDO) }
  const fecha = parseFechaSii(text)
  return fecha === null ? { kind: 'retry', reason: `consultarFechaRecepcionSii answered "${text.slice(0, 80)}", not a dd-mm-yyyy hh:mm:ss date` } : { kind: 'fecha', fecha }
}

type Unanswered = { readonly kind: 'retry'; readonly reason: string } | RegistroTokenRejected

/**
 * The `return` element of a response (null when the server left it out, as JAX-WS does for a null), or why there is
 * none: the fault "Error de Autenticacion: TOKEN invalido" (ODOO) is a rejected token, any other fault passing.
 */
function returnOf(reply: RegistroReply): { readonly kind: 'return'; readonly element: Element | null } | Unanswered {
  if (reply.kind === 'token_invalid') return reply
  if (reply.kind === 'failure') return { kind: 'retry', reason: reply.reason }
  if (reply.kind === 'fault') {
    return TOKEN_INVALID_FAULT.test(reply.faultString) ? { kind: 'token_invalid', raw: reply.raw } : { kind: 'retry', reason: `SOAP fault: ${reply.faultString}` }
  }
  return { kind: 'return', element: childElements(reply.element).find((e) => e.localName === 'return') ?? null }
}

/** `return` read as respuestaTo: codResp (an int) and descResp; the manual's text stands in for an empty descResp. */
function respuestaOf(
  reply: RegistroReply, operation: RegistroReclamoOperation,
): { readonly kind: 'respuesta'; readonly codResp: number; readonly descResp: string; readonly ret: Element } | Unanswered {
  const ret = returnOf(reply)
  if (ret.kind !== 'return') return ret
  if (ret.element === null) return { kind: 'retry', reason: `${operation} answer without return` }
  const field = (name: string): string => {
    const e = childElements(ret.element as Element).find((c) => c.localName === name)
    return e === undefined ? '' : textOf(e).trim()
  }
  const code = field('codResp')
  if (!/^-?\d+$/.test(code)) return { kind: 'retry', reason: `${operation} answer without codResp` }
  const codResp = Number(code)
  return { kind: 'respuesta', codResp, descResp: field('descResp') || descRespOf(codResp) || `codResp ${codResp}`, ret: ret.element }
}

/** One DteEventoDocTo; a string says why it cannot be read (a fechaEvento that is no date). */
function eventoOf(element: Element): EventoReceptor | string {
  const field = (name: string): string => {
    const e = childElements(element).find((c) => c.localName === name)
    return e === undefined ? '' : textOf(e).trim()
  }
  const fecha = parseFechaSii(field('fechaEvento'))
  if (fecha === null) return `listarEventosHistDoc: fechaEvento "${field('fechaEvento').slice(0, 40)}" is not dd-mm-yyyy hh:mm:ss`
  const rut = field('rutResponsable')
  const dv = field('dvResponsable')
  return {
    accion: field('codEvento'),
    descripcion: field('descEvento'),
    fecha,
    rutResponsable: rut === '' ? null : normalizeRut(`${rut}-${dv}`),
  }
}
