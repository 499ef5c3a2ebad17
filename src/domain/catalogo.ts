// Catalogs of clientes and productos (spec 2.16, 2.17; DESIGN §8, §12): field bounds, the rules TypeBox cannot state,
// and the folding that makes search case- and accent-insensitive. Pure: the store indexes what foldText returns and
// searches for what searchTerms returns, so both sides always agree.
import type { FieldError } from '../errors'
import { normalizeRut } from './rut'
import { cleanText, describeCodePoint, firstNonLatin1, transliterate } from './text'

/** Spec 2.1 "producto unidad"; UN when not sent. Each fits a DTE line's `unidad` (4 characters, spec §8). */
export const UNIDADES = ['UN', 'HR', 'KG', 'LT', 'MT', 'M2', 'M3'] as const
export type Unidad = (typeof UNIDADES)[number]

// DESIGN §12. The receptor fields take the DTE request's own limits (spec §8), so a cliente always fits a `receptor`.
export const CLIENTE_MAX_LENGTH = {
  razon_social: 200,
  giro: 200,
  direccion: 300,
  comuna: 100,
  ciudad: 100,
  email: 254,
  telefono: 30,
  contacto: 200,
  notas: 2000,
} as const

// DESIGN §12. `nombre` and `descripcion` match a DTE line's `nombre` and `dsc_item` (spec §8).
export const PRODUCTO_MAX_LENGTH = { codigo: 50, nombre: 200, descripcion: 1000, categoria: 100 } as const

/**
 * Spec 2.17 types `precio_unitario` as int64; a JSON number carries integers exactly up to 2^53 − 1, so that is the
 * bound (SQLite's INTEGER holds it exactly). A price beyond a DTE line's `precio` (12 digits, DTE_v10.xsd PrcItem) may
 * be kept in the catalog; the issuance request that copies it is the one refused.
 */
export const PRECIO_UNITARIO_MAX = Number.MAX_SAFE_INTEGER

/** Search `q` (DESIGN §8): 1 to 100 characters; `limit` 1 to 50, default 10. */
export const SEARCH_Q_MAX = 100
export const SEARCH_LIMIT = { max: 50, fallback: 10 } as const

/** Texts a DTE copies from the catalog: they must be ISO-8859-1 after transliteration, as the DTE's are (DESIGN §12). */
const CLIENTE_XML_BOUND = ['razon_social', 'giro', 'direccion', 'comuna', 'ciudad'] as const
const PRODUCTO_XML_BOUND = ['nombre', 'descripcion'] as const
/** Required texts: present but blank reads as missing. */
const CLIENTE_REQUIRED = ['razon_social'] as const
const PRODUCTO_REQUIRED = ['nombre'] as const

// The WHATWG HTML definition of a valid e-mail address (what browsers accept in <input type=email>), with at least
// one dot in the domain: a DTE's recipient mailbox is on the Internet, never `user@localhost`.
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/

export function isValidEmail(s: string): boolean {
  return EMAIL.test(s)
}

type Fields = Readonly<Record<string, unknown>>

function blank(fields: Fields, names: readonly string[]): FieldError[] {
  return names
    .filter((f) => typeof fields[f] === 'string' && (fields[f] as string).trim() === '')
    .map((field) => ({ field, code: 'REQUIRED', message: 'No puede estar vacío.' }))
}

function nonLatin1(fields: Fields, names: readonly string[]): FieldError[] {
  return names.flatMap((field) => {
    const value = fields[field]
    const bad = typeof value === 'string' ? firstNonLatin1(cleanText(value)) : null
    return bad === null
      ? []
      : [{ field, code: 'INVALID_VALUE' as const, message: `Contiene un carácter que el SII no admite (${describeCodePoint(bad)} «${bad}», fuera de ISO-8859-1).` }]
  })
}

/**
 * Rules of a cliente's fields beyond their shape; only fields present as strings are looked at, so the same check
 * serves a create and a partial update. `rut` is checked here for creates; updates go through checkRutUnchanged.
 */
export function checkClienteFields(fields: Fields): FieldError[] {
  const errors: FieldError[] = []
  if (typeof fields.rut === 'string' && normalizeRut(fields.rut) === null) errors.push({ field: 'rut', code: 'INVALID_RUT', message: 'RUT inválido.' })
  errors.push(...blank(fields, CLIENTE_REQUIRED), ...nonLatin1(fields, CLIENTE_XML_BOUND))
  if (typeof fields.email === 'string' && !isValidEmail(fields.email))
    errors.push({ field: 'email', code: 'INVALID_FORMAT', message: 'Correo electrónico inválido.' })
  return errors
}

/** A cliente's RUT is fixed (spec 2.16): in a PUT it may only repeat the stored one, in any spelling (DESIGN §12). */
export function checkRutUnchanged(sent: unknown, stored: string): FieldError[] {
  if (sent === undefined) return []
  if (typeof sent === 'string' && normalizeRut(sent) === stored) return []
  return [{ field: 'rut', code: 'NOT_ALLOWED', message: `El RUT de un cliente no se puede modificar (es ${stored}); cree otro cliente.` }]
}

export function checkProductoFields(fields: Fields): FieldError[] {
  return [...blank(fields, PRODUCTO_REQUIRED), ...nonLatin1(fields, PRODUCTO_XML_BOUND)]
}

/**
 * Search folding: typographic characters transliterated, compatibility forms and accents dropped (NFKD without marks:
 * `Ñuñoa` → `nunoa`), lower case, control characters as spaces (as DESIGN §12 does to text; a NUL would also end an
 * FTS5 query), whitespace runs as one space, trimmed. Idempotent.
 */
export function foldText(text: string): string {
  // Compatibility forms first (NFKD turns ⁗ into four primes, ﬁ into fi), so transliteration sees what they stand for;
  // lower case before dropping marks, because lowering can itself produce one (İ → i + U+0307). Idempotent either way.
  return transliterate(text.normalize('NFKD'))
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[\p{Cc}\s]+/gu, ' ')
    .trim()
}

/** How a stored RUT is indexed: `12345678-K` → `12345678k` (the store's SQL spells the same rule). */
export function compactRut(rut: string): string {
  return rut.replace('-', '').toLowerCase()
}

const RUT_LIKE = /^[\d.\s-]*\d[\d.\s-]*[kK]?\s*$/

/**
 * A query that looks like (part of) a RUT, in its indexed form: `12.345.678-k`, `12345678-K` and `12345678k` all
 * become `12345678k`; `345.678` becomes `345678`. Null when the query is not digits, dots, dashes and a final K.
 */
export function rutSearchForm(q: string): string | null {
  return RUT_LIKE.test(q) ? q.replace(/[^\dkK]/g, '').toLowerCase() : null
}

/** The substrings a cliente search looks for, any of them matching: the folded text, and the RUT form when there is one. */
export function clienteSearchTerms(q: string): string[] {
  return distinct([foldText(q), rutSearchForm(q)])
}

/** A producto search looks for the folded text in the folded name or code. */
export function productoSearchTerms(q: string): string[] {
  return distinct([foldText(q)])
}

function distinct(terms: ReadonlyArray<string | null>): string[] {
  return [...new Set(terms.filter((t): t is string => t !== null && t !== ''))]
}
