// The HTTP status of every error code (spec 2.18, DESIGN §5): part of the contract both doors keep. The API answers
// with it, and the console gives a page the same status, so a script that drives either sees the same outcome.
import type { ErrorCode } from '../errors'

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
  NOT_IN_CERTIFICATION: 409,
  SET_YA_EMITIDO: 409,
  RCV_NO_SINCRONIZADO: 409,
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
