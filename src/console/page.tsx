// The console's page shell and the one place its answers get their headers (DESIGN §14): every page is rendered on
// the server, escaped by preact-render-to-string, and served with a CSP that allows only our own script and style.
import type { ComponentChildren, VNode } from 'preact'
import { renderToString } from 'preact-render-to-string'
import type { ConsoleSession } from '../services/console-sessions'
import type { Deps } from '../services/deps'
import { listEmpresas, resolveEmpresa, type EmpresaRecord } from '../services/empresas'
import { empresasOfAccount } from '../services/console-accounts'
import { ROLE_LABELS } from '../domain/console-roles'
import { sessionOf } from './context'
import { ASSET_PATHS } from './assets'
import { formatRut } from './forms'
import { CONSOLE_PREFIX } from './paths'

/** No inline script or style anywhere: htmx reads its settings from a meta tag, never from eval. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CSP,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  // same-origin, not no-referrer: under no-referrer Chromium sends `Origin: null` on form posts, which the door's
  // cross-origin check (rightly) refuses. Nothing leaves for other sites either way.
  'Referrer-Policy': 'same-origin',
  // Pages carry a company's data: never kept by the browser or a proxy.
  'Cache-Control': 'no-store',
}

export function htmlResponse(node: VNode, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(`<!doctype html>${renderToString(node)}`, {
    status,
    headers: { 'Content-Type': 'text/html; charset=utf-8', ...SECURITY_HEADERS, ...headers },
  })
}

/** A fragment for htmx (a badge, the totals): same headers, no shell. */
export function fragmentResponse(node: VNode, status = 200): Response {
  return new Response(renderToString(node), { status, headers: { 'Content-Type': 'text/html; charset=utf-8', ...SECURITY_HEADERS } })
}

/**
 * A stored file for the browser: a PDF inline and frameable by this origin only (the detail pages preview it in an
 * iframe; the pages themselves are DENY), an XML as the exact stored bytes. No other CSP directive on the PDF, so the
 * browser's PDF viewer is not blocked.
 */
export function fileResponse(bytes: Uint8Array, kind: 'pdf' | 'xml', fileName: string, disposition: 'inline' | 'attachment'): Response {
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    'Content-Type': kind === 'pdf' ? 'application/pdf' : 'application/xml; charset=ISO-8859-1',
    'Content-Disposition': `${disposition}; filename="${fileName}"`,
  }
  if (kind === 'pdf') Object.assign(headers, { 'Content-Security-Policy': "frame-ancestors 'self'", 'X-Frame-Options': 'SAMEORIGIN' })
  return new Response(Buffer.from(bytes), { headers })
}

/** Post/redirect/get: 303 so a reload never posts twice; htmx follows HX-Redirect instead. */
export function redirect(to: string): Response {
  return new Response(null, { status: 303, headers: { Location: to, 'HX-Redirect': to, ...SECURITY_HEADERS } })
}

export type Section =
  | 'documentos' | 'emitir' | 'recibidos' | 'cierre-mes' | 'clientes' | 'productos' | 'folios' | 'certificacion' | 'certificado' | 'webhooks' | 'correo' | 'empresas' | 'cuentas' | 'mi-cuenta'

/**
 * Who sees a section in the menu: everyone, the instance administrator, whoever sees settings, manages accounts, or
 * everyone while the company is in certificación (DESIGN §15: the SII's certification applies to no other).
 */
type Audience = 'all' | 'admin' | 'settings' | 'accounts' | 'certificacion'

const SECTIONS: ReadonlyArray<{ id: Section; label: string; path: string; audience: Audience }> = [
  { id: 'documentos', label: 'Documentos', path: '/documentos', audience: 'all' },
  { id: 'emitir', label: 'Emitir', path: '/documentos/nuevo', audience: 'all' },
  { id: 'recibidos', label: 'Recibidos', path: '/recibidos', audience: 'all' },
  { id: 'cierre-mes', label: 'Cierre del mes', path: '/cierre-mes', audience: 'all' },
  { id: 'clientes', label: 'Clientes', path: '/clientes', audience: 'all' },
  { id: 'productos', label: 'Productos', path: '/productos', audience: 'all' },
  { id: 'folios', label: 'Folios', path: '/folios', audience: 'all' },
  { id: 'certificacion', label: 'Certificación', path: '/certificacion', audience: 'certificacion' },
  { id: 'certificado', label: 'Certificado', path: '/certificado', audience: 'settings' },
  { id: 'webhooks', label: 'Webhooks', path: '/webhooks', audience: 'settings' },
  { id: 'correo', label: 'Correo', path: '/correo', audience: 'settings' },
  { id: 'cuentas', label: 'Cuentas', path: '/cuentas', audience: 'accounts' },
  { id: 'empresas', label: 'Empresas', path: '/empresas', audience: 'admin' },
]

function reaches(session: ConsoleSession, audience: Audience, empresa: EmpresaRecord | null): boolean {
  if (audience === 'admin') return session.kind === 'admin'
  if (audience === 'certificacion') return empresa?.ambiente === 'certificacion'
  if (audience === 'settings') return session.settings !== 'hidden'
  if (audience === 'accounts') return session.canManageAccounts && session.empresaId !== null
  return true
}

