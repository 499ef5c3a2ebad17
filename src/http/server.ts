// The HTTP server around the Elysia app: request ids, authentication of /api/v1/billing, body limits,
// content types, one log line per request, and a graceful stop (DESIGN §12).
import type { Server } from 'bun'
import { TimbreError } from '../errors'
import type { Logger } from '../log'
import type { Deps } from '../services/deps'
import { API_PREFIX, createHttpApp } from './app'
import { createAuthGate } from './auth'
import { clientAddressResolver } from './client-address'
import { errorForThrown, errorResponse } from './errors'
import { exceedsJsonDepth, MAX_JSON_DEPTH } from './json-depth'
import { attachRequestInfo, rebindRequestInfo, type RequestInfo } from './request-context'
import type { Readiness } from './routes/ops'

export const MAX_BODY_BYTES = 5 * 1024 * 1024
/** Routes that take multipart/form-data besides JSON: file uploads (the PFX, DESIGN §8; an EnvioDTE, §13; the SII's set and intercambio files, §15). */
const MULTIPART_PATHS = new Set([
  `${API_PREFIX}/empresa/certificado/pfx`,
  `${API_PREFIX}/recibidos/importar`,
  `${API_PREFIX}/certificacion/set`,
  `${API_PREFIX}/certificacion/intercambio`,
])
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])
const CERTIFICACION_PREFIX = `${API_PREFIX}/certificacion`
/** Idle limit of a certification request (15 min): issuing a set through the real SII's 30 s uploads fits well inside. */
const LONG_OPERATION_IDLE_SECONDS = 900

/** Another door served on the same port under its own prefix (the console, DESIGN §14): http knows only this shape. */
export interface MountedDoor {
  readonly prefix: string
  /** Paths under which the door runs certification's long operations: they get the API's long idle limit too. */
  readonly longOperationPrefixes?: readonly string[]
  handle(request: Request, clientIp: string): Promise<Response>
}

export interface HttpServer {
  readonly url: string
  readonly port: number
  /**
   * Stops accepting, waits for in-flight requests up to `graceMs`, then closes every connection. Resolves with how many
   * requests were still in flight at the deadline (cut short: a client stalled in its body, a slow test delivery).
   */
  stop(graceMs: number): Promise<number>
}

function hasBody(request: Request): boolean {
  const length = request.headers.get('content-length')
  return (length !== null && length !== '0') || request.headers.has('transfer-encoding')
}

function mediaTypeOf(request: Request): string {
  return (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
}

function isJsonType(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json')
}

/** 413 and 415 before anything reads the body (DESIGN §5, §12). */
function checkBody(request: Request, path: string): TimbreError | null {
  const length = Number(request.headers.get('content-length') ?? '0')
  if (length > MAX_BODY_BYTES) return new TimbreError('PAYLOAD_TOO_LARGE')
  if (!BODY_METHODS.has(request.method) || !hasBody(request) || !path.startsWith(API_PREFIX)) return null
  const type = mediaTypeOf(request)
  if (isJsonType(type)) return null
  if (type === 'multipart/form-data' && MULTIPART_PATHS.has(path.replace(/\/$/, ''))) return null
  return new TimbreError('UNSUPPORTED_MEDIA_TYPE')
}

/** Content-Length when it alone sets the body's size, else Infinity (chunked, or none given). */
function declaredLength(request: Request): number {
  const length = request.headers.get('content-length')
  if (length === null || request.headers.has('transfer-encoding')) return Number.POSITIVE_INFINITY
  return /^\d+$/.test(length) ? Number(length) : Number.POSITIVE_INFINITY
}

/**
 * The body read whole, or null past `limit` bytes. A chunked body declares no size, so the limit is found while
 * reading, and the answer is still the envelope (issue 12 item 1), never the runtime's bare 413.
 */
async function readBodyWithin(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer> | null> {
  // A declared length within the limit is all the server hands over (a chunked body wins over it, RFC 9112 §6.3): read
  // it natively in one piece, without a JS stream per request (issue 17 profile).
  if (declaredLength(request) <= limit) return request.bytes()
  const reader = request.body?.getReader()
  if (!reader) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel()
      return null
    }
    chunks.push(value)
  }
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}

const INCOMPLETE_BODY = new TimbreError('VALIDATION_ERROR', {
  details: [{ field: 'body', code: 'INVALID_FORMAT', message: 'El cuerpo llegó incompleto: la conexión se cerró o su codificación por partes no es válida.' }],
})

const TOO_DEEP = new TimbreError('VALIDATION_ERROR', {
  details: [{ field: 'body', code: 'TOO_MANY', message: `El JSON anida más de ${MAX_JSON_DEPTH} niveles de objetos o listas.` }],
})

