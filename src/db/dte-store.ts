// Issued documents. Lists are newest first by UUIDv7 and counted from trigger-kept buckets (docs/decisions/list-counts.md).
import { and, asc, desc, eq, getTableColumns, gte, inArray, isNotNull, lt, lte, or, sql, type SQL } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import type { EstadoDte } from '../domain/estados'
import type { Db } from './open'
import { preparedStatements } from './prepared'
import { dteCounts, dteCountsDia, dteCountsReceptor, dtes, DTES_PENDING_SII, type DteRow } from './schema'

export type NewDte = typeof dtes.$inferInsert

export interface DteFilter {
  readonly tipoDte?: number
  readonly estado?: EstadoDte
  readonly fechaDesde?: string
  readonly fechaHasta?: string
  readonly rutReceptor?: string
}

// Every issuance inserts one row: a statement prepared once per connection with a placeholder for every column, and no
// RETURNING (reading the row back, its XML included, cost more than the insert; issue 17 profile).
const DTE_COLUMNS = Object.entries(getTableColumns(dtes))
const insertStatement = preparedStatements((db) =>
  db
    .insert(dtes)
    .values(Object.fromEntries(DTE_COLUMNS.map(([key]) => [key, sql.placeholder(key)])) as unknown as NewDte)
    .prepare(),
)

/** Stores a DTE and returns the row as stored: what was given, the schema's defaults for the rest, null elsewhere. */
export function insertDte(db: Db, row: NewDte): DteRow {
  const given = row as Record<string, unknown>
  const full = Object.fromEntries(DTE_COLUMNS.map(([key, column]) => [key, given[key] ?? (column.hasDefault ? column.default : null)])) as DteRow
  insertStatement(db).run(full)
  return full
}

export function findDte(db: Db, empresaId: string, id: string): DteRow | undefined {
  return db.select().from(dtes).where(and(eq(dtes.empresa_id, empresaId), eq(dtes.id, id))).get()
}

/**
 * The stored references of the company's DTE of that type and folio (the request's `referencias` as received), or
 * undefined when there is none. One seek into the unique (empresa_id, tipo_dte, folio) index.
 */
export function findDteReferencias(db: Db, empresaId: string, tipoDte: number, folio: number): unknown[] | undefined {
  return db
    .select({ referencias: dtes.referencias })
    .from(dtes)
    .where(and(eq(dtes.empresa_id, empresaId), eq(dtes.tipo_dte, tipoDte), eq(dtes.folio, folio)))
    .get()?.referencias
}

// Lists never return the XML blob nor the stored request: leave them out of the read.
const { xml: _xml, request: _request, ...LIST_COLUMNS } = getTableColumns(dtes)
export type DteListRow = Omit<DteRow, 'xml' | 'request'>

/** The matches of a filter as their buckets count them: how many, and bounds of their ids (null when none). */
interface Matches {
  readonly n: number
  readonly minId: string | null
  readonly maxId: string | null
}

/** Ids from `lo` to `hi`, both included. */
interface Span {
  lo: string
  readonly hi: string
}

/** How a page is read (docs/decisions/list-counts.md): walk an index newest first, or read a date range and sort. */
export type Plan = 'id' | 'estado' | 'tipo' | 'rut' | 'fecha'

const INDEX_OF: Readonly<Record<Plan, string>> = {
  id: 'dtes_empresa',
  estado: 'dtes_empresa_estado',
  tipo: 'dtes_empresa_tipo',
  rut: 'dtes_empresa_receptor',
  fecha: 'dtes_empresa_fecha',
}

/** A walk expected to read more index entries than this reads only the spans of the matching buckets. */
const SPAN_WALK_ABOVE = 2000
/** Testing a filter on the table row instead of the index entry costs about this many entries (measured 12 to 17). */
const ROW_READ_COST = 10

// Unset filters are bound as NULL (or as an open date range), so one statement serves every combination.
const NO_DATE_FROM = ''
const NO_DATE_TO = '9999-12-31'
const ph = (name: string) => sql.placeholder(name)
const optional = (column: SQLiteColumn, name: string) => sql`(${ph(name)} IS NULL OR ${column} = ${ph(name)})`
const inDates = (fecha: SQLiteColumn) => and(gte(fecha, ph('desde')), lte(fecha, ph('hasta')))

