// The public keys that sign CAFs, by IDK (docs/sii-protocol.md §3.3–3.4, DESIGN §8). 100 and 300 are the SII's own
// keys: ./authority/ holds byte-exact copies of the certificates the SII published, the same bytes as
// test/fixtures/sii/sii-certs/ (a test compares them), embedded in the binary (DESIGN §9: no key file is read at
// run time). 900 is the built-in simulator's authority, accepted only when the target is not the real SII, so a
// simulated CAF can never pass for a real one.
import { createPublicKey, type KeyObject } from 'node:crypto'
import idk100 from './authority/idk-100.cer' with { type: 'text' }
import idk300 from './authority/idk-300.cer' with { type: 'text' }
import idk900 from './authority/idk-900.pub.pem' with { type: 'text' }

/** IDK of the simulator's CAFs (DESIGN §8: a certificación-only number the SII does not use). */
export const SIMULATOR_IDK = 900

/** `ambiente` each IDK belongs to (docs/sii-protocol.md §3.3: 100 maullin/certificación, 300 palena/producción). */
export const IDK_AMBIENTE: Readonly<Record<number, 'certificacion' | 'produccion'>> = {
  100: 'certificacion',
  300: 'produccion',
  [SIMULATOR_IDK]: 'certificacion',
}

let siiKeys: ReadonlyMap<number, KeyObject> | undefined
let allKeys: ReadonlyMap<number, KeyObject> | undefined

/** The CAF-signing keys Timbre trusts; IDK 900 only when `allowSimulator` (`--sii simulado`, an origin, the demo). */
export function authorityKeys(opts: { readonly allowSimulator: boolean }): ReadonlyMap<number, KeyObject> {
  siiKeys ??= new Map([
    [100, publicKeyOfCertificate(idk100)],
    [300, publicKeyOfCertificate(idk300)],
  ])
  if (!opts.allowSimulator) return siiKeys
  allKeys ??= new Map([...siiKeys, [SIMULATOR_IDK, createPublicKey(idk900)]])
  return allKeys
}

/**
 * The public key of a PEM certificate, read from the DER by hand: the SII's 2003 certificates carry version 3 (out of
 * range), which BoringSSL's X509 parser, hence node:crypto in Bun, rejects with INVALID_VERSION
 * (test/fixtures/sii/README.md).
 */
export function publicKeyOfCertificate(pem: string): KeyObject {
  const der = Buffer.from(pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ''), 'base64')
  return createPublicKey({ key: subjectPublicKeyInfo(der), format: 'der', type: 'spki' })
}

interface DerNode {
  readonly tag: number
  readonly start: number  // first byte of the header
  readonly contentStart: number
  readonly end: number  // one past the last content byte
}

/** Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version?, serial, signature, issuer, validity, subject, spki, … } } */
function subjectPublicKeyInfo(der: Buffer): Buffer {
  const certificate = readDer(der, 0)
  const tbs = readDer(der, certificate.contentStart)
  let field = readDer(der, tbs.contentStart)
  const fieldsBeforeSpki = field.tag === 0xa0 ? 6 : 5  // the explicit [0] version is optional (v1 certificates)
  for (let i = 0; i < fieldsBeforeSpki; i++) field = readDer(der, field.end)
  if (field.tag !== 0x30) throw new Error('certificate: subjectPublicKeyInfo not found')
  return der.subarray(field.start, field.end)
}

function readDer(der: Buffer, start: number): DerNode {
  const tag = der[start]
  let length = der[start + 1]
  if (tag === undefined || length === undefined) throw new Error('certificate: truncated DER')
  let contentStart = start + 2
  if (length & 0x80) {
    const octets = length & 0x7f
    length = 0
    for (let i = 0; i < octets; i++) length = length * 256 + (der[contentStart + i] ?? 0)
    contentStart += octets
  }
  const end = contentStart + length
  if (end > der.length) throw new Error('certificate: truncated DER')
  return { tag, start, contentStart, end }
}
