// The simulated SII portal's login by certificate (herculesr's CAutInicio.cgi, src/sii/portal-protocol.ts;
// docs/decisions/simulator.md "Portal y RCV"): a TLS listener of its own that asks for the client's certificate, reads
// its holder's RUT as every other part of Timbre does (crypto/pfx.ts certificateHolderRut), and opens a session, or
// answers the login page (no usable certificate) or the session cap page. node:tls, not Bun.serve or node:https: in
// Bun 1.4.5 only node:tls hands over the peer certificate (getPeerCertificate). So this one endpoint reads HTTP/1.1 by
// hand: a head, a Content-Length body, one answer with `Connection: close`.
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { isIP, type Socket } from 'node:net'
import { createServer, type Server, type TLSSocket } from 'node:tls'
import forge from 'node-forge'
import { certificateHolderRut } from '../../crypto/pfx'
import { PORTAL_PATHS, SESSION_CAP_TEXT } from '../portal-protocol'
import type { SimulatorContext } from './channel'
import caCertPem from './portal-ca.cert.pem' with { type: 'text' }
import caKeyPem from './portal-ca.key.pem' with { type: 'text' }

/** The SII does not publish how long an idle portal session lives; the simulator's, on its clock (research §2.2). */
export const SESSION_IDLE_MS = 30 * 60_000

const MAX_HEAD_BYTES = 16 * 1024
const MAX_BODY_BYTES = 64 * 1024
const SOCKET_TIMEOUT_MS = 15_000
/** The whole of one login, handshake to answer: the idle timeout alone lets a slow trickle hold a socket for ever. */
const CONNECTION_DEADLINE_MS = 30_000

export interface PortalListener {
  readonly port: number
  stop(): Promise<void>
}

export interface PortalListenerOptions {
  /** The simulator's hostname: the listener binds it, its certificate names it. */
  readonly hostname: string
  /** The plain origin's port, where a successful login sends the browser back to. */
  readonly plainPort: number
  /** Open sessions per RUT before the cap page (research §2.2 "Limits": "a few"; server.ts defaults it to 3). */
  readonly sessionCap: number
}

/** Starts the TLS listener on a free port of the simulator's hostname. */
export async function startPortalListener(ctx: SimulatorContext, opts: PortalListenerOptions): Promise<PortalListener> {
  const { key, cert } = serverCertificate(opts.hostname)
  // Every raw connection, from its first byte: one still in the TLS handshake is not a TLSSocket yet, and stop must
  // not wait for the handshake timeout of a client that never finishes it.
  const connections = new Set<Socket>()
  const server: Server = createServer({ key, cert, requestCert: true, rejectUnauthorized: false }, (socket) => serveOne(ctx, opts, socket))
  server.on('connection', (raw: Socket) => {
    connections.add(raw)
    raw.once('close', () => connections.delete(raw))
    // A whole request, handshake included, within this much: a client trickling a byte now and then is cut.
    setTimeout(() => raw.destroy(), CONNECTION_DEADLINE_MS).unref()
  })
  // A client that gives up on the handshake (no certificate it trusts) is its business, not an error of the simulator.
  server.on('tlsClientError', () => {})
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, opts.hostname, () => resolve())
  })
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  ctx.log('sii_simulator.portal_started', { hostname: opts.hostname, port })
  return {
    port,
    stop: () => new Promise<void>((resolve) => {
      for (const c of connections) c.destroy()
      server.close(() => resolve())
    }),
  }
}

// ------------------------------------------------------------------------------------------------ HTTP by hand

interface RawRequest {
  readonly method: string
  /** The request target: path and query. */
  readonly target: string
  readonly headers: ReadonlyMap<string, string>
  readonly body: string
}

interface RawResponse {
  readonly status: number
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: string
}

const REASONS: Readonly<Record<number, string>> = { 200: 'OK', 302: 'Found', 400: 'Bad Request', 404: 'Not Found', 405: 'Method Not Allowed', 413: 'Payload Too Large' }

