// TypeBox errors → the FieldError details of DESIGN §5: dot paths, one detail code per field, Spanish messages; and
// parseBody, which checks a JSON body's shape and its rules together so a request learns every failing field at once.
import type { TObject, TProperties } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { validationError, type DetailCode, type FieldError } from '../errors'

/** `/detalle/0/precio` → `detalle.0.precio`; JSON-pointer escapes (~1, ~0) undone. */
export function pointerToDotPath(pointer: string): string {
  return pointer
    .split('/')
    .filter((part) => part !== '')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.')
}

// Which detail code a TypeBox failure means; several failures of one field keep the most telling (lowest rank).
const RULES: ReadonlyArray<{ types: readonly ValueErrorType[]; code: DetailCode; rank: number }> = [
  { types: [ValueErrorType.ObjectRequiredProperty], code: 'REQUIRED', rank: 0 },
  { types: [ValueErrorType.ObjectAdditionalProperties], code: 'NOT_ALLOWED', rank: 1 },
  { types: [ValueErrorType.StringMaxLength], code: 'TOO_LONG', rank: 2 },
  { types: [ValueErrorType.ArrayMaxItems], code: 'TOO_MANY', rank: 2 },
  { types: [ValueErrorType.ArrayMinItems], code: 'TOO_FEW', rank: 2 },
  {
    types: [
      ValueErrorType.NumberMaximum,
      ValueErrorType.NumberMinimum,
      ValueErrorType.NumberExclusiveMaximum,
      ValueErrorType.NumberExclusiveMinimum,
      ValueErrorType.IntegerMaximum,
      ValueErrorType.IntegerMinimum,
      ValueErrorType.IntegerExclusiveMaximum,
      ValueErrorType.IntegerExclusiveMinimum,
    ],
    code: 'OUT_OF_RANGE',
    rank: 2,
  },
  { types: [ValueErrorType.StringFormat, ValueErrorType.StringPattern], code: 'INVALID_FORMAT', rank: 2 },
  { types: [ValueErrorType.Literal, ValueErrorType.Union, ValueErrorType.NumberMultipleOf, ValueErrorType.IntegerMultipleOf], code: 'INVALID_VALUE', rank: 3 },
]

const MESSAGES: Readonly<Record<DetailCode, (e: ValueError) => string>> = {
  REQUIRED: (e) => (e.type === ValueErrorType.StringMinLength ? 'No puede estar vacío.' : 'Campo requerido.'),
  NOT_ALLOWED: () => 'Campo no permitido.',
  TOO_LONG: (e) => `Excede el largo máximo de ${String(e.schema.maxLength)} caracteres.`,
  TOO_MANY: (e) => `Admite como máximo ${String(e.schema.maxItems)} elementos.`,
  TOO_FEW: (e) =>
    e.type === ValueErrorType.StringMinLength
      ? `Requiere al menos ${String(e.schema.minLength)} caracteres.`
      : `Requiere al menos ${String(e.schema.minItems)} elemento(s).`,
  OUT_OF_RANGE: (e) => rangeMessage(e),
  INVALID_FORMAT: (e) => (e.schema.format === 'date' ? 'Formato inválido; se espera YYYY-MM-DD.' : 'Formato inválido.'),
  INVALID_VALUE: (e) => allowedValuesMessage(e),
  INVALID_TYPE: (e) => `Tipo inválido; se espera ${typeName(e.schema)}.`,
  INVALID_RUT: () => 'RUT inválido.',
  INCONSISTENT: () => 'Valor inconsistente.',
}

function rangeMessage(e: ValueError): string {
  const s = e.schema as Record<string, unknown>
  if (s.maximum !== undefined && s.minimum !== undefined) return `Debe estar entre ${String(s.minimum)} y ${String(s.maximum)}.`
  if (s.maximum !== undefined) return `Debe ser como máximo ${String(s.maximum)}.`
  if (s.minimum !== undefined) return `Debe ser como mínimo ${String(s.minimum)}.`
  if (s.exclusiveMinimum !== undefined && s.exclusiveMaximum !== undefined) return `Debe ser mayor que ${String(s.exclusiveMinimum)} y menor que ${String(s.exclusiveMaximum)}.`
  if (s.exclusiveMinimum !== undefined) return `Debe ser mayor que ${String(s.exclusiveMinimum)}.`
  if (s.exclusiveMaximum !== undefined) return `Debe ser menor que ${String(s.exclusiveMaximum)}.`
  return 'Fuera de rango.'
}

function allowedValuesMessage(e: ValueError): string {
  const options = (e.schema.anyOf as Array<{ const?: unknown }> | undefined)?.map((o) => o.const).filter((c) => c !== undefined)
  if (options && options.length > 0) return `Valor no permitido; valores aceptados: ${options.join(', ')}.`
  if (e.schema.const !== undefined) return `Valor no permitido; se espera ${String(e.schema.const)}.`
  return 'Valor no permitido.'
}

function typeName(schema: Record<string, unknown>): string {
  const names: Record<string, string> = {
    string: 'un texto',
    integer: 'un número entero',
    number: 'un número',
    boolean: 'true o false',
    object: 'un objeto',
    array: 'una lista',
  }
  return names[String(schema.type)] ?? 'otro tipo'
}

function classify(e: ValueError): { code: DetailCode; rank: number } {
  // An empty string where text is required reads as missing; a longer minimum is a length rule.
  if (e.type === ValueErrorType.StringMinLength) return e.schema.minLength === 1 ? { code: 'REQUIRED', rank: 0 } : { code: 'TOO_FEW', rank: 2 }
  for (const rule of RULES) if (rule.types.includes(e.type)) return { code: rule.code, rank: rule.rank }
  return { code: 'INVALID_TYPE', rank: 4 }
}

