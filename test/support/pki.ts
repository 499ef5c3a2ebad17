// Test PKI with real keys: signing certificates carrying the signer RUT as otherName 1.3.6.1.4.1.8321.1 (docs/sii-protocol.md
// §10), PKCS#12 files in the three encryptions Timbre must open, and CAFs issued by an authority key playing the SII.
// Keys are memoized per process: RSA-2048 generation is ~150 ms, the rest is cheap.
import { spawnSync } from 'node:child_process'
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import forge from 'node-forge'
import { issueCaf, simulatorAuthorityKey, type IssueCafInput } from '../../src/sii/simulator/caf-issuer'
import { authorityKeys, SIMULATOR_IDK } from '../../src/xml/authority-keys'
import { parseCaf, type Caf } from '../../src/xml/caf'
import { toLatin1Bytes } from '../../src/xml/latin1'
import type { Signer } from '../../src/domain/signer'

const keyCache = new Map<string, KeyObject>()

/** An RSA private key, the same one for the same (bits, slot) for the whole process. */
export function rsaKey(bits = 2048, slot = 0): KeyObject {
  const id = `${bits}/${slot}`
  let key = keyCache.get(id)
  if (key === undefined) {
    key = generateKeyPairSync('rsa', { modulusLength: bits }).privateKey
    keyCache.set(id, key)
  }
  return key
}

export interface TestIdentity {
  readonly privateKey: KeyObject
  readonly privateKeyPem: string
  readonly certificatePem: string
  readonly certificateDer: Buffer
  /** What signDte takes, built directly (no PFX round trip). */
  readonly signer: Signer
  readonly forgeCertificate: forge.pki.Certificate
}

export interface CertificateOptions {
  /** otherName 1.3.6.1.4.1.8321.1 text, as a CA writes it (leading zeros allowed: `07880442-4`); null: none. */
  readonly rut?: string | null
  /** Subject serialNumber attribute (the fallback RUT source). */
  readonly serialNumberAttribute?: string
  readonly commonName?: string
  readonly notBefore?: Date
  readonly notAfter?: Date
  /** Signed by this CA; self-signed when absent. */
  readonly issuer?: TestIdentity
  readonly isCa?: boolean
  readonly keyBits?: number
  readonly keySlot?: number
  readonly serial?: string
}

/** An X.509 v3 certificate made with forge (which cannot encode otherName: that extension's DER is built by hand). */
export function makeCertificate(opts: CertificateOptions = {}): TestIdentity {
  const privateKey = rsaKey(opts.keyBits ?? 2048, opts.keySlot ?? 0)
  const privateKeyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()
  const cert = forge.pki.createCertificate()
  cert.publicKey = forge.pki.publicKeyFromPem(createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString())
  cert.serialNumber = opts.serial ?? '0a1b2c3d'
  cert.validity.notBefore = opts.notBefore ?? new Date('2024-01-01T00:00:00Z')
  cert.validity.notAfter = opts.notAfter ?? new Date('2049-12-31T23:59:59Z')
  const subject = subjectAttributes(opts)
  cert.setSubject(subject)
  cert.setIssuer(opts.issuer ? opts.issuer.forgeCertificate.subject.attributes : subject)
  cert.setExtensions(extensions(opts))
  const signingKeyPem = opts.issuer ? opts.issuer.privateKeyPem : privateKeyPem
  cert.sign(forge.pki.privateKeyFromPem(signingKeyPem), forge.md.sha256.create())
  const certificateDer = Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes(), 'binary')
  return {
    privateKey,
    privateKeyPem,
    certificatePem: forge.pki.certificateToPem(cert),
    certificateDer,
    signer: signerOf(privateKey, certificateDer),
    forgeCertificate: cert,
  }
}

let ca: TestIdentity | undefined

/** A test certification authority (memoized), to make CA-signed leaves and PFX files that carry a chain. */
export function testCa(): TestIdentity {
  ca ??= makeCertificate({ commonName: 'Timbre Test CA', rut: null, isCa: true, keySlot: 99, serial: '01' })
  return ca
}

