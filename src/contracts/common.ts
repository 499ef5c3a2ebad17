// Schemas every route group shares: the error envelope (spec 2.18) for the docs, ids, dates.
import { Type } from '@sinclair/typebox'

export const FieldErrorSchema = Type.Object({
  field: Type.String({ description: 'Campo en notación de puntos (detalle.0.precio, receptor.rut).' }),
  code: Type.String({ description: 'REQUIRED, INVALID_TYPE, INVALID_FORMAT, INVALID_VALUE, TOO_LONG, TOO_MANY, TOO_FEW, OUT_OF_RANGE, INVALID_RUT, NOT_ALLOWED, INCONSISTENT' }),
  message: Type.String(),
})

export const ErrorEnvelopeSchema = Type.Object(
  {
    code: Type.String({ description: 'Código de error legible por máquinas (p. ej. VALIDATION_ERROR).' }),
    message: Type.String({ description: 'Texto descriptivo (campo canónico).' }),
    error: Type.String({ description: 'Alias de message, por compatibilidad.' }),
    details: Type.Array(FieldErrorSchema),
    action: Type.String({ description: 'Qué hacer a continuación (siempre presente).' }),
    severity: Type.Union([Type.Literal('critical'), Type.Literal('error'), Type.Literal('warning'), Type.Literal('info')]),
    context: Type.Record(Type.String(), Type.Unknown(), { description: 'Contexto; siempre incluye request_id.' }),
  },
  { $id: '#/components/schemas/ErrorResponse', title: 'ErrorResponse' },
)

/** Responses every authenticated operation can give, for the OpenAPI document (503: database busy or shutting down). */
export const commonErrors = {
  400: ErrorEnvelopeSchema,
  401: ErrorEnvelopeSchema,
  403: ErrorEnvelopeSchema,
  429: ErrorEnvelopeSchema,
  500: ErrorEnvelopeSchema,
  503: ErrorEnvelopeSchema,
} as const

/**
 * The same errors as OpenAPI responses, plus `extra` statuses, for a route that writes `detail.responses` itself (a binary
 * download, a 204): @elysiajs/swagger lets `detail.responses` replace whatever the route's `response` declares.
 */
export function errorResponses(...extra: readonly number[]): Record<number, { content: { 'application/json': { schema: typeof ErrorEnvelopeSchema } } }> {
  const statuses = [...Object.keys(commonErrors).map(Number), ...extra].sort((a, b) => a - b)
  return Object.fromEntries(statuses.map((status) => [status, { content: { 'application/json': { schema: ErrorEnvelopeSchema } } }]))
}

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
const UUID_RE = new RegExp(UUID_PATTERN)

/** A malformed `{id}` is 404 like an unknown one (DESIGN §12), so path ids are checked by hand, not by the schema. */
export function isUuid(s: string): boolean {
  return UUID_RE.test(s)
}

export const DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}$'
