// The mixed load of issue 18 ("100 000 mixed requests from 64 clients over several companies: zero 5xx, answers within
// their targets, memory flat"), shared by its benchmark (bench/load.ts: the figures) and its short form in npm test
// (test/cli/load-short.test.ts: the checks, no timings). Companies are made as an operator makes them (the binary's
// `empresa create` and `apikey create`), then equipped over HTTP as an integrator does (certificate, one CAF per tipo).
// Closed-loop clients, each bound to one company, draw their next request from a seeded mix: issuance of seven tipos
// (some with auto_send, so the SII jobs submit and track), idempotent replays, lists with filters and cursors, reads,
// XML and PDFs, clientes and productos created and searched, catalog reads, /health, and a share of invalid requests.
// Every answer is checked against what its kind must get: the status, the error envelope of every 4xx, the document a
// replay or a read must return. After the run checkStored reads the data dir: every 201 stored, nothing else.
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { santiagoDate } from '../../src/clock'
import type { EmitirDte, TipoDte } from '../../src/domain/emision'
import { computeDv } from '../../src/domain/rut'
import { runBinary } from './binary'
import { exportPfx, makeCertificate, makeTestCaf } from './pki'
import { prng } from './prng'

const API = '/api/v1/billing'

export interface LoadCompany {
  readonly index: number
  readonly id: string
  readonly rut: string
  readonly razonSocial: string
  readonly writeKey: string
  readonly readKey: string
}

/** The tipos the mix issues, and how often (per 100 issuances). 56 and 61 reference a 33 of the same company. */
export const MIX_TIPOS: ReadonlyArray<readonly [TipoDte, number]> = [
  [33, 45],
  [39, 20],
  [34, 7],
  [41, 7],
  [52, 7],
  [61, 8],
  [56, 6],
]

/** The kinds of request, and how many of every 1 000 draws are of each (a retry draw sends two requests). bench/README.md, "Load", explains the choice. */
export const MIX_WEIGHTS = {
  'dte.issue': 200, // POST /dte, auto_send false
  'dte.issue.auto_send': 40, // POST /dte, auto_send true: the submission and tracking jobs take them to the simulator
  'dte.replay': 10, // the same Idempotency-Key and body again: the stored 201, same document
  'dte.retry': 10, // two requests: an issuance sent twice at once (a client retrying before the first answer came)
  'dte.list': 150, // GET /dte with a filter (or none), first page
  'dte.list.next': 50, // GET /dte with the next_cursor of an earlier page
  'dte.get': 120, // GET /dte/{id}
  'dte.xml': 20, // GET /dte/{id}/xml
  'dte.pdf': 5, // GET /dte/{id}/pdf
  'cliente.create': 30,
  'cliente.search': 40,
  'producto.create': 30,
  'producto.search': 40,
  'catalog.read': 80, // GET /clientes, /productos, /clientes/{id}, /productos/{id}, /empresa, /caf
  health: 50, // GET /health
  invalid: 125, // one of INVALID: each must be its 4xx, in the error envelope, and store nothing
} as const
export type MixKind = keyof typeof MIX_WEIGHTS
export const MIX_KINDS = Object.keys(MIX_WEIGHTS) as MixKind[]

const rutOf = (body: number) => `${body}-${computeDv(String(body))}`

/**
 * `count` companies in `dataDir`, each with a write key and a read key, made by the binary's CLI (the server must not
 * be running yet: bench/issuance.ts does the same).
 */
export function createLoadCompanies(dataDir: string, count: number): Array<Omit<LoadCompany, 'id'>> {
  return Array.from({ length: count }, (_, index) => {
    const rut = rutOf(76_100_000 + index * 1_117)
    const razonSocial = `Comercial Carga ${index + 1} SpA`
    const cli = (args: string[]) => {
      const r = runBinary([...args, '--data-dir', dataDir])
      if (r.code !== 0) throw new Error(`timbre ${args.join(' ')}: ${r.stderr}`)
      return r.json<Record<string, unknown>>()
    }
    cli(['empresa', 'create', '--rut', rut, '--razon-social', razonSocial, '--giro', 'Venta de artículos de ferretería', '--acteco', '475200', '--direccion', `Av. Matta ${1000 + index}`, '--comuna', 'Santiago', '--ciudad', 'Santiago'])
    const writeKey = String(cli(['apikey', 'create', '--empresa', rut, '--write', '--nombre', 'carga']).key)
    const readKey = String(cli(['apikey', 'create', '--empresa', rut, '--nombre', 'lectura']).key)
    return { index, rut, razonSocial, writeKey, readKey }
  })
}

