// The SII simulator: an HTTP server on the SII's real paths and message formats (DESIGN §9, docs/sii-protocol.md §6–§7), so a
// client cannot tell it from the SII except by its address. SOAP (DTEWS) and DTEUpload of maullin/palena and the
// boleta REST API of apicert/pangal are all served on one origin: the client's `--sii <origin>` target points every
// host at it. The wire contract is docs/decisions/simulator.md "Wire contract".
import { createHash } from 'node:crypto'
import { normalizeRut, parseRut } from '../../domain/rut'
import { authorityKeys } from '../../xml/authority-keys'
import { checkToken, issueSeed, issueToken, tokenFromCookie, type TokenCheck } from './auth'
import {
  checkEnvelope, checkSender, decideDocuments, isRefusal, readEnvelope, rejectionOfRefusal,
  type DocumentVerdict, type ReadEnvelope, type UploadParties,
} from './checks'
import { countersOf, dteStatus, parseFechaConsulta, type DteQuery } from './queries'
import { parseSoapRequest, recepcionDte, respuesta, soapFault, soapResponse, wsdl, type Field, type SoapCall } from './soap'
import { envioState } from './states'
import { SimulatorStore, type Channel, type DocumentoRow, type EnvioRow, type StoredRejection } from './store'

export interface SimulatorOptions {
  /** 0 (default) picks a free port. */
  readonly port?: number
  /** Default 127.0.0.1. */
  readonly hostname?: string
  /** `<dataDir>/sii-simulator.db` keeps state across restarts; null or absent: in memory. */
  readonly dataDir?: string | null
  readonly faults?: {
    /** Share of requests answered HTTP 503 without being processed. */
    readonly errorRate?: number
    /** Share of requests processed but answered only after `hangMs` (the answer is lost to a client that timed out). */
    readonly hangRate?: number
    /** Share answered by an HTML maintenance page with HTTP 200, unprocessed (docs/sii-protocol.md §6.4, §6.8). */
    readonly htmlRate?: number
    /** Default 45 000: beyond the 30 s every Timbre SII call allows (DESIGN §6). */
    readonly hangMs?: number
  }
  /** Time from upload to the final state, split into REC, SOK, CRT, FOK, PRD steps. Default 3000. */
  readonly processingDelayMs?: number
  readonly clock?: () => Date
  /** Draws for faults only (one per request when any rate is above 0), so tests can seed them. */
  readonly random?: () => number
  readonly log?: (event: string, fields: object) => void
}

export interface RunningSimulator {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string
  readonly port: number
  stop(): Promise<void>
}

/** The SII does not publish its upload limit; 2000 DTEs of a few KB fit well under this. */
export const MAX_ENVELOPE_BYTES = 50 * 1024 * 1024
const DEFAULT_PROCESSING_DELAY_MS = 3000
const DEFAULT_HANG_MS = 45_000

export async function startSimulator(opts: SimulatorOptions = {}): Promise<RunningSimulator> {
  const store = new SimulatorStore(opts.dataDir ?? null)
  const sim = new Simulator(store, opts)
  const server = Bun.serve({
    hostname: opts.hostname ?? '127.0.0.1',
    port: opts.port ?? 0,
    maxRequestBodySize: MAX_ENVELOPE_BYTES + 1024 * 1024,
    fetch: (req, srv) => sim.handle(req, (seconds) => srv.timeout(req, seconds)),
  })
  const port = server.port ?? 0
  const url = `http://${server.hostname === '::1' ? '[::1]' : server.hostname}:${port}`
  opts.log?.('sii_simulator.started', { url })
  let stopping: Promise<void> | null = null
  return {
    url,
    port,
    stop() {
      stopping ??= (async () => {
        sim.releaseHangs()
        await server.stop(true)
        store.close()
        opts.log?.('sii_simulator.stopped', { url })
      })()
      return stopping
    },
  }
}

type Handler = (req: Request, url: URL) => Promise<Response> | Response

class Simulator {
  private readonly clock: () => Date
  private readonly random: () => number
  private readonly delayMs: number
  private readonly keys = authorityKeys({ allowSimulator: true })
  private readonly hangs = new Set<() => void>()

  constructor(
    private readonly store: SimulatorStore,
    private readonly opts: SimulatorOptions,
  ) {
    this.clock = opts.clock ?? (() => new Date())
    this.random = opts.random ?? Math.random
    this.delayMs = opts.processingDelayMs ?? DEFAULT_PROCESSING_DELAY_MS
  }

