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
  const element = scanCanonicalElement(dte, head[0].length, ` xmlns="${SII_NS}" xmlns:xsi="${XSI_NS}"`)
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
  const element = scanCanonicalElement(signedInfo, 0, ` xmlns="${DSIG_NS}" xmlns:xsi="${XSI_NS}"`)
  return element !== null && element.end === signedInfo.length ? element.canonical : null
}

// ------------------------------------------------------------------------------------------------ by char codes
// `canonicalizeElement` again, by scanning char codes instead of matching TOKEN: same subset, same output, same null,
// for every input (test/unit/xml/envelope-fast-path.test.ts compares the two on random text around the subset and on
// every fixture), in ~a quarter of the CPU time (docs/decisions/signing.md "Envelope fast path"): a match array and a few
// strings per token cost more than the canonicalization itself.
// The output is the input's own slices with only the changes C14N makes written in between: the apex's namespaces,
// `<X/>` as `<X></X>`, `&quot;` `&apos;` `>` in text, `&gt;` `&apos;` in an attribute value.

const LT = 0x3c
const GT = 0x3e
const AMP = 0x26
const QUOT = 0x22
const SLASH = 0x2f
const SPACE = 0x20
const EQUALS = 0x3d
const BRACKET = 0x5d  // `]`
const NEL = 0x85

const isNameStart = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f
const isNameChar = (c: number): boolean => isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2d
/** Character data of the subset: TAB, LF, U+0020–U+00FF but `&`, `<` and U+0085 (as TOKEN's group 6). */
const isTextChar = (c: number): boolean => c === 0x09 || c === 0x0a || (c >= 0x20 && c <= 0xff && c !== AMP && c !== LT && c !== NEL)
/** A raw character of an attribute value: U+0020–U+00FF but `"`, `&`, `<` and U+0085 (as TOKEN's group 3). */
const isValueChar = (c: number): boolean => c >= 0x20 && c <= 0xff && c !== QUOT && c !== AMP && c !== LT && c !== NEL

/** Where the name starting at `at` ends, or -1 when none starts there (`[A-Za-z_][\w.-]*`). */
function nameEndAt(text: string, at: number): number {
  if (!isNameStart(text.charCodeAt(at))) return -1
  let i = at + 1
  while (isNameChar(text.charCodeAt(i))) i++
  return i
}

/** The name at `at` starts with `xml` in any case (RESERVED_NAME); only letters fold onto x, m, l with 0x20. */
function isReservedAt(text: string, at: number): boolean {
  return (text.charCodeAt(at) | 0x20) === 0x78 && (text.charCodeAt(at + 1) | 0x20) === 0x6d && (text.charCodeAt(at + 2) | 0x20) === 0x6c
}

const NAMED_REFERENCES = ['amp', 'lt', 'gt', 'quot', 'apos'] as const

/** The name of the reference starting at `at` (an `&`) when it is one of the five, else null. */
function namedReferenceAt(text: string, at: number): string | null {
  return NAMED_REFERENCES.find((name) => text.startsWith(name, at + 1) && text.charCodeAt(at + 1 + name.length) === 0x3b) ?? null
}

/** Same contract as `canonicalizeElement`, and the same answer for every input. */
export function scanCanonicalElement(text: string, from: number, apexNamespaces: string): { readonly canonical: string; readonly end: number } | null {
  const open: string[] = []
  let out = ''
  let copied = from  // text[copied, i) is canonical as it stands and not yet in `out`
  let runStart = -1  // where the current run of character data began (for `]]>`), -1 outside one
  let i = from
  for (;;) {
    const c = text.charCodeAt(i)
    if (c === LT) {
      runStart = -1
      if (text.charCodeAt(i + 1) === SLASH) {
        const name = open.pop()
        if (name === undefined || !text.startsWith(name, i + 2) || text.charCodeAt(i + 2 + name.length) !== GT) return null
        i += name.length + 3
      } else {
        const tag = startTagAt(text, i)
        if (tag === null) return null
        const isApex = open.length === 0
        if (isApex || tag.isEmpty || tag.valueChanges) {
          const attribute = tag.valueChanges ? tag.attribute.replace(/&(gt|apos);/g, (_m, r: string) => (r === 'gt' ? '>' : "'")) : tag.attribute
          out += `${text.slice(copied, i)}<${tag.name}${isApex ? apexNamespaces : ''}${attribute}>${tag.isEmpty ? `</${tag.name}>` : ''}`
          copied = tag.end
        }
        if (!tag.isEmpty) open.push(tag.name)
        i = tag.end
      }
      if (open.length === 0) return { canonical: out + text.slice(copied, i), end: i }
    } else if (c === AMP) {
      runStart = -1
      const reference = open.length === 0 ? null : namedReferenceAt(text, i)
      if (reference === null) return null
      if (reference === 'quot' || reference === 'apos') {
        out += `${text.slice(copied, i)}${reference === 'quot' ? '"' : "'"}`
        copied = i + reference.length + 2
      }
      i += reference.length + 2
    } else if (isTextChar(c) && open.length > 0) {
      if (runStart < 0) runStart = i
      if (c === GT) {
        // `]]>` is not well-formed in content (XML 1.0 §2.4); after a reference it is a new run, as in TOKEN.
        if (i - 2 >= runStart && text.charCodeAt(i - 1) === BRACKET && text.charCodeAt(i - 2) === BRACKET) return null
        out += `${text.slice(copied, i)}&gt;`
        copied = i + 1
      }
      i++
    } else {
      return null
    }
  }
}