/** Signer fields from a key and its certificate, as `openPfx` would produce them. */
export function signerOf(privateKey: KeyObject, certificateDer: Buffer): Signer {
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' })
  return {
    privateKey,
    certificateDerBase64: certificateDer.toString('base64'),
    modulusBase64: Buffer.from(jwk.n ?? '', 'base64url').toString('base64'),
    exponentBase64: Buffer.from(jwk.e ?? '', 'base64url').toString('base64'),
  }
}

function subjectAttributes(opts: CertificateOptions): forge.pki.CertificateField[] {
  const attrs: forge.pki.CertificateField[] = [
    { shortName: 'C', value: 'CL' },
    { shortName: 'O', value: 'Timbre Pruebas' },
    { shortName: 'CN', value: opts.commonName ?? 'Juan Pérez Soto' },
  ]
  if (opts.serialNumberAttribute !== undefined) attrs.push({ name: 'serialNumber', value: opts.serialNumberAttribute })
  return attrs
}

function extensions(opts: CertificateOptions): object[] {
  const list: object[] = [{ name: 'basicConstraints', cA: opts.isCa === true }]
  if (opts.isCa === true) {
    list.push({ name: 'keyUsage', keyCertSign: true, cRLSign: true })
  } else {
    list.push({ name: 'keyUsage', digitalSignature: true, nonRepudiation: true, keyEncipherment: true })
  }
  const rut = opts.rut === undefined ? '12345678-5' : opts.rut
  if (rut !== null) list.push({ id: '2.5.29.17', value: otherNameSanDer(rut) })
  return list
}

/**
 * subjectAltName = SEQUENCE { [0] otherName { OID 1.3.6.1.4.1.8321.1, [0] EXPLICIT IA5String rut } }, the DER of the
 * SII's own example: `30 1A A0 18 06 08 2B 06 01 04 01 C1 01 01 A0 0C 16 0A "07880442-4"` (docs/sii-protocol.md §10).
 */
export function otherNameSanDer(rut: string): string {
  const { asn1 } = forge
  const san = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer('1.3.6.1.4.1.8321.1').getBytes()),
      asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [asn1.create(asn1.Class.UNIVERSAL, asn1.Type.IA5STRING, false, rut)]),
    ]),
  ])
  return asn1.toDer(san).getBytes()
}

export type PfxEncryption = '3des' | 'aes256' | 'rc2-legacy'

/** Whether this machine's `openssl` can write `-legacy` (RC2-40) PKCS#12; the reason when it cannot. */
export function legacyPfxSupport(): { readonly isSupported: boolean; readonly reason: string } {
  const probe = spawnSync('openssl', ['list', '-providers', '-provider', 'legacy'], { encoding: 'utf8' })
  if (probe.error !== undefined) return { isSupported: false, reason: `openssl not runnable: ${probe.error.message}` }
  if (probe.status !== 0) return { isSupported: false, reason: `openssl has no legacy provider: ${probe.stderr.trim()}` }
  return { isSupported: true, reason: '' }
}

/**
 * The identity as a PKCS#12 file: `3des` by forge (pbeWithSHAAnd3-KeyTripleDES-CBC), `aes256` by `openssl pkcs12
 * -export` (OpenSSL 3 default: PBES2/PBKDF2/AES-256-CBC, MAC SHA-256), `rc2-legacy` by `openssl … -legacy`
 * (pbeWithSHA1And40BitRC2-CBC for the certificates, as old Windows exports). `chain` adds CA certificates.
 */
