// TED (timbre electrónico): the DD block stamped with the CAF's private key, computed before the XML signature
// (docs/sii-protocol.md §3). FRMT = RSA PKCS#1 v1.5 SHA-1 over the flat DD as ISO-8859-1 bytes (§3.2). The DD is built flat
// here, so the bytes signed are the bytes written and the bytes any verifier rebuilds from the file.
import { sign, verify, type KeyObject } from 'node:crypto'
import { readCafElement, type Caf, type PublicCaf } from './caf'
import { childElements, escapeXmlText, findElement, flattenElement, parseXml, textOf, toLatin1Bytes } from './latin1'

export interface TedData {
  readonly rutEmisor: string
  readonly tipoDte: number
  readonly folio: number
  /** FE, `YYYY-MM-DD`. */
  readonly fechaEmision: string
  readonly rutReceptor: string
  /** RSR: cut here to 40 characters. */
  readonly razonSocialReceptor: string
  /** MNT: an integer, or the decimal text the document's MntTotal carries (exports). */
  readonly montoTotal: number | string
  /** IT1: NmbItem of the first Detalle line; cut here to 40 characters. */
  readonly item1: string
  /** TSTED, `YYYY-MM-DDTHH:MM:SS` in America/Santiago local time, given by the caller (DESIGN §12). */
  readonly timestamp: string
}

/** DTE_v10.xsd: `RSR` and `IT1` are 1 to 40 characters (docs/sii-protocol.md §1.3, §3.1). */
const TED_TEXT_MAX_CHARS = 40

/**
 * The `<TED version="1.0">…</TED>` fragment, flat, for the DTE builder to place after Comisiones and before TmstFirma.
 * Throws (a programming error, not a client one) when the data cannot make a TED the SII would accept.
 */
export function buildTed(data: TedData, caf: Caf): string {
  checkAgainstCaf(data, caf)
  const dd =
    '<DD>' +
    `<RE>${data.rutEmisor}</RE>` +
    `<TD>${data.tipoDte}</TD>` +
    `<F>${data.folio}</F>` +
    `<FE>${checked(data.fechaEmision, /^\d{4}-\d{2}-\d{2}$/, 'fechaEmision')}</FE>` +
    `<RR>${data.rutReceptor}</RR>` +
    `<RSR>${tedText(data.razonSocialReceptor, 'razonSocialReceptor')}</RSR>` +
    `<MNT>${monto(data.montoTotal)}</MNT>` +
    `<IT1>${tedText(data.item1, 'item1')}</IT1>` +
    caf.cafXml +
    `<TSTED>${checked(data.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/, 'timestamp')}</TSTED>` +
    '</DD>'
  const frmt = sign('sha1', toLatin1Bytes(dd), caf.privateKey).toString('base64')
  return `<TED version="1.0">${dd}<FRMT algoritmo="SHA1withRSA">${frmt}</FRMT></TED>`
}

/**
 * True when the first TED in `xml` (a whole DTE, an envelope, or the bare fragment) has an FRMT that verifies over its
 * flat DD, with `publicKey` or else the RSAPK of the CAF inside the DD. Checks neither FRMA nor the DD's fields
 * against the document: see `readTed` and `verifyCafSignature` for those (docs/sii-protocol.md §3.2 "Verifying a TED").
 */
export function verifyTed(xml: string, publicKey?: KeyObject): boolean {
  try {
    const ted = readTed(xml)
    return verify('sha1', toLatin1Bytes(ted.ddXml), publicKey ?? ted.caf.publicKey, Buffer.from(ted.frmt, 'base64'))
  } catch {
    return false
  }
}

export interface ReadTed {
  /** The DD fields as written (RSR and IT1 as they are in the DD, already cut). */
  readonly data: TedData
  readonly caf: PublicCaf
  /** The flat DD, the text FRMT covers. */
  readonly ddXml: string
  /** FRMT, base64 without whitespace. */
  readonly frmt: string
}

/** Reads the first TED in `xml`. Throws on a missing or malformed TED (INVALID_CAF when its CAF is unreadable). */
export function readTed(xml: string): ReadTed {
  const ted = findElement(parseXml(xml).documentElement, 'TED')
  if (ted === null) throw new Error('no TED element')
  const dd = child(ted, 'DD')
  const cafElement = child(dd, 'CAF')
  const field = (name: string): string => textOf(child(dd, name))
  return {
    data: {
      rutEmisor: field('RE'),
      tipoDte: Number(field('TD')),
      folio: Number(field('F')),
      fechaEmision: field('FE'),
      rutReceptor: field('RR'),
      razonSocialReceptor: field('RSR'),
      montoTotal: field('MNT'),
      item1: field('IT1'),
      timestamp: field('TSTED'),
    },
    caf: readCafElement(cafElement),
    ddXml: flattenElement(dd),
    frmt: textOf(child(ted, 'FRMT')).replace(/\s/g, ''),
  }
}

function child(parent: Element, name: string): Element {
  const found = childElements(parent).find((e) => e.localName === name)
  if (found === undefined) throw new Error(`TED: missing ${parent.localName}/${name}`)
  return found
}

/** A TED whose DD disagrees with its CAF is rejected by the SII; catch the mix-up here, where it is cheap. */
function checkAgainstCaf(data: TedData, caf: Caf): void {
  if (data.rutEmisor !== caf.rutEmisor) throw new RangeError(`buildTed: rutEmisor ${data.rutEmisor} is not the CAF's ${caf.rutEmisor}`)
  if (data.tipoDte !== caf.tipoDte) throw new RangeError(`buildTed: tipoDte ${data.tipoDte} is not the CAF's ${caf.tipoDte}`)
  if (!Number.isSafeInteger(data.folio) || data.folio < caf.folioDesde || data.folio > caf.folioHasta) {
    throw new RangeError(`buildTed: folio ${data.folio} is outside the CAF's ${caf.folioDesde}..${caf.folioHasta}`)
  }
  if (!/^\d{1,8}-[\dK]$/.test(data.rutReceptor)) throw new RangeError(`buildTed: rutReceptor must be canonical: ${data.rutReceptor}`)
}

/**
 * RSR/IT1: cut by characters to 40, then escaped (docs/sii-protocol.md §1.3: truncate before escaping). A CR would be read back
 * as LF by any XML parser, so a TED holding one could not be re-verified from the file (§3.2): refuse it, as
 * everything outside ISO-8859-1 (toLatin1Bytes), and whitespace-only values the flat form would drop.
 */
function tedText(value: string, name: string): string {
  const cut = value.slice(0, TED_TEXT_MAX_CHARS)
  if (cut.trim() === '') throw new RangeError(`buildTed: ${name} is empty`)
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(cut) || cut.includes('\r')) throw new RangeError(`buildTed: ${name} has control characters`)
  toLatin1Bytes(cut)
  return escapeXmlText(cut)
}

function monto(value: number | string): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`buildTed: montoTotal ${value} is not a safe integer; pass decimals as text`)
    return String(value)
  }
  return checked(value, /^-?\d{1,18}(\.\d{1,6})?$/, 'montoTotal')
}

function checked(value: string, pattern: RegExp, name: string): string {
  if (!pattern.test(value)) throw new RangeError(`buildTed: ${name} has the wrong format: ${value}`)
  return value
}
