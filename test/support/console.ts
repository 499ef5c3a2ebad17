// A logged-in console user over plain fetch (DESIGN §14): cookies kept by hand, the CSRF token read from the first
// page, redirects not followed so a test sees each 303. The browser tests (Chromium) prove the same flows end to end.
import { createAdminLink } from '../../src/services/console-sessions'
import type { TestServer } from './server'

export interface ConsolePage {
  readonly status: number
  readonly headers: Headers
  readonly html: string
  /** Location of a redirect, else null. */
  readonly location: string | null
}

export interface ConsoleClient {
  readonly cookie: string
  readonly csrf: string
  get(path: string, headers?: Record<string, string>): Promise<ConsolePage>
  /** A form post; `_csrf` is added unless `withoutCsrf`. Files go as multipart (pass a FormData). */
  post(path: string, fields: Record<string, string> | FormData, opts?: { withoutCsrf?: boolean; headers?: Record<string, string> }): Promise<ConsolePage>
}

async function pageOf(res: Response): Promise<ConsolePage> {
  return { status: res.status, headers: res.headers, html: await res.text(), location: res.headers.get('location') }
}

export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html)
  if (!m) throw new Error('no CSRF token on the page')
  return m[1]!
}

function cookieValue(res: Response, name: string): string {
  const line = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))
  if (!line) throw new Error(`no ${name} cookie in ${res.status} answer`)
  return line.split(';')[0]!
}

function clientFor(s: TestServer, cookie: string, csrf: string): ConsoleClient {
  return {
    cookie,
    csrf,
    async get(path, headers = {}) {
      return pageOf(await fetch(s.url + path, { redirect: 'manual', headers: { cookie, ...headers } }))
    },
    async post(path, fields, opts = {}) {
      let body: URLSearchParams | FormData
      if (fields instanceof FormData) {
        body = fields
        if (!opts.withoutCsrf) body.set('_csrf', csrf)
      } else {
        body = new URLSearchParams({ ...fields, ...(opts.withoutCsrf ? {} : { _csrf: csrf }) })
      }
      return pageOf(await fetch(s.url + path, { method: 'POST', redirect: 'manual', headers: { cookie, ...opts.headers }, body }))
    },
  }
}

/** Posts one of the pre-session forms (login, link, code, invitation) with its double-submit cookie. */
export async function preSession(s: TestServer, getPath: string, postPath: string, fields: Record<string, string>): Promise<Response> {
  const page = await fetch(s.url + getPath, { redirect: 'manual' })
  const loginCookie = cookieValue(page, 'timbre_console_login')
  const csrf = csrfOf(await page.text())
  return fetch(s.url + postPath, { method: 'POST', redirect: 'manual', headers: { cookie: loginCookie }, body: new URLSearchParams({ ...fields, _csrf: csrf }) })
}

export async function afterLogin(s: TestServer, res: Response): Promise<ConsoleClient> {
  if (res.status !== 303) throw new Error(`console login failed: ${res.status} ${await res.text()}`)
  const cookie = cookieValue(res, 'timbre_console')
  const first = await fetch(s.url + res.headers.get('location')!, { redirect: 'manual', headers: { cookie } })
  return clientFor(s, cookie, csrfOf(await first.text()))
}

/** A company user, logged in with one of its API keys. */
export async function consoleLogin(s: TestServer, apiKey: string): Promise<ConsoleClient> {
  return afterLogin(s, await preSession(s, '/console/entrar', '/console/entrar', { api_key: apiKey }))
}

/** The instance administrator, through a one-time link; `empresaId` picks the company the pages show. */
export async function consoleAdmin(s: TestServer, empresaId?: string): Promise<ConsoleClient> {
  const { token } = createAdminLink(s.server.deps)
  const client = await afterLogin(s, await preSession(s, `/console/enlace?token=${token}`, '/console/enlace', { token }))
  if (empresaId !== undefined) {
    const chosen = await client.post('/console/empresas/seleccionar', { empresa_id: empresaId })
    if (chosen.status !== 303) throw new Error(`selecting the company failed: ${chosen.status}`)
  }
  return client
}

/**
 * A person with their own account (issue 27): email and password, then `code()` when the account answers with the
 * code step. Throws with the page when the login is refused; `tryAccountLogin` returns the answer instead.
 */
export async function consoleAccountLogin(s: TestServer, email: string, password: string, code?: () => string): Promise<ConsoleClient> {
  return afterLogin(s, await tryAccountLogin(s, email, password, code))
}

export async function tryAccountLogin(s: TestServer, email: string, password: string, code?: () => string): Promise<Response> {
  const first = await preSession(s, '/console/entrar', '/console/entrar/cuenta', { email, password })
  if (first.status !== 200) return first
  const html = await first.text()
  const pending = /name="pendiente" value="([^"]+)"/.exec(html)?.[1]
  if (!pending || !code) throw new Error(`login answered 200 without a code step: ${html.slice(0, 300)}`)
  return preSession(s, '/console/entrar', '/console/entrar/codigo', { pendiente: pending, codigo: code() })
}
