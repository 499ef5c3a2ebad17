import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { cleanText, describeCodePoint, firstNonLatin1, replaceControls, transliterate, truncateChars } from '../../../src/domain/text'

describe('transliterate (DESIGN §12: curly quotes, dashes, ellipsis, NBSP)', () => {
  test.each([
    ['‘simple’ y “doble”', `'simple' y "doble"`],
    ['O’Higgins', "O'Higgins"],
    ['„bajo“ ‚bajo‛', `"bajo" 'bajo'`],
    ['2020–2024 — fin ‒ ― − ‐ ‑', '2020-2024 - fin - - - - -'],
    ['Espere…', 'Espere...'],
    ['100\u00A0kg\u202Fx\u2007y', '100 kg x y'],
  ])('%s → %s', (input, expected) => expect(transliterate(input)).toBe(expected))

  test('leaves Latin-1 text alone: ñ, á, «», °, ½', () => {
    const text = 'Ñuñoa «Peña» 35° ½ ¿qué? ¡sí!'
    expect(transliterate(text)).toBe(text)
  })
})

describe('replaceControls', () => {
  test('C0 controls become a space; tab, LF and CR stay', () => {
    expect(replaceControls('a\u0000b\u0007c\u000Bd\u000Ce\u001Ff')).toBe('a b c d e f')
    expect(replaceControls('a\tb\nc\rd')).toBe('a\tb\nc\rd')
  })
})

describe('firstNonLatin1', () => {
  test.each([
    ['precio 10 €', '€'],
    ['日本', '日'],
    ['ok 👍', '👍'],
    ['Ñandú ÿ', null],
  ])('%s → %s', (input, expected) => expect(firstNonLatin1(input)).toBe(expected))

  test('typographic characters are not offending once cleaned', () => {
    expect(firstNonLatin1(cleanText('“Nombre” — O’Higgins…'))).toBeNull()
  })

  test('describeCodePoint names the character for the error message', () => {
    expect(describeCodePoint('€')).toBe('U+20AC')
    expect(describeCodePoint('👍')).toBe('U+1F44D')
  })
})

describe('truncateChars', () => {
  test('cuts by characters, not UTF-16 units', () => {
    expect(truncateChars('ñandú', 3)).toBe('ñan')
    expect(truncateChars('a👍b', 2)).toBe('a👍')
    expect(truncateChars('corto', 10)).toBe('corto')
  })

  test('property: never longer than the limit, always a prefix', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.integer({ min: 0, max: 50 }), (s, max) => {
        const cut = truncateChars(s, max)
        expect(Array.from(cut).length).toBeLessThanOrEqual(max)
        expect(s.startsWith(cut)).toBe(true)
      }),
    )
  })
})

describe('cleanText', () => {
  test('property: idempotent, and leaves no C0 control but tab, LF, CR', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const once = cleanText(s)
        expect(cleanText(once)).toBe(once)
        expect(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/.test(once)).toBe(false)
      }),
    )
  })

  test('property: any Latin-1 text without controls passes through unchanged', () => {
    const latin1 = fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0xa0 && (c < 0x7f || c > 0x9f)).map((c) => String.fromCharCode(c)) })
    fc.assert(fc.property(latin1, (s) => expect(cleanText(s)).toBe(s)))
  })
})
