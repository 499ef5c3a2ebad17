// CAFs and their folio ranges. Folios are handed out by db/folio-reserver.ts and `next_folio` moves with each stored
// document inside its transaction, so a folio is consumed exactly when the document that uses it is stored (DESIGN §11).
import { and, asc, desc, eq, gte, isNotNull, isNull, lt, lte, not, or, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { Db } from './open'
import { preparedStatements } from './prepared'
import { cafs, type CafRow } from './schema'

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

/** Expired with folios never used and not annulled (research §4.3, FAQ 6970): what must be annulled at the SII. */
function porAnularOn(today: string): SQL {
  return and(lt(cafs.vence_el, today), lte(cafs.next_folio, cafs.folio_hasta), isNull(cafs.anulacion_estado))!
}

function inactiveOn(today: string): SQL {
  return or(sql`${cafs.next_folio} > ${cafs.folio_hasta}`, lt(cafs.vence_el, today), isNotNull(cafs.anulacion_estado))!
}

export function listCafs(
  db: Db,
  empresaId: string,
  filter: { tipoDte?: number; isActive?: boolean; porAnular?: boolean; today: string; afterId: string | null; limit: number },
): CafRow[] {
  const conditions: SQL[] = [eq(cafs.empresa_id, empresaId)]
  if (filter.porAnular !== undefined) conditions.push(filter.porAnular ? porAnularOn(filter.today) : not(porAnularOn(filter.today)))
  if (filter.tipoDte !== undefined) conditions.push(eq(cafs.tipo_dte, filter.tipoDte))
  if (filter.isActive !== undefined) conditions.push(filter.isActive ? activeOn(filter.today) : inactiveOn(filter.today))
  if (filter.afterId !== null) conditions.push(lt(cafs.id, filter.afterId))
  return db.select().from(cafs).where(and(...conditions)).orderBy(desc(cafs.id)).limit(filter.limit).all()
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

/** The SII annulled `desde`–`hasta`: the ledger says so, and the CAF hands out nothing more. */
export function markCafAnulado(db: Db, cafId: string, input: { desde: number; hasta: number; motivo: string; atIso: string }): void {
  db.update(cafs)
    .set({ anulacion_estado: 'anulado', anulado_desde: input.desde, anulado_hasta: input.hasta, anulacion_motivo: input.motivo, anulado_at: input.atIso })
    .where(eq(cafs.id, cafId))
    .run()
}

/** The annulment failed before the SII could act: the CAF serves again (if its folios still do). */
export function reopenCaf(db: Db, cafId: string): void {
  db.update(cafs).set({ anulacion_estado: null }).where(and(eq(cafs.id, cafId), eq(cafs.anulacion_estado, 'en_curso'))).run()
}

/** Every active (unannulled, unexpired, with free folios) CAF of a type: the automatic mode's stock. */
export function listActiveCafsOfTipo(db: Db, empresaId: string, tipoDte: number, today: string): CafRow[] {
  return db.select().from(cafs).where(and(eq(cafs.empresa_id, empresaId), eq(cafs.tipo_dte, tipoDte), activeOn(today))).all()
}
