// People who log in to the console as themselves (DESIGN §14 "People, not keys", issue 27): accounts created by
// invitation, passwords hashed with argon2id (Bun.password), an optional TOTP second factor (otpauth) sealed with the
// vault, a role per company, and failed logins limited per account in the database so a restart does not reset them.
import { createHash, randomBytes } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'
import { isoTimestamp } from '../clock'
import {
  claimTotpStep,
  deleteAccountSessions,
  deleteMembership,
  findAccountByEmail,
  findAccountById,
  findMembership,
  findUsableInvitation,
  insertAccount,
  insertInvitation,
  listEmpresasOfAccount,
  listMembersOfEmpresa,
  listPendingInvitations,
  recordAccountFailure,
  recordLoginFailure,
  loginLockedUntil,
  clearLoginFailures,
  revokeInvitation,
  revokePendingInvitations,
  updateAccount,
  updateMembershipRole,
  upsertMembership,
  useInvitation,
  type AccountEmpresaRow,
} from '../db/console-account-store'
import type { ConsoleAccountRow } from '../db/schema'
import { isRol, type Rol } from '../domain/console-roles'
import { TimbreError, type FieldError } from '../errors'
import type { Deps } from './deps'
import { resolveEmpresa } from './empresas'

/** DESIGN §14: an invitation link is good for 7 days. */
export const INVITATION_TTL_MS = 7 * 86_400_000
/** Ten wrong passwords or codes in a row lock the account's password login... */
export const LOCK_AFTER_FAILURES = 10
/** ...for 15 minutes: long enough to make guessing hopeless, short enough that the owner is not shut out for the day. */
export const LOCK_MS = 15 * 60_000
/** NIST SP 800-63B asks for at least 8; 10 because an argon2id hash on a stolen backup is still attacked offline. */
export const PASSWORD_MIN_LENGTH = 10
const PASSWORD_MAX_LENGTH = 256
const EMAIL_MAX_LENGTH = 254
/** RFC 6238 defaults, the only ones every authenticator app reads. */
const TOTP_PERIOD_SECONDS = 30
/** One step either side: a phone's clock a little off still works. */
export const TOTP_WINDOW = 1
const TOTP_ISSUER = 'Timbre'

type AccountDeps = Pick<Deps, 'store' | 'clock'>
type SealingDeps = Pick<Deps, 'store' | 'clock' | 'vault'>

/** The same words for an unknown email, a wrong password, a wrong code and a locked account: none of them tells which. */
export const LOGIN_FAILED = 'El correo, la contraseña o el código no son correctos. Tras 10 intentos fallidos seguidos desde un mismo lugar, la cuenta se bloquea 15 minutos para ese lugar.'
const INVITATION_UNUSABLE = 'La invitación no es válida: ya se usó, fue reemplazada por otra, se revocó o venció. Pida una nueva al administrador.'
const INVITATION_AUTHOR_GONE = 'La invitación ya no vale: quien la creó ya no administra la empresa. Pida una nueva a un administrador.'
const ACCOUNT_DISABLED = 'Su cuenta está desactivada: hable con el administrador de la instalación.'

/** Who acts on the Cuentas screen: an account with the administrador role, or the instance administrator (null). */
export interface AccountActor {
  readonly accountId: string | null
}

const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex')
const loginFailed = () => new TimbreError('UNAUTHORIZED', { message: LOGIN_FAILED })
const invalid = (details: FieldError[]) => new TimbreError('VALIDATION_ERROR', { details })

export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase()
}

function checkEmail(email: string): FieldError | null {
  if (email === '') return { field: 'email', code: 'REQUIRED', message: 'Escriba el correo de la persona.' }
  if (email.length > EMAIL_MAX_LENGTH) return { field: 'email', code: 'TOO_LONG', message: `El correo tiene más de ${EMAIL_MAX_LENGTH} caracteres.` }
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) return { field: 'email', code: 'INVALID_FORMAT', message: 'No es un correo válido (nombre@dominio.cl).' }
  return null
}

