// The RCV mirror's rows (DESIGN §16, issue 29): one state row per company and tax period, and the details of its last
// good copy. Queries only; services/rcv.ts decides when to sync and what a sync's outcome changes.
import { and, asc, eq, gt, isNotNull, isNull, lte, or, sql } from 'drizzle-orm'
import type { Db } from './open'
import { rcvDetalles, rcvPeriodos, type RcvDetalleRow, type RcvPeriodoRow } from './schema'

export function findRcvPeriodo(db: Db, empresaId: string, periodo: string): RcvPeriodoRow | undefined {
  return db.select().from(rcvPeriodos).where(and(eq(rcvPeriodos.empresa_id, empresaId), eq(rcvPeriodos.periodo, periodo))).get()
}

/** Every company's row of one period (the administrator's month table). */
export function findRcvPeriodosOf(db: Db, periodo: string): RcvPeriodoRow[] {
  return db.select().from(rcvPeriodos).where(eq(rcvPeriodos.periodo, periodo)).all()
}

/** Records an on-demand request: the row is created when the period was never asked for; a pending request keeps its time. */
export function requestRcvSync(db: Db, empresaId: string, periodo: string, nowIso: string): RcvPeriodoRow {
  db.insert(rcvPeriodos)
    .values({ empresa_id: empresaId, periodo, solicitado_at: nowIso, updated_at: nowIso })
    .onConflictDoUpdate({
      target: [rcvPeriodos.empresa_id, rcvPeriodos.periodo],
      set: { solicitado_at: sql`coalesce(${rcvPeriodos.solicitado_at}, ${nowIso})`, updated_at: nowIso },
    })
    .run()
  return findRcvPeriodo(db, empresaId, periodo)!
}

/** Periods with an on-demand request not held by a live lease, oldest request first. */
export function findRequestedRcvPeriodos(db: Db, nowIso: string, limit: number): RcvPeriodoRow[] {
  return db.select().from(rcvPeriodos)
    .where(and(isNotNull(rcvPeriodos.solicitado_at), or(isNull(rcvPeriodos.lease_until), lte(rcvPeriodos.lease_until, nowIso))))
    .orderBy(asc(rcvPeriodos.solicitado_at))
    .limit(limit)
    .all()
}

/**
 * Takes the period for one sync until `leaseUntil`, creating its row when needed; false when a live lease holds it.
 * A pending request stays recorded until the sync ends (storeRcvCopia, recordRcvFalla clear the one it served): a
 * process that dies mid-sync leaves it, and the job takes it again once the lease runs out.
 */
export function claimRcvPeriodo(db: Db, empresaId: string, periodo: string, nowIso: string, leaseUntil: string): boolean {
  return db.transaction((tx) => {
    const row = tx.select().from(rcvPeriodos).where(and(eq(rcvPeriodos.empresa_id, empresaId), eq(rcvPeriodos.periodo, periodo))).get()
    if (row && row.lease_until !== null && row.lease_until > nowIso) return false
    if (!row) {
      tx.insert(rcvPeriodos).values({ empresa_id: empresaId, periodo, intento_at: nowIso, lease_until: leaseUntil, updated_at: nowIso }).run()
      return true
    }
    tx.update(rcvPeriodos)
      .set({ intento_at: nowIso, lease_until: leaseUntil, updated_at: nowIso })
      .where(and(eq(rcvPeriodos.empresa_id, empresaId), eq(rcvPeriodos.periodo, periodo)))
      .run()
    return true
  }, { behavior: 'immediate' })
}

/** The sync that holds a period: when it started (its request, if older, is served) and the lease it took. */
export interface RcvClaim {
  readonly startedIso: string
  readonly leaseUntil: string
}

/** Still ours: a sync whose lease ran out (and was taken by another) must not write over the newer one. */
function holds(tx: Db, empresaId: string, periodo: string, claim: RcvClaim): boolean {
  const row = tx.select({ lease: rcvPeriodos.lease_until }).from(rcvPeriodos).where(and(eq(rcvPeriodos.empresa_id, empresaId), eq(rcvPeriodos.periodo, periodo))).get()
  return row?.lease === claim.leaseUntil
}

/** The request this sync served is done; one made after it started stays for the next pass. */
const servedRequest = (claim: RcvClaim) => sql`case when ${rcvPeriodos.solicitado_at} <= ${claim.startedIso} then null else ${rcvPeriodos.solicitado_at} end`

