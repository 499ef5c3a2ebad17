// What the simulator reads from the X509Certificate of a signature: the holder's RUT and the public key. forge, not
// node:crypto: Node's X509Certificate prints the RUT's otherName as `othername:<unsupported>` and rejects some old
// SII-issued certificates (docs/stack-notes.md). The rule is crypto/pfx.ts's (docs/sii-protocol.md §10), repeated because sii/simulator
// reads certificates out of XML, not out of a PKCS#12 file.
import type { KeyObject } from 'node:crypto'
import forge from 'node-forge'
import { normalizeRut } from '../../domain/rut'

/** Subject alternative name otherName type-id for the holder's RUT (docs/sii-protocol.md §10). */
const OID_RUT_TITULAR = '1.3.6.1.4.1.8321.1'

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
      rut: rutFromOtherName(cert) ?? normalizeRut(String(cert.subject.getField({ name: 'serialNumber' })?.value ?? '')),
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

interface AltName {
  readonly type: number
  readonly value: unknown
}

function rutFromOtherName(cert: forge.pki.Certificate): string | null {
  const san = cert.getExtension('subjectAltName') as { altNames?: readonly AltName[] } | undefined
  for (const altName of san?.altNames ?? []) {
    // forge keeps an otherName (type 0) as raw ASN.1: [OID, [0] { IA5String }]; the text may carry leading zeros.
    if (altName.type !== 0 || !Array.isArray(altName.value)) continue
    const [oid, explicit] = altName.value as [forge.asn1.Asn1 | undefined, forge.asn1.Asn1 | undefined]
    if (oid === undefined || typeof oid.value !== 'string' || forge.asn1.derToOid(oid.value) !== OID_RUT_TITULAR) continue
    const inner = Array.isArray(explicit?.value) ? explicit.value[0] : undefined
    const rut = typeof inner?.value === 'string' ? normalizeRut(inner.value) : null
    if (rut !== null) return rut
  }
  return null
}
