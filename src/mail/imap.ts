// Reading a company's exchange mailbox (DESIGN §13 "Receiving") with imapflow, and its attachments with mailparser.
// Every failure comes back as a value with a short Spanish reason (src/mail/types.ts); the traps are in
// docs/stack-notes.md "Mail (imapflow, mailparser, nodemailer, dovecot in tests)".
// imapflow and mailparser load at the first poll or connection test, not at start: a server without a configured
// mailbox never needs them, and loaded with nodemailer they added ~16 MB to the server's memory at rest (issue 17).
import type { ImapFlow, ImapFlowOptions, MessageEnvelopeObject } from 'imapflow'
import type { Attachment } from 'mailparser'
import { cleanReason, codeOf, MailTimeout, networkReason, within } from './deadline'
import type { ConnectionCheck, ImapSettings, InboxMessage, MailAttachment, ReadOptions, ReadOutcome } from './types'

/**
 * How long a connection may stay silent while `handle` works on a message (imapflow's socketTimeout). Not timeoutMs:
 * a reception's checks can take seconds, and a dropped connection there would leave the message unseen for nothing.
 */
const HANDLE_ALLOWANCE_MS = 5 * 60_000

/**
 * Reads up to `opts.maxMessages` unseen messages of the folder, oldest first, and gives each to `handle`. A message is
 * marked \Seen only after `handle` resolved (DESIGN §13: seen only after its outcome is committed); when it throws,
 * the loop stops there and that message stays unseen for the next poll.
 */
export async function readUnseen(
  settings: ImapSettings,
  opts: ReadOptions,
  handle: (msg: InboxMessage) => Promise<void>,
): Promise<ReadOutcome> {
  const session = await openSession(settings, opts.timeoutMs, HANDLE_ALLOWANCE_MS)
  let handled = 0
  try {
    await session.step('conexión', session.client.connect())
    await session.step('abrir carpeta', session.client.mailboxOpen(settings.folder))
    for (const listed of await unseenOldestFirst(session, opts.maxMessages)) {
      const { uid, size } = listed
      const msg = size > opts.maxMessageBytes ? oversize(listed) : await download(session, uid, size)
      if (msg === null) continue  // expunged by someone else since the search
      try {
        await handle(msg)
      } catch (err) {
        return { ok: false, error: `el mensaje UID ${uid} no se pudo procesar: ${err instanceof Error ? err.message : String(err)}`, handled }
      }
      handled++  // its outcome is committed: a failure to mark it only means it is read again (and found a duplicate)
      const isMarked = await session.step('marcar leído', session.client.messageFlagsAdd(String(uid), ['\\Seen'], { uid: true }))
      if (!isMarked) return { ok: false, error: `IMAP ${settings.host}:${settings.port}: el mensaje UID ${uid} no se pudo marcar como leído`, handled }
    }
    return { ok: true, handled }
  } catch (err) {
    return { ok: false, error: imapReason(err, settings), handled }
  } finally {
    await session.end()
  }
}

/** Connects, logs in, opens the folder read-only (EXAMINE: nothing changes in it), logs out. */
export async function testImap(settings: ImapSettings, timeoutMs: number): Promise<ConnectionCheck> {
  const session = await openSession(settings, timeoutMs, timeoutMs)
  try {
    await session.step('conexión', session.client.connect())
    await session.step('abrir carpeta', session.client.mailboxOpen(settings.folder, { readOnly: true }))
    return { ok: true }
  } catch (err) {
    return { ok: false, error: imapReason(err, settings) }
  } finally {
    await session.end()
  }
}

interface Session {
  readonly client: ImapFlow
  /** One network step, bounded by timeoutMs; on expiry the connection is closed. */
  step<T>(name: string, work: Promise<T>): Promise<T>
  /** LOGOUT when the connection is usable (bounded too), else close; never throws. */
  end(): Promise<void>
}

