// Typed errors and their catalog: codes and words, no HTTP (the statuses live in http/errors.ts).
// Codes are DESIGN §5 and §12; messages are Spanish because integrators read them.

export type Severity = 'critical' | 'error' | 'warning' | 'info'

/** Detail codes of a VALIDATION_ERROR (DESIGN §5). */
export type DetailCode =
  | 'REQUIRED'
  | 'INVALID_TYPE'
  | 'INVALID_FORMAT'
  | 'INVALID_VALUE'
  | 'TOO_LONG'
  | 'TOO_MANY'
  | 'TOO_FEW'
  | 'OUT_OF_RANGE'
  | 'INVALID_RUT'
  | 'NOT_ALLOWED'
  | 'INCONSISTENT'

/** One failing field, `field` in dot notation (`detalle.0.precio`, `receptor.rut`). */
export interface FieldError {
  readonly field: string
  readonly code: DetailCode
  readonly message: string
}

export const ERROR_CODES = [
  'VALIDATION_ERROR',
  'INVALID_CAF',
  'INVALID_CERTIFICATE',
  'UNAUTHORIZED',
  'API_KEY_READ_ONLY',
  'NOT_FOUND',
  'CERTIFICATE_NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'CAF_RANGE_EXISTS',
  'CLIENTE_RUT_EXISTS',
  'PRODUCTO_CODIGO_EXISTS',
  'IDEMPOTENCY_IN_PROGRESS',
  'DTE_NOT_SENDABLE',
  'PLAZO_VENCIDO',
  'ACCION_NO_PERMITIDA',
  'NOT_IN_CERTIFICATION',
  'SET_YA_EMITIDO',
  'RCV_NO_SINCRONIZADO',
  'CAF_SOLICITUD_EN_CURSO',
  'CAF_NO_ANULABLE',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'IDEMPOTENCY_BODY_MISMATCH',
  'NO_FOLIOS_AVAILABLE',
  'CERTIFICATE_REQUIRED',
  'WEBHOOK_LIMIT_REACHED',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
] as const
export type ErrorCode = (typeof ERROR_CODES)[number]

export interface TimbreErrorExtra {
  readonly details?: readonly FieldError[]
  readonly context?: Readonly<Record<string, unknown>>
  /** Replaces the catalog message when the cause is specific (an INVALID_CAF reason, say). */
  readonly message?: string
}

export class TimbreError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly extra: TimbreErrorExtra = {},
  ) {
    super(extra.message ?? CATALOG[code].message)
    this.name = 'TimbreError'
  }
}

/**
 * A failure the operator fixes outside Timbre (a path, a key file, a flag, a second server): the CLI prints its message
 * as it is, with no code from the API's catalog. StoreError, ConfigError, InstanceKeyError and RestoreError are kinds.
 */
export class OperatorError extends Error {}

/** Shorthand for the common case: one or more failing fields. */
export function validationError(details: readonly FieldError[]): TimbreError {
  return new TimbreError('VALIDATION_ERROR', { details })
}

