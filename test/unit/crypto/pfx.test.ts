import { describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { createPublicKey, sign, verify, X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import forge from 'node-forge'
import { assertUsable, openPfx, type Certificado } from '../../../src/crypto/pfx'
import { TimbreError } from '../../../src/errors'
import type { Signer } from '../../../src/domain/signer'
import { signDte, verifyXmlSignatures } from '../../../src/xml/signature'
import { exportPfx, legacyPfxSupport, makeCertificate, otherNameSanDer, testCa, type PfxEncryption } from '../../support/pki'

const PASSWORD = 'Clave Secreta 2026!'
const leaf = makeCertificate({ rut: '07880442-4', commonName: 'Wilibaldo González Cabrera', issuer: testCa(), serial: '0100a7' })
const legacy = legacyPfxSupport()
if (!legacy.isSupported) console.log(`skipping the RC2-40 (-legacy) PKCS#12 variant: ${legacy.reason}`)

function expectInvalidCertificate(fn: () => unknown, reason: RegExp): void {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(TimbreError)
    expect((err as TimbreError).code).toBe('INVALID_CERTIFICATE')
    expect((err as TimbreError).message).toMatch(reason)
    return
  }
  throw new Error('expected INVALID_CERTIFICATE')
}

function opensslInfo(pfx: Uint8Array, isLegacy: boolean): string {
  const args = ['pkcs12', '-info', '-noout', '-passin', `pass:${PASSWORD}`, ...(isLegacy ? ['-legacy'] : [])]
  const run = spawnSync('openssl', args, { input: pfx, encoding: 'utf8' })
  return `${run.stdout}${run.stderr}`
}

describe.each([
  ['3des', 'pbeWithSHA1And3-KeyTripleDES-CBC'],
  ['aes256', 'PBES2, PBKDF2, AES-256-CBC'],
  ['rc2-legacy', 'pbeWithSHA1And40BitRC2-CBC'],
] as const)('openPfx on a %s PKCS#12', (encryption: PfxEncryption, opensslSays: string) => {
  const isSkipped = encryption === 'rc2-legacy' && !legacy.isSupported
  const pfx = isSkipped ? new Uint8Array() : exportPfx(leaf, PASSWORD, encryption, [testCa()])

  test.skipIf(isSkipped)(`is really ${opensslSays} (openssl pkcs12 -info)`, () => {
    expect(opensslInfo(pfx, encryption === 'rc2-legacy')).toContain(opensslSays)
  })

  test.skipIf(isSkipped)('gives the signer RUT from otherName without leading zeros, the CN, validity and serial', () => {
    const cert = openPfx(pfx, PASSWORD)
    expect(cert).toMatchObject({
      rutFirmante: '7880442-4',
      subjectCn: 'Wilibaldo González Cabrera',
      serialNumber: '0100a7',
      notBefore: new Date('2024-01-01T00:00:00Z'),
      notAfter: new Date('2049-12-31T23:59:59Z'),
    })
  })

  test.skipIf(isSkipped)('picks the leaf, not the CA that travels with it, and gives its DER byte for byte', () => {
    const { signer } = openPfx(pfx, PASSWORD)
    expect(Buffer.from(signer.certificateDerBase64, 'base64').equals(leaf.certificateDer)).toBe(true)
    expect(signer.modulusBase64).toBe(leaf.signer.modulusBase64)
    expect(signer.exponentBase64).toBe('AQAB')
  })

  test.skipIf(isSkipped)('the node:crypto private key signs what the certificate key verifies', () => {
    const { signer } = openPfx(pfx, PASSWORD)
    const data = Buffer.from('timbre')
    const cert = new X509Certificate(Buffer.from(signer.certificateDerBase64, 'base64'))
    expect(signer.privateKey.type).toBe('private')
    expect(verify('sha1', data, cert.publicKey, sign('sha1', data, signer.privateKey))).toBe(true)
  })

  test.skipIf(isSkipped)('a wrong password is INVALID_CERTIFICATE, saying so', () => {
    expectInvalidCertificate(() => openPfx(pfx, 'otra clave'), /contraseña/)
  })
})

describe('the signer RUT (docs/sii-protocol.md §10)', () => {
  test.each([
    ['otherName with dots and zeros', { rut: '07.880.442-4' }, '7880442-4'],
    ['otherName with a lowercase k', { rut: '96874030-k' }, '96874030-K'],
    ['no otherName: the subject serialNumber', { rut: null, serialNumberAttribute: '12.345.678-5' }, '12345678-5'],
    ['otherName wins over serialNumber', { rut: '7880442-4', serialNumberAttribute: '12345678-5' }, '7880442-4'],
    ['an otherName that is not a RUT falls back to serialNumber', { rut: 'no-es-un-rut', serialNumberAttribute: 'RUT 12345678-5' }, '12345678-5'],
  ])('%s', (_, opts, expected) => {
    const pfx = exportPfx(makeCertificate({ ...opts, keySlot: 1 }), PASSWORD, '3des')
    expect(openPfx(pfx, PASSWORD).rutFirmante).toBe(expected)
  })

  test('neither otherName nor serialNumber: INVALID_CERTIFICATE', () => {
    const pfx = exportPfx(makeCertificate({ rut: null, keySlot: 1 }), PASSWORD, '3des')
    expectInvalidCertificate(() => openPfx(pfx, PASSWORD), /RUT/)
  })

  test('the hand-built extension is the DER of the SII example (30 1A A0 18 06 08 2B 06 01 04 01 C1 01 01 A0 0C 16 0A …)', () => {
    expect(Buffer.from(otherNameSanDer('07880442-4'), 'binary').toString('hex')).toBe(`301aa01806082b06010401c10101a00c160a${Buffer.from('07880442-4').toString('hex')}`)
  })

  test('openssl reads the test certificate’s otherName the same way', () => {
    const text = spawnSync('openssl', ['x509', '-noout', '-ext', 'subjectAltName'], { input: leaf.certificatePem, encoding: 'utf8' }).stdout
    expect(text).toContain('othername: 1.3.6.1.4.1.8321.1::07880442-4')
  })
})

describe('openPfx refuses', () => {
  test.each([
    ['an empty file', new Uint8Array()],
    ['random bytes', new Uint8Array(Array.from({ length: 512 }, (_, i) => (i * 73 + 11) % 256))],
    ['a PEM certificate', new TextEncoder().encode(leaf.certificatePem)],
    ['a DER certificate (valid ASN.1, not PKCS#12)', leaf.certificateDer],
    ['a truncated PKCS#12', exportPfx(leaf, PASSWORD, '3des').subarray(0, 700)],
  ])('%s: not PKCS#12', (_, bytes) => {
    expectInvalidCertificate(() => openPfx(bytes, PASSWORD), /PKCS#12/)
  })

  test('a wrong password on an AES file', () => {
    expectInvalidCertificate(() => openPfx(exportPfx(leaf, PASSWORD, 'aes256'), ''), /contraseña/)
  })

  test('an EC key (the SII profile signs with RSA only)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'timbre-ec-'))
    try {
      const key = join(dir, 'key.pem')
      const cert = join(dir, 'cert.pem')
      const out = join(dir, 'ec.p12')
      const req = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '30', '-subj', '/CN=ec/serialNumber=12345678-5'])
      expect(req.status).toBe(0)
      const exp = spawnSync('openssl', ['pkcs12', '-export', '-inkey', key, '-in', cert, '-passout', `pass:${PASSWORD}`, '-out', out])
      expect(exp.status).toBe(0)
      expectInvalidCertificate(() => openPfx(readFileSync(out), PASSWORD), /RSA/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a file whose certificate is not the key’s', () => {
    const other = makeCertificate({ keySlot: 2 })
    const key = forge.pki.privateKeyFromPem(leaf.privateKeyPem)
    const p12 = forge.pkcs12.toPkcs12Asn1(key, [other.forgeCertificate], PASSWORD, { algorithm: '3des' })
    const bytes = Buffer.from(forge.asn1.toDer(p12).getBytes(), 'binary')
    expectInvalidCertificate(() => openPfx(bytes, PASSWORD), /certificado de su llave/)
  })

  test('a file with a certificate and no key', () => {
    const p12 = forge.pkcs12.toPkcs12Asn1(null, [leaf.forgeCertificate], PASSWORD, { algorithm: '3des' })
    const bytes = Buffer.from(forge.asn1.toDer(p12).getBytes(), 'binary')
    expectInvalidCertificate(() => openPfx(bytes, PASSWORD), /llave privada/)
  })
})

describe('assertUsable', () => {
  const expired = makeCertificate({ notBefore: new Date('2020-01-01T00:00:00Z'), notAfter: new Date('2025-06-30T23:59:59Z'), keySlot: 1 })
  const cert: Certificado = openPfx(exportPfx(expired, PASSWORD, '3des'), PASSWORD)

  test('an expired certificate still opens (its status is shown), but cannot sign', () => {
    expect(cert.notAfter).toEqual(new Date('2025-06-30T23:59:59Z'))
    expectInvalidCertificate(() => assertUsable(cert, new Date('2025-07-01T00:00:00Z')), /venció el 2025-06-30/)
  })

  test('not yet valid', () => {
    expectInvalidCertificate(() => assertUsable(cert, new Date('2019-12-31T23:59:59Z')), /aún no es válido/)
  })

  test('usable inside its validity, both ends included', () => {
    expect(() => assertUsable(cert, new Date('2020-01-01T00:00:00Z'))).not.toThrow()
    expect(() => assertUsable(cert, new Date('2025-06-30T23:59:59Z'))).not.toThrow()
  })
})

test('the Signer openPfx returns is the Signer signDte takes, and its signature verifies', () => {
  const signer: Signer = openPfx(exportPfx(leaf, PASSWORD, 'aes256'), PASSWORD).signer
  const dte = '<DTE version="1.0"><Documento ID="F1T33"><Encabezado/></Documento></DTE>'
  expect(verifyXmlSignatures(signDte(dte, signer))).toEqual([{ uri: '#F1T33', isValid: true }])
  expect(createPublicKey(signer.privateKey).equals(new X509Certificate(leaf.certificateDer).publicKey)).toBe(true)
})
