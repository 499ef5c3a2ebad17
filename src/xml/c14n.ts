// Inclusive C14N 1.0 (https://www.w3.org/TR/2001/REC-xml-c14n-20010315) computed directly from the text, for the narrow
// form of XML Timbre's own builders write. It exists for speed only (parsing with xmldom and canonicalizing with
// xml-crypto cost ~0.6 ms per DTE, as much as the RSA signature itself: issue 4's benchmark) and it must never change
// a byte: every function here returns null as soon as the text leaves the supported subset, and the caller then
// takes the xml-crypto path, which stays the reference (test/unit/xml/c14n.test.ts compares the two byte for byte).
//
// The subset, checked token by token (anything else, anywhere, means null):
// - element and attribute names `[A-Za-z_][A-Za-z0-9_.-]*`: no prefixes, no colons, nothing starting with `xml`
//   (so no namespace declaration and no `xml:` attribute inside the subtree: the only namespace nodes are those of
//   the apex, passed in by the caller);
// - at most one attribute per element (nothing to sort), written ` name="value"` with double quotes, single spaces;
// - start tags `<a>`, `<a x="v">`, empty tags `<a/>`, `<a x="v"/>`, end tags `</a>` with no inner whitespace;
// - character data and attribute values of TAB, LF and U+0020–U+00FF only (no CR: a parser turns it into LF, no
//   C0 control, nothing beyond Latin-1), and not U+0085 (NEL): xmldom 0.8 turns it into LF as if it were XML 1.1,
//   which libxml2 does not, so the xml-crypto path digests other bytes than the text holds; the string path
//   declines it to stay byte-identical to that path (docs/decisions/signing.md "Fast path"); references only `&amp; &lt; &gt; &quot; &apos;`, no `]]>` in text, no TAB or
//   LF in attribute values (attribute-value normalization would turn them into spaces);
// - no comment, processing instruction, CDATA section, DOCTYPE or numeric character reference.
// Within it the C14N rules reduce to (spec §1.1 and §2.3): namespace declarations of the apex first, default
// namespace before prefixed ones; empty elements written as start-end pairs; in text `&` `<` `>` escaped and quotes
// raw; in attribute values `&` `<` `"` escaped and `>` `'` raw; everything else verbatim (the digest is then taken
// over the UTF-8 encoding of the result, as xml-crypto's is).
import { DSIG_NS, SII_NS, XSI_NS } from './dsig-profile'

/**
 * One token of the subset, matched at `lastIndex` (sticky). Groups: 1 start-tag name, 2 attribute name, 3 raw
 * attribute value, 4 `/` of an empty tag, 5 end-tag name, 6 a run of character data, 7 a named entity.
 * Attribute values: U+0020–U+00FF except `"` `&` `<` U+0085, or one of the five references. Text: TAB, LF,
 * U+0020–U+00FF except `&` `<` U+0085.
 */
const TOKEN =
  /<([A-Za-z_][\w.-]*)(?: ([A-Za-z_][\w.-]*)="((?:[\u0020\u0021\u0023-\u0025\u0027-\u003b\u003d-\u0084\u0086-\u00ff]|&(?:amp|lt|gt|quot|apos);)*)")?(\/?)>|<\/([A-Za-z_][\w.-]*)>|([\t\n\u0020-\u0025\u0027-\u003b\u003d-\u0084\u0086-\u00ff]+)|&(amp|lt|gt|quot|apos);/y

/** A named reference as C14N writes its character in text: quotes raw, the other three escaped (C14N §1.1). */
const TEXT_REFERENCE: Readonly<Record<string, string>> = { amp: '&amp;', lt: '&lt;', gt: '&gt;', quot: '"', apos: "'" }

const RESERVED_NAME = /^xml/i

/**
 * The canonical form of the element starting at `from` (a start tag) through its matching end tag, with `apexNamespaces`
 * (already rendered and sorted, e.g. ` xmlns="…" xmlns:xsi="…"`) written on the apex before its attribute.
 * Returns null when anything in that element is outside the subset described at the top of this file.
 */
