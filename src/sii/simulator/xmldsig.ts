// Signature checks the simulator makes beyond `xml/signature.ts`: the envelope's own Signature verified in place in
// one pass (verifyXmlSignatures would re-parse the whole envelope once per DTE signature, quadratic in the DTE count),
// and the pieces of a Signature the SII looks at (RSAKeyValue, X509Certificate). The key is always the RSAKeyValue,
// as xmlsec1 and the SII do (docs/sii-protocol.md §4.1; the SII's own example carries a certificate that is not its signer's).
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto'
import { C14nCanonicalization, findAncestorNs } from 'xml-crypto'
import { C14N, DSIG_NS, ENVELOPED, RSA_SHA1, SHA1 } from '../../xml/dsig-profile'
import { childElements, textOf } from '../../xml/latin1'
import { keyValueOf } from '../../xml/signature'
import { readCertificate, type CertificateInfo } from './certificate'

/** The X509Certificate of a Signature, read; null when absent or unreadable. */
export function certificateOf(signature: Element): CertificateInfo | null {
  const cert = signature.getElementsByTagNameNS(DSIG_NS, 'X509Certificate').item(0)
  return cert === null ? null : readCertificate(textOf(cert))
}

export interface EnvelopeSignatureCheck {
  readonly isValid: boolean
  /** Why not, in Spanish: it goes into the SII's answer. */
  readonly reason: string
  /** The envelope's Signature element, when there is one. */
  readonly signature: Element | null
}

/**
 * The EnvioDTE/EnvioBOLETA signature (docs/sii-protocol.md §4.2, §4.3 item 3): a Signature child of the root whose only Reference
 * is `#` + SetDTE/@ID, SHA-1 over SetDTE's inclusive C14N in the envelope's context (it inherits `xmlns` and
 * `xmlns:xsi`), RSA-SHA1 over SignedInfo canonicalized in place, verified with the Signature's own RSAKeyValue.
 */
export function verifyEnvelopeSignature(doc: Document): EnvelopeSignatureCheck {
  const children = childElements(doc.documentElement)
  const setDte = children[0]
  const index = children.findIndex((e) => e.localName === 'Signature' && e.namespaceURI === DSIG_NS)
  const signature = index < 0 ? null : (children[index] as Element)
  const fail = (reason: string): EnvelopeSignatureCheck => ({ isValid: false, reason, signature })
  if (setDte?.localName !== 'SetDTE') return fail('el envío no tiene SetDTE')
  if (signature === null) return fail('el envío no tiene firma (Signature)')
  try {
    const signedInfo = childElements(signature)[0]
    if (signedInfo?.localName !== 'SignedInfo') return fail('Signature sin SignedInfo')
    const problem = profileProblem(signedInfo, `#${setDte.getAttribute('ID') ?? ''}`)
    if (problem !== null) return fail(problem)
    const reference = childNamed(signedInfo, 'Reference') as Element
    const digest = createHash('sha1').update(canonicalize(doc, setDte, '/*/*[1]'), 'utf8').digest('base64')
    if (digest !== textOf(childNamed(reference, 'DigestValue') as Element).replace(/\s/g, '')) {
      return fail('el DigestValue no corresponde al SetDTE (el envío fue modificado después de firmarlo)')
    }
    const canonicalSignedInfo = canonicalize(doc, signedInfo, `/*/*[${index + 1}]/*[1]`)
    const signatureValue = childNamed(signature, 'SignatureValue')
    if (signatureValue === undefined) return fail('Signature sin SignatureValue')
    const value = Buffer.from(textOf(signatureValue).replace(/\s/g, ''), 'base64')
    if (!verify('sha1', Buffer.from(canonicalSignedInfo, 'utf8'), keyValueOf(signature), value)) {
      return fail('la SignatureValue no verifica con la llave RSAKeyValue del firmante')
    }
    return { isValid: true, reason: '', signature }
  } catch (err) {
    return fail(`firma ilegible: ${err instanceof Error ? err.message : String(err)}`)
  }
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
    // SetDTE does not contain the Signature, so an enveloped-signature transform changes nothing (docs/sii-protocol.md §4.1).
    if (![C14N, ENVELOPED].includes(t.getAttribute('Algorithm') ?? '')) return `Transform no admitido: ${t.getAttribute('Algorithm') ?? ''}`
  }
  if (childNamed(reference, 'DigestValue') === undefined) return 'Reference sin DigestValue'
  return null
}

function childNamed(parent: Element, localName: string): Element | undefined {
  return childElements(parent).find((e) => e.localName === localName)
}

/** Inclusive C14N 1.0 of `node` with the namespaces it inherits (`xpath` anchors it for xml-crypto). */
function canonicalize(doc: Document, node: Element, xpath: string): string {
  const ancestorNamespaces = findAncestorNs(doc, xpath)
  return new C14nCanonicalization().process(node, { ancestorNamespaces, defaultNsForPrefix: { ds: DSIG_NS } }).toString()
}
