// XMLDSig as the SII profiles it (docs/sii-protocol.md §4.1): inclusive C14N 1.0, RSA-SHA1, SHA-1 digest, one Reference to the
// document's ID with a single C14N transform, KeyInfo = KeyValue/RSAKeyValue then X509Data/X509Certificate, the
// Signature as the last child of <DTE>. `./c14n.ts` canonicalizes text in the builder's form, xml-crypto everything
// else (same bytes, tested); the Signature is spliced into the caller's text so nothing else of the DTE is
// re-serialized (the TED's escaping stays byte for byte what was stamped, §3.2).
import { createHash, createPublicKey, sign, X509Certificate, type KeyObject } from 'node:crypto'
import { C14nCanonicalization, findAncestorNs, SignedXml } from 'xml-crypto'
import { canonicalDocumento, canonicalSignedInfo as canonicalSignedInfoFromText } from './c14n'
import { C14N, DSIG_NS, keyInfoContent, signedInfoXml, SII_NS, XSI_NS } from './dsig-profile'
import type { Signer } from '../domain/signer'
import { childElements, parseXml, textOf } from './latin1'



/**
 * Signs a standalone `<DTE>` (optionally preceded by its XML declaration) and returns it with the Signature appended.
 * Before signing, `<DTE>` gets both namespaces EnvioDTE/EnvioBOLETA declare, `xmlns` and `xmlns:xsi`, when missing:
 * inclusive C14N then gives the same Documento and SignedInfo bytes standalone and inside the envelope, so the
 * signature verifies both ways (docs/sii-protocol.md §4.3, item 6). Throws on input that is not an unsigned DTE with an ID.
 *
 * Two ways to the same canonical bytes (docs/decisions/signing.md "Fast path"): text in the narrow form Timbre's
 * builder writes is canonicalized straight from the string (`./c14n.ts`, ~15× cheaper); anything else, or anything
 * that check is not sure of, is parsed with xmldom and canonicalized by xml-crypto, as before. Tests compare the two
 * byte for byte. `SignedXml.computeSignature` is not used because it deep-clones the document, runs `//` XPaths and
 * re-serializes the whole DTE, ~3× the cost of the DOM path for the same bytes (a test checks the two produce
 * identical Signatures).
 */
export function signDte(xml: string, signer: Signer): string {
  const dte = withEnvelopeNamespaces(xml)
  if (/<(\w+:)?Signature[\s>]/.test(dte)) throw new Error('signDte: the DTE is already signed')
  const close = dte.lastIndexOf('</DTE>')
  if (close < 0) throw new Error('signDte: no </DTE>')
  const { signedInfo, canonicalSignedInfo } = canonicalForms(dte)
  const signatureValue = sign('sha1', Buffer.from(canonicalSignedInfo), signer.privateKey).toString('base64')
  const signature =
    `<Signature xmlns="${DSIG_NS}">${signedInfo}<SignatureValue>${signatureValue}</SignatureValue>` +
    `<KeyInfo>${keyInfoContent(signer)}</KeyInfo></Signature>`
  return dte.slice(0, close) + signature + dte.slice(close)
}

interface CanonicalForms {
  readonly id: string
  /** SignedInfo as written into the Signature. */
  readonly signedInfo: string
  /** Its inclusive C14N in place, the bytes RSA-SHA1 signs (as UTF-8). */
  readonly canonicalSignedInfo: string
}

/** The string path when the text is in its subset, else the DOM path; both give the same bytes (c14n.test.ts). */
function canonicalForms(dte: string): CanonicalForms {
  return canonicalFormsFromText(dte) ?? canonicalFormsFromDom(dte)
}

/** `./c14n.ts` on the text; null as soon as either canonicalization declines. */
export function canonicalFormsFromText(dte: string): CanonicalForms | null {
  const documento = canonicalDocumento(dte)
  if (documento === null) return null
  const signedInfo = signedInfoXml(`#${documento.id}`, C14N, sha1Base64(documento.canonical))
  const canonical = canonicalSignedInfoFromText(signedInfo)
  return canonical === null ? null : { id: documento.id, signedInfo, canonicalSignedInfo: canonical }
}

/** xmldom + xml-crypto: the reference, for every input. Throws what parseXml throws on malformed text. */
export function canonicalFormsFromDom(dte: string): CanonicalForms {
  const doc = parseXml(dte)
  const documento = childElements(doc.documentElement)[0]
  const id = documento?.getAttribute('ID')
  if (documento === undefined || !id) throw new Error('signDte: no document element with an ID')
  // Anchored XPaths (docs/stack-notes.md: `//*[…]` costs ~30 % more): the document element is the first child of <DTE>.
  const signedInfo = signedInfoXml(`#${id}`, C14N, sha1Base64(canonicalize(doc, documento, '/*/*[1]')))
  return { id, signedInfo, canonicalSignedInfo: canonicalSignedInfo(dte, signedInfo) }
}

