// Hostile requests, generated from a seed (issue 18, "Hostile input"): for request `i` of seed `s` the same bytes every
// time, so a finding is replayed with `--seed s --only i`. Each request picks an operation of the route table and
// spoils it on several axes at once: credential, path ids, method, query, headers, body, and how the bytes travel.
// Every write carries at least one fault the API must refuse ("must refuse"): a request the API ought to accept would
// change stored data, and the harness checks that nothing changed. JSON values and text come from fast-check
// arbitraries sampled with a seed drawn from the request's own generator.
import fc from 'fast-check'
import { hasPathId, KIND_PARAMS, type Operation } from '../route-table'
import type { Piece } from './raw-http'
import { prng } from '../../support/prng'

/** What the generator needs to know about the running server and company A (test/security/company.ts). */
export interface FuzzWorld {
  readonly port: number
  readonly ops: readonly Operation[]
  /** A's write and read keys, B's write key (B owns nothing the fuzzer names). */
  readonly keys: { readonly writeA: string; readonly readA: string; readonly writeB: string }
  /** A's resources by the collection segment of their path (`dte`, `clientes`, `deliveries`, …). */
  readonly ids: Readonly<Record<string, string>>
  /** Request body schema (application/json) of each operation, from the served /docs/json. */
  readonly schemas: Readonly<Record<string, JsonSchema | undefined>>
  /** Valid bodies for A, per operation name: the spoiling starts from data the API would otherwise accept. */
  readonly bodies: Readonly<Record<string, () => unknown>>
}

export interface JsonSchema {
  readonly type?: string | readonly string[]
  readonly properties?: Readonly<Record<string, JsonSchema>>
  readonly items?: JsonSchema
  readonly required?: readonly string[]
  readonly anyOf?: readonly JsonSchema[]
  readonly nullable?: boolean
  readonly additionalProperties?: unknown
}

export interface FuzzCase {
  readonly index: number
  /** The operation aimed at (`METHOD path` of the document), or `unknown path`. */
  readonly op: string
  readonly method: string
  readonly isWrite: boolean
  /** Each fault injected, as a short label (`credential:read-key`, `body:unknown-field`, `transport:truncated`). */
  readonly faults: readonly string[]
  /** At least one fault the API must refuse: a 2xx or 3xx answer to this request is a finding. */
  readonly mustRefuse: boolean
  readonly pieces: readonly Piece[]
  readonly bytes: Buffer
  /** How many answers the bytes ask for (a Content-Length shorter than the body leaves a second request behind). */
  readonly answers: number
  readonly endAfterSend: boolean
  /** No answer is a fine outcome: the client cut its request short, or sent something no server answers. */
  readonly mayGoUnanswered: boolean
  readonly isHead: boolean
}

/** The seeded stream a request is drawn from (test/support/prng.ts), with the helpers the generator uses. */
export class Rng {
  readonly next: () => number
  constructor(seed: number) {
    this.next = prng(seed)
  }
  int(max: number): number {
    return Math.floor(this.next() * max)
  }
  chance(p: number): boolean {
    return this.next() < p
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!
  }
  /** A value of a fast-check arbitrary, reproducible from this generator's state. */
  sample<T>(arb: fc.Arbitrary<T>): T {
    return fc.sample(arb, { seed: this.int(0x7fffffff), numRuns: 1 })[0]!
  }
}

