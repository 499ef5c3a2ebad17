// Sending exchange mail (DESIGN §13 "Sending") with nodemailer. The outbox (src/services/mail-outbox.ts) decides what
// to send and when to retry; this file sends one message and says whether retrying can help.
//
// A new transport per call, no pool: the outbox sends a handful of messages per company per run, a company's settings
// (and password) can change between two runs, and servers drop idle pooled connections (421) anyway; one connection per
// message also keeps one message's failure from touching the next. Connecting costs a round trip or two, nothing here.
// nodemailer loads at the first send or connection test, not at start, as imapflow does in imap.ts (issue 17: memory at
// rest).
import type { SMTPTransportOptions } from 'nodemailer/lib/smtp-transport'
import { cleanReason, codeOf, MailTimeout, networkReason, within } from './deadline'
import type { ConnectionCheck, OutgoingMail, SendOutcome, SmtpSettings } from './types'

/**
 * A whole send is bounded by this many timeoutMs: nodemailer's own timeouts bound connecting, the greeting and each
 * silence, not a server that trickles its answers. Greeting, EHLO, AUTH, MAIL and RCPT, DATA: five exchanges.
 */
const EXCHANGES_PER_SEND = 5

export async function sendMail(settings: SmtpSettings, mail: OutgoingMail, timeoutMs: number): Promise<SendOutcome> {
  const transport = await createTransport(settings, timeoutMs)
  try {
    const info = await within('envío', timeoutMs * EXCHANGES_PER_SEND, () => transport.close(), transport.sendMail({
      from: settings.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      // Buffers go out base64-encoded byte for byte: an ISO-8859-1 DTE reaches the receiver exactly as signed.
      attachments: mail.attachments.map((a) => ({ filename: a.fileName, content: Buffer.from(a.content), contentType: a.contentType })),
    }))
    return { ok: true, messageId: info.messageId }
  } catch (err) {
    return { ok: false, error: smtpReason(err, settings, timeoutMs), permanent: isPermanent(err) }
  } finally {
    transport.close()
  }
}

/** Connects, says EHLO, logs in when a user is set, and quits (nodemailer's verify). */
export async function testSmtp(settings: SmtpSettings, timeoutMs: number): Promise<ConnectionCheck> {
  const transport = await createTransport(settings, timeoutMs)
  try {
    await within('verificación', timeoutMs * EXCHANGES_PER_SEND, () => transport.close(), transport.verify())
    return { ok: true }
  } catch (err) {
    return { ok: false, error: smtpReason(err, settings, timeoutMs) }
  } finally {
    transport.close()
  }
}

async function createTransport(settings: SmtpSettings, timeoutMs: number) {
  const nodemailer = await import('nodemailer')
  return nodemailer.createTransport(transportOptions(settings, timeoutMs))
}

function transportOptions(settings: SmtpSettings, timeoutMs: number): SMTPTransportOptions {
  return {
    host: settings.host,
    port: settings.port,
    // tls: implicit TLS (465). starttls: the upgrade is required, never clear text with the password (587).
    // none: clear text even when STARTTLS is offered, for a relay on the LAN whose certificate would not verify.
    secure: settings.security === 'tls',
    requireTLS: settings.security === 'starttls',
    ignoreTLS: settings.security === 'none',
    auth: settings.user ? { user: settings.user, pass: settings.password ?? '' } : undefined,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    logger: false,
    debug: false,
  }
}

/**
 * RFC 5321 §4.2.1: a 5yz reply is a permanent failure; 4yz, a dropped connection or a timeout may pass. An address that
 * nodemailer itself refuses (EENVELOPE with no reply: "No recipients defined") will never pass either.
 */
function isPermanent(err: unknown): boolean {
  const code = (err as { responseCode?: unknown } | null)?.responseCode
  if (typeof code === 'number') return code >= 500 && code < 600
  return codeOf(err) === 'EENVELOPE'
}

function smtpReason(err: unknown, settings: SmtpSettings, timeoutMs: number): string {
  const where = `SMTP ${settings.host}:${settings.port}`
  if (err instanceof MailTimeout) return `${where}: ${err.message}`
  const e = err as { response?: unknown; responseCode?: unknown; command?: unknown; timeoutType?: unknown } | null
  const code = codeOf(err)
  const reply = typeof e?.response === 'string' ? cleanReason(e.response, settings.password) : null
  if (code === 'EAUTH') return `${where}: usuario o contraseña rechazados${reply ? ` (${reply})` : ''}`
  if (code === 'ETIMEDOUT') return `${where}: sin respuesta en ${timeoutMs} ms${typeof e?.timeoutType === 'string' ? ` (${e.timeoutType})` : ''}`
  if (code === 'ETLS' && e?.command === 'STARTTLS') return `${where}: el servidor no acepta STARTTLS${reply ? ` (${reply})` : ''}`
  if (typeof e?.responseCode === 'number' && reply) return `${where}: el servidor respondió ${reply}`
  const network = networkReason(err)
  if (network) return `${where}: ${network}`
  return `${where}: ${cleanReason(err instanceof Error ? err.message : String(err), settings.password)}`
}
