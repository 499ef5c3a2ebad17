// A fake SII portal for the portal client's tests, on real sockets: a node:tls server that asks every client for its
// certificate (Bun's node:https and Bun.serve expose no peer certificate; node:tls does) and speaks just enough
// HTTP/1.1 (one request per connection, Connection: close), and a plain Bun.serve on 127.0.0.1 for the http parts.
// Its server certificate is issued by the simulator portal's CA (src/sii/simulator/portal-ca.*.pem), which the client
// trusts for an origin target: the test exercises the client's real trust path, no test-only option. Scenarios are
// written per test as a handler; `rcvPortal` is the happy portal most tests spoil one answer of.
import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { createServer, type Server, type TLSSocket } from 'node:tls'
import { gzipSync } from 'node:zlib'
import forge from 'node-forge'
import {
  resumenDeDetalles, writeRegistroComprasCsv, writeRegistroVentasCsv, type DetalleRcv, type SeccionCompras,
} from '../../src/domain/rcv'
import { parseRut } from '../../src/domain/rut'
import { FACADE_NAMESPACE, PORTAL_PATHS, SESSION_INVALID_TEXT } from '../../src/sii/portal-protocol'
import portalCaCert from '../../src/sii/simulator/portal-ca.cert.pem' with { type: 'text' }
import portalCaKey from '../../src/sii/simulator/portal-ca.key.pem' with { type: 'text' }

export interface SeenRequest {
  readonly scheme: 'http' | 'https'
  readonly method: string
  /** Path and query. */
  readonly target: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** DER of the certificate the client presented; null when it presented none (or over plain http). */
  readonly peerCertificate: Buffer | null
}

export interface Reply {
  readonly status: number
  readonly headers?: readonly (readonly [string, string])[]
  readonly body?: string | Uint8Array
  /** Never answer: the client's timeout must end the request. */
  readonly hang?: boolean
}

export type Handler = (req: SeenRequest) => Reply | Promise<Reply>

export interface FakePortal {
  readonly httpsOrigin: string
  readonly httpOrigin: string
  readonly seen: SeenRequest[]
  handler: Handler
  stop(): Promise<void>
}

let serverIdentity: { readonly keyPem: string; readonly certPem: string } | undefined

/** A TLS server certificate for 127.0.0.1 issued by the simulator portal's CA. */
function portalServerIdentity(): { readonly keyPem: string; readonly certPem: string } {
  if (serverIdentity !== undefined) return serverIdentity
  const key = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
  const keyPem = key.export({ type: 'pkcs1', format: 'pem' }).toString()
  const cert = forge.pki.createCertificate()
  cert.publicKey = forge.pki.publicKeyFromPem(createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString())
  cert.serialNumber = '0badcafe'
  cert.validity.notBefore = new Date(Date.now() - 86_400_000)
  cert.validity.notAfter = new Date(Date.now() + 30 * 86_400_000)
  cert.setSubject([{ shortName: 'CN', value: '127.0.0.1' }])
  cert.setIssuer(forge.pki.certificateFromPem(portalCaCert).subject.attributes)
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
  ])
  cert.sign(forge.pki.privateKeyFromPem(portalCaKey), forge.md.sha256.create())
  serverIdentity = { keyPem, certPem: forge.pki.certificateToPem(cert) }
  return serverIdentity
}