type SwitchableEmpresa = Pick<EmpresaRecord, 'id' | 'razon_social' | 'rut'>

/** The companies a session may switch between: all for the administrator, a person's own, none for a key. */
function switchableEmpresas(deps: Pick<Deps, 'store'>, session: ConsoleSession): SwitchableEmpresa[] {
  if (session.kind === 'admin') return listEmpresas(deps)
  if (session.kind === 'cuenta') return empresasOfAccount(deps, { accountId: session.accountId! }).map((e) => ({ id: e.empresa_id, razon_social: e.razon_social, rut: e.rut }))
  return []
}

export function CsrfInput(props: { session: ConsoleSession }) {
  return <input type="hidden" name="_csrf" value={props.session.csrfToken} />
}

function EmpresaSwitcher(props: { session: ConsoleSession; empresas: readonly SwitchableEmpresa[] }) {
  return (
    <form method="post" action={`${CONSOLE_PREFIX}/empresas/seleccionar`} class="switcher">
      <CsrfInput session={props.session} />
      <label for="empresa-activa">Empresa</label>
      <select id="empresa-activa" name="empresa_id">
        {props.session.empresaId === null && <option value="">Elija una empresa</option>}
        {props.empresas.map((e) => (
          // The RUT first: a long razón social is what a narrow select cuts, never the RUT that tells companies apart.
          <option value={e.id} selected={e.id === props.session.empresaId}>
            {formatRut(e.rut)} · {e.razon_social}
          </option>
        ))}
      </select>
      <button type="submit">Cambiar</button>
    </form>
  )
}

export interface PageOptions {
  readonly title: string
  readonly section: Section | null
  readonly children: ComponentChildren
  readonly status?: number
  /** A one-line notice after a redirect (post/redirect/get), shown in a live region. */
  readonly notice?: string | null
}

/** A whole page for a logged-in user: header with the company (or the switcher), navigation, logout. */
export function renderPage(deps: Pick<Deps, 'store'>, request: Request, opts: PageOptions): Response {
  const session = sessionOf(request)
  const empresa = session.empresaId === null ? null : resolveEmpresa(deps, { ref: session.empresaId })
  const empresas = switchableEmpresas(deps, session)
  return htmlResponse(
    <Shell title={opts.title} session={session}>
      <header class="top">
        <a class="brand" href={`${CONSOLE_PREFIX}/`}>
          Timbre
        </a>
        {session.kind === 'admin' || empresas.length > 1 ? (
          <EmpresaSwitcher session={session} empresas={empresas} />
        ) : (
          <span class="empresa">
            {empresa?.razon_social} <span class="rut">{empresa ? formatRut(empresa.rut) : ''}</span>
          </span>
        )}
        {!session.canWrite && <span class="badge badge-neutral">Solo lectura</span>}
        {session.kind === 'admin' && <span class="badge badge-info">Administrador</span>}
        {session.role !== null && session.role !== 'lectura' && <span class="badge badge-info">{ROLE_LABELS[session.role]}</span>}
        {session.kind === 'cuenta' && (
          <a class="mi-cuenta" href={`${CONSOLE_PREFIX}/mi-cuenta`} aria-current={opts.section === 'mi-cuenta' ? 'page' : undefined}>
            {session.email}
          </a>
        )}
        <form method="post" action={`${CONSOLE_PREFIX}/salir`} class="logout">
          <CsrfInput session={session} />
          <button type="submit">Salir</button>
        </form>
      </header>
      <nav aria-label="Secciones">
        <ul>
          {SECTIONS.filter((s) => reaches(session, s.audience, empresa)).map((s) => (
            <li>
              <a href={`${CONSOLE_PREFIX}${s.path}`} aria-current={opts.section === s.id ? 'page' : undefined}>
                {s.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="contenido">
        <h1>{opts.title}</h1>
        <div role="status" aria-live="polite" class="notice-area">
          {opts.notice && <p class="notice">{opts.notice}</p>}
        </div>
        {opts.children}
      </main>
    </Shell>,
    opts.status ?? 200,
  )
}

/** The document around every page, logged in or not. */
export function Shell(props: { title: string; session: ConsoleSession | null; children: ComponentChildren }) {
  return (
    <html lang="es">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"selfRequestsOnly":true}' />
        <title>{`${props.title} · Timbre`}</title>
        <link rel="stylesheet" href={ASSET_PATHS.css} />
        <script src={ASSET_PATHS.htmx} defer></script>
        <script src={ASSET_PATHS.js} defer></script>
      </head>
      {/* htmx sends the CSRF token as a header on every request it makes from this page. */}
      <body hx-headers={props.session ? JSON.stringify({ 'X-CSRF-Token': props.session.csrfToken }) : undefined}>
        <a class="skip" href="#contenido">
          Saltar al contenido
        </a>
        {props.children}
      </body>
    </html>
  )
}
