// What the simulator reads from the X509Certificate of a signature: the holder's RUT and the public key. forge, not
// node:crypto: Node's X509Certificate prints the RUT's otherName as `othername:<unsupported>` and rejects some old
// SII-issued certificates (docs/stack-notes.md). The holder's RUT is crypto/pfx.ts's rule (docs/sii-protocol.md §10).
import type { KeyObject } from 'node:crypto'
import forge from 'node-forge'
import { certificateHolderRut } from '../../crypto/pfx'

export interface CertificateInfo {
  /** Canonical `12345678-K`, null when the certificate names no RUT. */
  readonly rut: string | null
  /** Modulus and exponent, lowercase hex without leading zeros, to compare with an RSAKeyValue. */
  readonly modulusHex: string
  readonly exponentHex: string
  readonly notBefore: Date
  readonly notAfter: Date
}

/** Reads a base64 DER certificate (whitespace allowed); null when it is not one forge can read or not RSA. */
export function readCertificate(base64: string): CertificateInfo | null {
  try {
    const der = forge.util.decode64(base64.replace(/\s/g, ''))
    const cert = forge.pki.certificateFromAsn1(forge.asn1.fromDer(der))
    const key = cert.publicKey as forge.pki.rsa.PublicKey
    if (key.n === undefined) return null
    return {
      rut: certificateHolderRut(cert),
      modulusHex: key.n.toString(16),
      exponentHex: key.e.toString(16),
      notBefore: cert.validity.notBefore,
      notAfter: cert.validity.notAfter,
    }
  } catch {
    return null
  }
}

/** True when `key` (an RSAKeyValue read into a KeyObject) is the certificate's key (getToken code 21, docs/sii-protocol.md §6.3). */
export function holdsKey(cert: CertificateInfo, key: KeyObject): boolean {
  const jwk = key.export({ format: 'jwk' })
  const hex = (b64url: string | undefined): string => BigInt(`0x${Buffer.from(b64url ?? '', 'base64url').toString('hex') || '0'}`).toString(16)
  return hex(jwk.n) === cert.modulusHex && hex(jwk.e) === cert.exponentHex
}