export interface RcvCopia {
  readonly resumen: Record<string, unknown>
  readonly detalles: ReadonlyArray<Omit<RcvDetalleRow, 'empresa_id' | 'periodo'>>
  readonly diferidas: number
}

/**
 * Replaces the period's copy with a good one, in one transaction with `andThen` (the event that announces it): a reader
 * never sees half of two copies, and a crash loses neither the copy nor its event. False, writing nothing, when the
 * sync no longer holds its lease.
 */
export function storeRcvCopia(db: Db, empresaId: string, periodo: string, copia: RcvCopia, nowIso: string, claim: RcvClaim, andThen: (tx: Db) => void = () => {}): boolean {
  return db.transaction((tx) => {
    if (!holds(tx, empresaId, periodo, claim)) return false
    tx.delete(rcvDetalles).where(and(eq(rcvDetalles.empresa_id, empresaId), eq(rcvDetalles.periodo, periodo))).run()
    // SQLite's bound-parameter limit (32 766) over 9 columns: chunks of 1 000 rows stay far below it.
    for (let i = 0; i < copia.detalles.length; i += 1000) {
      tx.insert(rcvDetalles).values(copia.detalles.slice(i, i + 1000).map((d) => ({ ...d, empresa_id: empresaId, periodo }))).run()
    }
    tx.update(rcvPeriodos)
      .set({
        resumen: copia.resumen, diferidas: copia.diferidas, sincronizado_at: nowIso, lease_until: null, solicitado_at: servedRequest(claim),
        falla_motivo: null, falla_mensaje: null, falla_at: null, updated_at: nowIso,
      })
      .where(and(eq(rcvPeriodos.empresa_id, empresaId), eq(rcvPeriodos.periodo, periodo)))
      .run()
    andThen(tx)
    return true
  }, { behavior: 'immediate' })
}

/** Records why a sync failed, with `andThen` in the same transaction; the last good copy stays as it was. */
export function recordRcvFalla(db: Db, empresaId: string, periodo: string, falla: { motivo: string; mensaje: string }, nowIso: string, claim: RcvClaim, andThen: (tx: Db) => void = () => {}): boolean {
  return db.transaction((tx) => {
    if (!holds(tx, empresaId, periodo, claim)) return false
    tx.update(rcvPeriodos)
      .set({ falla_motivo: falla.motivo, falla_mensaje: falla.mensaje, falla_at: nowIso, lease_until: null, solicitado_at: servedRequest(claim), updated_at: nowIso })
      .where(and(eq(rcvPeriodos.empresa_id, empresaId), eq(rcvPeriodos.periodo, periodo)))
      .run()
    andThen(tx)
    return true
  }, { behavior: 'immediate' })
}

/** One page of a register section's details, after position `afterN`. */
export function findRcvDetalles(
  db: Db,
  filter: { empresaId: string; periodo: string; registro: 'compras' | 'ventas'; seccion?: string; after?: { seccion: string; n: number } },
  limit: number,
): RcvDetalleRow[] {
  const conditions = [eq(rcvDetalles.empresa_id, filter.empresaId), eq(rcvDetalles.periodo, filter.periodo), eq(rcvDetalles.registro, filter.registro)]
  if (filter.seccion !== undefined) conditions.push(eq(rcvDetalles.seccion, filter.seccion))
  if (filter.after) {
    const a = filter.after
    conditions.push(or(gt(rcvDetalles.seccion, a.seccion), and(eq(rcvDetalles.seccion, a.seccion), gt(rcvDetalles.n, a.n)))!)
  }
  return db.select().from(rcvDetalles).where(and(...conditions)).orderBy(asc(rcvDetalles.seccion), asc(rcvDetalles.n)).limit(limit).all()
}

/** Every detail of the period's copy, in order: what the reconciliation, the F29 and the exports read. */
export function findAllRcvDetalles(db: Db, empresaId: string, periodo: string): RcvDetalleRow[] {
  return db.select().from(rcvDetalles)
    .where(and(eq(rcvDetalles.empresa_id, empresaId), eq(rcvDetalles.periodo, periodo)))
    .orderBy(asc(rcvDetalles.registro), asc(rcvDetalles.seccion), asc(rcvDetalles.n))
    .all()
}
