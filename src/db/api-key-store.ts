// API keys: only their SHA-256 is stored (DESIGN §4).
import { and, desc, eq } from 'drizzle-orm'
import type { Db } from './open'
import { apiKeys, type ApiKeyRow } from './schema'

export type NewApiKey = typeof apiKeys.$inferInsert

export function insertApiKey(db: Db, row: NewApiKey): ApiKeyRow {
  return db.insert(apiKeys).values(row).returning().get()
}

export function findApiKeyByHash(db: Db, keyHash: string): ApiKeyRow | undefined {
  return db.select().from(apiKeys).where(eq(apiKeys.key_hash, keyHash)).get()
}

export function listApiKeys(db: Db, empresaId?: string): ApiKeyRow[] {
  const q = db.select().from(apiKeys)
  return (empresaId ? q.where(eq(apiKeys.empresa_id, empresaId)) : q).orderBy(desc(apiKeys.id)).all()
}

export function revokeApiKey(db: Db, id: string, at: string): ApiKeyRow | undefined {
  return db.update(apiKeys).set({ revoked_at: at }).where(and(eq(apiKeys.id, id))).returning().get()
}

export function touchApiKey(db: Db, id: string, at: string): void {
  db.update(apiKeys).set({ last_used_at: at }).where(eq(apiKeys.id, id)).run()
}
