// Who is at the console (DESIGN §14): an instance administrator who came through a one-time link, or a company user
// who logged in with one of its API keys. Tokens are 32 random bytes; only their SHA-256 is stored, as for API keys.
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
import { TimbreError } from '../errors'
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
  readonly kind: 'admin' | 'empresa'
  /** The company the pages show: fixed for a company user, chosen (or none yet) by an administrator. */
  readonly empresaId: string | null
  readonly canWrite: boolean
  readonly csrfToken: string
}

const newToken = () => randomBytes(32).toString('base64url')
const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex')

function toSession(row: ConsoleSessionRow): ConsoleSession {
  return { id: row.id, kind: row.kind, empresaId: row.empresa_id, canWrite: row.can_write, csrfToken: row.csrf_token }
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

function openSession(deps: SessionDeps, fields: Pick<ConsoleSessionRow, 'kind' | 'empresa_id' | 'api_key_id' | 'can_write'>): { token: string; session: ConsoleSession } {
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
  return { token, session: toSession(row) }
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

/** The session of a cookie, or null when it is unknown, idle too long, past its end, or its API key no longer works. */
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
  if (idle >= TOUCH_EVERY_MS) updateConsoleSession(deps.store.db, row.id, { last_seen_at: isoTimestamp(now) })
  return toSession(row)
}

export function endSession(deps: SessionDeps, input: { id: string }): void {
  deleteConsoleSession(deps.store.db, input.id)
}

/** An administrator picks the company the pages show; a company user never can. */
export function selectEmpresa(deps: SessionDeps, input: { session: ConsoleSession; empresaId: string }): ConsoleSession {
  if (input.session.kind !== 'admin') throw new TimbreError('NOT_FOUND')
  const empresa = resolveEmpresa(deps, { ref: input.empresaId })
  updateConsoleSession(deps.store.db, input.session.id, { empresa_id: empresa.id })
  return { ...input.session, empresaId: empresa.id }
}

/** Constant-time comparison of the token a form carried with the session's. */
export function csrfMatches(session: ConsoleSession, presented: string | null): boolean {
  if (presented === null) return false
  const a = Buffer.from(presented, 'utf8')
  const b = Buffer.from(session.csrfToken, 'utf8')
  return a.length === b.length && timingSafeEqual(a, b)
}
