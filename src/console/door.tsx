// The console door (DESIGN §14): sessions, CSRF and the read-only rule are decided here, once, before any screen
// runs; screens then read the session from context.ts and call services, never the store.
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { Elysia } from 'elysia'
import { TimbreError } from '../errors'
import { STATUS } from '../contracts/statuses'
import { FailureWindow } from '../contracts/rate-limit'
import { CONSOLE_MAX_AGE_MS, csrfMatches, endSession, loginWithAccount, loginWithApiKey, redeemAdminLink, resumeSession, type ConsoleSession } from '../services/console-sessions'
import { acceptInvitation, describeInvitation, PendingSecondFactors, prepareLoginTiming, verifyLoginCode, verifyPassword, type InvitationView } from '../services/console-accounts'
import type { Deps } from '../services/deps'
import { assetResponse } from './assets'
import { bindConsoleRequest, NoEmpresaSelected, sessionOf, textField } from './context'
import { htmlResponse, redirect, renderPage, Shell } from './page'
import { CONSOLE_PREFIX } from './paths'
import { CodePage, LinkPage, LoginPage } from './screens/login'
import { InvitationPage } from './screens/invitacion'
import { failureOf, type Failure } from './forms'
import { cuentaScreens } from './screens/cuentas'
import { miCuentaScreens } from './screens/mi-cuenta'
import { empresaScreens } from './screens/empresas'
import { documentoScreens } from './screens/documentos'
import { emitirScreens } from './screens/emitir'
import { recibidoScreens } from './screens/recibidos'
import { cierreMesScreens } from './screens/cierre-mes'
import { folioScreens } from './screens/folios'
import { certificacionScreens } from './screens/certificacion'
import { certificadoScreens } from './screens/certificado'
import { webhookScreens } from './screens/webhooks'
import { correoScreens } from './screens/correo'
import { catalogoScreens } from './screens/catalogo-screens'

export const SESSION_COOKIE = 'timbre_console'
/** Double-submit token of the two forms shown before a session exists (login, one-time link). */
export const LOGIN_COOKIE = 'timbre_console_login'
const FAILED_LOGINS_PER_MINUTE = 20
const SAFE_METHODS = new Set(['GET', 'HEAD'])
const PRE_SESSION_PATHS = new Set(['/entrar', '/entrar/cuenta', '/entrar/codigo', '/enlace', '/invitacion'].map((p) => `${CONSOLE_PREFIX}${p}`))
const LOGIN_NOTICES: Readonly<Record<string, string>> = {
  contrasena: 'Contraseña guardada. Entre con su correo, su contraseña nueva y el código de su aplicación.',
}

export interface ConsoleDoor {
  handle(request: Request, clientIp: string): Promise<Response>
}

function cookiesOf(request: Request): Map<string, string> {
  const jar = new Map<string, string>()
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0) jar.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim())
  }
  return jar
}

function cookie(name: string, value: string, opts: { secure: boolean; maxAgeSeconds: number }): string {
  return [`${name}=${value}`, `Path=${CONSOLE_PREFIX}`, 'HttpOnly', 'SameSite=Strict', `Max-Age=${opts.maxAgeSeconds}`, ...(opts.secure ? ['Secure'] : [])].join('; ')
}

