// The demo company's signing certificate (DESIGN §10): a self-signed PKCS#12 made on first start. node:crypto cannot
// write X.509 certificates nor PKCS#12 files, so node-forge builds them; signing still goes through KeyObjects.
import { generateKeyPairSync } from 'node:crypto'
import forge from 'node-forge'

/**
 * A PKCS#12 with a 2048-bit key and a certificate valid from yesterday for `validDays`, whose holder RUT is in the
 * subject serialNumber (docs/sii-protocol.md §10's fallback when there is no otherName: enough for the demo, which never reaches
 * the real SII).
 */
export function makeDemoPfx(input: { rutFirmante: string; nombre: string; password: string; now: Date; validDays: number }): Uint8Array {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const cert = forge.pki.createCertificate()
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString())
  cert.serialNumber = `01${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex')}`
  cert.validity.notBefore = new Date(input.now.getTime() - 86_400_000)
  cert.validity.notAfter = new Date(input.now.getTime() + input.validDays * 86_400_000)
  const subject = [
    { name: 'commonName', value: input.nombre },
    { name: 'serialNumber', value: input.rutFirmante },
    { name: 'organizationName', value: 'Timbre demo (sin validez tributaria)' },
    { name: 'countryName', value: 'CL' },
  ]
  cert.setSubject(subject)
  cert.setIssuer(subject)
  cert.setExtensions([{ name: 'basicConstraints', cA: false }, { name: 'keyUsage', digitalSignature: true, nonRepudiation: true }])
  const forgeKey = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString())
  cert.sign(forgeKey, forge.md.sha256.create())
  const p12 = forge.pkcs12.toPkcs12Asn1(forgeKey, [cert], input.password, { algorithm: '3des' })
  return Buffer.from(forge.asn1.toDer(p12).getBytes(), 'binary')
}
