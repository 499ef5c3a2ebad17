// The SII's "signed block" (docs/sii-protocol.md §4.2): an element whose FIRST child carries an `ID` and whose
// Signature, a later child, references `#` + that ID. EnvioDTE/SetDTE, EnvioBOLETA/SetDTE, RespuestaDTE/Resultado,
// EnvioRecibos/SetRecibos and Recibo/DocumentoRecibo all have this shape (the DTE too, signed by ./signature.ts).
// One way to sign it and one way to verify it, in the profile of §4.1: inclusive C14N 1.0 of the block in its
// document's context (it inherits the namespaces declared above it, §4.3 item 3), SHA-1, RSA-SHA1 over SignedInfo
// canonicalized where it stands, verified with the Signature's own RSAKeyValue as xmlsec1 and the SII do (the SII's
// own example carries a certificate that is not its signer's). Verification walks the document once: it never
// re-parses the file per signature (verifyXmlSignatures would, quadratic in the number of signatures).
import { createHash, sign, verify } from 'node:crypto'
import { C14nCanonicalization, findAncestorNs } from 'xml-crypto'
import type { Signer } from '../domain/signer'
import { C14N, DSIG_NS, ENVELOPED, keyInfoContent, RSA_SHA1, SHA1, signedInfoXml } from './dsig-profile'
import { childElements, parseXml, textOf } from './latin1'
import { keyValueOf } from './signature'

export interface BlockSignatureCheck {
  readonly isValid: boolean
  /** Why not, in Spanish: it goes into the SII's answer and into a received document's checks. Empty when valid. */
  readonly reason: string
  /** The holder's Signature element, when there is one. */
  readonly signature: Element | null
  /** The Reference's DigestValue as written (whitespace removed), when there is one: RecepcionEnvio/Digest. */
  readonly digestValue: string | null
}

/**
 * Verifies the Signature child of `holder` over its first child, which must be named `block` and carry the `ID`
 * the only Reference points to. `holderName` says what the holder is in the reasons ("el envío", "el recibo").
 * Never throws: an unreadable signature is invalid, with the reason.
 */
export function verifyBlockSignature(doc: Document, holder: Element, block: string, holderName: string): BlockSignatureCheck {
  const children = childElements(holder)
  const signed = children[0]
  const index = children.findIndex((e) => e.localName === 'Signature' && e.namespaceURI === DSIG_NS)
  const signature = index < 0 ? null : (children[index] as Element)
  const digestValue = signature === null ? null : writtenDigest(signature)
  const fail = (reason: string): BlockSignatureCheck => ({ isValid: false, reason, signature, digestValue })
  if (signed?.localName !== block) return fail(`${holderName} no tiene ${block}`)
  if (signature === null) return fail(`${holderName} no tiene firma (Signature)`)
  try {
    const signedInfo = childElements(signature)[0]
    if (signedInfo?.localName !== 'SignedInfo') return fail('Signature sin SignedInfo')
    const problem = profileProblem(signedInfo, `#${signed.getAttribute('ID') ?? ''}`)
    if (problem !== null) return fail(problem)
    const holderPath = anchoredXpath(holder)
    const digest = sha1Base64(canonicalize(doc, signed, `${holderPath}/*[1]`))
    if (digest !== digestValue) {
      return fail(`el DigestValue no corresponde al ${block} (${holderName} fue modificado después de firmarlo)`)
    }
    const canonicalSignedInfo = canonicalize(doc, signedInfo, `${holderPath}/*[${index + 1}]/*[1]`)
    const signatureValue = childNamed(signature, 'SignatureValue')
    if (signatureValue === undefined) return fail('Signature sin SignatureValue')
    const value = Buffer.from(textOf(signatureValue).replace(/\s/g, ''), 'base64')
    if (!verify('sha1', Buffer.from(canonicalSignedInfo, 'utf8'), keyValueOf(signature), value)) {
      return fail('la SignatureValue no verifica con la llave RSAKeyValue del firmante')
    }
    return { isValid: true, reason: '', signature, digestValue }
  } catch (err) {
    return fail(`firma ilegible: ${err instanceof Error ? err.message : String(err)}`)
  }
}

/** The EnvioDTE/EnvioBOLETA signature (docs/sii-protocol.md §4.2, §4.3 item 3): the root's Signature over SetDTE. */
export function verifyEnvelopeSignature(doc: Document): BlockSignatureCheck {
  return verifyBlockSignature(doc, doc.documentElement, 'SetDTE', 'el envío')
}

/**
 * Signs the signed block of a whole document given as text: the root's first child, which must carry an `ID`, gets
 * a Signature appended as the root's last child. The text is never re-serialized (only the Signature is spliced in
 * before the root's end tag), so whatever is inside stays byte for byte, inner signatures included (§4.3 items 2, 5).
 * Two parses of the text: one for the block's digest, one for SignedInfo canonicalized where it will stand (under
 * the real root, inheriting its `xmlns:xsi`, §4.3). For the small documents of the exchange (RespuestaDTE,
 * EnvioRecibos, one Recibo); envelope.ts signs EnvioDTE in one parse. Throws on text that is not such a document.
 */
