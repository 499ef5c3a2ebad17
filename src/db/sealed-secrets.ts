// One sealed secret of each kind, the newest, with the purpose it was sealed under (crypto/vault.ts): enough to tell
// whether a master key opens this data dir before anything relies on it (DESIGN §3).
import { desc, isNotNull } from 'drizzle-orm'
import type { Db } from './open'
import { cafs, certificados, consoleAccounts, mailboxes, webhooks } from './schema'

export interface SealedSample {
  readonly purpose: string
  readonly sealed: Uint8Array
}

export function sealedSecretSamples(db: Db): SealedSample[] {
  const certificado = db.select({ id: certificados.id, sealed: certificados.private_key_sealed }).from(certificados).orderBy(desc(certificados.id)).limit(1).get()
  const caf = db.select({ id: cafs.id, sealed: cafs.private_key_sealed }).from(cafs).orderBy(desc(cafs.id)).limit(1).get()
  const webhook = db.select({ id: webhooks.id, sealed: webhooks.secret_sealed }).from(webhooks).orderBy(desc(webhooks.id)).limit(1).get()
  const mailbox = db
    .select({ id: mailboxes.empresa_id, imap: mailboxes.imap_password_sealed, smtp: mailboxes.smtp_password_sealed })
    .from(mailboxes)
    .orderBy(desc(mailboxes.updated_at))
    .limit(1)
    .get()
  const account = db
    .select({ id: consoleAccounts.id, sealed: consoleAccounts.totp_sealed })
    .from(consoleAccounts)
    .where(isNotNull(consoleAccounts.totp_sealed))
    .orderBy(desc(consoleAccounts.updated_at))
    .limit(1)
    .get()
  return [
    ...(certificado ? [{ purpose: `certificado:${certificado.id}`, sealed: certificado.sealed }] : []),
    ...(caf ? [{ purpose: `caf:${caf.id}`, sealed: caf.sealed }] : []),
    ...(webhook ? [{ purpose: `webhook:${webhook.id}`, sealed: webhook.sealed }] : []),
    ...(mailbox ? [{ purpose: `mailbox-imap:${mailbox.id}`, sealed: mailbox.imap }] : []),
    ...(mailbox?.smtp ? [{ purpose: `mailbox-smtp:${mailbox.id}`, sealed: mailbox.smtp }] : []),
    ...(account?.sealed ? [{ purpose: `console-totp:${account.id}`, sealed: account.sealed }] : []),
  ]
}
