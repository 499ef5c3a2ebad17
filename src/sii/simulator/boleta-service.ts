// The boleta REST API under /recursos/v1/ (docs/sii-protocol.md §7.3), as src/sii/client/auth.ts, upload.ts and
// boleta-rest.ts call it: seed and token (items 1–2, the RESPUESTA as XML), the envío of an EnvioBOLETA (item 3), the
// envelope's status (item 4) and one boleta's status (item 5), in JSON. A bad token is HTTP 401 on every call but
// seed and token.
import { santiagoTimestamp } from '../../clock'
import { normalizeRut } from '../../domain/rut'
import { checkToken, tokenFromCookie, type TokenCheck } from './auth'
import { seedRespuesta, tokenRespuesta } from './auth-answers'
import { MAX_ENVELOPE_BYTES, pathIs, type Route, type SimulatorContext } from './channel'
import { checkEnvelope, checkSender, isRefusal, readEnvelope, rejectionOfRefusal, type ReadEnvelope, type UploadParties } from './checks'
import { parseDteQuery } from './dte-query-params'
import {
  earlierTrackId, readUploadForm, recordEnvelope, sha256Hex, uploadRuts,
} from './envelope-reception'
import { jsonResponse, textResponse } from './http-responses'
import { countersOf, dteStatus } from './queries'
import { envioState } from './states'
import type { StoredRejection } from './store'

const REST = '/recursos/v1'
const ENVIO_STATUS_PATH = `${REST}/boleta.electronica.envio/`

export const BOLETA_ROUTES: readonly Route[] = [
  { method: 'GET', matches: pathIs(`${REST}/boleta.electronica.semilla`), answer: answerSeed },
  { method: 'POST', matches: pathIs(`${REST}/boleta.electronica.token`), answer: answerToken },
  { method: 'POST', matches: pathIs(`${REST}/boleta.electronica.envio`), answer: receiveEnvio },
  { method: 'GET', matches: (url) => url.pathname.startsWith(ENVIO_STATUS_PATH), answer: answerEnvioStatus },
  // Any {id} reaches the handler, which answers a malformed one with 400.
  { method: 'GET', matches: (url) => /^\/recursos\/v1\/boleta\.electronica\/[^/]+\/estado$/.test(url.pathname), answer: answerBoletaStatus },
]

const DOC_DESCRIPCION: Readonly<Record<string, string>> = {
  RCH: 'Dte Rechazado',
  RPR: 'Dte Aceptado con Reparos',
  RLV: 'Dte Aceptado con Reparos Leves',
}

function answerSeed(ctx: SimulatorContext): Response {
  return textResponse(seedRespuesta(ctx.store, 'rest', ctx.clock()), 'application/xml')
}

async function answerToken(ctx: SimulatorContext, req: Request): Promise<Response> {
  return textResponse(tokenRespuesta(ctx.store, 'rest', await req.text(), ctx.clock()), 'application/xml')
}

function cookieToken(ctx: SimulatorContext, req: Request, now: Date): TokenCheck {
  return checkToken(ctx.store, 'rest', tokenFromCookie(req.headers.get('cookie')), now)
}

function unauthorized(): Response {
  return jsonResponse({ error: 'TOKEN invalido' }, 401)
}

/**
 * The envío receives every readable upload with a track id and reports its problems in the envelope status
 * (RSC, RFR, RCT as in the SII's example, docs/sii-protocol.md §7.3): only the token (401) and an unreadable form (400) or
 * file size (413) are refused at once. The same bytes again: 200 with the first track id and estado RPT.
 */
