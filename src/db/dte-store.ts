// Issued documents. Lists are newest first by UUIDv7, each filter backed by an (empresa_id, column, id) index.
import { and, asc, count, desc, eq, getTableColumns, gte, inArray, isNotNull, lt, lte, or, sql, type SQL } from 'drizzle-orm'
import type { EstadoDte } from '../domain/estados'
import type { Db } from './open'
import { dteCounts, dtes, type DteRow } from './schema'

export type NewDte = typeof dtes.$inferInsert

export interface DteFilter {
  readonly tipoDte?: number
  readonly estado?: EstadoDte
  readonly fechaDesde?: string
  readonly fechaHasta?: string
  readonly rutReceptor?: string
}

export function insertDte(db: Db, row: NewDte): DteRow {
  return db.insert(dtes).values(row).returning().get()
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

function conditions(empresaId: string, f: DteFilter): SQL[] {
  const c: SQL[] = [eq(dtes.empresa_id, empresaId)]
  if (f.tipoDte !== undefined) c.push(eq(dtes.tipo_dte, f.tipoDte))
  if (f.estado !== undefined) c.push(eq(dtes.estado, f.estado))
  if (f.fechaDesde !== undefined) c.push(gte(dtes.fecha_emision, f.fechaDesde))
  if (f.fechaHasta !== undefined) c.push(lte(dtes.fecha_emision, f.fechaHasta))
  if (f.rutReceptor !== undefined) c.push(eq(dtes.rut_receptor, f.rutReceptor))
  return c
}

// Lists never return the XML blob nor the stored request: leave them out of the read.
const { xml: _xml, request: _request, ...LIST_COLUMNS } = getTableColumns(dtes)
export type DteListRow = Omit<DteRow, 'xml' | 'request'>

export function listDtes(db: Db, empresaId: string, filter: DteFilter, afterId: string | null, limit: number): DteListRow[] {
  const c = conditions(empresaId, filter)
  if (afterId !== null) c.push(lt(dtes.id, afterId))
  return db.select(LIST_COLUMNS).from(dtes).where(and(...c)).orderBy(desc(dtes.id)).limit(limit).all()
}

export function countDtes(db: Db, empresaId: string, filter: DteFilter): number {
  // Unfiltered: the trigger-kept counter (exact, since DTEs are never deleted) instead of counting a million rows.
  if (Object.values(filter).every((v) => v === undefined)) return db.select({ n: dteCounts.n }).from(dteCounts).where(eq(dteCounts.empresa_id, empresaId)).get()?.n ?? 0
  return db.select({ n: count() }).from(dtes).where(and(...conditions(empresaId, filter))).get()?.n ?? 0
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

/** Age of the oldest DTE waiting on the SII (enviando or procesando, or firmado with auto_send), for /ready. */
export function oldestPendingCreatedAt(db: Db): string | null {
  const row = db
    .select({ at: sql<string | null>`min(${dtes.created_at})` })
    .from(dtes)
    .where(or(inArray(dtes.estado, ['enviando', 'procesando']), and(eq(dtes.estado, 'firmado'), eq(dtes.auto_send, true))))
    .get()
  return row?.at ?? null
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
