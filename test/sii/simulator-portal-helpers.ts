// Helpers of the portal and RCV simulator tests (test/sii/simulator-portal*.test.ts, simulator-rcv*.test.ts): the
// certificate holder, the login's two hops over real HTTP and mutual TLS, and data service calls with a session.
import { expect } from 'bun:test'
import { FACADE_NAMESPACE, PORTAL_PATHS, type FacadeRequest } from '../../src/sii/portal-protocol'
import caPem from '../../src/sii/simulator/portal-ca.cert.pem' with { type: 'text' }
import { makeCertificate, testCa, type TestIdentity } from '../support/pki'

export const REFERENCIA = 'https://www4.sii.cl/consdcvinternetui/'

let holderCache: TestIdentity | undefined
/** A CA-signed certificate naming RUT 7880442-4 in its otherName, as the SII's CAs issue them. */
export function holder(): TestIdentity {
  holderCache ??= makeCertificate({ rut: '07880442-4', issuer: testCa() })
  return holderCache
}

export interface LoginAnswer {
  readonly status: number
  readonly location: string | null
  readonly cookies: readonly string[]
  readonly body: string
  /** The TOKEN cookie's value, null when none was set. */
  readonly token: string | null
}

/** The two hops of the login: the plain origin's 307, then the TLS listener with `identity`'s certificate (or none). */
export async function login(base: string, identity: TestIdentity | null, tlsOrigin?: (location: string) => string, referencia = REFERENCIA): Promise<LoginAnswer> {
  const first = await fetch(`${base}${PORTAL_PATHS.login}?${referencia}`, {
    method: 'POST', redirect: 'manual', body: `referencia=${encodeURIComponent(referencia)}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
  expect(first.status).toBe(307)
  const location = first.headers.get('location') ?? ''
  const tls = identity === null ? { ca: caPem } : { ca: caPem, cert: identity.certificatePem, key: identity.privateKeyPem }
  const res = await fetch(tlsOrigin === undefined ? location : tlsOrigin(location), {
    method: 'POST', redirect: 'manual', body: `referencia=${encodeURIComponent(referencia)}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' }, tls,
  } as RequestInit)
  const cookies = res.headers.getSetCookie()
  const token = cookies.map((c) => /^TOKEN=([^;]*)/.exec(c)?.[1]).find((v) => v !== undefined) ?? null
  return { status: res.status, location: res.headers.get('location'), cookies, body: await res.text(), token }
}


/** A data service call with the session's cookies; `conversationId` is the token unless given. */
export async function facade(base: string, token: string, op: string, data: FacadeRequest['data'], conversationId = token): Promise<Response> {
  return fetch(`${base}${PORTAL_PATHS.facade}${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', Cookie: `TOKEN=${token}; CSESSIONID=${token}` },
    body: JSON.stringify({ metaData: { namespace: `${FACADE_NAMESPACE}${op}`, conversationId, transactionId: crypto.randomUUID(), page: null }, data }),
  })
}