/**
 * Reads a body the app will parse, within the size limit, and refuses JSON nested past MAX_JSON_DEPTH before any
 * parser sees it (issue 12 item 6); the app then gets a request over the bytes read.
 */
async function bufferBody(request: Request, info: RequestInfo, log: Logger): Promise<Request | TimbreError> {
  let body: Uint8Array<ArrayBuffer> | null
  try {
    body = await readBodyWithin(request, MAX_BODY_BYTES)
  } catch (err) {
    // The client closed the connection inside its body, or broke its chunked framing: a bad body, not a bug, and
    // nobody is left to read the answer (issue 18, hostile input: was an error line and a 500 per such client). What
    // the stream threw is kept at debug, so a cause that is not the client's can still be found.
    log.debug('http.body_unreadable', { request_id: info.id, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) })
    return INCOMPLETE_BODY
  }
  if (body === null) return new TimbreError('PAYLOAD_TOO_LARGE')
  if (isJsonType(mediaTypeOf(request)) && exceedsJsonDepth(body)) return TOO_DEEP
  const buffered = new Request(request.url, { method: request.method, headers: headersFor(request, body.byteLength), body })
  rebindRequestInfo(buffered, info)
  return buffered
}

/** The request's headers, with the length the buffered body has (a chunked request's copy is fixed up). */
function headersFor(request: Request, size: number): Headers {
  if (declaredLength(request) === size) return request.headers
  const headers = new Headers(request.headers)
  headers.delete('transfer-encoding')
  headers.set('content-length', String(size))
  return headers
}

/** A refused body may still be on the wire: close rather than read megabytes nobody wants. */
function refusedBody(err: TimbreError, info: RequestInfo): Response {
  return errorResponse(err, info.id, err.code === 'PAYLOAD_TOO_LARGE' ? { Connection: 'close' } : {})
}

const CORS_METHODS = 'GET, POST, PUT, DELETE, OPTIONS'
const CORS_HEADERS = 'Content-Type, X-Api-Key, Authorization, Idempotency-Key, X-Request-Id'
const CORS_EXPOSED = 'X-Request-Id, X-Idempotency-Replay, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Location'

/** CORS only for the origins of TIMBRE_CORS_ORIGINS (DESIGN §2); off when empty. */
function corsHeaders(request: Request, allowed: readonly string[]): Record<string, string> {
  const origin = request.headers.get('origin')
  if (origin === null || !allowed.includes(origin)) return {}
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': CORS_EXPOSED, Vary: 'Origin' }
}

/**
 * The request as the app can route it, or a refusal. Bun builds `request.url` from the Host header: without one (an
 * HTTP/1.0 request) it is the bare path, with a malformed one (`Host: a b`, `Host: x:99999`) it is no URL at all, and
 * Elysia cuts the path at the first '/' after the 11th character of the URL, so a host under 4 characters (`Host: x`)
 * routes to a wrong path (a 405 naming the very method sent). HTTP/1.0 without Host is served; a Host that is no
 * authority, or sent twice, is 400 at `Host` (RFC 9112 §3.2); a short one is routed under `localhost`, the path and
 * query unchanged.
 */
function routable(request: Request): Request | TimbreError {
  const url = request.url
  // Two Host lines reach us joined by a comma, which no authority contains: RFC 9112 §3.2 wants them refused.
  if (request.headers.get('host')?.includes(',')) return BAD_HOST
  if (!URL.canParse(url)) {
    if (request.headers.has('host') || !url.startsWith('/')) return BAD_HOST
    return new Request(`http://localhost${url}`, request)
  }
  const parsed = new URL(url)
  if (url.indexOf('/', 11) === parsed.protocol.length + 2 + parsed.host.length) return request
  return new Request(`${parsed.protocol}//localhost${parsed.pathname}${parsed.search}`, request)
}

const BAD_HOST = new TimbreError('VALIDATION_ERROR', { details: [{ field: 'Host', code: 'INVALID_FORMAT', message: 'El encabezado Host no es un nombre de servidor válido.' }] })

/** The path for the log line, whatever the URL is (a refused Host leaves no URL to parse). */
function pathOf(request: Request): string {
  return URL.canParse(request.url) ? new URL(request.url).pathname : '(invalid Host)'
}

function withHeaders(response: Response, info: RequestInfo): Response {
  response.headers.set('X-Request-Id', info.id)
  for (const [k, v] of Object.entries(info.extraHeaders ?? {})) response.headers.set(k, v)
  return response
}