/** Every code tells the integrator what to do next (`action`, README and DESIGN §5): the envelope always carries it. */
export const CATALOG: Readonly<Record<ErrorCode, { message: string; action: string; severity: Severity }>> = {
  VALIDATION_ERROR: {
    message: 'La solicitud contiene campos inválidos.',
    action: 'Corrija los campos indicados en details y reintente.',
    severity: 'error',
  },
  INVALID_CAF: {
    message: 'El CAF no es válido.',
    action: 'Descargue nuevamente el CAF desde el SII y súbalo sin modificarlo.',
    severity: 'error',
  },
  INVALID_CERTIFICATE: {
    message: 'El certificado digital no es válido.',
    action: 'Verifique el archivo PFX/P12, su contraseña y su vigencia.',
    severity: 'error',
  },
  UNAUTHORIZED: {
    message: 'Credencial ausente, inválida, expirada o revocada.',
    action: 'Envíe una API key válida en X-Api-Key o un token en Authorization: Bearer.',
    severity: 'error',
  },
  API_KEY_READ_ONLY: {
    message: 'Esta API key es de solo lectura.',
    action: 'Cree una API key con escritura (timbre apikey create --empresa RUT --write) o use un token Bearer.',
    severity: 'error',
  },
  NOT_FOUND: {
    message: 'Recurso no encontrado.',
    action: 'Verifique el id y la ruta: el recurso no existe, fue eliminado o pertenece a otra empresa.',
    severity: 'error',
  },
  CERTIFICATE_NOT_FOUND: {
    message: 'La empresa no tiene un certificado digital cargado.',
    action: 'Suba el certificado con POST /api/v1/billing/empresa/certificado/pfx.',
    severity: 'error',
  },
  METHOD_NOT_ALLOWED: { message: 'Método no permitido para esta ruta.', action: 'Use uno de los métodos del encabezado Allow.', severity: 'error' },
  CAF_RANGE_EXISTS: {
    message: 'El rango de folios se superpone con un CAF ya registrado para ese tipo.',
    action: 'Use el CAF existente (context.caf_id) o solicite al SII un CAF cuyos folios no se superpongan.',
    severity: 'error',
  },
  CLIENTE_RUT_EXISTS: {
    message: 'Ya existe un cliente con ese RUT.',
    action: 'Use el cliente existente (context.cliente_id) o modifíquelo con PUT /api/v1/billing/clientes/{id}.',
    severity: 'error',
  },
  PRODUCTO_CODIGO_EXISTS: {
    message: 'Ya existe un producto con ese código.',
    action: 'Use el producto existente (context.producto_id) o envíe otro código.',
    severity: 'error',
  },
  IDEMPOTENCY_IN_PROGRESS: {
    message: 'Una solicitud con esta Idempotency-Key aún se está procesando.',
    action: 'Reintente en unos segundos con la misma Idempotency-Key.',
    severity: 'warning',
  },
  PLAZO_VENCIDO: {
    message: 'Pasaron los 8 días desde la recepción del documento en el SII: ya no admite aceptación ni reclamo.',
    action: 'No reintente: el documento quedó aceptado tácitamente (Ley 19.983). Consulte su estado con GET /api/v1/billing/recibidos/{id}.',
    severity: 'error',
  },
  ACCION_NO_PERMITIDA: {
    message: 'La acción no está permitida para este documento en su estado actual.',
    action:
      'Revise context.motivo. En un documento recibido: solo 33, 34 y 43 admiten acciones, una vez aceptado o reclamado no se cambia, y el recibo de mercaderías (ERM) va una vez y no después de un reclamo. ' +
      'En el correo de un DTE emitido: se reenvía solo cuando su intercambio terminó en error o sin destinatario.',
    severity: 'error',
  },
  DTE_NOT_SENDABLE: {
    message: 'El DTE no está en estado firmado y no puede enviarse.',
    action: 'No lo reenvíe: solo un DTE firmado se envía. Consulte su estado (context.estado) con GET /api/v1/billing/dte/{id}.',
    severity: 'error',
  },
  NOT_IN_CERTIFICATION: {
    message: 'La empresa está en producción: la certificación ante el SII ya no corresponde.',
    action: 'La certificación solo se hace con ambiente certificacion; una empresa que ya emite en producción no la repite (DESIGN §15).',
    severity: 'error',
  },
  SET_YA_EMITIDO: {
    message: 'Ese set ya tiene casos emitidos.',
    action: 'Para reemplazarlo por un set nuevo del SII, repita con ?reemplazar=true: sus casos se emitirán de nuevo, con folios nuevos.',
    severity: 'error',
  },
  RCV_NO_SINCRONIZADO: {
    message: 'Ese período del RCV no se ha leído del SII.',
    action: 'Pida la lectura con POST /rcv/{periodo}/sincronizar (o timbre rcv sincronizar) y repita cuando GET /rcv/{periodo} diga sincronizado.',
    severity: 'error',
  },
  CAF_SOLICITUD_EN_CURSO: {
    message: 'Ya hay una solicitud de folios en curso para ese tipo de documento.',
    action: 'Espere su resultado (context.solicitud_id) en GET /api/v1/billing/caf/solicitudes o por el webhook caf.obtenido / caf.solicitud_fallida.',
    severity: 'error',
  },
  CAF_NO_ANULABLE: {
    message: 'Ese CAF no tiene folios que anular.',
    action: 'Revise context.motivo: sus folios ya se usaron, ya fueron anulados o su anulación está en curso (GET /api/v1/billing/caf/solicitudes).',
    severity: 'error',
  },
  PAYLOAD_TOO_LARGE: {
    message: 'El cuerpo de la solicitud supera los 5 MB.',
    action: 'Envíe un cuerpo de 5 MB o menos.',
    severity: 'error',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    message: 'Tipo de contenido no soportado.',
    action: 'Envíe el cuerpo como application/json (multipart/form-data solo en POST /api/v1/billing/empresa/certificado/pfx).',
    severity: 'error',
  },
  IDEMPOTENCY_BODY_MISMATCH: {
    message: 'La Idempotency-Key ya se usó con un cuerpo distinto.',
    action: 'Reenvíe exactamente el mismo cuerpo con esa Idempotency-Key, o use una Idempotency-Key nueva para una solicitud distinta.',
    severity: 'error',
  },
  NO_FOLIOS_AVAILABLE: {
    message: 'No quedan folios disponibles para este tipo de documento.',
    action: 'Cargue un nuevo CAF con POST /api/v1/billing/caf.',
    severity: 'error',
  },
  CERTIFICATE_REQUIRED: {
    message: 'Se requiere un certificado digital activo y vigente para emitir.',
    action: 'Suba el certificado con POST /api/v1/billing/empresa/certificado/pfx.',
    severity: 'error',
  },
  WEBHOOK_LIMIT_REACHED: {
    message: 'La empresa ya tiene el máximo de webhooks registrados (20).',
    action: 'Elimine uno que ya no use (DELETE /api/v1/billing/webhooks/{id}); un mismo webhook puede suscribir varios eventos.',
    severity: 'error',
  },
  RATE_LIMITED: { message: 'Demasiadas solicitudes.', action: 'Espere los segundos indicados en Retry-After.', severity: 'warning' },
  INTERNAL_ERROR: {
    message: 'Error interno del servidor.',
    action: 'Reintente; si persiste, informe context.request_id al administrador.',
    severity: 'critical',
  },
  SERVICE_UNAVAILABLE: {
    message: 'El servicio no está disponible en este momento.',
    action: 'Reintente después de los segundos indicados en Retry-After.',
    severity: 'warning',
  },
}
