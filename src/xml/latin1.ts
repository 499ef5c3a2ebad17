// ISO-8859-1 text and the flat XML form that the TED (FRMT) and the CAF (FRMA) signatures cover.
// Every SII document is ISO-8859-1 (docs/sii-protocol.md §1.2); the TED and the CAF are signed over a flat, namespace-free
// serialization encoded as ISO-8859-1 (docs/sii-protocol.md §3.2, §3.4). One escaping rule for the whole pipeline: the five
// named entities, in the signed bytes and in the file alike.
import { DOMParser } from '@xmldom/xmldom'

const ELEMENT_NODE = 1
const TEXT_NODE = 3
const CDATA_SECTION_NODE = 4

/**
 * The ISO-8859-1 bytes of `xml`. Throws on any character above U+00FF: `Buffer.from(s, 'latin1')` would silently
 * keep only the low byte (€ U+20AC becomes 0xAC), and a TED signed over such bytes never verifies (docs/stack-notes.md).
 */
export function toLatin1Bytes(xml: string): Uint8Array {
  const bytes = new Uint8Array(xml.length)
  for (let i = 0; i < xml.length; i++) {
    const code = xml.charCodeAt(i)
    if (code > 0xff) throw new RangeError(`character U+${code.toString(16).toUpperCase().padStart(4, '0')} at ${i} is not ISO-8859-1`)
    bytes[i] = code
  }
  return bytes
}

/** Each byte becomes the code point of the same value. Not `TextDecoder('iso-8859-1')`, which is windows-1252 (0x80 → €). */
export function fromLatin1Bytes(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
}

/** True when every character fits in one ISO-8859-1 byte. */
export function isLatin1(text: string): boolean {
  return !/[^\u0000-\u00ff]/.test(text)
}

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }

/**
 * Text escaped with exactly the five named entities and no other reference (docs/sii-protocol.md §1.2, §3.2; LibreDTE legacy signs
 * and writes this form, verified byte for byte; raw quotes or `&#34;` do not verify against its TEDs).
 */
export function escapeXmlText(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c)
}

/**
 * The flat form of docs/sii-protocol.md §3.2 steps 2–3: local names only, no namespace declarations, attributes in document
 * order with double quotes, text with the five entities, whitespace-only text between tags dropped (`>` + spaces +
 * `<` becomes `><`), whitespace inside values kept. An empty element is written `<X></X>`, as C14N does.
 */
export function flattenElement(element: Element): string {
  let out = `<${element.localName}`
  for (let i = 0; i < element.attributes.length; i++) {
    const attr = element.attributes.item(i)
    if (attr === null || attr.name === 'xmlns' || attr.prefix === 'xmlns') continue
    out += ` ${attr.localName ?? attr.name}="${escapeXmlText(attr.value)}"`
  }
  out += '>'
  for (let child = element.firstChild; child !== null; child = child.nextSibling) out += flattenChild(child)
  return `${out}</${element.localName}>`
}

function flattenChild(node: ChildNode): string {
  if (node.nodeType === ELEMENT_NODE) return flattenElement(node as Element)
  if (node.nodeType !== TEXT_NODE && node.nodeType !== CDATA_SECTION_NODE) return ''  // comments, processing instructions
  const text = node.nodeValue ?? ''
  return /^\s*$/.test(text) ? '' : escapeXmlText(text)
}

/**
 * Parses XML text strictly: xmldom 0.8 is lenient (it logs and carries on, and takes a bare `&` or a C0 control
 * character as text), which would let a truncated or hand-edited CAF through. Throws `SyntaxError` on any warning
 * or error, on an `&` that starts no reference, on characters XML 1.0 forbids, and on a processing instruction or
 * CDATA section left open. Time linear in the text's length (issue 12).
 */