/** A new password and its repetition; `field` names the input the errors go beside. */
function checkNewPassword(password: string, repeat: string, email: string, field = 'password'): FieldError[] {
  if (password.length < PASSWORD_MIN_LENGTH)
    return [{ field, code: 'INVALID_VALUE', message: `La contraseña debe tener al menos ${PASSWORD_MIN_LENGTH} caracteres.` }]
  if (password.length > PASSWORD_MAX_LENGTH) return [{ field, code: 'TOO_LONG', message: `La contraseña tiene más de ${PASSWORD_MAX_LENGTH} caracteres.` }]
  if (password.toLowerCase() === email) return [{ field, code: 'INVALID_VALUE', message: 'La contraseña no puede ser el correo.' }]
  if (password !== repeat) return [{ field: `${field}_repetida`, code: 'INCONSISTENT', message: 'Las dos contraseñas no coinciden.' }]
  return []
}

const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: 'argon2id' })

let dummyHash: Promise<string> | null = null
/** Verified against when the email is unknown, so that answer takes as long as a wrong password's. */
function unknownAccountHash(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(24).toString('base64url'))
  return dummyHash
}

/** Made when the server starts, so not even the first unknown email after a start answers sooner (it would hash). */
export function prepareLoginTiming(): void {
  void unknownAccountHash()
}

const isLocked = (row: ConsoleAccountRow, nowMs: number) => row.locked_until !== null && Date.parse(row.locked_until) > nowMs

/**
 * Locked for a login from `address`: the account's own lock (set by failures inside a session) or that address's lock
 * on the account. A stranger failing on purpose locks out only their own address, never the owner's.
 */
function isLockedFrom(deps: AccountDeps, row: ConsoleAccountRow, address: string): boolean {
  const nowMs = deps.clock.now().getTime()
  const until = loginLockedUntil(deps.store.db, row.id, address)
  return isLocked(row, nowMs) || (until !== null && Date.parse(until) > nowMs)
}

/** A failed login (a wrong password or code) of the account from the address. */
function recordLoginFailureFrom(deps: AccountDeps, row: ConsoleAccountRow, address: string): void {
  const now = deps.clock.now()
  recordLoginFailure(deps.store.db, {
    accountId: row.id,
    address,
    lockAfter: LOCK_AFTER_FAILURES,
    lockedUntil: isoTimestamp(new Date(now.getTime() + LOCK_MS)),
    now: isoTimestamp(now),
    staleBefore: isoTimestamp(new Date(now.getTime() - 24 * 3_600_000)),
  })
}

function recordFailure(deps: AccountDeps, row: ConsoleAccountRow): void {
  const now = deps.clock.now()
  recordAccountFailure(deps.store.db, row.id, {
    lockAfter: LOCK_AFTER_FAILURES,
    lockedUntil: isoTimestamp(new Date(now.getTime() + LOCK_MS)),
    now: isoTimestamp(now),
  })
}

// ---------------------------------------------------------------------------------------------------------- TOTP

const totpPurpose = (accountId: string) => `console-totp:${accountId}`
const pendingTotpPurpose = (accountId: string) => `console-totp-pending:${accountId}`

function totpFor(secretBase32: string, email: string): TOTP {
  return new TOTP({ issuer: TOTP_ISSUER, label: email, algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD_SECONDS, secret: Secret.fromBase32(secretBase32) })
}

/**
 * The RFC 6238 step a code belongs to, within one step of now, or null. Used steps are claimed in the database, so a
 * code seen over someone's shoulder cannot be typed again within its 90 seconds.
 */
function matchingStep(totp: TOTP, code: string, nowMs: number): number | null {
  const token = code.replace(/\s+/g, '')
  if (!/^\d{6}$/.test(token)) return null
  const delta = totp.validate({ token, timestamp: nowMs, window: TOTP_WINDOW })
  return delta === null ? null : Math.floor(nowMs / 1000 / TOTP_PERIOD_SECONDS) + delta
}

function openTotp(deps: SealingDeps, row: ConsoleAccountRow): TOTP | null {
  if (row.totp_sealed === null) return null
  return totpFor(deps.vault.open(row.totp_sealed, totpPurpose(row.id)).toString('utf8'), row.email)
}

function totpAccepts(deps: SealingDeps, row: ConsoleAccountRow, code: string | null): boolean {
  const totp = openTotp(deps, row)
  if (totp === null) return true
  const step = code === null ? null : matchingStep(totp, code, deps.clock.now().getTime())
  return step !== null && claimTotpStep(deps.store.db, row.id, step)
}

// --------------------------------------------------------------------------------------------------------- Login

