// Values as the exchange documents write them (RespuestaEnvioDTE_v10.xsd, EnvioRecibos_v10.xsd, Recibos_v10.xsd,
// their types in SiiTypes_v10.xsd): each checked against its XSD type, or cut to its length, before it is written
// into text that is then signed as it is. The builders write strings, not a DOM, so what is signed is what is sent.
import { santiagoTimestamp } from '../clock'
import { normalizeRut } from '../domain/rut'
import { xmlText } from './dte-xml'
import { escapeXmlText } from './latin1'

/**
 * A free text (a glosa, a contact, a file name, a recinto) as the XML may carry it: typographic characters
 * transliterated and controls replaced (DESIGN §12), what ISO-8859-1 cannot carry as `?` (the bytes are ISO-8859-1,
 * docs/sii-protocol.md §1.2), cut to the XSD's length in characters, then escaped (truncate first, §1.3).
 */
export function textValue(value: string, maxChars: number): string {
  return escapeXmlText(xmlText(value, maxChars).replace(/[^\u0000-\u00ff]/gu, '?'))
}

/** RUTType, canonical `12345678-K` from any spelling; null when `value` is not a valid RUT. */
export function rutOrNull(value: string | null | undefined): string | null {
  return value === null || value === undefined ? null : normalizeRut(value)
}

/** RUTType, canonical; throws RangeError naming `field` when `value` is not a valid RUT (the caller's bug). */
export function rutValue(value: string, field: string): string {
  const rut = normalizeRut(value)
  if (rut === null) throw new RangeError(`${field} "${value}" is not a valid RUT`)
  return rut
}

/** xs:dateTime as the SII writes its timestamps: `YYYY-MM-DDTHH:MM:SS`, Santiago local time (docs/sii-protocol.md §1.3). */
export function timestampValue(value: Date, field: string): string {
  if (Number.isNaN(value.getTime())) throw new RangeError(`${field} is not a valid date`)
  return santiagoTimestamp(value)
}

/** xs:date `YYYY-MM-DD`, a real calendar day; null otherwise. */
export function dateOrNull(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return null
  const parsed = new Date(`${value}T00:00:00Z`)
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === value ? value : null
}

/** An integer within [min, max] (the XSD's totalDigits as max), as text; null otherwise. */
export function integerOrNull(value: number, min: number, max: number): string | null {
  return Number.isSafeInteger(value) && value >= min && value <= max ? String(value) : null
}

/** integerOrNull, or a RangeError naming `field` (the caller's bug). */
export function integerValue(value: number, min: number, max: number, field: string): string {
  const text = integerOrNull(value, min, max)
  if (text === null) throw new RangeError(`${field} ${value} is not an integer between ${min} and ${max}`)
  return text
}

/** `<Name>text</Name>` when there is a value; '' otherwise (the XSD's optional elements). */
export function optionalElement(name: string, text: string | null): string {
  return text === null || text === '' ? '' : `<${name}>${text}</${name}>`
}

/** FolioType (totalDigits 10), MontoType (totalDigits 18: beyond 2^53 no JS number is exact, so 2^53 − 1 is the limit here). */
export const MAX_FOLIO = 9_999_999_999
export const MAX_MONTO = Number.MAX_SAFE_INTEGER
/** IdRespuesta, CodEnvio: positiveInteger, totalDigits 10. */
export const MAX_CODIGO = 9_999_999_999

/** An integer as a reader takes it from a file: optional sign, at most 15 digits (exact in a JS number); null otherwise. */
export function readInteger(text: string): number | null {
  const trimmed = text.trim()
  return /^[-+]?\d{1,15}$/.test(trimmed) ? Number(trimmed) : null
}

/** A RUT as a reader takes it from a file: canonical when valid, else the text as written (cut, so a hostile file cannot bloat it). */
export function readRut(text: string): string {
  return normalizeRut(text) ?? text.trim().slice(0, 20)
}
