// A company's exchange mailbox (DESIGN §13 "Mailbox of a company"; docs/decisions/intercambio.md "Mailbox settings"):
// IMAP to read what suppliers and receivers send, SMTP to answer and to mail its own DTEs. The passwords are sealed by
// the vault like private keys, opened only to connect, and never returned. `inbound_email` and `inbound_status` live
// on the company record (spec 2.13); this file is the only writer of both.
import { isIP } from 'node:net'
import { isoTimestamp } from '../clock'
import { findEmpresaById, updateEmpresa } from '../db/empresa-store'
import { deleteMailbox, findMailbox, listMailboxEmpresaIds, recordMailboxPoll, upsertMailbox } from '../db/mailbox-store'
import type { EmpresaRow, MailboxRow } from '../db/schema'
import { isValidEmail } from '../domain/catalogo'
import type { InboundStatus } from '../domain/intercambio'
import { validationError, type FieldError } from '../errors'
import { testImap } from '../mail/imap'
import { testSmtp } from '../mail/smtp'
import type { ConnectionCheck, ImapSettings, SmtpSecurity, SmtpSettings } from '../mail/types'
import type { Deps } from './deps'

/** Each protocol's check gets this long; both run at once, so a test answers within about 10 s (DESIGN §13). */
export const CONNECTION_TEST_TIMEOUT_MS = 10_000
export const DEFAULT_IMAP_FOLDER = 'INBOX'
export const SMTP_SECURITIES: readonly SmtpSecurity[] = ['starttls', 'tls', 'none']
export const MAILBOX_MAX_LENGTH = { email: 254, host: 253, user: 320, password: 1024, folder: 255 } as const

const imapPurpose = (empresaId: string) => `mailbox-imap:${empresaId}`
const smtpPurpose = (empresaId: string) => `mailbox-smtp:${empresaId}`

/**
 * PUT /empresa/intercambio and `timbre empresa intercambio`: the settings replace the stored ones whole, except the
 * passwords: one left out (undefined) keeps the stored one, so the console can save again without asking for it.
 * `smtp.user` null (or absent) means a relay without authentication; `smtp.password` null clears it.
 */
export interface MailboxInput {
  readonly inbound_email: string
  readonly imap: {
    readonly host: string
    readonly port: number
    readonly tls: boolean
    readonly user: string
    readonly password?: string
    readonly folder?: string
  }
  readonly smtp: {
    readonly host: string
    readonly port: number
    readonly security: SmtpSecurity
    readonly user?: string | null
    readonly password?: string | null
    readonly from: string
  }
}

export interface MailboxTest {
  readonly imap: ConnectionCheck
  readonly smtp: ConnectionCheck
}

/** What GET /empresa/intercambio answers: the settings without a password, and how the mailbox is doing. */
export interface MailboxView {
  readonly inbound_email: string | null
  readonly inbound_status: InboundStatus
  readonly last_poll_at: string | null
  readonly last_error: string | null
  readonly imap: { host: string; port: number; tls: boolean; user: string; folder: string; password_set: true } | null
  readonly smtp: { host: string; port: number; security: SmtpSecurity; user: string | null; from: string; password_set: boolean } | null
  /** Only when a test was asked for; null when there was nothing to test (no mailbox). */
  readonly test?: MailboxTest | null
}

/** Which passwords a save may leave out: those already stored. */
export interface StoredPasswords {
  readonly imap: boolean
  readonly smtp: boolean
}

// ------------------------------------------------------------------------------------------------------ the rules

type Fields = Readonly<Record<string, unknown>>

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/

/** A DNS name, an IPv4 address or an IPv6 one (bare or in brackets): what a mail client's server field takes. */
export function isMailHost(s: string): boolean {
  return HOSTNAME.test(s) || isIP(s.replace(/^\[(.*)\]$/, '$1')) !== 0
}

const objectAt = (fields: Fields, key: string): Fields => {
  const v = fields[key]
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Fields) : {}
}
const isBlank = (v: unknown) => typeof v === 'string' && v.trim() === ''
const isPort = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535

/**
 * The rules of a mailbox body that a schema cannot state, on the body as sent (any value: the door's schema reports
 * the wrong types), so both doors report every failing field at once (DESIGN §5). `stored` says which passwords may be
 * left out; null before the first save.
 */
