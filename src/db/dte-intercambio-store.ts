// The exchange side of issued DTEs (DESIGN §13 `intercambio`): one row per DTE mailed to its receiver, with the
// receiver's answers and the SII's registry of its actions. Written in the transaction of the change it reports.
import { and, asc, eq, inArray, isNotNull, lte } from 'drizzle-orm'
import type { Db } from './open'
import { dteIntercambio, dtes, type DteIntercambioRow, type DteRow } from './schema'

export type NewDteIntercambio = typeof dteIntercambio.$inferInsert
export type DteIntercambioPatch = Partial<Omit<NewDteIntercambio, 'dte_id' | 'empresa_id'>>

/** Inserts the row unless the DTE already has one (a final state is reached once; this keeps a replay harmless). */
export function insertDteIntercambio(db: Db, row: NewDteIntercambio): DteIntercambioRow | undefined {
  return db.insert(dteIntercambio).values(row).onConflictDoNothing().returning().get()
}

export function findDteIntercambio(db: Db, empresaId: string, dteId: string): DteIntercambioRow | undefined {
  return db.select().from(dteIntercambio).where(and(eq(dteIntercambio.empresa_id, empresaId), eq(dteIntercambio.dte_id, dteId))).get()
}

/** The rows of a page of DTEs, by DTE id (a list reads them in one query, not one per item). */
export function findDteIntercambios(db: Db, empresaId: string, dteIds: readonly string[]): Map<string, DteIntercambioRow> {
  if (dteIds.length === 0) return new Map()
  const rows = db
    .select()
    .from(dteIntercambio)
    .where(and(eq(dteIntercambio.empresa_id, empresaId), inArray(dteIntercambio.dte_id, [...dteIds])))
    .all()
  return new Map(rows.map((r) => [r.dte_id, r]))
}

export function updateDteIntercambio(db: Db, dteId: string, patch: DteIntercambioPatch): DteIntercambioRow | undefined {
  return db.update(dteIntercambio).set(patch).where(eq(dteIntercambio.dte_id, dteId)).returning().get()
}

/**
 * The company's DTE of that type and folio issued to `rutReceptor`, with its exchange row (undefined when there is
 * none): what a receiver's answer names (RespuestaDTE, EnvioRecibos). One seek into (empresa_id, tipo_dte, folio).
 */
export function findAnsweredDte(
  db: Db,
  input: { empresaId: string; tipoDte: number; folio: number; rutReceptor: string },
): { dte: DteRow; intercambio: DteIntercambioRow | undefined } | undefined {
  const dte = db
    .select()
    .from(dtes)
    .where(and(eq(dtes.empresa_id, input.empresaId), eq(dtes.tipo_dte, input.tipoDte), eq(dtes.folio, input.folio)))
    .get()
  if (!dte || dte.rut_receptor !== input.rutReceptor) return undefined
  return { dte, intercambio: findDteIntercambio(db, input.empresaId, dte.id) }
}

/** Rows whose receiver's events are due to be read from the SII (DESIGN §13), oldest due first. */
export function findDueEventos(db: Db, nowIso: string, limit: number): DteIntercambioRow[] {
  return db
    .select()
    .from(dteIntercambio)
    .where(and(isNotNull(dteIntercambio.next_eventos_at), lte(dteIntercambio.next_eventos_at, nowIso)))
    .orderBy(asc(dteIntercambio.next_eventos_at))
    .limit(limit)
    .all()
}

/**
 * Claims a due row for one pass: next_eventos_at is pushed to a lease so another pass (this process or another) does
 * not ask the SII about it meanwhile; if the claimer dies, the lease expires and it is due again.
 */
export function claimEventos(db: Db, dteId: string, nowIso: string, leaseUntilIso: string): DteIntercambioRow | undefined {
  return db
    .update(dteIntercambio)
    .set({ next_eventos_at: leaseUntilIso })
    .where(and(eq(dteIntercambio.dte_id, dteId), isNotNull(dteIntercambio.next_eventos_at), lte(dteIntercambio.next_eventos_at, nowIso)))
    .returning()
    .get()
}
