// Attachments already handled, per company and SHA-256 (DESIGN §13: the same attachment twice is processed once).
import { and, eq } from 'drizzle-orm'
import type { Db } from './open'
import { inboxAttachments } from './schema'

export type InboxAttachmentRow = typeof inboxAttachments.$inferSelect

export function findInboxAttachment(db: Db, empresaId: string, sha256: string): InboxAttachmentRow | undefined {
  return db.select().from(inboxAttachments).where(and(eq(inboxAttachments.empresa_id, empresaId), eq(inboxAttachments.sha256, sha256))).get()
}

/** Inserts the row; a second insert of the same attachment (a race, a replay) is ignored. */
export function recordInboxAttachment(db: Db, row: typeof inboxAttachments.$inferInsert): void {
  db.insert(inboxAttachments).values(row).onConflictDoNothing().run()
}
