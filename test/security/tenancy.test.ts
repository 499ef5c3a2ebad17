// DESIGN §4 "every query is scoped to the credential's company", generated from the route table (issue 18): company A
// makes one of every resource; company B, with its write key, calls EVERY operation of the served /docs/json. With an
// id in the path (A's id put there) the answer is 404 NOT_FOUND in the error envelope; reads without one answer 200 with
// nothing of A; writes without one act on B's own data, even when B sends what A sent (the same Idempotency-Key, cliente
// RUT, producto code, CAF, PFX, envelope), and their answers name nothing of A. Then A's every GET answers as before.
// A new operation fails here, by name, until it is given what it needs (an id of A, a body, a query) or is put on the
// allow-list below with the reason.
import { unzipSync } from 'fflate'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startReceiver, type Receiver } from '../support/receiver'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'
import { MARKER, provisionCompanyA, QUIET_SERVER, type CompanyA } from './company'
import { API, apiOperations, elysiaOperations, fillPath, hasPathId, type Operation } from './route-table'

let s: TestServer
let a: Tenant
let b: Tenant
let rx: Receiver
let A: CompanyA
let operations: Operation[]
/** B's own resources, by collection, from the 201 answers of its writes. */
const idsOfB: Record<string, string> = {}
/** Lists whose next-page cursor of A was sent by B. */
const cursorsTried: string[] = []

beforeAll(async () => {
  s = await startTestServer({ flags: QUIET_SERVER })
  a = await s.tenant(testRut(), `Empresa ${MARKER} SpA`)
  b = await s.tenant(testRut(), 'Empresa B SpA')
  rx = startReceiver()
  A = await provisionCompanyA(s, a, rx.url)
  operations = await apiOperations(s)
}, 60_000)
afterAll(async () => {
  await rx?.stop()
  await s?.stop()
})

/**
 * Operations with no id in the path and no company data: unauthenticated, outside the API prefix (DESIGN §12 "Health
 * and docs"). They are still called with B's key and their answers searched for A's data, but need no entry below.
 */
const NO_COMPANY_DATA = new Set(['GET /health', 'GET /ready'])

/** Bodies for operations on an id: valid for B's own resource, so only ownership can refuse them. */
const ID_BODIES: Record<string, () => unknown> = {
  [`PUT ${API}/clientes/{id}`]: () => ({ razon_social: 'Cambiado por B' }),
  [`PUT ${API}/productos/{id}`]: () => ({ nombre: 'Cambiado por B' }),
  [`POST ${API}/recibidos/{id}/acciones`]: () => ({ accion: 'ACD' }),
  [`POST ${API}/caf/{id}/anular`]: () => ({ motivo: 'Anulado por B' }),
}

/** Required query parameters, aimed at A's data (a search for A's marker). */
const QUERY: Record<string, Record<string, string>> = {
  q: { q: MARKER },
}
/** Filters that name A's data in lists, so a filter that escaped the company would find it. */
const LIST_FILTERS: Record<string, () => Record<string, string>> = {
  [`GET ${API}/dte`]: () => ({ rut_receptor: '76.086.428-5' }),
  [`GET ${API}/recibidos`]: () => ({ rut_emisor: a.empresa.rut }),
  [`GET ${API}/caf`]: () => ({ tipo_dte: '33' }),
}

/** Reads of a singleton B has not made yet (reads run before B's writes): anything but "none" would be A's. */
const READ_STATUS: Record<string, { status: number; code?: string }> = {
  [`GET ${API}/empresa/certificado`]: { status: 404, code: 'CERTIFICATE_NOT_FOUND' },
  // B issued no set: no libro, muestra or boleta of its own to give (never A's).
  [`GET ${API}/certificacion/libros/ventas`]: { status: 404, code: 'NOT_FOUND' },
  [`GET ${API}/certificacion/libros/compras`]: { status: 404, code: 'NOT_FOUND' },
  [`GET ${API}/certificacion/libros/guias`]: { status: 404, code: 'NOT_FOUND' },
  [`GET ${API}/certificacion/muestras`]: { status: 404, code: 'NOT_FOUND' },
  [`GET ${API}/certificacion/boletas/consumo-folios`]: { status: 404, code: 'NOT_FOUND' },
  // B's RCV was never read: its lists and files are 409, never A's copy.
  ...Object.fromEntries(['compras', 'ventas', 'compras.csv', 'ventas.csv', 'compras.xlsx', 'ventas.xlsx'].map((f) => [`GET ${API}/rcv/{periodo}/${f}`, { status: 409, code: 'RCV_NO_SINCRONIZADO' }])),
}

