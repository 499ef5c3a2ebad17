// The SII's wire formats, as the simulator writes and reads them: Axis 1 RPC-style SOAP 1.1 envelopes whose `…Return`
// string holds an escaped `SII:RESPUESTA` document (docs/sii-protocol.md §6.2), the DTEUpload `RECEPCIONDTE` answer (§6.4) and
// the minimal WSDLs a `?WSDL` GET returns. Nothing here knows about state: soap-service.ts and upload-service.ts decide what to say.
import { childElements, parseXml, textOf } from '../../xml/latin1'

const SOAP_ENV = 'http://schemas.xmlsoap.org/soap/envelope/'
const SOAP_ENCODING = 'http://schemas.xmlsoap.org/soap/encoding/'
const SII_XML_SCHEMA = 'http://www.sii.cl/XMLSchema'

/** Operation element namespace used when a request names none (clients generated from today's WSDLs, docs/sii-protocol.md §6.2). */
export const DEFAULT_OPERATION_NS = 'http://DefaultNamespace'

export interface SoapCall {
  /** Local name of the Body's first element: `getSeed`, `getToken`, `getEstUp`, `getEstDte`. */
  readonly operation: string
  /** Its namespace, echoed on the response element as Axis does (`http://DefaultNamespace` when none). */
  readonly namespace: string
  /** Parameters by local name, text entity-decoded (`pszXml` holds the signed getToken document as a string). */
  readonly params: ReadonlyMap<string, string>
}

/**
 * Reads an RPC-style request. The server dispatches on the operation's local name whatever its namespace (the 2007
 * manual's service URL, `http://DefaultNamespace`, LibreDTE's maullin URL all work, docs/sii-protocol.md §6.2); parameters are
 * read by local name, their `xsi:type` ignored. Throws SyntaxError when this is not a SOAP envelope with a Body.
 */
export function parseSoapRequest(text: string): SoapCall {
  const envelope = parseXml(text).documentElement
  if (envelope.localName !== 'Envelope' || envelope.namespaceURI !== SOAP_ENV) throw new SyntaxError('not a SOAP 1.1 Envelope')
  const body = childElements(envelope).find((e) => e.localName === 'Body')
  const call = body === undefined ? undefined : childElements(body)[0]
  if (call === undefined) throw new SyntaxError('SOAP Body without an operation element')
  const params = new Map<string, string>()
  for (const param of childElements(call)) params.set(param.localName, textOf(param))
  return { operation: call.localName, namespace: call.namespaceURI ?? DEFAULT_OPERATION_NS, params }
}

/**
 * The Axis response: `<ns1:{op}Response>` holding `<{op}Return xsi:type="xsd:string">` whose text is the inner
 * document, escaped (docs/sii-protocol.md §6.2 shows `&lt;?xml version="1.0" encoding="UTF-8"?&gt;` with raw quotes).
 */
export function soapResponse(call: Pick<SoapCall, 'operation' | 'namespace'>, inner: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<soapenv:Envelope xmlns:soapenv="${SOAP_ENV}" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
    '<soapenv:Body>' +
    `<ns1:${call.operation}Response soapenv:encodingStyle="${SOAP_ENCODING}" xmlns:ns1="${escapeAttr(call.namespace)}">` +
    `<${call.operation}Return xsi:type="xsd:string">${escapeText(inner)}</${call.operation}Return>` +
    `</ns1:${call.operation}Response>` +
    '</soapenv:Body></soapenv:Envelope>'
  )
}

/** A SOAP 1.1 Fault, as Axis answers an unknown operation or an unreadable envelope (HTTP 500). */
export function soapFault(faultString: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<soapenv:Envelope xmlns:soapenv="${SOAP_ENV}" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
    '<soapenv:Body><soapenv:Fault><faultcode>soapenv:Server.userException</faultcode>' +
    `<faultstring>${escapeText(faultString)}</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>`
  )
}

/** One child of RESP_HDR or RESP_BODY: unprefixed, as the SII writes them (docs/sii-protocol.md §6.2). Repeats allowed (§6.5). */
export type Field = readonly [name: string, value: string | number]

/**
 * The inner `SII:RESPUESTA` document (docs/sii-protocol.md §6.2): UTF-8 declaration, RESP_BODY (when given) before RESP_HDR as
 * in §6.5's example (clients must select by name, the order varies at the SII).
 */
