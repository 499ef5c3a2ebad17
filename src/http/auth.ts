// Who is calling (DESIGN §4): bearer token first, else API key; then the write check and the rate limit.
// Runs before routing, so an unauthenticated caller learns nothing, not even whether a route exists.
import { TimbreError } from '../errors'
import { authenticateApiKey } from '../services/api-keys'
import type { Deps } from '../services/deps'
import { authenticateBearer } from '../services/tokens'
import { FailureWindow, RateLimiter } from '../contracts/rate-limit'

export interface Credential {
  readonly empresaId: string
  readonly canWrite: boolean
  /** What the rate limit counts: one API key, or one (empresa, subject) of bearer tokens. */
  readonly credentialId: string
  readonly kind: 'api_key' | 'bearer'
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const FAILED_AUTH_PER_MINUTE = 20
const FAILURE_WINDOW_MS = 60_000

export type GateVerdict =
  | { readonly ok: true; readonly credential: Credential; readonly headers: Record<string, string> }
  | { readonly ok: false; readonly error: TimbreError; readonly headers: Record<string, string> }

export interface AuthGate {
  /** `clientIp` is asked only when a credential failed: the lookup is not free. */
  admit(request: Request, clientIp: () => string): Promise<GateVerdict>
}

export function createAuthGate(deps: Pick<Deps, 'store' | 'clock' | 'keyring' | 'config'>): AuthGate {
  const limiter = new RateLimiter(deps.config.rateLimit)
  const failures = new FailureWindow(FAILED_AUTH_PER_MINUTE, FAILURE_WINDOW_MS)

  async function identify(request: Request): Promise<Credential> {
    const authorization = request.headers.get('authorization')
    if (authorization !== null) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
      if (!m) throw new TimbreError('UNAUTHORIZED')
      const claims = await authenticateBearer(deps, { token: m[1]! })
      return { empresaId: claims.empresaId, canWrite: true, credentialId: `bearer:${claims.empresaId}:${claims.sub ?? ''}`, kind: 'bearer' }
    }
    const apiKey = request.headers.get('x-api-key')
    if (apiKey === null || apiKey === '') throw new TimbreError('UNAUTHORIZED')
    const key = authenticateApiKey(deps, { key: apiKey.trim() })
    return { empresaId: key.empresaId, canWrite: key.canWrite, credentialId: `api_key:${key.id}`, kind: 'api_key' }
  }

  return {
    async admit(request, clientIp): Promise<GateVerdict> {
      const nowMs = deps.clock.now().getTime()
      let credential: Credential
      try {
        credential = await identify(request)
      } catch (err) {
        if (!(err instanceof TimbreError)) throw err
        // TIMBRE_RATE_LIMIT=0 turns every limit off, this one included (benchmarks, tests).
        if (err.code !== 'UNAUTHORIZED' || !limiter.isEnabled) return { ok: false, error: err, headers: {} as Record<string, string> }
        // DESIGN §4: the credential is checked first and only a bad one counts or is refused, so a valid credential is
        // served from an address someone else fills with failures (an office behind one NAT, clients behind one proxy).
        const address = clientIp()
        const blocked = failures.blockedFor(address, nowMs)
        if (blocked > 0) return { ok: false, error: new TimbreError('RATE_LIMITED'), headers: { 'Retry-After': String(blocked) } }
        failures.record(address, nowMs)
        return { ok: false, error: err, headers: {} as Record<string, string> }
      }
      // The bucket is taken before the write check: a refused write is still a request of that credential, and
      // every authenticated answer, 403 API_KEY_READ_ONLY included, carries X-RateLimit-* (DESIGN §12).
      const verdict = limiter.isEnabled ? limiter.take(credential.credentialId, nowMs) : null
      const headers: Record<string, string> = verdict
        ? {
            'X-RateLimit-Limit': String(verdict.limit),
            'X-RateLimit-Remaining': String(verdict.remaining),
            'X-RateLimit-Reset': String(verdict.resetSeconds),
          }
        : {}
      if (verdict && !verdict.allowed)
        return { ok: false, error: new TimbreError('RATE_LIMITED'), headers: { ...headers, 'Retry-After': String(verdict.retryAfterSeconds) } }
      if (WRITE_METHODS.has(request.method) && !credential.canWrite) return { ok: false, error: new TimbreError('API_KEY_READ_ONLY'), headers }
      return { ok: true, credential, headers }
    },
  }
}