/**
 * Writes without an id act on the caller's own company. B sends what collides with A's data; the answer may be a
 * success or a refusal for B's own reasons, never A's record, a replay of A's answer or A's id in a 409's context.
 */
const OWN_WRITES: Record<string, { body: () => unknown; headers?: () => Record<string, string>; statuses: readonly number[] }> = {
  [`PUT ${API}/empresa`]: { body: () => ({ giro: 'Giro de B' }), statuses: [200] },
  // The same PFX A uploaded: certificates belong to a company, not to the signer's serial number.
  [`POST ${API}/empresa/certificado/pfx`]: { body: () => ({ pfx_base64: A.sent.pfxBase64, password: A.secrets.pfxPassword }), statuses: [201] },
  // A's CAF: issued to A's RUT, so B is refused for that (INVALID_CAF), not told A holds the range.
  [`POST ${API}/caf`]: { body: () => ({ tipo_dte: 33, caf_xml: A.sent.caf.xml }), statuses: [400] },
  // A's Idempotency-Key with A's body: keys are per company (DESIGN §12), so no replay of A's 201; B has no CAF.
  [`POST ${API}/dte`]: { body: () => A.sent.dteBody, headers: () => ({ 'Idempotency-Key': A.sent.idempotencyKey }), statuses: [422] },
  [`POST ${API}/clientes`]: { body: () => ({ rut: A.sent.clienteRut, razon_social: 'Cliente de B' }), statuses: [201] },
  [`POST ${API}/productos`]: { body: () => ({ nombre: 'Producto de B', codigo: A.sent.productoCodigo }), statuses: [201] },
  [`POST ${API}/webhooks`]: { body: () => ({ url: A.sent.webhookUrl.replace(MARKER, 'b'), events: ['dte.created'] }), statuses: [201] },
  [`PUT ${API}/empresa/intercambio`]: {
    body: () => ({
      inbound_email: A.sent.inboundEmail,
      imap: { host: '127.0.0.1', port: 9, tls: false, user: 'dte-b', password: 'clave-de-b' },
      smtp: { host: '127.0.0.1', port: 9, security: 'none', user: null, password: null, from: 'dte-b@intercambio.example.cl' },
    }),
    statuses: [200],
  },
  // B's own mailbox (saved just above in route order, or none): A's stays, as the snapshot proves.
  [`DELETE ${API}/empresa/intercambio`]: { body: () => undefined, statuses: [204, 404] },
  // A's envelope, addressed to A: new to B (201, refused for its receptor), never "already imported" (200) with A's documents.
  [`POST ${API}/recibidos/importar`]: { body: () => ({ xml_base64: A.sent.envelopeBase64 }), statuses: [201] },
  // Certification (DESIGN §15): A's set file is B's own set; B's other steps fail for B's reasons (no set issued, no
  // folios, no certificate), never with A's cases, documents or envíos.
  [`POST ${API}/certificacion/set`]: { body: () => ({ archivo_base64: A.sent.setBase64 }), statuses: [201] },
  [`POST ${API}/certificacion/set/emitir`]: { body: () => ({ enviar: false }), statuses: [404, 422] },
  [`POST ${API}/certificacion/simulacion`]: { body: () => ({ cantidad: 20 }), statuses: [422] },
  // A's own envelope is not the SII's test envelope for B.
  [`POST ${API}/certificacion/intercambio`]: { body: () => ({ archivo_base64: A.sent.envelopeBase64 }), statuses: [400] },
  [`POST ${API}/certificacion/boletas`]: { body: () => ({ casos: [{ caso: '1', documento: { tipo_dte: 39, detalle: [{ nombre: 'Boleta de B', cantidad: 1, precio: 1190 }] } }] }), statuses: [422] },
  [`POST ${API}/certificacion/libros/enviar`]: { body: () => undefined, statuses: [404] },
  // B asks for its own RCV (with A's PFX uploaded above, or none yet): a request of B's, never A's copy.
  [`POST ${API}/rcv/{periodo}/sincronizar`]: { body: () => undefined, statuses: [202, 422] },
  // B asks the SII for its own CAF of A's type (with A's PFX uploaded above, or none yet): B's request, never A's.
  [`POST ${API}/caf/solicitar`]: { body: () => ({ tipo_dte: 34, cantidad: 10 }), statuses: [202, 422] },
  [`PUT ${API}/empresa/folios-automaticos`]: { body: () => ({ activo: false, tipos: [34], cantidad: 10 }), statuses: [200] },
  ...Object.fromEntries(['set_pruebas', 'simulacion', 'intercambio', 'muestras', 'declaracion'].map((etapa) => [`POST ${API}/certificacion/etapas/${etapa}`, { body: () => ({ estado: 'pendiente' }), statuses: [200] }])),
}