/** A random-looking UUID v4 from the generator (not crypto's: a replayed request sends the same bytes). */
export function uuidOf(rng: Rng): string {
  const hex = Array.from({ length: 32 }, () => rng.int(16).toString(16))
  hex[12] = '4'
  hex[16] = (8 + rng.int(4)).toString(16)
  const h = hex.join('')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** The generator of request `index` of run `seed`: independent of every other request, so one can be replayed alone. */
export function rngFor(seed: number, index: number): Rng {
  return new Rng(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35))
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

// ---------------------------------------------------------------- values

/** Text that breaks things: astral and combining characters, lone surrogates, control characters, RTL marks, NUL. */
const NASTY_STRINGS = [
  '', ' ', '\u0000', '\u0001\u0002\u001b[31m', '\t\r\n', 'ñandú', '𝕏💩👩‍👩‍👧', '\ud800', '\udfff\ud800', 'e\u0301', '\u202e\u2066abc',
  '\u200b\ufeff', '\uffff', "'; DROP TABLE dtes; --", '${7*7}{{7*7}}', '<script>alert(1)</script>', '../../etc/passwd', '%00%0d%0a',
  '\\', '"', 'null', 'true', '-0', '1e999', 'NaN', '0x10', '٣', 'ⅻ',
]

const HUGE_NUMBERS = [
  '1e400', '-1e400', '1e-400', '9007199254740993', '-9007199254740993', '18446744073709551616', '123456789012345678901234567890',
  '-0', '0.0000000000000000000001', '1.5', '-1', '2147483648', '-2147483649', '1E+308', '4.9e-324',
]

const nastyString = (rng: Rng): string =>
  rng.chance(0.5) ? rng.pick(NASTY_STRINGS) : rng.sample(fc.string({ unit: rng.pick(['grapheme', 'binary', 'binary-ascii'] as const), maxLength: 40 }))

/** Any JSON value, keys included: fast-check's, with nasty text mixed in. */
const anyJson = (rng: Rng, depth = 3): unknown => (rng.chance(0.3) ? nastyString(rng) : rng.sample(fc.jsonValue({ maxDepth: depth })))

/** A JSON value whose type is none of those `schema` allows (null only where not nullable). */
function wrongTypeFor(rng: Rng, schema: JsonSchema | undefined): unknown {
  const allowed = new Set<string>()
  const collect = (s: JsonSchema | undefined) => {
    if (!s) return
    if (typeof s.type === 'string') allowed.add(s.type)
    else if (Array.isArray(s.type)) for (const t of s.type) allowed.add(t)
    if (s.nullable) allowed.add('null')
    for (const a of s.anyOf ?? []) collect(a)
  }
  collect(schema)
  if (allowed.size === 0) return undefined
  if (allowed.has('integer')) allowed.add('number')
  // A string of digits could be coerced to a number by a lenient schema; words never are.
  const candidates: Array<[string, () => unknown]> = [
    ['string', () => rng.pick(['no-es-un-número', 'verdadero', '𝕏', 'x'.repeat(1 + rng.int(300))])],
    ['number', () => rng.pick([1.5, -7, 0, 1e300, -1e-300, 123456789])],
    ['boolean', () => rng.chance(0.5)],
    ['array', () => (rng.chance(0.5) ? [] : [anyJson(rng, 1)])],
    ['object', () => (rng.chance(0.5) ? {} : { a: anyJson(rng, 1) })],
    ['null', () => null],
  ]
  const options = candidates.filter(([t]) => !allowed.has(t))
  return options.length === 0 ? undefined : rng.pick(options)[1]()
}

// ---------------------------------------------------------------- bodies

interface Spoiled {
  readonly text: string | Buffer
  readonly fault: string
  readonly refuses: boolean
}

function propertiesOf(schema: JsonSchema | undefined): Array<[string, JsonSchema]> {
  return Object.entries(schema?.properties ?? {})
}

/** A dot path to some member of the base body, nested objects and list items included. */
function somePath(rng: Rng, body: unknown): { path: string[] } {
  const path: string[] = []
  let node = body
  while (node !== null && typeof node === 'object' && rng.chance(path.length === 0 ? 1 : 0.5)) {
    const keys = Array.isArray(node) ? node.map((_, i) => String(i)) : Object.keys(node)
    if (keys.length === 0) break
    const key = rng.pick(keys)
    path.push(key)
    node = (node as Record<string, unknown>)[key]
  }
  return { path }
}

function setPath(body: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node: Record<string, unknown> = body
  for (const part of path.slice(0, -1)) node = node[part] as Record<string, unknown>
  node[path[path.length - 1]!] = value
}

/** The schema of a property path, walking objects and list items. */
function schemaAt(schema: JsonSchema | undefined, path: readonly string[]): JsonSchema | undefined {
  let s = schema
  for (const part of path) s = /^\d+$/.test(part) && s?.items ? s.items : s?.properties?.[part]
  return s
}

/** Nested `depth` deep: arrays and objects inside each other. */
function deepJson(depth: number, rng: Rng): string {
  const open = rng.chance(0.5) ? '[' : '{"a":'
  const close = open === '[' ? ']' : '}'
  return `{"x":${open.repeat(depth)}1${close.repeat(depth)}}`
}

/**
 * The body of `op`, spoiled. `refuses` says whether the spoiling alone makes the API refuse it (a field it does not
 * take, a value of the wrong type, text that is not JSON, nesting past 64, a body that is not an object). Changes that
 * may be valid (nasty text in a text field, a huge number in a numeric one) do not count as refusing.
 */
export function spoilBody(rng: Rng, world: FuzzWorld, op: Operation): Spoiled {
  const schema = world.schemas[op.name]
  const base = (world.bodies[op.name]?.() ?? {}) as Record<string, unknown>
  const body = structuredClone(base)
  const json = (fault: string, refuses: boolean, value: unknown = body) => ({ text: JSON.stringify(value), fault, refuses })
  switch (rng.int(13)) {
    case 0: {
      // additionalProperties: false on every body but /recibidos/importar (whose one field is then not an envelope).
      const key = rng.chance(0.5) ? nastyString(rng) || 'campo_extra' : `campo_${rng.int(1000)}`
      if (schema?.properties?.[key] !== undefined) return json('body:known-field', false)
      body[key] = anyJson(rng, 2)
      return json('body:unknown-field', schema?.additionalProperties === false)
    }
    case 1: {
      const props = propertiesOf(schema)
      if (props.length === 0) return json('body:as-is', false)
      const { path } = somePath(rng, body)
      const target = path.length > 0 ? path : [rng.pick(props)[0]]
      const value = wrongTypeFor(rng, schemaAt(schema, target))
      if (value === undefined) return json('body:as-is', false)
      setPath(body, target, value)
      return json(`body:wrong-type:${target.join('.')}`, true)
    }
    case 2: {
      const required = schema?.required ?? []
      if (required.length === 0) return json('body:as-is', false)
      delete body[rng.pick(required)]
      return json('body:missing-required', true)
    }
    case 3:
      return json('body:not-an-object', true, rng.pick([[], [body], 42, 'texto', true, null, -0]))
    case 4: {
      const text = JSON.stringify(body)
      const cut = text.slice(0, rng.int(Math.max(1, text.length - 1)))
      return { text: cut, fault: 'body:truncated-json', refuses: !isJsonObject(cut) }
    }
    case 5: {
      const bytes = Buffer.from(rng.sample(fc.uint8Array({ minLength: 1, maxLength: 200 })))
      return { text: bytes, fault: 'body:random-bytes', refuses: !isJsonObject(bytes.toString('utf8')) }
    }
    case 6:
      return { text: deepJson(65 + rng.int(5000), rng), fault: 'body:too-deep', refuses: true }
    case 7: {
      // Huge or odd numbers written as JSON text at any member: whatever JSON.parse makes of them (1e400 is Infinity).
      const { path } = somePath(rng, body)
      if (path.length === 0) return json('body:as-is', false)
      const marker = `__NUM_${rng.int(1e9)}__`
      setPath(body, path, marker)
      return { text: JSON.stringify(body).replace(`"${marker}"`, rng.pick(HUGE_NUMBERS)), fault: `body:odd-number:${path.join('.')}`, refuses: false }
    }
    case 8: {
      const { path } = somePath(rng, body)
      if (path.length === 0) return json('body:as-is', false)
      setPath(body, path, rng.chance(0.3) ? nastyString(rng).repeat(1 + rng.int(500)) : nastyString(rng))
      return json(`body:nasty-text:${path.join('.')}`, false)
    }
    case 9: {
      // Duplicated keys: JSON.parse keeps the last; the first is garbage of the wrong type.
      const keys = Object.keys(body)
      if (keys.length === 0) return json('body:as-is', false)
      const key = rng.pick(keys)
      const text = JSON.stringify(body)
      return { text: `{${JSON.stringify(key)}:${JSON.stringify(anyJson(rng, 1))},${text.slice(1)}`, fault: 'body:duplicated-key', refuses: false }
    }
    case 10:
      return json('body:any-json', false, anyJson(rng, 4))
    case 11:
      return { text: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(body))]), fault: 'body:utf8-bom', refuses: false }
    default:
      return json('body:as-is', false)
  }
}