  /** Resolves every pending hang at once, so stop() never waits for one. */
  releaseHangs(): void {
    for (const release of this.hangs) release()
    this.hangs.clear()
  }

  async handle(req: Request, setTimeoutSeconds: (seconds: number) => void): Promise<Response> {
    const url = new URL(req.url)
    const started = Date.now()
    const fault = this.drawFault()
    let res: Response
    if (fault === '503') res = new Response('<html><body><h1>503 Service Unavailable</h1></body></html>', { status: 503, headers: { 'content-type': 'text/html' } })
    else if (fault === 'html') res = maintenancePage()
    else res = await this.route(req, url)
    if (fault === 'hang') {
      setTimeoutSeconds(0)  // Bun would otherwise close the idle connection after 10 s, a different fault
      await this.hang(this.opts.faults?.hangMs ?? DEFAULT_HANG_MS)
    }
    this.opts.log?.('sii_simulator.request', { method: req.method, path: url.pathname, status: res.status, fault, ms: Date.now() - started })
    return res
  }

  private drawFault(): 'none' | '503' | 'hang' | 'html' {
    const f = this.opts.faults ?? {}
    const [error, hang, html] = [f.errorRate ?? 0, f.hangRate ?? 0, f.htmlRate ?? 0]
    if (error + hang + html <= 0) return 'none'
    const draw = this.random()
    if (draw < error) return '503'
    if (draw < error + hang) return 'hang'
    if (draw < error + hang + html) return 'html'
    return 'none'
  }