export function signBlock(xml: string, signer: Signer): string {
  const doc = parseXml(xml)
  const root = doc.documentElement
  const block = childElements(root)[0]
  const id = block?.getAttribute('ID') ?? ''
  if (block === undefined || id === '') throw new Error(`signBlock: the first child of <${root.tagName}> must carry an ID`)
  if (childElements(root).some((e) => e.localName === 'Signature')) throw new Error(`signBlock: <${root.tagName}> is already signed`)
  const signedInfo = signedInfoXml(`#${id}`, C14N, sha1Base64(canonicalize(doc, block, '/*/*[1]')))
  const close = xml.lastIndexOf(`</${root.tagName}`)
  if (close < 0) throw new Error(`signBlock: no </${root.tagName}>`)
  const open = `<Signature xmlns="${DSIG_NS}">${signedInfo}`
  const placed = parseXml(`${xml.slice(0, close)}${open}</Signature>${xml.slice(close)}`)
  const rootChildren = childElements(placed.documentElement)
  const where = rootChildren.length  // the Signature is the root's last child; inner Recibos have Signatures of their own
  const placedSignedInfo = childElements(rootChildren[where - 1] as Element)[0] as Element
  const canonicalSignedInfo = canonicalize(placed, placedSignedInfo, `/*/*[${where}]/*[1]`)
  const signatureValue = sign('sha1', Buffer.from(canonicalSignedInfo, 'utf8'), signer.privateKey).toString('base64')
  const signature = `${open}<SignatureValue>${signatureValue}</SignatureValue><KeyInfo>${keyInfoContent(signer)}</KeyInfo></Signature>`
  return `${xml.slice(0, close)}${signature}${xml.slice(close)}`
}

/** xmldsignature_v10.xsd's profile: inclusive C14N, RSA-SHA1, one Reference to `uri`, SHA-1, C14N or enveloped transform. */
function profileProblem(signedInfo: Element, uri: string): string | null {
  const algorithm = (name: string, parent: Element = signedInfo): string => childNamed(parent, name)?.getAttribute('Algorithm') ?? ''
  if (algorithm('CanonicalizationMethod') !== C14N) return 'CanonicalizationMethod no es C14N inclusivo'
  if (algorithm('SignatureMethod') !== RSA_SHA1) return 'SignatureMethod no es rsa-sha1'
  const references = childElements(signedInfo).filter((e) => e.localName === 'Reference')
  const reference = references[0]
  if (references.length !== 1 || reference === undefined) return 'la firma debe tener exactamente una Reference'
  if (reference.getAttribute('URI') !== uri) return `la Reference apunta a "${reference.getAttribute('URI') ?? ''}", no a "${uri}"`
  if (algorithm('DigestMethod', reference) !== SHA1) return 'DigestMethod no es sha1'
  const transforms = childNamed(reference, 'Transforms')
  for (const t of transforms === undefined ? [] : childElements(transforms)) {
    // The block does not contain the Signature, so an enveloped-signature transform changes nothing (docs/sii-protocol.md §4.1).
    if (![C14N, ENVELOPED].includes(t.getAttribute('Algorithm') ?? '')) return `Transform no admitido: ${t.getAttribute('Algorithm') ?? ''}`
  }
  if (childNamed(reference, 'DigestValue') === undefined) return 'Reference sin DigestValue'
  return null
}

function writtenDigest(signature: Element): string | null {
  const signedInfo = childNamed(signature, 'SignedInfo')
  const reference = signedInfo === undefined ? undefined : childNamed(signedInfo, 'Reference')
  const digest = reference === undefined ? undefined : childNamed(reference, 'DigestValue')
  return digest === undefined ? null : textOf(digest).replace(/\s/g, '')
}

function childNamed(parent: Element, localName: string): Element | undefined {
  return childElements(parent).find((e) => e.localName === localName)
}

/** The position of `element` from the root as an anchored XPath (root, then `*[n]` steps): what findAncestorNs selects by. */
function anchoredXpath(element: Element): string {
  const steps: string[] = []
  for (let node: Element = element; node.parentNode !== null && node.parentNode.nodeType === 1; node = node.parentNode as Element) {
    steps.unshift(`/*[${childElements(node.parentNode as Element).indexOf(node) + 1}]`)
  }
  return `/*${steps.join('')}`
}

function sha1Base64(canonical: string): string {
  // C14N output is UTF-8 by definition (docs/sii-protocol.md §4.3 library notes), whatever the file's encoding.
  return createHash('sha1').update(canonical, 'utf8').digest('base64')
}

/** Inclusive C14N 1.0 of `node` with the namespaces it inherits (`xpath` anchors it for xml-crypto). */
function canonicalize(doc: Document, node: Element, xpath: string): string {
  const ancestorNamespaces = findAncestorNs(doc, xpath)
  return new C14nCanonicalization().process(node, { ancestorNamespaces, defaultNsForPrefix: { ds: DSIG_NS } }).toString()
}