export function checkMailboxInput(fields: Fields, stored: StoredPasswords | null): FieldError[] {
  const errors: FieldError[] = []
  const add = (field: string, code: FieldError['code'], message: string) => errors.push({ field, code, message })
  const imap = objectAt(fields, 'imap')
  const smtp = objectAt(fields, 'smtp')
  if (typeof fields.inbound_email === 'string' && !isValidEmail(fields.inbound_email)) add('inbound_email', 'INVALID_FORMAT', 'Correo electrónico inválido.')
  for (const [prefix, section] of [['imap', imap], ['smtp', smtp]] as const) {
    if (isBlank(section.host)) add(`${prefix}.host`, 'REQUIRED', 'No puede estar vacío.')
    else if (typeof section.host === 'string' && !isMailHost(section.host)) add(`${prefix}.host`, 'INVALID_FORMAT', 'Se espera un nombre de servidor o una dirección IP.')
    if (typeof section.port === 'number' && !isPort(section.port)) add(`${prefix}.port`, 'OUT_OF_RANGE', 'Debe estar entre 1 y 65535.')
  }
  if (isBlank(imap.user)) add('imap.user', 'REQUIRED', 'No puede estar vacío.')
  if (isBlank(imap.folder)) add('imap.folder', 'REQUIRED', 'No puede estar vacío; por defecto INBOX.')
  if (imap.password === undefined && !stored?.imap) add('imap.password', 'REQUIRED', 'Requerida al configurar el buzón por primera vez.')
  if (isBlank(imap.password)) add('imap.password', 'REQUIRED', 'No puede estar vacía.')
  if (typeof smtp.security === 'string' && !(SMTP_SECURITIES as readonly string[]).includes(smtp.security))
    add('smtp.security', 'INVALID_VALUE', `Valor no permitido; valores aceptados: ${SMTP_SECURITIES.join(', ')}.`)
  if (typeof smtp.from === 'string' && !isValidEmail(smtp.from)) add('smtp.from', 'INVALID_FORMAT', 'Correo electrónico inválido.')
  checkSmtpAuth(smtp, stored, add)
  return errors
}

/** SMTP authentication goes as a pair: a user needs a password (sent or stored), a password needs a user. */
function checkSmtpAuth(smtp: Fields, stored: StoredPasswords | null, add: (field: string, code: FieldError['code'], message: string) => void): void {
  const hasUser = typeof smtp.user === 'string' && smtp.user.trim() !== ''
  if (isBlank(smtp.user)) add('smtp.user', 'REQUIRED', 'No puede estar vacío; null (u omitido) para un relay sin autenticación.')
  if (isBlank(smtp.password)) add('smtp.password', 'REQUIRED', 'No puede estar vacía; null para borrarla.')
  else if (!hasUser && typeof smtp.password === 'string' && !isBlank(smtp.user))
    add('smtp.password', 'INCONSISTENT', 'Una contraseña SMTP requiere smtp.user.')
  else if (hasUser && (smtp.password === null || (smtp.password === undefined && !stored?.smtp)))
    add('smtp.password', 'REQUIRED', 'Requerida cuando se indica smtp.user.')
}

// ------------------------------------------------------------------------------------------------------ the doors' use cases

/** Which passwords the company already has stored (null: no mailbox), for a door that checks a body before saving it. */
export function mailboxPasswordsStored(deps: Pick<Deps, 'store'>, input: { empresaId: string }): StoredPasswords | null {
  return storedOf(findMailbox(deps.store.db, input.empresaId))
}

function storedOf(row: MailboxRow | undefined): StoredPasswords | null {
  return row ? { imap: true, smtp: row.smtp_password_sealed !== null } : null
}

/** GET /empresa/intercambio; with `test`, the stored settings are also checked (nothing is written: a GET reads). */
export async function getMailbox(deps: Pick<Deps, 'store' | 'vault'>, input: { empresaId: string; test: boolean }): Promise<MailboxView> {
  const { empresaId } = input
  const view = viewOf(empresaRow(deps, empresaId), findMailbox(deps.store.db, empresaId))
  if (!input.test) return view
  const settings = mailboxSettings(deps, { empresaId })
  if (!settings) return { ...view, test: null }
  return { ...view, test: await checkConnections(settings.imap, settings.smtp) }
}

/**
 * PUT /empresa/intercambio: checks, optionally tests both connections (in parallel, before anything is written),
 * then saves whatever the test said, in one transaction with the company's inbound_email and inbound_status
 * ('activo', or 'error' with `last_error` when the test failed).
 */
