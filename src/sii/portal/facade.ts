// The RCV's data service (consdcvinternetui facadeService, research §2.2): one JSON POST per operation, inside a
// portal session, and the deferred download's file. Sorts every answer into data to read or a PortalFailure: no
// answer (sin_conexion), the session gone (sesion_expirada), a refusal (sii_rechazo), or something unreadable
// (respuesta_invalida). What the data means is the domain's (rcv.ts, rcv-csv.ts) and the reader's (rcv-read.ts).
import { gunzipSync } from 'node:zlib'
import { RESPUESTAS_RCV } from '../../domain/rcv'
import { decodeBody, snippet } from '../client/http'
import { FACADE_NAMESPACE, FACADE_OPS, PORTAL_PATHS, SESSION_INVALID_TEXT, type FacadeRequest } from '../portal-protocol'
import { PortalFailure, respuestaInvalida, sinConexion } from './failure'
import { withCookies, type PortalSession } from './session'
import { saysPhrase } from './text'
import type { PortalReply, PortalTransport } from './transport'

export interface FacadeDeps {
  readonly transport: PortalTransport
  /** `https://www4.sii.cl`, or the origin target. */
  readonly rcvOrigin: string
  readonly session: PortalSession
  readonly newTransactionId: () => string
}

type Response = Extract<PortalReply, { kind: 'response' }>

/**
 * POSTs `op` with `data` and returns the parsed JSON answer. `where` names the request in the accountant's words
 * ("getResumen COMPRA REGISTRO"). The session's TOKEN goes both as cookie and as metaData.conversationId (X-rcv3:
 * "El token no es valido" otherwise).
 */
export async function callFacade(deps: FacadeDeps, op: string, data: FacadeRequest['data'], where: string): Promise<unknown> {
  const request: FacadeRequest = {
    metaData: { namespace: FACADE_NAMESPACE + op, conversationId: deps.session.token, transactionId: deps.newTransactionId(), page: null },
    data,
  }
  const reply = await deps.transport.send({
    method: 'POST',
    url: `${deps.rcvOrigin}${PORTAL_PATHS.facade}${op}`,
    headers: withCookies(deps.session.cookies, { 'Content-Type': 'application/json', Accept: 'application/json, text/plain, */*' }),
    body: JSON.stringify(request),
  })
  const res = answered(reply, where)
  const text = decodeBody(res.bytes, res.headers.get('content-type') ?? '')
  let answer: unknown
  try {
    answer = JSON.parse(text)
  } catch {
    // The excerpt goes to the accountant and the log: a page that echoes the session must not carry it there.
    throw respuestaInvalida(where, `la respuesta no es JSON (HTTP ${res.status}: «${snippet(text.replaceAll(deps.session.token, '[sesión]'), 80)}»)`)
  }
  if (isSessionInvalid(answer)) throw sesionExpirada(where)
  return answer
}

const MAX_CSV_BYTES = 512 * 1024 * 1024

/** GET obtenerArchivoBLOB/<idSolicitud>: the deferred download's CSV, gunzipped, as text. */
export async function fetchArchivoDiferido(deps: FacadeDeps, idSolicitud: string, where: string): Promise<string> {
  const reply = await deps.transport.send({
    method: 'GET',
    url: `${deps.rcvOrigin}${PORTAL_PATHS.facade}${FACADE_OPS.archivoDiferida}/${encodeURIComponent(idSolicitud)}`,
    headers: withCookies(deps.session.cookies, {}),
  })
  const res = answered(reply, where)
  if (res.status !== 200) throw respuestaInvalida(where, `el archivo no llegó (HTTP ${res.status})`)
  // A `.csv.gz` (research §2.2). Served with Content-Encoding: gzip, fetch has already inflated it: no gzip magic then.
  const isGzip = res.bytes[0] === 0x1f && res.bytes[1] === 0x8b
  let bytes: Uint8Array
  try {
    // Bounded: a gzip that inflates past it is no RCV file (a month of a large company is tens of MB).
    bytes = isGzip ? gunzipSync(res.bytes, { maxOutputLength: MAX_CSV_BYTES }) : res.bytes
  } catch {
    throw respuestaInvalida(where, 'el archivo comprimido está dañado o es demasiado grande')
  }
  // UTF-8 as cl-sii reads the SII's downloads (docs/decisions/rcv.md "Encoding"); a charset the server names wins.
  return decodeBody(bytes, res.headers.get('content-type') ?? '')
}

