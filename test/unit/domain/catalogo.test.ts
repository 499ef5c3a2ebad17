// DESIGN §8, §12: search folding (case, accents, typographic characters), RUT search forms, and the field rules the
// TypeBox schemas cannot state.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import {
  checkClienteFields,
  checkProductoFields,
  checkRutUnchanged,
  clienteSearchTerms,
  compactRut,
  foldText,
  isValidEmail,
  productoSearchTerms,
  rutSearchForm,
} from '../../../src/domain/catalogo'
import { computeDv, formatRutWithDots, parseRut } from '../../../src/domain/rut'

describe('foldText', () => {
  test.each([
    ['Ñuñoa', 'nunoa'],
    ['ÑUÑOA', 'nunoa'],
    ['Peñalolén', 'penalolen'],
    ['Constructora ÁRBOL  Alto\tS.A.', 'constructora arbol alto s.a.'],
    ['  Güemes  ', 'guemes'],
    ['O’Higgins — “Sur”', `o'higgins - "sur"`],
    ['ｆｕｌｌ ｗｉｄｔｈ ﬁ', 'full width fi'],
    ['Ç ü ö ß', 'c u o ß'],
    ['   ', ''],
  ])('%p → %p', (text, folded) => {
    expect(foldText(text)).toBe(folded)
  })

  test('is idempotent, has no capitals or combining marks, and no edge or double spaces', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        const f = foldText(s)
        expect(foldText(f)).toBe(f)
        expect(f).not.toMatch(/\p{M}|^\s|\s$|\s\s/u)
        expect(f).toBe(f.toLowerCase())
      }),
    )
  })

  test('a substring of a text, folded, is a substring of the folded text (what makes search by fragment work)', () => {
    const words = fc.constantFrom('Ñuñoa', 'Peñalolén', 'Árbol', 'Ltda.', 'S.A.', 'Güemes', 'Comercial', 'O’Higgins', '123')
    fc.assert(
      fc.property(fc.array(words, { minLength: 1, maxLength: 6 }), fc.nat(), fc.nat(), (ws, a, b) => {
        const text = ws.join(' ')
        const [from, to] = [a % text.length, b % text.length].sort((x, y) => x - y) as [number, number]
        const piece = foldText(text.slice(from, to + 1))
        expect(foldText(text)).toContain(piece)
      }),
    )
  })
})

describe('RUT search forms', () => {
  test.each([
    ['12.345.678-5', '123456785'],
    ['12345678-5', '123456785'],
    ['123456785', '123456785'],
    ['96.874.030-K', '96874030k'],
    ['96874030k', '96874030k'],
    ['345.678', '345678'],
    ['  76.086 ', '76086'],
    ['Ñuñoa', null],
    ['k', null],
    ['12K3', null],
    ['S.A.', null],
  ])('%p → %p', (q, form) => {
    expect(rutSearchForm(q)).toBe(form)
  })

  test('every spelling of a RUT searches for exactly how the RUT is indexed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1_000_000, max: 99_999_999 }), fc.boolean(), fc.boolean(), fc.boolean(), (n, dots, dash, lower) => {
        const body = String(n)
        const dv = computeDv(body)
        const canonical = `${body}-${dv}`
        let spelled = dots ? formatRutWithDots(parseRut(canonical)!) : canonical
        if (!dash) spelled = spelled.replace('-', '')
        if (lower) spelled = spelled.toLowerCase()
        expect(rutSearchForm(spelled)).toBe(compactRut(canonical))
        expect(compactRut(canonical)).toContain(rutSearchForm(body.slice(2, 6))!)
      }),
    )
  })

  test('cliente terms: the folded text and the RUT form, once each; producto terms: the folded text', () => {
    expect(clienteSearchTerms('12.345.678-5')).toEqual(['12.345.678-5', '123456785'])
    expect(clienteSearchTerms('12345')).toEqual(['12345'])
    expect(clienteSearchTerms(' Ñuñoa ')).toEqual(['nunoa'])
    expect(clienteSearchTerms('   ')).toEqual([])
    expect(productoSearchTerms('SKU-Ñ1')).toEqual(['sku-n1'])
  })
})

describe('field rules', () => {
  test('cliente: RUT, blank razón social, ISO-8859-1 texts bound for a DTE, e-mail', () => {
    expect(checkClienteFields({ rut: '76.086.428-5', razon_social: 'Ñandú Ltda.', email: 'a.b+c@d-e.cl', notas: 'emoji ok 😀' })).toEqual([])
    expect(checkClienteFields({ rut: '76086428-4', razon_social: ' ', giro: 'x €', email: 'a@b' }).map((e) => `${e.field}:${e.code}`)).toEqual([
      'rut:INVALID_RUT',
      'razon_social:REQUIRED',
      'giro:INVALID_VALUE',
      'email:INVALID_FORMAT',
    ])
    expect(checkClienteFields({ direccion: 'O’Higgins – 12' })).toEqual([])
    expect(checkClienteFields({ rut: 5, razon_social: null })).toEqual([])
  })

  test('a RUT in an update may only repeat the stored one', () => {
    expect(checkRutUnchanged(undefined, '76086428-5')).toEqual([])
    expect(checkRutUnchanged('76.086.428-5', '76086428-5')).toEqual([])
    for (const sent of ['96874030-K', 'x', null, 1]) expect(checkRutUnchanged(sent, '76086428-5')[0]).toMatchObject({ field: 'rut', code: 'NOT_ALLOWED' })
  })

  test('producto: blank nombre, ISO-8859-1 nombre and descripcion', () => {
    expect(checkProductoFields({ nombre: 'Clavos 2½"', categoria: '★' })).toEqual([])
    expect(checkProductoFields({ nombre: '', descripcion: 'Ω' }).map((e) => `${e.field}:${e.code}`)).toEqual(['nombre:REQUIRED', 'descripcion:INVALID_VALUE'])
  })

  test.each([
    ['pagos@empresa.cl', true],
    ['a.b+c@sub.dominio.com', true],
    ['sin-arroba.cl', false],
    ['a@localhost', false],
    ['a @b.cl', false],
    ['a@-b.cl', false],
    ['', false],
  ])('email %p → %p', (email, ok) => {
    expect(isValidEmail(email)).toBe(ok)
  })
})
