// Opens the company's PKCS#12 (.pfx/.p12) signing certificate. node-forge only opens the file (node:crypto has no
// PKCS#12 API; forge reads 3DES, OpenSSL 3's AES-256/PBKDF2 and legacy RC2-40, docs/stack-notes.md); every signature is then
// made by node:crypto with a KeyObject (forge signs ~75× slower). docs/sii-protocol.md §10.
import { createPrivateKey, type KeyObject } from 'node:crypto'
import forge from 'node-forge'
import { rutInText } from '../domain/rut'
import type { Signer } from '../domain/signer'
import { TimbreError } from '../errors'

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

export { assertUsable } from '../domain/signer'

function decodePkcs12(bytes: Uint8Array, password: string): forge.pkcs12.Pkcs12Pfx {
  let asn1: forge.asn1.Asn1
  try {
    asn1 = forge.asn1.fromDer(forge.util.createBuffer(Buffer.from(bytes).toString('binary')))
  } catch {
    throw invalidCertificate('El archivo no es un certificado PKCS#12 (.pfx/.p12).')
  }
  const mac = macDerivation(asn1)
  checkIterations([...(mac === null ? [] : [mac]), ...visibleBagDerivations(asn1)])
  try {
    return withBoundedPbe(mac === null ? 0 : cost(mac), () => forge.pkcs12.pkcs12FromAsn1(asn1, true, password))
  } catch (err) {
    if (err instanceof TimbreError) throw err
    const message = err instanceof Error ? err.message : String(err)
    // forge: "PKCS#12 MAC could not be verified. Invalid password?"; a wrong password can also surface as a failed decryption.
    if (/MAC could not be verified|Invalid password|decrypt/i.test(message)) {
      throw invalidCertificate('La contraseña del certificado es incorrecta.')
    }
    if (/OID is not RSA|public key/i.test(message)) throw invalidCertificate('El certificado no tiene una llave RSA.')
    throw invalidCertificate('El archivo no es un certificado PKCS#12 (.pfx/.p12) legible.')
  }
}

/**
 * Iterations one key derivation of a PKCS#12 file may ask for. forge runs them in JavaScript on the event loop every
 * company shares, 1.6 µs to 30 µs each by digest (measured on Bun), before it can tell a wrong password: the 2^31 a file
 * may declare is about two hours (issue 12). Exporters write 2 048 (OpenSSL, forge), 10 000 (Java keytool) and at most
 * 600 000 (Bouncy Castle 1.86's default, after OWASP's PBKDF2 advice; Keyfactor's EJBCA docs): 1 000 000 leaves room
 * above them all. Such a file still costs seconds (600 000 in an OpenSSL 3 file: 10 s), the price of opening it in forge.
 */
const MAX_ITERATIONS = 1_000_000
/**
 * Iterations the whole file may ask for, each weighted by its digest's cost: the MAC, the certificates' EncryptedData
 * and the key's bag at the bound each, the shape every exporter writes. Without it, many bags would multiply the bound.
 */
const MAX_TOTAL_ITERATIONS = 3 * MAX_ITERATIONS
/** SII certificates carry RSA keys of 1 024 or 2 048 bits; signing time grows with the cube of the size and every DTE is signed. */
const MAX_RSA_BITS = 4096

/** One password-based key derivation forge would run: how many iterations, of which digest (an OID). */
interface Derivation {
  readonly iterations: number
  readonly digestOid: string
}

const OID_SHA1 = forge.pki.oids.sha1 ?? '1.3.14.3.2.26'
const OID_HMAC_SHA1 = forge.pki.oids.hmacWithSHA1 ?? '1.2.840.113549.2.7'

/** forge computes SHA-384 and SHA-512 on 64-bit words made of 32-bit halves: an iteration costs 4–7 of SHA-1's or SHA-256's. */
function cost(derivation: Derivation): number {
  return derivation.iterations * (/sha(384|512)/i.test(forge.pki.oids[derivation.digestOid] ?? '') ? 5 : 1)
}

function checkIterations(derivations: readonly Derivation[], alreadySpent = 0): void {
  let total = alreadySpent
  for (const derivation of derivations) {
    if (derivation.iterations > MAX_ITERATIONS) {
      throw invalidCertificate(
        `El archivo PKCS#12 pide ${Number.isFinite(derivation.iterations) ? derivation.iterations : 'más de 2^48'} iteraciones para ` +
          `derivar una clave; Timbre acepta hasta ${MAX_ITERATIONS} (los exportadores usan entre 2048 y 600000).`,
      )
    }
    total += cost(derivation)
    if (total > MAX_TOTAL_ITERATIONS) {
      throw invalidCertificate(`El archivo PKCS#12 pide más iteraciones de derivación de clave en total de las que Timbre acepta (${MAX_TOTAL_ITERATIONS}).`)
    }
  }
}