async function openSession(settings: ImapSettings, timeoutMs: number, silenceMs: number): Promise<Session> {
  const { ImapFlow } = await import('imapflow')
  const options: ImapFlowOptions = {
    host: settings.host,
    port: settings.port,
    // tls: implicit TLS. Otherwise imapflow upgrades with STARTTLS when the server offers it (doSTARTTLS left unset)
    // and stays in clear text when it does not: a LAN server without TLS keeps working, as DESIGN §13 allows.
    secure: settings.tls,
    auth: { user: settings.user, pass: settings.password },
    logger: false,
    disableAutoIdle: true,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: Math.max(timeoutMs, silenceMs),
  }
  const client = new ImapFlow(options)
  // imapflow emits 'error' on socket failures; an EventEmitter without a listener would throw it out of the process.
  // The failure reaches us anyway through the pending command's rejection.
  client.on('error', () => {})
  const abort = () => client.close()
  return {
    client,
    step: (name, work) => within(name, timeoutMs, abort, work),
    async end() {
      try {
        if (client.usable) await within('cierre', timeoutMs, abort, client.logout())
      } catch {
        // The connection is closed below either way.
      }
      client.close()
    },
  }
}

interface Listed {
  readonly uid: number
  readonly size: number
  readonly envelope: MessageEnvelopeObject | undefined
}

async function unseenOldestFirst(session: Session, maxMessages: number): Promise<Listed[]> {
  const found = await session.step('buscar no leídos', session.client.search({ seen: false }, { uid: true }))
  if (!Array.isArray(found)) throw new Error('el servidor rechazó la búsqueda de mensajes no leídos')
  // UIDs grow with arrival (RFC 3501 §2.3.1.1): the smallest are the oldest.
  const uids = [...found].sort((a, b) => a - b).slice(0, Math.max(0, maxMessages))
  if (uids.length === 0) return []
  // The ENVELOPE comes parsed by the server, without downloading the body: an oversize message still has its sender.
  const listed = await session.step('tamaños', session.client.fetchAll(uids.join(','), { uid: true, size: true, envelope: true }, { uid: true }))
  const byUid = new Map(listed.map((m) => [m.uid, m]))
  return uids.flatMap((uid) => {
    const m = byUid.get(uid)
    return m ? [{ uid, size: m.size ?? 0, envelope: m.envelope }] : []
  })
}

function oversize({ uid, size, envelope }: Listed): InboxMessage {
  return {
    uid,
    messageId: envelope?.messageId ?? null,
    from: envelope?.from?.[0]?.address?.toLowerCase() ?? null,
    subject: envelope?.subject ?? null,
    xmlAttachments: [],
    oversize: true,
    size,
  }
}

async function download(session: Session, uid: number, size: number): Promise<InboxMessage | null> {
  // imapflow fetches the source with BODY.PEEK[]: reading does not set \Seen, only our STORE after handle does.
  const fetched = await session.step('descarga', session.client.fetchOne(String(uid), { uid: true, source: true }, { uid: true }))
  if (!fetched || !fetched.source) return null
  const { simpleParser } = await import('mailparser')
  const parsed = await simpleParser(fetched.source, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true })
  return {
    uid,
    messageId: parsed.messageId ?? null,
    from: parsed.from?.value[0]?.address?.toLowerCase() ?? null,
    subject: parsed.subject ?? null,
    xmlAttachments: parsed.attachments.filter(isXml).map(toMailAttachment),
    oversize: false,
    size,
  }
}

/** An exchange attachment: its name ends in .xml, or its type says XML (some mailers send `application/octet-stream`, some no name). */
function isXml(a: Attachment): boolean {
  const type = a.contentType.toLowerCase()
  return (a.filename ?? '').toLowerCase().endsWith('.xml') || type === 'application/xml' || type === 'text/xml'
}

function toMailAttachment(a: Attachment): MailAttachment {
  return { fileName: a.filename ?? null, contentType: a.contentType, content: new Uint8Array(a.content), size: a.content.length }
}

function imapReason(err: unknown, settings: ImapSettings): string {
  const where = `IMAP ${settings.host}:${settings.port}`
  if (err instanceof MailTimeout) return `${where}: ${err.message}`
  const e = err as { authenticationFailed?: boolean; mailboxMissing?: boolean; responseText?: string; serverResponseCode?: string } | null
  if (e?.authenticationFailed) return `${where}: usuario o contraseña rechazados`
  if (e?.mailboxMissing || e?.serverResponseCode === 'NONEXISTENT') return `${where}: la carpeta "${settings.folder}" no existe`
  const code = codeOf(err)
  if (code === 'CONNECT_TIMEOUT' || code === 'GREETING_TIMEOUT' || code === 'UPGRADE_TIMEOUT' || code === 'ETIMEOUT')
    return `${where}: sin respuesta (${code})`
  const network = networkReason(err)
  if (network) return `${where}: ${network}`
  const text = e?.responseText || (err instanceof Error ? err.message : String(err))
  return `${where}: ${cleanReason(text, settings.password)}`
}
