// Text the SII can carry: ISO-8859-1 only, no C0 controls (DESIGN §12 "Text", docs/sii-protocol.md §1.2).
// The JSON keeps what the integrator sent; these functions decide what the XML may say.

// Typographic characters word processors insert, mapped to their plain Latin-1 spelling (DESIGN §12: curly quotes,
// dashes, ellipsis and NBSP). NBSP itself is Latin-1 (0xA0) but prints like a space and trips up SII text matching.
const TRANSLITERATIONS: Readonly<Record<string, string>> = {
  '\u2018': "'", // left single quotation mark
  '\u2019': "'", // right single quotation mark (also the typographic apostrophe)
  '\u201A': "'", // single low-9 quotation mark
  '\u201B': "'", // single high-reversed-9 quotation mark
  '\u2032': "'", // prime
  '\u201C': '"', // left double quotation mark
  '\u201D': '"', // right double quotation mark
  '\u201E': '"', // double low-9 quotation mark
  '\u201F': '"', // double high-reversed-9 quotation mark
  '\u2033': '"', // double prime
  '\u2010': '-', // hyphen
  '\u2011': '-', // non-breaking hyphen
  '\u2012': '-', // figure dash
  '\u2013': '-', // en dash
  '\u2014': '-', // em dash
  '\u2015': '-', // horizontal bar
  '\u2212': '-', // minus sign
  '\u2026': '...', // horizontal ellipsis
  '\u00A0': ' ', // no-break space
  '\u2007': ' ', // figure space
  '\u202F': ' ', // narrow no-break space
}

const TRANSLITERABLE = new RegExp(`[${Object.keys(TRANSLITERATIONS).join('')}]`, 'g')

// C0 controls that XML 1.0 cannot carry at all; tab, LF and CR are legal and kept (DESIGN §12). DEL and the C1
// controls (U+007F–U+009F) are legal XML but parsers disagree on them: xmldom reads U+0085 (NEL) as a line break and
// libxml2 does not, so a signature made over one reading fails the other (found verifying with xmlsec1). They only
// reach us from text decoded with the wrong code page, so they become a space too.
const ILLEGAL_CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g

/** Typographic quotes, dashes, ellipsis and no-break spaces become their ASCII spelling (DESIGN §12). */
export function transliterate(text: string): string {
  return text.replace(TRANSLITERABLE, (c) => TRANSLITERATIONS[c] ?? c)
}

/** C0 control characters other than tab, LF and CR, DEL and C1 controls become a space (DESIGN §12). */
export function replaceControls(text: string): string {
  return text.replace(ILLEGAL_CONTROLS, ' ')
}

/** What the XML will say for an integrator's text: transliterated, controls replaced. Idempotent. */
export function cleanText(text: string): string {
  return replaceControls(transliterate(text))
}

/** The first character of `text` outside ISO-8859-1 (a whole code point, so an emoji is one), or null. */
export function firstNonLatin1(text: string): string | null {
  for (const c of text) if (c.codePointAt(0)! > 0xff) return c
  return null
}

/** `U+20AC` for '€': how an offending character is named in an error message. */
export function describeCodePoint(c: string): string {
  return `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`
}

/** The first `max` characters (code points, not UTF-16 units), as the XSD counts lengths (DESIGN §8). */
export function truncateChars(text: string, max: number): string {
  if (text.length <= max) return text
  const chars = Array.from(text)
  return chars.length <= max ? text : chars.slice(0, max).join('')
}
