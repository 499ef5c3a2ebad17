// Issue 18, "Hostile input", short form (the long one: test/soak/fuzz-soak.ts). A real server on 127.0.0.1 over a real
// SQLite file, company A with one of every resource (company.ts); then:
// - the raw HTTP fuzzer (fuzz/): hostile requests over bare sockets to every operation of the served /docs/json, slow
//   clients a byte a second, /health probed all along; no 5xx (answered or logged), every error in the envelope, no
//   hostile request accepted, /health always answering, every table of timbre.db unchanged;
// - fast-check properties: any JSON body that is not a valid request, to every write, answers 4xx in the envelope with
//   details at paths that exist in the body or the schema; any string as a path id is 404; any query values are 200 or
//   400 at a parameter the operation takes; and nothing stored changes.
// - then, on bodies built from each schema (valid or not, so they may be accepted and change data): never a 5xx, and
//   every refusal in the envelope with details at real places.
// A failure prints the seed; FUZZ_SEED=<seed> repeats it, FUZZ_REQUESTS and FUZZ_RUNS make it longer (and
// `bun test/soak/fuzz-soak.ts --seed <seed> --only <i>` replays one raw request against the compiled binary).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { startReceiver, type Receiver } from '../support/receiver'
import { startTestServer, testRut, type TestServer } from '../support/server'
import { MARKER, type CompanyA } from './company'
import { findingsOf, runFuzz, summaryLine, envelopeProblem } from './fuzz/http-fuzzer'
import type { FuzzWorld, JsonSchema } from './fuzz/mutations'
import type { RawAnswer } from './fuzz/raw-http'
import { diffStore, snapshotStore } from './fuzz/state'
import { buildWorld, dbPathOf, FUZZ_SERVER_FLAGS } from './fuzz/world'
import { API, hasPathId, KIND_PARAMS, type Operation } from './route-table'

let s: TestServer
let rx: Receiver
let world: FuzzWorld
let A: CompanyA
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31))
/** FUZZ_RUNS=10 runs each property ten times as long (exploring; npm test keeps 1). */
const RUNS = Number(process.env.FUZZ_RUNS ?? 1)

beforeAll(async () => {
  s = await startTestServer({ flags: FUZZ_SERVER_FLAGS })
  const a = await s.tenant(testRut(), `Empresa ${MARKER} SpA`)
  const b = await s.tenant(testRut(), 'Empresa B SpA')
  rx = startReceiver()
  ;({ world, A } = await buildWorld({ server: s, a, writeKeyB: b.writeKey, receiverUrl: rx.url, api: API }))
  // Nothing changes the store behind the fuzzer's back: the delivery job runs hourly (FUZZ_SERVER_FLAGS; its first run
  // an hour after start), so the provisioning's ping and dte.created stay pending, unsent.
  expect(rx.received).toHaveLength(0)
  console.log(`fuzz.test.ts: seed ${SEED} (repeat with FUZZ_SEED=${SEED})`)
}, 60_000)
afterAll(async () => {
  await rx?.stop()
  await s?.stop()
})

/** Whether `field` names a place in `node`: members whose names hold dots themselves ("a.b") included. */
function inBody(field: string, node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false
  return Object.keys(node).some((k) => field === k || (field.startsWith(`${k}.`) && inBody(field.slice(k.length + 1), (node as Record<string, unknown>)[k])))
}

/** Whether a dot path exists in the request schema (numeric segments are list items). */
function inSchema(field: string, schema: JsonSchema | undefined): boolean {
  let sch = schema
  for (const part of field.split('.')) {
    sch = /^\d+$/.test(part) ? sch?.items : (sch?.properties?.[part] ?? sch?.anyOf?.map((a) => a.properties?.[part]).find(Boolean))
    if (sch === undefined) return false
  }
  return true
}

/** Whether a detail's field exists in the body sent or in the schema; `body` and the headers name themselves. */
const pathExists = (field: string, body: unknown, schema: JsonSchema | undefined) =>
  ['body', 'Idempotency-Key'].includes(field) || inBody(field, body) || inSchema(field, schema)

const asRaw = (res: Response, text: string): RawAnswer => ({
  status: res.status,
  reason: res.statusText,
  headers: Object.fromEntries([...res.headers.entries()].map(([k, v]) => [k, [v]])),
  body: Buffer.from(text),
})

/** Bodies no write may accept: not an object, or an object with a member its schema does not take. */
const hostileBody = (schema: JsonSchema | undefined) => {
  const known = Object.keys(schema?.properties ?? {})
  const value = fc.jsonValue({ maxDepth: 3 })
  const unknownKey = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((k) => !known.includes(k))
  const notObject = value.filter((v) => v === null || typeof v !== 'object' || Array.isArray(v))
  const known2 = known.length > 0 ? fc.dictionary(fc.constantFrom(...known), value, { maxKeys: 4 }) : fc.constant({})
  const withUnknown = fc.tuple(known2, unknownKey, value).map(([base, k, v]) => ({ ...base, [k]: v }))
  // A known member of the wrong kind where only an object or list is taken (a word is never one).
  return schema?.additionalProperties === false ? fc.oneof(notObject, withUnknown) : notObject
}

