// The console's door (DESIGN §14): who gets in, for how long, what a session may change, and that no form is
// accepted without its CSRF token. Plain fetch against a real server; the browser tests walk the same doors.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { revokeApiKey } from '../../src/services/api-keys'
import { createAdminLink } from '../../src/services/console-sessions'
import { listEmpresas } from '../../src/services/empresas'
import { consoleAdmin, consoleLogin, csrfOf } from '../support/console'
import { testClock } from '../support/clock'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const clock = testClock()
let s: TestServer
let a: Tenant
let b: Tenant

beforeAll(async () => {
  s = await startTestServer({ clock })
  a = await s.tenant(testRut(), 'Panadería La Espiga SpA')
  b = await s.tenant(testRut(), 'Ferretería El Clavo Ltda.')
})
afterAll(() => s.stop())

const form = (fields: Record<string, string>) => new URLSearchParams(fields)

/** The login page's double-submit pair: its cookie and the token in its form. */
async function loginForm(path = '/console/entrar'): Promise<{ cookie: string; csrf: string }> {
  const page = await fetch(s.url + path)
  const cookie = page.headers.getSetCookie().find((c) => c.startsWith('timbre_console_login='))!.split(';')[0]!
  return { cookie, csrf: csrfOf(await page.text()) }
}

describe('logging in', () => {
  test('without a session every page sends the browser to the login page, and a POST is refused', async () => {
    const page = await fetch(`${s.url}/console/documentos`, { redirect: 'manual' })
    expect(page.status).toBe(303)
    expect(page.headers.get('location')).toBe('/console/entrar')
    const post = await fetch(`${s.url}/console/webhooks`, { method: 'POST', redirect: 'manual', body: form({ url: 'https://example.com' }) })
    expect(post.status).toBe(401)
  })

  test('an API key opens a session in an HttpOnly, SameSite=Strict cookie scoped to /console; the page names its company only', async () => {
    const { cookie, csrf } = await loginForm()
    const res = await fetch(`${s.url}/console/entrar`, { method: 'POST', redirect: 'manual', headers: { cookie }, body: form({ _csrf: csrf, api_key: a.writeKey }) })
    expect(res.status).toBe(303)
    const session = res.headers.getSetCookie().find((c) => c.startsWith('timbre_console='))!
    expect(session).toContain('HttpOnly')
    expect(session).toContain('SameSite=Strict')
    expect(session).toContain('Path=/console')
    const page = await fetch(`${s.url}/console/documentos`, { headers: { cookie: session.split(';')[0]! } })
    const html = await page.text()
    expect(html).toContain('Panadería La Espiga SpA')
    expect(html).not.toContain('Ferretería El Clavo')
    // The key itself never comes back in a page.
    expect(html).not.toContain(a.writeKey)
  })

  test('a wrong key answers 401 with the reason on the form and no session', async () => {
    const { cookie, csrf } = await loginForm()
    const res = await fetch(`${s.url}/console/entrar`, { method: 'POST', redirect: 'manual', headers: { cookie }, body: form({ _csrf: csrf, api_key: 'timbre_nope' }) })
    expect(res.status).toBe(401)
    expect(res.headers.getSetCookie().some((c) => c.startsWith('timbre_console='))).toBe(false)
    expect(await res.text()).toContain('La API key no es válida')
  })

  test('the login form itself needs its CSRF pair: a post from elsewhere gets 403 and no session', async () => {
    const { cookie } = await loginForm()
    const noToken = await fetch(`${s.url}/console/entrar`, { method: 'POST', redirect: 'manual', headers: { cookie }, body: form({ api_key: a.writeKey }) })
    expect(noToken.status).toBe(403)
    const { csrf } = await loginForm()
    const noCookie = await fetch(`${s.url}/console/entrar`, { method: 'POST', redirect: 'manual', body: form({ _csrf: csrf, api_key: a.writeKey }) })
    expect(noCookie.status).toBe(403)
    expect([...noToken.headers.getSetCookie(), ...noCookie.headers.getSetCookie()].some((c) => c.startsWith('timbre_console='))).toBe(false)
  })

  test('the one-time link is spent by a POST, works once, and not after 15 minutes', async () => {
    const { token } = createAdminLink(s.server.deps)
    // The GET (a chat's link preview, say) only shows a button; the link still works after it.
    const { cookie, csrf } = await loginForm(`/console/enlace?token=${token}`)
    const first = await fetch(`${s.url}/console/enlace`, { method: 'POST', redirect: 'manual', headers: { cookie }, body: form({ _csrf: csrf, token }) })
    expect(first.status).toBe(303)
    expect(first.headers.get('location')).toBe('/console/empresas')
    const again = await fetch(`${s.url}/console/enlace`, { method: 'POST', redirect: 'manual', headers: { cookie }, body: form({ _csrf: csrf, token }) })
    expect(again.status).toBe(401)
    const late = createAdminLink(s.server.deps)
    clock.advance(16 * 60_000)
    try {
      const expired = await fetch(`${s.url}/console/enlace`, { method: 'POST', redirect: 'manual', headers: { cookie }, body: form({ _csrf: csrf, token: late.token }) })
      expect(expired.status).toBe(401)
    } finally {
      clock.advance(-16 * 60_000)
    }
  })
})