async function receiveEnvio(ctx: SimulatorContext, req: Request): Promise<Response> {
  const now = ctx.clock()
  const token = cookieToken(ctx, req, now)
  if (!token.isValid) return unauthorized()
  const form = await readUploadForm(req)
  if (form.kind === 'cut') return jsonResponse({ error: form.reason }, 400)
  if (form.bytes.length === 0) return jsonResponse({ error: 'archivo vacío' }, 400)
  if (form.bytes.length > MAX_ENVELOPE_BYTES) return jsonResponse({ error: `archivo de ${form.bytes.length} bytes excede el máximo` }, 413)
  const ruts = uploadRuts(form)
  const reply = (trackId: string, estado: string): Response => jsonResponse({
    rut_emisor: ruts.echoedCompany,
    rut_envia: ruts.echoedSender,
    trackid: Number(trackId),
    fecha_recepcion: fechaRecepcion(now),
    estado,
    file: form.fileName,
  })
  const sha256 = sha256Hex(form.bytes)
  const earlier = earlierTrackId(ctx, 'rest', sha256)
  if (earlier !== null) return reply(earlier, 'RPT')
  const read = readEnvelope(form.bytes, 'EnvioBOLETA')
  const readable = isRefusal(read) ? null : read
  const rejection = isRefusal(read) ? rejectionOfRefusal(read) : await envioRejection(read, form.bytes, { rutSender: ruts.rutSender, rutCompany: ruts.rutCompany, tokenRut: token.rut })
  const recorded = recordEnvelope(ctx, 'rest', {
    sha256, rutEmisor: ruts.echoedCompany, rutEnvia: ruts.echoedSender, fileName: form.fileName, now, read: readable, rejection,
  })
  return reply(recorded.trackId, recorded.isRepeat ? 'RPT' : 'REC')
}

/** The REST envío reports sender and company problems as RCT, after the upload (docs/sii-protocol.md §7.3 example). */
async function envioRejection(read: ReadEnvelope, bytes: Uint8Array, parties: UploadParties): Promise<StoredRejection | null> {
  const refusal = checkSender(read, parties)
  return refusal !== null ? rejectionOfRefusal(refusal) : checkEnvelope(read, bytes)
}

/** `GET …/boleta.electronica.envio/{rut}-{dv}-{trackid}` (docs/sii-protocol.md §7.3 item 4). */
function answerEnvioStatus(ctx: SimulatorContext, req: Request, url: URL): Response {
  const now = ctx.clock()
  if (!cookieToken(ctx, req, now).isValid) return unauthorized()
  const m = /^([0-9]+)-([0-9kK])-([0-9]+)$/.exec(decodeURIComponent(url.pathname.slice(ENVIO_STATUS_PATH.length)).replace(/\/estado$/, ''))
  const company = m === null ? null : normalizeRut(`${m[1]}-${m[2]}`)
  const envio = m === null || company === null ? null : ctx.store.findEnvio('rest', String(Number(m[3])))
  if (envio === null || envio.rut_emisor !== company) return jsonResponse({ error: 'trackid no encontrado' }, 404)
  const state = envioState(envio, now)
  const documentos = state.isFinal ? ctx.store.documentsOf(envio.track_id) : null
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
function answerBoletaStatus(ctx: SimulatorContext, req: Request, url: URL): Response {
  const now = ctx.clock()
  if (!cookieToken(ctx, req, now).isValid) return unauthorized()
  const m = /^\/recursos\/v1\/boleta\.electronica\/([0-9]+)-([0-9kK])-([0-9]+)-([0-9]+)\/estado$/.exec(url.pathname)
  const q = (name: string): string | null => url.searchParams.get(name)
  const missing = ['rut_receptor', 'dv_receptor', 'monto', 'fechaEmision'].filter((name) => (q(name) ?? '').trim() === '')
  // [3P] the server demands all four query parameters although the spec marks them optional (docs/sii-protocol.md §7.3 item 5).
  if (m === null || missing.length > 0) return jsonResponse({ codigo: 'ERR', descripcion: `Parámetros faltantes o inválidos: ${missing.join(', ') || 'ruta'}` }, 400)
  const query = parseDteQuery({ company: `${m[1]}-${m[2]}`, receptor: `${q('rut_receptor')}-${q('dv_receptor')}`, tipo: m[3] ?? '', folio: m[4] ?? '', fecha: q('fechaEmision') ?? '', monto: q('monto') ?? '' })
  if (query === null) return jsonResponse({ codigo: 'ERR', descripcion: 'Parámetros inválidos' }, 400)
  const status = dteStatus(ctx.store, query, now)
  return jsonResponse({ codigo: status.estado, descripcion: status.glosaErr === '' ? status.glosaEstado : `${status.glosaEstado}: ${status.glosaErr}` })
}

/** `30/07/2020 07:57:42`, the boleta API's `fecha_recepcion` (docs/sii-protocol.md §7.3 item 4). */
function fechaRecepcion(d: Date): string {
  const [date, time] = santiagoTimestamp(d).split('T') as [string, string]
  const [y, m, day] = date.split('-')
  return `${day}/${m}/${y} ${time}`
}