/** Second factors waiting after a correct password: in memory, short-lived, a few tries each. */
export class PendingSecondFactors {
  private readonly pending = new Map<string, { accountId: string; expiresMs: number; triesLeft: number }>()
  static readonly TTL_MS = 5 * 60_000
  static readonly TRIES = 5

  issue(accountId: string, nowMs: number): string {
    for (const [k, v] of this.pending) if (v.expiresMs <= nowMs) this.pending.delete(k)
    const token = randomBytes(24).toString('base64url')
    this.pending.set(token, { accountId, expiresMs: nowMs + PendingSecondFactors.TTL_MS, triesLeft: PendingSecondFactors.TRIES })
    return token
  }

  /** The account waiting under `token`; each call spends one try, the last one forgets the token. */
  take(token: string, nowMs: number): string | null {
    const entry = this.pending.get(token)
    if (!entry || entry.expiresMs <= nowMs) {
      this.pending.delete(token)
      return null
    }
    entry.triesLeft -= 1
    if (entry.triesLeft <= 0) this.pending.delete(token)
    return entry.accountId
  }

  forget(token: string): void {
    this.pending.delete(token)
  }
}

export interface PasswordVerdict {
  readonly accountId: string
  readonly needsTotp: boolean
}

/**
 * Email and password. Unknown email, wrong password, disabled or locked account all answer the same UNAUTHORIZED,
 * after the same argon2id verification; only a wrong password counts towards the lock.
 */
export async function verifyPassword(deps: AccountDeps, input: { email: string; password: string; address: string }): Promise<PasswordVerdict> {
  const row = findAccountByEmail(deps.store.db, normalizeEmail(input.email))
  const matches = await Bun.password.verify(input.password.slice(0, PASSWORD_MAX_LENGTH), row?.password_hash ?? (await unknownAccountHash()))
  const current = row && findAccountById(deps.store.db, row.id)
  if (!current || current.disabled_at !== null || isLockedFrom(deps, current, input.address)) throw loginFailed()
  if (!matches) {
    recordLoginFailureFrom(deps, current, input.address)
    throw loginFailed()
  }
  if (listEmpresasOfAccount(deps.store.db, current.id).length === 0)
    throw new TimbreError('UNAUTHORIZED', { message: 'Su cuenta ya no pertenece a ninguna empresa: pida una invitación a un administrador.' })
  if (current.totp_sealed !== null) return { accountId: current.id, needsTotp: true }
  markLoggedIn(deps, current.id, input.address)
  return { accountId: current.id, needsTotp: false }
}

/** The second step: a current code of the account's authenticator. A wrong code counts towards the lock. */
export function verifyLoginCode(deps: SealingDeps, input: { accountId: string; code: string; address: string }): void {
  const row = findAccountById(deps.store.db, input.accountId)
  if (!row || row.disabled_at !== null || isLockedFrom(deps, row, input.address)) throw loginFailed()
  if (!totpAccepts(deps, row, input.code)) {
    recordLoginFailureFrom(deps, row, input.address)
    throw loginFailed()
  }
  markLoggedIn(deps, row.id, input.address)
}

function markLoggedIn(deps: AccountDeps, accountId: string, address: string): void {
  const now = isoTimestamp(deps.clock.now())
  deps.store.db.transaction((tx) => {
    updateAccount(tx, accountId, { failed_logins: 0, locked_until: null, last_login_at: now, updated_at: now })
    clearLoginFailures(tx, accountId, address)
  })
}

export interface AccountAccess {
  readonly email: string
  readonly role: Rol
}

/** The account's role in the company, or null when the account is disabled or no longer belongs to it. */
export function accountAccess(deps: Pick<Deps, 'store'>, input: { accountId: string; empresaId: string }): AccountAccess | null {
  const row = findAccountById(deps.store.db, input.accountId)
  if (!row || row.disabled_at !== null) return null
  const membership = findMembership(deps.store.db, input.accountId, input.empresaId)
  return membership ? { email: row.email, role: membership.role } : null
}

export type AccountEmpresa = AccountEmpresaRow

export function empresasOfAccount(deps: Pick<Deps, 'store'>, input: { accountId: string }): AccountEmpresa[] {
  return listEmpresasOfAccount(deps.store.db, input.accountId)
}

// --------------------------------------------------------------------------------------------------- Invitations