interface StartTag {
  readonly name: string
  /** ` name="raw value"` as written, or ''. */
  readonly attribute: string
  /** The value holds `&gt;` or `&apos;`, which C14N writes as the character. */
  readonly valueChanges: boolean
  readonly isEmpty: boolean
  readonly end: number
}

/** The start tag at `at` (a `<` not followed by `/`) in the subset's form (TOKEN's groups 1–4), or null. */
function startTagAt(text: string, at: number): StartTag | null {
  const nameEnd = nameEndAt(text, at + 1)
  if (nameEnd < 0 || isReservedAt(text, at + 1)) return null
  let j = nameEnd
  let attribute = ''
  let valueChanges = false
  if (text.charCodeAt(j) === SPACE) {
    const attributeEnd = nameEndAt(text, j + 1)
    if (attributeEnd < 0 || isReservedAt(text, j + 1) || text.charCodeAt(attributeEnd) !== EQUALS || text.charCodeAt(attributeEnd + 1) !== QUOT) return null
    let k = attributeEnd + 2
    for (;;) {
      const v = text.charCodeAt(k)
      if (v === QUOT) break
      if (v === AMP) {
        const reference = namedReferenceAt(text, k)
        if (reference === null) return null
        if (reference === 'gt' || reference === 'apos') valueChanges = true
        k += reference.length + 2
      } else if (isValueChar(v)) {
        k++
      } else {
        return null
      }
    }
    attribute = text.slice(j, k + 1)
    j = k + 1
  }
  const isEmpty = text.charCodeAt(j) === SLASH
  if (isEmpty) j++
  if (text.charCodeAt(j) !== GT) return null
  return { name: text.slice(at + 1, nameEnd), attribute, valueChanges, isEmpty, end: j + 1 }
}

// ------------------------------------------------------------------------------------------------ inside SetDTE
// The envelope signature digests SetDTE, which holds up to 2 000 signed DTEs (EnvioDTE_v10.xsd); parsing them with
// xmldom and canonicalizing with xml-crypto cost ~0.85 ms per DTE, 1.7 s for a full envelope (issue 17). Each DTE's
// canonical form inside SetDTE is computed here from its text, with the same subset and the same null-means-DOM rule,
// by `scanCanonicalElement`.

const SIGNATURE_OPEN = `<Signature xmlns="${DSIG_NS}">`
const DTE_START_TAG = /^<DTE((?: [\w:]+="[^"<&]*")*)>/
/** Whitespace-only text between elements, which C14N keeps verbatim (no DTD says it is ignorable). */
const BLANKS = /[\t\n ]*/y

export interface CanonicalDteInSet {
  /** The `<DTE>` element's canonical form as a child of SetDTE. */
  readonly canonical: string
  /** The canonical form of its first child element (Documento, Liquidacion or Exportaciones), for the envelope's checks. */
  readonly container: string
}

/**
 * Inclusive C14N of one signed `<DTE>` as a child of SetDTE, whose apex already renders `xmlns`=SiiDte and `xmlns:xsi`
 * (envelope.ts). The DTE's own declarations of those two are then redundant and drop out (C14N §2.3: a namespace node
 * is written only where the nearest output ancestor does not already have it), leaving `<DTE version="1.0">`; nothing
 * in its elements declares anything; its Signature re-declares the default namespace as xmldsig and keeps it.
 * `dte` is the element alone, from `<DTE` to `</DTE>`. Null unless: the start tag is what `dteAttributesInSubset`
 * allows; the children are elements in the subset with only TAB/LF/space between them; the first child element is
 * not a Signature and the last is `<Signature xmlns="…xmldsig#">` whose children are elements in the subset.
 */
export function canonicalDteInSetDte(dte: string): CanonicalDteInSet | null {
  const head = DTE_START_TAG.exec(dte)
  if (head === null || !dteAttributesInSubset(head[1] ?? '')) return null
  let out = / version="1\.0"/.test(head[1] ?? '') ? '<DTE version="1.0">' : '<DTE>'
  let at = head[0].length
  let container: string | undefined
  let isSigned = false
  for (;;) {
    const blanks = blanksAt(dte, at)
    out += blanks
    at += blanks.length
    if (dte.startsWith('</DTE>', at)) break
    if (container !== undefined && dte.startsWith(SIGNATURE_OPEN, at)) {
      const content = canonicalChildren(dte, at + SIGNATURE_OPEN.length, '</Signature>')
      if (content === null) return null
      out += `${SIGNATURE_OPEN}${content.canonical}</Signature>`
      at = content.end
      isSigned = true
      continue
    }
    const element = scanCanonicalElement(dte, at, '')
    if (element === null) return null
    container ??= element.canonical
    out += element.canonical
    at = element.end
    isSigned = false
  }
  if (container === undefined || !isSigned || at + '</DTE>'.length !== dte.length) return null
  return { canonical: `${out}</DTE>`, container }
}

/** Element children in the subset, blanks between them, up to `close` (consumed); none declares a namespace. */
function canonicalChildren(text: string, from: number, close: string): { readonly canonical: string; readonly end: number } | null {
  let out = ''
  let at = from
  for (;;) {
    const blanks = blanksAt(text, at)
    out += blanks
    at += blanks.length
    if (text.startsWith(close, at)) return { canonical: out, end: at + close.length }
    const element = scanCanonicalElement(text, at, '')
    if (element === null) return null
    out += element.canonical
    at = element.end
  }
}

function blanksAt(text: string, from: number): string {
  BLANKS.lastIndex = from
  return BLANKS.exec(text)?.[0] ?? ''
}
