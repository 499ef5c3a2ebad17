// Console mailbox settings (DESIGN §13, §14) against a real server, a real SQLite file and a real mail hub (dovecot
// IMAP, smtp-server): what the console saves is what GET /empresa/intercambio answers, passwords never come back,
// and the connection test reaches the real servers.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { consoleLogin, type ConsoleClient } from '../support/console'
import { startMailHub, type MailHub } from '../support/mail'
import { testRut, useTenant, type Tenant, type TestServer } from '../support/server'

const INTERCAMBIO = '/api/v1/billing/empresa/intercambio'
const WRONG_PASSWORD = 'clave-equivocada-7d41'
let s: TestServer
let t: Tenant
let hub: MailHub
let c: ConsoleClient

useTenant((server, tenant) => {
  s = server
  t = tenant
})
beforeAll(async () => {
  hub = await startMailHub({ users: ['dte-a'] })
  c = await consoleLogin(s, t.writeKey)
})
afterAll(() => hub?.stop())

const apiView = async (tenant = t) => {
  const res = await s.request('GET', INTERCAMBIO, { headers: { 'X-Api-Key': tenant.readKey } })
  expect(res.status).toBe(200)
  return { json: res.json, text: res.text }
}

/** The form as a person fills it for the hub's user: IMAP with its password, SMTP through the hub's relay, no login. */
function formFor(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    inbound_email: 'dte-a@intercambio.example.cl',
    'imap.host': '127.0.0.1',
    'imap.port': String(hub.imap.port),
    'imap.tls': 'false',
    'imap.user': 'dte-a',
    'imap.password': hub.password('dte-a'),
    'imap.folder': 'INBOX',
    'smtp.host': '127.0.0.1',
    'smtp.port': String(hub.smtp.port),
    'smtp.security': 'none',
    'smtp.user': '',
    'smtp.password': '',
    'smtp.from': 'dte-a@intercambio.example.cl',
    ...overrides,
  }
}

/** The live region of the connection test. */
const testRegion = (html: string) => /<div id="prueba-resultado" role="status" aria-live="polite">(.*?)<\/div>/s.exec(html)?.[1] ?? null

describe('saving', () => {
  test('before any configuration the page shows sin configurar and an empty form with the API fields', async () => {
    const page = await c.get('/console/correo')
    expect(page.status).toBe(200)
    expect(page.html).toContain('Sin configurar')
    for (const name of ['inbound_email', 'imap.host', 'imap.port', 'imap.tls', 'imap.user', 'imap.password', 'imap.folder', 'smtp.host', 'smtp.port', 'smtp.security', 'smtp.user', 'smtp.password', 'smtp.from'])
      expect(page.html).toContain(`name="${name}"`)
    expect(page.html).not.toContain('/console/correo/eliminar')
  })

  test('a save shows in GET /empresa/intercambio without passwords; the page shows the settings and never the password', async () => {
    const res = await c.post('/console/correo', formFor())
    expect(res.status).toBe(303)
    expect(res.location).toBe('/console/correo?aviso=guardado')
    const { json, text } = await apiView()
    expect(json).toMatchObject({
      inbound_email: 'dte-a@intercambio.example.cl',
      inbound_status: 'activo',
      imap: { host: '127.0.0.1', port: hub.imap.port, tls: false, user: 'dte-a', folder: 'INBOX', password_set: true },
      smtp: { host: '127.0.0.1', port: hub.smtp.port, security: 'none', user: null, from: 'dte-a@intercambio.example.cl', password_set: false },
    })
    expect(text).not.toContain(hub.password('dte-a'))
    const page = await c.get('/console/correo?aviso=guardado')
    expect(page.html).toContain('Configuración del buzón guardada.')
    expect(page.html).toContain(`id="f-imap-port" name="imap.port" type="number" value="${hub.imap.port}"`)
    expect(page.html).toMatch(/<option value="false" selected/)
    expect(page.html).toMatch(/<option value="none" selected/)
    expect(page.html).toMatch(/id="f-imap-password" name="imap.password" type="password"(?! value)/)
    expect(page.html).toContain('Guardada; déjela vacía para conservarla.')
    expect(page.html).not.toContain(hub.password('dte-a'))
  })

  test('saving again with the password left empty keeps the stored one (the API rule for an omitted password)', async () => {
    const res = await c.post('/console/correo', formFor({ 'imap.password': '', 'imap.folder': '' }))
    expect(res.status).toBe(303)
    const { json } = await apiView()
    expect(json.imap).toMatchObject({ password_set: true, folder: 'INBOX' })
    // The test below (probar) proves the kept password still logs in.
  })

  test('wrong fields: each error beside its field as the API names it, what was typed kept, nothing changed', async () => {
    const before = (await apiView()).json
    const page = await c.post('/console/correo', formFor({ 'imap.port': '0', 'smtp.host': 'mail server', inbound_email: 'no-es-correo', 'imap.password': 'otra-clave-1234' }))
    expect(page.status).toBe(400)
    expect(page.html).toMatch(/id="f-imap-port-error"[^>]*>Debe estar entre 1 y 65535/)
    expect(page.html).toMatch(/id="f-smtp-host-error"[^>]*>Se espera un nombre de servidor o una dirección IP/)
    expect(page.html).toMatch(/id="f-inbound_email-error"[^>]*>Correo electrónico inválido/)
    expect(page.html).toContain('value="mail server"')
    expect(page.html).not.toContain('otra-clave-1234')
    expect(page.html).toContain('<a href="#f-imap-port">')
    expect((await apiView()).json).toEqual(before)
  })

  test('SMTP user without a password on a mailbox with none stored: the API pair rule, beside smtp.password', async () => {
    const page = await c.post('/console/correo', formFor({ 'smtp.user': 'relay' }))
    expect(page.status).toBe(400)
    expect(page.html).toMatch(/id="f-smtp-password-error"[^>]*>Requerida cuando se indica «Envío \(SMTP\), Usuario»/)
  })
})