function serveOne(ctx: SimulatorContext, opts: PortalListenerOptions, socket: TLSSocket): void {
  socket.setTimeout(SOCKET_TIMEOUT_MS, () => socket.destroy())
  socket.on('error', () => socket.destroy())
  let buffered = Buffer.alloc(0)
  let isAnswered = false
  socket.on('data', (chunk: Buffer) => {
    if (isAnswered) return
    buffered = Buffer.concat([buffered, chunk])
    const parsed = readRequest(buffered)
    if (parsed === 'incomplete') return
    isAnswered = true
    const res = typeof parsed === 'number' ? html(parsed, `<html><body><h1>${parsed} ${REASONS[parsed] ?? ''}</h1></body></html>`) : answerLogin(ctx, opts, socket, parsed)
    socket.end(writeResponse(res))
  })
}

/** The request once whole; 'incomplete' while bytes are missing; a status when it cannot be one. */
function readRequest(bytes: Buffer): RawRequest | 'incomplete' | number {
  const end = bytes.indexOf('\r\n\r\n')
  if (end < 0) return bytes.length > MAX_HEAD_BYTES ? 413 : 'incomplete'
  const [requestLine = '', ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n')
  const m = /^([A-Z]+) (\S+) HTTP\/1\.[01]$/.exec(requestLine)
  if (m === null) return 400
  const headers = new Map<string, string>()
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  const length = Number(headers.get('content-length') ?? '0')
  if (!Number.isSafeInteger(length) || length < 0) return 400
  if (length > MAX_BODY_BYTES) return 413
  if (bytes.length < end + 4 + length) return 'incomplete'
  return { method: m[1] ?? '', target: m[2] ?? '', headers, body: bytes.subarray(end + 4, end + 4 + length).toString('latin1') }
}

function writeResponse(res: RawResponse): Buffer {
  const body = Buffer.from(res.body, 'utf8')
  const head = [`HTTP/1.1 ${res.status} ${REASONS[res.status] ?? ''}`, ...res.headers.map(([k, v]) => `${k}: ${v}`), `Content-Length: ${body.length}`, 'Connection: close']
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), body])
}

function html(status: number, body: string, headers: ReadonlyArray<readonly [string, string]> = []): RawResponse {
  return { status, headers: [['Content-Type', 'text/html; charset=utf-8'], ...headers], body }
}

// ------------------------------------------------------------------------------------------------ the login

/** What the holder's certificate allows: a RUT to open a session for, or why the login page comes back. */
type Titular = { readonly rut: string } | { readonly problem: string }

function answerLogin(ctx: SimulatorContext, opts: PortalListenerOptions, socket: TLSSocket, req: RawRequest): RawResponse {
  const url = new URL(req.target, 'https://portal.invalid')
  if (url.pathname !== PORTAL_PATHS.login) return html(404, '<html><body><h1>404 Not Found</h1></body></html>')
  if (req.method !== 'POST' && req.method !== 'GET') return html(405, '<html><body><h1>405 Method Not Allowed</h1></body></html>')
  const now = ctx.clock()
  const titular = titularOf(socket, now)
  if ('problem' in titular) {
    ctx.log('sii_simulator.portal_login', { outcome: 'login_page', problem: titular.problem })
    return html(200, loginPage())
  }
  const token = randomBytes(16).toString('hex').toUpperCase()
  const isCapFault = ctx.store.takeFalla('tope_sesiones')
  if (isCapFault || !ctx.store.openPortalSesion(token, titular.rut, now.getTime(), SESSION_IDLE_MS, opts.sessionCap)) {
    ctx.log('sii_simulator.portal_login', { outcome: 'session_cap', rut: titular.rut, fault: isCapFault })
    return html(200, capPage())
  }
  ctx.log('sii_simulator.portal_login', { outcome: 'session', rut: titular.rut })
  const back = backTo(referenciaOf(req, url), hostnameOf(req.headers.get('host'), opts.hostname), opts.plainPort)
  return html(302, `<html><body><a href="${escapeHtml(back)}">Continuar</a></body></html>`, [
    ['Location', back],
    ['Set-Cookie', `TOKEN=${token}; Path=/`],
    ['Set-Cookie', `CSESSIONID=${token}; Path=/`],
  ])
}

/** The peer's certificate: present, naming its holder's RUT (otherName 1.3.6.1.4.1.8321.1 or serialNumber), valid at `now` (the simulator's clock). */
function titularOf(socket: TLSSocket, now: Date): Titular {
  const peer = socket.getPeerCertificate(true) as { raw?: Buffer } | null
  if (peer?.raw === undefined) return { problem: 'sin certificado' }
  let cert: forge.pki.Certificate
  try {
    cert = forge.pki.certificateFromAsn1(forge.asn1.fromDer(peer.raw.toString('binary')))
  } catch {
    return { problem: 'certificado ilegible' }
  }
  const rut = certificateHolderRut(cert)
  if (rut === null) return { problem: 'el certificado no indica el RUT de su titular' }
  if (now < cert.validity.notBefore || now > cert.validity.notAfter) return { problem: 'certificado fuera de su vigencia' }
  return { rut }
}