export interface InvitationListing {
  readonly id: string
  readonly email: string
  readonly role: Rol
  readonly resets_password: boolean
  readonly created_at: string
  readonly expires_at: string
}

/**
 * Whether accepting may set a new password on an existing account. Whoever invites holds the link, so a company's
 * administrador could otherwise take over the account of an accountant's staff member who also works for other
 * companies: only the instance administrator, or an administrador of every company the account belongs to, resets.
 */
function mayResetPassword(deps: AccountDeps, accountId: string, actor: AccountActor): boolean {
  if (actor.accountId === null) return true
  return listEmpresasOfAccount(deps.store.db, accountId).every((e) => findMembership(deps.store.db, actor.accountId!, e.empresa_id)?.role === 'administrador')
}

/** A one-time link for `email` to join the company with `role`; the token is returned once and stored only as a hash. */
export function inviteAccount(
  deps: AccountDeps,
  input: { empresaId: string; email: string; role: string | null; actor: AccountActor },
): { token: string; invitation: InvitationListing } {
  const email = normalizeEmail(input.email)
  const errors = [checkEmail(email), isRol(input.role) ? null : ({ field: 'role', code: 'INVALID_VALUE', message: 'Elija un rol.' } as const)].filter((e) => e !== null)
  if (errors.length > 0) throw invalid(errors)
  const role = input.role as Rol
  const existing = findAccountByEmail(deps.store.db, email)
  const now = deps.clock.now()
  const token = randomBytes(32).toString('base64url')
  const row = {
    id: Bun.randomUUIDv7(),
    token_hash: hashToken(token),
    email,
    empresa_id: input.empresaId,
    role,
    resets_password: existing ? mayResetPassword(deps, existing.id, input.actor) : false,
    invited_by: input.actor.accountId,
    created_at: isoTimestamp(now),
    expires_at: isoTimestamp(new Date(now.getTime() + INVITATION_TTL_MS)),
    used_at: null,
    revoked_at: null,
  }
  deps.store.db.transaction((tx) => {
    revokePendingInvitations(tx, input.empresaId, email, row.created_at)
    insertInvitation(tx, row)
  })
  const { id, resets_password, created_at, expires_at } = row
  return { token, invitation: { id, email, role, resets_password, created_at, expires_at } }
}

export function listInvitations(deps: AccountDeps, input: { empresaId: string }): InvitationListing[] {
  return listPendingInvitations(deps.store.db, input.empresaId, isoTimestamp(deps.clock.now())).map(({ id, email, role, resets_password, created_at, expires_at }) => ({
    id,
    email,
    role,
    resets_password,
    created_at,
    expires_at,
  }))
}

export function revokeInvitationOf(deps: AccountDeps, input: { empresaId: string; id: string }): void {
  if (!revokeInvitation(deps.store.db, input.id, input.empresaId, isoTimestamp(deps.clock.now()))) throw new TimbreError('NOT_FOUND')
}

/**
 * What accepting the invitation asks of the person: `nueva` sets a password for a new account; `restablecer` sets a
 * new one on an existing account (a forgotten password); `confirmar` asks the existing account's password (and code)
 * and only adds the membership.
 */
export type InvitationMode = 'nueva' | 'restablecer' | 'confirmar'

export interface InvitationView {
  readonly email: string
  readonly razon_social: string
  readonly role: Rol
  readonly mode: InvitationMode
  readonly needsTotp: boolean
}

/**
 * The invitation of a token, judged as things stand now, not as they stood when it was made: its author must still
 * administer the company (a removed or demoted administrador's links die with their role), and a password reset must
 * still be theirs to give (the account may have joined other companies since; then the link only adds the company).
 */
function usableInvitation(deps: AccountDeps, token: string) {
  const invitation = findUsableInvitation(deps.store.db, hashToken(token), isoTimestamp(deps.clock.now()))
  if (!invitation) throw new TimbreError('UNAUTHORIZED', { message: INVITATION_UNUSABLE })
  if (invitation.invited_by !== null) {
    const author = findAccountById(deps.store.db, invitation.invited_by)
    const stillAdmin = author !== undefined && author.disabled_at === null && findMembership(deps.store.db, author.id, invitation.empresa_id)?.role === 'administrador'
    if (!stillAdmin) throw new TimbreError('UNAUTHORIZED', { message: INVITATION_AUTHOR_GONE })
  }
  const account = findAccountByEmail(deps.store.db, invitation.email)
  if (account && account.disabled_at !== null) throw new TimbreError('UNAUTHORIZED', { message: ACCOUNT_DISABLED })
  const resets = account !== undefined && invitation.resets_password && mayResetPassword(deps, account.id, { accountId: invitation.invited_by })
  const mode: InvitationMode = !account ? 'nueva' : resets ? 'restablecer' : 'confirmar'
  return { invitation, account, mode }
}

