// The SII's list of electronic issuers and their exchange addresses (DESIGN §13), filled by
// `timbre contribuyentes import FILE`. One row per RUT, shared by every company of the instance: it is public data.
import { eq, sql } from 'drizzle-orm'
import type { Db } from './open'
import { contribuyentes, type ContribuyenteRow } from './schema'

export type NewContribuyente = typeof contribuyentes.$inferInsert
export type UpsertOutcome = 'imported' | 'updated' | 'unchanged'

export function findContribuyente(db: Db, rut: string): ContribuyenteRow | undefined {
  return db.select().from(contribuyentes).where(eq(contribuyentes.rut, rut)).get()
}

export function countContribuyentes(db: Db): number {
  return db.select({ n: sql<number>`count(*)` }).from(contribuyentes).get()?.n ?? 0
}

/**
 * An upsert for many rows (an import of the SII's list: ~100 000 to 2 000 000 lines): three statements prepared once,
 * one primary-key seek per row. A row whose fields are all unchanged is not written (its `updated_at` stays), so a
 * monthly re-import rewrites only what the SII changed. Call it inside the caller's transaction.
 */
export function contribuyenteUpserter(db: Db): (row: NewContribuyente) => UpsertOutcome {
  const find = db.select().from(contribuyentes).where(eq(contribuyentes.rut, sql.placeholder('rut'))).prepare()
  const insert = db
    .insert(contribuyentes)
    .values({
      rut: sql.placeholder('rut'),
      razon_social: sql.placeholder('razon_social'),
      numero_resolucion: sql.placeholder('numero_resolucion'),
      fecha_resolucion: sql.placeholder('fecha_resolucion'),
      email_intercambio: sql.placeholder('email_intercambio'),
      updated_at: sql.placeholder('updated_at'),
    })
    .prepare()
  const update = db
    .update(contribuyentes)
    .set({
      razon_social: sql`${sql.placeholder('razon_social')}`,
      numero_resolucion: sql`${sql.placeholder('numero_resolucion')}`,
      fecha_resolucion: sql`${sql.placeholder('fecha_resolucion')}`,
      email_intercambio: sql`${sql.placeholder('email_intercambio')}`,
      updated_at: sql`${sql.placeholder('updated_at')}`,
    })
    .where(eq(contribuyentes.rut, sql.placeholder('rut')))
    .prepare()
  return (row) => {
    const values = {
      rut: row.rut,
      razon_social: row.razon_social,
      numero_resolucion: row.numero_resolucion ?? null,
      fecha_resolucion: row.fecha_resolucion ?? null,
      email_intercambio: row.email_intercambio ?? null,
      updated_at: row.updated_at,
    }
    const existing = find.get({ rut: row.rut })
    if (!existing) {
      insert.run(values)
      return 'imported'
    }
    const same =
      existing.razon_social === values.razon_social &&
      existing.numero_resolucion === values.numero_resolucion &&
      existing.fecha_resolucion === values.fecha_resolucion &&
      existing.email_intercambio === values.email_intercambio
    if (same) return 'unchanged'
    update.run(values)
    return 'updated'
  }
}
