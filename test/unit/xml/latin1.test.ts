import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { escapeXmlText, flattenElement, fromLatin1Bytes, isLatin1, parseXml, toLatin1Bytes } from '../../../src/xml/latin1'

const ALL_LATIN1 = Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)).join('')

describe('toLatin1Bytes / fromLatin1Bytes', () => {
  test('every code point U+0000–U+00FF is one byte of the same value, both ways', () => {
    const bytes = toLatin1Bytes(ALL_LATIN1)
    expect(Array.from(bytes)).toEqual(Array.from({ length: 256 }, (_, i) => i))
    expect(fromLatin1Bytes(bytes)).toBe(ALL_LATIN1)
  })

  test.each([
    ['€', 'U+20AC'],  // Buffer.from(s, 'latin1') would silently write 0xAC (docs/stack-notes.md)
    ['Ａ', 'U+FF21'],
    ['—', 'U+2014'],
    ['😀', 'U+D83D'],
  ])('%s is refused (%s), not mangled', (ch, code) => {
    expect(() => toLatin1Bytes(`Precio ${ch}`)).toThrow(code)
    expect(isLatin1(`Precio ${ch}`)).toBe(false)
  })

  test('0x80 reads as U+0080, not € (TextDecoder("iso-8859-1") is windows-1252)', () => {
    expect(fromLatin1Bytes(new Uint8Array([0x80, 0xd1]))).toBe('\u0080Ñ')
  })

  test('a subarray is decoded from its own offset', () => {
    expect(fromLatin1Bytes(toLatin1Bytes('xxÑandú').subarray(2))).toBe('Ñandú')
  })
})

describe('escapeXmlText', () => {
  test('exactly the five named entities (docs/sii-protocol.md §1.2, §3.2)', () => {
    expect(escapeXmlText(`A&B <C> "D" 'E' Ñ`)).toBe('A&amp;B &lt;C&gt; &quot;D&quot; &apos;E&apos; Ñ')
  })

  test('parsing the escaped text gives the original back (property)', () => {
    const xmlChar = fc.constantFrom(...'abcÑñáéíóú &<>"\'\t\n;#x0123456789 '.split(''))
    fc.assert(
      fc.property(fc.array(xmlChar, { maxLength: 60 }).map((a) => a.join('')), (text) => {
        const doc = parseXml(`<R>${escapeXmlText(text)}</R>`)
        expect(doc.documentElement.textContent ?? '').toBe(text)
      }),
    )
  })
})

describe('flattenElement (docs/sii-protocol.md §3.2 steps 2–3)', () => {
  test('drops namespace declarations and whitespace between tags, keeps whitespace inside values', () => {
    const doc = parseXml('<DTE xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\r\n\t<DD>\n\t\t<RSR>EMPRESA  LTDA</RSR>\n\t\t<X a="1&amp;2"/>\n\t</DD>\n</DTE>')
    const dd = doc.documentElement.getElementsByTagName('DD').item(0)
    expect(dd).not.toBeNull()
    expect(flattenElement(dd as Element)).toBe('<DD><RSR>EMPRESA  LTDA</RSR><X a="1&amp;2"></X></DD>')
  })

  test('re-escapes with the five entities whatever the source used (numeric references, CDATA, raw quotes)', () => {
    const doc = parseXml(`<RSR>&#34;Q&#39; "R" 'S' &#x26; <![CDATA[<T>]]><!-- note --></RSR>`)
    expect(flattenElement(doc.documentElement)).toBe('<RSR>&quot;Q&apos; &quot;R&quot; &apos;S&apos; &amp; &lt;T&gt;</RSR>')
  })
})

describe('parseXml', () => {
  test.each([
    ['unclosed element', '<A><B></A>'],
    ['stray ampersand', '<A>x & y</A>'],
    ['not XML', 'hola'],
    ['truncated', '<AUTORIZACION><CAF version="1.0"><DA>'],
  ])('refuses %s instead of guessing', (_, text) => {
    expect(() => parseXml(text)).toThrow(SyntaxError)
  })
})

test('parseXml refuses a C0 control character (XML 1.0 cannot carry it; DESIGN §12)', () => {
  expect(() => parseXml('<A>x\u0001y</A>')).toThrow(SyntaxError)
})
