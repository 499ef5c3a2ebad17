// The document @elysiajs/swagger 1.3 generates, made valid OpenAPI 3.0.3 (issue 13 item 9). The plugin says 3.0.3 but writes
// TypeBox's JSON Schema 2020-12 (const, numeric exclusiveMinimum, examples arrays, type 'null', patternProperties, $id),
// leaves responses without a description and offers every route without `parse` as JSON, multipart and text. One pure
// pass over the generated document fixes all three; docs.ts serves its result.
import { CATALOG, ERROR_CODES } from '../errors'
import { STATUS } from '../contracts/statuses'

type Obj = Record<string, unknown>

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const objOf = (v: unknown): Obj => (isObj(v) ? v : {})

/** Schema Object fields of OpenAPI 3.0.3 §4.7.24; anything else (and not `x-`) is dropped. */
const SCHEMA_FIELDS = new Set([
  'title', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern',
  'maxItems', 'minItems', 'uniqueItems', 'maxProperties', 'minProperties', 'required', 'enum', 'type', 'allOf', 'oneOf',
  'anyOf', 'not', 'items', 'properties', 'additionalProperties', 'description', 'format', 'default', 'nullable',
  'discriminator', 'readOnly', 'writeOnly', 'xml', 'externalDocs', 'example', 'deprecated', '$ref',
])
/** Response Object fields besides description and content, which are rebuilt. */
const RESPONSE_FIELDS = new Set(['headers', 'links'])
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])
/** What the plugin writes when a route has no `parse`: none of our routes answers multipart or text. */
const PLUGIN_DEFAULT_MEDIA = 'application/json,multipart/form-data,text/plain'
const COMPONENT_ID = /^#\/components\/schemas\/([A-Za-z0-9._-]+)$/

const REASONS: Readonly<Record<string, string>> = {
  200: 'OK', 201: 'Creado', 202: 'Aceptado', 204: 'Sin contenido', 400: 'Solicitud inválida', 401: 'No autenticado',
  403: 'Prohibido', 404: 'No encontrado', 405: 'Método no permitido', 409: 'Conflicto', 413: 'Cuerpo demasiado grande',
  415: 'Tipo de contenido no soportado', 422: 'No procesable', 429: 'Demasiadas solicitudes', 500: 'Error interno',
  503: 'Servicio no disponible',
}

/** A response's description from its status: the reason, and for errors the codes that status carries (DESIGN §5). */
export function describeStatus(status: string): string {
  const reason = REASONS[status] ?? `Respuesta ${status}`
  const codes = ERROR_CODES.filter((code) => String(STATUS[code]) === status)
  if (codes.length === 0) return reason
  return `${reason}. ErrorResponse; codes de este estado en la API: ${codes.map((code) => `${code} (${CATALOG[code].message})`).join(', ')}`
}

interface Ctx {
  /** components.schemas: where a schema whose `$id` names a component is kept, once. */
  readonly schemas: Obj
}

/** `$id: '#/components/schemas/X'` (how common.ts names ErrorResponse) → a `$ref` to X, keeping X in components. */
function componentRef(id: unknown, ctx: Ctx, body: () => Obj, self?: string): Obj | null {
  const name = typeof id === 'string' ? COMPONENT_ID.exec(id)?.[1] : undefined
  if (name === undefined || name === self) return null
  if (!(name in ctx.schemas)) ctx.schemas[name] = schema303(body(), ctx, name)
  return { $ref: `#/components/schemas/${name}` }
}

const typeOfValue = (v: unknown): string | undefined =>
  typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'boolean' : Number.isInteger(v) ? 'integer' : typeof v === 'number' ? 'number' : undefined

/** `type: [T, 'null']` → `type: T, nullable: true`; several types → anyOf. */
function typeList(types: readonly unknown[], out: Obj): void {
  const real = types.filter((t) => t !== 'null')
  if (real.length < types.length) out.nullable = true
  if (real.length === 1) out.type = real[0]
  else if (real.length > 1) out.anyOf = real.map((type) => ({ type }))
  else out.enum = [null]
}

const isNullSchema = (s: unknown) => isObj(s) && s.type === 'null' && Object.keys(s).every((k) => k === 'type' || k === 'description')
const isEnumOnly = (s: unknown): s is { type: string; enum: unknown[] } =>
  isObj(s) && typeof s.type === 'string' && Array.isArray(s.enum) && Object.keys(s).every((k) => k === 'type' || k === 'enum')

/** TypeBox unions: null members become `nullable`, a union of literals one `enum`, a single member is inlined. */
function union303(members: readonly unknown[], ctx: Ctx): Obj {
  const rest = members.filter((m) => !isNullSchema(m)).map((m) => schema303(m, ctx))
  const nullable = rest.length < members.length ? { nullable: true } : {}
  const [first] = rest
  if (first === undefined) return { ...nullable, enum: [null] }
  if (rest.length > 1 && rest.every(isEnumOnly) && rest.every((m) => m.type === first.type))
    return { type: first.type, enum: rest.flatMap((m) => (m as { enum: unknown[] }).enum), ...nullable }
  if (rest.length > 1) return { anyOf: rest, ...nullable }
  return '$ref' in first ? { allOf: [first], ...nullable } : { ...first, ...nullable }
}