const statements = preparedStatements((db) => {
  // For each bucket table: the sum over the filter's buckets, and those buckets' id spans.
  const buckets = (table: typeof dteCounts | typeof dteCountsDia | typeof dteCountsReceptor, where: SQL | undefined) => ({
    sum: db
      .select({ n: sql<number | null>`sum(${table.n})`, minId: sql<string | null>`min(${table.min_id})`, maxId: sql<string | null>`max(${table.max_id})` })
      .from(table)
      .where(where)
      .prepare(),
    spans: db.select({ lo: table.min_id, hi: table.max_id }).from(table).where(where).prepare(),
  })
  const tipoEstado = (t: { readonly tipo_dte: SQLiteColumn; readonly estado: SQLiteColumn }) => [optional(t.tipo_dte, 'tipo'), optional(t.estado, 'estado')]
  const byTipoEstado = buckets(dteCounts, and(eq(dteCounts.empresa_id, ph('empresaId')), ...tipoEstado(dteCounts)))
  const byDia = buckets(dteCountsDia, and(eq(dteCountsDia.empresa_id, ph('empresaId')), inDates(dteCountsDia.fecha_emision), ...tipoEstado(dteCountsDia)))
  const byReceptor = buckets(
    dteCountsReceptor,
    and(eq(dteCountsReceptor.empresa_id, ph('empresaId')), eq(dteCountsReceptor.rut_receptor, ph('rut')), inDates(dteCountsReceptor.fecha_emision), ...tipoEstado(dteCountsReceptor)),
  )
  // The ids of one page, from the index alone but for estado (schema.ts). INDEXED BY, because the planner
  // cannot know which index is cheapest for these values; the counts can (choosePlan).
  const LEAD: Readonly<Record<Plan, SQL | undefined>> = {
    id: undefined,
    estado: eq(dtes.estado, ph('estado')),
    tipo: eq(dtes.tipo_dte, ph('tipo')),
    rut: eq(dtes.rut_receptor, ph('rut')),
    fecha: undefined,
  }
  const pageIds = (plan: Plan) =>
    db
      .select({ id: sql<string>`${dtes.id}` })
      .from(sql`${dtes} INDEXED BY ${sql.identifier(INDEX_OF[plan])}`)
      .where(
        and(
          eq(dtes.empresa_id, ph('empresaId')),
          LEAD[plan],
          gte(dtes.id, ph('lowest')),
          lt(dtes.id, ph('below')),
          inDates(dtes.fecha_emision),
          optional(dtes.tipo_dte, 'tipo'),
          optional(dtes.estado, 'estado'),
          optional(dtes.rut_receptor, 'rut'),
        ),
      )
      .orderBy(desc(dtes.id))
      .limit(ph('limit'))
      .prepare()
  return {
    byTipoEstado,
    byDia,
    byReceptor,
    pageIds: { id: pageIds('id'), estado: pageIds('estado'), tipo: pageIds('tipo'), rut: pageIds('rut'), fecha: pageIds('fecha') },
    rows: db
      .select(LIST_COLUMNS)
      .from(dtes)
      .where(sql`${dtes.id} IN (SELECT value FROM json_each(${ph('ids')}))`)
      .prepare(),
  }
})

function paramsOf(empresaId: string, f: DteFilter) {
  return {
    empresaId,
    tipo: f.tipoDte ?? null,
    estado: f.estado ?? null,
    rut: f.rutReceptor ?? null,
    desde: f.fechaDesde ?? NO_DATE_FROM,
    hasta: f.fechaHasta ?? NO_DATE_TO,
  }
}

const hasDates = (f: DteFilter) => f.fechaDesde !== undefined || f.fechaHasta !== undefined

/** The bucket table that covers the filter: the receptor's days, the range's days, or the company's tipos and estados. */
function bucketsOf(db: Db, f: DteFilter) {
  const s = statements(db)
  return f.rutReceptor !== undefined ? s.byReceptor : hasDates(f) ? s.byDia : s.byTipoEstado
}

function countMatches(db: Db, empresaId: string, f: DteFilter): Matches {
  const row = bucketsOf(db, f).sum.get(paramsOf(empresaId, f))
  return { n: row?.n ?? 0, minId: row?.minId ?? null, maxId: row?.maxId ?? null }
}

/** Exact, a sum over few bucket rows: what GET /dte answers as total_count. */
export function countDtes(db: Db, empresaId: string, filter: DteFilter): number {
  return countMatches(db, empresaId, filter).n
}

