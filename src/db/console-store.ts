// Console sessions and one-time administrator links (DESIGN §14): rows keyed by the SHA-256 of their tokens.
import { and, eq, isNull, lt } from 'drizzle-orm'
import type { Db } from './open'
import { apiKeys, consoleLinks, consoleSessions, type ApiKeyRow, type ConsoleLinkRow, type ConsoleSessionRow } from './schema'

export type NewConsoleSession = typeof consoleSessions.$inferInsert

export function insertConsoleSession(db: Db, row: NewConsoleSession): ConsoleSessionRow {
  return db.insert(consoleSessions).values(row).returning().get()
}

export function findConsoleSession(db: Db, tokenHash: string): ConsoleSessionRow | undefined {
  return db.select().from(consoleSessions).where(eq(consoleSessions.token_hash, tokenHash)).get()
}

export function updateConsoleSession(db: Db, id: string, patch: Partial<Pick<ConsoleSessionRow, 'last_seen_at' | 'empresa_id'>>): void {
  db.update(consoleSessions).set(patch).where(eq(consoleSessions.id, id)).run()
}

export function deleteConsoleSession(db: Db, id: string): void {
  db.delete(consoleSessions).where(eq(consoleSessions.id, id)).run()
}

/** Sessions past their absolute end; idle ones are refused on use and fall out here once their end passes too. */
export function deleteExpiredConsoleSessions(db: Db, now: string): void {
  db.delete(consoleSessions).where(lt(consoleSessions.expires_at, now)).run()
}

export function insertConsoleLink(db: Db, row: ConsoleLinkRow): void {
  db.insert(consoleLinks).values(row).run()
}

/** Marks the link used if it is unused and unexpired: one UPDATE, so two browsers racing on one link get one session. */
export function useConsoleLink(db: Db, tokenHash: string, now: string): boolean {
  const used = db
    .update(consoleLinks)
    .set({ used_at: now })
    .where(and(eq(consoleLinks.token_hash, tokenHash), isNull(consoleLinks.used_at)))
    .returning()
    .get()
  return used !== undefined && used.expires_at > now
}

export function deleteStaleConsoleLinks(db: Db, now: string): void {
  db.delete(consoleLinks).where(lt(consoleLinks.expires_at, now)).run()
}

export function findApiKeyById(db: Db, id: string): ApiKeyRow | undefined {
  return db.select().from(apiKeys).where(eq(apiKeys.id, id)).get()
}
