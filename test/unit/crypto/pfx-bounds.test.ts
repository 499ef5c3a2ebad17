// Issue 12: no PKCS#12 file may hold the event loop. forge runs the MAC's and every bag's key derivation in JavaScript,
// with the iteration count the file declares, before it can tell a wrong password: a count of 2^31 is an hour. openPfx
// refuses counts real files never reach within 100 ms, and RSA keys over 4 096 bits before anything signs with them.
import { describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import forge from 'node-forge'
import { openPfx } from '../../../src/crypto/pfx'
import { TimbreError } from '../../../src/errors'
import { exportPfx, makeCertificate, testCa, type TestIdentity } from '../../support/pki'
import { fastestOfSync } from '../../support/timing'

const { asn1, pki } = forge
const PASSWORD = 'Clave Secreta 2026!'
const AN_HOUR = 2 ** 31 - 1  // iterations: ~1.6 µs each in forge, the largest count OpenSSL's -iter takes
const leaf = makeCertificate({ rut: '07880442-4', issuer: testCa(), serial: '0100a7', keySlot: 5 })

/** The INTEGER content octets of a non-negative count, any size (DER: a leading 00 when the top bit is set). */
function integerOctets(count: bigint): string {
  let hex = count.toString(16)
  if (hex.length % 2 === 1) hex = `0${hex}`
  if (Number.parseInt(hex.slice(0, 2), 16) >= 0x80) hex = `00${hex}`
  return forge.util.hexToBytes(hex)
}

const seq = (...children: forge.asn1.Asn1[]) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, children)
const oid = (id: string) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(id).getBytes())
const octets = (bytes: string) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, bytes)
const integer = (count: bigint) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, integerOctets(count))
const explicit0 = (child: forge.asn1.Asn1) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [child])
const der = (node: forge.asn1.Asn1) => asn1.toDer(node).getBytes()
const oids = (name: string) => pki.oids[name] ?? ''

function child(node: forge.asn1.Asn1, ...path: number[]): forge.asn1.Asn1 {
  let at = node
  for (const i of path) {
    const next = Array.isArray(at.value) ? at.value[i] : undefined
    if (next === undefined) throw new Error(`no child ${path.join('.')}`)
    at = next
  }
  return at
}

interface Pbe {
  /** forge's names: '3des' is PKCS#12 pbeWithSHAAnd3-KeyTripleDES-CBC, 'aes256' is PBES2/PBKDF2. */
  readonly algorithm: '3des' | 'aes256'
  readonly prf?: 'sha1' | 'sha256' | 'sha512'
  /** What the file declares; the data is really encrypted with 1 iteration, so an honest opener stays fast. */
  readonly declared?: bigint
}

/** EncryptedPrivateKeyInfo-shaped `{ AlgorithmIdentifier, OCTET STRING }` of `content`, its count replaced by `declared`. */
function encrypt(content: forge.asn1.Asn1, pbe: Pbe): { algorithm: forge.asn1.Asn1; ciphertext: string } {
  const epki = pki.encryptPrivateKeyInfo(content, PASSWORD, { algorithm: pbe.algorithm, count: 1, prfAlgorithm: pbe.prf ?? 'sha256' })
  const algorithm = child(epki, 0)
  if (pbe.declared !== undefined) {
    // PBES2-params { keyDerivationFunc { PBKDF2, { salt, iterationCount, … } }, … } or pkcs-12PbeParams { salt, iterations }
    const count = pbe.algorithm === '3des' ? child(algorithm, 1, 1) : child(algorithm, 1, 0, 1, 1)
    count.value = integerOctets(pbe.declared)
  }
  return { algorithm, ciphertext: String(child(epki, 1).value) }
}

function shroudedKeyBag(identity: TestIdentity, pbe: Pbe): forge.asn1.Asn1 {
  const keyInfo = pki.wrapRsaPrivateKey(pki.privateKeyToAsn1(pki.privateKeyFromPem(identity.privateKeyPem)))
  const { algorithm, ciphertext } = encrypt(keyInfo, pbe)
  return seq(oid(oids('pkcs8ShroudedKeyBag')), explicit0(seq(algorithm, octets(ciphertext))))
}