/** A reply that carries an answer: not a network failure, a 5xx or a redirect (the portal's login page). */
function answered(reply: PortalReply, where: string): Response {
  if (reply.kind === 'failure') throw reply.tooLarge ? respuestaInvalida(where, 'la respuesta es demasiado grande') : sinConexion(where, reply.reason)
  if (reply.status >= 500) throw sinConexion(where, `HTTP ${reply.status}`)
  if (reply.status >= 300 && reply.status < 400) {
    throw respuestaInvalida(where, `una redirección (HTTP ${reply.status}) en lugar de datos`)
  }
  return reply
}

/** codRespuesta 99 with the SII's words for a conversationId that is no session (portal-protocol.ts SESSION_INVALID_TEXT). */
function isSessionInvalid(answer: unknown): boolean {
  const estado = field(answer, 'respEstado')
  const mensaje = field(estado, 'msgeRespuesta')
  return field(estado, 'codRespuesta') === 99 && typeof mensaje === 'string' && saysPhrase(mensaje, SESSION_INVALID_TEXT)
}

export function sesionExpirada(where: string): PortalFailure {
  return new PortalFailure('sesion_expirada',
    `La sesión en el SII terminó antes de completar la lectura del RCV (${where}). Vuelva a sincronizar; si se repite, revise que nadie más use el certificado de la empresa en el sitio del SII al mismo tiempo.`,
    `${where}: session invalid (codRespuesta 99)`)
}

/** The answer's refusal code: an integer codRespuesta other than 0 (success) and 3 (no data), else null. */
export function refusalCode(answer: unknown): number | null {
  const codigo = field(field(answer, 'respEstado'), 'codRespuesta')
  return typeof codigo === 'number' && Number.isInteger(codigo) && codigo !== 0 && codigo !== 3 ? codigo : null
}

/**
 * The `data` object of an answer that must succeed (the deferred download's requests): a refusal is sii_rechazo with
 * the SII's words, an answer with no data object is unreadable.
 */
export function dataOf(answer: unknown, where: string): Readonly<Record<string, unknown>> {
  const codigo = refusalCode(answer)
  if (codigo !== null) throw siiRechazo(where, `${RESPUESTAS_RCV[codigo] ?? `Código de respuesta desconocido: ${codigo}.`}${siiWords(answer)}`)
  const codRespuesta = field(field(answer, 'respEstado'), 'codRespuesta')
  if (codRespuesta !== 0) throw respuestaInvalida(where, `respEstado.codRespuesta es ${JSON.stringify(codRespuesta) ?? 'nada'}, se esperaba 0`)
  const data = field(answer, 'data')
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw respuestaInvalida(where, 'la respuesta no trae el objeto data')
  return data as Readonly<Record<string, unknown>>
}

export function siiRechazo(where: string, palabras: string): PortalFailure {
  return new PortalFailure('sii_rechazo', `El SII rechazó la consulta ${where}: ${palabras}`, `${where}: refused: ${palabras.slice(0, 200)}`)
}

function siiWords(answer: unknown): string {
  const texto = field(field(answer, 'respEstado'), 'msgeRespuesta')
  return typeof texto === 'string' && texto !== '' ? ` ${texto.slice(0, 200)}` : ''
}

/** An own property of an object, or undefined: the answer is hostile input. */
export function field(o: unknown, key: string): unknown {
  return typeof o === 'object' && o !== null && !Array.isArray(o) && Object.hasOwn(o, key) ? (o as Record<string, unknown>)[key] : undefined
}
