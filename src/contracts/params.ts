// The HTTP parameter helpers every route shares (DESIGN §12): path ids, the Idempotency-Key header, documented JSON
// request bodies and 204 answers. One home, so each rule reads the same on every route.
import { TimbreError } from '../errors'
import { isUuid } from './common'

/** A malformed `{id}` is 404 like an unknown one (DESIGN §12): ids are UUIDs, compared lowercase. */
export function pathId(id: string): string {
  if (!isUuid(id)) throw new TimbreError('NOT_FOUND')
  return id.toLowerCase()
}

export const IDEMPOTENCY_HEADER = 'Idempotency-Key'

/** Spec 4.8: required, a UUID; missing or malformed is 400 at field `Idempotency-Key` (DESIGN §12). */
export function idempotencyKeyOf(request: Request): string {
  const key = request.headers.get(IDEMPOTENCY_HEADER)
  if (key === null || key.trim() === '')
    throw new TimbreError('VALIDATION_ERROR', { details: [{ field: IDEMPOTENCY_HEADER, code: 'REQUIRED', message: 'El encabezado Idempotency-Key (UUID) es obligatorio.' }] })
  if (!isUuid(key.trim()))
    throw new TimbreError('VALIDATION_ERROR', { details: [{ field: IDEMPOTENCY_HEADER, code: 'INVALID_FORMAT', message: 'Idempotency-Key debe ser un UUID.' }] })
  return key.trim().toLowerCase()
}

/** The OpenAPI request body of a route whose body is checked by hand (shape and rules at once, DESIGN §5). */
export const jsonBody = (schema: object) => ({ required: true, content: { 'application/json': { schema } } })

/** DELETE answers 204 without a body (DESIGN §8). */
export const noContent = () => new Response(null, { status: 204 })