/** Everything that identifies A's data in an answer: its ids, its company's id and RUT, the marker in its texts. */
function tracesOfA(text: string): string[] {
  const needles = [...Object.values(A.ids), a.empresa.id, a.empresa.rut, MARKER, A.sent.inboundEmail, A.secrets.webhookSecret.slice(0, -4)]
  return needles.filter((n) => text.includes(n))
}

function queryFor(op: Operation): string {
  const params: Record<string, string> = { ...LIST_FILTERS[op.name]?.() }
  for (const name of op.requiredQuery) {
    const value = QUERY[name]?.[name]
    if (value === undefined) throw new Error(`${op.name}: required query parameter "${name}" has no value in test/security/tenancy.test.ts QUERY`)
    params[name] = value
  }
  const qs = new URLSearchParams(params).toString()
  return qs === '' ? '' : `?${qs}`
}

/** One call as `who`, answered as status and text (binary bodies as latin1, enough to search ids in). */
async function call(op: Operation, key: string, ids: Readonly<Record<string, string>>, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.url}${fillPath(op, ids)}${queryFor(op)}`, {
    method: op.method,
    headers: { 'X-Api-Key': key, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const bytes = Buffer.from(await res.arrayBuffer())
  const type = res.headers.get('content-type') ?? ''
  const isJson = type.includes('json')
  return { status: res.status, text: isJson ? bytes.toString('utf8') : type.includes('spreadsheetml') ? workbookText(bytes) : bytes.toString('latin1'), json: isJson && bytes.length > 0 ? JSON.parse(bytes.toString('utf8')) : undefined }
}

/**
 * A workbook's parts as text, without its creation time: the zip stamps each part with the time it was written, so
 * two downloads of one register differ in bytes but not in content; and compressed bytes would hide A's traces.
 */
function workbookText(bytes: Uint8Array): string {
  const parts = unzipSync(bytes)
  return Object.keys(parts).sort().filter((name) => name !== 'docProps/core.xml').map((name) => `${name}\n${Buffer.from(parts[name]!).toString('utf8')}`).join('\n')
}

/** A's records as A reads them through every GET of the route table: what B's attempts must leave as they were. */
async function snapshotOfA(): Promise<Record<string, { status: number; body: string }>> {
  const snapshot: Record<string, { status: number; body: string }> = {}
  for (const op of operations.filter((o) => o.method === 'GET' && !NO_COMPANY_DATA.has(o.name))) {
    const res = await call(op, a.readKey, A.ids)
    snapshot[op.name] = { status: res.status, body: res.text }
  }
  return snapshot
}

const ENVELOPE_KEYS = ['action', 'code', 'context', 'details', 'error', 'message', 'severity']

describe("another company's data (DESIGN §4), every operation of the route table", () => {
  test('the served document lists every API route Elysia serves (the generated checks miss none)', () => {
    const documented = new Set(operations.map((o) => o.name))
    const served = elysiaOperations(s)
    expect(served.length).toBeGreaterThanOrEqual(38)
    expect(served.filter((r) => !documented.has(r))).toEqual([])
  })

  test('every operation: with an id of A, 404 NOT_FOUND; without one, only B data; A keeps everything', async () => {
    expect(operations.length).toBeGreaterThanOrEqual(40)
    const before = await snapshotOfA()
    // The snapshot is A's real data: every GET reached it (a 404 here would make "unchanged" prove nothing).
    expect(Object.entries(before).filter(([, r]) => r.status !== 200).map(([name, r]) => `${name} ${r.status}`)).toEqual([])
    const failures: string[] = []
    // Reads first, so B's own writes (its cliente, its imported envelope) cannot colour what a read of B shows.
    const ordered = [...operations.filter((o) => o.method === 'GET'), ...operations.filter((o) => o.method !== 'GET')]
    for (const op of ordered) {
      const problem = await tryAsB(op)
      if (problem) failures.push(`${op.name}: ${problem}`)
    }
    // Nested ids: B's own parent with A's child (`/webhooks/{B's}/deliveries/{A's}`), once B has made its resources.
    const nested = operations.filter((o) => (o.path.match(/\{/g) ?? []).length >= 2)
    expect(nested.length).toBeGreaterThanOrEqual(1)
    for (const op of nested) {
      const problem = await tryAsB(op, mixedIds(op))
      if (problem) failures.push(`${op.name} (B's parent, A's child): ${problem}`)
    }
    expect(failures).toEqual([])
    expect(cursorsTried).toContain(`GET ${API}/dte`)
    const after = await snapshotOfA()
    expect(Object.keys(after).filter((name) => after[name]!.body !== before[name]!.body || after[name]!.status !== before[name]!.status)).toEqual([])
  }, 60_000)
})

/** For an operation with nested ids: B's ids for every collection but the last, A's for the last. */
function mixedIds(op: Operation): Record<string, string> {
  const collections = op.path.split('/').filter((_, i, parts) => parts[i + 1]?.startsWith('{'))
  const ids: Record<string, string> = { [collections.at(-1)!]: A.ids[collections.at(-1)!]! }
  for (const c of collections.slice(0, -1)) {
    if (!idsOfB[c]) throw new Error(`${op.name}: B has no "${c}" of its own; make one in OWN_WRITES (its 201 answer's id is kept)`)
    ids[c] = idsOfB[c]!
  }
  return ids
}

