// RS256 bearer tokens (DESIGN §4, §12): issued with the instance key, verified with it or the configured public keys.
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, errors as joseErrors, exportJWK, jwtVerify, SignJWT, type JWTPayload } from 'jose'
import type { KeyObject } from 'node:crypto'
import type { Clock } from '../clock'
import { findEmpresaById } from '../db/empresa-store'
import type { Store } from '../db/open'
import { TimbreError } from '../errors'

export interface VerifyingKey {
  readonly key: KeyObject
  /** The `iss` its tokens must carry; null: not checked (a TIMBRE_JWT_PUBLIC_KEYS path given without `#iss=`). */
  readonly iss: string | null
  /** The `aud` its tokens must name; null: not checked. */
  readonly aud: string | null
  /** The instance key: its tokens from before they carried `iss` (issue 18) have none, and pass until they expire. */
  readonly acceptsNoIss: boolean
}

/** A TIMBRE_JWT_PUBLIC_KEYS key, read, with what its tokens must say (config.ts parses the setting). */
export interface ExternalIssuerKey {
  readonly key: KeyObject
  readonly iss: string | null
  readonly aud: string | null
}

export interface JwtKeyring {
  /** `iss` = `timbre:<kid>`: names this instance's key, so another installation can tell its tokens apart. */
  readonly signing: { readonly kid: string; readonly iss: string; readonly privateKey: KeyObject }
  /** kid → key: the instance key and every TIMBRE_JWT_PUBLIC_KEYS key. */
  readonly verifying: ReadonlyMap<string, VerifyingKey>
}

export const CLOCK_SKEW_SECONDS = 60
/**
 * 15 minutes (was an hour): a bearer token cannot be revoked alone, only with its key (README, "Revocar un token"),
 * so a short life bounds what a leaked one is worth. Longer-lived access is an API key, revoked one by one.
 */
export const DEFAULT_TOKEN_TTL_SECONDS = 900
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** kid = RFC 7638 thumbprint of the public key: stable, and issuers can compute it too. */
export async function keyId(publicKey: KeyObject): Promise<string> {
  return calculateJwkThumbprint(await exportJWK(publicKey))
}

/** Builds the keyring Deps carries (app.ts, the composition root): not a use case, it runs before there are deps. */
export async function buildKeyring(instancePrivate: KeyObject, instancePublic: KeyObject, external: readonly ExternalIssuerKey[]): Promise<JwtKeyring> {
  const kid = await keyId(instancePublic)
  const iss = `timbre:${kid}`
  const verifying = new Map<string, VerifyingKey>()
  for (const e of external) verifying.set(await keyId(e.key), { ...e, acceptsNoIss: false })
  // Set last: the instance's own key keeps its rules even if it is also listed in TIMBRE_JWT_PUBLIC_KEYS.
  verifying.set(kid, { key: instancePublic, iss, aud: null, acceptsNoIss: true })
  return { signing: { kid, iss, privateKey: instancePrivate }, verifying }
}

// Typed by what they use, not by Deps: deps.ts takes JwtKeyring from here, and a type cycle would tie the two files.
type TokenDeps = { readonly keyring: JwtKeyring; readonly clock: Clock }

export async function issueToken(
  deps: TokenDeps,
  input: { empresaId: string; sub?: string; ttlSeconds: number },
): Promise<{ token: string; expires_at: string }> {
  const iat = Math.floor(deps.clock.now().getTime() / 1000)
  const exp = iat + input.ttlSeconds
  const jwt = new SignJWT({ empresa_id: input.empresaId })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: deps.keyring.signing.kid })
    .setIssuer(deps.keyring.signing.iss)
    .setIssuedAt(iat)
    .setNotBefore(iat)
    .setExpirationTime(exp)
  if (input.sub) jwt.setSubject(input.sub)
  return { token: await jwt.sign(deps.keyring.signing.privateKey), expires_at: new Date(exp * 1000).toISOString() }
}

export interface TokenClaims {
  readonly empresaId: string
  readonly sub: string | null
}

