// The SII client the jobs call: upload an envelope, ask for an envelope's and a document's status, on the SOAP channel
// (EnvioDTE: DTEUpload, QueryEstUp, QueryEstDte, docs/sii-protocol.md §6) or the boleta channel (EnvioBOLETA: the REST API, §7.3);
// and, for received 33/34/43, the receiver's actions registered at the SII (RegistroReclamoDTE, §6.7).
// It owns the tokens (DESIGN §6): one per (certificate, channel, origin), renewed only when the SII refuses it, and
// then the call is made once more. Every outcome is a value: SII outages, HTML pages, garbage and timeouts are
// `retry` with a reason, never a throw. Only a caller's bug (a malformed RUT or date) throws.
import type { SiiTarget } from '../../config'
import type { Accion } from '../../domain/intercambio'
import type {
  DteStatusOutcome, EnvioOutcome, EventosOutcome, FechaRecepcionOutcome, MotivoSii, RegistroDoc, RegistroOutcome, SiiChannel, UploadOutcome,
} from '../../domain/sii-respuestas'
import type { RegistroReclamoOperation } from '../registro-reclamo-protocol'
import type { Signer } from '../../domain/signer'
import { fetchBoletaToken, fetchSoapToken } from './auth'
import { boletaDteStatusOutcome, boletaEnvioOutcome } from './boleta-rest'
import { TOKEN_NOT_AUTHORIZED_ESTADOS } from './codes'
import { exchange, type HttpRequest } from './http'
import { originsFor, PATHS, registroReclamoEndpoint, type HostTarget, type SiiOrigins } from './hosts'
import { dteStatusOutcome, envioOutcome } from './queries'
import { callRegistro, eventosOutcome, fechaRecepcionOutcome, registroOutcome, registroParams, type RegistroReply } from './registro-reclamo'
import { callSoap } from './soap'
import { TokenCache, type TokenFailure, type TokenResult } from './token-cache'
import { boletaUploadOutcome, rutParts, uploadForm, uploadOutcome } from './upload'

export interface SiiCompany {
  /** Canonical `12345678-K`. */
  readonly rut: string
  readonly ambiente: 'certificacion' | 'produccion'
  /** The demo company (DESIGN §10): the composition root routes it to the simulator whatever the SII target. Required, so no caller can forget it. */
  readonly isDemo: boolean
}

export interface SiiCredentials {
  /** Cache key of the token: the certificate's id in Timbre's store. */
  readonly certificateId: string
  /** The certificate holder, canonical: rutSender and RutConsultante (docs/sii-protocol.md §6.4, §6.6). */
  readonly rutFirmante: string
  readonly signer: Signer
}

export interface DteQuery {
  readonly tipoDte: number
  readonly folio: number
  readonly rutReceptor: string
  /** `YYYY-MM-DD`. */
  readonly fechaEmision: string
  readonly montoTotal: number
}

export interface SiiClient {
  upload(company: SiiCompany, creds: SiiCredentials, channel: SiiChannel, envelope: Uint8Array, fileName: string): Promise<UploadOutcome>
  queryEnvio(company: SiiCompany, creds: SiiCredentials, channel: SiiChannel, trackId: string): Promise<EnvioOutcome>
  queryDte(company: SiiCompany, creds: SiiCredentials, channel: SiiChannel, dte: DteQuery): Promise<DteStatusOutcome>
  /** ingresarAceptacionReclamoDoc: `company` is the receiver acting, with its certificate's token (§6.7). */
  registrarAccion(company: SiiCompany, creds: SiiCredentials, doc: RegistroDoc, accion: Accion): Promise<RegistroOutcome>
  /** listarEventosHistDoc: the events of `doc`, asked by its issuer or its receiver (`company`). */
  listarEventos(company: SiiCompany, creds: SiiCredentials, doc: RegistroDoc): Promise<EventosOutcome>
  /** consultarFechaRecepcionSii: when the SII received `doc`, which starts its 8 days. */
  fechaRecepcion(company: SiiCompany, creds: SiiCredentials, doc: RegistroDoc): Promise<FechaRecepcionOutcome>
}

