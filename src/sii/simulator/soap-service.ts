// DTEWS, the SII's SOAP services (docs/sii-protocol.md §6.1–§6.6): CrSeed.getSeed and GetTokenFromSeed.getToken (the SOAP
// channel's authentication, as src/sii/client/auth.ts calls it), QueryEstUp.getEstUp (an envelope's state and counters)
// and QueryEstDte.getEstDte (one document's status), as src/sii/client/queries.ts reads them. Each .jws path offers one
// operation; `GET <path>?WSDL` describes it.
import { santiagoTimestamp } from '../../clock'
import { normalizeRut } from '../../domain/rut'
import { checkToken, type TokenCheck } from './auth'
import { seedRespuesta, tokenRespuesta } from './auth-answers'
import { pathIs, type Route, type SimulatorContext } from './channel'
import { parseDteQuery } from './dte-query-params'
import { textResponse } from './http-responses'
import { libroEstUp } from './libro-reception'
import { countersOf, dteStatus } from './queries'
import { parseSoapRequest, respuesta, soapFault, soapResponse, wsdl, type Field, type SoapCall } from './soap'
import { envioState } from './states'

/** Axis 1 answers every DTEWS call, faults included, with this type (docs/sii-protocol.md §6.2). */
const SOAP_CONTENT_TYPE = 'text/xml; charset=utf-8'

/** A parameter of the call by local name, trimmed; '' when absent. */
type Param = (name: string) => string

interface SoapService {
  readonly operation: string
  /** The inner RESPUESTA document the `…Return` string carries. */
  readonly respond: (ctx: SimulatorContext, call: SoapCall, param: Param, now: Date) => string
}

/** Path → the one operation each DTEWS service offers (docs/sii-protocol.md §6.1). */
const SOAP_SERVICES: Readonly<Record<string, SoapService>> = {
  '/DTEWS/CrSeed.jws': { operation: 'getSeed', respond: (ctx, _call, _param, now) => seedRespuesta(ctx.store, 'soap', now) },
  '/DTEWS/GetTokenFromSeed.jws': { operation: 'getToken', respond: (ctx, call, _param, now) => tokenRespuesta(ctx.store, 'soap', call.params.get('pszXml') ?? '', now) },
  '/DTEWS/QueryEstUp.jws': { operation: 'getEstUp', respond: (ctx, _call, param, now) => getEstUp(ctx, param, now) },
  '/DTEWS/QueryEstDte.jws': { operation: 'getEstDte', respond: (ctx, _call, param, now) => getEstDte(ctx, param, now) },
}

export const SOAP_ROUTES: readonly Route[] = Object.entries(SOAP_SERVICES).flatMap(([path, service]): Route[] => [
  {
    method: 'GET',
    matches: (url) => url.pathname === path && [...url.searchParams.keys()].some((k) => k.toLowerCase() === 'wsdl'),
    answer: (_ctx, _req, url) => textResponse(wsdl(service.operation, `${url.origin}${path}`), SOAP_CONTENT_TYPE),
  },
  { method: 'POST', matches: pathIs(path), answer: (ctx, req) => answerSoapCall(ctx, req, service) },
])

async function answerSoapCall(ctx: SimulatorContext, req: Request, service: SoapService): Promise<Response> {
  let call: SoapCall
  try {
    call = parseSoapRequest(await req.text())
  } catch (err) {
    return soapError(`No se pudo leer el mensaje SOAP: ${err instanceof Error ? err.message : String(err)}`)
  }
  // Axis dispatches on the operation's local name; each .jws holds one operation (docs/sii-protocol.md §6.1).
  if (call.operation !== service.operation) return soapError(`No such operation '${call.operation}'`)
  const param: Param = (name) => call.params.get(name)?.trim() ?? ''
  const inner = service.respond(ctx, call, param, ctx.clock())
  return textResponse(soapResponse(call, inner), SOAP_CONTENT_TYPE)
}

function soapError(message: string): Response {
  return textResponse(soapFault(message), SOAP_CONTENT_TYPE, 500)
}