  private hang(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const release = (): void => {
        clearTimeout(timer)
        this.hangs.delete(release)
        resolve()
      }
      const timer = setTimeout(release, ms)
      this.hangs.add(release)
    })
  }

  private async route(req: Request, url: URL): Promise<Response> {
    const path = url.pathname
    const soapOperation = SOAP_SERVICES[path]
    try {
      if (soapOperation !== undefined) {
        if (req.method === 'GET' && [...url.searchParams.keys()].some((k) => k.toLowerCase() === 'wsdl')) {
          return new Response(wsdl(soapOperation, `${url.origin}${path}`), { headers: { 'content-type': 'text/xml; charset=utf-8' } })
        }
        if (req.method === 'POST') return await this.soap(req, soapOperation)
      }
      const handler = this.restHandler(req.method, path)
      if (handler !== null) return await handler(req, url)
      return new Response('<html><body><h1>404 Not Found</h1></body></html>', { status: 404, headers: { 'content-type': 'text/html' } })
    } catch (err) {
      this.opts.log?.('sii_simulator.internal_error', { path, error: err instanceof Error ? err.stack ?? err.message : String(err) })
      return new Response('Error 500', { status: 500, headers: { 'content-type': 'text/plain' } })
    }
  }

  private restHandler(method: string, path: string): Handler | null {
    if (method === 'POST' && path === '/cgi_dte/UPL/DTEUpload') return (req) => this.dteUpload(req)
    if (method === 'GET' && path === `${REST}/boleta.electronica.semilla`) return () => this.restSeed()
    if (method === 'POST' && path === `${REST}/boleta.electronica.token`) return (req) => this.restToken(req)
    if (method === 'POST' && path === `${REST}/boleta.electronica.envio`) return (req) => this.restEnvio(req)
    if (method === 'GET' && path.startsWith(`${REST}/boleta.electronica.envio/`)) return (req, url) => this.restEnvioStatus(req, url)
    if (method === 'GET' && /^\/recursos\/v1\/boleta\.electronica\/[^/]+\/estado$/.test(path)) return (req, url) => this.restBoletaStatus(req, url)
    return null
  }

  // ---- SOAP (docs/sii-protocol.md §6.2–§6.6) ----

  private async soap(req: Request, operation: string): Promise<Response> {
    let call: SoapCall
    try {
      call = parseSoapRequest(await req.text())
    } catch (err) {
      return soapError(`No se pudo leer el mensaje SOAP: ${err instanceof Error ? err.message : String(err)}`)
    }
    // Axis dispatches on the operation's local name; each .jws holds one operation (docs/sii-protocol.md §6.1).
    if (call.operation !== operation) return soapError(`No such operation '${call.operation}'`)
    const param = (name: string): string => call.params.get(name)?.trim() ?? ''
    const now = this.clock()
    let inner: string
    if (operation === 'getSeed') inner = respuesta([['ESTADO', '00']], [['SEMILLA', issueSeed(this.store, 'soap', now)]])
    else if (operation === 'getToken') inner = tokenRespuesta(issueToken(this.store, 'soap', call.params.get('pszXml') ?? '', now))
    else if (operation === 'getEstUp') inner = this.getEstUp(param, now)
    else inner = this.getEstDte(param, now)
    return new Response(soapResponse(call, inner), { headers: { 'content-type': 'text/xml; charset=utf-8' } })
  }

  /** docs/sii-protocol.md §6.5: RESP_HDR with TRACKID, ESTADO, GLOSA, NUM_ATENCION; RESP_BODY with per-type counters once EPR. */
  private getEstUp(param: (name: string) => string, now: Date): string {
    const tokenProblem = queryTokenHeader(checkToken(this.store, 'soap', param('Token'), now))
    if (tokenProblem !== null) return respuesta(tokenProblem)
    const company = normalizeRut(`${param('RutCompania')}-${param('DvCompania')}`)
    const envio = company === null ? null : this.store.findEnvio('soap', param('TrackId'))
    if (envio === null || envio.rut_emisor !== company) return respuesta(paramError(this.atencion(now)))
    const state = envioState(envio, now)
    const hdr: Field[] = [['TRACKID', envio.track_id], ['ESTADO', state.estado], ['GLOSA', state.glosa], ['NUM_ATENCION', this.atencion(now)]]
    if (state.estado !== 'EPR') return respuesta(hdr)
    const body = countersOf(this.store.documentsOf(envio.track_id)).flatMap((c): Field[] => [
      ['TIPO_DOCTO', c.tipo], ['INFORMADOS', c.informados], ['ACEPTADOS', c.aceptados], ['RECHAZADOS', c.rechazados], ['REPAROS', c.reparos],
    ])
    return respuesta(hdr, body)
  }

  /**
   * docs/sii-protocol.md §6.6. RutConsultante must be the token's holder (the authenticated user); the company's envelopes may be
   * queried by any authenticated user (the simulator keeps no registry of who is authorized for which company).
   */
  private getEstDte(param: (name: string) => string, now: Date): string {
    const tokenCheck = checkToken(this.store, 'soap', param('Token'), now)
    const tokenProblem = queryTokenHeader(tokenCheck)
    if (tokenProblem !== null) return respuesta(tokenProblem)
    const consultante = normalizeRut(`${param('RutConsultante')}-${param('DvConsultante')}`)
    if (consultante === null) return respuesta([['ESTADO', '-10'], ['GLOSA_ESTADO', 'Error validando RUT usuario'], ['ERR_CODE', '-10'], ['GLOSA_ERR', 'RutConsultante no es un RUT válido'], ['NUM_ATENCION', this.atencion(now)]])
    if (tokenCheck.isValid && consultante !== tokenCheck.rut) {
      return respuesta([['ESTADO', '-6'], ['GLOSA_ESTADO', 'Usuario no autorizado'], ['ERR_CODE', '-6'], ['GLOSA_ERR', `RutConsultante ${consultante} no es el usuario autenticado`], ['NUM_ATENCION', this.atencion(now)]])
    }
    const query = dteQuery({
      company: `${param('RutCompania')}-${param('DvCompania')}`,
      receptor: `${param('RutReceptor')}-${param('DvReceptor')}`,
      tipo: param('TipoDte'),
      folio: param('FolioDte'),
      fecha: param('FechaEmisionDte'),
      monto: param('MontoDte'),
    })
    if (query === null) return respuesta(paramError(this.atencion(now)))
    const status = dteStatus(this.store, query, now)
    return respuesta([
      ['ESTADO', status.estado], ['GLOSA_ESTADO', status.glosaEstado], ['ERR_CODE', status.errCode], ['GLOSA_ERR', status.glosaErr], ['NUM_ATENCION', this.atencion(now)],
    ])
  }

  /** NUM_ATENCION: "number ( YYYY/MM/DD HH:MM:SS)" (docs/sii-protocol.md §6.5). */
  private atencion(now: Date): string {
    return `${this.store.next('atencion')} ( ${santiago(now).replace('T', ' ').replace(/-/g, '/')})`
  }

  // ---- DTEUpload (docs/sii-protocol.md §6.4) ----

  private async dteUpload(req: Request): Promise<Response> {
    const now = this.clock()
    const form = await readForm(req)
    const token = checkToken(this.store, 'soap', tokenFromCookie(req.headers.get('cookie')), now)
    const rutSender = form.kind === 'form' ? rutOf(form.data, 'rutSender', 'dvSender') : null
    const rutCompany = form.kind === 'form' ? rutOf(form.data, 'rutCompany', 'dvCompany') : null
    const answer = (status: number, trackId: string | null = null, errors: readonly string[] = []): Response =>
      xmlResponse(recepcionDte({
        rutSender: rutSender ?? formText(form, 'rutSender', 'dvSender'),
        rutCompany: rutCompany ?? formText(form, 'rutCompany', 'dvCompany'),
        file: form.kind === 'form' ? form.fileName : '',
        timestamp: santiago(now).replace('T', ' '),
        status,
        trackId,
        errors,
      }))
    if (!token.isValid) return answer(5)
    if (form.kind === 'cut') return answer(3, null, [form.reason])
    if (form.bytes.length === 0 || form.bytes.length > MAX_ENVELOPE_BYTES) return answer(2, null, [`tamaño ${form.bytes.length} bytes`])
    const sha256 = sha256Hex(form.bytes)
    const earlier = this.store.findEnvioByBytes('soap', sha256)
    // STATUS 99 with the first TRACKID: a simulator choice (docs/sii-protocol.md §6.4 shows TRACKID only with 0; DESIGN §6 keeps the first).
    if (earlier !== null) return answer(99, earlier.track_id)
    const read = readEnvelope(form.bytes, 'EnvioDTE')
    if (isRefusal(read)) return answer(read.status, null, read.errors)
    const refusal = checkSender(read, { rutSender, rutCompany, tokenRut: token.rut })
    if (refusal !== null) return answer(refusal.status, null, refusal.errors)
    const rejection = await checkEnvelope(read, form.bytes)
    const stored = this.store.findEnvioByBytes('soap', sha256)  // a concurrent twin may have landed during the XSD
    if (stored !== null) return answer(99, stored.track_id)
    const trackId = String(this.store.next('soap_track_id')).padStart(10, '0')
    this.record('soap', trackId, sha256, { rutEmisor: rutCompany ?? '', rutEnvia: rutSender ?? '', fileName: form.fileName, now }, read, rejection)
    return answer(0, trackId)
  }

  /**
   * Stores the envelope and decides its documents in one synchronous stretch (no await between the duplicate
   * checks and the insert, so two envelopes carrying one folio cannot both be accepted).
   */
  private record(
    channel: Channel, trackId: string, sha256: string,
    upload: { readonly rutEmisor: string; readonly rutEnvia: string; readonly fileName: string; readonly now: Date },
    read: ReadEnvelope | null, rejection: StoredRejection | null,
  ): void {
    const verdicts: readonly DocumentVerdict[] = read === null
      ? []
      : rejection !== null
        ? read.dtes.map((dte) => ({ fields: dte.fields, estado: 'RCH', errors: rejection.errors }))
        : decideDocuments(read, { authorityKeys: this.keys, acceptedCopy: (r, t, f) => this.store.acceptedCopy(r, t, f) })
    const envio: EnvioRow = {
      track_id: trackId, channel, sha256, rut_emisor: upload.rutEmisor, rut_envia: upload.rutEnvia, file_name: upload.fileName,
      received_at: upload.now.getTime(), delay_ms: this.delayMs, rejection,
    }
    const documentos: DocumentoRow[] = verdicts.map((v, position) => ({
      track_id: trackId, position, rut_emisor: normalizeRut(v.fields.rutEmisor) ?? v.fields.rutEmisor, tipo: v.fields.tipo, folio: v.fields.folio,
      rut_receptor: normalizeRut(v.fields.rutReceptor) ?? v.fields.rutReceptor, fecha_emision: v.fields.fechaEmision, monto: v.fields.montoTotal,
      estado: v.estado, errors: v.errors,
    }))
    this.store.insertEnvio(envio, documentos)
    this.opts.log?.('sii_simulator.envio', { channel, track_id: trackId, rejection: rejection?.estado ?? null, documentos: documentos.map((d) => `${d.tipo}/${d.folio}:${d.estado}`) })
  }

  // ---- Boleta REST (docs/sii-protocol.md §7.3) ----

  private restSeed(): Response {
    const seed = issueSeed(this.store, 'rest', this.clock())
    return xmlResponse(respuesta([['ESTADO', '00']], [['SEMILLA', seed]]), 'application/xml')
  }

  private async restToken(req: Request): Promise<Response> {
    return xmlResponse(tokenRespuesta(issueToken(this.store, 'rest', await req.text(), this.clock())), 'application/xml')
  }

  /**
   * The envío receives every readable upload with a track id and reports its problems in the envelope status
   * (RSC, RFR, RCT as in the SII's example, docs/sii-protocol.md §7.3): only the token (401) and an unreadable form (400) or
   * file size (413) are refused at once. The same bytes again: 200 with the first track id and estado RPT.
   */
  private async restEnvio(req: Request): Promise<Response> {
    const now = this.clock()
    const token = checkToken(this.store, 'rest', tokenFromCookie(req.headers.get('cookie')), now)
    if (!token.isValid) return unauthorized()
    const form = await readForm(req)
    if (form.kind === 'cut') return jsonResponse({ error: form.reason }, 400)
    if (form.bytes.length === 0) return jsonResponse({ error: 'archivo vacío' }, 400)
    if (form.bytes.length > MAX_ENVELOPE_BYTES) return jsonResponse({ error: `archivo de ${form.bytes.length} bytes excede el máximo` }, 413)
    const rutSender = rutOf(form.data, 'rutSender', 'dvSender')
    const rutCompany = rutOf(form.data, 'rutCompany', 'dvCompany')
    const reply = (trackId: string, estado: string): Response => jsonResponse({
      rut_emisor: rutCompany ?? formText(form, 'rutCompany', 'dvCompany'),
      rut_envia: rutSender ?? formText(form, 'rutSender', 'dvSender'),
      trackid: Number(trackId),
      fecha_recepcion: fechaRecepcion(now),
      estado,
      file: form.fileName,
    })
    const sha256 = sha256Hex(form.bytes)
    const earlier = this.store.findEnvioByBytes('rest', sha256)
    if (earlier !== null) return reply(earlier.track_id, 'RPT')
    const read = readEnvelope(form.bytes, 'EnvioBOLETA')
    const readable = isRefusal(read) ? null : read
    const rejection = isRefusal(read) ? rejectionOfRefusal(read) : await this.restRejection(read, form.bytes, { rutSender, rutCompany, tokenRut: token.rut })
    const stored = this.store.findEnvioByBytes('rest', sha256)
    if (stored !== null) return reply(stored.track_id, 'RPT')
    const trackId = String(this.store.next('rest_track_id'))
    this.record('rest', trackId, sha256, { rutEmisor: rutCompany ?? formText(form, 'rutCompany', 'dvCompany'), rutEnvia: rutSender ?? formText(form, 'rutSender', 'dvSender'), fileName: form.fileName, now }, readable, rejection)
    return reply(trackId, 'REC')
  }

  /** The REST envío reports sender and company problems as RCT, after the upload (docs/sii-protocol.md §7.3 example). */
  private async restRejection(read: ReadEnvelope, bytes: Uint8Array, parties: UploadParties): Promise<StoredRejection | null> {
    const refusal = checkSender(read, parties)
    return refusal !== null ? rejectionOfRefusal(refusal) : checkEnvelope(read, bytes)
  }

  /** `GET …/boleta.electronica.envio/{rut}-{dv}-{trackid}` (docs/sii-protocol.md §7.3 item 4). */
  private restEnvioStatus(req: Request, url: URL): Response {
    const now = this.clock()
    if (!checkToken(this.store, 'rest', tokenFromCookie(req.headers.get('cookie')), now).isValid) return unauthorized()
    const m = /^([0-9]+)-([0-9kK])-([0-9]+)$/.exec(decodeURIComponent(url.pathname.slice(`${REST}/boleta.electronica.envio/`.length)).replace(/\/estado$/, ''))
    const company = m === null ? null : normalizeRut(`${m[1]}-${m[2]}`)
    const envio = m === null || company === null ? null : this.store.findEnvio('rest', String(Number(m[3])))
    if (envio === null || envio.rut_emisor !== company) return jsonResponse({ error: 'trackid no encontrado' }, 404)
    const state = envioState(envio, now)
    const documentos = state.isFinal ? this.store.documentsOf(envio.track_id) : null
    return jsonResponse({
      rut_emisor: envio.rut_emisor,
      rut_envia: envio.rut_envia,
      trackid: Number(envio.track_id),
      fecha_recepcion: fechaRecepcion(new Date(envio.received_at)),
      estado: state.estado,
      glosa: state.glosa,
      estadistica: documentos === null ? null : countersOf(documentos),
      detalle_rep_rech: documentos === null ? null : documentos.filter((d) => d.estado !== 'DOK').map((d) => ({
        tipo: d.tipo, folio: d.folio, estado: d.estado, descripcion: DOC_DESCRIPCION[d.estado] ?? d.estado, error: d.errors,
      })),
    })
  }

  /** `GET …/boleta.electronica/{rut}-{dv}-{tipo}-{folio}/estado?rut_receptor&dv_receptor&monto&fechaEmision` (§7.3 item 5). */
  private restBoletaStatus(req: Request, url: URL): Response {
    const now = this.clock()
    if (!checkToken(this.store, 'rest', tokenFromCookie(req.headers.get('cookie')), now).isValid) return unauthorized()
    const m = /^\/recursos\/v1\/boleta\.electronica\/([0-9]+)-([0-9kK])-([0-9]+)-([0-9]+)\/estado$/.exec(url.pathname)
    const q = (name: string): string | null => url.searchParams.get(name)
    const missing = ['rut_receptor', 'dv_receptor', 'monto', 'fechaEmision'].filter((name) => (q(name) ?? '').trim() === '')
    // [3P] the server demands all four query parameters although the spec marks them optional (docs/sii-protocol.md §7.3 item 5).
    if (m === null || missing.length > 0) return jsonResponse({ codigo: 'ERR', descripcion: `Parámetros faltantes o inválidos: ${missing.join(', ') || 'ruta'}` }, 400)
    const query = dteQuery({ company: `${m[1]}-${m[2]}`, receptor: `${q('rut_receptor')}-${q('dv_receptor')}`, tipo: m[3] ?? '', folio: m[4] ?? '', fecha: q('fechaEmision') ?? '', monto: q('monto') ?? '' })
    if (query === null) return jsonResponse({ codigo: 'ERR', descripcion: 'Parámetros inválidos' }, 400)
    const status = dteStatus(this.store, query, now)
    return jsonResponse({ codigo: status.estado, descripcion: status.glosaErr === '' ? status.glosaEstado : `${status.glosaEstado}: ${status.glosaErr}` })
  }
}

