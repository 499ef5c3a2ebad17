// Seed → signed seed → token (docs/sii-protocol.md §6.3), for both channels: SOAP (CrSeed/GetTokenFromSeed) and the boleta REST
// API (§7.3). A seed serves one token request, within 2 minutes, on the channel that issued it; tokens of one channel
// are unknown to the other (§7.3: "this token is distinct from the SOAP one").
import { randomBytes } from 'node:crypto'
import { childElements, parseXml, textOf } from '../../xml/latin1'
import { verifyXmlSignatures } from '../../xml/signature'
import { holdsKey } from './certificate'
import type { Channel, SimulatorStore } from './store'
import { DSIG_NS } from '../../xml/dsig-profile'
import { keyValueOf } from '../../xml/signature'
import { certificateOf } from './xmldsig'

/** docs/sii-protocol.md §6.3, §6.8: "Seeds expire in 2 minutes". */
export const SEED_TTL_MS = 2 * 60_000

/**
 * The SII does not publish a token lifetime (docs/sii-protocol.md §6.3). The simulator's: one hour from its creation, so a
 * client that keeps a token until it fails (DESIGN §6) meets an expired one in long runs and must renew it.
 */
export const TOKEN_TTL_MS = 60 * 60_000

/** A new 12-digit, zero-padded seed (docs/sii-protocol.md §6.3: `000000000078`). */
export function issueSeed(store: SimulatorStore, channel: Channel, now: Date): string {
  const seed = String(store.next('seed')).padStart(12, '0')
  store.insertSeed(seed, channel, now.getTime())
  return seed
}

export interface TokenOutcome {
  /** RESP_HDR/ESTADO: `00` created, else the §6.3 error code. */
  readonly estado: string
  readonly glosa: string
  readonly token: string | null
}

/**
 * Checks the signed `<getToken><item><Semilla>…</Semilla></item><Signature/></getToken>` (docs/sii-protocol.md §6.3) and, when
 * it passes, issues a token for the certificate's holder. Codes: 01 empty input, 02 not XML, 04 no Signature,
 * 06 no Semilla, 11 no certificate, 05 the signature does not verify (or does not cover the seed), 21 the
 * RSAKeyValue is not the certificate's key, -07 the certificate names no RUT or is outside its validity,
 * 08 the seed does not exist (or belongs to the other channel), was already used, or is older than 2 minutes.
 */
export function issueToken(store: SimulatorStore, channel: Channel, pszXml: string, now: Date): TokenOutcome {
  const fail = (estado: string, glosa: string): TokenOutcome => ({ estado, glosa, token: null })
  if (pszXml.trim() === '') return fail('01', 'Error de Entrada: XML vacío')
  let doc: Document
  try {
    doc = parseXml(pszXml.trim())
  } catch (err) {
    return fail('02', `Error de Parseo (SAXException): ${err instanceof Error ? err.message : String(err)}`)
  }
  const signature = doc.getElementsByTagNameNS(DSIG_NS, 'Signature').item(0)
  if (signature === null) return fail('04', 'Error: no existe el elemento Signature')
  const semilla = findSemilla(doc.documentElement)
  if (semilla === null) return fail('06', 'Error: no existe el elemento Semilla')
  const certificate = certificateOf(signature)
  if (certificate === null) return fail('11', 'Error: no existe el elemento Certificate (X509Certificate)')
  const signatureProblem = checkSignature(pszXml.trim(), semilla)
  if (signatureProblem !== null) return fail('05', `Error: Firma no válida (${signatureProblem})`)
  if (!holdsKey(certificate, keyValueOf(signature))) return fail('21', 'Error: Firma no válida, la llave pública no corresponde al certificado')
  if (certificate.rut === null) return fail('-07', 'Error de validación de RUT: el certificado no indica el RUT de su titular')
  if (now < certificate.notBefore || now > certificate.notAfter) return fail('-07', 'Error de validación: certificado fuera de su vigencia')
  const seedProblem = useSeed(store, channel, textOf(semilla).trim(), now)
  if (seedProblem !== null) return fail('08', seedProblem)
  const token = newToken()
  store.insertToken({ token, channel, rut: certificate.rut, created_at: now.getTime() })
  return { estado: '00', glosa: 'Token Creado', token }
}

export type TokenCheck =
  | { readonly isValid: true; readonly rut: string }
  | { readonly isValid: false; readonly reason: 'missing' | 'unknown' | 'expired' }

/** A token presented with a request (Cookie `TOKEN=` or the `Token` parameter, docs/sii-protocol.md §6.3 step 4). */
export function checkToken(store: SimulatorStore, channel: Channel, token: string | null, now: Date): TokenCheck {
  if (token === null || token.trim() === '') return { isValid: false, reason: 'missing' }
  const row = store.findToken(token.trim())
  if (row === null || row.channel !== channel) return { isValid: false, reason: 'unknown' }
  if (now.getTime() - row.created_at > TOKEN_TTL_MS) return { isValid: false, reason: 'expired' }
  return { isValid: true, rut: row.rut }
}

/** `TOKEN` from a Cookie header (docs/sii-protocol.md §6.3 step 4, §6.4, §7.3). */
export function tokenFromCookie(cookie: string | null): string | null {
  for (const part of (cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=')
    if (name === 'TOKEN') return value.join('=')
  }
  return null
}

function findSemilla(root: Element): Element | null {
  if (root.localName === 'Semilla') return root
  for (const child of childElements(root)) {
    if (child.localName === 'Signature') continue
    const found = findSemilla(child)
    if (found !== null) return found
  }
  return null
}

/**
 * The manual's form signs the whole document (`URI=""` + enveloped-signature); a reference to the ID of an element
 * that holds the Semilla also covers it (DSPY's REST variant, docs/sii-protocol.md §6.3). Anything else would leave the seed
 * unsigned, so it is refused even if its digest verifies.
 */
function checkSignature(xml: string, semilla: Element): string | null {
  const checks = verifyXmlSignatures(xml, { requireCertificateMatch: false })
  const check = checks[0]
  if (checks.length !== 1 || check === undefined) return 'se espera exactamente una firma'
  if (!check.isValid) return check.reason ?? 'firma inválida'
  if (check.uri === '') return null
  for (let node: Node | null = semilla; node !== null && node.nodeType === 1; node = node.parentNode) {
    const ids = ['ID', 'Id', 'id'].map((name) => (node as Element).getAttribute(name)).filter((id) => id)
    if (ids.some((id) => check.uri === `#${id}`)) return null
  }
  return `la firma (URI "${check.uri}") no cubre la Semilla`
}

/** Marks the seed used; the §6.3 code-08 message when it cannot be. */
function useSeed(store: SimulatorStore, channel: Channel, text: string, now: Date): string | null {
  const seed = /^\d{1,12}$/.test(text) ? text.padStart(12, '0') : text
  const row = store.findSeed(seed)
  if (row === null || row.channel !== channel) return 'Error: NO Existe SEED'
  if (row.used_at !== null) return 'Error: SEED ya utilizado'
  if (now.getTime() - row.created_at > SEED_TTL_MS) return 'Error: TIME-OUT DEL SEED'
  return store.useSeed(seed, now.getTime()) ? null : 'Error: SEED ya utilizado'
}

/** 13 characters like the SII's (`XAuSbYXiNh9Ik`, docs/sii-protocol.md §6.2), from a CSPRNG: a token is a credential. */
function newToken(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
  return [...randomBytes(13)].map((b) => alphabet[b % alphabet.length]).join('')
}