export interface SiiClientOptions {
  /** `simulado` is not accepted here: the composition root starts the simulator and passes its origin. */
  readonly target: SiiTarget | { kind: 'origin'; origin: string }
  /** Per HTTP request (DESIGN §6: every SII call times out after 30 s). */
  readonly timeoutMs?: number
  readonly fetch?: typeof fetch
  /** Events and fields in English; never a token, a seed signature or a key. */
  readonly log?: (event: string, fields: object) => void
}

/** An answer saying the token is invalid, of whichever call. */
interface TokenRejection {
  readonly kind: 'token_invalid'
  readonly raw: string
}

export function createSiiClient(opts: SiiClientOptions): SiiClient {
  const target = hostTarget(opts.target)
  const fetchFn = opts.fetch ?? fetch
  const timeoutMs = opts.timeoutMs ?? 30_000
  const log = opts.log ?? (() => {})
  const tokens = new TokenCache()

  /** The token's issuer: DTEWS for SOAP, the REST resources host for boletas (§6.1, §7.3). */
  const tokenOrigin = (origins: SiiOrigins, channel: SiiChannel): string => (channel === 'soap' ? origins.soap : origins.boletaApi)

  /**
   * Runs `call` with the channel's token. When the answer says the token is invalid, drops that token, gets a new
   * one and runs `call` once more; a second refusal is handed to `stillRefused` (DESIGN §6: retry the call ONCE).
   * `issuer` names the origin whose token the call takes when it is not the channel's own (RegistroReclamoDTE, §6.7).
   */
  async function withToken<T>(
    company: SiiCompany, creds: SiiCredentials, channel: SiiChannel,
    call: (token: string, origins: SiiOrigins) => Promise<T | TokenRejection>,
    noToken: (failure: TokenFailure) => T,
    stillRefused: (rejection: TokenRejection) => T,
    issuer?: string,
  ): Promise<T> {
    const origins = originsFor(target, company.ambiente)
    const origin = issuer ?? tokenOrigin(origins, channel)
    const key = `${creds.certificateId}\u0000${channel}\u0000${origin}`
    const fetchToken = async (): Promise<TokenResult> => {
      const ctx = { fetch: fetchFn, timeoutMs, origin, signer: creds.signer }
      const result = channel === 'soap' ? await fetchSoapToken(ctx) : await fetchBoletaToken(ctx)
      if (result.kind === 'token') log('sii.token.obtained', { channel, origin, certificate_id: creds.certificateId })
      else log('sii.token.failed', { channel, origin, certificate_id: creds.certificateId, reason: result.reason })
      return result
    }
    let last: TokenRejection | null = null
    for (let attempt = 0; attempt < 2; attempt++) {
      const { result, lease } = await tokens.acquire(key, fetchToken)
      if (result.kind === 'failed') return noToken(result)
      const answer = await call(result.token, origins)
      if (!isTokenRejection(answer)) return answer
      tokens.release(key, lease)
      log('sii.token.rejected', { channel, origin, certificate_id: creds.certificateId, attempt: attempt + 1 })
      last = answer
    }
    return stillRefused(last as TokenRejection)
  }

  const send = (req: HttpRequest) => exchange(fetchFn, req, timeoutMs)

  async function upload(company: SiiCompany, creds: SiiCredentials, channel: SiiChannel, envelope: Uint8Array, fileName: string): Promise<UploadOutcome> {
    const outcome = await withToken<UploadOutcome>(company, creds, channel, async (token, origins) => {
      const body = uploadForm(creds.rutFirmante, company.rut, envelope, fileName)
      const headers: Record<string, string> = { Cookie: `TOKEN=${token}` }
      if (channel === 'soap') return uploadOutcome(await send({ method: 'POST', url: origins.upload + PATHS.dteUpload, headers, body }))
      headers.Accept = 'application/json'
      return boletaUploadOutcome(await send({ method: 'POST', url: origins.boletaEnvio + PATHS.boletaEnvio, headers, body }))
    }, uploadWithoutToken, (r) => ({ kind: 'retry', reason: 'token refused twice in a row (STATUS 5 / HTTP 401)', status: statusOf(r), raw: r.raw }))
    log('sii.upload', { channel, rut_emisor: company.rut, file: fileName, outcome: outcome.kind, ...uploadLogFields(outcome) })
    return outcome
  }

  async function queryEnvio(company: SiiCompany, creds: SiiCredentials, channel: SiiChannel, trackId: string): Promise<EnvioOutcome> {
    if (!/^\d+$/.test(trackId)) throw new Error(`SII client: track id must be digits: ${trackId}`)
    const rut = rutParts(company.rut, 'company.rut')
    const outcome = await withToken<EnvioOutcome>(company, creds, channel, async (token, origins) => {
      if (channel === 'boleta') {
        const url = `${origins.boletaApi}${PATHS.boletaEnvioEstado}/${rut.body}-${rut.dv}-${trackId}`
        return boletaEnvioOutcome(await send({ method: 'GET', url, headers: { Cookie: `TOKEN=${token}`, Accept: 'application/json' } }))
      }
      return envioOutcome(await callSoap({
        fetch: fetchFn, timeoutMs, token, url: origins.soap + PATHS.queryEstUp, operation: 'getEstUp',
        params: [['RutCompania', rut.body], ['DvCompania', rut.dv], ['TrackId', trackId], ['Token', token]],
      }))
    }, (f) => ({ kind: 'retry', reason: f.reason }), (r) => ({ kind: 'retry', reason: 'token refused twice in a row', raw: r.raw }))
    log('sii.query_envio', { channel, rut_emisor: company.rut, track_id: trackId, outcome: outcome.kind, ...envioLogFields(outcome) })
    return outcome
  }

  async function queryDte(company: SiiCompany, creds: SiiCredentials, channel: SiiChannel, dte: DteQuery): Promise<DteStatusOutcome> {
    const emisor = rutParts(company.rut, 'company.rut')
    const receptor = rutParts(dte.rutReceptor, 'rutReceptor')
    const consultante = rutParts(creds.rutFirmante, 'rutFirmante')
    const [yyyy, mm, dd] = dateParts(dte.fechaEmision)
    const outcome = await withToken<DteStatusOutcome>(company, creds, channel, async (token, origins) => {
      if (channel === 'boleta') {
        const query = new URLSearchParams({ rut_receptor: receptor.body, dv_receptor: receptor.dv, monto: String(dte.montoTotal), fechaEmision: `${dd}-${mm}-${yyyy}` })
        const url = `${origins.boletaApi}${PATHS.boletaConsulta}/${emisor.body}-${emisor.dv}-${dte.tipoDte}-${dte.folio}/estado?${query}`
        return boletaDteStatusOutcome(await send({ method: 'GET', url, headers: { Cookie: `TOKEN=${token}`, Accept: 'application/json' } }))
      }
      // Parameter order of QueryEstDte's WSDL; the date DDMMAAAA with no separators (§6.6).
      return dteStatusOutcome(await callSoap({
        fetch: fetchFn, timeoutMs, token, url: origins.soap + PATHS.queryEstDte, operation: 'getEstDte',
        params: [
          ['RutConsultante', consultante.body], ['DvConsultante', consultante.dv], ['RutCompania', emisor.body], ['DvCompania', emisor.dv],
          ['RutReceptor', receptor.body], ['DvReceptor', receptor.dv], ['TipoDte', String(dte.tipoDte)], ['FolioDte', String(dte.folio)],
          ['FechaEmisionDte', `${dd}${mm}${yyyy}`], ['MontoDte', String(dte.montoTotal)], ['Token', token],
        ],
      }))
    }, (f) => ({ kind: 'retry', reason: f.reason }), (r) => ({ kind: 'retry', reason: 'token refused twice in a row', raw: r.raw }))
    log('sii.query_dte', { channel, rut_emisor: company.rut, tipo_dte: dte.tipoDte, folio: dte.folio, outcome: outcome.kind, ...(outcome.kind === 'status' ? { estado: outcome.estado } : { reason: outcome.reason }) })
    return outcome
  }

  /**
   * One RegistroReclamoDTE operation with the SOAP token of the service's token origin (§6.7), renewed once when the
   * service refuses it; `read` maps the answer. Every outcome is logged without the token.
   */
  async function registro<T extends { kind: string }>(
    company: SiiCompany, creds: SiiCredentials, doc: RegistroDoc, operation: RegistroReclamoOperation, accion: Accion | undefined,
    read: (reply: RegistroReply) => T | TokenRejection,
  ): Promise<T | { kind: 'retry'; reason: string }> {
    const params = registroParams(doc, accion)
    const endpoint = registroReclamoEndpoint(target, company.ambiente)
    const outcome = await withToken<T | { kind: 'retry'; reason: string }>(company, creds, 'soap',
      async (token) => read(await callRegistro({ fetch: fetchFn, timeoutMs, url: endpoint.url, token, operation, params })),
      (f) => ({ kind: 'retry', reason: f.reason }),
      () => ({ kind: 'retry', reason: 'token refused twice in a row (TOKEN invalido)' }),
      endpoint.tokenOrigin)
    log('sii.registro_reclamo', {
      operation, rut_empresa: company.rut, rut_emisor: doc.rutEmisor, tipo_dte: doc.tipoDte, folio: doc.folio, ...(accion === undefined ? {} : { accion }),
      outcome: outcome.kind, ...registroLogFields(outcome),
    })
    return outcome
  }

  const registrarAccion = (company: SiiCompany, creds: SiiCredentials, doc: RegistroDoc, accion: Accion): Promise<RegistroOutcome> =>
    registro(company, creds, doc, 'ingresarAceptacionReclamoDoc', accion, registroOutcome)
  const listarEventos = (company: SiiCompany, creds: SiiCredentials, doc: RegistroDoc): Promise<EventosOutcome> =>
    registro(company, creds, doc, 'listarEventosHistDoc', undefined, eventosOutcome)
  const fechaRecepcion = (company: SiiCompany, creds: SiiCredentials, doc: RegistroDoc): Promise<FechaRecepcionOutcome> =>
    registro(company, creds, doc, 'consultarFechaRecepcionSii', undefined, fechaRecepcionOutcome)

  return { upload, queryEnvio, queryDte, registrarAccion, listarEventos, fechaRecepcion }
}

