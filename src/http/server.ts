// The HTTP server around the Elysia app: request ids, authentication of /api/v1/billing, body limits,
// content types, one log line per request, and a graceful stop (DESIGN §12).
import type { Server } from 'bun'
import { isDatabaseBusy } from '../db/open'
import { TimbreError } from '../errors'
import type { Deps } from '../services/deps'
import { API_PREFIX, createHttpApp } from './app'
import { createAuthGate } from './auth'
import { errorResponse } from './errors'
import { attachRequestInfo, type RequestInfo } from './request-context'
import type { Readiness } from './routes/ops'

export const MAX_BODY_BYTES = 5 * 1024 * 1024
/** Routes that take multipart/form-data besides JSON (the PFX upload, DESIGN §8). */
const MULTIPART_PATHS = new Set([`${API_PREFIX}/empresa/certificado/pfx`])
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])

export interface HttpServer {
  readonly url: string
  readonly port: number
  /** Stops accepting, waits for in-flight requests up to `graceMs`, then closes. */
  stop(graceMs: number): Promise<void>
}

function hasBody(request: Request): boolean {
  const length = request.headers.get('content-length')
  return (length !== null && length !== '0') || request.headers.has('transfer-encoding')
}

/** 413 and 415 before anything reads the body (DESIGN §5, §12). */
function checkBody(request: Request, path: string): TimbreError | null {
  const length = Number(request.headers.get('content-length') ?? '0')
  if (length > MAX_BODY_BYTES) return new TimbreError('PAYLOAD_TOO_LARGE')
  if (!BODY_METHODS.has(request.method) || !hasBody(request) || !path.startsWith(API_PREFIX)) return null
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  if (type === 'application/json' || type.endsWith('+json')) return null
  if (type === 'multipart/form-data' && MULTIPART_PATHS.has(path.replace(/\/$/, ''))) return null
  return new TimbreError('UNSUPPORTED_MEDIA_TYPE')
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

function withHeaders(response: Response, info: RequestInfo): Response {
  response.headers.set('X-Request-Id', info.id)
  for (const [k, v] of Object.entries(info.extraHeaders ?? {})) response.headers.set(k, v)
  return response
}

export function startHttpServer(deps: Deps, readiness: Readiness & { markShuttingDown(): void }): HttpServer {
  const app = createHttpApp(deps, readiness)
  const gate = createAuthGate(deps)
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
      const verdict = await gate.admit(request, info.clientIp)
      info.extraHeaders = { ...cors, ...verdict.headers }
      if (!verdict.ok) return errorResponse(verdict.error, info.id)
      info.credential = verdict.credential
    }
    const refused = checkBody(request, path)
    if (refused) return errorResponse(refused, info.id)
    return app.handle(request)
  }

  function logLine(request: Request, info: RequestInfo, status: number): void {
    deps.log.info('http.request', {
      request_id: info.id,
      empresa_id: info.credential?.empresaId ?? null,
      method: request.method,
      route: info.route ?? new URL(request.url).pathname,
      status,
      duration_ms: Math.round((performance.now() - info.startedAt) * 100) / 100,
    })
  }

  const server: Server<undefined> = Bun.serve({
    hostname: deps.config.host,
    port: deps.config.port,
    // Bun's own guard for bodies without Content-Length; declared bodies are refused earlier with the envelope.
    maxRequestBodySize: MAX_BODY_BYTES + 1024,
    ...(deps.config.tlsCert && deps.config.tlsKey ? { tls: { cert: Bun.file(deps.config.tlsCert), key: Bun.file(deps.config.tlsKey) } } : {}),
    async fetch(request, srv) {
      const info = attachRequestInfo(request, srv.requestIP(request)?.address ?? 'unknown')
      inFlight++
      let response: Response
      try {
        response = await route(request, info)
      } catch (err) {
        if (isDatabaseBusy(err)) response = errorResponse(new TimbreError('SERVICE_UNAVAILABLE'), info.id, { 'Retry-After': '5' })
        else {
          deps.log.error('http.unhandled', { request_id: info.id, error: String(err), stack: (err as Error)?.stack })
          response = errorResponse(new TimbreError('INTERNAL_ERROR'), info.id)
        }
      } finally {
        inFlight--
      }
      logLine(request, info, response.status)
      return withHeaders(response, info)
    },
    error(err) {
      deps.log.error('http.server_error', { error: String(err) })
      return Response.json({ code: 'INTERNAL_ERROR' }, { status: 500 })
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
      await server.stop(false)
      while (inFlight > 0 && Date.now() < deadline) await Bun.sleep(25)
      await server.stop(true)
    },
  }
}
