// The SII portal session, opened by certificate and always closed (research §2.2 "Authentication", §4.2 step 1,
// §4.5): POST CAutInicio.cgi?<referencia> over mutual TLS, redirects followed by hand while collecting cookies, until
// the TOKEN cookie appears; autTermino.cgi at the end, whatever happened. Generic: the RCV reader (rcv-client.ts) and,
// later, the folio requests (DESIGN §17) pass their own `referencia` and work inside `withPortalSession`.
import { decodeBody, snippet } from '../client/http'
import type { HostTarget, PortalOrigins } from '../client/hosts'
import { PORTAL_PATHS, SESSION_CAP_TEXT } from '../portal-protocol'
import { CookieJar } from './cookies'
import { PortalFailure, respuestaInvalida, sinConexion } from './failure'
import { saysPhrase } from './text'
import type { PortalReply, PortalTransport } from './transport'

/** An open session: its cookies (sent on every request) and the TOKEN the data service takes as conversationId. */
export interface PortalSession {
  readonly cookies: CookieJar
  readonly token: string
}

export interface PortalSessionDeps {
  readonly transport: PortalTransport
  readonly target: HostTarget
  readonly origins: PortalOrigins
  /** Wall clock for cookie expiry. */
  readonly nowMs: () => number
  /** Events in English; never a cookie, a token or a key. */
  readonly log: (event: string, fields: object) => void
}

/** A browser gives up after ~20 redirects; the SII's login takes two or three (research §4.2). */
const MAX_REDIRECTS = 10

/** The TOKEN cookie is the session (research §2.2): the data service wants it as conversationId too. */
const TOKEN_COOKIE = 'TOKEN'

/**
 * Opens a session for `referencia` (where the portal sends the browser after login), runs `use` in it and closes it
 * (autTermino.cgi) whatever `use` did, even after a failed login: the cap on sessions counts whatever half-open
 * session the SII kept. A failed logout is logged and changes nothing. Failures throw `PortalFailure`.
 */
export async function withPortalSession<T>(
  deps: PortalSessionDeps, referencia: string, fields: object, use: (session: PortalSession) => Promise<T>,
): Promise<T> {
  const cookies = new CookieJar()
  // Whatever a failure quotes of the SII's answers leaves here with the session's values blanked (cookies.ts redact).
  const redacted = (err: unknown): unknown =>
    err instanceof PortalFailure ? new PortalFailure(err.motivo, cookies.redact(err.mensaje), cookies.redact(err.detail)) : err
  try {
    const session = await login(deps, referencia, cookies).catch((err: unknown) => {
      const clean = redacted(err)
      if (clean instanceof PortalFailure) deps.log('sii.portal.login', { ...fields, outcome: 'failed', motivo: clean.motivo, reason: clean.detail })
      throw clean
    })
    deps.log('sii.portal.login', { ...fields, outcome: 'ok' })
    return await use(session).catch((err: unknown) => {
      throw redacted(err)
    })
  } finally {
    await logout(deps, cookies, fields)
  }
}

async function login(deps: PortalSessionDeps, referencia: string, cookies: CookieJar): Promise<PortalSession> {
  let method: 'GET' | 'POST' = 'POST'
  let url = `${deps.origins.login}${PORTAL_PATHS.login}?${referencia}`
  const body = new URLSearchParams({ referencia }).toString()
  for (let hop = 0; ; hop++) {
    const reply = await deps.transport.send({
      method, url,
      headers: withCookies(cookies, method === 'POST' ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
      ...(method === 'POST' ? { body } : {}),
    })
    if (reply.kind === 'failure') throw reply.tooLarge ? respuestaInvalida('ingreso con certificado', 'la página es demasiado grande') : sinConexion('ingreso con certificado', reply.reason)
    cookies.store(reply.headers.getSetCookie(), deps.nowMs())
    const location = reply.headers.get('location')
    if (!isRedirect(reply.status) || location === null) return sessionFrom(reply, cookies)
    if (hop >= MAX_REDIRECTS) throw respuestaInvalida('ingreso con certificado', `más de ${MAX_REDIRECTS} redirecciones`)
    url = nextUrl(deps.target, url, location)
    // 307/308 repeat the request as it was (RFC 9110 §15.4.8–9); 301/302/303 become a GET, as browsers do.
    if (reply.status !== 307 && reply.status !== 308) method = 'GET'
  }
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308
}

/** Where a redirect goes, if it may: research §4.2 "only to *.sii.cl"; an origin target only to its own host. */
function nextUrl(target: HostTarget, from: string, location: string): string {
  let next: URL
  try {
    next = new URL(location, from)
  } catch {
    throw respuestaInvalida('ingreso con certificado', 'una redirección a una dirección ilegible')
  }
  if (!isAllowedRedirect(target, next)) {
    throw respuestaInvalida('ingreso con certificado', `una redirección a ${next.protocol}//${next.host}, fuera del SII`)
  }
  return next.toString()
}

export function isAllowedRedirect(target: HostTarget, url: URL): boolean {
  if (target.kind === 'sii') return url.protocol === 'https:' && url.hostname.endsWith('.sii.cl')
  // The simulator may move the login to its TLS port (http → https, another port) but never off its host.
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname === new URL(target.origin).hostname
}

/** The last page of the login: a session when TOKEN is set; else the session cap's page, a 5xx, or a refusal. */
function sessionFrom(reply: Extract<PortalReply, { kind: 'response' }>, cookies: CookieJar): PortalSession {
  const token = cookies.get(TOKEN_COOKIE)
  if (token !== undefined) return { cookies, token }
  const page = decodeBody(reply.bytes, reply.headers.get('content-type') ?? '')
  if (saysPhrase(page, SESSION_CAP_TEXT)) {
    throw new PortalFailure('tope_sesiones',
      'El SII tiene abiertas el máximo de sesiones permitidas para este RUT. Cierre las sesiones abiertas en el sitio del SII, o espere a que expiren, y vuelva a sincronizar.',
      `login: session cap page (HTTP ${reply.status})`)
  }
  if (reply.status >= 500) throw sinConexion('ingreso con certificado', `HTTP ${reply.status}`)
  throw new PortalFailure('login_rechazado',
    'El SII no abrió una sesión con el certificado de la empresa. Revise que el certificado esté vigente y que su titular pueda operar por la empresa en el sitio del SII.',
    `login: no ${TOKEN_COOKIE} cookie (HTTP ${reply.status}: ${snippet(page, 80)})`)
}

/** autTermino.cgi with the session's cookies (research §4.5 "always call autTermino.cgi"). */
async function logout(deps: PortalSessionDeps, cookies: CookieJar, fields: object): Promise<void> {
  const reply = await deps.transport.send({ method: 'GET', url: `${deps.origins.logout}${PORTAL_PATHS.logout}`, headers: withCookies(cookies, {}) })
  if (reply.kind === 'response' && reply.status < 400) deps.log('sii.portal.logout', { ...fields, outcome: 'ok' })
  else deps.log('sii.portal.logout', { ...fields, outcome: 'failed', reason: reply.kind === 'failure' ? reply.reason : `HTTP ${reply.status}` })
}

export function withCookies(cookies: CookieJar, headers: Readonly<Record<string, string>>): Record<string, string> {
  const cookie = cookies.header()
  return cookie === undefined ? { ...headers } : { ...headers, Cookie: cookie }
}