describe('a session', () => {
  test('ends after 30 idle minutes, after 12 hours however busy, and at logout', async () => {
    const idle = await consoleLogin(s, a.writeKey)
    clock.advance(31 * 60_000)
    try {
      expect((await idle.get('/console/documentos')).location).toBe('/console/entrar')
    } finally {
      clock.advance(-31 * 60_000)
    }
    const busy = await consoleLogin(s, a.writeKey)
    let moved = 0
    try {
      for (; moved < 12 * 60; moved += 20) {
        clock.advance(20 * 60_000)
        if ((await busy.get('/console/documentos')).status !== 200) break
      }
      expect(moved).toBe(11 * 60 + 40)
    } finally {
      clock.advance(-(moved + 20) * 60_000)
    }
    const leaving = await consoleLogin(s, a.writeKey)
    const out = await leaving.post('/console/salir', {})
    expect(out.location).toBe('/console/entrar')
    expect(out.headers.getSetCookie().some((c) => c.startsWith('timbre_console=;') && c.includes('Max-Age=0'))).toBe(true)
    expect((await leaving.get('/console/documentos')).location).toBe('/console/entrar')
  })

  test('revoking its API key ends the session on the next page', async () => {
    const s2 = await startTestServer()
    try {
      const t = await s2.tenant(testRut())
      const c = await consoleLogin(s2, t.readKey)
      expect((await c.get('/console/documentos')).status).toBe(200)
      revokeApiKey(s2.server.deps, { id: t.readKeyId })
      expect((await c.get('/console/documentos')).location).toBe('/console/entrar')
    } finally {
      await s2.stop()
    }
  })

  test('every form needs the CSRF token: missing, wrong or from another origin gets 403 and changes nothing', async () => {
    const admin = await consoleAdmin(s, a.empresa.id)
    const before = listEmpresas(s.server.deps).length
    const alta = { rut: testRut(), razon_social: 'Nueva SpA', giro: 'Comercio', acteco: '620200', direccion: 'Av. Uno 1', comuna: 'Providencia', ciudad: 'Santiago' }
    expect((await admin.post('/console/empresas', alta, { withoutCsrf: true })).status).toBe(403)
    expect((await admin.post('/console/empresas', { ...alta, _csrf: 'x'.repeat(admin.csrf.length) }, { withoutCsrf: true })).status).toBe(403)
    expect((await admin.post('/console/empresas', alta, { headers: { origin: 'https://evil.example' } })).status).toBe(403)
    expect(listEmpresas(s.server.deps).length).toBe(before)
    // htmx sends the token as a header instead of a field.
    const viaHeader = await admin.post('/console/empresas', alta, { withoutCsrf: true, headers: { 'x-csrf-token': admin.csrf } })
    expect(viaHeader.status).toBe(303)
    expect(listEmpresas(s.server.deps).length).toBe(before + 1)
  })

  test('a read-only key reads every page, is told so, and cannot post anything but logout', async () => {
    const ro = await consoleLogin(s, a.readKey)
    const page = await ro.get('/console/documentos')
    expect(page.status).toBe(200)
    expect(page.html).toContain('Solo lectura')
    for (const path of ['/console/webhooks', '/console/documentos/nuevo', '/console/folios', '/console/certificado', '/console/correo', '/console/cierre-mes']) {
      expect((await ro.get(path)).status).toBe(200)
      expect((await ro.post(path, { url: 'https://example.com/hook' })).status).toBe(403)
    }
    expect((await ro.post('/console/salir', {})).status).toBe(303)
  })

  test('pages carry a CSP without inline script, refuse framing, and are never cached; assets are immutable', async () => {
    const c = await consoleLogin(s, a.writeKey)
    const page = await c.get('/console/documentos')
    const csp = page.headers.get('content-security-policy')!
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toContain('unsafe-inline')
    expect(csp).toContain("frame-ancestors 'none'")
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(page.headers.get('cache-control')).toBe('no-store')
    const assets = [...page.html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!)
    expect(assets.length).toBe(3)
    for (const path of assets) {
      const res = await fetch(s.url + path)
      expect(res.status).toBe(200)
      expect(res.headers.get('cache-control')).toContain('immutable')
      expect((await res.text()).length).toBeGreaterThan(500)
    }
    expect((await fetch(`${s.url}/console/assets/otra.js`)).status).toBe(404)
  })
})