export async function startFakePortal(handler: Handler): Promise<FakePortal> {
  const seen: SeenRequest[] = []
  const portal = { seen, handler } as { seen: SeenRequest[]; handler: Handler }
  const dispatch = async (req: SeenRequest): Promise<Reply> => {
    seen.push(req)
    return portal.handler(req)
  }
  const identity = portalServerIdentity()
  const sockets = new Set<TLSSocket>()
  // requestCert without rejecting: the test, not the handshake, decides what a missing certificate means.
  const tls: Server = createServer({ key: identity.keyPem, cert: identity.certPem, requestCert: true, rejectUnauthorized: false }, (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    readHttpRequest(socket, async (head, body) => {
      const raw = socket.getPeerCertificate(true) as { raw?: Buffer } | null
      const reply = await dispatch({ scheme: 'https', ...head, body, peerCertificate: raw?.raw ?? null })
      if (!reply.hang) socket.end(serializeReply(reply))
    })
  })
  await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve))
  const http = Bun.serve({
    hostname: '127.0.0.1', port: 0, idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const headers: Record<string, string> = {}
      request.headers.forEach((v, k) => (headers[k] = v))
      const reply = await dispatch({
        scheme: 'http', method: request.method, target: url.pathname + url.search, path: url.pathname, headers, body: await request.text(), peerCertificate: null,
      })
      if (reply.hang) return new Promise<Response>(() => {})
      const out = new Headers()
      for (const [k, v] of reply.headers ?? []) out.append(k, v)
      return new Response(typeof reply.body === 'object' ? new Uint8Array(reply.body) : reply.body ?? '', { status: reply.status, headers: out })
    },
  })
  return {
    httpsOrigin: `https://127.0.0.1:${(tls.address() as AddressInfo).port}`,
    httpOrigin: `http://127.0.0.1:${http.port}`,
    seen,
    get handler() { return portal.handler },
    set handler(h: Handler) { portal.handler = h },
    async stop() {
      for (const s of sockets) s.destroy()
      await http.stop(true)
      await new Promise<void>((resolve) => tls.close(() => resolve()))
    },
  }
}