/**
 * forge decrypts every EncryptedData and shrouded key bag through `pki.pbe.getCipher` (node-forge 1.4 lib/pkcs12.js,
 * lib/pbe.js), which derives the key at once: a bag inside an EncryptedData is only seen once forge has decrypted it, so
 * each derivation is checked there, before it runs, against what the file has already spent. forge is synchronous: no
 * other code runs while the check is in place. @types/node-forge does not declare `pki.pbe`.
 */
function withBoundedPbe<T>(alreadySpent: number, open: () => T): T {
  const pbe = (forge.pki as unknown as { pbe: { getCipher: (oid: string, params: forge.asn1.Asn1, password: string) => unknown } }).pbe
  const getCipher = pbe.getCipher
  let spent = alreadySpent
  pbe.getCipher = (oid, params, password) => {
    const derivation = pbeDerivation(oid, params)
    if (derivation !== null) {
      checkIterations([derivation], spent)
      spent += cost(derivation)
    }
    return getCipher(oid, params, password)
  }
  try {
    return open()
  } finally {
    pbe.getCipher = getCipher
  }
}

function children(node: forge.asn1.Asn1 | undefined): readonly forge.asn1.Asn1[] {
  return Array.isArray(node?.value) ? node.value : []
}

function isUniversal(node: forge.asn1.Asn1 | undefined, type: forge.asn1.Type): node is forge.asn1.Asn1 {
  return node !== undefined && node.tagClass === forge.asn1.Class.UNIVERSAL && node.type === type
}

/** An INTEGER read as forge reads a count (unsigned, big-endian); Infinity past 2^48, beyond any bound. */
function unsignedInteger(node: forge.asn1.Asn1): number {
  const bytes = typeof node.value === 'string' ? node.value.replace(/^\0+/, '') : ''
  if (bytes.length > 6) return Number.POSITIVE_INFINITY
  return [...bytes].reduce((n, c) => n * 256 + c.charCodeAt(0), 0)
}

function oidOf(node: forge.asn1.Asn1 | undefined): string | null {
  return isUniversal(node, forge.asn1.Type.OID) && typeof node.value === 'string' ? forge.asn1.derToOid(node.value) : null
}

/** RFC 7292 §4: PFX { version, authSafe, macData { mac DigestInfo, macSalt, iterations DEFAULT 1 } }, read where forge reads it. */
function macDerivation(pfx: forge.asn1.Asn1): Derivation | null {
  const macData = children(pfx)[2]
  if (!isUniversal(macData, forge.asn1.Type.SEQUENCE)) return null
  const [digestInfo, , iterations] = children(macData)
  const digestOid = oidOf(children(children(digestInfo)[0])[0]) ?? OID_SHA1
  return { iterations: isUniversal(iterations, forge.asn1.Type.INTEGER) ? unsignedInteger(iterations) : 1, digestOid }
}

/**
 * The derivation behind an encryption AlgorithmIdentifier, null when forge derives nothing for it (it refuses the
 * algorithm, or its parameters do not have the shape forge requires before deriving). PBES2 (RFC 8018 §6.2, A.4):
 * { { PBKDF2, { salt, iterationCount, keyLength?, prf? } }, scheme }; PKCS#12 PBE (RFC 7292 App. C): { salt, iterations },
 * always SHA-1 in forge.
 */
function pbeDerivation(algorithmOid: string, params: forge.asn1.Asn1 | undefined): Derivation | null {
  if (algorithmOid === forge.pki.oids.pkcs5PBES2) {
    const pbkdf2Params = children(children(params)[0])[1]
    const [, iterations, ...optional] = children(pbkdf2Params)
    if (!isUniversal(iterations, forge.asn1.Type.INTEGER)) return null
    const prf = optional.find((node) => isUniversal(node, forge.asn1.Type.SEQUENCE))
    return { iterations: unsignedInteger(iterations), digestOid: oidOf(children(prf)[0]) ?? OID_HMAC_SHA1 }
  }
  if (algorithmOid.startsWith('1.2.840.113549.1.12.1.')) {
    const iterations = children(params)[1]
    return isUniversal(iterations, forge.asn1.Type.INTEGER) ? { iterations: unsignedInteger(iterations), digestOid: OID_SHA1 } : null
  }
  return null
}

/** An OCTET STRING's bytes, its BER chunks joined as forge joins them; null when it is none. */
function octetString(node: forge.asn1.Asn1 | undefined): string | null {
  if (!isUniversal(node, forge.asn1.Type.OCTETSTRING)) return null
  if (typeof node.value === 'string') return node.value
  return node.value.map((chunk) => (typeof chunk.value === 'string' ? chunk.value : '')).join('')
}