export function describeInvitation(deps: AccountDeps, input: { token: string }): InvitationView {
  const { invitation, account, mode } = usableInvitation(deps, input.token)
  const empresa = resolveEmpresa(deps, { ref: invitation.empresa_id })
  return { email: invitation.email, razon_social: empresa.razon_social, role: invitation.role, mode, needsTotp: mode === 'confirmar' && account?.totp_sealed != null }
}

export interface AcceptInput {
  readonly token: string
  readonly nombre?: string | null
  /** `nueva` and `restablecer`: the new password, twice. */
  readonly password?: string
  readonly passwordRepeat?: string
  /** `confirmar`: the existing account's password and, when it has one, a current code. */
  readonly currentPassword?: string
  readonly code?: string | null
}

/**
 * Spends the invitation (once, even if two browsers race) and creates the account, resets its password (ending every
 * session it had and lifting a lock), or adds the membership after the account's own password and code.
 */
export interface AcceptedInvitation {
  readonly accountId: string
  readonly empresaId: string
  readonly mode: InvitationMode
  /** The account has a second factor: after a reset the person still logs in with it. */
  readonly hasTotp: boolean
}

export async function acceptInvitation(deps: SealingDeps, input: AcceptInput): Promise<AcceptedInvitation> {
  const { invitation, account, mode } = usableInvitation(deps, input.token)
  if (mode === 'confirmar') await confirmExistingAccount(deps, account!, input)
  else {
    const errors = checkNewPassword(input.password ?? '', input.passwordRepeat ?? '', invitation.email)
    if (errors.length > 0) throw invalid(errors)
  }
  const passwordHash = mode === 'confirmar' ? null : await hashPassword(input.password!)
  const now = isoTimestamp(deps.clock.now())
  const nombre = input.nombre?.trim() || null
  return deps.store.db.transaction((tx) => {
    if (!useInvitation(tx, invitation.id, now)) throw new TimbreError('UNAUTHORIZED', { message: INVITATION_UNUSABLE })
    let accountId = account?.id
    if (mode === 'nueva') {
      // Two invitations of different companies for one new email, accepted at once: the second finds the account.
      if (findAccountByEmail(tx, invitation.email)) throw new TimbreError('UNAUTHORIZED', { message: INVITATION_UNUSABLE })
      accountId = insertAccount(tx, { id: Bun.randomUUIDv7(), email: invitation.email, nombre, password_hash: passwordHash!, created_at: now, updated_at: now }).id
    } else if (mode === 'restablecer') {
      updateAccount(tx, accountId!, { password_hash: passwordHash!, failed_logins: 0, locked_until: null, updated_at: now, ...(nombre ? { nombre } : {}) })
      clearLoginFailures(tx, accountId!)
      deleteAccountSessions(tx, accountId!)
    }
    upsertMembership(tx, { account_id: accountId!, empresa_id: invitation.empresa_id, role: invitation.role, created_at: now })
    return { accountId: accountId!, empresaId: invitation.empresa_id, mode, hasTotp: account?.totp_sealed != null }
  })
}

async function confirmExistingAccount(deps: SealingDeps, account: ConsoleAccountRow, input: AcceptInput): Promise<void> {
  const matches = await Bun.password.verify((input.currentPassword ?? '').slice(0, PASSWORD_MAX_LENGTH), account.password_hash)
  const current = findAccountById(deps.store.db, account.id)!
  if (current.disabled_at !== null || isLocked(current, deps.clock.now().getTime())) throw loginFailed()
  if (!matches || !totpAccepts(deps, current, input.code ?? null)) {
    recordFailure(deps, current)
    throw loginFailed()
  }
}

// ------------------------------------------------------------------------------------------------------- Members

export interface MemberListing {
  readonly account_id: string
  readonly email: string
  readonly nombre: string | null
  readonly role: Rol
  readonly totp: boolean
  readonly disabled: boolean
  readonly last_login_at: string | null
}

