// Reading the boleta REST API's JSON without trusting its shape (docs/sii-protocol.md §7.3): every field is `unknown` until
// narrowed, and a body that is not a JSON object is a reason, not an exception.
import { snippet } from './http'

export type JsonObject = Readonly<Record<string, unknown>>

/** The body as an object, or why it is not one. */
export function parseJsonObject(text: string): JsonObject | string {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return `malformed JSON: ${snippet(text, 80)}`
  }
  return isObject(value) ? value : `JSON answer is not an object: ${snippet(text, 80)}`
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function jsonField(obj: JsonObject, name: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, name) ? obj[name] : undefined
}

/** A string field, or null when absent, null or not text. */
export function stringField(obj: JsonObject, name: string): string | null {
  const v = jsonField(obj, name)
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null
}

/** An integer field (numbers or digit strings), 0 when absent: the counters of §7.3 item 4. */
export function intField(obj: JsonObject, name: string): number {
  const v = jsonField(obj, name)
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*-?\d+\s*$/.test(v) ? Number(v) : 0
  return Number.isSafeInteger(n) ? n : 0
}

/**
 * The digits of `"name": 123` or `"name": "0123"` as written in the text. Track ids are kept as strings (15 digits
 * for boletas, §6.8): read from the text, not from a parsed double, so no digit can be lost or reformatted.
 */
export function rawDigits(text: string, name: string): string | null {
  return new RegExp(`"${name}"\\s*:\\s*"?(\\d+)"?`).exec(text)?.[1] ?? null
}
