// Which SII document an XML attachment is, from its root element's name (DESIGN §13 "Receiving"): an EnvioDTE is a
// reception, a RespuestaDTE or an EnvioRecibos answers one of the company's own DTEs, and the SII's result mail carries
// a RESULTADO_ENVIO (RespSII_v10.xsd). Only the start of the file is read: a mailbox holds many files, most of them
// no SII document at all, and each is then parsed whole by the reader of its kind, which checks the rest.

/** The documents of the exchange between companies, plus the SII's result mail. */
export type ExchangeKind = 'EnvioDTE' | 'RespuestaDTE' | 'EnvioRecibos' | 'RespSII'

/** Root element's local name → kind. RespSII_v10.xsd names its root RESULTADO_ENVIO, in no namespace. */
const KIND_OF_ROOT: Readonly<Record<string, ExchangeKind>> = {
  EnvioDTE: 'EnvioDTE',
  RespuestaDTE: 'RespuestaDTE',
  EnvioRecibos: 'EnvioRecibos',
  RESULTADO_ENVIO: 'RespSII',
}

/** How far the root's start tag may be from the start: room for a declaration and a generous comment or two. */
const HEAD_BYTES = 64 * 1024

/**
 * The kind of SII document `bytes` holds, by its root element's local name (a prefix such as `ns0:` is allowed),
 * skipping a byte-order mark, the XML declaration, comments, processing instructions and whitespace; null for any
 * other root, a DOCTYPE (no SII file has one), text before the root, or anything that is not XML. Never throws.
 */
export function exchangeKindOf(bytes: Uint8Array): ExchangeKind | null {
  const head = decodeHead(bytes.subarray(0, HEAD_BYTES))
  const name = rootName(head)
  return name === null ? null : (KIND_OF_ROOT[name] ?? null)
}

/** The head as text: UTF-16 and UTF-8 by their BOMs, anything else byte for byte (the names sought are ASCII). */
function decodeHead(head: Uint8Array): string {
  if (head[0] === 0xff && head[1] === 0xfe) return new TextDecoder('utf-16le').decode(head.subarray(2))
  if (head[0] === 0xfe && head[1] === 0xff) return new TextDecoder('utf-16be').decode(head.subarray(2))
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return new TextDecoder('utf-8').decode(head.subarray(3))
  return Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('latin1')
}

/** XML 1.0 names, ASCII part: enough for every SII root. */
const START_TAG = /^<((?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*))(?=[\s/>])/

/** The local name of the first start tag after the prolog, or null. Each step consumes text, so it ends. */
function rootName(text: string): string | null {
  let at = 0
  for (;;) {
    while (at < text.length && /\s/.test(text[at] ?? '')) at++
    if (text.startsWith('<!--', at)) {
      const end = text.indexOf('-->', at + 4)
      if (end < 0) return null
      at = end + 3
    } else if (text.startsWith('<?', at)) {
      const end = text.indexOf('?>', at + 2)
      if (end < 0) return null
      at = end + 2
    } else {
      return START_TAG.exec(text.slice(at, at + 256))?.[2] ?? null
    }
  }
}
