// Chilean RUT: parse any spelling people type, check the módulo-11 digit, print the SII's canonical form.
// docs/sii-protocol.md §8; SiiTypes_v10.xsd RUTType is `[0-9]+-([0-9]|K)`, 3 to 10 characters.

export interface Rut {
  /** Digits without dots or leading zeros. */
  readonly body: string
  /** `0`–`9` or uppercase `K`. */
  readonly dv: string
}

/** Check digit of a RUT body: factors 2..7 from the right, 11 − (sum mod 11), 11 → 0, 10 → K. */
export function computeDv(body: string): string {
  let sum = 0
  let factor = 2
  for (let i = body.length - 1; i >= 0; i--) {
    sum += Number(body[i]) * factor
    factor = factor === 7 ? 2 : factor + 1
  }
  const r = 11 - (sum % 11)
  return r === 11 ? '0' : r === 10 ? 'K' : String(r)
}

/** Reads `12.345.678-5`, `12345678-5`, `123456785`, ` 012345678-k ` alike; null when malformed or the digit is wrong. */
export function parseRut(input: string): Rut | null {
  const compact = input.replace(/[.\s]/g, '').toUpperCase()
  const match = /^0*(\d{1,8})-?([\dK])$/.exec(compact)
  if (!match) return null
  const [, body, dv] = match as unknown as [string, string, string]
  if (body === '0') return null
  return computeDv(body) === dv ? { body, dv } : null
}

/** Canonical form `12345678-K` (DESIGN §8): what is stored, compared and written to the XML. */
export function formatRut(rut: Rut): string {
  return `${rut.body}-${rut.dv}`
}

/** Canonical form of any spelling, or null when it is not a valid RUT. */
export function normalizeRut(input: string): string | null {
  const rut = parseRut(input)
  return rut ? formatRut(rut) : null
}

/** `12.345.678-5`: for printed documents only. */
export function formatRutWithDots(rut: Rut): string {
  return `${rut.body.replace(/\B(?=(\d{3})+(?!\d))/g, '.')}-${rut.dv}`
}

/**
 * The first RUT-shaped text inside `text`, canonical (`07.880.442-4` → `7880442-4`), its check digit NOT verified:
 * for what a certificate authority wrote into a certificate (docs/sii-protocol.md §10), which the caller then compares
 * with the RUT it expects. Finds the RUT inside longer text, as CORD certificates write it (`\d{1,8}-[0-9Kk]`).
 */
export function rutInText(text: string): string | null {
  const match = /(\d{1,8})-([\dkK])/.exec(text.replace(/\./g, ''))
  if (match === null) return null
  const body = String(Number(match[1]))
  return body === '0' ? null : `${body}-${(match[2] ?? '').toUpperCase()}`
}

/** The SII's RUT: Caratula `RutReceptor` of every envelope uploaded to it (docs/sii-protocol.md §5). */
export const SII_RUT = '60803000-K'