function hostTarget(target: SiiClientOptions['target']): HostTarget {
  if (target.kind === 'simulado') {
    throw new Error('createSiiClient: start the simulator and pass { kind: "origin", origin: its url }')
  }
  return target
}

function isTokenRejection(value: unknown): value is TokenRejection {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'token_invalid'
}

/**
 * No token, no upload. A certificate holder the SII does not know for certificate authentication (getToken -07,
 * docs/sii-protocol.md §6.3) waits like STATUS 1, "sender without permission", with the long back-off (DESIGN §6); anything else
 * is passing.
 */
function uploadWithoutToken(failure: TokenFailure): UploadOutcome {
  if (failure.estado !== undefined && TOKEN_NOT_AUTHORIZED_ESTADOS.has(failure.estado)) {
    const glosa = failure.glosa ?? failure.reason
    return { kind: 'not_authorized', status: `TOKEN ${failure.estado}`, glosa, motivos: [{ codigo: `TOKEN ${failure.estado}`, glosa, detalle: null, nivel: null, fuente: 'upload' }], raw: failure.reason }
  }
  return { kind: 'retry', reason: failure.reason }
}

function statusOf(rejection: TokenRejection): string {
  return 'status' in rejection && typeof rejection.status === 'string' ? rejection.status : 'token'
}