function parsedDer(bytes: string | null): forge.asn1.Asn1 | undefined {
  if (bytes === null) return undefined
  try {
    return forge.asn1.fromDer(bytes, true)
  } catch {
    return undefined
  }
}

/**
 * The derivations visible without the password: each EncryptedData's, and each shrouded key bag's in a plain Data
 * (RFC 7292 §4.1 AuthenticatedSafe of ContentInfo, §4.2 SafeBag). Whatever cannot be read here is left to forge, whose
 * every derivation `withBoundedPbe` checks anyway: this only refuses a hostile file before the MAC is computed.
 */
function visibleBagDerivations(pfx: forge.asn1.Asn1): Derivation[] {
  const authSafe = parsedDer(octetString(children(children(children(pfx)[1])[1])[0]))
  const out: Derivation[] = []
  for (const contentInfo of children(authSafe)) {
    const [type, explicit] = children(contentInfo)
    const content = children(explicit)[0]
    if (oidOf(type) === forge.pki.oids.encryptedData) {
      const algorithm = children(children(content)[1])[1]  // EncryptedData { version, EncryptedContentInfo { type, algorithm, … } }
      const derivation = pbeDerivation(oidOf(children(algorithm)[0]) ?? '', children(algorithm)[1])
      if (derivation !== null) out.push(derivation)
    } else if (oidOf(type) === forge.pki.oids.data) {
      for (const bag of children(parsedDer(octetString(content)))) {
        if (oidOf(children(bag)[0]) !== forge.pki.oids.pkcs8ShroudedKeyBag) continue
        const algorithm = children(children(children(bag)[1])[0])[0]  // [0] EncryptedPrivateKeyInfo { algorithm, data }
        const derivation = pbeDerivation(oidOf(children(algorithm)[0]) ?? '', children(algorithm)[1])
        if (derivation !== null) out.push(derivation)
      }
    }
  }
  return out
}

function rsaPrivateKey(p12: forge.pkcs12.Pkcs12Pfx): forge.pki.rsa.PrivateKey {
  const bags = [
    ...(p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag ?? '' })[forge.pki.oids.pkcs8ShroudedKeyBag ?? ''] ?? []),
    ...(p12.getBags({ bagType: forge.pki.oids.keyBag ?? '' })[forge.pki.oids.keyBag ?? ''] ?? []),
  ]
  if (bags.length === 0) throw invalidCertificate('El archivo PKCS#12 no contiene una llave privada.')
  // forge leaves `key` null when the key is not RSA (EC, say): the SII profile signs with RSA only (docs/sii-protocol.md §4.1).
  const key = bags.find((bag) => bag.key != null)?.key as forge.pki.rsa.PrivateKey | null | undefined
  if (key == null) throw invalidCertificate('El certificado no tiene una llave RSA.')
  // Refused before node:crypto ever holds it, so nothing signs with it (issue 12: each signature would hold the event loop).
  const bits = key.n.bitLength()
  if (bits > MAX_RSA_BITS) throw invalidCertificate(`La llave RSA del certificado tiene ${bits} bits; Timbre acepta hasta ${MAX_RSA_BITS}.`)
  return key
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
  const rut = certificateHolderRut(cert)
  if (rut === null) throw invalidCertificate('El certificado no indica el RUT de su titular (subjectAltName 1.3.6.1.4.1.8321.1 ni serialNumber).')
  return rut
}

interface OtherNameAltName {
  readonly type: number
  readonly value: unknown
}

/**
 * The holder's RUT named by a certificate, canonical, or null: the otherName, else the subject serialNumber. Also what
 * the SII simulator reads from the X509Certificate of a signature (sii/simulator/certificate.ts).
 */
export function certificateHolderRut(cert: forge.pki.Certificate): string | null {
  return rutFromOtherName(cert) ?? rutInText(String(cert.subject.getField({ name: 'serialNumber' })?.value ?? ''))
}

function rutFromOtherName(cert: forge.pki.Certificate): string | null {
  const san = cert.getExtension('subjectAltName') as { altNames?: readonly OtherNameAltName[] } | undefined
  for (const altName of san?.altNames ?? []) {
    // forge keeps an otherName (type 0) as its raw ASN.1: [OID, [0] { IA5String }] (docs/sii-protocol.md §10).
    if (altName.type !== 0 || !Array.isArray(altName.value)) continue
    const [oid, explicit] = altName.value as [forge.asn1.Asn1 | undefined, forge.asn1.Asn1 | undefined]
    if (oid === undefined || typeof oid.value !== 'string' || forge.asn1.derToOid(oid.value) !== OID_RUT_TITULAR) continue
    const inner = Array.isArray(explicit?.value) ? explicit.value[0] : undefined
    const rut = typeof inner?.value === 'string' ? rutInText(inner.value) : null
    if (rut !== null) return rut
  }
  return null
}

