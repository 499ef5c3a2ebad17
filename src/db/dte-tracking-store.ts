// The SII answers of each DTE (issue 13): appended by the SII jobs in the transaction of the DTE change they go with,
// read back in order for GET /dte/{id}. One seek into the (empresa_id, dte_id, seq) index either way.
import { and, asc, desc, eq } from 'drizzle-orm'
import type { Db } from './open'
import { dteTrackingEvents, type DteTrackingEventRow } from './schema'

export type NewDteTrackingEvent = Omit<typeof dteTrackingEvents.$inferInsert, 'seq'>

export function insertTrackingEvent(db: Db, row: NewDteTrackingEvent): DteTrackingEventRow {
  return db.insert(dteTrackingEvents).values(row).returning().get()
}

/** The company's DTE's answers, oldest first. */
export function listTrackingEvents(db: Db, empresaId: string, dteId: string): DteTrackingEventRow[] {
  return db
    .select()
    .from(dteTrackingEvents)
    .where(and(eq(dteTrackingEvents.empresa_id, empresaId), eq(dteTrackingEvents.dte_id, dteId)))
    .orderBy(asc(dteTrackingEvents.seq))
    .all()
}

/** The latest answer of one operation about this DTE, to record a status only when it says something new. */
export function lastTrackingEvent(db: Db, empresaId: string, dteId: string, operacion: DteTrackingEventRow['operacion']): DteTrackingEventRow | undefined {
  return db
    .select()
    .from(dteTrackingEvents)
    .where(and(eq(dteTrackingEvents.empresa_id, empresaId), eq(dteTrackingEvents.dte_id, dteId), eq(dteTrackingEvents.operacion, operacion)))
    .orderBy(desc(dteTrackingEvents.seq))
    .limit(1)
    .get()
}
