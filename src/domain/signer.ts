// The signing identity XMLDSig needs (docs/sii-protocol.md §4.1, §10): opened from the company's PKCS#12 by
// crypto/pfx.ts and used by every signer in xml/ and by the SII client. One type for both sides of that hand-over.
import type { KeyObject } from 'node:crypto'

export interface Signer {
  readonly privateKey: KeyObject
  /** The leaf certificate, DER in base64, no PEM armour (docs/sii-protocol.md §4.1). */
  readonly certificateDerBase64: string
  /** RSAKeyValue of the certificate's key: big-endian, base64. */
  readonly modulusBase64: string
  readonly exponentBase64: string
}
