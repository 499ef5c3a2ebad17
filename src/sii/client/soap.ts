// The DTEWS SOAP services (docs/sii-protocol.md §6.2): Axis 1.x, RPC style, SOAP 1.1, `SOAPAction: ""`, xsd:string parameters in
// the WSDL's order. The answer is one string holding an XML document (`SII:RESPUESTA`) inside `<…Return>`: its text is
// taken entity-decoded and parsed again. The SII's own answers, its faults and its outages are told apart here.
// RegistroReclamoDTE (§6.7) is another server (JAX-WS, RPC/literal): `literalEnvelope` and `literalOutcome` speak it.
import { childElements, escapeXmlText, parseXml, textOf } from '../../xml/latin1'
import { exchange, passingFault, snippet, type HttpResult } from './http'

const SOAPENV = 'http://schemas.xmlsoap.org/soap/envelope/'
const SOAP_ENCODING = 'http://schemas.xmlsoap.org/soap/encoding/'
/** Clients generated from today's WSDLs use it; the server dispatches on the local name (§6.2). */
const OPERATION_NS = 'http://DefaultNamespace'

export type SoapParam = readonly [name: string, value: string]

/** The RPC request of §6.2's illustration: one operation element, each parameter typed xsd:string. */
export function soapEnvelope(operation: string, params: readonly SoapParam[]): string {
  const args = params.map(([name, value]) => `<${name} xsi:type="xsd:string">${escapeXmlText(value)}</${name}>`).join('')
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<soapenv:Envelope xmlns:soapenv="${SOAPENV}" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
    `<soapenv:Body><m:${operation} xmlns:m="${OPERATION_NS}" soapenv:encodingStyle="${SOAP_ENCODING}">${args}</m:${operation}>` +
    '</soapenv:Body></soapenv:Envelope>'
  )
}

/** `SII:RESPUESTA`: RESP_HDR's fields by name, RESP_BODY's children in order (getEstUp repeats groups, §6.5). */
export interface Respuesta {
  readonly hdr: Readonly<Record<string, string>>
  readonly body: ReadonlyArray<{ readonly name: string; readonly text: string }>
}

/** Parses the inner document; the order of RESP_HDR/RESP_BODY varies, so both are found by name (§6.2). */
export function parseRespuesta(inner: string): Respuesta {
  const root = parseXml(inner.trim()).documentElement
  if (root.localName !== 'RESPUESTA') throw new SyntaxError(`expected SII:RESPUESTA, got ${root.localName}`)
  const section = (name: string): Element | undefined => childElements(root).find((e) => e.localName === name)
  const hdrElement = section('RESP_HDR')
  if (hdrElement === undefined) throw new SyntaxError('SII:RESPUESTA without RESP_HDR')
  const hdr: Record<string, string> = {}
  for (const e of childElements(hdrElement)) hdr[e.localName] ??= textOf(e).trim()
  const bodyElement = section('RESP_BODY')
  const body = bodyElement === undefined ? [] : childElements(bodyElement).map((e) => ({ name: e.localName, text: textOf(e).trim() }))
  return { hdr, body }
}

export type SoapReply =
  | { readonly kind: 'respuesta'; readonly respuesta: Respuesta; readonly inner: string }
  | { readonly kind: 'fault'; readonly faultString: string }
  | { readonly kind: 'malformed'; readonly reason: string }

/** Reads a SOAP response body: a Fault, or the `<operation>Return` string parsed as SII:RESPUESTA. */
export function parseSoapReply(text: string, operation: string): SoapReply {
  let envelope: Element
  try {
    envelope = parseXml(text.trim()).documentElement
  } catch (err) {
    return { kind: 'malformed', reason: `SOAP envelope is not XML: ${errorMessage(err)}` }
  }
  const fault = findByLocalName(envelope, (name) => name === 'Fault')
  if (fault !== null) {
    const faultString = childElements(fault).find((e) => e.localName === 'faultstring')
    return { kind: 'fault', faultString: snippet(textOf(faultString ?? fault), 300) }
  }
  const ret = findByLocalName(envelope, (name) => name === `${operation}Return`) ?? findByLocalName(envelope, (name) => name.endsWith('Return'))
  if (ret === null) return { kind: 'malformed', reason: `SOAP answer without ${operation}Return` }
  const inner = textOf(ret).trim()
  try {
    return { kind: 'respuesta', respuesta: parseRespuesta(inner), inner }
  } catch (err) {
    return { kind: 'malformed', reason: `${operation}Return is not an SII:RESPUESTA: ${errorMessage(err)}` }
  }
}