/** Whether `text` parses to a JSON object (the one kind of body an operation may accept). */
function isJsonObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text)
    return v !== null && typeof v === 'object' && !Array.isArray(v)
  } catch {
    return false
  }
}

// ---------------------------------------------------------------- ids and queries

/** Percent-encoded, lone surrogates included (as the bytes of their WTF-8 form, which is no UTF-8 at all). */
function pct(text: string): string {
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|[^]/gu, (ch) => {
    const c = ch.codePointAt(0)!
    if (ch.length === 1 && c >= 0xd800 && c <= 0xdfff) return `%${(0xe0 | (c >> 12)).toString(16)}%${(0x80 | ((c >> 6) & 0x3f)).toString(16)}%${(0x80 | (c & 0x3f)).toString(16)}`.toUpperCase()
    return encodeURIComponent(ch)
  })
}

const BAD_IDS = [
  'not-a-uuid', '00000000-0000-0000-0000-00000000000', '00000000-0000-0000-0000-0000000000000', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
  '%00', '%ff%fe', '%C3%B1', 'undefined', 'null', '-1', '0', '1e9', '%20', '%2F', 'a%2Fb', '%22%3E%3Cscript%3E', 'x'.repeat(5000),
  '{id}', ':id', '%u0000', '\u00f1'.repeat(3), '..%2F..%2Fhealth',
]