export async function saveMailbox(
  deps: Pick<Deps, 'store' | 'vault' | 'clock'>,
  input: { empresaId: string; settings: MailboxInput; test: boolean },
): Promise<MailboxView> {
  const { empresaId, settings } = input
  const before = findMailbox(deps.store.db, empresaId)
  const errors = checkMailboxInput(settings as unknown as Fields, storedOf(before))
  if (errors.length > 0) throw validationError(errors)
  const smtpUser = settings.smtp.user?.trim() ? settings.smtp.user : null
  const imapPassword = settings.imap.password ?? openSealed(deps, before!.imap_password_sealed, imapPurpose(empresaId))
  const smtpPassword = smtpUser === null ? null : settings.smtp.password !== undefined ? settings.smtp.password : openSealedOrNull(deps, before?.smtp_password_sealed ?? null, smtpPurpose(empresaId))
  const imap: ImapSettings = { host: settings.imap.host, port: settings.imap.port, tls: settings.imap.tls, user: settings.imap.user, password: imapPassword, folder: settings.imap.folder ?? DEFAULT_IMAP_FOLDER }
  const smtp: SmtpSettings = { host: settings.smtp.host, port: settings.smtp.port, security: settings.smtp.security, user: smtpUser, password: smtpPassword, from: settings.smtp.from }
  const test = input.test ? await checkConnections(imap, smtp) : null
  const lastError = test === null ? null : testError(test)
  const at = isoTimestamp(deps.clock.now())
  const saved = deps.store.db.transaction(
    (tx) => {
      const row = upsertMailbox(tx, {
        empresa_id: empresaId,
        imap_host: imap.host,
        imap_port: imap.port,
        imap_tls: imap.tls,
        imap_user: imap.user,
        imap_password_sealed: Buffer.from(deps.vault.seal(Buffer.from(imap.password, 'utf8'), imapPurpose(empresaId))),
        imap_folder: imap.folder,
        smtp_host: smtp.host,
        smtp_port: smtp.port,
        smtp_security: smtp.security,
        smtp_user: smtp.user,
        smtp_password_sealed: smtp.password === null ? null : Buffer.from(deps.vault.seal(Buffer.from(smtp.password, 'utf8'), smtpPurpose(empresaId))),
        smtp_from: smtp.from,
        last_error: lastError,
        created_at: at,
        updated_at: at,
      })
      const status: InboundStatus = lastError === null ? 'activo' : 'error'
      const empresa = updateEmpresa(tx, empresaId, { inbound_email: settings.inbound_email, inbound_status: status, updated_at: at })
      if (!empresa) throw new Error(`empresa ${empresaId} of a valid credential is missing`)
      return viewOf(empresa, row)
    },
    { behavior: 'immediate' },
  )
  return test === null ? saved : { ...saved, test }
}

/**
 * DELETE /empresa/intercambio: the mailbox and its sealed passwords go; `inbound_status` returns to 'sin_configurar'.
 * `inbound_email` stays: it is the address the company registered at the SII, which suppliers keep mailing whether
 * or not Timbre reads it. Nothing to remove is not an error (the state asked for holds).
 */
export function removeMailbox(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string }): void {
  const { empresaId } = input
  const at = isoTimestamp(deps.clock.now())
  deps.store.db.transaction(
    (tx) => {
      if (deleteMailbox(tx, empresaId)) updateEmpresa(tx, empresaId, { inbound_status: 'sin_configurar', updated_at: at })
    },
    { behavior: 'immediate' },
  )
}

// ------------------------------------------------------------------------------------------------------ for the job and the mail outbox

/** The company's settings with their passwords opened, to connect; null when it has no mailbox. */
export function mailboxSettings(
  deps: Pick<Deps, 'store' | 'vault'>,
  input: { empresaId: string },
): { inboundEmail: string | null; imap: ImapSettings; smtp: SmtpSettings; updatedAt: string } | null {
  const { empresaId } = input
  const row = findMailbox(deps.store.db, empresaId)
  if (!row) return null
  return {
    inboundEmail: empresaRow(deps, empresaId).inbound_email,
    imap: {
      host: row.imap_host,
      port: row.imap_port,
      tls: row.imap_tls,
      user: row.imap_user,
      password: openSealed(deps, row.imap_password_sealed, imapPurpose(empresaId)),
      folder: row.imap_folder,
    },
    smtp: {
      host: row.smtp_host,
      port: row.smtp_port,
      security: row.smtp_security,
      user: row.smtp_user,
      password: openSealedOrNull(deps, row.smtp_password_sealed, smtpPurpose(empresaId)),
      from: row.smtp_from,
    },
    updatedAt: row.updated_at,
  }
}

