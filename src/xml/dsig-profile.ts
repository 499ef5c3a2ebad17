// The SII's XMLDSig profile as text (docs/sii-protocol.md §4.1), shared by the three signers: the DTE (signature.ts), the
// envelope (envelope.ts) and the seed (seed-signature.ts). One Reference, inclusive C14N 1.0, RSA-SHA1, SHA-1, and
// KeyInfo = KeyValue/RSAKeyValue then X509Data/X509Certificate (xmldsignature_v10.xsd order).
import type { Signer } from '../domain/signer'

export const C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315'
export const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'
export const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1'
export const SHA1 = 'http://www.w3.org/2000/09/xmldsig#sha1'
export const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#'
export const SII_NS = 'http://www.sii.cl/SiiDte'
export const XSI_NS = 'http://www.w3.org/2001/XMLSchema-instance'

/** The one-Reference SignedInfo, written the way xml-crypto writes it (its bytes are what gets signed). */
export function signedInfoXml(referenceUri: string, transform: string, digest: string): string {
  return (
    `<SignedInfo><CanonicalizationMethod Algorithm="${C14N}"/><SignatureMethod Algorithm="${RSA_SHA1}"/>` +
    `<Reference URI="${referenceUri}"><Transforms><Transform Algorithm="${transform}"/></Transforms>` +
    `<DigestMethod Algorithm="${SHA1}"/><DigestValue>${digest}</DigestValue></Reference></SignedInfo>`
  )
}

/** 64-column base64 lines joined by LF, as LibreDTE and Odoo write them; never CR (docs/sii-protocol.md §4.1). */
export function wrap64(base64: string): string {
  return (base64.replace(/\s/g, '').match(/.{1,64}/g) ?? []).join('\n')
}

/** KeyValue first, then X509Data with the leaf certificate only. No digest covers KeyInfo, so its layout is free. */
export function keyInfoContent(signer: Signer, opts: { readonly wrapModulus?: boolean } = {}): string {
  const modulus = opts.wrapModulus ? wrap64(signer.modulusBase64) : signer.modulusBase64
  return (
    '<KeyValue><RSAKeyValue>' +
    `<Modulus>${modulus}</Modulus><Exponent>${signer.exponentBase64}</Exponent>` +
    '</RSAKeyValue></KeyValue>' +
    `<X509Data><X509Certificate>${wrap64(signer.certificateDerBase64)}</X509Certificate></X509Data>`
  )
}