/** A path id the API must answer 404 for: malformed, or a well-formed UUID nobody has, or another kind's id. */
function badId(rng: Rng, world: FuzzWorld, collection: string): { id: string; fault: string } {
  switch (rng.int(4)) {
    case 0:
      return { id: uuidOf(rng), fault: 'path:unknown-uuid' }
    case 1: {
      const others = Object.entries(world.ids).filter(([c]) => c !== collection)
      return others.length > 0 ? { id: rng.pick(others)[1], fault: 'path:id-of-another-kind' } : { id: uuidOf(rng), fault: 'path:unknown-uuid' }
    }
    case 2: {
      const real = world.ids[collection] ?? uuidOf(rng)
      // One character off: a UUID of the right shape that is not A's.
      const at = rng.int(real.length)
      const ch = real[at] === '-' ? '-' : real[at] === 'a' ? 'b' : 'a'
      const id = real.slice(0, at) + ch + real.slice(at + 1)
      return id === real ? { id: uuidOf(rng), fault: 'path:unknown-uuid' } : { id, fault: 'path:uuid-one-off' }
    }
    default:
      return { id: rng.chance(0.7) ? rng.pick(BAD_IDS) : pct(nastyString(rng)) || 'x', fault: 'path:malformed-id' }
  }
}

/** Query values that the parameter of that name should refuse or shrug off. */
function queryValue(rng: Rng, name: string): string {
  const odd = ['-1', '0', 'abc', '1e309', '99999999999999999999', '', ' ', '1.5', '%00', 'true', '[]', '{}', 'null']
  if (name === 'cursor') return rng.pick(['x', '!!!', 'eyJpZCI6Ii4uIn0', 'A'.repeat(4000), '%ff', ...odd])
  if (name.startsWith('fecha')) return rng.pick(['2026-13-45', '2026-02-30', '0000-00-00', '26-1-1', '2026-01-01T00:00:00Z', '9999-99-99', ...odd])
  return rng.pick(odd.concat([nastyString(rng), 'x'.repeat(2000)]))
}

function queryFor(rng: Rng, op: Operation, faults: string[]): string {
  const params: string[] = []
  // Values percent-encoded: a raw space would end the request target (a malformed request line, transport:bare-lf's job).
  for (const name of op.requiredQuery) if (rng.chance(0.85)) params.push(`${name}=${rng.chance(0.5) ? 'a' : pct(queryValue(rng, name))}`)
  if (op.requiredQuery.some((n) => !params.some((p) => p.startsWith(`${n}=`)))) faults.push('query:missing-required')
  if (op.query.length > 0 && rng.chance(0.6)) {
    const name = rng.pick(op.query)
    params.push(`${name}=${pct(queryValue(rng, name))}`)
    if (rng.chance(0.3)) params.push(`${name}=${pct(queryValue(rng, name))}`)
    faults.push(`query:odd-${name}`)
  }
  if (rng.chance(0.15)) {
    params.push(`${pct(nastyString(rng)) || 'k'}=${pct(nastyString(rng))}`)
    faults.push('query:unknown-param')
  }
  if (rng.chance(0.05)) {
    params.push('a=%zz&&&==&%')
    faults.push('query:broken-encoding')
  }
  return params.length === 0 ? '' : `?${params.join('&')}`
}

// ---------------------------------------------------------------- the request

interface Draft {
  method: string
  target: string
  headers: Array<[string, string]>
  body: Buffer | null
  faults: string[]
  /** Why the API must refuse it; whether each reason holds is decided once the whole request is known (refused()). */
  reasons: Set<Reason>
  parserRefusal: boolean
}

/**
 * credential and path: under the API prefix only (/health takes no key); body: only when the route that reads it is the
 * one called; content-type: only a body the server sees on POST, PUT or PATCH (checkBody in src/http/server.ts); parser:
 * Bun refuses the head before any handler runs; method: no route of the path takes it.
 */
type Reason = 'credential' | 'path' | 'method' | 'body' | 'content-type' | 'idempotency' | 'parser' | 'unknown-path'

const OTHER_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'get']

/** The credential headers: A's keys mostly, with every way of getting them wrong. */
function credential(rng: Rng, world: FuzzWorld, op: Operation, draft: Draft, hasPathIds: boolean): void {
  const key = (k: string): void => void draft.headers.push(['X-Api-Key', k])
  // Half the requests carry A's write key, so the other faults are judged past authentication.
  const r = rng.int(20) - 2
  if (r < 9) return key(world.keys.writeA)
  const refuse = (fault: string) => {
    draft.faults.push(fault)
    draft.reasons.add('credential')
  }
  if (r < 11) {
    key(world.keys.readA)
    if (WRITE_METHODS.has(draft.method)) refuse('credential:read-key-on-write')
    else draft.faults.push('credential:read-key')
    return
  }
  if (r === 11) return refuse('credential:none')
  if (r === 12) return (key(world.keys.writeA.slice(0, -1) + (world.keys.writeA.endsWith('a') ? 'b' : 'a')), refuse('credential:key-one-off'))
  if (r === 13) {
    const garbage = nastyString(rng).replace(/[\r\n\0]/g, '') || 'x'
    // Bun's parser refuses a control character in a header value before any handler (and may close without an answer).
    // Heads are written as latin1, so a character past U+00FF becomes its low byte: U+010D is a CR on the wire.
    if ([...Buffer.from(garbage, 'latin1')].some((b) => (b < 0x20 && b !== 0x09) || b === 0x7f)) draft.parserRefusal = true
    return (key(garbage), refuse('credential:garbage-key'))
  }
  if (r === 14) return (key(world.keys.writeA), key(world.keys.writeA), refuse('credential:key-twice'))
  if (r === 15) {
    key(world.keys.writeA)
    draft.headers.push(['Authorization', rng.pick(['Bearer', 'Bearer ', 'Bearer x.y.z', 'Basic Zm9vOmJhcg==', 'Bearer eyJhbGciOiJub25lIn0.eyJlbXByZXNhX2lkIjoieCJ9.', `Bearer ${'a'.repeat(9000)}`])])
    return refuse('credential:bad-bearer-beside-key')
  }
  if (r === 16 && hasPathIds) return (key(world.keys.writeB), refuse('credential:other-company'))
  if (r === 17) return (key(''), refuse('credential:empty-key'))
  if (r === 18) return (key(` ${world.keys.writeA.toUpperCase()} `), refuse('credential:key-upper-case'))
  return key(world.keys.writeA)
}

