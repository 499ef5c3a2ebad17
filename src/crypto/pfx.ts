// Opens the company's PKCS#12 (.pfx/.p12) signing certificate. node-forge only opens the file (node:crypto has no
// PKCS#12 API; forge reads 3DES, OpenSSL 3's AES-256/PBKDF2 and legacy RC2-40, docs/stack-notes.md); every signature is then
// made by node:crypto with a KeyObject (forge signs ~75× slower). docs/sii-protocol.md §10.
import { createPrivateKey, type KeyObject } from 'node:crypto'
import forge from 'node-forge'
import { TimbreError } from '../errors'

/** Same shape as `xml/signature.ts` Signer: what XMLDSig needs (STYLE §1 keeps crypto/ and xml/ apart). */
export interface Signer {
  readonly privateKey: KeyObject
  readonly certificateDerBase64: string
  readonly modulusBase64: string
  readonly exponentBase64: string
}

export interface Certificado {
  readonly signer: Signer
  /** Canonical `12345678-K`, no leading zeros: RutEnvia, rutSender, RutConsultante (docs/sii-protocol.md §10). */
  readonly rutFirmante: string
  /** Subject CN, for display. */
  readonly subjectCn: string
  /** Serial number, lowercase hex as forge prints it. */
  readonly serialNumber: string
  readonly notBefore: Date
  readonly notAfter: Date
}

/** Subject alternative name otherName type-id for the holder's RUT (Decreto 181/2002; docs/sii-protocol.md §10). */
const OID_RUT_TITULAR = '1.3.6.1.4.1.8321.1'

function invalidCertificate(message: string): TimbreError {
  return new TimbreError('INVALID_CERTIFICATE', { message })
}

/** Opens a PKCS#12 file. Throws INVALID_CERTIFICATE (wrong password, not PKCS#12, no RSA key, no matching cert, no RUT). */
export function openPfx(bytes: Uint8Array, password: string): Certificado {
  const p12 = decodePkcs12(bytes, password)
  const key = rsaPrivateKey(p12)
  const cert = certificateFor(p12, key)
  const derBytes = forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes()
  return {
    signer: {
      privateKey: toKeyObject(key),
      certificateDerBase64: forge.util.encode64(derBytes),
      modulusBase64: bigIntegerBase64(key.n),
      exponentBase64: bigIntegerBase64(key.e),
    },
    rutFirmante: signerRut(cert),
    subjectCn: String(cert.subject.getField('CN')?.value ?? ''),
    serialNumber: cert.serialNumber,
    notBefore: cert.validity.notBefore,
    notAfter: cert.validity.notAfter,
  }
}

/** A certificate outside its validity at `now` cannot sign (LibreDTE refuses expired ones, docs/sii-protocol.md §10). */
export function assertUsable(cert: Pick<Certificado, 'notBefore' | 'notAfter'>, now: Date): void {
  if (now.getTime() > cert.notAfter.getTime()) {
    throw invalidCertificate(`El certificado digital venció el ${cert.notAfter.toISOString().slice(0, 10)}.`)
  }
  if (now.getTime() < cert.notBefore.getTime()) {
    throw invalidCertificate(`El certificado digital aún no es válido: rige desde el ${cert.notBefore.toISOString().slice(0, 10)}.`)
  }
}

function decodePkcs12(bytes: Uint8Array, password: string): forge.pkcs12.Pkcs12Pfx {
  let asn1: forge.asn1.Asn1
  try {
    asn1 = forge.asn1.fromDer(forge.util.createBuffer(Buffer.from(bytes).toString('binary')))
  } catch {
    throw invalidCertificate('El archivo no es un certificado PKCS#12 (.pfx/.p12).')
  }
  try {
    return forge.pkcs12.pkcs12FromAsn1(asn1, true, password)
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    // forge: "PKCS#12 MAC could not be verified. Invalid password?"; a wrong password can also surface as a failed decryption.
    if (/MAC could not be verified|Invalid password|decrypt/i.test(message)) {
      throw invalidCertificate('La contraseña del certificado es incorrecta.')
    }
    if (/OID is not RSA|public key/i.test(message)) throw invalidCertificate('El certificado no tiene una llave RSA.')
    throw invalidCertificate('El archivo no es un certificado PKCS#12 (.pfx/.p12) legible.')
  }
}

