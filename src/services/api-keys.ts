// API keys (DESIGN §4, §12): `timbre_` + 32 random bytes base64url, shown once, stored as SHA-256, read-only unless --write.
import { createHash, randomBytes } from 'node:crypto'
import { isoTimestamp } from '../clock'
import { findApiKeyByHash, insertApiKey, listApiKeys as listRows, revokeApiKey as revokeRow, touchApiKey } from '../db/api-key-store'
import type { ApiKeyRow } from '../db/schema'
import { TimbreError } from '../errors'
import type { Deps } from './deps'

export const API_KEY_PREFIX = 'timbre_'
const SHOWN_PREFIX_LENGTH = 12
/** last_used_at is written at most this often per key: a write per request would cost an fsync each. */
const TOUCH_EVERY_MS = 60_000

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex')
}

export interface ApiKeyListing {
  readonly id: string
  readonly empresa_id: string
  readonly nombre: string | null
  readonly write: boolean
  readonly prefix: string
  readonly created_at: string
  readonly expires_at: string | null
  readonly last_used_at: string | null
  readonly revoked_at: string | null
}

function toListing(row: ApiKeyRow): ApiKeyListing {
  const { id, empresa_id, nombre, write, prefix, created_at, expires_at, last_used_at, revoked_at } = row
  return { id, empresa_id, nombre, write, prefix, created_at, expires_at, last_used_at, revoked_at }
}

export function createApiKey(
  deps: Pick<Deps, 'store' | 'clock'>,
  input: { empresaId: string; write: boolean; nombre?: string | null; expiresAt?: string | null },
): { id: string; key: string; write: boolean; empresa_id: string; expires_at: string | null } {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url')
  const row = insertApiKey(deps.store.db, {
    id: Bun.randomUUIDv7(),
    empresa_id: input.empresaId,
    nombre: input.nombre ?? null,
    key_hash: hashApiKey(key),
    prefix: key.slice(0, SHOWN_PREFIX_LENGTH),
    write: input.write,
    created_at: isoTimestamp(deps.clock.now()),
    expires_at: input.expiresAt ?? null,
  })
  return { id: row.id, key, write: row.write, empresa_id: row.empresa_id, expires_at: row.expires_at }
}

export function listApiKeys(deps: Pick<Deps, 'store'>, input: { empresaId?: string } = {}): ApiKeyListing[] {
  return listRows(deps.store.db, input.empresaId).map(toListing)
}

export function revokeApiKey(deps: Pick<Deps, 'store' | 'clock'>, input: { id: string }): ApiKeyListing {
  const row = revokeRow(deps.store.db, input.id, isoTimestamp(deps.clock.now()))
  if (!row) throw new TimbreError('NOT_FOUND', { message: `No existe la API key ${input.id}.` })
  return toListing(row)
}

export interface ApiKeyCredential {
  readonly id: string
  readonly empresaId: string
  readonly canWrite: boolean
}

const lastTouched = new Map<string, number>()

/** Looks the key up on every request, so a revocation takes effect on the next one (DESIGN §12). */
export function authenticateApiKey(deps: Pick<Deps, 'store' | 'clock'>, input: { key: string }): ApiKeyCredential {
  const { key } = input
  const now = deps.clock.now()
  if (!key.startsWith(API_KEY_PREFIX)) throw new TimbreError('UNAUTHORIZED')
  const row = findApiKeyByHash(deps.store.db, hashApiKey(key))
  if (!row || row.revoked_at !== null) throw new TimbreError('UNAUTHORIZED')
  if (row.expires_at !== null && Date.parse(row.expires_at) <= now.getTime()) throw new TimbreError('UNAUTHORIZED')
  const touched = lastTouched.get(row.id) ?? 0
  if (now.getTime() - touched >= TOUCH_EVERY_MS) {
    lastTouched.set(row.id, now.getTime())
    touchApiKey(deps.store.db, row.id, isoTimestamp(now))
  }
  return { id: row.id, empresaId: row.empresa_id, canWrite: row.write }
}
