// CAFs and their folio ranges. Folios are handed out by db/folio-reserver.ts and `next_folio` moves with each stored
// document inside its transaction, so a folio is consumed exactly when the document that uses it is stored (DESIGN §11).
import { and, asc, desc, eq, gte, isNotNull, isNull, lt, lte, or, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { Db } from './open'
import { preparedStatements } from './prepared'
import { unirRangos, type Rango } from '../domain/folios'
import { cafs, dtes, type CafRow } from './schema'

export type NewCaf = typeof cafs.$inferInsert

export function insertCaf(db: Db, row: NewCaf): CafRow {
  return db.insert(cafs).values(row).returning().get()
}

export function findCafById(db: Db, empresaId: string, id: string): CafRow | undefined {
  return db.select().from(cafs).where(and(eq(cafs.empresa_id, empresaId), eq(cafs.id, id))).get()
}

export function findOverlappingCaf(db: Db, empresaId: string, tipoDte: number, desde: number, hasta: number): CafRow | undefined {
  return db
    .select()
    .from(cafs)
    .where(and(eq(cafs.empresa_id, empresaId), eq(cafs.tipo_dte, tipoDte), lte(cafs.folio_desde, hasta), gte(cafs.folio_hasta, desde)))
    .get()
}

/** SQL of "active on `today`" (DESIGN §8), the same rule as domain/folios isCafActive. */
function activeOn(today: string | Placeholder): SQL {
  return and(lte(cafs.next_folio, cafs.folio_hasta), or(isNull(cafs.vence_el), gte(cafs.vence_el, today)), isNull(cafs.anulacion_estado))!
}

function inactiveOn(today: string): SQL {
  return or(sql`${cafs.next_folio} > ${cafs.folio_hasta}`, lt(cafs.vence_el, today), isNotNull(cafs.anulacion_estado))!
}

export function listCafs(
  db: Db,
  empresaId: string,
  filter: { tipoDte?: number; isActive?: boolean; today: string; afterId: string | null; limit: number | null },
): CafRow[] {
  const conditions: SQL[] = [eq(cafs.empresa_id, empresaId)]
  if (filter.tipoDte !== undefined) conditions.push(eq(cafs.tipo_dte, filter.tipoDte))
  if (filter.isActive !== undefined) conditions.push(filter.isActive ? activeOn(filter.today) : inactiveOn(filter.today))
  if (filter.afterId !== null) conditions.push(lt(cafs.id, filter.afterId))
  const query = db.select().from(cafs).where(and(...conditions)).orderBy(desc(cafs.id))
  return filter.limit === null ? query.all() : query.limit(filter.limit).all()
}

/** Highest folio ever authorised for the type (0 when none): where a new range may start. */
export function lastFolioHasta(db: Db, empresaId: string, tipoDte: number): number {
  const row = db
    .select({ h: sql<number | null>`max(${cafs.folio_hasta})` })
    .from(cafs)
    .where(and(eq(cafs.empresa_id, empresaId), eq(cafs.tipo_dte, tipoDte)))
    .get()
  return Number(row?.h ?? 0)
}

// Every issuance sums its type's free folios (checkCafStock): prepared once per connection (db/prepared.ts).
const statements = preparedStatements((db) => ({
  foliosLeft: db
    .select({ n: sql<number>`coalesce(sum(${cafs.folio_hasta} - ${cafs.next_folio} + 1), 0)` })
    .from(cafs)
    .where(and(eq(cafs.empresa_id, sql.placeholder('empresaId')), eq(cafs.tipo_dte, sql.placeholder('tipoDte')), activeOn(sql.placeholder('today'))))
    .prepare(),
}))

/** Free folios of a type over its active CAFs (caf.low_stock, DESIGN §7). */
export function foliosLeft(db: Db, empresaId: string, tipoDte: number, today: string): number {
  return Number(statements(db).foliosLeft.get({ empresaId, tipoDte, today })?.n ?? 0)
}

/** (empresa, tipo) pairs that have CAFs, for the periodic stock check. */
export function cafTypesInUse(db: Db): Array<{ empresa_id: string; tipo_dte: number }> {
  return db.selectDistinct({ empresa_id: cafs.empresa_id, tipo_dte: cafs.tipo_dte }).from(cafs).all()
}

// ------------------------------------------------------------------------------------------------ annulment (DESIGN §17)

/** Closes the CAF to issuance (with the reserver's close) while its unused folios are annulled at the SII. */
export function markCafAnulando(db: Db, cafId: string): void {
  db.update(cafs).set({ anulacion_estado: 'en_curso' }).where(eq(cafs.id, cafId)).run()
}

/** Ranges the SII annulled, added to the CAF's; `estado` is where the CAF stands after them. */
export function addFoliosAnulados(db: Db, caf: CafRow, input: { rangos: readonly Rango[]; estado: 'en_curso' | 'anulado'; motivo: string; atIso: string }): void {
  db.update(cafs)
    .set({ anulacion_estado: input.estado, folios_anulados: unirRangos([...(caf.folios_anulados ?? []), ...input.rangos]), anulacion_motivo: input.motivo, anulado_at: input.atIso })
    .where(eq(cafs.id, caf.id))
    .run()
}

/** The annulment failed before the SII could act: the CAF serves again (if its folios still do). */
export function reopenCaf(db: Db, cafId: string): void {
  db.update(cafs).set({ anulacion_estado: null }).where(and(eq(cafs.id, cafId), eq(cafs.anulacion_estado, 'en_curso'))).run()
}

/**
 * Folios below `next_folio` with no stored document: a crash's, or given back by a failed signature. One count over
 * the documents' (empresa, tipo, folio) index; the folios themselves are read only when some are missing.
 */
export function huecosDeCaf(db: Db, caf: CafRow): number[] {
  const hasta = Math.min(caf.next_folio, caf.folio_hasta + 1) - 1
  if (hasta < caf.folio_desde) return []
  const inRange = and(eq(dtes.empresa_id, caf.empresa_id), eq(dtes.tipo_dte, caf.tipo_dte), gte(dtes.folio, caf.folio_desde), lte(dtes.folio, hasta))
  const stored = Number(db.select({ n: sql<number>`count(*)` }).from(dtes).where(inRange).get()?.n ?? 0)
  if (stored === hasta - caf.folio_desde + 1) return []
  const seen = new Set(db.select({ folio: dtes.folio }).from(dtes).where(inRange).all().map((r) => r.folio))
  const huecos: number[] = []
  for (let f = caf.folio_desde; f <= hasta; f++) if (!seen.has(f)) huecos.push(f)
  return huecos
}

/** Every active (unannulled, unexpired, with free folios) CAF of a type: the automatic mode's stock. */
export function listActiveCafsOfTipo(db: Db, empresaId: string, tipoDte: number, today: string): CafRow[] {
  return db.select().from(cafs).where(and(eq(cafs.empresa_id, empresaId), eq(cafs.tipo_dte, tipoDte), activeOn(today))).all()
}
