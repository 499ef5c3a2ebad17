// The only file that knows HTTP statuses: typed errors → the envelope of spec 2.18 (DESIGN §5, STYLE §4).
import { CATALOG, TimbreError, type ErrorCode, type FieldError, type Severity } from '../errors'
import type { Logger } from '../log'
import { isStorageFailure, knownFailure } from '../services/failures'

export const STATUS: Readonly<Record<ErrorCode, number>> = {
  VALIDATION_ERROR: 400,
  INVALID_CAF: 400,
  INVALID_CERTIFICATE: 400,
  UNAUTHORIZED: 401,
  API_KEY_READ_ONLY: 403,
  NOT_FOUND: 404,
  CERTIFICATE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CAF_RANGE_EXISTS: 409,
  CLIENTE_RUT_EXISTS: 409,
  PRODUCTO_CODIGO_EXISTS: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  DTE_NOT_SENDABLE: 409,
  PLAZO_VENCIDO: 409,
  ACCION_NO_PERMITIDA: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_BODY_MISMATCH: 422,
  NO_FOLIOS_AVAILABLE: 422,
  CERTIFICATE_REQUIRED: 422,
  // A quota used up, like NO_FOLIOS_AVAILABLE (DESIGN §7: at most 20 per company).
  WEBHOOK_LIMIT_REACHED: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
}

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
