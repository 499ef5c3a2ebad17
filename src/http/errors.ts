// The only file that knows HTTP statuses: typed errors → the envelope of spec 2.18 (DESIGN §5, STYLE §4).
import { CATALOG, TimbreError, type ErrorCode, type FieldError, type Severity } from '../errors'
import type { Logger } from '../log'
import { isStorageFailure, knownFailure } from '../services/failures'
import { STATUS } from '../contracts/statuses'


export interface ErrorEnvelope {
  readonly code: ErrorCode
  readonly message: string
  readonly error: string
  readonly details: readonly FieldError[]
  readonly action: string
  readonly severity: Severity
  readonly context: Readonly<Record<string, unknown>>
}

export function envelopeOf(err: TimbreError, requestId: string): { status: number; body: ErrorEnvelope } {
  const { action, severity } = CATALOG[err.code]
  const message = err.message
  return {
    status: STATUS[err.code],
    body: {
      code: err.code,
      message,
      error: message,
      details: err.extra.details ?? [],
      action,
      severity,
      context: { ...err.extra.context, request_id: requestId },
    },
  }
}

/** Anything that is not a TimbreError is a bug: the caller logs it with its stack, the client sees only the request id. */
export function toErrorResponse(err: unknown, requestId: string): { status: number; body: ErrorEnvelope } {
  return envelopeOf(err instanceof TimbreError ? err : new TimbreError('INTERNAL_ERROR'), requestId)
}

export function errorResponse(err: TimbreError, requestId: string, headers: Record<string, string> = {}): Response {
  const { status, body } = envelopeOf(err, requestId)
  return Response.json(body, { status, headers })
}

/**
 * Any thrown value as the answer's error and headers, for Elysia's onError and the server wrapper alike: a busy
 * database is 503 with Retry-After (DESIGN §12); a bug is logged with its stack and answered INTERNAL_ERROR.
 */
export function errorForThrown(err: unknown, log: Logger, where: Readonly<Record<string, unknown>>): { error: TimbreError; headers: Record<string, string> } {
  const known = knownFailure(err)
  if (known !== null && isStorageFailure(known)) {
    // The operator's problem (a full disk, a read-only data dir): an error line every time, with SQLite's code.
    log.error('http.storage_unwritable', { ...where, sqlite_code: (err as { code?: unknown }).code, error: String(err) })
    return { error: known, headers: { 'Retry-After': '30' } }
  }
  if (known?.code === 'SERVICE_UNAVAILABLE') {
    log.warn('http.database_busy', where)
    return { error: known, headers: { 'Retry-After': '5' } }
  }
  if (known) return { error: known, headers: {} }
  log.error('http.unhandled', { ...where, error: String(err), stack: (err as Error)?.stack })
  return { error: new TimbreError('INTERNAL_ERROR'), headers: {} }
}
