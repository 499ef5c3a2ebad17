// A company's exchange mailbox (DESIGN §13): one row per company, its passwords sealed by the caller (services/mailbox.ts).
import { and, asc, eq } from 'drizzle-orm'
import type { Db } from './open'
import { mailboxes, type MailboxRow } from './schema'

export type NewMailbox = typeof mailboxes.$inferInsert

export function findMailbox(db: Db, empresaId: string): MailboxRow | undefined {
  return db.select().from(mailboxes).where(eq(mailboxes.empresa_id, empresaId)).get()
}

/** Inserts or replaces the settings; `created_at` stays the first save's, the poll's outcome is the row's to keep. */
export function upsertMailbox(db: Db, row: NewMailbox): MailboxRow {
  const { empresa_id: _id, created_at: _created, ...settings } = row
  return db.insert(mailboxes).values(row).onConflictDoUpdate({ target: mailboxes.empresa_id, set: settings }).returning().get()
}

export function deleteMailbox(db: Db, empresaId: string): boolean {
  return db.delete(mailboxes).where(eq(mailboxes.empresa_id, empresaId)).returning({ id: mailboxes.empresa_id }).all().length > 0
}

/** The companies whose mailbox the `intercambio` job reads, in a stable order. */
export function listMailboxEmpresaIds(db: Db): string[] {
  return db.select({ id: mailboxes.empresa_id }).from(mailboxes).orderBy(asc(mailboxes.empresa_id)).all().map((r) => r.id)
}

/** A poll's outcome; false when the mailbox was removed meanwhile. */
/** False when the mailbox is gone, or when `readAt` is given and the settings changed since the poll read them. */
export function recordMailboxPoll(db: Db, empresaId: string, patch: { last_poll_at: string; last_error: string | null }, readAt?: string): boolean {
  const where = readAt === undefined ? eq(mailboxes.empresa_id, empresaId) : and(eq(mailboxes.empresa_id, empresaId), eq(mailboxes.updated_at, readAt))
  return db.update(mailboxes).set(patch).where(where).returning({ id: mailboxes.empresa_id }).all().length > 0
}
