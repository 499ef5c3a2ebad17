// Who is at the console (DESIGN §14): an instance administrator who came through a one-time link, a company user
// who logged in with one of its API keys, or a person with their own account and a role in each of their companies
// (issue 27). Tokens are 32 random bytes; only their SHA-256 is stored, as for API keys.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { isoTimestamp } from '../clock'
import {
  deleteConsoleSession,
  deleteExpiredConsoleSessions,
  deleteStaleConsoleLinks,
  findApiKeyById,
  findConsoleSession,
  insertConsoleLink,
  insertConsoleSession,
  updateConsoleSession,
  useConsoleLink,
} from '../db/console-store'
import type { ConsoleSessionRow } from '../db/schema'
import { ROLE_ACCESS, type Rol, type SettingsAccess } from '../domain/console-roles'
import { TimbreError } from '../errors'
import { accountAccess, empresasOfAccount } from './console-accounts'
import { authenticateApiKey } from './api-keys'
import { resolveEmpresa } from './empresas'
import type { Deps } from './deps'

/** A link printed at a terminal is used within minutes; after that it is only a secret lying in a scrollback. */
export const CONSOLE_LINK_TTL_MS = 15 * 60_000
/** A console left open on a shared office PC ends after this much idleness... */
export const CONSOLE_IDLE_MS = 30 * 60_000
/** ...and any session after a working day, however busy. */
export const CONSOLE_MAX_AGE_MS = 12 * 3_600_000
/** last_seen_at is written at most this often: a write per page view would cost an fsync each. */
const TOUCH_EVERY_MS = 60_000

type SessionDeps = Pick<Deps, 'store' | 'clock'>

export interface ConsoleSession {
  readonly id: string
  readonly kind: 'admin' | 'empresa' | 'cuenta'
  /** The company the pages show: fixed for a company user, chosen (or none yet) by an administrator or a person. */
  readonly empresaId: string | null
  /** May change the day's work: issue, send, accept or claim, import, clientes and productos. */
  readonly canWrite: boolean
  /** Certificate, CAF upload, webhooks, mailbox: hidden from an emisor or lectura account, read-only for a read-only key. */
  readonly settings: SettingsAccess
  /** The Cuentas screen: the instance administrator and a company's administrador. */
  readonly canManageAccounts: boolean
  /** A person's session: their account, email and role in the company shown; null for the other two kinds. */
  readonly accountId: string | null
  readonly email: string | null
  readonly role: Rol | null
  readonly csrfToken: string
}

const newToken = () => randomBytes(32).toString('base64url')
const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex')

/** A person's access comes from their role, read afresh on every request; the others' from how they logged in. */
function toSession(row: ConsoleSessionRow, person: { email: string; role: Rol } | null = null): ConsoleSession {
  const base = { id: row.id, kind: row.kind, empresaId: row.empresa_id, csrfToken: row.csrf_token, accountId: row.account_id }
  if (person !== null) return { ...base, ...ROLE_ACCESS[person.role], email: person.email, role: person.role }
  const isAdmin = row.kind === 'admin'
  return { ...base, canWrite: row.can_write, settings: row.can_write ? 'write' : 'read', canManageAccounts: isAdmin, email: null, role: null }
}

/** The one-time link's secret; the caller prints it inside the URL and never stores it. */
export function createAdminLink(deps: SessionDeps): { token: string; expiresAt: string } {
  const now = deps.clock.now()
  const token = newToken()
  const expiresAt = isoTimestamp(new Date(now.getTime() + CONSOLE_LINK_TTL_MS))
  deleteStaleConsoleLinks(deps.store.db, isoTimestamp(now))
  insertConsoleLink(deps.store.db, { id: Bun.randomUUIDv7(), token_hash: hashToken(token), created_at: isoTimestamp(now), expires_at: expiresAt, used_at: null })
  return { token, expiresAt }
}

type SessionFields = Pick<ConsoleSessionRow, 'kind' | 'empresa_id' | 'api_key_id' | 'can_write'> & { account_id?: string | null }

function openSession(deps: SessionDeps, fields: SessionFields, person: { email: string; role: Rol } | null = null): { token: string; session: ConsoleSession } {
  const now = deps.clock.now()
  const token = newToken()
  deleteExpiredConsoleSessions(deps.store.db, isoTimestamp(now))
  const row = insertConsoleSession(deps.store.db, {
    id: Bun.randomUUIDv7(),
    token_hash: hashToken(token),
    ...fields,
    csrf_token: newToken(),
    created_at: isoTimestamp(now),
    last_seen_at: isoTimestamp(now),
    expires_at: isoTimestamp(new Date(now.getTime() + CONSOLE_MAX_AGE_MS)),
  })
  return { token, session: toSession(row, person) }
}

