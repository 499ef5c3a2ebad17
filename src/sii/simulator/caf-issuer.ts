// The simulator's CAF office: authorization files in the SII's exact layout (docs/sii-protocol.md §3.3; line layout copied from
// real SII files: one element per line, RNG and RSAPK on one line, a blank line before RSAPUBK), each with a fresh
// 512-bit e=3 folio key like the SII's, and FRMA signed by an authority key (the simulator's own under IDK 900,
// DESIGN §8; tests bring theirs). `parseCaf` + `verifyCaf` read these exactly as they read the SII's.
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { SIMULATOR_IDK } from '../../xml/authority-keys'
import type { PublicCaf } from '../../xml/caf'
import { escapeXmlText, toLatin1Bytes } from '../../xml/latin1'
import authorityPem from './authority-900.key.pem' with { type: 'text' }

/** What the DA of a new CAF says (xml/caf.ts PublicCaf's fields; `rut` is its RE), and the authority that signs it. */
export interface IssueCafInput extends Pick<PublicCaf, 'razonSocial' | 'tipoDte' | 'folioDesde' | 'folioHasta' | 'fechaAutorizacion' | 'idk'> {
  readonly rut: string
  readonly authorityPrivateKey: KeyObject
}

/** RS is cut to 40 characters, as the SII does (`…PLASTOCK LI` in a real file; TED XSD `RS` maxLength 40). */
const RS_MAX_CHARS = 40

/** A complete CAF file as text (every character ISO-8859-1; write it with `toLatin1Bytes`). */
export function issueCaf(input: IssueCafInput): string {
  checkInput(input)
  const folioKeys = generateKeyPairSync('rsa', { modulusLength: 512, publicExponent: 3 })
  const jwk = folioKeys.publicKey.export({ format: 'jwk' })
  const da = [
    `<RE>${input.rut}</RE>`,
    `<RS>${escapeXmlText(input.razonSocial.slice(0, RS_MAX_CHARS))}</RS>`,
    `<TD>${input.tipoDte}</TD>`,
    `<RNG><D>${input.folioDesde}</D><H>${input.folioHasta}</H></RNG>`,
    `<FA>${input.fechaAutorizacion}</FA>`,
    `<RSAPK><M>${fromBase64Url(jwk.n)}</M><E>${fromBase64Url(jwk.e)}</E></RSAPK>`,
    `<IDK>${input.idk}</IDK>`,
  ]
  // FRMA covers the flat DA as ISO-8859-1 bytes (docs/sii-protocol.md §3.4); the file shows it one element per line.
  const frma = sign('sha1', toLatin1Bytes(`<DA>${da.join('')}</DA>`), input.authorityPrivateKey).toString('base64')
  return [
    '<?xml version="1.0"?>',
    '<AUTORIZACION>',
    '<CAF version="1.0">',
    '<DA>',
    ...da,
    '</DA>',
    `<FRMA algoritmo="SHA1withRSA">${frma}</FRMA>`,
    '</CAF>',
    `<RSASK>${folioKeys.privateKey.export({ type: 'pkcs1', format: 'pem' })}</RSASK>`,
    '',
    `<RSAPUBK>${folioKeys.publicKey.export({ type: 'spki', format: 'pem' })}</RSAPUBK>`,
    '</AUTORIZACION>',
    '',
  ].join('\n')
}

let simulatorKey: KeyObject | undefined

/** The simulator's CAF-signing authority (IDK 900). A fake, committed key: it only ever signs simulated CAFs. */
/**
 * A CAF of the simulator's own authority (IDK 900, DESIGN §8) as the file's ISO-8859-1 bytes: CAF files are Latin-1
 * (docs/sii-protocol.md §3.3), so a razón social with ñ or accents is written as its Latin-1 bytes, not as UTF-8.
 */
export function simulatedCafFile(input: Omit<IssueCafInput, 'idk' | 'authorityPrivateKey'>): Uint8Array {
  return toLatin1Bytes(issueCaf({ ...input, idk: SIMULATOR_IDK, authorityPrivateKey: simulatorAuthorityKey() }))
}

export function simulatorAuthorityKey(): KeyObject {
  simulatorKey ??= createPrivateKey(authorityPem)
  return simulatorKey
}

function checkInput(input: IssueCafInput): void {
  if (!/^\d{1,8}-[\dK]$/.test(input.rut)) throw new RangeError(`issueCaf: rut must be canonical (12345678-K): ${input.rut}`)
  if (!/^\d{4}-\d{2}-\d{2}$/.test(input.fechaAutorizacion)) throw new RangeError('issueCaf: fechaAutorizacion must be YYYY-MM-DD')
  const folios = [input.folioDesde, input.folioHasta, input.tipoDte, input.idk]
  if (!folios.every((n) => Number.isSafeInteger(n) && n > 0)) throw new RangeError('issueCaf: tipoDte, folios and idk must be positive integers')
  if (input.folioDesde > input.folioHasta) throw new RangeError('issueCaf: folioDesde > folioHasta')
  if (input.razonSocial.trim() === '') throw new RangeError('issueCaf: razonSocial is empty')
  toLatin1Bytes(input.razonSocial)  // throws on characters the CAF cannot carry
}

function fromBase64Url(value: string | undefined): string {
  if (value === undefined) throw new Error('issueCaf: RSA key without n/e')
  return Buffer.from(value, 'base64url').toString('base64')
}