/**
 * The cheapest way to the page, estimated from exact counts, and how many index entries it should read. Walking an
 * index newest first reads about `limit × (rows under that index's key) / matches` entries when the matches are spread
 * out; reading a date range whole reads every DTE of the range. Each candidate's count is a bucket sum of its filter
 * alone. Only dtes_empresa_estado holds estado: elsewhere an estado filter reads the table row of each entry it tests.
 */
function choosePlan(db: Db, empresaId: string, f: DteFilter, total: number, limit: number): { plan: Plan; cost: number } {
  const kinds = [f.rutReceptor, f.estado, f.tipoDte, hasDates(f) || undefined].filter((v) => v !== undefined).length
  const alone = (one: DteFilter) => (kinds === 1 ? total : countDtes(db, empresaId, one))
  const perEntry = f.estado === undefined ? 1 : ROW_READ_COST
  const walk = (rows: number) => rows * Math.min(1, limit / total) * perEntry
  const costs: Array<{ plan: Plan; cost: number }> = []
  if (f.estado !== undefined) costs.push({ plan: 'estado', cost: alone({ estado: f.estado }) * Math.min(1, limit / total) })
  if (f.rutReceptor !== undefined) costs.push({ plan: 'rut', cost: walk(alone({ rutReceptor: f.rutReceptor })) })
  if (f.tipoDte !== undefined) costs.push({ plan: 'tipo', cost: walk(alone({ tipoDte: f.tipoDte })) })
  if (costs.length === 0) costs.push({ plan: 'id', cost: walk(kinds === 0 ? total : countDtes(db, empresaId, {})) })
  if (hasDates(f)) costs.push({ plan: 'fecha', cost: alone({ fechaDesde: f.fechaDesde, fechaHasta: f.fechaHasta }) * perEntry })
  return costs.reduce((best, c) => (c.cost < best.cost ? c : best))
}

/**
 * The id spans of the filter's buckets, newest first, overlaps merged. When few DTEs of a large index range match
 * (a receptor's only facturas among its boletas), they sit in few buckets, and the walk skips what lies between them.
 */
function bucketSpans(db: Db, empresaId: string, f: DteFilter): Span[] {
  const rows = bucketsOf(db, f).spans.all(paramsOf(empresaId, f)).sort((a, b) => (a.hi < b.hi ? 1 : a.hi > b.hi ? -1 : 0))
  const merged: Span[] = []
  for (const r of rows) {
    const last = merged.at(-1)
    if (last !== undefined && r.hi >= last.lo) last.lo = r.lo < last.lo ? r.lo : last.lo
    else merged.push({ lo: r.lo, hi: r.hi })
  }
  return merged
}

// Ids are 36 characters of [0-9a-f-], all below '~': every id up to `id` (inclusive) sorts below this.
const justAbove = (id: string) => `${id}~`

/**
 * One page of GET /dte, newest first (keyset on the UUIDv7 id: `afterId` is the last id of the previous page), and the
 * exact number of matches. The buckets that count the matches also bound their ids, so no walk leaves their spans.
 * `force` is for tests: whichever plan and spans, the page must be the same.
 */
export function findDtePage(
  db: Db,
  empresaId: string,
  filter: DteFilter,
  afterId: string | null,
  limit: number,
  force: { readonly plan?: Plan; readonly spans?: boolean } = {},
): { rows: DteListRow[]; total: number } {
  const matches = countMatches(db, empresaId, filter)
  if (matches.minId === null || matches.maxId === null) return { rows: [], total: matches.n }
  const chosen = choosePlan(db, empresaId, filter, matches.n, limit)
  const plan = force.plan ?? chosen.plan
  const useSpans = force.spans ?? (plan !== 'fecha' && chosen.cost > SPAN_WALK_ABOVE)
  const spans = useSpans ? bucketSpans(db, empresaId, filter) : [{ lo: matches.minId, hi: matches.maxId }]
  const s = statements(db)
  const params = paramsOf(empresaId, filter)
  const ids: string[] = []
  for (const span of spans) {
    const below = afterId !== null && afterId < justAbove(span.hi) ? afterId : justAbove(span.hi)
    if (below <= span.lo) continue
    for (const r of s.pageIds[plan].all({ ...params, lowest: span.lo, below, limit: limit - ids.length })) ids.push(r.id)
    if (ids.length === limit) break
  }
  if (ids.length === 0) return { rows: [], total: matches.n }
  const byId = new Map(s.rows.all({ ids: JSON.stringify(ids) }).map((r) => [r.id, r]))
  return { rows: ids.flatMap((id) => byId.get(id) ?? []), total: matches.n }
}