function sameToken(a: string | null | undefined, b: string | null | undefined): boolean {
  if (!a || !b) return false
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** A POST from another site is refused by the browser's Origin even before the token is looked at. */
function crossOrigin(request: Request): boolean {
  const origin = request.headers.get('origin')
  return origin !== null && origin !== new URL(request.url).origin
}

async function formFrom(request: Request): Promise<FormData> {
  if (SAFE_METHODS.has(request.method)) return new FormData()
  const type = (request.headers.get('content-type') ?? '').toLowerCase()
  if (!type.startsWith('application/x-www-form-urlencoded') && !type.startsWith('multipart/form-data')) return new FormData()
  try {
    return await request.clone().formData()
  } catch {
    return new FormData()
  }
}

const under = (path: string, section: string) => path === `${CONSOLE_PREFIX}${section}` || path.startsWith(`${CONSOLE_PREFIX}${section}/`)
/** Settings of the company (domain/console-roles.ts): an emisor or lectura account does not reach them at all. */
const SETTINGS_SECTIONS = ['/certificado', '/webhooks', '/correo']
/** What any session may post, even a read-only one: leaving, switching company, its own password and second factor. */
const OWN_POSTS = ['/salir', '/empresas/seleccionar', '/mi-cuenta']

/**
 * What a session may not do here, in words for the 403 page, or null. Decided once, before any screen runs, as the
 * read-only rule was (DESIGN §14); screens hide what a session cannot use, and this refuses it if asked anyway.
 */
export function refusal(session: ConsoleSession, method: string, path: string): { title: string; message: string } | null {
  if (under(path, '/cuentas') && !session.canManageAccounts)
    return { title: 'Sin permiso', message: 'Solo un administrador de la empresa invita personas, cambia sus roles o las quita.' }
  if (SETTINGS_SECTIONS.some((s) => under(path, s)) && session.settings === 'hidden')
    return { title: 'Sin permiso', message: 'El certificado, los webhooks y el correo de la empresa los ve y cambia solo un administrador de la empresa.' }
  if (SAFE_METHODS.has(method) || OWN_POSTS.some((s) => under(path, s))) return null
  if (!session.canWrite)
    return session.role === null
      ? { title: 'Solo lectura', message: 'Entró con una API key de solo lectura: puede consultar, pero no cambiar nada.' }
      : { title: 'Solo lectura', message: 'Su rol en esta empresa es de solo lectura: puede consultar, pero no emitir ni cambiar nada.' }
  if (under(path, '/folios') && session.settings !== 'write') return { title: 'Sin permiso', message: 'Los CAF los carga un administrador de la empresa.' }
  return null
}

function problemPage(title: string, message: string, status: number, session: ConsoleSession | null): Response {
  return htmlResponse(
    <Shell title={title} session={session}>
      <main id="contenido" class="login card">
        <h1>{title}</h1>
        <p>{message}</p>
        <p>
          <a href={`${CONSOLE_PREFIX}/`}>Volver a la consola</a>
        </p>
      </main>
    </Shell>,
    status,
  )
}

export function createConsoleDoor(deps: Deps): ConsoleDoor {
  // Again (it runs once): `serve` calls it at start; a door made elsewhere (tests) gets it here.
  prepareLoginTiming()
  const failures = new FailureWindow(FAILED_LOGINS_PER_MINUTE, 60_000)
  const secondFactors = new PendingSecondFactors()
  const secure = deps.config.tlsCert !== null

  const screens = new Elysia({ prefix: CONSOLE_PREFIX, normalize: false })
    .onError(({ error, request }) => {
      if (error instanceof NoEmpresaSelected) return redirect(`${CONSOLE_PREFIX}/empresas`)
      if (error instanceof TimbreError) {
        const status = STATUS[error.code]
        return renderPage(deps, request, { title: status === 404 ? 'No encontrado' : 'No se pudo completar', section: null, status, children: <p class="card">{error.message}</p> })
      }
      if ((error as { code?: unknown })?.code === 'NOT_FOUND' || (error as Error)?.name === 'NotFoundError')
        return renderPage(deps, request, { title: 'No encontrado', section: null, status: 404, children: <p class="card">Esta página no existe.</p> })
      deps.log.error('console.error', { error: String(error), stack: (error as Error)?.stack })
      return renderPage(deps, request, { title: 'Error interno', section: null, status: 500, children: <p class="card">Ocurrió un error inesperado; quedó registrado en el log del servidor.</p> })
    })
    .get('/', ({ request }) => redirect(`${CONSOLE_PREFIX}${sessionOf(request).empresaId === null ? '/empresas' : '/documentos'}`))
    .post('/salir', ({ request }) => {
      endSession(deps, { id: sessionOf(request).id })
      const res = redirect(`${CONSOLE_PREFIX}/entrar`)
      res.headers.append('Set-Cookie', cookie(SESSION_COOKIE, '', { secure, maxAgeSeconds: 0 }))
      return res
    })
    .use(empresaScreens(deps))
    .use(documentoScreens(deps))
    .use(emitirScreens(deps))
    .use(recibidoScreens(deps))
    .use(cierreMesScreens(deps))
    .use(folioScreens(deps))
    .use(certificacionScreens(deps))
    .use(certificadoScreens(deps))
    .use(webhookScreens(deps))
    .use(correoScreens(deps))
    .use(catalogoScreens(deps))
    .use(cuentaScreens(deps))
    .use(miCuentaScreens(deps))

  function loginToken(request: Request): { token: string; setCookie: string | null } {
    const existing = cookiesOf(request).get(LOGIN_COOKIE)
    if (existing) return { token: existing, setCookie: null }
    const token = randomBytes(24).toString('base64url')
    return { token, setCookie: cookie(LOGIN_COOKIE, token, { secure, maxAgeSeconds: 3600 }) }
  }

  function withCookie(res: Response, setCookie: string | null): Response {
    if (setCookie) res.headers.append('Set-Cookie', setCookie)
    return res
  }

  function startSession(token: string, to: string): Response {
    const res = redirect(to)
    res.headers.append('Set-Cookie', cookie(SESSION_COOKIE, token, { secure, maxAgeSeconds: CONSOLE_MAX_AGE_MS / 1000 }))
    res.headers.append('Set-Cookie', cookie(LOGIN_COOKIE, '', { secure, maxAgeSeconds: 0 }))
    return res
  }

  function tooMany(seconds: number, setCookie: string | null): Response {
    return withCookie(problemPage('Demasiados intentos', `Espere ${seconds} s antes de intentar de nuevo.`, 429, null), setCookie)
  }

  /** The API key's and the administrator link's POST: a good credential is always served (DESIGN §4). */
  function keyOrLink(isLogin: boolean, form: FormData, token: string, setCookie: string | null, clientIp: string, nowMs: number): Response {
    try {
      if (isLogin) {
        const opened = loginWithApiKey(deps, { key: textField(form, 'api_key') ?? '' })
        deps.log.info('console.login', { kind: 'empresa', empresa_id: opened.session.empresaId, session_id: opened.session.id })
        return startSession(opened.token, `${CONSOLE_PREFIX}/documentos`)
      }
      const opened = redeemAdminLink(deps, { token: textField(form, 'token') ?? '' })
      deps.log.info('console.login', { kind: 'admin', session_id: opened.session.id })
      return startSession(opened.token, `${CONSOLE_PREFIX}/empresas`)
    } catch (err) {
      if (!(err instanceof TimbreError) || err.code !== 'UNAUTHORIZED') throw err
      // DESIGN §4: past 20 failures a minute from one address a bad credential gets 429; a good one was served above,
      // so an office behind one NAT is never locked out by someone guessing.
      const blocked = failures.blockedFor(clientIp, nowMs)
      if (blocked > 0) return tooMany(blocked, setCookie)
      failures.record(clientIp, nowMs)
      const message = isLogin ? 'La API key no es válida, venció o fue revocada.' : err.message
      const page = isLogin ? <LoginPage csrf={token} error={message} errorFor="api_key" /> : <LinkPage csrf={token} linkToken="" error={message} />
      return withCookie(htmlResponse(page, 401), setCookie)
    }
  }

  function accountSession(accountId: string, empresaId?: string): Response {
    const opened = loginWithAccount(deps, { accountId, empresaId })
    deps.log.info('console.login', { kind: 'cuenta', account_id: accountId, empresa_id: opened.session.empresaId, session_id: opened.session.id })
    return startSession(opened.token, `${CONSOLE_PREFIX}/documentos`)
  }

  /**
   * Email and password, then the code when the account has one. Unlike a 256-bit API key, a password can be guessed:
   * an address past its 20 failures a minute is refused before the password is even checked, or the 429 would still
   * let a right guess through; and each address locks itself out of an account after 10 failures in a row
   * (console-accounts.ts), so a stranger cannot lock the owner out.
   */
  async function accountLogin(path: string, form: FormData, token: string, setCookie: string | null, clientIp: string, nowMs: number): Promise<Response> {
    const blocked = failures.blockedFor(clientIp, nowMs)
    if (blocked > 0) return tooMany(blocked, setCookie)
    const email = textField(form, 'email')
    const pendingToken = textField(form, 'pendiente') ?? ''
    try {
      if (path === `${CONSOLE_PREFIX}/entrar/cuenta`) {
        const verdict = await verifyPassword(deps, { email: email ?? '', password: String(form.get('password') ?? ''), address: clientIp })
        if (!verdict.needsTotp) return accountSession(verdict.accountId)
        return withCookie(htmlResponse(<CodePage csrf={token} pending={secondFactors.issue(verdict.accountId, nowMs)} error={null} />), setCookie)
      }
      const accountId = secondFactors.take(pendingToken, nowMs)
      if (accountId === null)
        return withCookie(htmlResponse(<LoginPage csrf={token} error="El paso del código venció o se agotaron sus intentos: vuelva a escribir su correo y contraseña." />, 401), setCookie)
      verifyLoginCode(deps, { accountId, code: textField(form, 'codigo') ?? '', address: clientIp })
      secondFactors.forget(pendingToken)
      return accountSession(accountId)
    } catch (err) {
      if (!(err instanceof TimbreError) || err.code !== 'UNAUTHORIZED') throw err
      failures.record(clientIp, nowMs)
      deps.log.warn('console.login_failed', { kind: 'cuenta', step: path.endsWith('/codigo') ? 'codigo' : 'password' })
      const page = path.endsWith('/codigo') ? <CodePage csrf={token} pending={pendingToken} error={err.message} /> : <LoginPage csrf={token} error={err.message} email={email} />
      return withCookie(htmlResponse(page, 401), setCookie)
    }
  }

  async function invitation(form: FormData, token: string, setCookie: string | null, clientIp: string, nowMs: number): Promise<Response> {
    const inviteToken = textField(form, 'token') ?? ''
    const render = (view: InvitationView | null, failure: Failure, status: number) =>
      withCookie(htmlResponse(<InvitationPage csrf={token} token={inviteToken} view={view} failure={failure} nombre={textField(form, 'nombre')} />, status), setCookie)
    const blocked = failures.blockedFor(clientIp, nowMs)
    if (blocked > 0) return tooMany(blocked, setCookie)
    try {
      const accepted = await acceptInvitation(deps, {
        token: inviteToken,
        nombre: textField(form, 'nombre'),
        password: String(form.get('password') ?? ''),
        passwordRepeat: String(form.get('password_repetida') ?? ''),
        currentPassword: String(form.get('actual') ?? ''),
        code: textField(form, 'codigo'),
      })
      deps.log.info('console.invitation_accepted', { account_id: accepted.accountId, empresa_id: accepted.empresaId, mode: accepted.mode })
      // A reset password on an account with a second factor still needs its code: the person logs in as usual.
      if (accepted.mode === 'restablecer' && accepted.hasTotp) return redirect(`${CONSOLE_PREFIX}/entrar?aviso=contrasena`)
      return accountSession(accepted.accountId, accepted.empresaId)
    } catch (err) {
      if (!(err instanceof TimbreError) || (err.code !== 'UNAUTHORIZED' && err.code !== 'VALIDATION_ERROR')) throw err
      // The link may have expired or been revoked between the check and now: the page then says so, without a form.
      let view: InvitationView | null = null
      try {
        view = describeInvitation(deps, { token: inviteToken })
      } catch {
        view = null
      }
      if (err.code === 'VALIDATION_ERROR' && view !== null) return render(view, failureOf(err), 400)
      failures.record(clientIp, nowMs)
      return render(view, failureOf(err), 401)
    }
  }

  /** The pages shown before a session: logins, the administrator's one-time link, an invitation. */
  async function beforeSession(request: Request, path: string, clientIp: string): Promise<Response | null> {
    if (!PRE_SESSION_PATHS.has(path)) return null
    const url = new URL(request.url)
    if (SAFE_METHODS.has(request.method)) {
      if (path === `${CONSOLE_PREFIX}/entrar/cuenta` || path === `${CONSOLE_PREFIX}/entrar/codigo`) return redirect(`${CONSOLE_PREFIX}/entrar`)
      const { token, setCookie } = loginToken(request)
      return withCookie(preSessionPage(path, url, token), setCookie)
    }
    if (request.method !== 'POST') return problemPage('Método no permitido', 'Use el formulario.', 405, null)
    const form = await formFrom(request)
    const { token, setCookie } = loginToken(request)
    if (crossOrigin(request) || !sameToken(textField(form, '_csrf'), cookiesOf(request).get(LOGIN_COOKIE)))
      return withCookie(problemPage('Formulario vencido', 'El formulario no trae un token válido (CSRF). Recargue la página e intente de nuevo.', 403, null), setCookie)
    const nowMs = deps.clock.now().getTime()
    if (path === `${CONSOLE_PREFIX}/entrar` || path === `${CONSOLE_PREFIX}/enlace`) return keyOrLink(path === `${CONSOLE_PREFIX}/entrar`, form, token, setCookie, clientIp, nowMs)
    if (path === `${CONSOLE_PREFIX}/invitacion`) return invitation(form, token, setCookie, clientIp, nowMs)
    return accountLogin(path, form, token, setCookie, clientIp, nowMs)
  }

  function preSessionPage(path: string, url: URL, token: string): Response {
    if (path === `${CONSOLE_PREFIX}/enlace`) return htmlResponse(<LinkPage csrf={token} linkToken={url.searchParams.get('token') ?? ''} error={null} />)
    if (path === `${CONSOLE_PREFIX}/invitacion`) {
      const inviteToken = url.searchParams.get('token') ?? ''
      try {
        return htmlResponse(<InvitationPage csrf={token} token={inviteToken} view={describeInvitation(deps, { token: inviteToken })} failure={null} />)
      } catch (err) {
        if (!(err instanceof TimbreError) || err.code !== 'UNAUTHORIZED') throw err
        return htmlResponse(<InvitationPage csrf={token} token="" view={null} failure={failureOf(err)} />, 404)
      }
    }
    return htmlResponse(<LoginPage csrf={token} error={null} notice={LOGIN_NOTICES[url.searchParams.get('aviso') ?? ''] ?? null} />)
  }

  return {
    async handle(request, clientIp) {
      const path = new URL(request.url).pathname
      if (path.startsWith(`${CONSOLE_PREFIX}/assets/`))
        return assetResponse(path) ?? new Response('No encontrado', { status: 404, headers: { 'Content-Type': 'text/plain; charset=utf-8' } })
      const early = await beforeSession(request, path, clientIp)
      if (early) return early
      const token = cookiesOf(request).get(SESSION_COOKIE)
      const session = token ? resumeSession(deps, { token }) : null
      if (session === null) {
        // htmx would follow a 303 and swap the login page into a badge: it gets 401 and HX-Redirect instead.
        if (request.headers.get('hx-request') === 'true')
          return new Response(null, { status: 401, headers: { 'HX-Redirect': `${CONSOLE_PREFIX}/entrar` } })
        if (SAFE_METHODS.has(request.method)) return redirect(`${CONSOLE_PREFIX}/entrar`)
        return problemPage('Sesión vencida', 'Su sesión terminó. Vuelva a entrar.', 401, null)
      }
      const form = await formFrom(request)
      if (!SAFE_METHODS.has(request.method)) {
        const presented = textField(form, '_csrf') ?? request.headers.get('x-csrf-token')
        if (crossOrigin(request) || !csrfMatches(session, presented)) {
          deps.log.warn('console.csrf_refused', { session_id: session.id, path })
          return problemPage('Formulario vencido', 'El formulario no trae un token válido (CSRF). Recargue la página e intente de nuevo.', 403, session)
        }
      }
      const refused = refusal(session, request.method, path)
      if (refused !== null) {
        deps.log.info('console.refused', { session_id: session.id, role: session.role, method: request.method, path })
        return problemPage(refused.title, refused.message, 403, session)
      }
      bindConsoleRequest(request, { session, form })
      return screens.handle(request)
    },
  }
}
