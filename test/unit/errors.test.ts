// STYLE §4: every error code has a status, a Spanish message and a severity; the envelope has the spec 2.18 shape.
import { describe, expect, test } from 'bun:test'
import { CATALOG, ERROR_CODES, TimbreError } from '../../src/errors'
import { STATUS } from '../../src/contracts/statuses'
import { toErrorResponse } from '../../src/http/errors'

describe('error catalog', () => {
  test.each([...ERROR_CODES])('%s has a status and a catalog entry', (code) => {
    expect(STATUS[code]).toBeGreaterThanOrEqual(400)
    expect(CATALOG[code].message.length).toBeGreaterThan(5)
    expect(['critical', 'error', 'warning', 'info']).toContain(CATALOG[code].severity)
  })

  test.each([...ERROR_CODES])('%s tells the integrator what to do (action, Spanish, never empty)', (code) => {
    const { action, message } = CATALOG[code]
    expect(typeof action).toBe('string')
    expect(action.length).toBeGreaterThan(10)
    expect(action).not.toBe(message)
  })

  test('statuses of DESIGN §5', () => {
    expect(STATUS).toMatchObject({
      VALIDATION_ERROR: 400, INVALID_CAF: 400, INVALID_CERTIFICATE: 400, UNAUTHORIZED: 401, API_KEY_READ_ONLY: 403, NOT_FOUND: 404,
      CERTIFICATE_NOT_FOUND: 404, CAF_RANGE_EXISTS: 409, CLIENTE_RUT_EXISTS: 409, PRODUCTO_CODIGO_EXISTS: 409, IDEMPOTENCY_IN_PROGRESS: 409,
      DTE_NOT_SENDABLE: 409, PAYLOAD_TOO_LARGE: 413, IDEMPOTENCY_BODY_MISMATCH: 422, NO_FOLIOS_AVAILABLE: 422, CERTIFICATE_REQUIRED: 422,
      RATE_LIMITED: 429, INTERNAL_ERROR: 500, SERVICE_UNAVAILABLE: 503, METHOD_NOT_ALLOWED: 405, UNSUPPORTED_MEDIA_TYPE: 415,
    })
  })
})

describe('envelope', () => {
  test('a TimbreError becomes the spec 2.18 envelope with the request id in context', () => {
    const err = new TimbreError('VALIDATION_ERROR', { details: [{ field: 'receptor.rut', code: 'INVALID_RUT', message: 'RUT inválido.' }], context: { folio: 3 } })
    const { status, body } = toErrorResponse(err, 'req-1')
    expect(status).toBe(400)
    expect(body).toEqual({
      code: 'VALIDATION_ERROR',
      message: CATALOG.VALIDATION_ERROR.message,
      error: CATALOG.VALIDATION_ERROR.message,
      details: [{ field: 'receptor.rut', code: 'INVALID_RUT', message: 'RUT inválido.' }],
      action: CATALOG.VALIDATION_ERROR.action,
      severity: 'error',
      context: { folio: 3, request_id: 'req-1' },
    })
  })

  test('anything else is INTERNAL_ERROR and says nothing about the cause', () => {
    const { status, body } = toErrorResponse(new Error('SQLITE_CORRUPT at /var/lib/timbre'), 'req-2')
    expect(status).toBe(500)
    expect(JSON.stringify(body)).not.toContain('SQLITE')
    expect(body.context).toEqual({ request_id: 'req-2' })
  })

  test('a specific message replaces the catalog one', () => {
    expect(toErrorResponse(new TimbreError('INVALID_CAF', { message: 'El CAF es de otro RUT.' }), 'r').body.message).toBe('El CAF es de otro RUT.')
  })
})