export function listMembers(deps: AccountDeps, input: { empresaId: string }): MemberListing[] {
  return listMembersOfEmpresa(deps.store.db, input.empresaId).map(({ account: a, role }) => ({
    account_id: a.id,
    email: a.email,
    nombre: a.nombre,
    role,
    totp: a.totp_sealed !== null,
    disabled: a.disabled_at !== null,
    last_login_at: a.last_login_at,
  }))
}

/** An administrador does not demote or remove themselves: another one, or the instance administrator, does. */
function refuseSelf(actor: AccountActor, accountId: string): void {
  if (actor.accountId === accountId)
    throw invalid([{ field: 'role', code: 'NOT_ALLOWED', message: 'No puede cambiar su propio rol ni quitarse de la empresa: pídalo a otro administrador.' }])
}

export function changeRole(deps: AccountDeps, input: { empresaId: string; accountId: string; role: string | null; actor: AccountActor }): void {
  refuseSelf(input.actor, input.accountId)
  if (!isRol(input.role)) throw invalid([{ field: 'role', code: 'INVALID_VALUE', message: 'Elija un rol.' }])
  if (!updateMembershipRole(deps.store.db, input.accountId, input.empresaId, input.role)) throw new TimbreError('NOT_FOUND')
}

/** Removes the account from the company; its sessions there end on their next request (console-sessions.ts). */
export function removeMember(deps: AccountDeps, input: { empresaId: string; accountId: string; actor: AccountActor }): void {
  refuseSelf(input.actor, input.accountId)
  if (!deleteMembership(deps.store.db, input.accountId, input.empresaId)) throw new TimbreError('NOT_FOUND')
}

/** The instance administrator's switch: a disabled account cannot log in and its sessions end at once. */
export function setAccountDisabled(deps: AccountDeps, input: { accountId: string; disabled: boolean }): void {
  if (!findAccountById(deps.store.db, input.accountId)) throw new TimbreError('NOT_FOUND')
  const now = isoTimestamp(deps.clock.now())
  deps.store.db.transaction((tx) => {
    updateAccount(tx, input.accountId, { disabled_at: input.disabled ? now : null, updated_at: now })
    if (input.disabled) deleteAccountSessions(tx, input.accountId)
  })
}

/** Recovery of a lost phone, by the instance administrator only: the account logs in with its password alone again. */
export function removeSecondFactor(deps: AccountDeps, input: { accountId: string }): void {
  if (!findAccountById(deps.store.db, input.accountId)) throw new TimbreError('NOT_FOUND')
  updateAccount(deps.store.db, input.accountId, { totp_sealed: null, totp_pending_sealed: null, totp_last_step: null, updated_at: isoTimestamp(deps.clock.now()) })
}

// ------------------------------------------------------------------------------------------------------ Mi cuenta

export interface AccountProfile {
  readonly email: string
  readonly nombre: string | null
  readonly totp: boolean
  /** Enrolment started but not confirmed yet: what the authenticator app needs. */
  readonly pendingTotp: { readonly uri: string; readonly secret: string } | null
  readonly empresas: readonly AccountEmpresa[]
}

export function accountProfile(deps: SealingDeps, input: { accountId: string }): AccountProfile {
  const row = findAccountById(deps.store.db, input.accountId)
  if (!row) throw new TimbreError('NOT_FOUND')
  let pendingTotp: AccountProfile['pendingTotp'] = null
  if (row.totp_pending_sealed !== null) {
    const secret = deps.vault.open(row.totp_pending_sealed, pendingTotpPurpose(row.id)).toString('utf8')
    pendingTotp = { uri: totpFor(secret, row.email).toString(), secret }
  }
  return { email: row.email, nombre: row.nombre, totp: row.totp_sealed !== null, pendingTotp, empresas: listEmpresasOfAccount(deps.store.db, row.id) }
}