describe('companies', () => {
  test('a company user cannot reach the administrator pages nor switch to another company', async () => {
    const c = await consoleLogin(s, a.writeKey)
    expect((await c.get('/console/empresas')).status).toBe(404)
    expect((await c.post('/console/empresas/seleccionar', { empresa_id: b.empresa.id })).status).toBe(404)
    const page = await c.get('/console/documentos')
    expect(page.html).toContain('Panadería La Espiga SpA')
    expect(page.html).not.toContain('Ferretería El Clavo')
  })

  test('the administrator creates a company (errors beside their fields first), then an API key that works on the API', async () => {
    const admin = await consoleAdmin(s)
    const bad = await admin.post('/console/empresas', { rut: '11.111.111-2', razon_social: 'Mal RUT SpA', giro: 'Comercio', acteco: '620200', direccion: 'Av. Dos 2', comuna: 'Ñuñoa', ciudad: 'Santiago' })
    expect(bad.status).toBe(400)
    expect(bad.html).toMatch(/id="f-rut-error"[^>]*>RUT inválido/)
    expect(bad.html).toContain('value="Mal RUT SpA"')
    const rut = testRut()
    const ok = await admin.post('/console/empresas', { rut, razon_social: 'Contadores Unidos SpA', giro: 'Contabilidad', acteco: '692000', direccion: 'Av. Tres 3', comuna: 'Ñuñoa', ciudad: 'Santiago' })
    expect(ok.status).toBe(303)
    const created = listEmpresas(s.server.deps).find((e) => e.razon_social === 'Contadores Unidos SpA')!
    expect(created.rut.replace(/\./g, '')).toBe(rut)
    const keyPage = await admin.post('/console/empresas/api-keys', { nombre: 'ERP', write: 'true' })
    expect(keyPage.status).toBe(200)
    const key = /id="api-key-creada">([^<]+)</.exec(keyPage.html)![1]!
    const api = await s.request('GET', '/api/v1/billing/empresa', { headers: { 'X-Api-Key': key } })
    expect(api.status).toBe(200)
    expect(api.json.razon_social).toBe('Contadores Unidos SpA')
    // Listed afterwards by prefix only.
    const list = await admin.get('/console/empresas')
    expect(list.html).not.toContain(key)
    expect(list.html).toContain(key.slice(0, 12))
  })

  test('20 failed logins a minute from one address, then 429 for bad keys until the minute is over; a good key still gets in', async () => {
    // A server of its own: the other tests' failures and clock moves would share its window.
    const own = testClock()
    const s2 = await startTestServer({ clock: own })
    try {
      const t = await s2.tenant(testRut())
      const page = await fetch(`${s2.url}/console/entrar`)
      const cookie = page.headers.getSetCookie().find((c) => c.startsWith('timbre_console_login='))!.split(';')[0]!
      const csrf = csrfOf(await page.text())
      const attempt = (key: string) =>
        fetch(`${s2.url}/console/entrar`, { method: 'POST', redirect: 'manual', headers: { cookie }, body: form({ _csrf: csrf, api_key: key }) })
      const statuses: number[] = []
      for (let i = 0; i < 21; i++) statuses.push((await attempt('timbre_wrong')).status)
      expect(statuses.slice(0, 20).every((st) => st === 401)).toBe(true)
      expect(statuses[20]).toBe(429)
      expect((await attempt(t.writeKey)).status).toBe(303)
      expect((await attempt('timbre_wrong')).status).toBe(429)
      own.advance(61_000)
      expect((await attempt('timbre_wrong')).status).toBe(401)
    } finally {
      await s2.stop()
    }
  })

})

test('an htmx request of an ended session gets 401 with HX-Redirect, not the login page swapped into a badge', async () => {
  const res = await fetch(`${s.url}/console/documentos`, { redirect: 'manual', headers: { 'HX-Request': 'true' } })
  expect(res.status).toBe(401)
  expect(res.headers.get('hx-redirect')).toBe('/console/entrar')
})