describe('connection test', () => {
  test('"Probar conexión" shows IMAP and SMTP ok against the hub, in the live region; with htmx only the results come back', async () => {
    const page = await c.post('/console/correo/probar', {})
    expect(page.status).toBe(200)
    const region = testRegion(page.html)!
    expect(region).toMatch(/id="prueba-imap"><strong>IMAP:<\/strong> <span class="badge badge-ok">Conexión correcta/)
    expect(region).toMatch(/id="prueba-smtp"><strong>SMTP:<\/strong> <span class="badge badge-ok">Conexión correcta/)
    const fragment = await c.post('/console/correo/probar', {}, { headers: { 'HX-Request': 'true' } })
    expect(fragment.status).toBe(200)
    expect(fragment.html).not.toContain('<html')
    expect(fragment.html).toContain('id="prueba-imap"')
  })

  test('a wrong IMAP password: probar shows IMAP failing (SMTP still ok), and the page never shows the password', async () => {
    expect((await c.post('/console/correo', formFor({ 'imap.password': WRONG_PASSWORD }))).status).toBe(303)
    const page = await c.post('/console/correo/probar', {})
    const region = testRegion(page.html)!
    expect(region).toMatch(/id="prueba-imap"><strong>IMAP:<\/strong> <span class="badge badge-bad">Falló<\/span> \S/)
    expect(region).toContain('badge-ok')
    expect(page.html).not.toContain(WRONG_PASSWORD)
  })

  test('saving with "probar al guardar" stores the settings and shows both results on the answer', async () => {
    const page = await c.post('/console/correo', formFor({ test: 'true' }))
    expect(page.status).toBe(200)
    expect(page.html).toContain('Configuración del buzón guardada.')
    const region = testRegion(page.html)!
    expect(region.match(/Conexión correcta/g)).toHaveLength(2)
    expect(page.html).not.toContain(hub.password('dte-a'))
    expect((await apiView()).json).toMatchObject({ inbound_status: 'activo', last_error: null })
  })
})

describe('deleting, read-only, tenancy', () => {
  test('a read-only key sees the status but no form and no password; its POSTs are 403 and change nothing', async () => {
    const ro = await consoleLogin(s, t.readKey)
    const page = await ro.get('/console/correo')
    expect(page.status).toBe(200)
    expect(page.html).toContain('dte-a en 127.0.0.1')
    expect(page.html).not.toContain('name="imap.host"')
    expect(page.html).not.toContain('/console/correo/probar')
    expect(page.html).not.toContain('/console/correo/eliminar')
    expect(page.html).not.toContain(hub.password('dte-a'))
    const before = (await apiView()).json
    expect((await ro.post('/console/correo', formFor({ 'imap.host': 'otro.example.cl' }))).status).toBe(403)
    expect((await ro.post('/console/correo/eliminar', {})).status).toBe(403)
    expect((await apiView()).json).toEqual(before)
  })

  test("another company's console shows its own mailbox only", async () => {
    const other = await s.tenant(testRut(), 'Otra Empresa SpA')
    const oc = await consoleLogin(s, other.writeKey)
    const page = await oc.get('/console/correo')
    expect(page.html).toContain('Sin configurar')
    expect(page.html).not.toContain('dte-a@intercambio.example.cl')
    expect((await oc.post('/console/correo/eliminar', {})).status).toBe(303)
    expect((await apiView()).json.inbound_status).toBe('activo')
  })

  test('"Eliminar configuración" clears it: the API answers sin_configurar and keeps inbound_email', async () => {
    const page = await c.get('/console/correo')
    expect(page.html).toMatch(/<form method="post" action="\/console\/correo\/eliminar" data-confirm="[^"]+">/)
    const res = await c.post('/console/correo/eliminar', {})
    expect(res.status).toBe(303)
    expect(res.location).toBe('/console/correo?aviso=eliminado')
    expect((await apiView()).json).toMatchObject({ inbound_status: 'sin_configurar', imap: null, smtp: null, inbound_email: 'dte-a@intercambio.example.cl' })
    const after = await c.get('/console/correo?aviso=eliminado')
    expect(after.html).toContain('Configuración del buzón eliminada')
    expect(after.html).toContain('Sin configurar')
    expect(after.html).not.toContain('/console/correo/eliminar')
  })
})