/**
 * Each company's own signing certificate (its own RSA key) and one CAF of `folios` folios for every tipo of the mix,
 * uploaded to the running server; also reads the company's id (GET /empresa). Throws unless every upload is 201.
 */
export async function equipLoadCompanies(url: string, companies: ReadonlyArray<Omit<LoadCompany, 'id'>>, folios: number): Promise<LoadCompany[]> {
  const equipped: LoadCompany[] = []
  for (const c of companies) {
    const h = { 'X-Api-Key': c.writeKey, 'content-type': 'application/json' }
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${url}${API}${path}`, { method: 'POST', headers: h, body: JSON.stringify(body) })
      if (res.status !== 201) throw new Error(`POST ${path} for ${c.rut}: ${res.status} ${await res.text()}`)
    }
    const signer = makeCertificate({ rut: '7880442-4', commonName: `FIRMANTE CARGA ${c.index + 1}`, keySlot: 40 + c.index, notBefore: new Date(Date.now() - 30 * 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000) })
    await post('/empresa/certificado/pfx', { pfx_base64: Buffer.from(exportPfx(signer, 'carga', '3des')).toString('base64'), password: 'carga' })
    for (const [tipo] of MIX_TIPOS) {
      const caf = makeTestCaf({ rut: c.rut, razonSocial: c.razonSocial, tipoDte: tipo, folioDesde: 1, folioHasta: folios, fechaAutorizacion: santiagoDate(new Date(Date.now() - 86_400_000)) })
      await post('/caf', { tipo_dte: tipo, caf_xml: caf.xml })
    }
    const empresa = await fetch(`${url}${API}/empresa`, { headers: { 'X-Api-Key': c.readKey } })
    if (empresa.status !== 200) throw new Error(`GET /empresa for ${c.rut}: ${empresa.status}`)
    equipped.push({ ...c, id: String(((await empresa.json()) as { id: string }).id) })
  }
  return equipped
}

/** Folios each tipo's CAF needs for `requests` mixed requests over `companies`, with room to spare. */
export function foliosFor(requests: number, companies: number): number {
  const issuances = (requests * (MIX_WEIGHTS['dte.issue'] + MIX_WEIGHTS['dte.issue.auto_send'])) / 1000
  return Math.max(200, Math.ceil((issuances / companies) * 0.6) + 100)  // 33 takes 45 % of a company's issuances; 0.6 leaves margin
}

const RECEPTORES = [
  { rut: '76.086.428-5', razon_social: 'Ferretería y Construcción Ñuble Limitada', giro: 'Venta de materiales de construcción', direccion: 'Av. Libertador Bernardo O’Higgins 1234', comuna: 'Chillán', ciudad: 'Chillán' },
  { rut: '76.555.835-2', razon_social: 'Comercializadora Ñuñoa Limitada', giro: 'Venta al por menor de artículos de ferretería', direccion: 'Av. Irarrázaval 2345, oficina 12', comuna: 'Ñuñoa', ciudad: 'Santiago' },
  { rut: '96.790.240-3', razon_social: 'Constructora Los Andes S.A.', giro: 'Construcción de edificios', direccion: 'Los Militares 5620', comuna: 'Las Condes', ciudad: 'Santiago' },
] as const
const CONSUMIDOR_FINAL = { rut: '66666666-6', razon_social: 'Consumidor final' }

/** A valid issuance request of `tipo`; `ref` is a 33 of the same company for the notes (any folio: not checked to exist). */
export function issuanceBody(tipo: TipoDte, n: number, rand: () => number, ref: { folio: number; fecha: string }): EmitirDte {
  const receptor = { ...RECEPTORES[Math.floor(rand() * RECEPTORES.length)]! }
  const qty = 1 + Math.floor(rand() * 5)
  const metadata = { carga: n }
  switch (tipo) {
    case 39:
    case 41:
      return { tipo_dte: tipo, receptor: CONSUMIDOR_FINAL, detalle: [{ nombre: 'Empanada de pino', cantidad: qty, precio: 2500 }, { nombre: 'Bebida 500 cc', cantidad: 1, precio: 1500 }], metadata }
    case 34:
      return { tipo_dte: 34, receptor, detalle: [{ nombre: 'Asesoría contable — mes', cantidad: 1, precio: 150_000 + qty * 10_000 }], metadata }
    case 52:
      return { tipo_dte: 52, receptor, ind_traslado: 1, tipo_despacho: 2, detalle: [{ nombre: 'Saco de cemento 25 kg', cantidad: 10 * qty, unidad: 'UN', precio: 4590 }], metadata }
    case 56:
      return {
        tipo_dte: 56, receptor, detalle: [{ nombre: 'Intereses por mora', cantidad: 1, precio: 1000 * qty }],
        referencias: [{ tipo_doc_ref: 33, folio_ref: ref.folio, fecha_ref: ref.fecha, codigo_ref: 3, razon_ref: 'Intereses por pago atrasado' }], metadata,
      }
    case 61:
      return {
        tipo_dte: 61, receptor, detalle: [{ nombre: 'Martillo carpintero 16 oz (devolución)', cantidad: qty, precio: 8990 }],
        referencias: [{ tipo_doc_ref: 33, folio_ref: ref.folio, fecha_ref: ref.fecha, codigo_ref: 3, razon_ref: 'Devolución de mercadería' }], metadata,
      }
    default:
      return {
        tipo_dte: tipo, receptor,
        detalle: [{ nombre: 'Martillo carpintero 16 oz', cantidad: qty, precio: 8990, unidad: 'UN' }, { nombre: 'Clavos 2½" (caja 1 kg)', cantidad: 2, precio: 2490, descuento_pct: 10 }],
        metadata,
      }
  }
}

/** The invalid requests of the mix: what each sends, and the one status it must get. */
export const INVALID = [
  'no-credential', 'unknown-key', 'read-key-writes', 'bad-rut', 'malformed-json', 'no-idempotency-key', 'other-company-dte', 'unknown-dte',
  'bad-cursor', 'limit-out-of-range', 'bad-estado', 'method-not-allowed', 'unknown-route', 'cliente-rut-exists', 'idempotency-mismatch', 'empty-search',
] as const
export type InvalidKind = (typeof INVALID)[number]

interface Issued {
  readonly id: string
  readonly folio: number
  readonly tipo: TipoDte
  readonly key: string
  readonly body: string
}

/** What the clients of one company share: what it has issued and created so far, and cursors to follow. */
interface CompanyState {
  readonly company: LoadCompany
  readonly issued: Issued[]
  readonly facturas: Issued[]
  readonly clientes: Array<{ id: string; rut: string }>
  readonly productos: string[]
  readonly cursors: string[]
  nextCliente: number
  nextProducto: number
}

interface ListedDte {
  readonly id: string
  readonly tipo_dte: number
  readonly estado: string
  readonly rut_receptor: string
}

export interface KindStats {
  count: number
  latenciesMs: number[]
  statuses: Record<string, number>
}

export interface MixResult {
  requests: number
  seconds: number
  kinds: Record<string, KindStats>
  /** Answers that were not what the kind must get (wrong status, an error outside the envelope, a wrong document). */
  violations: number
  /** Up to 20 of them, described. */
  examples: string[]
  serverErrors: number
  noAnswer: number
  /** Every 201 (first answers, not replays), for checkStored. */
  created: { dtes: Array<{ empresaId: string; id: string; folio: number; tipo: number }>; clientes: Array<{ empresaId: string; id: string }>; productos: Array<{ empresaId: string; id: string }> }
}

export interface MixOptions {
  readonly url: string
  readonly companies: readonly LoadCompany[]
  readonly clients: number
  readonly requests: number
  readonly seed: number
  /** Called after every answer with the number answered so far. */
  readonly onAnswer?: (answered: number) => void
}

interface Plan {
  readonly kind: string
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
  readonly expect: number
  /** Checks a 2xx body; returns what is wrong, or null. */
  readonly check?: (json: unknown, res: Response) => string | null
  readonly onOk?: (json: unknown) => void
}

const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!

function weighted<K>(rand: () => number, table: ReadonlyArray<readonly [K, number]>): K {
  const total = table.reduce((s, [, w]) => s + w, 0)
  let r = rand() * total
  for (const [k, w] of table) if ((r -= w) < 0) return k
  return table[table.length - 1]![0]
}

/** `clients` closed-loop clients over the companies (client i works for company i mod n) until `requests` are sent. */
export async function runMix(opts: MixOptions): Promise<MixResult> {
  const states: CompanyState[] = opts.companies.map((company) => ({ company, issued: [], facturas: [], clientes: [], productos: [], cursors: [], nextCliente: 0, nextProducto: 0 }))
  const result: MixResult = { requests: 0, seconds: 0, kinds: {}, violations: 0, examples: [], serverErrors: 0, noAnswer: 0, created: { dtes: [], clientes: [], productos: [] } }
  const kindTable = MIX_KINDS.map((k) => [k, MIX_WEIGHTS[k]] as const)
  /** Every issued DTE's company, to catch a list that shows another company's document. */
  const ownerOf = new Map<string, number>()
  let sent = 0
  let answered = 0
  const violation = (what: string) => {
    result.violations++
    if (result.examples.length < 20) result.examples.push(what)
  }
  const stats = (kind: string): KindStats => (result.kinds[kind] ??= { count: 0, latenciesMs: [], statuses: {} })

  const client = async (clientIndex: number) => {
    const rand = prng(opts.seed * 1_000 + clientIndex)
    const own = states[clientIndex % states.length]!
    const other = states[(clientIndex + 1) % states.length]!
    while (sent < opts.requests) {
      const kind = weighted(rand, kindTable)
      if (kind === 'dte.retry' && sent + 2 <= opts.requests) {
        sent += 2
        await retryPair(own, rand, sent)
        continue
      }
      sent++
      const plan = planRequest(kind, own, other, rand, sent)
      const got = await send(plan)
      if (got === null) continue
      const problem = judge(plan, got.res, got.text)
      if (problem !== null) violation(`${plan.kind} ${plan.method} ${plan.path} → ${got.res.status}: ${problem}`)
    }
  }

  /** Sends one request of a plan and counts its answer and latency under the plan's kind; null when no answer came. */
  const send = async (plan: Plan): Promise<{ res: Response; text: string } | null> => {
    const t0 = performance.now()
    let res: Response
    let text: string
    try {
      res = await fetch(`${opts.url}${plan.path}`, { method: plan.method, headers: plan.headers, ...(plan.body === undefined ? {} : { body: plan.body }) })
      text = await (plan.kind === 'dte.pdf' ? res.arrayBuffer().then((b) => `${b.byteLength}`) : res.text())
    } catch (err) {
      result.noAnswer++
      violation(`${plan.kind} ${plan.method} ${plan.path}: no answer (${String(err).slice(0, 120)})`)
      return null
    }
    const s = stats(plan.kind)
    s.count++
    s.latenciesMs.push(performance.now() - t0)
    s.statuses[res.status] = (s.statuses[res.status] ?? 0) + 1
    if (res.status >= 500) result.serverErrors++
    answered++
    opts.onAnswer?.(answered)
    return { res, text }
  }

  /**
   * The same issuance (key and body) sent twice at once, as a client that retries before the first answer came: one
   * of the two issues (201), the other gets that same document (201 with X-Idempotency-Replay) or 409
   * IDEMPOTENCY_IN_PROGRESS in the envelope. checkStored then finds the document once.
   */
  const retryPair = async (st: CompanyState, rand: () => number, n: number): Promise<void> => {
    const plan = issuePlan('dte.retry', st, rand, n, false)
    const [one, two] = await Promise.all([send(plan), send(plan)])
    if (one === null || two === null) return
    const answers = [one, two]
    const isFirst = (a: { res: Response }) => a.res.status === 201 && a.res.headers.get('x-idempotency-replay') !== 'true'
    const firsts = answers.filter(isFirst)
    const where = `dte.retry POST ${plan.path} (key ${plan.headers['Idempotency-Key']})`
    if (firsts.length !== 1) return violation(`${where}: ${firsts.length} first issuances for one key; statuses ${answers.map((a) => a.res.status).join(', ')}`)
    const first = firsts[0]!
    const second = answers.find((a) => a !== first)!
    const problem = judge(plan, first.res, first.text)
    if (problem !== null) return violation(`${where} → ${first.res.status}: ${problem}`)
    if (second.res.status === 409) {
      const wrong = envelopeProblem(second.res, second.text) ?? ((JSON.parse(second.text) as { code?: string }).code === 'IDEMPOTENCY_IN_PROGRESS' ? null : `409 ${second.text.slice(0, 160)}`)
      if (wrong !== null) violation(`${where}, the retry: ${wrong}`)
    } else if (second.res.status === 201) {
      const [a, b] = [JSON.parse(first.text) as { id?: string }, JSON.parse(second.text) as { id?: string }]
      if (a.id !== b.id) violation(`${where}: the retry replayed ${b.id}, the first issued ${a.id}`)
    } else violation(`${where}, the retry → ${second.res.status}: ${second.text.slice(0, 160)}`)
  }

  /** null when the answer is what the plan must get; otherwise what is wrong. */
  const judge = (plan: Plan, res: Response, text: string): string | null => {
    if (res.status !== plan.expect) return `expected ${plan.expect}; ${text.slice(0, 200)}`
    if (res.status >= 400) return envelopeProblem(res, text)
    if (plan.kind === 'dte.pdf') return Number(text) > 1000 && res.headers.get('content-type') === 'application/pdf' ? null : `not a PDF (${text} bytes)`
    let json: unknown = null
    if ((res.headers.get('content-type') ?? '').includes('json')) {
      try {
        json = JSON.parse(text)
      } catch {
        return 'a JSON content-type with a body that is not JSON'
      }
    }
    const wrong = plan.check?.(json, res) ?? null
    if (wrong === null) plan.onOk?.(json)
    return wrong
  }

  const planRequest = (kind: MixKind, st: CompanyState, other: CompanyState, rand: () => number, n: number): Plan => {
    const c = st.company
    const read = { 'X-Api-Key': c.readKey }
    const write = { 'X-Api-Key': c.writeKey, 'content-type': 'application/json' }
    const anyIssued = st.issued.length > 0 ? pick(rand, st.issued) : null
    const recentIssued = st.issued.length > 0 ? st.issued[st.issued.length - 1 - Math.floor(rand() * Math.min(200, st.issued.length))]! : null
    switch (kind) {
      case 'dte.issue':
      case 'dte.issue.auto_send':
      case 'dte.retry': // a single one when no room is left for the pair
        return issuePlan(kind === 'dte.retry' ? 'dte.issue' : kind, st, rand, n, kind === 'dte.issue.auto_send')
      case 'dte.replay': {
        if (anyIssued === null) return issuePlan('dte.issue', st, rand, n, false)
        return {
          kind, method: 'POST', path: `${API}/dte`, headers: { ...write, 'Idempotency-Key': anyIssued.key }, body: anyIssued.body, expect: 201,
          check: (json, res) => {
            const d = json as { id?: string; folio?: number }
            if (res.headers.get('x-idempotency-replay') !== 'true') return 'a replay without X-Idempotency-Replay: true'
            return d.id === anyIssued.id && d.folio === anyIssued.folio ? null : `replayed ${d.id}/${d.folio}, issued ${anyIssued.id}/${anyIssued.folio}`
          },
        }
      }
      case 'dte.list': {
        const filters = ['', `tipo_dte=${weighted(rand, MIX_TIPOS)}`, `estado=${pick(rand, ['firmado', 'aceptado', 'procesando', 'rechazado', 'con_reparos'])}`,
          `rut_receptor=${encodeURIComponent(pick(rand, RECEPTORES).rut)}`, `fecha_desde=${santiagoDate(new Date(Date.now() - 86_400_000))}&fecha_hasta=${santiagoDate(new Date())}`,
          'limit=50', `tipo_dte=33&estado=firmado`]
        const query = pick(rand, filters)
        return {
          kind, method: 'GET', path: `${API}/dte${query ? `?${query}` : ''}`, headers: read, expect: 200,
          check: (json) => {
            const l = json as { items?: ListedDte[]; total_count?: number; next_cursor?: string | null }
            if (!Array.isArray(l.items) || typeof l.total_count !== 'number') return 'not a list'
            if (l.items.length > l.total_count) return `${l.items.length} items but total_count ${l.total_count}`
            return listProblem(l.items, query, c.index)
          },
          onOk: (json) => {
            const next = (json as { next_cursor: string | null }).next_cursor
            if (next !== null) {
              st.cursors.push(`${query ? `${query}&` : ''}cursor=${encodeURIComponent(next)}`)
              if (st.cursors.length > 64) st.cursors.shift()
            }
          },
        }
      }
      case 'dte.list.next': {
        const query = st.cursors.length > 0 ? pick(rand, st.cursors) : 'limit=5'
        return {
          kind, method: 'GET', path: `${API}/dte?${query}`, headers: read, expect: 200,
          check: (json) => {
            const items = (json as { items?: ListedDte[] }).items
            return Array.isArray(items) ? listProblem(items, query, c.index) : 'not a list'
          },
        }
      }
      case 'dte.get':
      case 'dte.xml':
      case 'dte.pdf': {
        const d = kind === 'dte.pdf' ? recentIssued : anyIssued
        if (d === null) return issuePlan('dte.issue', st, rand, n, false)
        const suffix = kind === 'dte.get' ? '' : kind === 'dte.xml' ? '/xml' : '/pdf'
        return {
          kind, method: 'GET', path: `${API}/dte/${d.id}${suffix}`, headers: read, expect: 200,
          ...(kind === 'dte.get' ? { check: (json: unknown) => { const g = json as { id?: string; folio?: number; tipo_dte?: number }; return g.id === d.id && g.folio === d.folio && g.tipo_dte === d.tipo ? null : `got ${g.id}/${g.tipo_dte}/${g.folio}` } } : {}),
        }
      }
      case 'cliente.create': {
        const rut = rutOf(10_000_000 + c.index * 1_000_000 + st.nextCliente++)
        return {
          kind, method: 'POST', path: `${API}/clientes`, headers: write, body: JSON.stringify({ rut, razon_social: `Cliente ${n} de ${c.razonSocial}`, giro: 'Comercio', comuna: 'Ñuñoa' }), expect: 201,
          check: (json) => ((json as { rut?: string }).rut === rut ? null : `created ${(json as { rut?: string }).rut}, sent ${rut}`),
          onOk: (json) => {
            const id = (json as { id: string }).id
            st.clientes.push({ id, rut })
            result.created.clientes.push({ empresaId: c.id, id })
          },
        }
      }
      case 'producto.create': {
        const codigo = `P-${c.index}-${st.nextProducto++}`
        return {
          kind, method: 'POST', path: `${API}/productos`, headers: write, body: JSON.stringify({ nombre: `Tornillo autoperforante ${n}`, codigo, precio_unitario: 100 + (n % 900), unidad: 'UN', categoria: 'fijaciones' }), expect: 201,
          check: (json) => ((json as { codigo?: string }).codigo === codigo ? null : `created ${(json as { codigo?: string }).codigo}, sent ${codigo}`),
          onOk: (json) => {
            const id = (json as { id: string }).id
            st.productos.push(id)
            result.created.productos.push({ empresaId: c.id, id })
          },
        }
      }
      case 'cliente.search': {
        const q = st.clientes.length > 0 && rand() < 0.5 ? pick(rand, st.clientes).rut.slice(0, 5) : pick(rand, ['cliente 1', 'Ñuñoa', 'cliente', 'comercial'])
        return { kind, method: 'GET', path: `${API}/clientes/search?q=${encodeURIComponent(q)}`, headers: read, expect: 200, check: (json) => (Array.isArray(json) ? null : 'not an array') }
      }
      case 'producto.search': {
        const q = pick(rand, ['tornillo', 'autoperforante 1', `P-${c.index}-1`, 'TORNILLO'])
        return { kind, method: 'GET', path: `${API}/productos/search?q=${encodeURIComponent(q)}`, headers: read, expect: 200, check: (json) => (Array.isArray(json) ? null : 'not an array') }
      }
      case 'catalog.read': {
        const paths = ['/clientes', '/productos?limit=50', '/productos?categoria=fijaciones', '/empresa', '/caf']
        if (st.clientes.length > 0) paths.push(`/clientes/${pick(rand, st.clientes).id}`)
        if (st.productos.length > 0) paths.push(`/productos/${pick(rand, st.productos)}`)
        return { kind, method: 'GET', path: `${API}${pick(rand, paths)}`, headers: read, expect: 200 }
      }
      case 'health':
        return { kind, method: 'GET', path: '/health', headers: {}, expect: 200, check: (json) => ((json as { status?: string }).status === 'ok' ? null : 'status not ok') }
      case 'invalid':
        return invalidPlan(pick(rand, INVALID), st, other, rand, n)
    }
  }

  /** A listed DTE of another company, or one the filter should have left out. */
  const listProblem = (items: readonly ListedDte[], query: string, company: number): string | null => {
    const q = new URLSearchParams(query)
    for (const d of items) {
      const owner = ownerOf.get(d.id)
      if (owner !== undefined && owner !== company) return `lists ${d.id} of company ${owner}`
      if (q.has('tipo_dte') && d.tipo_dte !== Number(q.get('tipo_dte'))) return `tipo_dte=${q.get('tipo_dte')} lists a ${d.tipo_dte}`
      if (q.has('estado') && d.estado !== q.get('estado')) return `estado=${q.get('estado')} lists one ${d.estado}`
      if (q.has('rut_receptor') && d.rut_receptor.replaceAll('.', '') !== q.get('rut_receptor')!.replaceAll('.', '')) return `rut_receptor=${q.get('rut_receptor')} lists one to ${d.rut_receptor}`
    }
    return null
  }

  const issuePlan = (kind: string, st: CompanyState, rand: () => number, n: number, autoSend: boolean): Plan => {
    const tipo = weighted(rand, MIX_TIPOS)
    const ref = st.facturas.length > 0 ? pick(rand, st.facturas) : null
    const body = JSON.stringify({ ...issuanceBody(tipo, n, rand, { folio: ref?.folio ?? 1, fecha: santiagoDate(new Date()) }), auto_send: autoSend })
    const key = crypto.randomUUID()
    return {
      kind, method: 'POST', path: `${API}/dte`, headers: { 'X-Api-Key': st.company.writeKey, 'content-type': 'application/json', 'Idempotency-Key': key }, body, expect: 201,
      check: (json) => {
        const d = json as { id?: string; folio?: number; tipo_dte?: number; estado?: string }
        return typeof d.id === 'string' && Number.isInteger(d.folio) && d.tipo_dte === tipo ? null : `not the issued document: ${JSON.stringify(d).slice(0, 200)}`
      },
      onOk: (json) => {
        const d = json as { id: string; folio: number }
        const issued: Issued = { id: d.id, folio: d.folio, tipo, key, body }
        ownerOf.set(d.id, st.company.index)
        st.issued.push(issued)
        if (tipo === 33) st.facturas.push(issued)
        result.created.dtes.push({ empresaId: st.company.id, id: d.id, folio: d.folio, tipo })
      },
    }
  }

  const invalidPlan = (what: InvalidKind, st: CompanyState, other: CompanyState, rand: () => number, n: number): Plan => {
    const c = st.company
    const kind = `invalid.${what}`
    const read = { 'X-Api-Key': c.readKey }
    const write = { 'X-Api-Key': c.writeKey, 'content-type': 'application/json' }
    const valid = () => JSON.stringify(issuanceBody(33, n, rand, { folio: 1, fecha: santiagoDate(new Date()) }))
    const idem = () => ({ 'Idempotency-Key': crypto.randomUUID() })
    switch (what) {
      case 'no-credential':
        return { kind, method: 'GET', path: `${API}/dte`, headers: {}, expect: 401 }
      case 'unknown-key':
        return { kind, method: 'GET', path: `${API}/dte`, headers: { 'X-Api-Key': `tk_${crypto.randomUUID().replaceAll('-', '')}` }, expect: 401 }
      case 'read-key-writes':
        return { kind, method: 'POST', path: `${API}/dte`, headers: { ...read, 'content-type': 'application/json', ...idem() }, body: valid(), expect: 403 }
      case 'bad-rut': {
        const body = issuanceBody(33, n, rand, { folio: 1, fecha: santiagoDate(new Date()) })
        return { kind, method: 'POST', path: `${API}/dte`, headers: { ...write, ...idem() }, body: JSON.stringify({ ...body, receptor: { ...body.receptor, rut: '11.111.111-2' } }), expect: 400 }
      }
      case 'malformed-json':
        return { kind, method: 'POST', path: `${API}/dte`, headers: { ...write, ...idem() }, body: '{"tipo_dte": 33, "receptor": {', expect: 400 }
      case 'no-idempotency-key':
        return { kind, method: 'POST', path: `${API}/dte`, headers: write, body: valid(), expect: 400 }
      case 'other-company-dte': {
        const theirs = other !== st && other.issued.length > 0 ? pick(rand, other.issued).id : crypto.randomUUID()
        return { kind, method: 'GET', path: `${API}/dte/${theirs}`, headers: read, expect: 404 }
      }
      case 'unknown-dte':
        return { kind, method: 'GET', path: `${API}/dte/${crypto.randomUUID()}`, headers: read, expect: 404 }
      case 'bad-cursor':
        return { kind, method: 'GET', path: `${API}/dte?cursor=no-es-un-cursor`, headers: read, expect: 400 }
      case 'limit-out-of-range':
        return { kind, method: 'GET', path: `${API}/dte?limit=1000`, headers: read, expect: 400 }
      case 'bad-estado':
        return { kind, method: 'GET', path: `${API}/dte?estado=perdido`, headers: read, expect: 400 }
      case 'method-not-allowed':
        return { kind, method: 'DELETE', path: `${API}/dte`, headers: write, expect: 405 }
      case 'unknown-route':
        return { kind, method: 'GET', path: `${API}/facturas`, headers: read, expect: 404 }
      case 'cliente-rut-exists': {
        if (st.clientes.length === 0) return { kind, method: 'GET', path: `${API}/clientes/${crypto.randomUUID()}`, headers: read, expect: 404 }
        return { kind, method: 'POST', path: `${API}/clientes`, headers: write, body: JSON.stringify({ rut: pick(rand, st.clientes).rut, razon_social: 'Repetido' }), expect: 409 }
      }
      case 'idempotency-mismatch': {
        if (st.issued.length === 0) return { kind, method: 'GET', path: `${API}/dte/${crypto.randomUUID()}`, headers: read, expect: 404 }
        return { kind, method: 'POST', path: `${API}/dte`, headers: { ...write, 'Idempotency-Key': pick(rand, st.issued).key }, body: valid(), expect: 422 }
      }
      case 'empty-search':
        return { kind, method: 'GET', path: `${API}/clientes/search?q=`, headers: read, expect: 400 }
    }
  }

  const started = performance.now()
  await Promise.all(Array.from({ length: opts.clients }, (_, i) => client(i)))
  result.seconds = (performance.now() - started) / 1000
  result.requests = answered
  return result
}

/** What every error answer carries (DESIGN §5): JSON with code, message, error and details. */
export function envelopeProblem(res: Response, text: string): string | null {
  if (!(res.headers.get('content-type') ?? '').includes('application/json')) return `error without a JSON content-type: ${res.headers.get('content-type')}`
  let e: { code?: unknown; message?: unknown; error?: unknown; details?: unknown }
  try {
    e = JSON.parse(text) as typeof e
  } catch {
    return `error body is not JSON: ${text.slice(0, 120)}`
  }
  const missing = [typeof e.code === 'string' ? null : 'code', typeof e.message === 'string' ? null : 'message', typeof e.error === 'string' ? null : 'error', Array.isArray(e.details) ? null : 'details'].filter(Boolean)
  return missing.length === 0 ? null : `error envelope without ${missing.join(', ')}: ${text.slice(0, 160)}`
}

export interface StoredCheck {
  /** 201s whose record is missing, or stored with another company, tipo or folio. */
  lost: string[]
  /** Records stored that no 201 answered for (an invalid request that wrote, or a duplicate). */
  extra: number
  /** Folios stored twice for one company and tipo. */
  duplicateFolios: number
  /** DTEs per estado at the end: the SII jobs moved the auto_send ones. */
  estados: Record<string, number>
}

/** Reads the data dir's database (read-only, the server may still run): every 201 of the mix stored, and nothing else. */
export function checkStored(dataDir: string, created: MixResult['created']): StoredCheck {
  const db = new Database(join(dataDir, 'timbre.db'), { readonly: true })
  try {
    const out: StoredCheck = { lost: [], extra: 0, duplicateFolios: 0, estados: {} }
    const dtes = new Map((db.query('SELECT id, empresa_id, tipo_dte, folio FROM dtes').all() as Array<{ id: string; empresa_id: string; tipo_dte: number; folio: number }>).map((r) => [r.id, r]))
    for (const d of created.dtes) {
      const got = dtes.get(d.id)
      if (!got || got.empresa_id !== d.empresaId || got.tipo_dte !== d.tipo || got.folio !== d.folio) out.lost.push(`DTE ${d.id} (${d.tipo} folio ${d.folio})`)
    }
    const answered = new Set(created.dtes.map((d) => d.id))
    for (const id of dtes.keys()) if (!answered.has(id)) out.extra++
    out.duplicateFolios = (db.query('SELECT count(*) AS n FROM (SELECT 1 FROM dtes GROUP BY empresa_id, tipo_dte, folio HAVING count(*) > 1)').get() as { n: number }).n
    for (const [table, rows] of [['clientes', created.clientes], ['productos', created.productos]] as const) {
      const stored = new Map((db.query(`SELECT id, empresa_id FROM ${table} WHERE deleted_at IS NULL`).all() as Array<{ id: string; empresa_id: string }>).map((r) => [r.id, r.empresa_id]))
      for (const r of rows) if (stored.get(r.id) !== r.empresaId) out.lost.push(`${table} ${r.id}`)
      const ids = new Set(rows.map((r) => r.id))
      for (const id of stored.keys()) if (!ids.has(id)) out.extra++
    }
    for (const r of db.query('SELECT estado, count(*) AS n FROM dtes GROUP BY estado').all() as Array<{ estado: string; n: number }>) out.estados[r.estado] = r.n
    return out
  } finally {
    db.close()
  }
}