export function respuesta(hdr: readonly Field[], body: readonly Field[] | null = null): string {
  const fields = (list: readonly Field[]): string => list.map(([n, v]) => `<${n}>${escapeText(String(v))}</${n}>`).join('')
  const bodyXml = body === null ? '' : `<SII:RESP_BODY>${fields(body)}</SII:RESP_BODY>`
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<SII:RESPUESTA xmlns:SII="${SII_XML_SCHEMA}">${bodyXml}<SII:RESP_HDR>${fields(hdr)}</SII:RESP_HDR></SII:RESPUESTA>`
  )
}

export interface Recepcion {
  readonly rutSender: string
  readonly rutCompany: string
  readonly file: string
  /** `YYYY-MM-DD HH:MM:SS`, Santiago local time. */
  readonly timestamp: string
  readonly status: number
  readonly trackId: string | null
  readonly errors?: readonly string[]
}

/** DTEUpload's plain-XML answer (docs/sii-protocol.md §6.4): no namespace, `DETAIL/ERROR` lines on schema-type refusals. */
export function recepcionDte(r: Recepcion): string {
  const errors = r.errors ?? []
  const detail = errors.length === 0 ? '' : ` <DETAIL>\n${errors.map((e) => `  <ERROR>${escapeText(e)}</ERROR>\n`).join('')} </DETAIL>\n`
  return (
    '<?xml version="1.0"?>\n<RECEPCIONDTE>\n' +
    ` <RUTSENDER>${escapeText(r.rutSender)}</RUTSENDER>\n` +
    ` <RUTCOMPANY>${escapeText(r.rutCompany)}</RUTCOMPANY>\n` +
    ` <FILE>${escapeText(r.file)}</FILE>\n` +
    ` <TIMESTAMP>${r.timestamp}</TIMESTAMP>\n` +
    ` <STATUS>${r.status}</STATUS>\n` +
    (r.trackId === null ? '' : ` <TRACKID>${r.trackId}</TRACKID>\n`) +
    `${detail}</RECEPCIONDTE>\n`
  )
}

/** Parameters of each DTEWS operation, in `parameterOrder` (docs/sii-protocol.md §6.3, §6.5, §6.6). */
export const OPERATIONS: Readonly<Record<string, { readonly service: string; readonly params: readonly string[] }>> = {
  getSeed: { service: 'CrSeed', params: [] },
  getToken: { service: 'GetTokenFromSeed', params: ['pszXml'] },
  getEstUp: { service: 'QueryEstUp', params: ['RutCompania', 'DvCompania', 'TrackId', 'Token'] },
  getEstDte: {
    service: 'QueryEstDte',
    params: ['RutConsultante', 'DvConsultante', 'RutCompania', 'DvCompania', 'RutReceptor', 'DvReceptor', 'TipoDte', 'FolioDte', 'FechaEmisionDte', 'MontoDte', 'Token'],
  },
}

/** A minimal RPC/encoded WSDL 1.1 for one service, pointing at `endpoint` (docs/sii-protocol.md §6.1: append `?WSDL`). */
export function wsdl(operation: string, endpoint: string): string {
  const op = OPERATIONS[operation]
  if (op === undefined) throw new Error(`wsdl: unknown operation ${operation}`)
  const ns = escapeAttr(endpoint)
  const parts = op.params.map((p) => `<wsdl:part name="${p}" type="xsd:string"/>`).join('')
  const order = op.params.length > 0 ? ` parameterOrder="${op.params.join(' ')}"` : ''
  const body = `<wsdlsoap:body encodingStyle="${SOAP_ENCODING}" namespace="${ns}" use="encoded"/>`
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<wsdl:definitions targetNamespace="${ns}" xmlns:impl="${ns}" xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" ` +
    'xmlns:wsdlsoap="http://schemas.xmlsoap.org/wsdl/soap/" xmlns:xsd="http://www.w3.org/2001/XMLSchema">' +
    `<wsdl:message name="${operation}Request">${parts}</wsdl:message>` +
    `<wsdl:message name="${operation}Response"><wsdl:part name="${operation}Return" type="xsd:string"/></wsdl:message>` +
    `<wsdl:portType name="${op.service}"><wsdl:operation name="${operation}"${order}>` +
    `<wsdl:input message="impl:${operation}Request"/><wsdl:output message="impl:${operation}Response"/></wsdl:operation></wsdl:portType>` +
    `<wsdl:binding name="${op.service}SoapBinding" type="impl:${op.service}">` +
    '<wsdlsoap:binding style="rpc" transport="http://schemas.xmlsoap.org/soap/http"/>' +
    `<wsdl:operation name="${operation}"><wsdlsoap:operation soapAction=""/>` +
    `<wsdl:input>${body}</wsdl:input><wsdl:output>${body}</wsdl:output></wsdl:operation></wsdl:binding>` +
    `<wsdl:service name="${op.service}Service"><wsdl:port binding="impl:${op.service}SoapBinding" name="${op.service}">` +
    `<wsdlsoap:address location="${ns}"/></wsdl:port></wsdl:service>` +
    '</wsdl:definitions>\n'
  )
}

/** Element text: `&`, `<`, `>` only, the way Axis escapes the `…Return` string (quotes stay raw, docs/sii-protocol.md §6.2). */
function escapeText(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'))
}

function escapeAttr(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;')
}
