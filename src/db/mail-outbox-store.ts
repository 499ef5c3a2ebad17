// The outgoing mail queue (DESIGN §13, docs/decisions/intercambio.md): rows written in the caller's transaction, the
// one that makes the change the mail reports; the `intercambio` job sends them (services/mail-outbox.ts).
import { and, eq, inArray, lte, sql } from 'drizzle-orm'
import type { Db } from './open'
import { mailOutbox, type MailOutboxRow } from './schema'

export type MailKind = MailOutboxRow['kind']

export interface QueuedMail {
  readonly empresaId: string
  readonly kind: MailKind
  readonly dteId?: string | null
  readonly recibidoId?: string | null
  readonly recibidoEnvioId?: string | null
  /** Null when no address is known: the row is kept as `sin_destinatario` and never sent. */
  readonly to: string | null
  readonly subject: string
  /** The signed XML (ISO-8859-1 bytes); null for `envio_dte`, built at send time. */
  readonly attachment: Uint8Array | null
  readonly attachmentName: string | null
  /** RFC 3339; the first attempt is due at once. */
  readonly at: string
}

export function enqueueMail(db: Db, mail: QueuedMail): MailOutboxRow {
  return db
    .insert(mailOutbox)
    .values({
      id: Bun.randomUUIDv7(),
      empresa_id: mail.empresaId,
      kind: mail.kind,
      dte_id: mail.dteId ?? null,
      recibido_id: mail.recibidoId ?? null,
      recibido_envio_id: mail.recibidoEnvioId ?? null,
      to_address: mail.to,
      subject: mail.subject,
      attachment: mail.attachment === null ? null : Buffer.from(mail.attachment),
      attachment_name: mail.attachmentName,
      status: mail.to === null ? 'sin_destinatario' : 'pending',
      next_attempt_at: mail.to === null ? null : mail.at,
      created_at: mail.at,
      updated_at: mail.at,
    })
    .returning()
    .get()
}

export type MailPatch = Partial<Omit<typeof mailOutbox.$inferInsert, 'id' | 'empresa_id' | 'kind'>>

/**
 * Due mail, fairly across companies: at most `perEmpresa` of each company's oldest due rows, taken in turns (every
 * company's first, then every company's second, …) up to `limit`, so one company's backlog cannot starve another's.
 */
export function findDueMail(db: Db, nowIso: string, opts: { limit: number; perEmpresa: number }): MailOutboxRow[] {
  const ids = db
    .all<{ id: string }>(
      sql`SELECT id FROM (
            SELECT id, next_attempt_at, row_number() OVER (PARTITION BY empresa_id ORDER BY next_attempt_at, id) AS turn
            FROM mail_outbox WHERE status = 'pending' AND next_attempt_at <= ${nowIso}
          ) WHERE turn <= ${opts.perEmpresa} ORDER BY turn, next_attempt_at, id LIMIT ${opts.limit}`,
    )
    .map((r) => r.id)
  if (ids.length === 0) return []
  const rows = new Map(db.select().from(mailOutbox).where(inArray(mailOutbox.id, ids)).all().map((r) => [r.id, r]))
  return ids.flatMap((id) => rows.get(id) ?? [])
}

/**
 * Claims a due row for one attempt: next_attempt_at is pushed to a lease, so no other pass (this process or another)
 * sends it meanwhile; if the sender dies, the lease runs out and the mail is due again.
 */
export function claimMail(db: Db, id: string, nowIso: string, leaseUntilIso: string): MailOutboxRow | undefined {
  return db
    .update(mailOutbox)
    .set({ next_attempt_at: leaseUntilIso })
    .where(and(eq(mailOutbox.id, id), eq(mailOutbox.status, 'pending'), lte(mailOutbox.next_attempt_at, nowIso)))
    .returning()
    .get()
}

export function updateMail(db: Db, id: string, patch: MailPatch): MailOutboxRow | undefined {
  return db.update(mailOutbox).set(patch).where(eq(mailOutbox.id, id)).returning().get()
}

/** The mail rows about one issued DTE, oldest first. */
export function findMailOfDte(db: Db, empresaId: string, dteId: string): MailOutboxRow[] {
  return db.select().from(mailOutbox).where(and(eq(mailOutbox.empresa_id, empresaId), eq(mailOutbox.dte_id, dteId))).orderBy(mailOutbox.id).all()
}
