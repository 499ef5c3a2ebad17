// Reads each configured exchange mailbox (DESIGN §13 "Receiving"): every XML attachment of every unseen message is
// handled once (inbox_attachments, by SHA-256 per company) and the message is marked seen only after its outcome is
// committed (mail/imap.ts calls \Seen after `handle` resolves). What each attachment is decides where it goes:
// - EnvioDTE: a supplier's documents → received documents (services/recibidos.ts), with the acuse mailed back;
// - RespuestaDTE / EnvioRecibos: a receiver's answer about one of the company's own DTEs (services/intercambio-dte.ts);
// - RespSII: the SII's result mail about one of the company's own envelopes (services/resp-sii-mail.ts).
import { createHash } from 'node:crypto'
import { isoTimestamp } from '../clock'
import { findInboxAttachment, recordInboxAttachment } from '../db/inbox-store'
import { readUnseen } from '../mail/imap'
import type { InboxMessage, MailAttachment } from '../mail/types'
import { exchangeKindOf } from '../xml/exchange-kind'
import type { Deps } from './deps'
import { applyEnvioRecibos, applyRespuestaDte } from './intercambio-dte'
import { configuredMailboxes, mailboxSettings, recordPoll } from './mailbox'
import { receiveEnvio } from './recibidos'
import { applyRespSii } from './resp-sii-mail'

/** Per poll and mailbox: the rest wait for the next pass, so one flooded mailbox cannot hold the job. */
export const MAX_MESSAGES_PER_POLL = 50
/**
 * A message over this is not downloaded. The SII's own upload limit for an EnvioDTE is in the tens of MB and a
 * supplier's monthly envelope rarely passes a few; 25 MB is also the usual limit of mail servers.
 */
export const MAX_MESSAGE_BYTES = 25 * 1024 * 1024
const IMAP_TIMEOUT_MS = 30_000

type InboxDeps = Pick<Deps, 'store' | 'vault' | 'clock' | 'log' | 'config' | 'sii' | 'siiTiming'>

/** One pass over every configured mailbox, one after the other; returns the attachments handled. */
export async function pollMailboxes(deps: InboxDeps): Promise<number> {
  let handled = 0
  for (const empresaId of configuredMailboxes(deps)) handled += await pollMailbox(deps, empresaId)
  return handled
}

export async function pollMailbox(deps: InboxDeps, empresaId: string): Promise<number> {
  const settings = mailboxSettings(deps, { empresaId })
  if (!settings) return 0
  let handled = 0
  const outcome = await readUnseen(settings.imap, { maxMessages: MAX_MESSAGES_PER_POLL, maxMessageBytes: MAX_MESSAGE_BYTES, timeoutMs: IMAP_TIMEOUT_MS }, async (msg) => {
    handled += await handleMessage(deps, empresaId, msg)
  })
  if (!outcome.ok) deps.log.warn('intercambio.poll_failed', { empresa_id: empresaId, error: outcome.error, handled: outcome.handled })
  recordPoll(deps, { empresaId, error: outcome.ok ? null : outcome.error, settingsAt: settings.updatedAt })
  return handled
}

/** Handles every XML attachment of one message; throws (leaving the message unseen) only when the store fails. */
export async function handleMessage(deps: InboxDeps, empresaId: string, msg: InboxMessage): Promise<number> {
  if (msg.oversize) {
    // Nothing was downloaded, so nothing can be checked or answered: the message is recorded once (by its identity,
    // not its bytes) and marked seen, so a 2 GB message does not come back on every poll.
    const sha256 = sha256Hex(new TextEncoder().encode(`oversize\u0000${msg.messageId ?? ''}\u0000${msg.uid}\u0000${msg.size}`))
    if (!findInboxAttachment(deps.store.db, empresaId, sha256)) {
      recordInboxAttachment(deps.store.db, {
        empresa_id: empresaId, sha256, kind: 'desconocido', from_address: msg.from, file_name: null,
        outcome: `mensaje de ${msg.size} bytes sobre el máximo de ${MAX_MESSAGE_BYTES}: no descargado`, created_at: isoTimestamp(deps.clock.now()),
      })
      deps.log.warn('intercambio.message_oversize', { empresa_id: empresaId, from: msg.from, size: msg.size })
    }
    return 1
  }
  let handled = 0
  for (const attachment of msg.xmlAttachments) {
    await handleAttachment(deps, empresaId, msg, attachment)
    handled++
  }
  return handled
}

async function handleAttachment(deps: InboxDeps, empresaId: string, msg: InboxMessage, attachment: MailAttachment): Promise<void> {
  const bytes = attachment.content
  if (bytes === null) return
  const sha256 = sha256Hex(bytes)
  if (findInboxAttachment(deps.store.db, empresaId, sha256)) return
  const kind = exchangeKindOf(bytes)
  const at = isoTimestamp(deps.clock.now())
  const record = (recordKind: string, outcome: string) =>
    recordInboxAttachment(deps.store.db, { empresa_id: empresaId, sha256, kind: recordKind, outcome, from_address: msg.from, file_name: attachment.fileName, created_at: at })

  // An EnvioDTE, and anything unreadable that came as XML, is a reception: receiveEnvio records it (with its own
  // inbox_attachments row, in its transaction) and answers the sender with the envelope receipt, code 91 included.
  if (kind === 'EnvioDTE' || kind === null) {
    await receiveEnvio(deps, { empresaId, bytes, origen: 'correo', fromAddress: msg.from, fileName: attachment.fileName })
    return
  }
  // Answers about the company's own DTEs. Applying one twice only re-writes the same fields, so the row that marks
  // the attachment done comes after it: a crash in between re-applies it, and at worst repeats its webhook, which
  // webhooks allow (at least once, DESIGN §7). Each reader loads with the first answer of its kind (issue 17: a server
  // whose mailbox never gets one keeps them, and the XML libraries under them, out of memory).
  if (kind === 'RespuestaDTE') {
    const { readRespuestaDte } = await import('../xml/respuesta-dte')
    const read = readRespuestaDte(bytes)
    const { matched } = read ? applyRespuestaDte(deps, { empresaId, read }) : { matched: 0 }
    record('respuesta_dte', read ? `${matched} DTE actualizados` : 'RespuestaDTE ilegible')
  } else if (kind === 'EnvioRecibos') {
    const { readEnvioRecibos } = await import('../xml/envio-recibos')
    const read = readEnvioRecibos(bytes)
    const { matched } = read ? applyEnvioRecibos(deps, { empresaId, read }) : { matched: 0 }
    record('envio_recibos', read ? `${matched} DTE actualizados` : 'EnvioRecibos ilegible')
  } else {
    const { readRespSii } = await import('../xml/resp-sii')
    const read = readRespSii(bytes)
    const { matched } = read ? applyRespSii(deps, { empresaId, read }) : { matched: 0 }
    record('resp_sii', read ? `${matched} DTE actualizados` : 'RespSII ilegible')
  }
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}