const REST = '/recursos/v1'

/** Path → the one operation each DTEWS service offers (docs/sii-protocol.md §6.1). */
const SOAP_SERVICES: Readonly<Record<string, string>> = {
  '/DTEWS/CrSeed.jws': 'getSeed',
  '/DTEWS/GetTokenFromSeed.jws': 'getToken',
  '/DTEWS/QueryEstUp.jws': 'getEstUp',
  '/DTEWS/QueryEstDte.jws': 'getEstDte',
}

const DOC_DESCRIPCION: Readonly<Record<string, string>> = {
  RCH: 'Dte Rechazado',
  RPR: 'Dte Aceptado con Reparos',
  RLV: 'Dte Aceptado con Reparos Leves',
}

/** getToken's inner reply (docs/sii-protocol.md §6.3): TOKEN in RESP_BODY only when ESTADO is 00. */
function tokenRespuesta(outcome: { readonly estado: string; readonly glosa: string; readonly token: string | null }): string {
  const hdr: Field[] = [['ESTADO', outcome.estado], ['GLOSA', outcome.glosa]]
  return outcome.token === null ? respuesta(hdr) : respuesta(hdr, [['TOKEN', outcome.token]])
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
function paramError(numAtencion: string): Field[] {
  return [['ESTADO', '-11'], ['GLOSA', 'ERROR: ENVIO NO ES DE LA EMPRESA O PARAMETROS INCORRECTOS'], ['ERR_CODE', '1'], ['SQL_CODE', '0'], ['SRV_CODE', '0'], ['NUM_ATENCION', numAtencion]]
}

function dteQuery(raw: { company: string; receptor: string; tipo: string; folio: string; fecha: string; monto: string }): DteQuery | null {
  const rutEmisor = normalizeRut(raw.company)
  const tipo = Number(raw.tipo)
  const folio = Number(raw.folio)
  if (rutEmisor === null || !Number.isSafeInteger(tipo) || !Number.isSafeInteger(folio) || raw.tipo === '' || raw.folio === '') return null
  const receptorGiven = raw.receptor.replace(/-/g, '').trim() !== ''
  const rutReceptor = receptorGiven ? normalizeRut(raw.receptor) : null
  if (receptorGiven && rutReceptor === null) return null
  const fechaEmision = raw.fecha.trim() === '' ? null : parseFechaConsulta(raw.fecha)
  if (raw.fecha.trim() !== '' && fechaEmision === null) return null
  if (raw.monto.trim() !== '' && !/^-?\d+(\.\d+)?$/.test(raw.monto.trim())) return null
  return { rutEmisor, tipo, folio, rutReceptor, fechaEmision, monto: raw.monto.trim() === '' ? null : raw.monto.trim() }
}

type Form =
  | { readonly kind: 'form'; readonly data: FormData; readonly bytes: Uint8Array; readonly fileName: string }
  | { readonly kind: 'cut'; readonly reason: string; readonly data: FormData | null }

/**
 * The multipart form of DTEUpload and the REST envío (docs/sii-protocol.md §6.4): a body that does not parse is a cut file
 * (STATUS 3). `archivo` may come gzip-compressed (LibreDTE sends `application/gzip`, §6.4): inflated here.
 */
async function readForm(req: Request): Promise<Form> {
  let data: FormData
  try {
    data = await req.formData()
  } catch (err) {
    return { kind: 'cut', reason: `multipart ilegible: ${err instanceof Error ? err.message : String(err)}`, data: null }
  }
  const archivo = data.get('archivo')
  if (archivo === null || typeof archivo === 'string') return { kind: 'form', data, bytes: new Uint8Array(), fileName: '' }
  let bytes = new Uint8Array(await archivo.arrayBuffer())
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = new Uint8Array(Bun.gunzipSync(bytes))
    } catch {
      return { kind: 'cut', reason: 'archivo gzip truncado', data }
    }
  }
  return { kind: 'form', data, bytes, fileName: archivo.name }
}

