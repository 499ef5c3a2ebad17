// API keys: only their SHA-256 is stored (DESIGN §4).
import { and, desc, eq, sql } from 'drizzle-orm'
import type { Db } from './open'
import { preparedStatements } from './prepared'
import { apiKeys, type ApiKeyRow } from './schema'

// The auth gate looks the key up on every request, so a revocation counts at once (DESIGN §12): prepared once per
// connection (db/prepared.ts) rather than cached.
const statements = preparedStatements((db) => ({
  byHash: db.select().from(apiKeys).where(eq(apiKeys.key_hash, sql.placeholder('keyHash'))).prepare(),
}))

export type NewApiKey = typeof apiKeys.$inferInsert

export function insertApiKey(db: Db, row: NewApiKey): ApiKeyRow {
  return db.insert(apiKeys).values(row).returning().get()
}

export function findApiKeyByHash(db: Db, keyHash: string): ApiKeyRow | undefined {
  return statements(db).byHash.get({ keyHash })
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
