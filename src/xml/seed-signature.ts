// The signed getToken document that trades an SII seed for a token (docs/sii-protocol.md §6.3, used by SOAP GetTokenFromSeed and
// by the boleta REST token service, §7.3). The manual's form: an enveloped signature over the whole document,
// Reference URI="" with the single Transform enveloped-signature; the node-set that transform leaves is turned into
// bytes by inclusive C14N 1.0 (XMLDSig §4.3.3.2), the same canonicalization SignedInfo declares. RSA-SHA1, SHA-1,
// KeyInfo = KeyValue/RSAKeyValue then X509Data/X509Certificate, as every SII signature (§4.1). One Transform, not
// two: xmldsignature_v10.xsd allows one (§4.1), and LibreDTE has signed seeds this way for years.
import { createHash, sign } from 'node:crypto'
import { C14nCanonicalization, findAncestorNs } from 'xml-crypto'
import { DSIG_NS, ENVELOPED, keyInfoContent, signedInfoXml, wrap64 } from './dsig-profile'
import { parseXml } from './latin1'
import type { Signer } from '../domain/signer'


/**
 * `<?xml version="1.0"?>` + `<getToken><item><Semilla>…</Semilla></item><Signature …/></getToken>`, signed with
 * `signer`. The seed is kept as the SII wrote it (12 digits, zero-padded, §6.3): leading zeros are part of what is
 * signed. Throws on a seed that is not digits, so nothing but digits is ever spliced into the document.
 */
export function signSeed(seed: string, signer: Signer): string {
  if (!/^\d{1,32}$/.test(seed)) throw new Error('signSeed: the seed must be digits')
  const content = `<item><Semilla>${seed}</Semilla></item>`
  // The enveloped transform removes the Signature, so the digest is over the document without it.
  const digest = sha1Base64(canonicalize(parseXml(`<getToken>${content}</getToken>`), '/*'))
  const signedInfo = signedInfoXml('', ENVELOPED, digest)
  const placed = parseXml(`<getToken>${content}<Signature xmlns="${DSIG_NS}">${signedInfo}</Signature></getToken>`)
  // SignedInfo canonicalized where it sits: under Signature, inheriting its default namespace (§4.1).
  const canonicalSignedInfo = canonicalize(placed, '/*/*[2]/*[1]')
  const signatureValue = sign('sha1', Buffer.from(canonicalSignedInfo, 'utf8'), signer.privateKey).toString('base64')
  return (
    `<?xml version="1.0"?>\n<getToken>${content}<Signature xmlns="${DSIG_NS}">${signedInfo}` +
    `<SignatureValue>${wrap64(signatureValue)}</SignatureValue><KeyInfo>${keyInfoContent(signer, { wrapModulus: true })}</KeyInfo></Signature></getToken>`
  )
}


/** Inclusive C14N 1.0 without comments of the element at `anchoredXpath`, in its document's context. */
function canonicalize(doc: Document, anchoredXpath: string): string {
  const node = select(doc, anchoredXpath)
  const ancestorNamespaces = findAncestorNs(doc, anchoredXpath)
  return new C14nCanonicalization().process(node, { ancestorNamespaces }).toString()
}

/** The element an anchored `/*` or `/*\/*[n]/*[m]` path names, walked by hand (the paths here are fixed). */
function select(doc: Document, anchoredXpath: string): Element {
  let node: Element = doc.documentElement
  for (const step of anchoredXpath.split('/').slice(2)) {
    const index = Number(/\[(\d+)\]/.exec(step)?.[1] ?? '1')
    const child = Array.from(node.childNodes).filter((n): n is Element => n.nodeType === 1)[index - 1]
    if (child === undefined) throw new Error(`signSeed: nothing at ${anchoredXpath}`)
    node = child
  }
  return node
}

function sha1Base64(canonical: string): string {
  return createHash('sha1').update(canonical, 'utf8').digest('base64')
}


