// Looking for a secret in bytes, whatever its encoding: a private key as DER, PEM, base64 or base64url at any offset, hex,
// or inside a JSON string (escaped newlines); a password or key as text. Used by secrets.test.ts on the database, its
// WAL, the logs, a backup archive and every API answer.
import { createPrivateKey, type KeyObject } from 'node:crypto'

export interface Secret {
  /** What it is, for failure messages: "CAF private key (RSASK)". */
  readonly name: string
  /** Found verbatim in the raw bytes (binary forms: DER integers, raw key bytes). */
  readonly raw: readonly Buffer[]
  /** Found in the bytes read as text with whitespace and escaped line breaks removed (PEM, base64, hex, passwords). */
  readonly text: readonly string[]
}

/** A text secret (password, API key, webhook secret): the string itself, nothing else. */
export function textSecret(name: string, value: string): Secret {
  return { name, raw: [], text: [value] }
}

/**
 * A private RSA key in any encoding: every encoding of it (PKCS#1, PKCS#8, PKCS#12 without a password, JWK, XML's
 * RSASK) carries the private exponent d, so d is what is looked for: its bytes, its hex, and 40 characters of its
 * base64 and base64url at each of the three byte alignments it can have inside a longer base64 text.
 */
export function privateKeySecret(name: string, key: KeyObject | string): Secret {
  const k = typeof key === 'string' ? createPrivateKey(key) : key
  const d = Buffer.from(k.export({ format: 'jwk' }).d as string, 'base64url')
  const text: string[] = [d.toString('hex').slice(0, 64), d.toString('hex').slice(0, 64).toUpperCase()]
  for (const shift of [0, 1, 2]) {
    // Past the first 3-byte group the characters depend only on d's bytes, not on what came before them.
    const b64 = Buffer.concat([Buffer.alloc(shift), d]).toString('base64').slice(4, 44)
    text.push(b64, b64.replaceAll('+', '-').replaceAll('/', '_'))
  }
  return { name, raw: [d.subarray(0, 32)], text }
}

/** Bytes as text with line breaks removed: PEM wraps every 64 characters, JSON writes \n, XML may write &#10;. */
function flattened(bytes: Buffer): string {
  return bytes.toString('latin1').replace(/\\[rn]|&#1[03];|[\r\n\t ]/g, '')
}

/** Which of `secrets` appear in `bytes`, by name. */
export function secretsIn(bytes: Buffer | string, secrets: readonly Secret[]): string[] {
  const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes
  const text = flattened(buf)
  return secrets.filter((s) => s.raw.some((r) => buf.includes(r)) || s.text.some((t) => text.includes(t))).map((s) => s.name)
}

/** The entries of a .tar.gz (ustar): name → bytes. Enough for the archives `timbre backup` writes. */
export function untarGz(archive: Buffer): Map<string, Buffer> {
  const tar = Buffer.from(Bun.gunzipSync(new Uint8Array(archive)))
  const entries = new Map<string, Buffer>()
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512)
    if (header.every((b) => b === 0)) break
    const field = (from: number, to: number) => header.subarray(from, to).toString('latin1').replace(/\0.*$/s, '')
    const name = [field(345, 500), field(0, 100)].filter(Boolean).join('/')
    const size = Number.parseInt(field(124, 136).trim() || '0', 8)
    const type = field(156, 157)
    // Pax and GNU long-name headers describe the next entry; only file contents matter here.
    if (type === '0' || type === '') entries.set(name, tar.subarray(at + 512, at + 512 + size))
    at += 512 + Math.ceil(size / 512) * 512
  }
  return entries
}
