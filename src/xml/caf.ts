// CAF (Código de Autorización de Folios): the SII's file that authorizes a folio range and carries the key that
// signs every TED of that range (docs/sii-protocol.md §3.3). Parsed as ISO-8859-1, raw or base64 (DESIGN §8); FRMA is the SII's
// RSA-SHA1 signature over the flat DA, made with the key numbered IDK (docs/sii-protocol.md §3.4).
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import { TimbreError } from '../errors'
import { childElements, flattenElement, fromLatin1Bytes, parseXml, textOf, toLatin1Bytes } from './latin1'

/** What the `<CAF>` element says: the part every TED embeds, also what a verifier reads back from a stamped DTE. */
export interface PublicCaf {
  readonly rutEmisor: string
  readonly razonSocial: string
  readonly tipoDte: number
  readonly folioDesde: number
  readonly folioHasta: number
  /** FA, `YYYY-MM-DD`. */
  readonly fechaAutorizacion: string
  readonly idk: number
  /** RSAPK: the key that verifies FRMT. */
  readonly publicKey: KeyObject
  /** The flat `<CAF version="1.0">…</CAF>` (docs/sii-protocol.md §3.2 rules), copied verbatim into every TED's DD. */
  readonly cafXml: string
  /** The flat `<DA>…</DA>`: the text FRMA signs (docs/sii-protocol.md §3.4). */
  readonly daXml: string
  /** FRMA, base64. */
  readonly frma: string
}

/** A whole authorization file: the public part plus RSASK, the key that signs the TEDs. Never leaves the server. */
export interface Caf extends PublicCaf {
  /** RSASK (PKCS#1 "RSA PRIVATE KEY" in the file). */
  readonly privateKey: KeyObject
  /** RSAPUBK, when the file has it (SII files do; it must equal RSAPK). */
  readonly rsaPubk: KeyObject | null
}

function invalidCaf(message: string): TimbreError {
  return new TimbreError('INVALID_CAF', { message })
}

/** Reads a CAF file: XML text, its ISO-8859-1 bytes, or either in base64. Checks shape only; see `verifyCaf`. */
export function parseCaf(input: string | Uint8Array): Caf {
  const root = parseCafDocument(decodeCafInput(input))
  if (root.localName !== 'AUTORIZACION') throw invalidCaf(`El CAF debe tener AUTORIZACION como raíz, no ${root.localName}.`)
  const cafElement = childElements(root).find((e) => e.localName === 'CAF')
  if (cafElement === undefined) throw invalidCaf('El CAF no contiene el elemento AUTORIZACION/CAF.')
  const publicCaf = readCafElement(cafElement)
  const rsapubk = optionalChild(root, 'RSAPUBK')
  return { ...publicCaf, privateKey: readRsask(root), rsaPubk: rsapubk === null ? null : readRsapubk(rsapubk) }
}

/**
 * Checks that the SII (or the simulator, when its key is in `authorityKeys`) signed this CAF, and that RSASK and
 * RSAPUBK are the pair of RSAPK (LibreDTE legacy does the same on load, docs/sii-protocol.md §3.3). Throws INVALID_CAF.
 */
export function verifyCaf(caf: Caf, authorityKeys: ReadonlyMap<number, KeyObject>): void {
  verifyCafSignature(caf, authorityKeys)
  if (!sameRsaKey(caf.privateKey, caf.publicKey) || !signsFor(caf.privateKey, caf.publicKey)) {
    throw invalidCaf('La llave privada RSASK del CAF no corresponde a su llave pública RSAPK.')
  }
  if (caf.rsaPubk !== null && !sameRsaKey(caf.rsaPubk, caf.publicKey)) {
    throw invalidCaf('La llave RSAPUBK del CAF no corresponde a su llave pública RSAPK.')
  }
}

/** FRMA over the flat DA with the authority key of the CAF's IDK (docs/sii-protocol.md §3.4). Also usable on a TED's CAF. */
export function verifyCafSignature(caf: PublicCaf, authorityKeys: ReadonlyMap<number, KeyObject>): void {
  const authorityKey = authorityKeys.get(caf.idk)
  if (authorityKey === undefined) throw invalidCaf(`El CAF está firmado con una llave (IDK ${caf.idk}) que no corresponde a este ambiente del SII.`)
  if (!verify('sha1', toLatin1Bytes(caf.daXml), authorityKey, Buffer.from(caf.frma, 'base64'))) {
    throw invalidCaf('La firma FRMA del CAF no es válida: el archivo fue modificado o no fue emitido por el SII.')
  }
}

/** The fields of a `<CAF>` element, wherever it sits (a CAF file, or a TED's DD). */
export function readCafElement(cafElement: Element): PublicCaf {
  const da = requiredChild(cafElement, 'DA')
  const frma = requiredChild(cafElement, 'FRMA')
  const rng = requiredChild(da, 'RNG')
  const caf: PublicCaf = {
    rutEmisor: matching(da, 'RE', /^\d{1,8}-[\dK]$/, 'un RUT sin puntos'),
    razonSocial: requiredText(da, 'RS'),
    tipoDte: integer(da, 'TD'),
    folioDesde: integer(rng, 'D'),
    folioHasta: integer(rng, 'H'),
    fechaAutorizacion: matching(da, 'FA', /^\d{4}-\d{2}-\d{2}$/, 'una fecha AAAA-MM-DD'),
    idk: integer(da, 'IDK'),
    publicKey: readRsapk(da),
    cafXml: flattenElement(cafElement),
    daXml: flattenElement(da),
    frma: textOf(frma).replace(/\s/g, ''),
  }
  if (caf.folioDesde < 1 || caf.folioDesde > caf.folioHasta) {
    throw invalidCaf(`El rango de folios del CAF no es válido (desde ${caf.folioDesde} hasta ${caf.folioHasta}).`)
  }
  if (!isLatin1Xml(caf.cafXml)) throw invalidCaf('El CAF contiene caracteres fuera de ISO-8859-1.')
  return caf
}

