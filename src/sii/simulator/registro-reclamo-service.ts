// RegistroReclamoDTE simulated (docs/sii-protocol.md §6.7): ingresarAceptacionReclamoDoc, listarEventosHistDoc and
// consultarFechaRecepcionSii on the documents this simulator received, as the SII's JAX-WS service answers them (RPC/
// literal, `return` holding codResp, descResp and listaEventosDoc), on both the certificación and the producción path.
// The token is the DTEWS one in `Cookie: TOKEN=`; a bad one is the SOAP fault "Error de Autenticacion: TOKEN invalido".
// The rules are the manual's (SII-RCL v1.2): types 33, 34, 43 only, 8 days from the reception, and its table of what
// may follow what. docs/decisions/simulator.md "RegistroReclamoDTE" says what is and is not simulated.
import { isAccion, isClaim, TIPOS_CON_ACCION, type Accion } from '../../domain/intercambio'
import { computeDv } from '../../domain/rut'
import { escapeXmlText } from '../../xml/latin1'
import {
  descRespOf, EVENTO_GLOSA, formatFechaSii, REGISTRO_RECLAMO_NS, REGISTRO_RECLAMO_OPERATIONS, REGISTRO_RECLAMO_PATH, type RegistroReclamoOperation,
} from '../registro-reclamo-protocol'
import { checkToken, tokenFromCookie } from './auth'
import type { Route, SimulatorContext } from './channel'
import { textResponse } from './http-responses'
import { parseSoapRequest, type SoapCall } from './soap'
import { envioState } from './states'
import type { EventoRow } from './store'

const SOAP_ENV = 'http://schemas.xmlsoap.org/soap/envelope/'
/** JAX-WS answers, faults included, with this type. */
const CONTENT_TYPE = 'text/xml; charset=utf-8'
/** "dentro de los primeros 8 días corridos (contadas desde la fecha-hora de recepción del documento en el SII)". */
const PLAZO_MS = 8 * 24 * 60 * 60_000
/** The fault ODOO matches to renew its token (docs/sii-protocol.md §6.3, §6.7). */
export const TOKEN_FAULT = 'Error de Autenticacion: TOKEN invalido'

/** Both paths: the simulator is ws1 and ws2 at once; `GET …?wsdl` describes the service. */
export const REGISTRO_RECLAMO_ROUTES: readonly Route[] = Object.values(REGISTRO_RECLAMO_PATH).flatMap((path): Route[] => [
  {
    method: 'GET',
    matches: (url) => url.pathname === path && [...url.searchParams.keys()].some((k) => k.toLowerCase() === 'wsdl'),
    answer: (_ctx, _req, url) => textResponse(wsdl(`${url.origin}${path}`), CONTENT_TYPE),
  },
  { method: 'POST', matches: (url) => url.pathname === path, answer: (ctx, req) => answerCall(ctx, req) },
])

type Param = (name: string) => string
/** A document as the request names it, or the code refusing the request. */
type DocRef = { readonly rutEmisor: string; readonly tipo: number; readonly folio: number }
type Refusal = { readonly codResp: number; readonly descResp: string }

async function answerCall(ctx: SimulatorContext, req: Request): Promise<Response> {
  let call: SoapCall
  try {
    call = parseSoapRequest(await req.text())
  } catch (err) {
    return fault(`Couldn't create SOAP message: ${err instanceof Error ? err.message : String(err)}`)
  }
  // JAX-WS dispatches on the operation element's qualified name: another namespace is no operation of this service.
  const operation = REGISTRO_RECLAMO_OPERATIONS.find((op) => op === call.operation)
  if (operation === undefined || call.namespace !== REGISTRO_RECLAMO_NS) return fault(`Cannot find dispatch method for {${call.namespace}}${call.operation}`)
  const now = ctx.clock()
  const token = checkToken(ctx.store, 'soap', tokenFromCookie(req.headers.get('cookie')), now)
  if (!token.isValid) return fault(TOKEN_FAULT)
  const param: Param = (name) => call.params.get(name)?.trim() ?? ''
  const answer = ANSWERS[operation](ctx, param, token.rut, now)
  ctx.log('sii_simulator.registro_reclamo', { operation, rut_emisor: `${param('rutEmisor')}-${param('dvEmisor')}`, tipo: param('tipoDoc'), folio: param('folio'), accion: param('accionDoc') || undefined })
  return textResponse(envelope(operation, answer), CONTENT_TYPE)
}