/** `YYYY-MM-DD` → its parts; a caller's bug when malformed. */
function dateParts(date: string): [string, string, string] {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date)
  if (m === null) throw new Error(`SII client: fechaEmision must be YYYY-MM-DD: ${date}`)
  return [m[1] as string, m[2] as string, m[3] as string]
}

function uploadLogFields(o: UploadOutcome): object {
  switch (o.kind) {
    case 'received': return { track_id: o.trackId }
    case 'already_received': return { track_id: o.trackId }
    case 'refused': case 'not_authorized': return { status: o.status, glosa: o.glosa }
    case 'retry': return { reason: o.reason, status: o.status }
  }
}

function registroLogFields(o: { kind: string }): object {
  const fields = o as { codResp?: number; descResp?: string; reason?: string; eventos?: readonly unknown[]; fecha?: string }
  if (fields.reason !== undefined) return { reason: fields.reason }
  if (fields.eventos !== undefined) return { eventos: fields.eventos.length }
  if (fields.fecha !== undefined) return { fecha: fields.fecha }
  return { cod_resp: fields.codResp, desc_resp: fields.descResp }
}

function envioLogFields(o: EnvioOutcome): object {
  if (o.kind === 'retry') return { reason: o.reason }
  if (o.kind === 'processed') return { estado: o.estado, aceptados: o.aceptados, rechazados: o.rechazados, reparos: o.reparos }
  return { estado: o.estado }
}