/** Moves a DTE from one estado to another only if it is still in the first (no lost updates between processes). */
export function transitionDte(db: Db, empresaId: string, id: string, from: EstadoDte, patch: Partial<NewDte>): DteRow | undefined {
  return db
    .update(dtes)
    .set(patch)
    .where(and(eq(dtes.empresa_id, empresaId), eq(dtes.id, id), eq(dtes.estado, from)))
    .returning()
    .get()
}

/**
 * DTEs the submission job should take now (DESIGN §6): `firmado` with auto_send, and `enviando` (asked by /enviar or
 * waiting for a retry), whose next_attempt_at has come. Oldest due first.
 */
export function findDueForSubmission(db: Db, nowIso: string, limit: number): DteRow[] {
  return db
    .select()
    .from(dtes)
    .where(
      and(
        or(and(eq(dtes.estado, 'firmado'), eq(dtes.auto_send, true)), eq(dtes.estado, 'enviando')),
        isNotNull(dtes.next_attempt_at),
        lte(dtes.next_attempt_at, nowIso),
      ),
    )
    .orderBy(asc(dtes.next_attempt_at))
    .limit(limit)
    .all()
}

/** DTEs held by the SII whose next status query is due. */
export function findDueForTracking(db: Db, nowIso: string, limit: number): DteRow[] {
  return db
    .select()
    .from(dtes)
    .where(and(eq(dtes.estado, 'procesando'), isNotNull(dtes.next_attempt_at), lte(dtes.next_attempt_at, nowIso)))
    .orderBy(asc(dtes.next_attempt_at))
    .limit(limit)
    .all()
}

// INDEXED BY: without fresh statistics the planner prefers dtes_due and walks every firmado row (issue 18); the partial
// index holds only the pending rows, ordered by created_at, so min() is one seek.
const oldestPendingQuery = (db: Db) =>
  db
    .select({ at: sql<string | null>`min(${dtes.created_at})` })
    .from(sql`${dtes} INDEXED BY dtes_pending_sii`)
    .where(sql.raw(DTES_PENDING_SII))
const oldestPendingStatement = preparedStatements((db) => oldestPendingQuery(db).prepare())

/** Age of the oldest DTE waiting on the SII, for /ready. */
export function oldestPendingCreatedAt(db: Db): string | null {
  return oldestPendingStatement(db).get()?.at ?? null
}

/** The SQL oldestPendingCreatedAt runs, for the test that reads its query plan. */
export function oldestPendingSql(db: Db): string {
  return oldestPendingQuery(db).toSQL().sql
}

/**
 * Claims a due DTE for one job pass: it must still be in one of `from` and due at `nowIso`; the patch pushes
 * next_attempt_at to a lease, so another pass (this process or another) does not take it meanwhile. Undefined when
 * someone else got there first. If the claimer dies, the lease expires and the DTE is due again.
 */
export function claimDue(db: Db, id: string, from: readonly EstadoDte[], nowIso: string, patch: Partial<NewDte> & { next_attempt_at: string }): DteRow | undefined {
  return db
    .update(dtes)
    .set(patch)
    .where(and(eq(dtes.id, id), inArray(dtes.estado, [...from]), isNotNull(dtes.next_attempt_at), lte(dtes.next_attempt_at, nowIso)))
    .returning()
    .get()
}

/** Updates a DTE only while it is still in one of `from` (a final state is never left, DESIGN §6). */
export function updateDteIf(db: Db, id: string, from: readonly EstadoDte[], patch: Partial<NewDte>): DteRow | undefined {
  return db
    .update(dtes)
    .set(patch)
    .where(and(eq(dtes.id, id), inArray(dtes.estado, [...from])))
    .returning()
    .get()
}

/** The company's DTEs uploaded under `trackId`, leading zeros ignored (the SII pads track ids in its mails). */
export function findDtesByTrackId(db: Db, empresaId: string, trackId: string): DteRow[] {
  const bare = trackId.replace(/^0+(?=\d)/, '')
  return db.select().from(dtes).where(and(eq(dtes.empresa_id, empresaId), sql`ltrim(${dtes.track_id}, '0') = ${bare}`)).all()
}

/** The highest DTE id in the store (UUIDv7: the newest), or null: where a restarted process's id sequence resumes. */
export function newestDteId(db: Db): string | null {
  return db.select({ id: dtes.id }).from(dtes).orderBy(desc(dtes.id)).limit(1).get()?.id ?? null
}