/** At most this many fields are reported: enough to fix a request, bounded for one that is hostile. */
export const MAX_DETAILS = 100

/** Every failing field once, in the order first seen, with its most telling code (DESIGN §5). */
export function fieldErrorsFromTypeBox(errors: Iterable<ValueError>, prefix = ''): FieldError[] {
  const byField = new Map<string, { error: FieldError; rank: number }>()
  for (const e of errors) {
    const path = pointerToDotPath(e.path)
    // An empty path is the value itself: the body (DESIGN §5 names it `body` on every route, as parseBody does).
    const field = prefix && path ? `${prefix}.${path}` : prefix || path || 'body'
    // TypeBox yields errors lazily: stop at MAX_DETAILS fields, so a body of a million bad list items costs no more
    // than a hundred (issue 12: no single request may hold the event loop).
    if (!byField.has(field) && byField.size >= MAX_DETAILS) break
    const { code, rank } = classify(e)
    const seen = byField.get(field)
    if (seen && seen.rank <= rank) continue
    byField.set(field, { error: { field, code, message: MESSAGES[code](e) }, rank })
  }
  return [...byField.values()].map((v) => v.error)
}

/**
 * A copy of a JSON body without the fields at `paths` (dot paths of FieldError): object members are removed, array
 * items become `{}` so later items keep their index. Null when the body itself failed (nothing left to check).
 */
export function withoutFields(body: unknown, paths: readonly string[]): unknown {
  if (paths.includes('body') || paths.includes('(body)') || typeof body !== 'object' || body === null) return null
  const copy = structuredClone(body) as Record<string, unknown>
  for (const path of paths) {
    const parts = path.split('.')
    let parent: unknown = copy
    for (const part of parts.slice(0, -1)) parent = parent !== null && typeof parent === 'object' ? (parent as Record<string, unknown>)[part] : undefined
    if (parent === null || typeof parent !== 'object') continue
    const last = parts[parts.length - 1]!
    if (Array.isArray(parent)) parent[Number(last)] = {}
    else delete (parent as Record<string, unknown>)[last]
  }
  return copy
}

const isWithin = (field: string, other: string) => field === other || field.startsWith(`${other}.`) || other.startsWith(`${field}.`)

/**
 * Shape details first, then the rule details about other fields: a rule's verdict on a field the schema refused (or
 * on one inside or around it) was reached on a salvaged body and says less than the schema's. Where a rule reaches
 * the same verdict (field and code) its message is kept, as it says more: a boleta's missing `receptor.rut` is
 * REQUIRED to both, and only the rule says that 66666666-6 is the anonymous consumer.
 */
export function mergeDetails(shape: readonly FieldError[], rules: readonly FieldError[]): FieldError[] {
  const sharper = (s: FieldError) => rules.find((r) => r.field === s.field && r.code === s.code) ?? s
  return [...shape.map(sharper), ...rules.filter((r) => !shape.some((s) => isWithin(r.field, s.field)))]
}

/**
 * A JSON body's members, or VALIDATION_ERROR at `body` when it is not an object: a string or a list is never walked
 * as if it were one (its characters or items are no fields). Every route that reads a JSON body starts here.
 */
export function jsonObjectOf(body: unknown): Readonly<Record<string, unknown>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    // null is a value of the wrong type, as Elysia's schema check says on the routes it guards; only no body is missing.
    throw validationError([{ field: 'body', code: body === undefined ? 'REQUIRED' : 'INVALID_TYPE', message: 'Se espera un objeto JSON.' }])
  return body as Readonly<Record<string, unknown>>
}

/** Members a hand-read body does not take, NOT_ALLOWED each; one with an empty name is reported at `body`, like TypeBox's. */
export function notAllowedMembers(fields: Readonly<Record<string, unknown>>, allowed: readonly string[]): FieldError[] {
  return Object.keys(fields)
    .filter((key) => !allowed.includes(key))
    .map((key) => ({ field: key === '' ? 'body' : key, code: 'NOT_ALLOWED' as const, message: 'Campo no permitido.' }))
}

const nullableKeys = (schema: TObject): Set<string> =>
  new Set(Object.entries(schema.properties as TProperties).filter(([, s]) => (s as { nullable?: boolean }).nullable === true).map(([k]) => k))

const compiled = new WeakMap<TObject, ReturnType<typeof TypeCompiler.Compile>>()
function compiledFor(schema: TObject) {
  let c = compiled.get(schema)
  if (!c) compiled.set(schema, (c = TypeCompiler.Compile(schema)))
  return c
}

/**
 * A JSON object checked against `schema` (nulls of nullable fields set aside) and `rules` (the checks TypeBox cannot
 * state, which must take any value: they run on the body as sent), every failing field once (DESIGN §5), or
 * VALIDATION_ERROR. Returns the body as sent: null still means "clear" to an update. Routes that use it document their
 * body with params.ts jsonBody instead of Elysia's `body:`, which would answer the shape alone, before the rules.
 */
export function parseBody<T>(schema: TObject, body: unknown, rules: (fields: Readonly<Record<string, unknown>>) => FieldError[]): T {
  const sent = jsonObjectOf(body)
  const nullable = nullableKeys(schema)
  const fields = Object.fromEntries(Object.entries(sent).filter(([k, v]) => !(v === null && nullable.has(k))))
  const check = compiledFor(schema)
  const shape = check.Check(fields) ? [] : fieldErrorsFromTypeBox(check.Errors(fields))
  const errors = mergeDetails(shape, rules(fields))
  if (errors.length > 0) throw validationError(errors)
  return body as T
}
