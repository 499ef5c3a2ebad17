// Stored 201 answers of POST /dte, per company and key (spec 4.8, DESIGN §12).
import { and, eq, lt, sql } from 'drizzle-orm'
import type { Db } from './open'
import { preparedStatements } from './prepared'
import { idempotencyKeys, type IdempotencyRow } from './schema'

// Every POST /dte looks its key up and stores its answer: prepared once per connection (db/prepared.ts).
const statements = preparedStatements((db) => {
  const byKey = and(eq(idempotencyKeys.empresa_id, sql.placeholder('empresaId')), eq(idempotencyKeys.key, sql.placeholder('key')))
  return {
    find: db.select().from(idempotencyKeys).where(byKey).prepare(),
    insert: db
      .insert(idempotencyKeys)
      .values({
        empresa_id: sql.placeholder('empresa_id'),
        key: sql.placeholder('key'),
        request_hash: sql.placeholder('request_hash'),
        response_status: sql.placeholder('response_status'),
        response_body: sql.placeholder('response_body'),
        location: sql.placeholder('location'),
        created_at: sql.placeholder('created_at'),
      })
      .prepare(),
    delete: db.delete(idempotencyKeys).where(byKey).prepare(),
  }
})

export function findIdempotencyKey(db: Db, empresaId: string, key: string): IdempotencyRow | undefined {
  return statements(db).find.get({ empresaId, key })
}

export function insertIdempotencyKey(db: Db, row: IdempotencyRow): void {
  statements(db).insert.run(row)
}

export function deleteIdempotencyKey(db: Db, empresaId: string, key: string): void {
  statements(db).delete.run({ empresaId, key })
}

/** Keys past their retention; returns how many were removed. */
export function deleteIdempotencyKeysBefore(db: Db, cutoff: string): number {
  return db.delete(idempotencyKeys).where(lt(idempotencyKeys.created_at, cutoff)).returning({ key: idempotencyKeys.key }).all().length
}
