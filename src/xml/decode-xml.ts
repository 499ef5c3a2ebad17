// The text of an SII file from its bytes. Every SII document is ISO-8859-1 (docs/sii-protocol.md §1.2), which is also
// what libxml2 and the SII read when the declaration says so; a file declared UTF-8, or starting with a UTF-8 byte-order
// mark (which can only mean UTF-8, as libxml2 takes it), is read as UTF-8.
import { fromLatin1Bytes, parseXml } from './latin1'

/** Decodes by the file's BOM or declaration: ISO-8859-1 unless it says UTF-8. Never throws. */
export function decodeXml(bytes: Uint8Array): string {
  // TextDecoder drops the BOM itself (ignoreBOM defaults to false).
  if (hasUtf8Bom(bytes)) return new TextDecoder('utf-8').decode(bytes)
  const head = fromLatin1Bytes(bytes.subarray(0, 200))
  const declared = /^\s*<\?xml[^>]*encoding\s*=\s*["']([^"']+)["']/.exec(head)?.[1]?.toLowerCase()
  return declared === 'utf-8' || declared === 'utf8' ? new TextDecoder('utf-8').decode(bytes) : fromLatin1Bytes(bytes)
}

export function hasUtf8Bom(bytes: Uint8Array): boolean {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
}

/** The largest SII file Timbre reads: EnvioDTE_v10's 2000 DTEs make ~10 MB; twice that leaves room for big documents. */
export const MAX_XML_BYTES = 20 * 1024 * 1024

export interface ParsedXmlFile {
  /** The file's text as decoded (what every signature's text is cut from). */
  readonly text: string
  readonly doc: Document
}

/** The file decoded (decodeXml) and parsed strictly; null when larger than MAX_XML_BYTES or not well-formed. Never throws. */
export function parseXmlFile(bytes: Uint8Array): ParsedXmlFile | null {
  if (bytes.byteLength > MAX_XML_BYTES) return null
  try {
    const text = decodeXml(bytes)
    return { text, doc: parseXml(text) }
  } catch {
    return null
  }
}