export function canonicalizeElement(text: string, from: number, apexNamespaces: string): { readonly canonical: string; readonly end: number } | null {
  const open: string[] = []
  let out = ''
  TOKEN.lastIndex = from
  for (;;) {
    const m = TOKEN.exec(text)
    if (m === null) return null
    const [, startName, attrName, attrValue, selfClosing, endName, chars, reference] = m
    if (startName !== undefined) {
      if (RESERVED_NAME.test(startName) || (attrName !== undefined && RESERVED_NAME.test(attrName))) return null
      out += `<${startName}${open.length === 0 ? apexNamespaces : ''}`
      // Raw values hold no `"`, `<` or bare `&`; of the references only &gt; and &apos; change (C14N attribute rule).
      if (attrName !== undefined) out += ` ${attrName}="${(attrValue ?? '').replace(/&(gt|apos);/g, (_m, r: string) => (r === 'gt' ? '>' : "'"))}"`
      out += '>'
      if (selfClosing === '/') out += `</${startName}>`
      else open.push(startName)
    } else if (endName !== undefined) {
      if (open.pop() !== endName) return null
      out += `</${endName}>`
    } else if (chars !== undefined) {
      if (open.length === 0 || chars.includes(']]>')) return null  // `]]>` is not well-formed in content (XML 1.0 §2.4)
      out += chars.replace(/>/g, '&gt;')
    } else {
      if (open.length === 0) return null
      out += TEXT_REFERENCE[reference ?? ''] ?? ''
    }
    if (open.length === 0) return { canonical: out, end: TOKEN.lastIndex }
  }
}

/**
 * The start of a DTE in the subset: optional XML declaration (one of the two forms Timbre writes), whitespace, `<DTE`
 * with only `xmlns`, `xmlns:xsi` and `version="1.0"` (order free, checked below), whitespace, then the signed element.
 */
const DTE_HEAD = /^(?:<\?xml version="1\.0"(?: encoding="ISO-8859-1")?\?>)?[\t\n ]*<DTE((?: [\w:]+="[^"<&]*")*)>[\t\n ]*(?=<(?:Documento|Liquidacion|Exportaciones) ID="[A-Za-z_][\w.-]*">)/
const DTE_TAIL = /^[\t\n ]*<\/DTE>[\t\n ]*$/
const ALLOWED_DTE_ATTRIBUTES: Readonly<Record<string, string>> = { 'xmlns': SII_NS, 'xmlns:xsi': XSI_NS, 'version': '1.0' }

/**
 * True when the `<DTE>` start tag declares exactly `xmlns` = SiiDte and `xmlns:xsi` (docs/sii-protocol.md §4.3 item 6), plus
 * optionally `version="1.0"`, each once: then the in-scope namespaces of the signed element are those two and nothing
 * else (no `xml:` attribute to inherit either, C14N §2.4).
 */
function dteAttributesInSubset(attrs: string): boolean {
  const seen = new Set<string>()
  for (const [, name, value] of attrs.matchAll(/ ([\w:]+)="([^"]*)"/g)) {
    if (name === undefined || seen.has(name) || ALLOWED_DTE_ATTRIBUTES[name] !== value) return false
    seen.add(name)
  }
  return seen.has('xmlns') && seen.has('xmlns:xsi')
}

/** What the DTE signature needs from the text: the signed element's ID and its canonical form. */
export interface CanonicalDocumento {
  readonly id: string
  readonly canonical: string
}

/**
 * Inclusive C14N of the first child of `<DTE>` (Documento, Liquidacion or Exportaciones) in its document's context,
 * i.e. what xml-crypto's C14nCanonicalization gives with the ancestor namespaces of `<DTE>`. `dte` is the whole
 * document text, after signDte added the two namespace declarations. Null when the text is not, from its first
 * character to its last, a DTE in the subset above (the caller then parses it and uses xml-crypto).
 */
export function canonicalDocumento(dte: string): CanonicalDocumento | null {
  const head = DTE_HEAD.exec(dte)
  if (head === null || !dteAttributesInSubset(head[1] ?? '')) return null
  const element = canonicalizeElement(dte, head[0].length, ` xmlns="${SII_NS}" xmlns:xsi="${XSI_NS}"`)
  if (element === null || !DTE_TAIL.test(dte.slice(element.end))) return null
  const id = / ID="([^"]*)">/.exec(element.canonical.slice(0, element.canonical.indexOf('>') + 1))?.[1]
  return id === undefined ? null : { id, canonical: element.canonical }
}

/**
 * Inclusive C14N of `signedInfo` (the text signDte wrote) as it will sit in `<Signature xmlns="…xmldsig#">` as the
 * last child of a `<DTE>` for which `canonicalDocumento` succeeded: it inherits the default namespace of Signature
 * and `xmlns:xsi` of `<DTE>` (docs/sii-protocol.md §4.3). Null when `signedInfo` is outside the subset.
 */
export function canonicalSignedInfo(signedInfo: string): string | null {
  const element = canonicalizeElement(signedInfo, 0, ` xmlns="${DSIG_NS}" xmlns:xsi="${XSI_NS}"`)
  return element !== null && element.end === signedInfo.length ? element.canonical : null
}