/** B calls `op`; what is wrong with the answer, or null. Throws, naming the operation, when it cannot be tried. */
async function tryAsB(op: Operation, ids: Readonly<Record<string, string>> = A.ids): Promise<string | null> {
  if (hasPathId(op)) {
    const bodyOf = ID_BODIES[op.name]
    if (op.hasBody && !bodyOf) throw new Error(`${op.name} takes a body: give it one valid for B's own resource in ID_BODIES`)
    const res = await call(op, b.writeKey, ids, bodyOf?.())
    if (res.status !== 404 || res.json?.code !== 'NOT_FOUND') return `${res.status} ${res.text.slice(0, 200)}`
    if (JSON.stringify(Object.keys(res.json).sort()) !== JSON.stringify(ENVELOPE_KEYS)) return `not the error envelope: ${res.text}`
    return tracesOfA(res.text).length > 0 ? `the 404 names A's data: ${tracesOfA(res.text)}` : null
  }
  if (op.method === 'GET') {
    const res = await call(op, b.writeKey, {})
    const expected = READ_STATUS[op.name] ?? { status: 200 }
    if (res.status !== expected.status || (expected.code && res.json?.code !== expected.code)) return `${res.status} (expected ${expected.status}) ${res.text.slice(0, 200)}`
    const found = tracesOfA(res.text)
    if (found.length > 0) return `B's answer carries A's data: ${found.join(', ')}`
    // B has nothing yet: a count above 0 counts A's records.
    if (res.json?.total_count !== undefined && res.json.total_count !== 0) return `total_count ${res.json.total_count} for a company with none`
    return op.query.includes('cursor') ? withCursorOfA(op) : null
  }
  if (NO_COMPANY_DATA.has(op.name)) return null
  const write = OWN_WRITES[op.name]
  if (!write) throw new Error(`${op.name} writes without an id: say in OWN_WRITES what B sends that collides with A's data, or why it needs none`)
  const res = await call(op, b.writeKey, {}, write.body(), write.headers?.())
  if (res.status === 201 && typeof res.json?.id === 'string') idsOfB[op.path.split('/').at(-1)!] = res.json.id
  if (!write.statuses.includes(res.status)) return `${res.status} (expected ${write.statuses.join(' or ')}) ${res.text.slice(0, 300)}`
  const found = tracesOfA(res.text).filter((t) => !sentByB(op, t))
  return found.length > 0 ? `B's answer carries A's data: ${found.join(', ')}` : null
}

/** A page cursor A was given, sent by B: B's own (empty) page or a 400 on `cursor`, never A's next page. */
async function withCursorOfA(op: Operation): Promise<string | null> {
  const page = (key: string, query: string) => s.request('GET', `${op.path}?${query}`, { headers: { 'X-Api-Key': key } })
  const cursor = (await page(a.readKey, 'limit=1')).json?.next_cursor as string | null | undefined
  if (!cursor) return null
  cursorsTried.push(op.name)
  const res = await page(b.writeKey, new URLSearchParams({ limit: '1', cursor }).toString())
  if (res.status === 400 && res.json?.details?.[0]?.field === 'cursor') return null
  if (res.status !== 200) return `with A's cursor: ${res.status} ${res.text.slice(0, 200)}`
  const found = tracesOfA(res.text)
  return found.length > 0 ? `with A's cursor, B's answer carries A's data: ${found.join(', ')}` : null
}

/** What B itself sent and may see echoed: A's RUT inside A's CAF or envelopes, A's mailbox address. */
function sentByB(op: Operation, trace: string): boolean {
  if (trace === a.empresa.rut) return [`POST ${API}/caf`, `POST ${API}/recibidos/importar`, `POST ${API}/certificacion/intercambio`].includes(op.name)
  return trace === A.sent.inboundEmail && op.name === `PUT ${API}/empresa/intercambio`
}