/** SHA-1 of the UTF-8 encoding (C14N output is UTF-8, spec §2.1), base64. */
function sha1Base64(canonical: string): string {
  return createHash('sha1').update(canonical, 'utf8').digest('base64')
}

/** Inclusive C14N 1.0 of `node` in its document's context (ancestor namespace declarations included, §4.3). */
function canonicalize(doc: Document, node: Element, anchoredXpath: string): string {
  const ancestorNamespaces = findAncestorNs(doc, anchoredXpath)
  return new C14nCanonicalization().process(node, { ancestorNamespaces, defaultNsForPrefix: { ds: DSIG_NS } }).toString()
}


/**
 * SignedInfo canonicalized where it will sit: under Signature (default namespace xmldsig) under this very `<DTE>`
 * start tag, so it inherits `xmlns:xsi` exactly as a verifier will see it, standalone or in the envelope (§4.3).
 */
function canonicalSignedInfo(dte: string, signedInfo: string): string {
  const startTag = /<DTE(\s[^>]*)?>/.exec(dte)?.[0] ?? '<DTE>'
  const wrapper = parseXml(`${startTag}<Signature xmlns="${DSIG_NS}">${signedInfo}</Signature></DTE>`)
  const node = childElements(childElements(wrapper.documentElement)[0] as Element)[0] as Element
  return canonicalize(wrapper, node, '/*/*[1]/*[1]')
}

/**
 * Adds `xmlns="http://www.sii.cl/SiiDte"` and `xmlns:xsi` to the `<DTE>` start tag when absent; refuses other values.
 * Also checks the signed element carries the `ID` the Reference points to: without one, xml-crypto would invent an
 * `Id` attribute, which the schema rejects (docs/stack-notes.md).
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



export interface SignatureCheck {
  /** The Reference URI, `#F1T33`, `#SetDoc`. */
  readonly uri: string
  readonly isValid: boolean
  /** Why it failed, in English, for logs and the simulator's detail. */
  readonly reason?: string
}

/**
 * Checks every Signature in `xml` in place, in document order, with the key of its own RSAKeyValue (what xmlsec1 does,
 * docs/sii-protocol.md §4.1), and, unless `requireCertificateMatch` is false, that X509Certificate holds that same key (the SII's
 * own example fails that check: its certificate is not its signer's, test/fixtures/sii/README.md). For the simulator and tests;
 * xmlsec1 stays the referee. A DTE signed by the SII's tool (no xmlns:xsi on DTE) fails in an envelope here, as
 * docs/sii-protocol.md §4.3 item 4 says any generic verifier does; Timbre's DTEs pass both ways.
 */
export function verifyXmlSignatures(xml: string, opts: { readonly requireCertificateMatch?: boolean } = {}): SignatureCheck[] {
  const doc = parseXml(xml)
  const signatures = Array.from(doc.getElementsByTagNameNS(DSIG_NS, 'Signature'))
  return signatures.map((node) => checkOne(xml, node, opts.requireCertificateMatch ?? true))
}

function checkOne(xml: string, node: Element, requireCertificateMatch: boolean): SignatureCheck {
  const uri = node.getElementsByTagNameNS(DSIG_NS, 'Reference').item(0)?.getAttribute('URI') ?? ''
  try {
    const key = keyValueOf(node)
    const certificateMismatch = requireCertificateMatch ? certificateDisagrees(node, key) : null
    if (certificateMismatch !== null) return { uri, isValid: false, reason: certificateMismatch }
    const sig = new SignedXml({ publicCert: key, getCertFromKeyInfo: () => null })
    sig.loadSignature(node)
    return sig.checkSignature(xml) ? { uri, isValid: true } : { uri, isValid: false, reason: 'reference digest mismatch' }
  } catch (err) {
    return { uri, isValid: false, reason: err instanceof Error ? err.message : String(err) }
  }
}

/** The RSAKeyValue of a Signature as a public key: the key xmlsec1 and the SII verify with. Throws when absent or unreadable. */
export function keyValueOf(signature: Element): KeyObject {
  const rsa = signature.getElementsByTagNameNS(DSIG_NS, 'RSAKeyValue').item(0)
  if (rsa === null) throw new Error('no RSAKeyValue')
  const part = (name: string): string => {
    const el = childElements(rsa).find((e) => e.localName === name)
    if (el === undefined) throw new Error(`no RSAKeyValue/${name}`)
    return Buffer.from(textOf(el).replace(/\s/g, ''), 'base64').toString('base64url')
  }
  return createPublicKey({ key: { kty: 'RSA', n: part('Modulus'), e: part('Exponent') }, format: 'jwk' })
}

function certificateDisagrees(signature: Element, key: KeyObject): string | null {
  const certElement = signature.getElementsByTagNameNS(DSIG_NS, 'X509Certificate').item(0)
  if (certElement === null) return 'no X509Certificate'
  const cert = new X509Certificate(Buffer.from(textOf(certElement).replace(/\s/g, ''), 'base64'))
  return cert.publicKey.equals(key) ? null : 'X509Certificate does not hold the RSAKeyValue key'
}