function hostHeader(rng: Rng, world: FuzzWorld, draft: Draft): void {
  const r = rng.int(40)
  const host = `127.0.0.1:${world.port}`
  if (r === 0) return void (draft.faults.push('header:no-host'), (draft.parserRefusal = true), draft.reasons.add('parser'))
  if (r === 1) return void (draft.headers.push(['Host', host], ['Host', 'evil.example']), draft.faults.push('header:host-twice'), (draft.parserRefusal = true), draft.reasons.add('parser'))
  if (r === 2) return void (draft.headers.push(['Host', rng.pick(['x', 'a b', 'x:99999', '', '[::1', 'ñ.cl'])]), draft.faults.push('header:odd-host'))
  draft.headers.push(['Host', host])
}

function extraHeaders(rng: Rng, draft: Draft): void {
  if (rng.chance(0.1)) {
    draft.headers.push(['X-Request-Id', rng.pick(['a b<script>', 'x'.repeat(200), '../../', '', 'ok-id'])])
    draft.faults.push('header:odd-request-id')
  }
  if (rng.chance(0.08)) {
    draft.headers.push([`X-${rng.int(1e6)}`, rng.pick(['\u00ff\u00fe', 'a\tb', '"quoted"', ';;;', 'é'])])
    draft.faults.push('header:odd-value')
  }
  if (rng.chance(0.02)) {
    draft.headers.push(['X-Big', 'a'.repeat(20_000 + rng.int(100_000))])
    draft.faults.push('header:huge')
    draft.parserRefusal = true
  }
  if (rng.chance(0.01)) {
    for (let i = 0; i < 120 + rng.int(300); i++) draft.headers.push([`X-H${i}`, 'v'])
    draft.faults.push('header:many')
    draft.parserRefusal = true
  }
  if (rng.chance(0.01)) {
    draft.headers.push(['X-Ctl', 'a\u0001b'])
    draft.faults.push('header:control-character')
    draft.parserRefusal = true
    draft.reasons.add('parser')
  }
  if (rng.chance(0.05)) draft.headers.push(['Connection', rng.pick(['close', 'keep-alive', 'upgrade', 'Upgrade, HTTP2-Settings'])]), draft.faults.push('header:connection')
  if (rng.chance(0.03)) draft.headers.push(['Expect', '100-continue']), draft.faults.push('header:expect-continue')
  if (rng.chance(0.03)) draft.headers.push(['Content-Encoding', rng.pick(['gzip', 'br', 'identity', 'x'])]), draft.faults.push('header:content-encoding')
}

