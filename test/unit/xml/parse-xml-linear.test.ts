// Issue 12: parseXml answers in time linear in its input. Its pre-scan used to remove CDATA sections and comments with
// `/<!\[CDATA\[[\s\S]*?\]\]>|<!--[\s\S]*?-->/g`, which searches to the end of the text once per unclosed `<!--`: 160 000
// characters of them held the event loop every company shares for 2 s. xmldom 0.8 itself is quadratic on a `<?` or a
// `<![CDATA[` that is never closed (and then accepts the document), which parseXml now refuses before calling it.
import { describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { DOMParser } from '@xmldom/xmldom'
import fc from 'fast-check'
import { parseXml } from '../../../src/xml/latin1'
import { fastestOfSync } from '../../support/timing'

/** What `fn` returned or threw, and the shortest time it held the event loop over a few runs (test/support/timing.ts). */
function timed<T>(fn: () => T): { readonly value: T | Error; readonly ms: number } {
  return fastestOfSync(() => {
    try {
      return fn()
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err))
    }
  })
}

describe('parseXml on hostile input answers within 100 ms', () => {
  test.each([
    ['160 000 characters of unclosed <!--', '<!--'.repeat(40_000), /Unclosed comment/],
    ['160 000 characters of unclosed <!-- inside the root', `<a>${'<!--'.repeat(40_000)}</a>`, /Unclosed comment/],
    ['unclosed <!-- and <![CDATA[ interleaved', '<!--<![CDATA['.repeat(12_000), /unclosed CDATA section/],
    ['180 000 characters of unclosed <![CDATA[', '<![CDATA['.repeat(20_000), /unclosed CDATA section/],
    ['180 000 characters of unclosed <![CDATA[ after the root', `<a/>${'<![CDATA['.repeat(20_000)}`, /unclosed CDATA section/],
    ['160 000 characters of unclosed <? after the root', `<a/>${'<?'.repeat(80_000)}`, /unclosed processing instruction/],
    ['unclosed <? that the pre-scan takes for a comment', `<a b="<!--"/>${'<?'.repeat(80_000)}-->`, /unclosed processing instruction/],
    ['unclosed <![CDATA[ that the pre-scan takes for a comment', `<a b="<!--"/>${'<![CDATA['.repeat(20_000)}-->`, /unclosed CDATA section/],
    ['160 000 characters of & followed by a name and no ;', `<a>${'&abcdefgh'.repeat(20_000)}</a>`, /"&" that starts no entity reference/],
  ])('%s: a SyntaxError', (_name, text, message) => {
    const { value, ms } = timed(() => parseXml(text))
    expect(value).toBeInstanceOf(SyntaxError)
    expect((value as Error).message).toMatch(message)
    expect(ms).toBeLessThan(100)
  })

  test('6 000 closed comments, CDATA sections and processing instructions still parse, within 100 ms', () => {
    const { value, ms } = timed(() => parseXml(`<a>${'<!-- c --><![CDATA[&]]>x<?p ?>'.repeat(2_000)}</a>`))
    expect(value).not.toBeInstanceOf(Error)
    expect(ms).toBeLessThan(100)
  })
})

/** parseXml as it was before issue 12, kept as the oracle: right on small inputs, quadratic on large ones. */
function quadraticParseXml(text: string): Document {
  const fail = (msg: unknown): never => {
    throw new SyntaxError(String(msg).replace(/^\[xmldom \w+\]\s*/, ''))
  }
  const markup = text.replace(/<!\[CDATA\[[\s\S]*?\]\]>|<!--[\s\S]*?-->/g, '')
  if (/&(?!(?:[A-Za-z_][\w.-]*|#\d+|#x[0-9A-Fa-f]+);)/.test(markup)) fail('"&" that starts no entity reference')
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.test(text)) fail('character not allowed in XML 1.0')
  const doc = new DOMParser({ errorHandler: { warning: fail, error: fail, fatalError: fail } }).parseFromString(text, 'text/xml')
  if (doc.documentElement === null) throw new SyntaxError('no root element')
  return doc as unknown as Document
}

function outcome(parse: (text: string) => Document, text: string): string {
  try {
    return `ok ${String(parse(text))}`
  } catch (err) {
    return err instanceof Error ? `${err.name} ${err.message}` : `thrown ${String(err)}`
  }
}

/** Whether libxml2 finds `text` well-formed. */
function isWellFormed(text: string): boolean {
  return spawnSync('xmllint', ['--noout', '--nonet', '-'], { input: text }).status === 0
}

const UNCLOSED = /^SyntaxError unclosed (processing instruction|CDATA section)$/

describe('parseXml keeps its behaviour', () => {
  // Pieces that open, close and straddle comments, CDATA sections and processing instructions, with `&` in and out.
  const piece = fc.constantFrom('<!--', '-->', '<![CDATA[', ']]>', '<?p ', '?>', '&', '&amp;', '&#38;', 'x', '-', ']', '>', '<b/>', ' ')
  const document = fc.array(piece, { maxLength: 12 }).map((pieces) => `<a>${pieces.join('')}</a>`)

  test('the same document or error as the quadratic pre-scan, unless a <? or <![CDATA[ is never closed', () => {
    fc.assert(
      fc.property(document, (text) => {
        const now = outcome(parseXml, text)
        if (now !== outcome(quadraticParseXml, text)) expect(now).toMatch(UNCLOSED)
      }),
      { numRuns: 5_000 },
    )
  })

  test.each([
    ['& inside a comment is not a reference', '<a><!-- & --></a>', true],
    ['& inside CDATA is not a reference', '<a><![CDATA[a & b]]></a>', true],
    ['a comment inside CDATA is text', '<a><![CDATA[<!-- & ]]></a>', true],
    ['a processing instruction inside CDATA is text', '<a><![CDATA[<?p & ?>]]></a>', true],
    ['a closed processing instruction after the root', '<a/><?p x?>', true],
    ['a bare & after a comment', '<a><!-- x -->&</a>', false],
    ['a bare & after an unclosed CDATA opener', '<a><![CDATA[ & </a>', false],
  ])('%s: as before', (_name, text, isAccepted) => {
    expect(outcome(parseXml, text).startsWith('ok')).toBe(isAccepted)
    expect(outcome(parseXml, text)).toBe(outcome(quadraticParseXml, text))
  })

  test.each([
    ['an unclosed processing instruction after the root', '<a/><?p'],
    ['an unclosed CDATA section after the root', '<a/><![CDATA[x'],
    ['an unclosed CDATA section inside the root', '<a><![CDATA[x</a>'],
  ])('%s: xmldom accepted it, libxml2 does not, now refused', (_name, text) => {
    expect(outcome(quadraticParseXml, text)).toStartWith('ok')
    expect(isWellFormed(text)).toBe(false)
    expect(outcome(parseXml, text)).toMatch(UNCLOSED)
  })

  test('the price of a context-free check: a comment holding a <? that nothing closes is refused', () => {
    const text = '<a><!-- <? --></a>'
    expect(isWellFormed(text)).toBe(true)
    expect(outcome(parseXml, text)).toBe('SyntaxError unclosed processing instruction')
  })
})