export function startHttpServer(deps: Deps, readiness: Readiness & { markShuttingDown(): void }, mounted: readonly MountedDoor[] = []): HttpServer {
  const app = createHttpApp(deps, readiness)
  const gate = createAuthGate(deps)
  const clientAddress = clientAddressResolver(deps.config.trustProxy)
  let inFlight = 0
  let stopping = false

  async function route(request: Request, info: RequestInfo): Promise<Response> {
    const path = new URL(request.url).pathname
    if (stopping) return errorResponse(new TimbreError('SERVICE_UNAVAILABLE'), info.id, { 'Retry-After': '5', Connection: 'close' })
    const cors = corsHeaders(request, deps.config.corsOrigins)
    info.extraHeaders = cors
    if (request.method === 'OPTIONS' && request.headers.has('access-control-request-method') && cors['Access-Control-Allow-Origin'])
      return new Response(null, { status: 204, headers: { 'Access-Control-Allow-Methods': CORS_METHODS, 'Access-Control-Allow-Headers': CORS_HEADERS, 'Access-Control-Max-Age': '600' } })
    if (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`)) {
      const verdict = await gate.admit(request, () => info.clientIp)
      info.extraHeaders = { ...cors, ...verdict.headers }
      if (!verdict.ok) return errorResponse(verdict.error, info.id)
      info.credential = verdict.credential
    }
    const refused = checkBody(request, path)
    if (refused) return refusedBody(refused, info)
    const door = mounted.find((d) => path === d.prefix || path.startsWith(`${d.prefix}/`))
    const handle = door ? (r: Request) => door.handle(r, info.clientIp) : (r: Request) => app.handle(r)
    if (door) info.route = door.prefix
    if (!BODY_METHODS.has(request.method) || !hasBody(request)) return handle(request)
    const buffered = await bufferBody(request, info, deps.log)
    return buffered instanceof TimbreError ? refusedBody(buffered, info) : handle(buffered)
  }

  function logLine(request: Request, info: RequestInfo, status: number): void {
    deps.log.info('http.request', {
      request_id: info.id,
      empresa_id: info.credential?.empresaId ?? null,
      method: request.method,
      route: info.route ?? pathOf(request),
      status,
      duration_ms: Math.round((performance.now() - info.startedAt) * 100) / 100,
    })
  }

  const server: Server<undefined> = Bun.serve({
    hostname: deps.config.host,
    port: deps.config.port,
    // The limit is ours (checkBody, readBodyWithin), so every 413 is the envelope: Bun's own guard would answer
    // a bare 413 before fetch runs.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    ...(deps.config.tlsCert && deps.config.tlsKey ? { tls: { cert: Bun.file(deps.config.tlsCert), key: Bun.file(deps.config.tlsKey) } } : {}),
    async fetch(received, srv) {
      // Certification's operations issue a whole set, wait on the SII's uploads or draw hundreds of PDFs: minutes on a
      // slow day, longer than Bun's 10 s idle cut of a silent request (docs/decisions/certificacion.md "Operaciones largas").
      const receivedPath = pathOf(received)
      if (receivedPath.startsWith(CERTIFICACION_PREFIX) || mounted.some((d) => d.longOperationPrefixes?.some((p) => receivedPath.startsWith(p))))
        srv.timeout(received, LONG_OPERATION_IDLE_SECONDS)
      const request = routable(received)
      const info = attachRequestInfo(received, () => clientAddress(srv.requestIP(received)?.address ?? 'unknown', received.headers.get('x-forwarded-for')))
      inFlight++
      let response: Response
      try {
        if (request instanceof TimbreError) response = errorResponse(request, info.id)
        else {
          rebindRequestInfo(request, info)
          response = await route(request, info)
        }
      } catch (err) {
        const thrown = errorForThrown(err, deps.log, { request_id: info.id, route: info.route ?? pathOf(received) })
        response = errorResponse(thrown.error, info.id, thrown.headers)
      } finally {
        inFlight--
      }
      logLine(received, info, response.status)
      return withHeaders(response, info)
    },
    // Only what escaped fetch's own catch reaches here: still the envelope, with a request id of its own.
    error(err) {
      const requestId = Bun.randomUUIDv7()
      deps.log.error('http.server_error', { request_id: requestId, error: String(err), stack: err.stack })
      return errorResponse(new TimbreError('INTERNAL_ERROR'), requestId, { 'X-Request-Id': requestId })
    },
  })

  const scheme = deps.config.tlsCert ? 'https' : 'http'
  return {
    url: `${scheme}://${deps.config.host.includes(':') ? `[${deps.config.host}]` : deps.config.host}:${server.port}`,
    port: server.port ?? deps.config.port,
    async stop(graceMs) {
      stopping = true
      readiness.markShuttingDown()
      const deadline = Date.now() + graceMs
      // Not awaited: Bun's stop(false) resolves only when every connection has closed, so one client that stalls in
      // the middle of its body would hold the whole shutdown (measured: as long as the client keeps the socket open).
      void server.stop(false)
      while (inFlight > 0 && Date.now() < deadline) await Bun.sleep(25)
      const cut = inFlight
      await server.stop(true)
      return cut
    },
  }
}