/** docs/sii-protocol.md §6.5: RESP_HDR with TRACKID, ESTADO, GLOSA, NUM_ATENCION; RESP_BODY with per-type counters once EPR. */
function getEstUp(ctx: SimulatorContext, param: Param, now: Date): string {
  const tokenProblem = queryTokenHeader(checkToken(ctx.store, 'soap', param('Token'), now))
  if (tokenProblem !== null) return respuesta(tokenProblem)
  const company = normalizeRut(`${param('RutCompania')}-${param('DvCompania')}`)
  const envio = company === null ? null : ctx.store.findEnvio('soap', param('TrackId'))
  // A certification libro's track id: its state alone, no RESP_BODY (libro-reception.ts).
  const libro = company === null || envio !== null ? null : libroEstUp(ctx, param('TrackId'), company, now)
  if (libro !== null) return respuesta([['TRACKID', libro.trackId], ['ESTADO', libro.estado], ['GLOSA', libro.glosa], ['NUM_ATENCION', numAtencion(ctx, now)]])
  if (envio === null || envio.rut_emisor !== company) return respuesta(paramError(numAtencion(ctx, now)))
  const state = envioState(envio, now)
  const hdr: Field[] = [['TRACKID', envio.track_id], ['ESTADO', state.estado], ['GLOSA', state.glosa], ['NUM_ATENCION', numAtencion(ctx, now)]]
  if (state.estado !== 'EPR') return respuesta(hdr)
  const body = countersOf(ctx.store.documentsOf(envio.track_id)).flatMap((c): Field[] => [
    ['TIPO_DOCTO', c.tipo], ['INFORMADOS', c.informados], ['ACEPTADOS', c.aceptados], ['RECHAZADOS', c.rechazados], ['REPAROS', c.reparos],
  ])
  return respuesta(hdr, body)
}

/**
 * docs/sii-protocol.md §6.6. RutConsultante must be the token's holder (the authenticated user); the company's envelopes may be
 * queried by any authenticated user (the simulator keeps no registry of who is authorized for which company).
 */
function getEstDte(ctx: SimulatorContext, param: Param, now: Date): string {
  const tokenCheck = checkToken(ctx.store, 'soap', param('Token'), now)
  const tokenProblem = queryTokenHeader(tokenCheck)
  if (tokenProblem !== null) return respuesta(tokenProblem)
  const consultante = normalizeRut(`${param('RutConsultante')}-${param('DvConsultante')}`)
  if (consultante === null) return respuesta([['ESTADO', '-10'], ['GLOSA_ESTADO', 'Error validando RUT usuario'], ['ERR_CODE', '-10'], ['GLOSA_ERR', 'RutConsultante no es un RUT válido'], ['NUM_ATENCION', numAtencion(ctx, now)]])
  if (tokenCheck.isValid && consultante !== tokenCheck.rut) {
    return respuesta([['ESTADO', '-6'], ['GLOSA_ESTADO', 'Usuario no autorizado'], ['ERR_CODE', '-6'], ['GLOSA_ERR', `RutConsultante ${consultante} no es el usuario autenticado`], ['NUM_ATENCION', numAtencion(ctx, now)]])
  }
  const query = parseDteQuery({
    company: `${param('RutCompania')}-${param('DvCompania')}`,
    receptor: `${param('RutReceptor')}-${param('DvReceptor')}`,
    tipo: param('TipoDte'),
    folio: param('FolioDte'),
    fecha: param('FechaEmisionDte'),
    monto: param('MontoDte'),
  })
  if (query === null) return respuesta(paramError(numAtencion(ctx, now)))
  const status = dteStatus(ctx.store, query, now)
  return respuesta([
    ['ESTADO', status.estado], ['GLOSA_ESTADO', status.glosaEstado], ['ERR_CODE', status.errCode], ['GLOSA_ERR', status.glosaErr], ['NUM_ATENCION', numAtencion(ctx, now)],
  ])
}

/** docs/sii-protocol.md §6.5: 001 token missing (cookie/token inactive), 002 expired (inactive), 003 unknown (does not exist). */
function queryTokenHeader(check: TokenCheck): Field[] | null {
  if (check.isValid) return null
  const answers: Record<typeof check.reason, Field[]> = {
    missing: [['ESTADO', '001'], ['GLOSA', 'TOKEN NO ACTIVO (no se recibió token)']],
    expired: [['ESTADO', '002'], ['GLOSA', 'TOKEN NO ACTIVO']],
    unknown: [['ESTADO', '003'], ['GLOSA', 'TOKEN NO EXISTE']],
  }
  return answers[check.reason]
}

/** `-11` with ERR_CODE 1: "the envelope is not of this company / missing parameters" (docs/sii-protocol.md §6.5). */
function paramError(numAtencionText: string): Field[] {
  return [['ESTADO', '-11'], ['GLOSA', 'ERROR: ENVIO NO ES DE LA EMPRESA O PARAMETROS INCORRECTOS'], ['ERR_CODE', '1'], ['SQL_CODE', '0'], ['SRV_CODE', '0'], ['NUM_ATENCION', numAtencionText]]
}

/** NUM_ATENCION: "number ( YYYY/MM/DD HH:MM:SS)" (docs/sii-protocol.md §6.5). */
function numAtencion(ctx: SimulatorContext, now: Date): string {
  return `${ctx.store.next('atencion')} ( ${santiagoTimestamp(now).replace('T', ' ').replace(/-/g, '/')})`
}