/** Each operation's `return` element (null: left out, as JAX-WS writes a null return). */
const ANSWERS: Readonly<Record<RegistroReclamoOperation, (ctx: SimulatorContext, param: Param, rutToken: string, now: Date) => string | null>> = {
  ingresarAceptacionReclamoDoc: (ctx, param, rutToken, now) => {
    const refusal = ingresar(ctx, param, rutToken, now)
    return respuestaTo(refusal ?? { codResp: 0, descResp: descRespOf(0) })
  },
  listarEventosHistDoc: (ctx, param, _rutToken, now) => {
    const doc = readDoc(param)
    if ('codResp' in doc) return respuestaTo(doc)
    if (receptionOf(ctx, doc, now) === null) return respuestaTo(refusal(18))
    const eventos = ctx.store.eventosOf(doc.rutEmisor, doc.tipo, doc.folio)
    return eventos.length === 0 ? respuestaTo(refusal(16)) : respuestaTo(refusal(15), eventos)
  },
  // The manual gives this one no codes: a date, or nothing for a document the SII does not hold.
  consultarFechaRecepcionSii: (ctx, param, _rutToken, now) => {
    const doc = readDoc(param)
    const receivedAt = 'codResp' in doc ? null : receptionOf(ctx, doc, now)
    return receivedAt === null ? null : `<return>${formatFechaSii(new Date(receivedAt))}</return>`
  },
}

/** ingresarAceptacionReclamoDoc's checks in the manual's order; null when the event was registered. */
function ingresar(ctx: SimulatorContext, param: Param, rutToken: string, now: Date): Refusal | null {
  const doc = readDoc(param)
  if ('codResp' in doc) return doc
  const accion = param('accionDoc')
  if (!isAccion(accion)) return refusal(4)
  const receivedAt = receptionOf(ctx, doc, now)
  if (receivedAt === null) return refusal(18)
  if (now.getTime() - receivedAt > PLAZO_MS) return refusal(8)
  return ctx.store.registerEvento(doc.rutEmisor, doc.tipo, doc.folio, (previas) => {
    const refused = orderRefusal(previas.map((e) => e.accion), accion)
    const evento: EventoRow = { rut_emisor: doc.rutEmisor, tipo: doc.tipo, folio: doc.folio, accion, rut_responsable: rutToken, registered_at: now.getTime() }
    return { evento: refused === null ? evento : null, answer: refused }
  })
}

/**
 * The manual's table of what may follow what (SII-RCL v1.2, ingresarAceptacionReclamoDoc, accionDoc "Validaciones"):
 * after a claim (RCD, RFP, RFT), ERM is 6 and ACD 12, the same claim again 7, another claim is registered; after ACD,
 * ERM is registered, a claim is 11, ACD again 7; after ERM, ACD is registered, a claim is 13, ERM again 7.
 */
export function orderRefusal(previas: readonly string[], accion: Accion): Refusal | null {
  const reclamos = previas.filter((p) => isAccion(p) && isClaim(p))
  const ultimo = reclamos.at(-1)
  if (ultimo !== undefined) {
    if (accion === 'ERM') return refusal(6, ultimo)
    if (accion === 'ACD') return refusal(12, ultimo)
    return reclamos.includes(accion) ? refusal(7) : null
  }
  if (previas.includes(accion)) return refusal(7)
  if (isClaim(accion) && previas.includes('ACD')) return refusal(11)
  if (isClaim(accion) && previas.includes('ERM')) return refusal(13)
  return null
}

/**
 * rutEmisor (digits, at least 1000) with dvEmisor its módulo 11 digit, K uppercase ("siempre debe ser mayúscula") → 1;
 * tipoDoc one of 33, 34, 43 → 3; folio digits, at most 10, not 0 → 2.
 */
function readDoc(param: Param): DocRef | Refusal {
  const rut = param('rutEmisor')
  if (!/^\d{1,8}$/.test(rut) || Number(rut) < 1000 || computeDv(String(Number(rut))) !== param('dvEmisor')) return refusal(1)
  const tipo = param('tipoDoc')
  if (!/^\d{1,2}$/.test(tipo) || !(TIPOS_CON_ACCION as readonly number[]).includes(Number(tipo))) return refusal(3)
  const folio = param('folio')
  if (!/^\d{1,10}$/.test(folio) || Number(folio) === 0) return refusal(2)
  return { rutEmisor: `${Number(rut)}-${param('dvEmisor')}`, tipo: Number(tipo), folio: Number(folio) }
}

/**
 * When the SII received the document, ms: the upload of the first envelope that holds it accepted (DOK, RPR, RLV),
 * once that envelope's processing is over. A rejected or unknown document, or one still in process, is not received.
 */
function receptionOf(ctx: SimulatorContext, doc: DocRef, now: Date): number | null {
  const copy = ctx.store.documentsByFolio(doc.rutEmisor, doc.tipo, doc.folio).find((r) => r.documento.estado !== 'RCH' && envioState(r.envio, now).isFinal)
  return copy?.envio.received_at ?? null
}

function refusal(codResp: number, reclamo?: string): Refusal {
  return { codResp, descResp: descRespOf(codResp, reclamo) }
}