/** `referencia` of the form body, else the query string (the same address, as the portal's links carry it). */
function referenciaOf(req: RawRequest, url: URL): string {
  const fromBody = new URLSearchParams(req.body).get('referencia')
  if (fromBody !== null && fromBody !== '') return fromBody
  const query = url.search.slice(1)
  try {
    return decodeURIComponent(query)
  } catch {
    return query
  }
}

/** The referencia's path and query on the simulator's plain origin; the RCV's home when it names no address. */
function backTo(referencia: string, hostname: string, plainPort: number): string {
  let path: string = PORTAL_PATHS.rcvHome
  try {
    const ref = new URL(referencia)
    path = `${ref.pathname}${ref.search}`
  } catch {
    // Not an absolute address: the RCV's home.
  }
  const host = isIP(hostname) === 6 ? `[${hostname}]` : hostname
  return `http://${host}:${plainPort}${path}`
}

/** The Host header's name without its port (`[::1]:443` → `::1`); the listener's own when absent. */
function hostnameOf(host: string | undefined, fallback: string): string {
  if (host === undefined || host === '') return fallback
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(host)
  if (v6 !== null) return v6[1] ?? fallback
  return host.replace(/:\d+$/, '')
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** The portal's login page (the form the SII names IngresoCertificado): what a browser without a usable certificate sees. */
export function loginPage(): string {
  return '<html><head><meta charset="utf-8"><title>SII | Autenticación</title></head><body>' +
    '<form name="IngresoCertificado" method="post" action="/cgi_AUT2000/CAutInicio.cgi">' +
    '<p>Para ingresar con certificado digital, seleccione su certificado en el navegador.</p>' +
    '<input type="submit" value="Ingresar"></form></body></html>'
}

/** The cap's page: the SII's words are not recorded; this carries SESSION_CAP_TEXT, which the client recognises. */
function capPage(): string {
  return '<html><head><meta charset="utf-8"><title>SII | Autenticación</title></head><body>' +
    `<p>Usted ha alcanzado el ${SESSION_CAP_TEXT} permitidas para su RUT. Cierre alguna de sus sesiones e intente nuevamente.</p>` +
    '</body></html>'
}

// ------------------------------------------------------------------------------------------------ server certificate

let leaf: { readonly hostname: string; readonly key: string; readonly cert: string } | undefined

/**
 * A leaf for the listener, made once per process and hostname, signed by the simulator portal's CA (checked in beside
 * this file; Timbre's portal client trusts it for origin targets only). Valid from an hour ago, real time: the client
 * checks it against its own clock, not the simulator's.
 */
function serverCertificate(hostname: string): { key: string; cert: string } {
  if (leaf?.hostname === hostname) return leaf
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const cert = forge.pki.createCertificate()
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString())
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`
  const now = Date.now()
  cert.validity.notBefore = new Date(now - 60 * 60_000)
  cert.validity.notAfter = new Date(now + 365 * 24 * 60 * 60_000)
  const ca = forge.pki.certificateFromPem(caCertPem)
  cert.setSubject([{ name: 'commonName', value: hostname }])
  cert.setIssuer(ca.subject.attributes)
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: altNames(hostname) },
  ])
  cert.sign(forge.pki.privateKeyFromPem(caKeyPem), forge.md.sha256.create())
  leaf = { hostname, key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), cert: forge.pki.certificateToPem(cert) }
  return leaf
}

/** localhost, 127.0.0.1 and ::1 always; the listening hostname too unless a wildcard or one of those. */
function altNames(hostname: string): Array<{ type: number; value?: string; ip?: string }> {
  const names: Array<{ type: number; value?: string; ip?: string }> = [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }]
  const isKnown = ['localhost', '127.0.0.1', '::1', '0.0.0.0', '::', ''].includes(hostname)
  if (!isKnown) names.push(isIP(hostname) === 0 ? { type: 2, value: hostname } : { type: 7, ip: hostname })
  return names
}