/** Spends the link (once, even if two browsers race) and opens an administrator's session. */
export function redeemAdminLink(deps: SessionDeps, input: { token: string }): { token: string; session: ConsoleSession } {
  if (!useConsoleLink(deps.store.db, hashToken(input.token), isoTimestamp(deps.clock.now())))
    throw new TimbreError('UNAUTHORIZED', { message: 'El enlace no es válido, ya se usó o venció: pida otro con `timbre console link`.' })
  return openSession(deps, { kind: 'admin', empresa_id: null, api_key_id: null, can_write: true })
}

/** A company user's session, bound to the API key it typed: read-only keys give a read-only console. */
export function loginWithApiKey(deps: SessionDeps, input: { key: string }): { token: string; session: ConsoleSession } {
  const key = authenticateApiKey(deps, { key: input.key.trim() })
  return openSession(deps, { kind: 'empresa', empresa_id: key.empresaId, api_key_id: key.id, can_write: key.canWrite })
}

/**
 * A person's session after their password (and code) were accepted (console-accounts.ts): it opens on their first
 * company in alphabetical order (or the one they were just invited to); they switch like the administrator does. `can_write` is stored for the record only:
 * the role, read on every request, decides.
 */
export function loginWithAccount(deps: SessionDeps, input: { accountId: string; empresaId?: string }): { token: string; session: ConsoleSession } {
  const empresas = empresasOfAccount(deps, { accountId: input.accountId })
  const first = empresas.find((e) => e.empresa_id === input.empresaId) ?? empresas[0]
  const access = first && accountAccess(deps, { accountId: input.accountId, empresaId: first.empresa_id })
  if (!first || !access) throw new TimbreError('UNAUTHORIZED')
  return openSession(deps, { kind: 'cuenta', empresa_id: first.empresa_id, api_key_id: null, account_id: input.accountId, can_write: ROLE_ACCESS[access.role].canWrite }, access)
}

/**
 * The session of a cookie, or null when it is unknown, idle too long, past its end, its API key no longer works, or
 * its account was disabled or removed from the company shown.
 */
export function resumeSession(deps: SessionDeps, input: { token: string }): ConsoleSession | null {
  const row = findConsoleSession(deps.store.db, hashToken(input.token))
  if (!row) return null
  const now = deps.clock.now()
  const idle = now.getTime() - Date.parse(row.last_seen_at)
  if (idle > CONSOLE_IDLE_MS || Date.parse(row.expires_at) <= now.getTime()) {
    deleteConsoleSession(deps.store.db, row.id)
    return null
  }
  if (row.api_key_id !== null) {
    const key = findApiKeyById(deps.store.db, row.api_key_id)
    const expired = key?.expires_at != null && Date.parse(key.expires_at) <= now.getTime()
    if (!key || key.revoked_at !== null || expired) {
      deleteConsoleSession(deps.store.db, row.id)
      return null
    }
  }
  let person: { email: string; role: Rol } | null = null
  if (row.account_id !== null) {
    person = row.empresa_id === null ? null : accountAccess(deps, { accountId: row.account_id, empresaId: row.empresa_id })
    if (person === null) {
      deleteConsoleSession(deps.store.db, row.id)
      return null
    }
  }
  if (idle >= TOUCH_EVERY_MS) updateConsoleSession(deps.store.db, row.id, { last_seen_at: isoTimestamp(now) })
  return toSession(row, person)
}

export function endSession(deps: SessionDeps, input: { id: string }): void {
  deleteConsoleSession(deps.store.db, input.id)
}

/** An administrator picks the company the pages show, a person one of theirs; a company user never can. */
export function selectEmpresa(deps: SessionDeps, input: { session: ConsoleSession; empresaId: string }): ConsoleSession {
  const { session } = input
  if (session.kind === 'cuenta') {
    const access = accountAccess(deps, { accountId: session.accountId!, empresaId: input.empresaId })
    if (access === null) throw new TimbreError('NOT_FOUND')
    updateConsoleSession(deps.store.db, session.id, { empresa_id: input.empresaId })
    return { ...session, ...ROLE_ACCESS[access.role], empresaId: input.empresaId, role: access.role }
  }
  if (session.kind !== 'admin') throw new TimbreError('NOT_FOUND')
  const empresa = resolveEmpresa(deps, { ref: input.empresaId })
  updateConsoleSession(deps.store.db, session.id, { empresa_id: empresa.id })
  return { ...session, empresaId: empresa.id }
}

/** Constant-time comparison of the token a form carried with the session's. */
export function csrfMatches(session: ConsoleSession, presented: string | null): boolean {
  if (presented === null) return false
  const a = Buffer.from(presented, 'utf8')
  const b = Buffer.from(session.csrfToken, 'utf8')
  return a.length === b.length && timingSafeEqual(a, b)
}