/**
 * Text of the file. Bytes are ISO-8859-1 whatever the declaration says (SII files declare none; LibreDTE forces
 * Latin-1, docs/sii-protocol.md §3.3), except after a UTF-8 byte-order mark, which can only mean UTF-8. Anything that does not
 * start with `<` is tried as base64 (the API accepts both, DESIGN §8).
 */
function decodeCafInput(input: string | Uint8Array): string {
  const text = typeof input === 'string' ? input : decodeBytes(input)
  if (text.trimStart().startsWith('<')) return text.trimStart()
  const compact = text.replace(/\s/g, '')
  if (compact === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) {
    throw invalidCaf('El archivo no es un CAF: no es XML ni base64.')
  }
  const decoded = decodeBytes(Buffer.from(compact, 'base64'))
  if (!decoded.trimStart().startsWith('<')) throw invalidCaf('El archivo no es un CAF: el base64 no contiene XML.')
  return decoded.trimStart()
}

function decodeBytes(bytes: Uint8Array): string {
  const hasUtf8Bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
  return hasUtf8Bom ? new TextDecoder('utf-8').decode(bytes.subarray(3)) : fromLatin1Bytes(bytes)
}

function parseCafDocument(text: string): Element {
  try {
    return parseXml(text).documentElement
  } catch (err) {
    throw invalidCaf(`El CAF no es XML válido: ${err instanceof Error ? err.message : String(err)}`)
  }
}

function isLatin1Xml(text: string): boolean {
  try {
    toLatin1Bytes(text)
    return true
  } catch {
    return false
  }
}

function optionalChild(parent: Element, name: string): Element | null {
  return childElements(parent).find((e) => e.localName === name) ?? null
}

function requiredChild(parent: Element, name: string): Element {
  const child = optionalChild(parent, name)
  if (child === null) throw invalidCaf(`El CAF no contiene el elemento ${parent.localName}/${name}.`)
  return child
}

function requiredText(parent: Element, name: string): string {
  const text = textOf(requiredChild(parent, name))
  if (text.trim() === '') throw invalidCaf(`El elemento ${name} del CAF está vacío.`)
  return text
}

function matching(parent: Element, name: string, pattern: RegExp, what: string): string {
  const text = requiredText(parent, name).trim()
  if (!pattern.test(text)) throw invalidCaf(`El elemento ${name} del CAF debe ser ${what}: "${text}".`)
  return text
}

function integer(parent: Element, name: string): number {
  return Number(matching(parent, name, /^\d{1,15}$/, 'un número entero'))
}

/** RSAPK M/E (base64 big-endian integers) as a JWK (docs/stack-notes.md). A DSAPK CAF is legal in the XSD but never issued. */
function readRsapk(da: Element): KeyObject {
  const rsapk = optionalChild(da, 'RSAPK')
  if (rsapk === null) throw invalidCaf('El CAF no trae llave RSAPK (solo se admiten CAF con llave RSA).')
  const n = base64Url(textOf(requiredChild(rsapk, 'M')))
  const e = base64Url(textOf(requiredChild(rsapk, 'E')))
  try {
    return createPublicKey({ key: { kty: 'RSA', n, e }, format: 'jwk' })
  } catch {
    throw invalidCaf('La llave RSAPK del CAF no es una llave RSA válida.')
  }
}

function base64Url(base64: string): string {
  return Buffer.from(base64.replace(/\s/g, ''), 'base64').toString('base64url')
}

function readRsask(root: Element): KeyObject {
  const rsask = optionalChild(root, 'RSASK')
  if (rsask === null) throw invalidCaf('El CAF no contiene la llave privada RSASK.')
  try {
    return createPrivateKey(textOf(rsask).trim())
  } catch {
    throw invalidCaf('La llave privada RSASK del CAF no se puede leer.')
  }
}

function readRsapubk(rsapubk: Element): KeyObject {
  try {
    return createPublicKey(textOf(rsapubk).trim())
  } catch {
    throw invalidCaf('La llave pública RSAPUBK del CAF no se puede leer.')
  }
}

/** Same modulus and exponent; `key` may be private (its public half is compared). */
function sameRsaKey(key: KeyObject, publicKey: KeyObject): boolean {
  const a = (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'jwk' })
  const b = publicKey.export({ format: 'jwk' })
  return a.kty === 'RSA' && a.n === b.n && a.e === b.e
}

/** A sign-and-verify round trip: catches a private key whose own parts are inconsistent (LibreDTE legacy does this). */
function signsFor(privateKey: KeyObject, publicKey: KeyObject): boolean {
  const probe = Buffer.from('timbre: RSASK matches RSAPK')
  try {
    return verify('sha1', probe, publicKey, sign('sha1', probe, privateKey))
  } catch {
    return false
  }
}