function certBag(identity: TestIdentity): forge.asn1.Asn1 {
  const certificate = seq(oid(oids('x509Certificate')), explicit0(octets(identity.certificateDer.toString('binary'))))
  return seq(oid(oids('certBag')), explicit0(certificate))
}

const dataContent = (bags: forge.asn1.Asn1[]) => seq(oid(oids('data')), explicit0(octets(der(seq(...bags)))))

function encryptedContent(bags: forge.asn1.Asn1[], pbe: Pbe): forge.asn1.Asn1 {
  const { algorithm, ciphertext } = encrypt(seq(...bags), pbe)
  const encryptedContentInfo = seq(oid(oids('data')), algorithm, asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, false, ciphertext))
  return seq(oid(oids('encryptedData')), explicit0(seq(integer(0n), encryptedContentInfo)))
}

/** A PFX (RFC 7292 §4) with a valid SHA-1 MAC made with 1 iteration, declaring `declaredMac` iterations when given. */
function pfx(contents: forge.asn1.Asn1[], declaredMac?: bigint): Uint8Array {
  const authSafe = der(seq(...contents))
  const salt = forge.random.getBytesSync(8)
  const hmac = forge.hmac.create()
  hmac.start('sha1', forge.pkcs12.generateKey(PASSWORD, forge.util.createBuffer(salt), 3, 1, 20).getBytes())
  hmac.update(authSafe)
  const digestInfo = seq(seq(oid(oids('sha1')), asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, '')), octets(hmac.digest().getBytes()))
  const macData = seq(digestInfo, octets(salt), integer(declaredMac ?? 1n))
  return Buffer.from(der(seq(integer(3n), seq(oid(oids('data')), explicit0(octets(authSafe))), macData)), 'binary')
}

/** An exporter's file with its MAC iteration count replaced (the MAC no longer verifies: forge finds out after counting). */
function withMacIterations(file: Uint8Array, count: bigint): Uint8Array {
  const root = asn1.fromDer(forge.util.createBuffer(Buffer.from(file).toString('binary')))
  child(root, 2, 2).value = integerOctets(count)
  return Buffer.from(der(root), 'binary')
}

/** The refusal of `file` and the fastest of a few attempts to open it (test/support/timing.ts). */
function refusal(file: Uint8Array): { readonly reason: string; readonly ms: number } {
  const { value: err, ms } = fastestOfSync(() => {
    try {
      openPfx(file, PASSWORD)
    } catch (err) {
      return err
    }
    throw new Error('expected INVALID_CERTIFICATE')
  })
  expect(err).toBeInstanceOf(TimbreError)
  expect((err as TimbreError).code).toBe('INVALID_CERTIFICATE')
  return { reason: (err as TimbreError).message, ms }
}

const des = (declared?: bigint): Pbe => ({ algorithm: '3des', declared })
const aes = (declared?: bigint, prf: Pbe['prf'] = 'sha256'): Pbe => ({ algorithm: 'aes256', prf, declared })

describe('the test files are honest PKCS#12', () => {
  test.each([
    ['certificates in plain Data, key shrouded with 3DES', () => pfx([dataContent([certBag(leaf)]), dataContent([shroudedKeyBag(leaf, des())])])],
    ['certificates in a 3DES EncryptedData, key shrouded with AES', () => pfx([encryptedContent([certBag(leaf)], des()), dataContent([shroudedKeyBag(leaf, aes())])])],
    ['the key shrouded inside an AES EncryptedData', () => pfx([encryptedContent([certBag(leaf), shroudedKeyBag(leaf, aes())], aes())])],
  ])('%s: opens', (_name, make) => {
    expect(openPfx(make(), PASSWORD).rutFirmante).toBe('7880442-4')
  })
})

