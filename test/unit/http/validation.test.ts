// TypeBox failures → DESIGN §5 details: dot paths, one code per field, the most telling one.
import { describe, expect, test } from 'bun:test'
import { Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { fieldErrorsFromTypeBox, mergeDetails, pointerToDotPath, withoutFields } from '../../../src/contracts/validation'

const Schema = Type.Object(
  {
    receptor: Type.Object({ rut: Type.String(), razon_social: Type.String({ minLength: 1, maxLength: 5 }) }, { additionalProperties: false }),
    detalle: Type.Array(Type.Object({ precio: Type.Integer({ minimum: 0 }), cantidad: Type.Number({ exclusiveMinimum: 0 }) }), { minItems: 1, maxItems: 2 }),
    tipo: Type.Union([Type.Literal(33), Type.Literal(39)]),
    fecha: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' })),
  },
  { additionalProperties: false },
)
const details = (v: unknown) => fieldErrorsFromTypeBox(Value.Errors(Schema, v))

describe('fieldErrorsFromTypeBox', () => {
  test('JSON pointers become dot paths', () => {
    expect(pointerToDotPath('/detalle/0/precio')).toBe('detalle.0.precio')
    expect(pointerToDotPath('/a~1b/c~0d')).toBe('a/b.c~d')
    expect(pointerToDotPath('')).toBe('')
  })

  test('every failing field once, each with its own code', () => {
    const found = details({
      receptor: { razon_social: 'demasiado largo', extra: 1 },
      detalle: [{ precio: 1.5, cantidad: 0 }, { precio: -1, cantidad: 1 }, { precio: 1, cantidad: 1 }],
      tipo: 34,
      fecha: '22-11-2026',
      otro: true,
    })
    const byField = Object.fromEntries(found.map((d) => [d.field, d.code]))
    expect(byField).toEqual({
      'receptor.rut': 'REQUIRED',
      'receptor.razon_social': 'TOO_LONG',
      'receptor.extra': 'NOT_ALLOWED',
      detalle: 'TOO_MANY',
      'detalle.0.precio': 'INVALID_TYPE',
      'detalle.0.cantidad': 'OUT_OF_RANGE',
      'detalle.1.precio': 'OUT_OF_RANGE',
      tipo: 'INVALID_VALUE',
      fecha: 'INVALID_FORMAT',
      otro: 'NOT_ALLOWED',
    })
    expect(found.every((d) => d.message.length > 0)).toBe(true)
  })

  test('a missing required object reports REQUIRED, not the type error that follows it', () => {
    const found = details({ detalle: [], tipo: 33 })
    expect(found).toContainEqual(expect.objectContaining({ field: 'receptor', code: 'REQUIRED' }))
    expect(found).toContainEqual(expect.objectContaining({ field: 'detalle', code: 'TOO_FEW' }))
    expect(found.filter((d) => d.field === 'receptor')).toHaveLength(1)
  })

  test('the allowed values are named in the message', () => {
    expect(details({ receptor: { rut: '1-9', razon_social: 'A' }, detalle: [{ precio: 1, cantidad: 1 }], tipo: 34 })).toEqual([
      { field: 'tipo', code: 'INVALID_VALUE', message: expect.stringContaining('33, 39') },
    ])
  })
})

describe('withoutFields and mergeDetails (every failing field at once, DESIGN §5)', () => {
  test('removes object members, turns array items into {} so later indexes hold, leaves the input untouched', () => {
    const body = { a: 1, b: { c: 2, d: 3 }, list: [{ x: 1 }, 5, { x: 3 }] }
    expect(withoutFields(body, ['b.c', 'list.1', 'list.2.x', 'nope.deeper'])).toEqual({ a: 1, b: { d: 3 }, list: [{ x: 1 }, {}, {}] })
    expect(body).toEqual({ a: 1, b: { c: 2, d: 3 }, list: [{ x: 1 }, 5, { x: 3 }] })
    expect(withoutFields('text', ['body'])).toBeNull()
    expect(withoutFields({ a: 1 }, ['body'])).toBeNull()
  })

  test('keeps the schema detail of a field and drops rule details at, inside or around it', () => {
    const shape = [{ field: 'detalle.0.precio', code: 'INVALID_TYPE' as const, message: 's' }]
    const rules = [
      { field: 'detalle.0.precio', code: 'OUT_OF_RANGE' as const, message: 'r' },
      { field: 'detalle.0', code: 'INCONSISTENT' as const, message: 'r' },
      { field: 'detalle.0.precio.x', code: 'INVALID_VALUE' as const, message: 'r' },
      { field: 'detalle.1.precio', code: 'OUT_OF_RANGE' as const, message: 'r' },
      { field: 'receptor.rut', code: 'INVALID_RUT' as const, message: 'r' },
    ]
    expect(mergeDetails(shape, rules).map((d) => d.field)).toEqual(['detalle.0.precio', 'detalle.1.precio', 'receptor.rut'])
  })

  test('where a rule reaches the same verdict as the schema, its message is kept', () => {
    const shape = [{ field: 'receptor.rut', code: 'REQUIRED' as const, message: 'Campo requerido.' }]
    const rules = [{ field: 'receptor.rut', code: 'REQUIRED' as const, message: 'En boletas sin RUT, use 66666666-6.' }]
    expect(mergeDetails(shape, rules)).toEqual(rules)
    expect(mergeDetails(shape, [{ ...rules[0]!, code: 'INVALID_RUT' as const }])).toEqual(shape)
  })
})