const NASTY = ['', ' ', '\u0000', '\u0001\u001b[31m', 'ñandú', '𝕏💩👩‍👩‍👧', '\ud800', 'e\u0301', '\u202eabc', '\u200b\ufeff', "'; DROP TABLE dtes; --", '<x/>', 'x'.repeat(300)]

/** Values for `schema`: mostly of its types (nasty text, huge and odd numbers), now and then any JSON at all. */
function fromSchema(schema: JsonSchema | undefined, depth: number): fc.Arbitrary<unknown> {
  const any = fc.jsonValue({ maxDepth: 2 })
  if (!schema || depth < 0) return any
  const own: Array<fc.Arbitrary<unknown>> = []
  const types = [schema.type ?? []].flat()
  const consts = (schema.anyOf ?? []).map((a) => (a as { const?: unknown }).const).filter((c) => c !== undefined)
  if (consts.length > 0) own.push(fc.constantFrom(...consts))
  for (const a of schema.anyOf ?? []) if ((a as { const?: unknown }).const === undefined) own.push(fromSchema(a, depth))
  if (types.includes('string')) own.push(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 20 }), fc.constantFrom(...NASTY)))
  if (types.includes('integer') || types.includes('number'))
    own.push(fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -1, 2 ** 53 + 2, -(2 ** 63), 1e308, 5e-324, 0.5)))
  if (types.includes('boolean')) own.push(fc.boolean())
  if (types.includes('null') || schema.nullable) own.push(fc.constant(null))
  if (types.includes('array') || schema.items) own.push(fc.array(fromSchema(schema.items, depth - 1), { maxLength: 3 }))
  if (types.includes('object') || schema.properties) {
    const props = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, fromSchema(v, depth - 1)]))
    own.push(fc.record(props, { requiredKeys: schema.required?.filter((k) => k in props) ?? [] }))
  }
  return own.length === 0 ? any : fc.oneof({ arbitrary: fc.oneof(...own), weight: 9 }, { arbitrary: any, weight: 1 })
}