describe('iteration counts real files never reach are refused within 100 ms', () => {
  test.each([
    ['MAC of an OpenSSL 3 file (SHA-256)', () => withMacIterations(exportPfx(leaf, PASSWORD, 'aes256'), BigInt(AN_HOUR))],
    ['MAC of a forge file (SHA-1)', () => withMacIterations(exportPfx(leaf, PASSWORD, '3des'), BigInt(AN_HOUR))],
    ['MAC, as a 9-octet INTEGER', () => withMacIterations(exportPfx(leaf, PASSWORD, '3des'), 2n ** 64n + 1n)],
    ['certificates’ EncryptedData, PKCS#12 3DES', () => pfx([encryptedContent([certBag(leaf)], des(BigInt(AN_HOUR))), dataContent([shroudedKeyBag(leaf, des())])])],
    ['certificates’ EncryptedData, PBES2', () => pfx([encryptedContent([certBag(leaf)], aes(BigInt(AN_HOUR))), dataContent([shroudedKeyBag(leaf, aes())])])],
    ['key bag in plain Data, PBES2', () => pfx([dataContent([certBag(leaf), shroudedKeyBag(leaf, aes(BigInt(AN_HOUR)))])])],
    ['key bag in plain Data, PKCS#12 3DES', () => pfx([dataContent([certBag(leaf), shroudedKeyBag(leaf, des(BigInt(AN_HOUR)))])])],
    ['key bag inside an EncryptedData (seen only once that is decrypted)', () => pfx([encryptedContent([certBag(leaf), shroudedKeyBag(leaf, aes(BigInt(AN_HOUR)))], aes())])],
    ['one over the bound', () => pfx([dataContent([certBag(leaf), shroudedKeyBag(leaf, aes(1_000_001n))])])],
  ])('%s', (_name, make) => {
    const { reason, ms } = refusal(make())
    expect(reason).toMatch(/iteraciones/)
    expect(ms).toBeLessThan(100)
  })

  test('many bags under the bound that add up to more than the file may cost', () => {
    const bags = [certBag(leaf), ...Array.from({ length: 4 }, () => shroudedKeyBag(leaf, aes(900_000n)))]
    const { reason, ms } = refusal(pfx([dataContent(bags)]))
    expect(reason).toMatch(/en total/)
    expect(ms).toBeLessThan(100)
  })

  test('a SHA-512 PRF counts for more: forge computes its 64-bit words with 32-bit halves', () => {
    const { reason, ms } = refusal(pfx([dataContent([certBag(leaf), shroudedKeyBag(leaf, aes(700_000n, 'sha512'))])]))
    expect(reason).toMatch(/en total/)
    expect(ms).toBeLessThan(100)
  })

  test('a wrong password on an honest file is still a wrong password', () => {
    const file = pfx([encryptedContent([certBag(leaf), shroudedKeyBag(leaf, aes())], aes())])
    expect(() => openPfx(file, 'otra')).toThrow(/contraseña/)
  })
})

describe('RSA keys', () => {
  /** openssl makes the key: node:crypto in Bun rounds a modulus length up or down to a multiple of 1 024 bits. */
  function opensslPfx(bits: number): Uint8Array {
    const dir = mkdtempSync(join(tmpdir(), 'timbre-rsa-'))
    try {
      const [key, cert, out] = ['key.pem', 'cert.pem', 'out.p12'].map((name) => join(dir, name)) as [string, string, string]
      const req = spawnSync('openssl', ['req', '-x509', '-newkey', `rsa:${bits}`, '-nodes', '-keyout', key, '-out', cert, '-days', '30', '-subj', '/CN=grande/serialNumber=12345678-5'])
      expect(req.status).toBe(0)
      const exp = spawnSync('openssl', ['pkcs12', '-export', '-inkey', key, '-in', cert, '-passout', `pass:${PASSWORD}`, '-out', out])
      expect(exp.status).toBe(0)
      return readFileSync(out)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  test('4 104 bits: refused, saying the size', () => {
    const { reason } = refusal(opensslPfx(4104))
    expect(reason).toMatch(/4104 bits/)
    expect(reason).toMatch(/4096/)
  })

  test('4 096 bits: opens', () => {
    const identity = makeCertificate({ rut: '07880442-4', issuer: testCa(), keyBits: 4096, serial: '1000' })
    expect(openPfx(exportPfx(identity, PASSWORD, '3des'), PASSWORD).rutFirmante).toBe('7880442-4')
  })
})