export function parseXml(text: string): Document {
  const fail = (msg: unknown): never => {
    throw new SyntaxError(String(msg).replace(/^\[xmldom \w+\]\s*/, ''))
  }
  // Linear (issue 12): the `&` pattern's alternatives start with different characters and cannot contain `;`.
  if (/&(?!(?:[A-Za-z_][\w.-]*|#\d+|#x[0-9A-Fa-f]+);)/.test(withoutCdataAndComments(text))) fail('"&" that starts no entity reference')
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.test(text)) fail('character not allowed in XML 1.0')
  // For a `<?` or `<![CDATA[` with no closer after it, xmldom 0.8 does work in proportion to the whole text (it matches
  // a pattern against everything before an unclosed `<?`), then accepts the document: quadratic, 80 000 characters of
  // `<?` after the root held the event loop 12 s (issue 12). A closer after the last opener means every opener has one.
  // Context-free on purpose: xmldom does not see comments where withoutCdataAndComments does (after `<a b="<!--"/>` it
  // parses what the pre-scan takes for a comment), so the rare `<?` or `<![CDATA[` with no closer anywhere after it is
  // refused even inside a comment or CDATA section; no CAF, SOAP request or DTE carries one.
  if (hasNoCloserAfterLast(text, '<?', '?>')) fail('unclosed processing instruction')
  if (hasNoCloserAfterLast(text, CDATA_OPEN, ']]>')) fail('unclosed CDATA section')
  const doc = new DOMParser({ errorHandler: { warning: fail, error: fail, fatalError: fail } }).parseFromString(text, 'text/xml')
  if (doc.documentElement === null) throw new SyntaxError('no root element')
  return doc as unknown as Document
}

const CDATA_OPEN = '<![CDATA['
const COMMENT_OPEN = '<!--'

/**
 * `text` without its CDATA sections and comments (XML 1.0 §2.5, §2.7), so that an `&` inside them is not taken for a
 * reference. Removes exactly what `text.replace(/<!\[CDATA\[[\s\S]*?\]\]>|<!--[\s\S]*?-->/g, '')` removed, in one
 * forward pass: that pattern searched to the end of the text once per unclosed `<!--` (160 000 characters of them held
 * the event loop 2 s, issue 12). Once an opener has no closer after it, no later opener of its kind has one either, so
 * that kind is no longer sought; the next opener of each kind is searched from where the last section ended.
 */
function withoutCdataAndComments(text: string): string {
  let cdata = text.indexOf(CDATA_OPEN)
  let comment = text.indexOf(COMMENT_OPEN)
  let out = ''
  let kept = 0  // where the text not yet copied to `out` starts
  while (cdata !== -1 || comment !== -1) {
    const isCdata = comment === -1 || (cdata !== -1 && cdata < comment)
    const start = isCdata ? cdata : comment
    const close = isCdata ? ']]>' : '-->'
    const end = text.indexOf(close, start + (isCdata ? CDATA_OPEN : COMMENT_OPEN).length)
    if (end === -1) {
      if (isCdata) cdata = -1
      else comment = -1
      continue
    }
    out += text.slice(kept, start)
    kept = end + close.length
    if (cdata !== -1 && cdata < kept) cdata = text.indexOf(CDATA_OPEN, kept)
    if (comment !== -1 && comment < kept) comment = text.indexOf(COMMENT_OPEN, kept)
  }
  return out + text.slice(kept)
}

function hasNoCloserAfterLast(text: string, open: string, close: string): boolean {
  const last = text.lastIndexOf(open)
  return last !== -1 && text.indexOf(close, last) === -1
}

/** Element children of `parent`, in order. */
export function childElements(parent: Element): Element[] {
  const out: Element[] = []
  for (let child = parent.firstChild; child !== null; child = child.nextSibling) {
    if (child.nodeType === ELEMENT_NODE) out.push(child as Element)
  }
  return out
}

/** The first element named `localName` (any namespace) at or under `root`, depth first. */
export function findElement(root: Element, localName: string): Element | null {
  if (root.localName === localName) return root
  for (const child of childElements(root)) {
    const found = findElement(child, localName)
    if (found !== null) return found
  }
  return null
}

/** Text content of an element (xmldom's `textContent` is all descendants' text, which is what the leaf fields need). */
export function textOf(element: Element): string {
  return element.textContent ?? ''
}