/** respuestaTo (the WSDL's type): codResp, descResp, then one listaEventosDoc per event (DteEventoDocTo). */
function respuestaTo(r: Refusal, eventos: readonly EventoRow[] = []): string {
  const lista = eventos.map((e) => {
    const [rut = '', dv = ''] = e.rut_responsable.split('-')
    return `<listaEventosDoc><codEvento>${e.accion}</codEvento><descEvento>${escapeXmlText(EVENTO_GLOSA[e.accion] ?? e.accion)}</descEvento>` +
      `<rutResponsable>${rut}</rutResponsable><dvResponsable>${dv}</dvResponsable><fechaEvento>${formatFechaSii(new Date(e.registered_at))}</fechaEvento></listaEventosDoc>`
  })
  return `<return><codResp>${r.codResp}</codResp><descResp>${escapeXmlText(r.descResp)}</descResp>${lista.join('')}</return>`
}

/** The manual's example answers: `S:` envelope, `ns2:` response element in the service namespace, `return` unqualified. */
function envelope(operation: RegistroReclamoOperation, ret: string | null): string {
  return (
    `<?xml version='1.0' encoding='UTF-8'?><S:Envelope xmlns:S="${SOAP_ENV}"><S:Body>` +
    `<ns2:${operation}Response xmlns:ns2="${REGISTRO_RECLAMO_NS}">${ret ?? ''}</ns2:${operation}Response></S:Body></S:Envelope>`
  )
}

/** A JAX-WS fault, HTTP 500. */
function fault(message: string): Response {
  const body =
    `<?xml version='1.0' encoding='UTF-8'?><S:Envelope xmlns:S="${SOAP_ENV}"><S:Body><S:Fault>` +
    `<faultcode>S:Server</faultcode><faultstring>${escapeXmlText(message)}</faultstring></S:Fault></S:Body></S:Envelope>`
  return textResponse(body, CONTENT_TYPE, 500)
}

/** A WSDL of the service's shape (RPC/literal, soapAction "", parts xsd:string in parameterOrder), pointing at `endpoint`. */
function wsdl(endpoint: string): string {
  const parts = (op: RegistroReclamoOperation): string[] => (op === 'ingresarAceptacionReclamoDoc' ? ['rutEmisor', 'dvEmisor', 'tipoDoc', 'folio', 'accionDoc'] : ['rutEmisor', 'dvEmisor', 'tipoDoc', 'folio'])
  const ret = (op: RegistroReclamoOperation): string => (op === 'consultarFechaRecepcionSii' ? 'xsd:string' : 'tns:respuestaTo')
  const ops = REGISTRO_RECLAMO_OPERATIONS
  const body = `<soap:body use="literal" namespace="${REGISTRO_RECLAMO_NS}"/>`
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:tns="${REGISTRO_RECLAMO_NS}" targetNamespace="${REGISTRO_RECLAMO_NS}">` +
    `<wsdl:types><xsd:schema targetNamespace="${REGISTRO_RECLAMO_NS}">` +
    '<xsd:complexType name="respuestaTo"><xsd:sequence><xsd:element name="codResp" type="xsd:int" minOccurs="0"/><xsd:element name="descResp" type="xsd:string" minOccurs="0"/>' +
    '<xsd:element name="listaEventosDoc" type="tns:DteEventoDocTo" nillable="true" minOccurs="0" maxOccurs="unbounded"/><xsd:element name="rutToken" type="xsd:string" minOccurs="0"/></xsd:sequence></xsd:complexType>' +
    '<xsd:complexType name="DteEventoDocTo"><xsd:sequence>' +
    ['codEvento', 'descEvento', 'rutResponsable', 'dvResponsable', 'fechaEvento'].map((n) => `<xsd:element name="${n}" type="xsd:string" minOccurs="0"/>`).join('') +
    '</xsd:sequence></xsd:complexType></xsd:schema></wsdl:types>' +
    ops.map((op) => `<wsdl:message name="${op}">${parts(op).map((p) => `<wsdl:part name="${p}" type="xsd:string"/>`).join('')}</wsdl:message>` +
      `<wsdl:message name="${op}Response"><wsdl:part name="return" type="${ret(op)}"/></wsdl:message>`).join('') +
    '<wsdl:portType name="RegistroReclamoDteService">' +
    ops.map((op) => `<wsdl:operation name="${op}" parameterOrder="${parts(op).join(' ')}"><wsdl:input message="tns:${op}"/><wsdl:output message="tns:${op}Response"/></wsdl:operation>`).join('') +
    '</wsdl:portType><wsdl:binding name="RegistroReclamoDteServicePortBinding" type="tns:RegistroReclamoDteService">' +
    '<soap:binding transport="http://schemas.xmlsoap.org/soap/http" style="rpc"/>' +
    ops.map((op) => `<wsdl:operation name="${op}"><soap:operation soapAction="" style="rpc"/><wsdl:input>${body}</wsdl:input><wsdl:output>${body}</wsdl:output></wsdl:operation>`).join('') +
    '</wsdl:binding><wsdl:service name="RegistroReclamoDteServiceEndpointService"><wsdl:port name="RegistroReclamoDteServicePort" binding="tns:RegistroReclamoDteServicePortBinding">' +
    `<soap:address location="${escapeXmlText(endpoint)}"/></wsdl:port></wsdl:service></wsdl:definitions>\n`
  )
}
