// Stored 201 answers of POST /dte, per company and key (spec 4.8, DESIGN §12).
import { and, eq, lt } from 'drizzle-orm'
import type { Db } from './open'
import { idempotencyKeys, type IdempotencyRow } from './schema'

export function findIdempotencyKey(db: Db, empresaId: string, key: string): IdempotencyRow | undefined {
  return db.select().from(idempotencyKeys).where(and(eq(idempotencyKeys.empresa_id, empresaId), eq(idempotencyKeys.key, key))).get()
}

export function insertIdempotencyKey(db: Db, row: IdempotencyRow): void {
  db.insert(idempotencyKeys).values(row).run()
}

export function deleteIdempotencyKey(db: Db, empresaId: string, key: string): void {
  db.delete(idempotencyKeys).where(and(eq(idempotencyKeys.empresa_id, empresaId), eq(idempotencyKeys.key, key))).run()
}

/** Keys past their retention; returns how many were removed. */
export function deleteIdempotencyKeysBefore(db: Db, cutoff: string): number {
  return db.delete(idempotencyKeys).where(lt(idempotencyKeys.created_at, cutoff)).returning({ key: idempotencyKeys.key }).all().length
}
