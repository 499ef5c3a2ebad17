// XMLDSig as the SII profiles it (PROTOCOL §4.1): inclusive C14N 1.0, RSA-SHA1, SHA-1 digest, one Reference to the
// document's ID with a single C14N transform, KeyInfo = KeyValue/RSAKeyValue then X509Data/X509Certificate, the
// Signature as the last child of <DTE>. xml-crypto computes it; the Signature is then spliced into the caller's text
// so nothing else of the DTE is re-serialized (the TED's escaping stays byte for byte what was stamped, §3.2).
import { createPublicKey, X509Certificate, type KeyObject } from 'node:crypto'
import { SignedXml } from 'xml-crypto'
import { childElements, parseXml, textOf } from './latin1'

/** What signing needs from a certificate; `crypto/pfx.ts` returns one (same shape, STYLE §1 keeps the folders apart). */
export interface Signer {
  readonly privateKey: KeyObject
  /** The leaf certificate, DER in base64, no PEM armour (PROTOCOL §4.1). */
  readonly certificateDerBase64: string
  /** RSAKeyValue of the certificate's key: big-endian, base64. */
  readonly modulusBase64: string
  readonly exponentBase64: string
}

const C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315'
const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1'
const SHA1 = 'http://www.w3.org/2000/09/xmldsig#sha1'
const SII_NS = 'http://www.sii.cl/SiiDte'
const XSI_NS = 'http://www.w3.org/2001/XMLSchema-instance'

/**
 * Signs a standalone `<DTE>` (optionally preceded by its XML declaration) and returns it with the Signature appended.
 * Before signing, `<DTE>` gets both namespaces EnvioDTE/EnvioBOLETA declare, `xmlns` and `xmlns:xsi`, when missing:
 * inclusive C14N then gives the same Documento and SignedInfo bytes standalone and inside the envelope, so the
 * signature verifies both ways (PROTOCOL §4.3, item 6). Throws on input that is not an unsigned DTE with an ID.
 */
export function signDte(xml: string, signer: Signer): string {
  const dte = withEnvelopeNamespaces(xml)
  if (/<(\w+:)?Signature[\s>]/.test(dte)) throw new Error('signDte: the DTE is already signed')
  const close = dte.lastIndexOf('</DTE>')
  if (close < 0) throw new Error('signDte: no </DTE>')
  const sig = new SignedXml({
    privateKey: signer.privateKey,
    signatureAlgorithm: RSA_SHA1,
    canonicalizationAlgorithm: C14N,
    getKeyInfoContent: () => keyInfoContent(signer),
  })
  // Anchored XPaths (STACK-NOTES: ~30 % faster than `//*[…]`): the document element is the first child of <DTE>.
  sig.addReference({ xpath: '/*/*[1]', transforms: [C14N], digestAlgorithm: SHA1 })
  sig.computeSignature(dte, { location: { reference: '/*', action: 'append' } })
  return dte.slice(0, close) + sig.getSignatureXml() + dte.slice(close)
}

/**
 * Adds `xmlns="http://www.sii.cl/SiiDte"` and `xmlns:xsi` to the `<DTE>` start tag when absent; refuses other values.
 * Also checks the signed element carries the `ID` the Reference points to: without one, xml-crypto would invent an
 * `Id` attribute, which the schema rejects (STACK-NOTES).
 */
function withEnvelopeNamespaces(xml: string): string {
  const root = /^(\s*(?:<\?xml[^>]*\?>)?\s*)<DTE(\s[^>]*)?>/.exec(xml)
  if (root === null) throw new Error('signDte: the root element must be <DTE>')
  const [startTag, prolog] = root as unknown as [string, string]
  const attrs = root[2] ?? ''
  if (!/^\s*<(Documento|Liquidacion|Exportaciones)\s[^>]*\bID="[^"]+"/.test(xml.slice(startTag.length))) {
    throw new Error('signDte: the first child of <DTE> must be Documento, Liquidacion or Exportaciones with an ID')
  }
  let added = ''
  added += namespaceToAdd(attrs, 'xmlns', SII_NS)
  added += namespaceToAdd(attrs, 'xmlns:xsi', XSI_NS)
  return `${prolog}<DTE${added}${attrs}>${xml.slice(startTag.length)}`
}