describe('hostile input', () => {
  test('raw fuzzer: no 5xx, every error in the envelope, nothing hostile accepted, /health up, nothing stored changes', async () => {
    const summary = await runFuzz({
      world,
      seed: SEED,
      requests: Number(process.env.FUZZ_REQUESTS ?? 2500),
      concurrency: 4,
      slowClients: 4,
      dbPath: dbPathOf(s.dataDir),
      stateEvery: 500,
      serverLog: () => s.logs,
      replayCommand: `FUZZ_SEED=${SEED}: bun test/soak/fuzz-soak.ts --seed ${SEED} --only`,
      progress: (line) => line.startsWith('FINDING') && console.log(line),
      progressEvery: 1e9,
    })
    console.log(summaryLine(summary))
    expect(summary.findings.map((f) => `${f.kind} ${f.index ?? ''} ${f.message}`)).toEqual([])
    expect(findingsOf(summary)).toBe(0)
    // The run reached every operation of the route table, and the checks ran.
    expect(world.ops.map((o) => o.name).filter((name) => !summary.operations[name])).toEqual([])
    expect(summary.healthProbes).toBeGreaterThan(0)
    expect(summary.rowsWatched).toBeGreaterThan(20)
    expect(summary.slowStarted).toBeGreaterThan(0)
  }, 180_000)

  test('properties: hostile JSON bodies, path ids and query values; nothing stored changes', async () => {
    const before = snapshotStore(dbPathOf(s.dataDir))
    const writes = world.ops.filter((o) => o.hasBody)
    const withIds = world.ops.filter((o) => hasPathId(o))
    // Lists and searches: the reads that take query parameters (a write's switch, like ?reemplazar, is its own test's).
    const withQuery = world.ops.filter((o) => o.method === 'GET' && o.query.length > 0 && !o.path.includes('{'))
    const call = async (op: Operation, path: string, init: { body?: string; headers?: Record<string, string> } = {}) => {
      const res = await fetch(`${s.url}${path}`, {
        method: op.method,
        headers: { 'X-Api-Key': world.keys.writeA, 'Idempotency-Key': crypto.randomUUID(), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
        body: init.body,
      })
      const text = await res.text()
      return { res, text, json: text === '' ? undefined : (JSON.parse(text) as { code: string; details: Array<{ field: string; code: string }> }) }
    }
    const fill = (op: Operation, id?: string) =>
      op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
        const kind = KIND_PARAMS[name]
        if (kind) return kind()
        const collection = op.path.split('/')[op.path.split('/').indexOf(`{${name}}`) - 1]!
        return id ?? world.ids[collection]!
      })

    // 1. Any JSON body that is not a valid request, to every write: 4xx in the envelope, details that name real places.
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...writes).chain((op) => fc.tuple(fc.constant(op), hostileBody(world.schemas[op.name]))),
        async ([op, body]) => {
          const { res, text, json } = await call(op, fill(op), { body: JSON.stringify(body) })
          expect(res.status).toBeGreaterThanOrEqual(400)
          expect(res.status).toBeLessThan(500)
          expect(envelopeProblem(asRaw(res, text))).toBeNull()
          if (json!.code === 'VALIDATION_ERROR') expect(json!.details.length).toBeGreaterThan(0)
          for (const d of json!.details) expect({ field: d.field, exists: pathExists(d.field, body, world.schemas[op.name]) }).toEqual({ field: d.field, exists: true })
        },
      ),
      { seed: SEED, numRuns: 300 * RUNS },
    )

    // 2. Any string as a path id (DESIGN §12: a malformed id is 404 like an unknown one), every operation on an id.
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...withIds), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }), async (op, id) => {
        if (Object.values(world.ids).some((real) => real.toLowerCase() === id.toLowerCase()) || id === '.' || id === '..') return
        const { res, text, json } = await call(op, fill(op, encodeURIComponent(id)), op.hasBody ? { body: JSON.stringify(world.bodies[op.name]?.() ?? {}) } : {})
        expect({ id, status: res.status, code: json?.code }).toEqual({ id, status: 404, code: 'NOT_FOUND' })
        expect(envelopeProblem(asRaw(res, text))).toBeNull()
      }),
      { seed: SEED, numRuns: 150 * RUNS },
    )

    // 3. Any values for the query parameters of every list and search: 200, or 400 naming a parameter the operation takes.
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...withQuery).chain((op) => fc.tuple(fc.constant(op), fc.dictionary(fc.constantFrom(...op.query), fc.string({ unit: 'grapheme', maxLength: 30 }), { minKeys: 1 }))),
        async ([op, params]) => {
          const { res, text, json } = await call(op, `${op.path}?${new URLSearchParams(params)}`)
          expect([200, 400]).toContain(res.status)
          if (res.status === 400) {
            expect(envelopeProblem(asRaw(res, text))).toBeNull()
            for (const d of json!.details) expect(op.query).toContain(d.field.split('.')[0]!)
          }
        },
      ),
      { seed: SEED, numRuns: 150 * RUNS },
    )

    expect(diffStore(before, snapshotStore(dbPathOf(s.dataDir)))).toEqual([])
  }, 120_000)

  // After the checks that nothing changes: these bodies may be valid, and then they are stored.
  test('property: bodies built from each schema, valid or not, are never a 5xx; refusals name real places', async () => {
    // POST /webhooks resolves the host of a URL at registration: random names would wait on DNS, not on Timbre.
    const writes = world.ops.filter((o) => o.hasBody && o.name !== `POST ${API}/webhooks`)
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...writes).chain((op) => fc.tuple(fc.constant(op), fromSchema(world.schemas[op.name], 3))),
        async ([op, body]) => {
          const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => world.ids[op.path.split('/')[op.path.split('/').indexOf(`{${name}}`) - 1]!]!)
          const res = await fetch(`${s.url}${path}`, {
            method: op.method,
            headers: { 'X-Api-Key': world.keys.writeA, 'Idempotency-Key': crypto.randomUUID(), 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
          const text = await res.text()
          expect({ op: op.name, status: res.status }).toEqual({ op: op.name, status: res.status < 500 ? res.status : -1 })
          if (res.status < 400) return
          expect(envelopeProblem(asRaw(res, text))).toBeNull()
          for (const d of (JSON.parse(text) as { details: Array<{ field: string }> }).details)
            expect({ field: d.field, exists: pathExists(d.field, body, world.schemas[op.name]) }).toEqual({ field: d.field, exists: true })
        },
      ),
      { seed: SEED, numRuns: 300 * RUNS },
    )
    expect(s.logs.filter((l) => l.level === 'error')).toEqual([])
  }, 120_000)

  // Last, as it changes A's data: the watch over the store sees a write the API accepted, so its silence above means
  // something. One valid request per table kind: an update in place, and a soft delete.
  test('the store watch sees an accepted write', async () => {
    const before = snapshotStore(dbPathOf(s.dataDir))
    const headers = { 'X-Api-Key': world.keys.writeA, 'content-type': 'application/json' }
    expect((await fetch(`${s.url}${API}/empresa`, { method: 'PUT', headers, body: JSON.stringify({ giro: 'Otro giro' }) })).status).toBe(200)
    expect((await fetch(`${s.url}${API}/productos/${A.ids.productos}`, { method: 'DELETE', headers })).status).toBe(204)
    const tables = new Set(diffStore(before, snapshotStore(dbPathOf(s.dataDir)), 1000).map((c) => `${c.kind} ${c.table}`))
    // The search index's own tables change with the producto (FTS5 shadow tables are tables like any other).
    expect([...tables].filter((t) => !t.includes('_fts')).sort()).toEqual(['changed empresas', 'changed productos'])
    expect([...tables].some((t) => t.includes('productos_fts'))).toBe(true)
  })
})