/** Changes the password after the current one; every other session of the account ends. */
export async function changePassword(
  deps: AccountDeps,
  input: { accountId: string; sessionId: string; current: string; password: string; passwordRepeat: string },
): Promise<void> {
  const row = findAccountById(deps.store.db, input.accountId)
  if (!row) throw new TimbreError('NOT_FOUND')
  // Locked by wrong tries from this session: said as such, and not counted again (a right password is not "wrong").
  if (isLocked(row, deps.clock.now().getTime()))
    throw invalid([{ field: 'actual', code: 'INVALID_VALUE', message: 'Demasiados intentos fallidos: espere 15 minutos antes de volver a intentarlo.' }])
  if (!(await Bun.password.verify(input.current.slice(0, PASSWORD_MAX_LENGTH), row.password_hash))) {
    recordFailure(deps, row)
    throw invalid([{ field: 'actual', code: 'INVALID_VALUE', message: 'La contraseña actual no es correcta.' }])
  }
  const errors = checkNewPassword(input.password, input.passwordRepeat, row.email)
  if (errors.length > 0) throw invalid(errors)
  const hash = await hashPassword(input.password)
  const now = isoTimestamp(deps.clock.now())
  deps.store.db.transaction((tx) => {
    updateAccount(tx, row.id, { password_hash: hash, failed_logins: 0, updated_at: now })
    deleteAccountSessions(tx, row.id, input.sessionId)
  })
}

/** A new secret, sealed and kept aside until a code from the app confirms it (confirmTotp). */
export function startTotpEnrolment(deps: SealingDeps, input: { accountId: string }): void {
  const row = findAccountById(deps.store.db, input.accountId)
  if (!row) throw new TimbreError('NOT_FOUND')
  if (row.totp_sealed !== null) return
  const secret = new Secret({ size: 20 }).base32
  const sealed = Buffer.from(deps.vault.seal(Buffer.from(secret, 'utf8'), pendingTotpPurpose(row.id)))
  updateAccount(deps.store.db, row.id, { totp_pending_sealed: sealed, updated_at: isoTimestamp(deps.clock.now()) })
}

const wrongCode = () => invalid([{ field: 'codigo', code: 'INVALID_VALUE', message: 'El código no es correcto o ya venció: escriba el que muestra ahora la aplicación.' }])

export function confirmTotp(deps: SealingDeps, input: { accountId: string; code: string | null }): void {
  const row = findAccountById(deps.store.db, input.accountId)
  if (!row || row.totp_pending_sealed === null) throw new TimbreError('NOT_FOUND')
  const secret = deps.vault.open(row.totp_pending_sealed, pendingTotpPurpose(row.id)).toString('utf8')
  const step = input.code === null ? null : matchingStep(totpFor(secret, row.email), input.code, deps.clock.now().getTime())
  if (step === null) throw wrongCode()
  updateAccount(deps.store.db, row.id, {
    totp_sealed: Buffer.from(deps.vault.seal(Buffer.from(secret, 'utf8'), totpPurpose(row.id))),
    totp_pending_sealed: null,
    totp_last_step: step,
    updated_at: isoTimestamp(deps.clock.now()),
  })
}

export function cancelTotpEnrolment(deps: AccountDeps, input: { accountId: string }): void {
  updateAccount(deps.store.db, input.accountId, { totp_pending_sealed: null, updated_at: isoTimestamp(deps.clock.now()) })
}

/** Turning the second factor off takes a current code, so a session left open on a shared PC cannot do it. */
export function disableTotp(deps: SealingDeps, input: { accountId: string; code: string | null }): void {
  const row = findAccountById(deps.store.db, input.accountId)
  if (!row || row.totp_sealed === null) throw new TimbreError('NOT_FOUND')
  // Wrong codes count as failed logins: ten in a row lock the account, so an open session cannot try a million codes.
  if (isLocked(row, deps.clock.now().getTime())) throw wrongCode()
  if (!totpAccepts(deps, row, input.code)) {
    recordFailure(deps, row)
    throw wrongCode()
  }
  updateAccount(deps.store.db, row.id, { totp_sealed: null, totp_last_step: null, updated_at: isoTimestamp(deps.clock.now()) })
}

/**
 * The enrolment URI as a QR code, PNG, for a data: URL (the CSP allows data: images). bwip-js is loaded only here, as
 * PDFs load it only in the worker pool: most consoles never enrol anyone.
 */
export async function totpQrPng(uri: string): Promise<Uint8Array> {
  const { default: bwipjs } = await import('bwip-js/node')
  return bwipjs.toBuffer({ bcid: 'qrcode', text: uri, scale: 4, padding: 8, backgroundcolor: 'FFFFFF' })
}