/** The companies with a mailbox, for the `intercambio` job. */
export function configuredMailboxes(deps: Pick<Deps, 'store'>): string[] {
  return listMailboxEmpresaIds(deps.store.db)
}

/**
 * A poll's outcome: `last_poll_at` now, `last_error` as given, the company's inbound_status 'activo' or 'error'. A
 * mailbox removed while it was being read stays removed ('sin_configurar'), and settings saved while it was being read
 * (`settingsAt`: the `updated_at` the poll read) keep the status their own save or connection test gave them: a poll
 * with the old password must not call the new one wrong, nor the old one right. The company's `updated_at` is left
 * alone: a poll every minute is not a change of its record.
 */
export function recordPoll(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; error: string | null; settingsAt?: string }): void {
  const { empresaId, error } = input
  const at = isoTimestamp(deps.clock.now())
  deps.store.db.transaction(
    (tx) => {
      if (recordMailboxPoll(tx, empresaId, { last_poll_at: at, last_error: error }, input.settingsAt))
        updateEmpresa(tx, empresaId, { inbound_status: error === null ? 'activo' : 'error' })
    },
    { behavior: 'immediate' },
  )
}

// ------------------------------------------------------------------------------------------------------ helpers

function empresaRow(deps: Pick<Deps, 'store'>, empresaId: string): EmpresaRow {
  const row = findEmpresaById(deps.store.db, empresaId)
  if (!row) throw new Error(`empresa ${empresaId} of a valid credential is missing`)
  return row
}

function openSealed(deps: Pick<Deps, 'vault'>, sealed: Uint8Array, purpose: string): string {
  return deps.vault.open(sealed, purpose).toString('utf8')
}

function openSealedOrNull(deps: Pick<Deps, 'vault'>, sealed: Uint8Array | null, purpose: string): string | null {
  return sealed === null ? null : openSealed(deps, sealed, purpose)
}

function viewOf(empresa: EmpresaRow, row: MailboxRow | undefined): MailboxView {
  return {
    inbound_email: empresa.inbound_email,
    inbound_status: row ? ((empresa.inbound_status as InboundStatus | null) ?? 'activo') : 'sin_configurar',
    last_poll_at: row?.last_poll_at ?? null,
    last_error: row?.last_error ?? null,
    imap: row ? { host: row.imap_host, port: row.imap_port, tls: row.imap_tls, user: row.imap_user, folder: row.imap_folder, password_set: true } : null,
    smtp: row
      ? { host: row.smtp_host, port: row.smtp_port, security: row.smtp_security, user: row.smtp_user, from: row.smtp_from, password_set: row.smtp_password_sealed !== null }
      : null,
  }
}

/** Both checks at once (DESIGN §13), each bounded; a password an adapter echoed in its error is masked. */
async function checkConnections(imap: ImapSettings, smtp: SmtpSettings): Promise<MailboxTest> {
  const [imapCheck, smtpCheck] = await Promise.all([testImap(imap, CONNECTION_TEST_TIMEOUT_MS), testSmtp(smtp, CONNECTION_TEST_TIMEOUT_MS)])
  const secrets = [imap.password, smtp.password ?? ''].filter((p) => p.length >= 3)
  const masked = (check: ConnectionCheck): ConnectionCheck =>
    check.ok ? check : { ok: false, error: secrets.reduce((text, secret) => text.split(secret).join('***'), check.error) }
  return { imap: masked(imapCheck), smtp: masked(smtpCheck) }
}

/** `last_error` after a failed test: each failure, named by its protocol (the adapters' reasons usually start with it). */
function testError(test: MailboxTest): string | null {
  const named = (protocol: string, check: ConnectionCheck) => (check.ok ? null : check.error.startsWith(protocol) ? check.error : `${protocol}: ${check.error}`)
  const parts = [named('IMAP', test.imap), named('SMTP', test.smtp)].filter((p) => p !== null)
  return parts.length === 0 ? null : parts.join('; ')
}