/** Content-Type for a body: JSON mostly, else missing, wrong, twice, or with odd parameters. */
function contentType(rng: Rng, draft: Draft): void {
  const r = rng.int(14)
  const refuse = (fault: string) => (draft.faults.push(fault), draft.reasons.add('content-type'))
  if (r < 8) draft.headers.push(['Content-Type', rng.pick(['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/problem+json'])])
  else if (r === 8) refuse('content-type:missing')
  else if (r === 9) draft.headers.push(['Content-Type', rng.pick(['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'json', '*/*'])]), refuse('content-type:wrong')
  else if (r === 10) draft.headers.push(['Content-Type', 'application/json'], ['Content-Type', 'text/plain']), refuse('content-type:twice-conflicting')
  else if (r === 11) draft.headers.push(['Content-Type', 'application/json'], ['Content-Type', 'application/json']), refuse('content-type:twice')
  else if (r === 12) draft.headers.push(['Content-Type', 'multipart/form-data; boundary=x']), draft.faults.push('content-type:multipart')
  else draft.headers.push(['Content-Type', 'application/json; charset=latin1; x="\u00ff"']), draft.faults.push('content-type:odd-parameters')
}

/** Picks an operation, or now and then a path no route serves. */
function pickOperation(rng: Rng, world: FuzzWorld): Operation {
  if (rng.chance(0.04)) {
    const path = rng.pick(['/api/v1/billing/nada', '/api/v1/billing', '/api/v2/billing/dte', '/nope', '/api/v1/billing/dte/{id}/nada', '/%2e%2e/%2e%2e/etc/passwd', '/api/v1/billing//dte'])
    const method = rng.pick(['GET', 'POST', 'DELETE'])
    return { method: method as Operation['method'], path, operationId: 'unknown', hasBody: method === 'POST', requiredQuery: [], query: [], name: 'unknown path' }
  }
  return rng.pick(world.ops)
}

/** Fills the path: A's ids, or (sometimes) ids the API must not find. */
function fillIds(rng: Rng, world: FuzzWorld, op: Operation, draft: Draft): string {
  const parts = op.path.split('/')
  return parts
    .map((part, i) => {
      if (!part.startsWith('{')) return part
      // A month is no company's resource: it stays valid, so the draft's other faults decide the answer.
      const kind = KIND_PARAMS[part.slice(1, -1)]
      if (kind) return kind()
      const collection = parts[i - 1]!
      if (rng.chance(0.35)) {
        const bad = badId(rng, world, collection)
        draft.faults.push(bad.fault)
        draft.reasons.add('path')
        return bad.id
      }
      const id = world.ids[collection] ?? uuidOf(rng)
      return rng.chance(0.1) ? id.toUpperCase() : id
    })
    .join('/')
}

/** Faults that make the API refuse whatever the body and transport: one is added to a write that has none. */
function forceRefusal(rng: Rng, world: FuzzWorld, op: Operation, draft: Draft): void {
  const dropCredential = () => (draft.headers = draft.headers.filter(([k]) => !/^(x-api-key|authorization)$/i.test(k)))
  const options: Array<() => void> = [
    () => {
      dropCredential()
      draft.faults.push('credential:none')
      draft.reasons.add('credential')
    },
    () => {
      dropCredential()
      draft.headers.push(['X-Api-Key', world.keys.readA])
      draft.faults.push('credential:read-key-on-write')
      draft.reasons.add('credential')
    },
  ]
  if (hasPathId(op) && !draft.reasons.has('method'))
    options.push(() => {
      const [path, query] = draft.target.split('?') as [string, string | undefined]
      const segments = path.split('/')
      const template = op.path.split('/')
      const at = template.findIndex((p) => p.startsWith('{'))
      segments[at] = badId(rng, world, template[at - 1]!).id
      draft.target = segments.join('/') + (query === undefined ? '' : `?${query}`)
      draft.faults.push('path:bad-id')
      draft.reasons.add('path')
    })
  rng.pick(options)()
}

/** How the bytes travel: whole, in pieces, cut short, with a lying Content-Length, chunked (well or badly). */
interface Sent {
  readonly pieces: Piece[]
  readonly bytes: Buffer
  readonly answers: number
  readonly endAfterSend: boolean
  readonly unanswered: boolean
  readonly fault: string | null
}

/** Transport faults Bun refuses in the head, before any handler runs (a DELETE would otherwise be served on its head). */
const HEAD_REFUSED = new Set(['transport:length-twice', 'transport:bad-length', 'transport:length-and-chunked', 'transport:oversized-declared'])
/** Transport faults after which the server sees no body at all. */
const BODY_UNSEEN = new Set(['transport:body-without-length'])

function transport(rng: Rng, draft: Draft): Sent {
  const body = draft.body
  const headLines = (extra: Array<[string, string]>) =>
    Buffer.from(`${draft.method} ${draft.target} HTTP/1.1\r\n${[...draft.headers, ...extra].map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`, 'latin1')
  const whole = (extra: Array<[string, string]>, payload: Buffer | null) => Buffer.concat([headLines(extra), payload ?? Buffer.alloc(0)])
  const len = (n: number): Array<[string, string]> => [['Content-Length', String(n)]]
  // Heads Bun's parser refuses (bare LF, bytes after the request) test Bun more than Timbre: kept, but rarer.
  const r = rng.int(body === null ? 30 : 24)
  const one = (bytes: Buffer, fault: string | null, opts: Partial<{ answers: number; end: boolean; unanswered: boolean }> = {}) => ({
    pieces: [{ bytes }],
    bytes,
    answers: opts.answers ?? 1,
    endAfterSend: opts.end ?? false,
    unanswered: opts.unanswered ?? false,
    fault,
  })
  if (body === null) {
    if (r === 0) return one(Buffer.from(`${draft.method} ${draft.target} HTTP/1.1\n${draft.headers.map(([k, v]) => `${k}: ${v}\n`).join('')}\n`, 'latin1'), 'transport:bare-lf', { unanswered: true })
    if (r === 1) return one(whole([], null).subarray(0, 1 + rng.int(40)), 'transport:head-cut-short', { end: true, unanswered: true })
    if (r === 2) return one(Buffer.concat([whole([], null), Buffer.from(rng.pick(['GARBAGE\r\n\r\n', '\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n']))]), 'transport:garbage-after', { answers: 2, unanswered: true })
    if (r === 3) return one(whole(len(rng.pick([0, 5, 100])), rng.chance(0.5) ? Buffer.from('{}') : null), 'transport:length-on-bodyless', { unanswered: true, end: true })
    return fragmented(rng, whole([], null), rng.chance(0.2))
  }
  if (r < 10) return one(whole(len(body.length), body), null)
  if (r < 13) return fragmented(rng, whole(len(body.length), body), true)
  if (r === 13) return one(whole(len(body.length + 1 + rng.int(1000)), body), 'transport:body-cut-short', { end: true, unanswered: true })
  if (r === 14) return one(whole(len(Math.max(0, body.length - 1 - rng.int(Math.max(1, body.length - 1)))), body), 'transport:length-too-short', { answers: 2, unanswered: true })
  if (r === 15) return one(whole([['Transfer-Encoding', 'chunked']], chunked(rng, body, true)), 'transport:chunked')
  if (r === 16) return one(whole([['Transfer-Encoding', 'chunked']], chunked(rng, body, false)), 'transport:chunked-no-end', { end: true, unanswered: true })
  if (r === 17) return one(whole([...len(body.length), ['Transfer-Encoding', 'chunked']], chunked(rng, body, true)), 'transport:length-and-chunked', { unanswered: true })
  if (r === 18) return one(whole([['Transfer-Encoding', 'chunked']], Buffer.concat([Buffer.from(rng.pick(['zz\r\n', '-1\r\n', 'ffffffffffffffffff\r\n', '5\r\nab\r\n'])), body])), 'transport:bad-chunk-size', { unanswered: true, end: true })
  if (r === 19) return one(whole([...len(body.length), ...len(body.length + 1)], body), 'transport:length-twice', { unanswered: true })
  if (r === 20) return one(whole([['Content-Length', rng.pick(['-1', 'abc', '1e3', '0x10', '99999999999999999999999', '5 5', '+5'])]], body), 'transport:bad-length', { unanswered: true })
  if (r === 21) return one(whole(len(6 * 1024 * 1024 + rng.int(1e9)), body), 'transport:oversized-declared', { unanswered: true, end: true })
  if (r === 22) return one(whole([['Transfer-Encoding', rng.pick(['gzip, chunked', 'identity', 'chunked, chunked', 'xchunked'])]], chunked(rng, body, true)), 'transport:odd-transfer-encoding', { unanswered: true })
  return one(whole([], body), 'transport:body-without-length', { answers: 2, unanswered: true })
}

/** The body in random chunks, with extensions and a trailer now and then; `finished` sends the last chunk. */
function chunked(rng: Rng, body: Buffer, finished: boolean): Buffer {
  const parts: Buffer[] = []
  let at = 0
  while (at < body.length) {
    const n = Math.min(body.length - at, 1 + rng.int(64))
    const ext = rng.chance(0.1) ? ';ext=1' : ''
    parts.push(Buffer.from(`${n.toString(16)}${ext}\r\n`), body.subarray(at, at + n), Buffer.from('\r\n'))
    at += n
  }
  if (finished) parts.push(Buffer.from(rng.chance(0.1) ? '0\r\nX-Trailer: 1\r\n\r\n' : '0\r\n\r\n'))
  return Buffer.concat(parts)
}

function fragmented(rng: Rng, bytes: Buffer, spread: boolean): Sent {
  if (!spread) return { pieces: [{ bytes }], bytes, answers: 1, endAfterSend: false, unanswered: false, fault: null }
  const pieces: Piece[] = []
  let at = 0
  while (at < bytes.length) {
    const n = Math.min(bytes.length - at, 1 + rng.int(200))
    pieces.push({ bytes: bytes.subarray(at, at + n), delayMs: rng.chance(0.2) ? 1 + rng.int(20) : 0 })
    at += n
  }
  return { pieces, bytes, answers: 1, endAfterSend: false, unanswered: false, fault: 'transport:fragmented' }
}

/** Whether the API must refuse the request as it will be sent (Reason says when each reason holds). */
function refused(draft: Draft, op: Operation, sent: Sent): boolean {
  const r = draft.reasons
  const api = op.path.startsWith('/api/')
  const method = draft.method.toUpperCase()
  const sameRoute = draft.method === op.method || (draft.method === 'HEAD' && op.method === 'GET')
  const bodySeen = draft.body !== null && !BODY_UNSEEN.has(sent.fault ?? '')
  if (r.has('parser') || r.has('unknown-path') || r.has('method') || HEAD_REFUSED.has(sent.fault ?? '')) return true
  if (api && (r.has('credential') || r.has('path'))) return true
  // A route that reads a body refuses a spoiled one, and one that never came (parseBody: REQUIRED).
  if (sameRoute && op.hasBody && (r.has('body') || !bodySeen)) return true
  if (api && ['POST', 'PUT', 'PATCH'].includes(method) && bodySeen && r.has('content-type')) return true
  return sameRoute && r.has('idempotency')
}

/** The X-Request-Id request `index` of run `seed` sends (the server echoes a safe one and logs it). */
export const requestIdOf = (seed: number, index: number) => `fz-${seed}-${index}`

/** Request `index` of run `seed`. */
export function buildCase(world: FuzzWorld, seed: number, index: number): FuzzCase {
  const rng = rngFor(seed, index)
  const op = pickOperation(rng, world)
  const draft: Draft = { method: op.method, target: '', headers: [], body: null, faults: [], reasons: new Set(), parserRefusal: false }
  if (op.name === 'unknown path') {
    draft.faults.push('path:unknown')
    draft.reasons.add('unknown-path')
  }
  if (rng.chance(0.06)) {
    draft.method = rng.pick(OTHER_METHODS.filter((m) => m !== op.method))
    draft.faults.push(`method:${draft.method}`)
    // Another route may take that method on the same path (GET and PUT /clientes/{id}): only a method no route of the
    // path takes is a refusal, and the credential and body faults below decide the rest.
    const served = draft.method === 'HEAD' ? 'GET' : draft.method
    if (!world.ops.some((o) => o.path === op.path && o.method === served)) draft.reasons.add('method')
  }
  const hasPathIds = hasPathId(op)
  draft.target = fillIds(rng, world, op, draft) + queryFor(rng, op, draft.faults)
  hostHeader(rng, world, draft)
  credential(rng, world, op, draft, hasPathIds)
  if (op.method === 'POST' && op.path.endsWith('/dte')) {
    if (rng.chance(0.85)) draft.headers.push(['Idempotency-Key', uuidOf(rng)])
    else {
      draft.faults.push('header:bad-idempotency-key')
      draft.reasons.add('idempotency')
      // Two lines of the header reach the server joined by a comma: two valid keys are no key.
      if (rng.chance(0.3)) draft.headers.push(['Idempotency-Key', uuidOf(rng)], ['Idempotency-Key', uuidOf(rng)])
      else if (rng.chance(0.7)) draft.headers.push(['Idempotency-Key', rng.pick(['no-uuid', '', '123', 'ZZZZZZZZ-0000-0000-0000-000000000000'])])
    }
  }
  extraHeaders(rng, draft)
  // The server logs this id with the request: a 5xx seen only in its log (the client had gone) names its request.
  if (!draft.headers.some(([k]) => k === 'X-Request-Id')) draft.headers.push(['X-Request-Id', requestIdOf(seed, index)])
  if (op.hasBody || rng.chance(0.08)) {
    const spoiled = op.hasBody ? spoilBody(rng, world, op) : { text: JSON.stringify(anyJson(rng, 2)), fault: 'body:on-bodyless', refuses: false }
    draft.body = Buffer.isBuffer(spoiled.text) ? spoiled.text : Buffer.from(spoiled.text, 'utf8')
    draft.faults.push(spoiled.fault)
    if (spoiled.refuses) draft.reasons.add('body')
    else if (op.hasBody && world.schemas[op.name]?.additionalProperties === false && rng.chance(0.5)) {
      // The refusal comes from one member the schema does not take, so the rest of the body (nasty text, odd numbers,
      // duplicated keys) is still read and checked field by field.
      const text = draft.body.toString('utf8')
      if (/^\{.*\}$/s.test(text)) {
        const member = `${JSON.stringify(`campo_${rng.int(1000)}`)}:${JSON.stringify(anyJson(rng, 1))}`
        draft.body = Buffer.from(text === '{}' ? `{${member}}` : `${text.slice(0, -1)},${member}}`, 'utf8')
        draft.faults.push('body:unknown-field')
        draft.reasons.add('body')
      }
    }
    contentType(rng, draft)
  }
  const isWrite = WRITE_METHODS.has(draft.method.toUpperCase())
  let sent = transport(rng, draft)
  if (isWrite && !refused(draft, op, sent)) {
    forceRefusal(rng, world, op, draft)
    sent = transport(rng, draft)
  }
  if (sent.fault) draft.faults.push(sent.fault)
  return {
    index,
    op: op.name,
    method: draft.method,
    isWrite,
    faults: draft.faults,
    mustRefuse: refused(draft, op, sent),
    pieces: sent.pieces,
    bytes: sent.bytes,
    answers: sent.answers,
    endAfterSend: sent.endAfterSend,
    mayGoUnanswered: sent.unanswered || draft.parserRefusal || !/^[A-Z]+$/.test(draft.method) || ['CONNECT', 'PROPFIND', 'TRACE'].includes(draft.method),
    isHead: draft.method === 'HEAD',
  }
}
