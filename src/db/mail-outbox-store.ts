// The outgoing mail queue (DESIGN §13, docs/decisions/intercambio.md): rows written in the caller's transaction, the
// one that makes the change the mail reports; the `intercambio` job sends them (services/mail-outbox.ts).
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
