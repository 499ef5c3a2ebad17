// The signing identity XMLDSig needs (docs/sii-protocol.md §4.1, §10): opened from the company's PKCS#12 by
// crypto/pfx.ts and used by every signer in xml/ and by the SII client. One type for both sides of that hand-over.
import type { KeyObject } from 'node:crypto'
import { TimbreError } from '../errors'

export interface Signer {
  readonly privateKey: KeyObject
  /** The leaf certificate, DER in base64, no PEM armour (docs/sii-protocol.md §4.1). */
  readonly certificateDerBase64: string
  /** RSAKeyValue of the certificate's key: big-endian, base64. */
  readonly modulusBase64: string
  readonly exponentBase64: string
}

/** A certificate outside its validity at `now` cannot sign (LibreDTE refuses expired ones, docs/sii-protocol.md §10). */
export function assertUsable(cert: { readonly notBefore: Date; readonly notAfter: Date }, now: Date): void {
  if (now.getTime() > cert.notAfter.getTime()) {
    throw new TimbreError('INVALID_CERTIFICATE', { message: `El certificado digital venció el ${cert.notAfter.toISOString().slice(0, 10)}.` })
  }
  if (now.getTime() < cert.notBefore.getTime()) {
    throw new TimbreError('INVALID_CERTIFICATE', { message: `El certificado digital aún no es válido: rige desde el ${cert.notBefore.toISOString().slice(0, 10)}.` })
  }
}
