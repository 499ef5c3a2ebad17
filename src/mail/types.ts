// What the mail adapter (DESIGN §13) offers the services: settings in, plain values out. imap.ts and smtp.ts implement
// it with imapflow, mailparser and nodemailer; nothing here knows about DTEs, and no failure is thrown at the caller
// except a bug: a server that is down, refuses the login or times out is a value with a reason.

export interface ImapSettings {
  readonly host: string
  readonly port: number
  /** Implicit TLS (usually 993); false = plain connection upgraded with STARTTLS when the server offers it. */
  readonly tls: boolean
  readonly user: string
  readonly password: string
  /** Usually INBOX. */
  readonly folder: string
}

export type SmtpSecurity = 'starttls' | 'tls' | 'none'

export interface SmtpSettings {
  readonly host: string
  readonly port: number
  /** `tls` = implicit TLS (465); `starttls` = upgrade required (587); `none` = plain, only for a relay on the LAN. */
  readonly security: SmtpSecurity
  readonly user: string | null
  readonly password: string | null
  /** The From address of everything the company sends. */
  readonly from: string
}

/** The outcome of a connection test (PUT/GET /empresa/intercambio with `test`): one per protocol. */
export type ConnectionCheck = { readonly ok: true } | { readonly ok: false; readonly error: string }

export interface MailAttachment {
  readonly fileName: string | null
  readonly contentType: string
  /**
   * The attachment's bytes exactly as sent (transfer encoding undone, no charset conversion). readUnseen always fills it
   * (an oversize message is skipped whole, see InboxMessage.oversize); null is left for a per-attachment limit.
   */
  readonly content: Uint8Array | null
  /** Its size in bytes (the decoded size when known). */
  readonly size: number
}

export interface InboxMessage {
  /** IMAP UID in the folder: stable while the folder's UIDVALIDITY holds. */
  readonly uid: number
  readonly messageId: string | null
  /** The sender's address only (no display name), lower case; null when missing. */
  readonly from: string | null
  readonly subject: string | null
  /** Only the attachments that look like XML (name ending .xml, or an XML content type). */
  readonly xmlAttachments: readonly MailAttachment[]
  /**
   * True when the whole message (RFC822.SIZE) was over `maxMessageBytes`: then its body was not downloaded and
   * xmlAttachments is empty; messageId, from and subject come from the server's ENVELOPE.
   */
  readonly oversize: boolean
  readonly size: number
}

export interface ReadOptions {
  /** At most this many unseen messages per call (oldest first); the rest wait for the next poll. */
  readonly maxMessages: number
  /** Messages over this size are not downloaded (see InboxMessage.oversize). */
  readonly maxMessageBytes: number
  /** Connection, greeting and each command. */
  readonly timeoutMs: number
}

/** `handled`: messages whose `handle` resolved (marked seen, or about to be when the failure came after it). */
export type ReadOutcome =
  | { readonly ok: true; readonly handled: number }
  | { readonly ok: false; readonly error: string; readonly handled: number }

export interface OutgoingMail {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly attachments: ReadonlyArray<{ readonly fileName: string; readonly content: Uint8Array; readonly contentType: string }>
}

export type SendOutcome =
  | { readonly ok: true; readonly messageId: string }
  /** `permanent`: the server refused the recipient or the message for good (5xx): retrying will not help. */
  | { readonly ok: false; readonly error: string; readonly permanent: boolean }
