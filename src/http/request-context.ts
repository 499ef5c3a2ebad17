import type { Credential } from './auth'
import { TimbreError } from '../errors'

// Per-request facts the outer server needs for the log line and headers, whatever stage of Elysia failed.
export interface RequestInfo {
  readonly id: string
  readonly startedAt: number
  /**
   * The client's address (the peer, or X-Forwarded-For behind TIMBRE_TRUST_PROXY), looked up on first read: the
   * runtime's lookup costs more than a prepared query (issue 17).
   */
  readonly clientIp: string
  route?: string
  credential?: Credential
  /** Headers the server wrapper adds to the answer, whatever it is (rate limit). */
  extraHeaders?: Record<string, string>
}

const infos = new WeakMap<Request, RequestInfo>()

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/

/** The client's X-Request-Id when it is safe to echo, else a new UUIDv7 (DESIGN §12). */
export function requestIdFor(request: Request): string {
  const given = request.headers.get('x-request-id')
  return given !== null && CLIENT_REQUEST_ID.test(given) ? given : Bun.randomUUIDv7()
}

export function attachRequestInfo(request: Request, clientIpOf: () => string): RequestInfo {
  let clientIp: string | undefined
  const info: RequestInfo = {
    id: requestIdFor(request),
    startedAt: performance.now(),
    get clientIp() {
      clientIp ??= clientIpOf()
      return clientIp
    },
  }
  infos.set(request, info)
  return info
}

/** The same facts for a request rebuilt from the original (its body read into memory by the server). */
export function rebindRequestInfo(request: Request, info: RequestInfo): void {
  infos.set(request, info)
}

export function requestInfo(request: Request): RequestInfo {
  const info = infos.get(request)
  if (!info) throw new Error('request reached the app without going through the server wrapper')
  return info
}

/** The credential the gate admitted: routes under /api/v1/billing are only reached with one. */
export function credentialOf(request: Request): Credential {
  const credential = requestInfo(request).credential
  if (!credential) throw new TimbreError('UNAUTHORIZED')
  return credential
}