function namespaceToAdd(attrs: string, name: string, uri: string): string {
  const declared = new RegExp(`\\s${name}\\s*=\\s*["']([^"']*)["']`).exec(attrs)
  if (declared === null) return ` ${name}="${uri}"`
  if (declared[1] !== uri) throw new Error(`signDte: <DTE> declares ${name}="${declared[1]}", expected ${uri}`)
  return ''
}

/** KeyValue first, then X509Data (xmldsignature_v10.xsd order, PROTOCOL §4.1). */
function keyInfoContent(signer: Signer): string {
  return (
    '<KeyValue><RSAKeyValue>' +
    `<Modulus>${signer.modulusBase64}</Modulus><Exponent>${signer.exponentBase64}</Exponent>` +
    '</RSAKeyValue></KeyValue>' +
    `<X509Data><X509Certificate>${wrap64(signer.certificateDerBase64)}</X509Certificate></X509Data>`
  )
}

/** 64-column lines joined by LF, as LibreDTE and Odoo write the certificate; never CR (PROTOCOL §4.1). */
function wrap64(base64: string): string {
  return (base64.replace(/\s/g, '').match(/.{1,64}/g) ?? []).join('\n')
}

export interface SignatureCheck {
  /** The Reference URI, `#F1T33`, `#SetDoc`. */
  readonly uri: string
  readonly isValid: boolean
  /** Why it failed, in English, for logs and the simulator's detail. */
  readonly reason?: string
}

/**
 * Checks every Signature in `xml` in place, in document order, with the key of its own RSAKeyValue (what xmlsec1 does,
 * PROTOCOL §4.1), and checks that X509Certificate holds that same key. For the simulator and tests; xmlsec1 stays
 * the referee. A DTE signed by the SII's tool (no xmlns:xsi on DTE) fails in an envelope here, as PROTOCOL §4.3
 * item 4 says any generic verifier does; Timbre's DTEs pass both ways.
 */
export function verifyXmlSignatures(xml: string): SignatureCheck[] {
  const doc = parseXml(xml)
  const signatures = Array.from(doc.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature'))
  return signatures.map((node) => checkOne(xml, node))
}

function checkOne(xml: string, node: Element): SignatureCheck {
  const uri = node.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Reference').item(0)?.getAttribute('URI') ?? ''
  try {
    const key = keyValueOf(node)
    const certificateMismatch = certificateDisagrees(node, key)
    if (certificateMismatch !== null) return { uri, isValid: false, reason: certificateMismatch }
    const sig = new SignedXml({ publicCert: key, getCertFromKeyInfo: () => null })
    sig.loadSignature(node)
    return sig.checkSignature(xml) ? { uri, isValid: true } : { uri, isValid: false, reason: 'reference digest mismatch' }
  } catch (err) {
    return { uri, isValid: false, reason: err instanceof Error ? err.message : String(err) }
  }
}

function keyValueOf(signature: Element): KeyObject {
  const rsa = signature.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'RSAKeyValue').item(0)
  if (rsa === null) throw new Error('no RSAKeyValue')
  const part = (name: string): string => {
    const el = childElements(rsa).find((e) => e.localName === name)
    if (el === undefined) throw new Error(`no RSAKeyValue/${name}`)
    return Buffer.from(textOf(el).replace(/\s/g, ''), 'base64').toString('base64url')
  }
  return createPublicKey({ key: { kty: 'RSA', n: part('Modulus'), e: part('Exponent') }, format: 'jwk' })
}

function certificateDisagrees(signature: Element, key: KeyObject): string | null {
  const certElement = signature.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'X509Certificate').item(0)
  if (certElement === null) return 'no X509Certificate'
  const cert = new X509Certificate(Buffer.from(textOf(certElement).replace(/\s/g, ''), 'base64'))
  return cert.publicKey.equals(key) ? null : 'X509Certificate does not hold the RSAKeyValue key'
}