export function exportPfx(identity: TestIdentity, password: string, encryption: PfxEncryption, chain: readonly TestIdentity[] = []): Uint8Array {
  if (encryption === '3des') {
    const key = forge.pki.privateKeyFromPem(identity.privateKeyPem)
    const certs = [identity.forgeCertificate, ...chain.map((c) => c.forgeCertificate)]
    const p12 = forge.pkcs12.toPkcs12Asn1(key, certs, password, { algorithm: '3des' })
    return Buffer.from(forge.asn1.toDer(p12).getBytes(), 'binary')
  }
  return opensslPfx(identity, password, encryption === 'rc2-legacy', chain)
}

function opensslPfx(identity: TestIdentity, password: string, isLegacy: boolean, chain: readonly TestIdentity[]): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), 'timbre-pfx-'))
  try {
    writeFileSync(join(dir, 'key.pem'), identity.privateKeyPem, { mode: 0o600 })
    writeFileSync(join(dir, 'cert.pem'), identity.certificatePem)
    const args = ['pkcs12', '-export', '-inkey', join(dir, 'key.pem'), '-in', join(dir, 'cert.pem'), '-passout', 'env:TIMBRE_PFX_PASSWORD', '-out', join(dir, 'out.p12')]
    if (chain.length > 0) {
      writeFileSync(join(dir, 'chain.pem'), chain.map((c) => c.certificatePem).join(''))
      args.push('-certfile', join(dir, 'chain.pem'))
    }
    if (isLegacy) args.push('-legacy')
    const run = spawnSync('openssl', args, { encoding: 'utf8', env: { ...process.env, TIMBRE_PFX_PASSWORD: password } })
    if (run.status !== 0) throw new Error(`openssl pkcs12 failed: ${run.stderr}`)
    return readFileSync(join(dir, 'out.p12'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export interface CafAuthority {
  readonly idk: number
  readonly privateKey: KeyObject
  readonly publicKey: KeyObject
  /** The map `verifyCaf` takes, holding only this authority. */
  readonly keys: ReadonlyMap<number, KeyObject>
}

let freshAuthority: CafAuthority | undefined

/** A test authority playing the SII under IDK 100, with a fresh key (not the SII's, not the simulator's). */
export function testCafAuthority(): CafAuthority {
  if (freshAuthority === undefined) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 })
    freshAuthority = { idk: 100, privateKey, publicKey, keys: new Map([[100, publicKey]]) }
  }
  return freshAuthority
}

/** The built-in simulator's authority (IDK 900): its CAFs pass `verifyCaf` with `authorityKeys({ allowSimulator: true })`. */
export function simulatorCafAuthority(): CafAuthority {
  const privateKey = simulatorAuthorityKey()
  const publicKey = createPublicKey(privateKey)
  return { idk: SIMULATOR_IDK, privateKey, publicKey, keys: authorityKeys({ allowSimulator: true }) }
}

export interface TestCaf {
  /** The file as text (ISO-8859-1 characters). */
  readonly xml: string
  /** The file's bytes, as an upload carries them. */
  readonly bytes: Uint8Array
  readonly caf: Caf
  readonly authority: CafAuthority
}

export type TestCafOptions = Partial<Omit<IssueCafInput, 'authorityPrivateKey' | 'idk'>> & { readonly authority?: CafAuthority }

/** A real CAF (fresh 512-bit folio key) for 76543210-3, tipo 33, folios 1–100, signed by the simulator's authority by default. */
export function makeTestCaf(opts: TestCafOptions = {}): TestCaf {
  const authority = opts.authority ?? simulatorCafAuthority()
  const xml = issueCaf({
    rut: opts.rut ?? '76543210-3',
    razonSocial: opts.razonSocial ?? 'Comercializadora Ñandú Limitada',
    tipoDte: opts.tipoDte ?? 33,
    folioDesde: opts.folioDesde ?? 1,
    folioHasta: opts.folioHasta ?? 100,
    fechaAutorizacion: opts.fechaAutorizacion ?? '2026-01-05',
    idk: authority.idk,
    authorityPrivateKey: authority.privateKey,
  })
  const bytes = toLatin1Bytes(xml)
  return { xml, bytes, caf: parseCaf(bytes), authority }
}