function rsaPrivateKey(p12: forge.pkcs12.Pkcs12Pfx): forge.pki.rsa.PrivateKey {
  const bags = [
    ...(p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag ?? '' })[forge.pki.oids.pkcs8ShroudedKeyBag ?? ''] ?? []),
    ...(p12.getBags({ bagType: forge.pki.oids.keyBag ?? '' })[forge.pki.oids.keyBag ?? ''] ?? []),
  ]
  if (bags.length === 0) throw invalidCertificate('El archivo PKCS#12 no contiene una llave privada.')
  // forge leaves `key` null when the key is not RSA (EC, say): the SII profile signs with RSA only (docs/sii-protocol.md §4.1).
  const key = bags.find((bag) => bag.key != null)?.key
  if (key == null) throw invalidCertificate('El certificado no tiene una llave RSA.')
  return key as forge.pki.rsa.PrivateKey
}

/** A PFX may also carry its CA chain: the signing certificate is the one whose modulus is the key's (docs/stack-notes.md). */
function certificateFor(p12: forge.pkcs12.Pkcs12Pfx, key: forge.pki.rsa.PrivateKey): forge.pki.Certificate {
  const certBag = forge.pki.oids.certBag ?? ''
  const certs = (p12.getBags({ bagType: certBag })[certBag] ?? []).flatMap((bag) => (bag.cert ? [bag.cert] : []))
  const match = certs.find((cert) => {
    const publicKey = cert.publicKey as forge.pki.rsa.PublicKey
    return publicKey.n !== undefined && publicKey.n.equals(key.n) && publicKey.e.equals(key.e)
  })
  if (match === undefined) throw invalidCertificate('El archivo PKCS#12 no contiene el certificado de su llave privada.')
  return match
}

function toKeyObject(key: forge.pki.rsa.PrivateKey): KeyObject {
  const der = forge.asn1.toDer(forge.pki.privateKeyToAsn1(key)).getBytes()
  return createPrivateKey({ key: Buffer.from(der, 'binary'), format: 'der', type: 'pkcs1' })
}

/** Unsigned big-endian bytes of a forge BigInteger, base64 (XMLDSig CryptoBinary: no leading zero octets). */
function bigIntegerBase64(value: forge.jsbn.BigInteger): string {
  let hex = value.toString(16)
  if (hex.length % 2 === 1) hex = `0${hex}`
  return Buffer.from(hex, 'hex').toString('base64')
}

/**
 * The holder's RUT: subjectAltName otherName 1.3.6.1.4.1.8321.1 (`[0] EXPLICIT IA5String`, may carry leading zeros
 * or dots), else the subject serialNumber attribute (some test certificates; what Odoo reads), else refused.
 */
function signerRut(cert: forge.pki.Certificate): string {
  const rut = rutFromOtherName(cert) ?? canonicalRut(String(cert.subject.getField({ name: 'serialNumber' })?.value ?? ''))
  if (rut === null) throw invalidCertificate('El certificado no indica el RUT de su titular (subjectAltName 1.3.6.1.4.1.8321.1 ni serialNumber).')
  return rut
}

interface OtherNameAltName {
  readonly type: number
  readonly value: unknown
}

function rutFromOtherName(cert: forge.pki.Certificate): string | null {
  const san = cert.getExtension('subjectAltName') as { altNames?: readonly OtherNameAltName[] } | undefined
  for (const altName of san?.altNames ?? []) {
    // forge keeps an otherName (type 0) as its raw ASN.1: [OID, [0] { IA5String }] (docs/sii-protocol.md §10).
    if (altName.type !== 0 || !Array.isArray(altName.value)) continue
    const [oid, explicit] = altName.value as [forge.asn1.Asn1 | undefined, forge.asn1.Asn1 | undefined]
    if (oid === undefined || typeof oid.value !== 'string' || forge.asn1.derToOid(oid.value) !== OID_RUT_TITULAR) continue
    const inner = Array.isArray(explicit?.value) ? explicit.value[0] : undefined
    const rut = typeof inner?.value === 'string' ? canonicalRut(inner.value) : null
    if (rut !== null) return rut
  }
  return null
}

/** `07.880.442-4` → `7880442-4`; finds the RUT inside longer text (CORD matches `\d{1,8}-[0-9Kk]`). */
function canonicalRut(text: string): string | null {
  const match = /(\d{1,8})-([\dkK])/.exec(text.replace(/\./g, ''))
  if (match === null) return null
  const body = String(Number(match[1]))
  return body === '0' ? null : `${body}-${(match[2] ?? '').toUpperCase()}`
}