/** One JSON Schema (TypeBox) → an OpenAPI 3.0.3 Schema Object, recursively. */
export function schema303(input: unknown, ctx: Ctx = { schemas: {} }, self?: string): Obj {
  if (!isObj(input)) return {}
  const ref = componentRef(input.$id, ctx, () => input, self)
  if (ref) return ref
  const out: Obj = {}
  for (const [key, value] of Object.entries(input)) {
    if (key === 'const') {
      out.enum = [value]
      if (value === null) out.nullable = true
      else if (input.type === undefined && typeOfValue(value) !== undefined) out.type = typeOfValue(value)
    } else if (key === 'examples') {
      if (Array.isArray(value) && value.length > 0 && !('example' in input)) out.example = value[0]
    } else if ((key === 'exclusiveMinimum' || key === 'exclusiveMaximum') && typeof value === 'number') {
      out[key === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = value
      out[key] = true
    } else if (key === 'type' && Array.isArray(value)) typeList(value, out)
    else if (key === 'type' && value === 'null') Object.assign(out, { nullable: true, enum: [null] })
    else if (key === 'properties') out.properties = Object.fromEntries(Object.entries(objOf(value)).map(([k, v]) => [k, schema303(v, ctx)]))
    else if (key === 'items') out.items = Array.isArray(value) ? { anyOf: value.map((v) => schema303(v, ctx)) } : schema303(value, ctx)
    else if (key === 'additionalProperties') out.additionalProperties = typeof value === 'boolean' ? value : schema303(value, ctx)
    else if ((key === 'oneOf' || key === 'allOf') && Array.isArray(value)) out[key] = value.map((v) => schema303(v, ctx))
    else if (key === 'not') out.not = schema303(value, ctx)
    else if (key === 'required') {
      if (Array.isArray(value) && value.length > 0) out.required = value
    } else if ((SCHEMA_FIELDS.has(key) && key !== 'anyOf') || key.startsWith('x-')) out[key] ??= value
  }
  // TypeBox's Record: patternProperties says which extra keys are allowed, so it outranks additionalProperties: false.
  const patterns = Object.values(objOf(input.patternProperties)).map((v) => schema303(v, ctx))
  if (patterns.length > 0) out.additionalProperties = patterns.length === 1 ? patterns[0] : { anyOf: patterns }
  // The union's own keywords (description, default) win over its members'; nullable adds up.
  if (Array.isArray(input.anyOf)) for (const [k, v] of Object.entries(union303(input.anyOf, ctx))) out[k] = k === 'nullable' ? true : (out[k] ?? v)
  // OpenAPI 3.0.3: null is valid only where nullable is true and, with an enum, listed in it.
  if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null]
  return out
}

/** Only the media types the route really speaks: the plugin's JSON + multipart + text default is JSON. */
function content303(content: unknown, ctx: Ctx): Obj | undefined {
  const media = objOf(content)
  const keys = Object.keys(media)
  const kept = keys.join(',') === PLUGIN_DEFAULT_MEDIA ? ['application/json'] : keys
  if (kept.length === 0) return undefined
  return Object.fromEntries(
    kept.map((type) => {
      const m = objOf(media[type])
      return [type, 'schema' in m ? { ...m, schema: schema303(m.schema, ctx) } : m]
    }),
  )
}

function response303(status: string, input: unknown, ctx: Ctx): Obj {
  const res = objOf(input)
  const out: Obj = { description: typeof res.description === 'string' && res.description !== '' ? res.description : describeStatus(status) }
  for (const [key, value] of Object.entries(res)) if (RESPONSE_FIELDS.has(key) || key.startsWith('x-')) out[key] = value
  const content = status === '204' ? undefined : content303(res.content, ctx)
  if (content === undefined) return out
  // The plugin moves a response schema's `$id` onto the response and strips it from the schema it writes.
  for (const media of Object.values(content) as Obj[]) media.schema = componentRef(res.$id, ctx, () => objOf(media.schema)) ?? media.schema
  return { ...out, content }
}

/** The plugin copies a property's `examples` array to the parameter, where 3.0.3 wants a map of Example Objects. */
function parameter303(input: unknown, ctx: Ctx): Obj {
  const { examples, ...param } = objOf(input)
  const out: Obj = { ...param, schema: schema303(param.schema, ctx) }
  if (Array.isArray(examples) && examples.length > 0 && !('example' in param)) out.example = examples[0]
  else if (isObj(examples)) out.examples = examples
  return out
}

function operation303(input: unknown, ctx: Ctx): Obj {
  const op = { ...objOf(input) }
  if (Array.isArray(op.parameters)) op.parameters = op.parameters.map((p) => parameter303(p, ctx))
  if (isObj(op.requestBody)) op.requestBody = { ...op.requestBody, content: content303(op.requestBody.content, ctx) ?? {} }
  op.responses = Object.fromEntries(Object.entries(objOf(op.responses)).map(([status, r]) => [status, response303(status, r, ctx)]))
  return op
}

/** The generated document → valid OpenAPI 3.0.3. Pure: returns a new document; serve it cached, it never changes. */
export function toOpenApi303(doc: Readonly<Obj>): Obj {
  const out = JSON.parse(JSON.stringify(doc)) as Obj // also drops TypeBox's symbol keys and undefined values
  const components = objOf(out.components)
  const ctx: Ctx = { schemas: objOf(components.schemas) }
  for (const [name, schema] of Object.entries(ctx.schemas)) ctx.schemas[name] = schema303(schema, ctx, name)
  const paths: Obj = {}
  for (const [path, item] of Object.entries(objOf(out.paths)))
    paths[path] = Object.fromEntries(Object.entries(objOf(item)).map(([key, v]) => [key, METHODS.has(key) ? operation303(v, ctx) : v]))
  return { ...out, openapi: '3.0.3', paths, components: { ...components, schemas: ctx.schemas } }
}