function rutOf(data: FormData, body: string, dv: string): string | null {
  const rut = parseRut(`${String(data.get(body) ?? '')}-${String(data.get(dv) ?? '')}`)
  return rut === null ? null : `${rut.body}-${rut.dv}`
}

function formText(form: Form, body: string, dv: string): string {
  if (form.data === null) return ''
  const b = String(form.data.get(body) ?? '')
  const d = String(form.data.get(dv) ?? '')
  return b === '' && d === '' ? '' : `${b}-${d}`
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

function xmlResponse(xml: string, contentType = 'text/xml'): Response {
  return new Response(xml, { headers: { 'content-type': contentType } })
}

function jsonResponse(body: object, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })
}

function unauthorized(): Response {
  return jsonResponse({ error: 'TOKEN invalido' }, 401)
}

function soapError(message: string): Response {
  return new Response(soapFault(message), { status: 500, headers: { 'content-type': 'text/xml; charset=utf-8' } })
}

/** What the SII shows in maintenance windows: HTML with HTTP 200 (docs/sii-protocol.md §6.4 failure modes, §6.8). */
function maintenancePage(): Response {
  return new Response(
    '<!DOCTYPE html><html><head><title>SII - Servicio no disponible</title></head><body><h1>Servicio en mantención</h1>' +
      '<p>Estimado contribuyente: el servicio no se encuentra disponible en este momento. Intente más tarde.</p></body></html>',
    { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' } },
  )
}

const SANTIAGO = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/Santiago', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
})

/** `YYYY-MM-DDTHH:MM:SS`, Santiago local time: the SII's clock (docs/sii-protocol.md §1.3). */
function santiago(d: Date): string {
  const p = Object.fromEntries(SANTIAGO.formatToParts(d).map((x) => [x.type, x.value]))
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`
}

/** `30/07/2020 07:57:42`, the boleta API's `fecha_recepcion` (docs/sii-protocol.md §7.3 item 4). */
function fechaRecepcion(d: Date): string {
  const [date, time] = santiago(d).split('T') as [string, string]
  const [y, m, day] = date.split('-')
  return `${day}/${m}/${y} ${time}`
}

