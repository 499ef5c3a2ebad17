// Whole pesos as Chileans type them (issue 27): `12.500` is 12 500, never 12.5; `12,5` is not a whole number.
import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { formatPesos } from '../../../src/domain/numero-cl'
import { parseEnteroCL, pesosForInput } from '../../../src/console/numbers'

test.each([
  ['12500', 12500],
  ['12.500', 12500],
  ['$ 12.500', 12500],
  ['$12.500', 12500],
  ['  $\u00a012.500 ', 12500],
  ['12 500', 12500],
  ['1.234.567', 1234567],
  ['$12.500.-', 12500],
  ['12.500,-', 12500],
  ['0', 0],
  ['-0', 0],
  ['007', 7],
  ['-1.500', -1500],
  ['-$ 1.500', -1500],
  ['9.007.199.254.740.991', Number.MAX_SAFE_INTEGER],
])('%p reads as %p', (typed, expected) => {
  expect(parseEnteroCL(typed)).toBe(expected)
})

test.each([
  ['12,5'],
  ['12,0'],
  ['1.25'],
  ['12.5000'],
  ['.500'],
  ['12.'],
  ['12.500.--'],
  ['.-'],
  ['1.500 000'],
  ['12 50'],
  ['doce mil'],
  [''],
  ['   '],
  ['$'],
  ['1e4'],
  ['0x10'],
  ['+5'],
  ['9.007.199.254.740.992'],
])('%p is refused', (typed) => {
  expect(parseEnteroCL(typed)).toBeNull()
})

test('formatPesos prints pesos as Chilean documents do', () => {
  expect(formatPesos(12500)).toBe('$ 12.500')
  expect(formatPesos(1500)).toBe('$ 1.500')
  expect(formatPesos(0)).toBe('$ 0')
  expect(formatPesos(-990)).toBe('−$ 990')
})

test('whatever is shown, in a price list or back in its input, reads back as the same amount', () => {
  fc.assert(
    fc.property(fc.maxSafeInteger(), (n) => {
      expect(parseEnteroCL(formatPesos(n))).toBe(n)
      expect(parseEnteroCL(pesosForInput(n))).toBe(n)
    }),
  )
})