/** Request line, headers, and a Content-Length body; enough of HTTP/1.1 for fetch's requests. */
function readHttpRequest(
  socket: TLSSocket, onRequest: (head: Omit<SeenRequest, 'scheme' | 'body' | 'peerCertificate'>, body: string) => Promise<void>,
): void {
  let buffer = Buffer.alloc(0)
  let done = false
  socket.on('data', (chunk: Buffer) => {
    if (done) return
    buffer = Buffer.concat([buffer, chunk])
    const end = buffer.indexOf('\r\n\r\n')
    if (end < 0) return
    const [requestLine = '', ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    const length = Number(headers['content-length'] ?? 0)
    if (buffer.length < end + 4 + length) return
    done = true
    const [method = '', target = ''] = requestLine.split(' ')
    void onRequest({ method, target, path: target.split('?')[0] ?? '', headers }, buffer.subarray(end + 4, end + 4 + length).toString('utf8'))
  })
}

function serializeReply(reply: Reply): Buffer {
  const body = typeof reply.body === 'string' ? Buffer.from(reply.body, 'utf8') : Buffer.from(reply.body ?? new Uint8Array())
  const head = [`HTTP/1.1 ${reply.status} X`, ...(reply.headers ?? []).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${body.length}`, 'Connection: close']
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), body])
}

// ------------------------------------------------------------------------------------------------ the RCV portal

export const TOKEN = 'TKN-4f1d9a7e'
export const CSESSIONID = 'CS-77aa'

export const json = (value: unknown, status = 200): Reply => ({ status, headers: [['Content-Type', 'application/json; charset=utf-8']], body: JSON.stringify(value) })
export const ok = (data: unknown): Reply => json({ data, respEstado: { codRespuesta: 0, msgeRespuesta: null } })
export const sessionGone: Reply = json({ data: null, respEstado: { codRespuesta: 99, msgeRespuesta: SESSION_INVALID_TEXT.toUpperCase().replace('VALIDO', 'VÁLIDO') } })

export interface FacadeCall {
  readonly op: string
  readonly body: {
    readonly metaData: { readonly namespace: string; readonly conversationId: string; readonly transactionId: string; readonly page: null }
    readonly data: Readonly<Record<string, unknown>>
  }
  readonly cookie: string
}

export interface RcvPortalState {
  /** Details per `COMPRA/<estadoContab>` and `VENTA/`. */
  readonly registros: Readonly<Record<string, readonly DetalleRcv[]>>
  logins: number
  logouts: number
  /** Sessions open now and at most at once. */
  open: number
  maxOpen: number
  readonly facade: FacadeCall[]
  /** getEstadoDescargaDiferida answers `EN PROCESO` this many times before TERMINADO (Infinity: never). */
  pollsBeforeDone: number
  /** Overrides one facade answer (op, request data) → reply; undefined keeps the portal's own. */
  spoil?: (call: FacadeCall) => Reply | undefined
  /** Overrides the file of obtenerArchivoBLOB. */
  archivo?: (csv: string) => Reply
}

export const SECCION_DE: Readonly<Record<string, SeccionCompras>> = { REGISTRO: 'registro', PENDIENTE: 'pendiente', NO_INCLUIR: 'no_incluir', RECLAMADO: 'reclamado' }

/**
 * The portal as research §2.2 and §4.2 describe it: the login by certificate (a 307 keeping the POST, then a 302 with
 * the session cookies, then the RCV's page), the data service (checks cookie and conversationId), the deferred
 * download and autTermino. Requests without the company's certificate are refused at the login.
 */
export function rcvPortal(state: RcvPortalState, companyCertificate: Buffer): Handler {
  const solicitudes = new Map<string, { readonly key: string; readonly tipo: number; polls: number }>()
  return (req) => {
    if (req.path === PORTAL_PATHS.login) {
      if (req.peerCertificate === null || !req.peerCertificate.equals(companyCertificate)) return { status: 403, body: '<html>Certificado no reconocido</html>' }
      return { status: 307, headers: [['Location', `/cgi_AUT2000/CAutInicio2.cgi?${req.target.split('?')[1] ?? ''}`], ['Set-Cookie', `CSESSIONID=${CSESSIONID}; Path=/; Secure`]] }
    }
    if (req.path === '/cgi_AUT2000/CAutInicio2.cgi') {
      if (req.method !== 'POST' || !new URLSearchParams(req.body).get('referencia')) return { status: 400, body: 'sin referencia' }
      state.logins++
      state.open++
      state.maxOpen = Math.max(state.maxOpen, state.open)
      return { status: 302, headers: [['Location', PORTAL_PATHS.rcvHome], ['Set-Cookie', `TOKEN=${TOKEN}; Path=/; Secure; HttpOnly`], ['Set-Cookie', 'NETSCAPE_LIVEWIRE.x=1; Path=/']] }
    }
    if (req.path === PORTAL_PATHS.rcvHome) return { status: 200, headers: [['Content-Type', 'text/html']], body: '<html>RCV</html>' }
    if (req.path === PORTAL_PATHS.logout) {
      state.logouts++
      if (req.headers.cookie?.includes(`TOKEN=${TOKEN}`)) state.open--
      return { status: 200, body: '<html>Sesión terminada</html>' }
    }
    if (req.path.startsWith(`${PORTAL_PATHS.facade}obtenerArchivoBLOB/`)) {
      const s = solicitudes.get(decodeURIComponent(req.path.split('/').pop() ?? ''))
      if (s === undefined) return { status: 404, body: 'no' }
      const csv = csvOf(s.key, (state.registros[s.key] ?? []).filter((d) => d.tipoDoc === s.tipo))
      return state.archivo?.(csv) ?? { status: 200, headers: [['Content-Type', 'application/octet-stream']], body: gzipSync(csv) }
    }
    if (req.path.startsWith(PORTAL_PATHS.facade)) {
      const call: FacadeCall = { op: req.path.slice(PORTAL_PATHS.facade.length), body: JSON.parse(req.body), cookie: req.headers.cookie ?? '' }
      state.facade.push(call)
      if (!call.cookie.includes(`TOKEN=${TOKEN}`) || call.body.metaData.conversationId !== TOKEN) return sessionGone
      return state.spoil?.(call) ?? facadeAnswer(state, call, solicitudes)
    }
    return { status: 404, body: 'not found' }
  }
}

function facadeAnswer(state: RcvPortalState, call: FacadeCall, solicitudes: Map<string, { readonly key: string; readonly tipo: number; polls: number }>): Reply {
  const d = call.body.data
  const key = `${String(d.operacion)}/${String(d.estadoContab)}`
  const detalles = state.registros[key] ?? []
  switch (call.op) {
    case 'getResumen': {
      if (detalles.length === 0) return json({ data: null, respEstado: { codRespuesta: 3, msgeRespuesta: 'No hay datos' } })
      return ok(resumenDeDetalles(detalles).map((r) => ({
        rsmnTipoDocInteger: r.tipoDoc, rsmnTotDoc: r.cantidad, rsmnMntExe: r.montoExento, rsmnMntNeto: r.montoNeto, rsmnMntIVA: r.montoIva,
        rsmnMntIVANoRec: r.montoIvaNoRecuperable, rsmnIVAUsoComun: r.ivaUsoComun, rsmnMntTotal: r.montoTotal,
      })))
    }
    case 'getDetalleCompra':
    case 'getDetalleVenta':
      return ok(detalles.filter((x) => x.tipoDoc === d.codTipoDoc).map(filaJson))
    case 'solicitarDescargaDiferida': {
      const id = `SOL-${solicitudes.size + 1}`
      solicitudes.set(id, { key, tipo: Number(d.codTipoDoc), polls: 0 })
      return ok({ idSolicitud: id, caEstado: 'CREADO' })
    }
    case 'getEstadoDescargaDiferida': {
      const s = solicitudes.get(String(d.idSolicitud))
      if (s === undefined) return json({ data: null, respEstado: { codRespuesta: 1, msgeRespuesta: 'Solicitud desconocida' } })
      s.polls++
      return ok({ idSolicitud: d.idSolicitud, caEstado: s.polls > state.pollsBeforeDone ? 'TERMINADO' : 'EN PROCESO' })
    }
    default:
      return json({ data: null, respEstado: { codRespuesta: 2, msgeRespuesta: `operación desconocida ${call.op}` } })
  }
}

function csvOf(key: string, detalles: readonly DetalleRcv[]): string {
  const [operacion, estado = ''] = key.split('/')
  return operacion === 'VENTA' ? writeRegistroVentasCsv(detalles) : writeRegistroComprasCsv(SECCION_DE[estado] ?? 'registro', detalles)
}

const dmy = (iso: string | null) => (iso === null ? null : `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}${iso.length > 10 ? ` ${iso.slice(11, 19)}` : ''}`)

/** A detail as getDetalleCompra/Venta rows carry it (the names rcv.ts readDetalleRcv reads). */
export function filaJson(d: DetalleRcv): Record<string, unknown> {
  const rut = parseRut(d.rut)
  return {
    detTipoDoc: d.tipoDoc, detRutDoc: Number(rut?.body), detDvDoc: rut?.dv, detRznSoc: d.razonSocial, detNroDoc: d.folio,
    detFchDoc: dmy(d.fechaEmision), detFecRecepcion: dmy(d.fechaRecepcion), detFecAcuse: dmy(d.fechaAcuse), detFecReclamado: dmy(d.fechaReclamo),
    descTipoTransaccion: d.tipoTransaccion, detMntExe: d.montoExento, detMntNeto: d.montoNeto, detMntIVA: d.montoIva,
    detMntIVANoRec: d.montoIvaNoRecuperable, detCodIVANoRec: d.codigoIvaNoRecuperable, detMntTotal: d.montoTotal,
    detMntActFijo: d.montoNetoActivoFijo, detMntIVAActFijo: d.ivaActivoFijo, detIVAUsoComun: d.ivaUsoComun,
    detMntSinCredito: d.impuestoSinDerechoCredito, detIVANoRetenido: d.ivaNoRetenido, detIVARetTotal: d.ivaRetenidoTotal,
    detIVARetParcial: d.ivaRetenidoParcial, detIVAPropio: d.ivaPropio, detIVATerceros: d.ivaTerceros, detIVAFueraPlazo: d.ivaFueraPlazo,
    detTipoDocRef: d.referencia?.tipoDoc ?? null, detFolioDocRef: d.referencia?.folio ?? null,
  }
}

export function newPortalState(registros: RcvPortalState['registros']): RcvPortalState {
  return { registros, logins: 0, logouts: 0, open: 0, maxOpen: 0, facade: [], pollsBeforeDone: 0 }
}

/** The namespace a request for `op` must carry. */
export const namespaceOf = (op: string) => FACADE_NAMESPACE + op
