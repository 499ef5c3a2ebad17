// Numbers as people in Chile type them (issue 27): the dot groups thousands, the comma marks decimals. One reading for
// every form of the console; a peso amount with decimals is refused in words, never rounded.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { formatMoneda, formatNumeroCL, formatPesos, MENSAJE_PESOS_ENTEROS, parseNumeroCL } from '../../../src/domain/numero-cl'

const ENTERO = { decimales: false } as const
const DECIMAL = { decimales: true } as const

describe('reading', () => {
  test.each([
    ['12.500', ENTERO, 12500],
    ['12500', ENTERO, 12500],
    ['$ 12.500', ENTERO, 12500],
    ['$12.500', ENTERO, 12500],
    ['  1.250.000 ', ENTERO, 1250000],
    ['0', ENTERO, 0],
    ['12,5', DECIMAL, 12.5],
    ['12.500', DECIMAL, 12500],
    ['1.234,5678', DECIMAL, 1234.5678],
    ['0,25', DECIMAL, 0.25],
    ['950,37', DECIMAL, 950.37],
    ['-1.000', { decimales: false, negativos: true }, -1000],
    ['-$ 1.000', { decimales: false, negativos: true }, -1000],
    ['−$ 1.000', { decimales: false, negativos: true }, -1000],
    ['12 500', ENTERO, 12500],
    ['1 250 000,5', DECIMAL, 1250000.5],
    ['$12.500.-', ENTERO, 12500],
  ] as const)('%p reads as %p', (raw, options, value) => {
    expect(parseNumeroCL(raw, options)).toEqual({ ok: true, value })
  })

  test('12,5 in pesos is refused in words, not rounded', () => {
    expect(parseNumeroCL('12,5', ENTERO)).toEqual({ ok: false, message: MENSAJE_PESOS_ENTEROS })
    expect(parseNumeroCL('12,5', { decimales: false, mensajeEntero: 'Es un número entero.' })).toEqual({ ok: false, message: 'Es un número entero.' })
  })

  test.each(['12.5', '1.2345', '1,234.56', '12.50', '0.500', '000.500'])('%p: a decimal point is refused rather than guessed', (raw) => {
    const read = parseNumeroCL(raw, DECIMAL)
    expect(read.ok).toBe(false)
    expect(!read.ok && read.message).toContain('coma')
  })

  test.each(['1.25.000', '12..500', ',5', '5,', 'ocho mil', '1 25 000', '12  500', '1e3', '0x10', '+5', ''])('%p is not a number', (raw) => {
    expect(parseNumeroCL(raw, DECIMAL).ok).toBe(false)
    expect(parseNumeroCL(raw, ENTERO).ok).toBe(false)
  })

  test('a minus sign only where the field takes it', () => {
    expect(parseNumeroCL('-5', ENTERO)).toEqual({ ok: false, message: 'No puede ser negativo.' })
    expect(parseNumeroCL('-0', { decimales: false, negativos: true })).toEqual({ ok: true, value: 0 })
  })

  test('past 2^53 the number is refused, not rounded', () => {
    expect(parseNumeroCL('9.007.199.254.740.993', ENTERO).ok).toBe(false)
  })
})

describe('properties', () => {
  test('every whole number shown as the console shows it reads back as itself, with or without its peso sign', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        const shown = formatNumeroCL(n, 0)
        expect(parseNumeroCL(shown, ENTERO)).toEqual({ ok: true, value: n })
        expect(parseNumeroCL(formatPesos(n), ENTERO)).toEqual({ ok: true, value: n })
        expect(parseNumeroCL(String(n), ENTERO)).toEqual({ ok: true, value: n })
      }),
    )
  })

  test('an amount with up to 4 decimals reads back as itself', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 99_999_999_999 }), fc.integer({ min: 0, max: 9999 }), (int, frac) => {
        const n = Number(`${int}.${String(frac).padStart(4, '0')}`)
        expect(parseNumeroCL(formatNumeroCL(n, 4), DECIMAL)).toEqual({ ok: true, value: n })
      }),
    )
  })

  test('a number with decimals is never read as a whole number of pesos', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 1, max: 99 }), (int, frac) => {
        expect(parseNumeroCL(`${formatNumeroCL(int, 0)},${frac}`, ENTERO).ok).toBe(false)
      }),
    )
  })

  test('grouping never changes the value: 12.500 and 12500 are the same number', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1000, max: 999_999_999_999 }), (n) => {
        const grouped = parseNumeroCL(formatNumeroCL(n, 0), DECIMAL)
        const plain = parseNumeroCL(String(n), DECIMAL)
        expect(grouped).toEqual(plain)
      }),
    )
  })
})

describe('showing', () => {
  test('pesos with a space after the sign and dots for thousands; foreign amounts with the currency and a decimal comma', () => {
    expect(formatPesos(12500)).toBe('$ 12.500')
    expect(formatPesos(1234)).toBe('$ 1.234')
    expect(formatPesos(0)).toBe('$ 0')
    expect(formatPesos(-19000)).toBe('−$ 19.000')
    expect(formatMoneda(6372.75, 'DOLAR USA')).toBe('DOLAR USA 6.372,75')
    expect(formatNumeroCL(950.37)).toBe('950,37')
  })
})