export type SoapOutcome =
  | { readonly kind: 'respuesta'; readonly respuesta: Respuesta; readonly raw: string }
  | { readonly kind: 'fault'; readonly faultString: string; readonly raw: string }
  | { readonly kind: 'failure'; readonly reason: string; readonly raw?: string }

export interface SoapCall {
  readonly fetch: typeof fetch
  readonly timeoutMs: number
  readonly url: string
  readonly operation: string
  readonly params: readonly SoapParam[]
  /** Sent as `Cookie: TOKEN=…` besides any `Token` parameter (§6.3 item 4). */
  readonly token?: string
}

/** One SOAP call; a fault or a RESPUESTA whatever the HTTP status (Axis sends faults with 500), else a failure. */
export async function callSoap(call: SoapCall): Promise<SoapOutcome> {
  const headers: Record<string, string> = { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '""', Accept: 'text/xml' }
  if (call.token !== undefined) headers.Cookie = `TOKEN=${call.token}`
  const res = await exchange(call.fetch, { method: 'POST', url: call.url, headers, body: soapEnvelope(call.operation, call.params) }, call.timeoutMs)
  return soapOutcome(res, call.operation)
}

export function soapOutcome(res: HttpResult, operation: string): SoapOutcome {
  if (res.kind === 'failure') return res
  const reply = parseSoapReply(res.text, operation)
  if (reply.kind === 'respuesta') return { kind: 'respuesta', respuesta: reply.respuesta, raw: reply.inner }
  if (reply.kind === 'fault') return { kind: 'fault', faultString: reply.faultString, raw: res.text }
  return { kind: 'failure', reason: passingFault(res) ?? reply.reason, raw: res.text }
}

/**
 * An RPC/literal request, the binding of RegistroReclamoDTE's WSDL (docs/sii-protocol.md §6.7): the operation element
 * in the service's namespace (a JAX-WS server dispatches on it), each part an unqualified child holding its text, no
 * `xsi:type` and no encodingStyle.
 */
export function literalEnvelope(namespace: string, operation: string, params: readonly SoapParam[]): string {
  const args = params.map(([name, value]) => `<${name}>${escapeXmlText(value)}</${name}>`).join('')
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<soapenv:Envelope xmlns:soapenv="${SOAPENV}"><soapenv:Body><ws:${operation} xmlns:ws="${namespace}">${args}</ws:${operation}>` +
    '</soapenv:Body></soapenv:Envelope>'
  )
}

export type LiteralOutcome =
  | { readonly kind: 'response'; readonly element: Element; readonly raw: string }
  | { readonly kind: 'fault'; readonly faultString: string; readonly raw: string }
  | { readonly kind: 'failure'; readonly reason: string; readonly raw?: string }

/** An RPC/literal answer: the Body's `<operation>Response` element (its `return` is read by the caller), a Fault, or a failure. */
export function literalOutcome(res: HttpResult, operation: string): LiteralOutcome {
  if (res.kind === 'failure') return res
  let envelope: Element | null = null
  try {
    envelope = parseXml(res.text.trim()).documentElement
  } catch (err) {
    return { kind: 'failure', reason: passingFault(res) ?? `SOAP envelope is not XML: ${errorMessage(err)}`, raw: res.text }
  }
  const fault = findByLocalName(envelope, (name) => name === 'Fault')
  if (fault !== null) {
    const faultString = childElements(fault).find((e) => e.localName === 'faultstring')
    return { kind: 'fault', faultString: snippet(textOf(faultString ?? fault), 300), raw: res.text }
  }
  const response = findByLocalName(envelope, (name) => name === `${operation}Response`)
  if (response === null) return { kind: 'failure', reason: passingFault(res) ?? `SOAP answer without ${operation}Response`, raw: res.text }
  return { kind: 'response', element: response, raw: res.text }
}

function findByLocalName(root: Element, match: (localName: string) => boolean): Element | null {
  if (match(root.localName)) return root
  for (const child of childElements(root)) {
    const found = findByLocalName(child, match)
    if (found !== null) return found
  }
  return null
}

function errorMessage(err: unknown): string {
  return snippet(err instanceof Error ? err.message : String(err), 200)
}