/** Whether a token's iss and aud are those `key` requires (issue 18: per configured key). */
function saysIssuerOf(key: VerifyingKey, payload: JWTPayload): boolean {
  const issOk = key.iss === null || payload.iss === key.iss || (payload.iss === undefined && key.acceptsNoIss)
  const audOk = key.aud === null || payload.aud === key.aud || (Array.isArray(payload.aud) && payload.aud.includes(key.aud))
  return issOk && audOk
}

/**
 * What a token says of itself, checked before any signature (issue 18): a token that is malformed, not RS256, of an
 * unknown kid, expired, not yet valid, without a uuid empresa_id or without its key's iss and aud costs a base64
 * decode (about 1 µs), not an RSA verification (about 65 µs), so a caller flooding bad tokens makes the server do
 * little more than answer them. Only the token and the public keys are consulted here: the store is read after the
 * signature, so a forged token cannot learn from the answer's timing whether a company exists.
 */
function precheck(keyring: JwtKeyring, token: string, now: Date): VerifyingKey[] {
  let header: ReturnType<typeof decodeProtectedHeader>
  let payload: JWTPayload
  try {
    header = decodeProtectedHeader(token)
    payload = decodeJwt(token)
  } catch {
    throw new TimbreError('UNAUTHORIZED')
  }
  // RS256 only: `none`, HS256 with the public key as secret, and the rest are refused before any key is tried.
  if (header.alg !== 'RS256') throw new TimbreError('UNAUTHORIZED')
  // The same bounds jwtVerify applies below (clockTolerance), so the two never disagree.
  const nowSeconds = Math.floor(now.getTime() / 1000)
  if (typeof payload.exp !== 'number' || payload.exp <= nowSeconds - CLOCK_SKEW_SECONDS) throw new TimbreError('UNAUTHORIZED')
  if (payload.nbf !== undefined && !(typeof payload.nbf === 'number' && payload.nbf <= nowSeconds + CLOCK_SKEW_SECONDS)) throw new TimbreError('UNAUTHORIZED')
  if (payload.iat !== undefined && !(typeof payload.iat === 'number' && payload.iat <= nowSeconds + CLOCK_SKEW_SECONDS)) throw new TimbreError('UNAUTHORIZED')
  if (typeof payload.empresa_id !== 'string' || !UUID.test(payload.empresa_id)) throw new TimbreError('UNAUTHORIZED')
  // The kid names the key; without one, the keys whose iss the token carries (one, unless bare paths are configured).
  const keys = header.kid !== undefined ? [keyring.verifying.get(header.kid)].filter((k) => k !== undefined) : [...keyring.verifying.values()]
  const candidates = keys.filter((k) => saysIssuerOf(k, payload))
  if (candidates.length === 0) throw new TimbreError('UNAUTHORIZED')
  return candidates
}

async function verifyToken(keyring: JwtKeyring, token: string, now: Date): Promise<TokenClaims> {
  for (const { key, iss, aud, acceptsNoIss } of precheck(keyring, token, now)) {
    try {
      // iss and aud again, by jose over the verified bytes (the instance key's iss is optional: precheck's alone).
      const { payload } = await jwtVerify(token, key, {
        algorithms: ['RS256'],
        clockTolerance: CLOCK_SKEW_SECONDS,
        currentDate: now,
        requiredClaims: ['exp', 'empresa_id'],
        ...(iss !== null && !acceptsNoIss ? { issuer: iss } : {}),
        ...(aud !== null ? { audience: aud } : {}),
      })
      return { empresaId: (payload.empresa_id as string).toLowerCase(), sub: typeof payload.sub === 'string' ? payload.sub : null }
    } catch (err) {
      if (err instanceof joseErrors.JWSSignatureVerificationFailed) continue
      throw new TimbreError('UNAUTHORIZED')
    }
  }
  throw new TimbreError('UNAUTHORIZED')
}

/**
 * A bearer token as a credential (DESIGN §4): verified, and its company still in the store; anything else is
 * UNAUTHORIZED, like an API key that does not match (services/api-keys.ts).
 */
export async function authenticateBearer(deps: TokenDeps & { readonly store: Store }, input: { token: string }): Promise<TokenClaims> {
  const claims = await verifyToken(deps.keyring, input.token, deps.clock.now())
  if (!findEmpresaById(deps.store.db, claims.empresaId)) throw new TimbreError('UNAUTHORIZED')
  return claims
}
