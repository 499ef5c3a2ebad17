// docs/sii-protocol.md §8: módulo-11 check digit, any spelling in, canonical `12345678-K` out.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { computeDv, formatRut, formatRutWithDots, normalizeRut, parseRut, rutInText } from '../../../src/domain/rut'

// The vectors docs/sii-protocol.md §8 lists (SII, the official example's parties, special RUTs, library test data).
const VECTORS = ['60803000-K', '97975000-5', '7880442-4', '77777777-7', '66666666-6', '55555555-5', '11111111-1', '12345678-5', '60910000-1', '76555835-2', '76177907-9', '76369187-K', '77879240-0', '96874030-K', '1-9']

describe('check digit', () => {
  test.each(VECTORS)('%s', (rut) => {
    const [body, dv] = rut.split('-') as [string, string]
    expect(computeDv(body)).toBe(dv)
    expect(normalizeRut(rut)).toBe(rut)
  })

  test('a wrong digit is refused', () => {
    for (const rut of ['60803000-1', '97975000-4', '12345678-K', '1-8']) expect(normalizeRut(rut)).toBeNull()
  })
})

describe('spellings', () => {
  test.each([
    ['12.345.678-5', '12345678-5'],
    ['12345678-5', '12345678-5'],
    ['123456785', '12345678-5'],
    [' 12.345.678 - 5 ', '12345678-5'],
    ['76.369.187-k', '76369187-K'],
    ['76369187k', '76369187-K'],
    ['07880442-4', '7880442-4'],
    ['007.880.442-4', '7880442-4'],
  ])('%j → %s', (input, canonical) => {
    expect(normalizeRut(input)).toBe(canonical)
  })

  test.each(['', '-', 'abc', '12345678-', '-5', '12.345.678-55', '0-0', '123456789-0', '12,345,678-5', '1234567X-5'])('%j is not a RUT', (input) => {
    expect(parseRut(input)).toBeNull()
  })

  test('printed with dots', () => {
    expect(formatRutWithDots(parseRut('76369187-K')!)).toBe('76.369.187-K')
    expect(formatRutWithDots(parseRut('1-9')!)).toBe('1-9')
    expect(formatRutWithDots(parseRut('7880442-4')!)).toBe('7.880.442-4')
  })
})

describe('properties', () => {
  const body = fc.integer({ min: 1, max: 99_999_999 }).map(String)

  test('every body with its computed digit is valid, and any spelling of it parses back to the canonical form', () => {
    fc.assert(
      fc.property(body, fc.boolean(), fc.boolean(), fc.nat(3), (b, dots, lower, zeros) => {
        const dv = computeDv(b)
        const canonical = `${b}-${dv}`
        const digits = '0'.repeat(zeros) + b
        const spelled = `${dots ? digits.replace(/\B(?=(\d{3})+(?!\d))/g, '.') : digits}-${lower ? dv.toLowerCase() : dv}`
        expect(normalizeRut(spelled)).toBe(canonical)
        expect(formatRut(parseRut(formatRutWithDots(parseRut(canonical)!))!)).toBe(canonical)
      }),
    )
  })

  test('exactly one check digit of the eleven is accepted for a body', () => {
    fc.assert(
      fc.property(body, (b) => {
        const accepted = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'K'].filter((dv) => parseRut(`${b}-${dv}`) !== null)
        expect(accepted).toEqual([computeDv(b)])
      }),
    )
  })
})

describe('rutInText: the RUT a certificate names, check digit not verified', () => {
  test.each([
    ['07.880.442-4', '7880442-4'],
    ['RUT 12345678-k del titular', '12345678-K'],
    ['12345678-5', '12345678-5'],
    ['00000000-0', null],
    ['sin rut', null],
  ])('%p → %p', (text, expected) => expect(rutInText(text)).toBe(expected))
})
