// People log in as themselves (DESIGN §14 "People, not keys", issue 27): invitations by one-time link (7 days, once),
// passwords and TOTP, the per-account lock kept across a restart, the per-address limit, a reset that ends sessions,
// and the three roles enforced by the door. Plain fetch against a real server; browser-cuentas.test.ts walks the same
// flows in Chromium against the compiled binary.
import { afterAll, beforeAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { Secret, TOTP } from 'otpauth'
import { INVITATION_TTL_MS, inviteAccount, LOCK_MS, LOGIN_FAILED, verifyPassword } from '../../src/services/console-accounts'
import { consoleAccountLogin, consoleAdmin, preSession, tryAccountLogin, type ConsoleClient } from '../support/console'
import { testClock } from '../support/clock'
import { startTestServer, tempDir, testRut, type Tenant, type TestServer } from '../support/server'

// argon2id costs tens of milliseconds a hash by design; a busy machine makes a test of many logins take seconds.
setDefaultTimeout(60_000)
// Frozen, 10 s into a TOTP step, and moved only in whole steps: a code computed here is still current when the server,
// slowed by argon2id on a busy machine, checks it.
const clock = testClock({ at: new Date('2026-03-02T15:00:10Z') })
const dataDir = tempDir('timbre-cuentas-')
let s: TestServer
let a: Tenant
let b: Tenant
const PASSWORD = 'una frase bastante larga'

beforeAll(async () => {
  s = await startTestServer({ clock, dataDir })
  a = await s.tenant(testRut(), 'Panadería La Espiga SpA')
  b = await s.tenant(testRut(), 'Ferretería El Clavo Ltda.')
})
afterAll(async () => {
  await s.stop()
  rmSync(dataDir, { recursive: true, force: true })
})
// Every test starts in a new minute, so one test's failed logins never count against the next one's address.
beforeEach(() => clock.advance(60_000))

let seq = 0
const newEmail = (name: string) => `${name}.${++seq}@ejemplo.cl`

/** The link the Cuentas screen shows once, after "Crear invitación". */
async function invite(admin: ConsoleClient, email: string, role: string): Promise<string> {
  const page = await admin.post('/console/cuentas/invitar', { email, role })
  expect(page.status).toBe(200)
  const m = /id="enlace-invitacion">([^<]+)</.exec(page.html)
  if (!m) throw new Error(`no invitation link on the page: ${page.html.slice(0, 500)}`)
  return m[1]!.replace(/&amp;/g, '&')
}

const tokenOf = (link: string) => new URL(link).searchParams.get('token')!

/** Posts the invitation form (its CSRF pair taken from the login page, which a spent link no longer shows). */
async function accept(link: string, fields: Record<string, string>): Promise<Response> {
  return preSession(s, '/console/entrar', '/console/invitacion', { token: tokenOf(link), ...fields })
}

/** An account of `tenant` with `role`, created through the console as a person would. */
async function person(tenant: Tenant, role: string, email = newEmail(role)): Promise<{ email: string; client: ConsoleClient }> {
  const admin = await consoleAdmin(s, tenant.empresa.id)
  const res = await accept(await invite(admin, email, role), { password: PASSWORD, password_repetida: PASSWORD })
  expect(res.status).toBe(303)
  return { email, client: await consoleAccountLogin(s, email, PASSWORD) }
}

const accountIdOf = (email: string) => (s.server.deps.store.sqlite.query('SELECT id FROM console_accounts WHERE email = ?').get(email) as { id: string }).id

function totpOf(secret: string): TOTP {
  return new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) })
}

const codeAt = (totp: TOTP, offsetMs = 0) => totp.generate({ timestamp: clock.now().getTime() + offsetMs })

/** Enrols the client's account in TOTP through Mi cuenta and returns the generator. */
async function enrol(client: ConsoleClient): Promise<TOTP> {
  expect((await client.post('/console/mi-cuenta/2fa/iniciar', {})).status).toBe(303)
  const page = await client.get('/console/mi-cuenta')
  const secret = /id="totp-clave">([^<]+)</.exec(page.html)![1]!.replace(/\s+/g, '')
  expect(page.html).toContain('otpauth://totp/')
  expect(page.html).toContain('data:image/png;base64,')
  const totp = totpOf(secret)
  expect((await client.post('/console/mi-cuenta/2fa/confirmar', { codigo: codeAt(totp) })).location).toBe('/console/mi-cuenta?aviso=activada')
  // The enrolment's step is spent: the first login waits for the next code.
  clock.advance(30_000)
  return totp
}

describe('invitations', () => {
  test('an invitation is accepted once: the person sets a password and is in; the link then no longer works', async () => {
    const admin = await consoleAdmin(s, a.empresa.id)
    const email = newEmail('ana')
    const link = await invite(admin, email, 'emisor')
    expect(link).toStartWith(`${s.url}/console/invitacion?token=`)
    // Only the hash is kept: the token is nowhere in the database file.
    expect(s.server.deps.store.sqlite.query('SELECT count(*) AS n FROM console_invitations WHERE token_hash = ?').get(tokenOf(link))).toEqual({ n: 0 })

    const form = await fetch(link)
    expect(await form.text()).toContain('Panadería La Espiga SpA')
    const short = await accept(link, { password: 'corta', password_repetida: 'corta', nombre: 'Ana Pérez' })
    expect(short.status).toBe(400)
    const shortHtml = await short.text()
    expect(shortHtml).toContain('al menos 10 caracteres')
    expect(shortHtml).toContain('value="Ana Pérez"')
    const mismatch = await accept(link, { password: PASSWORD, password_repetida: `${PASSWORD}!` })
    expect(await mismatch.text()).toContain('no coinciden')

    const ok = await accept(link, { password: PASSWORD, password_repetida: PASSWORD, nombre: 'Ana Pérez' })
    expect(ok.status).toBe(303)
    expect(ok.headers.get('location')).toBe('/console/documentos')
    expect(ok.headers.getSetCookie().some((c) => c.startsWith('timbre_console='))).toBe(true)

    const again = await accept(link, { password: 'otra frase muy larga', password_repetida: 'otra frase muy larga' })
    expect(again.status).toBe(401)
    expect(await again.text()).toContain('La invitación no es válida')
    expect((await fetch(link)).status).toBe(404)
    // The email is case-insensitive.
    await consoleAccountLogin(s, email.toUpperCase(), PASSWORD)
    const listed = await admin.get('/console/cuentas')
    expect(listed.html).toContain(email)
    expect(listed.html).toContain('Ana Pérez')
  })

  test('an invitation expires after 7 days, and a newer one for the same email replaces it', async () => {
    const admin = await consoleAdmin(s, a.empresa.id)
    const email = newEmail('beto')
    const old = await invite(admin, email, 'lectura')
    const newer = await invite(admin, email, 'emisor')
    expect((await accept(old, { password: PASSWORD, password_repetida: PASSWORD })).status).toBe(401)
    const pending = await admin.get('/console/cuentas')
    expect(pending.html.split(`Revocar la invitación de ${email}`).length - 1).toBe(1)

    clock.advance(INVITATION_TTL_MS + 1000)
    expect((await fetch(newer)).status).toBe(404)
    expect((await accept(newer, { password: PASSWORD, password_repetida: PASSWORD })).status).toBe(401)
    expect((await (await consoleAdmin(s, a.empresa.id)).get('/console/cuentas')).html).not.toContain(email)
  })

  test('a revoked invitation no longer works', async () => {
    const admin = await consoleAdmin(s, a.empresa.id)
    const email = newEmail('rita')
    const link = await invite(admin, email, 'emisor')
    const id = (s.server.deps.store.sqlite.query('SELECT id FROM console_invitations WHERE email = ?').get(email) as { id: string }).id
    expect((await admin.get('/console/cuentas')).html).toContain(`/console/cuentas/invitaciones/${id}/revocar`)
    expect((await admin.post(`/console/cuentas/invitaciones/${id}/revocar`, {})).location).toBe('/console/cuentas?aviso=revocada')
    expect((await accept(link, { password: PASSWORD, password_repetida: PASSWORD })).status).toBe(401)
  })

  test('a forgotten password: a new invitation sets a new one and ends every session the account had', async () => {
    const { email, client: before } = await person(a, 'emisor')
    expect((await before.get('/console/documentos')).status).toBe(200)
    const admin = await consoleAdmin(s, a.empresa.id)
    const link = await invite(admin, email, 'emisor')
    expect((await fetch(link).then((r) => r.text()))).toContain('Defina una contraseña nueva')
    const NEW = 'otra frase aún más larga'
    expect((await accept(link, { password: NEW, password_repetida: NEW })).status).toBe(303)
    expect((await before.get('/console/documentos')).location).toBe('/console/entrar')
    expect((await tryAccountLogin(s, email, PASSWORD)).status).toBe(401)
    await consoleAccountLogin(s, email, NEW)
  })

  test("another company's administrador cannot take over an account through an invitation: it asks the account's own password", async () => {
    // Carla works for both companies; the administrador of B is not one of A.
    const { email } = await person(a, 'emisor')
    const bAdmin = await person(b, 'administrador')
    const link = await invite(bAdmin.client, email, 'lectura')
    const page = await (await fetch(link)).text()
    expect(page).toContain('Ya tiene una cuenta')
    expect(page).not.toContain('name="password"')
    const guessed = await accept(link, { actual: 'no es la contraseña', password: 'tomada por otro admin', password_repetida: 'tomada por otro admin' })
    expect(guessed.status).toBe(401)
    expect((await tryAccountLogin(s, email, 'tomada por otro admin')).status).toBe(401)
    const joined = await accept(link, { actual: PASSWORD })
    expect(joined.status).toBe(303)
    // She now switches between her two companies; the password is unchanged.
    const carla = await consoleAccountLogin(s, email, PASSWORD)
    const docs = await carla.get('/console/documentos')
    expect(docs.html).toContain('id="empresa-activa"')
    expect(docs.html).toContain('Ferretería El Clavo Ltda.')
    expect((await carla.post('/console/empresas/seleccionar', { empresa_id: b.empresa.id })).status).toBe(303)
    expect((await carla.post('/console/documentos/nuevo', { tipo_dte: '33' })).status).toBe(403)
  })
})

describe('links judged when used (review)', () => {
  test('a reset link made while the account was only in A only adds the company once it has joined B: no takeover', async () => {
    const aBoss = await person(a, 'administrador')
    const { email } = await person(a, 'emisor')
    // A's administrador administers every company Diego is in: the link would reset his password...
    const kept = await invite(aBoss.client, email, 'emisor')
    expect(await (await fetch(kept)).text()).toContain('Defina una contraseña nueva')
    // ...but Diego then joins B, which A's administrador does not administer.
    const bBoss = await person(b, 'administrador')
    expect((await accept(await invite(bBoss.client, email, 'emisor'), { actual: PASSWORD })).status).toBe(303)
    const page = await (await fetch(kept)).text()
    expect(page).toContain('Ya tiene una cuenta')
    expect(page).not.toContain('Defina una contraseña nueva')
    expect((await accept(kept, { password: 'tomada por el otro admin', password_repetida: 'tomada por el otro admin' })).status).toBe(401)
    expect((await tryAccountLogin(s, email, 'tomada por el otro admin')).status).toBe(401)
    await consoleAccountLogin(s, email, PASSWORD)
  })

  test("a removed administrador's invitations stop working", async () => {
    const boss = await person(a, 'administrador')
    const link = await invite(boss.client, newEmail('complice'), 'administrador')
    const admin = await consoleAdmin(s, a.empresa.id)
    expect((await admin.post(`/console/cuentas/${accountIdOf(boss.email)}/rol`, { role: 'lectura' })).status).toBe(303)
    const res = await accept(link, { password: PASSWORD, password_repetida: PASSWORD })
    expect(res.status).toBe(401)
    expect(await res.text()).toContain('quien la creó ya no administra la empresa')
  })

  test('a disabled account cannot spend a reset link: told in words, the link and the password unchanged', async () => {
    const { email } = await person(a, 'emisor')
    const admin = await consoleAdmin(s, a.empresa.id)
    const link = await invite(admin, email, 'emisor')
    expect((await admin.post(`/console/cuentas/${accountIdOf(email)}/desactivar`, {})).status).toBe(303)
    const res = await accept(link, { password: 'una nueva muy larga', password_repetida: 'una nueva muy larga' })
    expect(res.status).toBe(401)
    expect(await res.text()).toContain('Su cuenta está desactivada')
    expect((await admin.post(`/console/cuentas/${accountIdOf(email)}/reactivar`, {})).status).toBe(303)
    await consoleAccountLogin(s, email, PASSWORD)
  })

  test('wrong codes to turn the second factor off count as failures: ten lock it, and the right code then waits', async () => {
    const { email, client } = await person(a, 'emisor')
    const totp = await enrol(client)
    for (let i = 0; i < 10; i++) expect((await client.post('/console/mi-cuenta/2fa/desactivar', { codigo: '000000' })).status).toBe(400)
    clock.advance(30_000)
    expect((await client.post('/console/mi-cuenta/2fa/desactivar', { codigo: codeAt(totp) })).status).toBe(400)
    expect((s.server.deps.store.sqlite.query('SELECT totp_sealed IS NOT NULL AS on_ FROM console_accounts WHERE email = ?').get(email) as { on_: number }).on_).toBe(1)
  })
})

describe('logging in', () => {
  test('an unknown email and a wrong password get the same answer', async () => {
    const { email } = await person(a, 'lectura')
    const unknown = await tryAccountLogin(s, 'nadie@ejemplo.cl', PASSWORD)
    const wrong = await tryAccountLogin(s, email, 'no es la contraseña')
    expect(unknown.status).toBe(401)
    expect(wrong.status).toBe(401)
    const text = (html: string) => html.replace(/name="_csrf" value="[^"]+"/g, '').replace(/ value="[^"]*@[^"]*"/, '')
    expect(text(await unknown.text())).toBe(text(await wrong.text()))
    expect(LOGIN_FAILED).toContain('no son correctos')
  })

  test('10 wrong passwords in a row lock the address out of the account for 15 minutes, a restart included; then the right one works', async () => {
    const { email } = await person(a, 'emisor')
    for (let i = 0; i < 10; i++) expect((await tryAccountLogin(s, email, `mala ${i}`)).status).toBe(401)
    clock.advance(60_000) // past the address's window: what refuses now is the account's lock
    const locked = await tryAccountLogin(s, email, PASSWORD)
    expect(locked.status).toBe(401)
    expect(await locked.text()).toContain('se bloquea 15 minutos')

    await s.stop()
    s = await startTestServer({ clock, dataDir })
    expect((await tryAccountLogin(s, email, PASSWORD)).status).toBe(401)
    clock.advance(LOCK_MS)
    await consoleAccountLogin(s, email, PASSWORD)
  })

  test('a stranger failing on purpose locks out only their own address: the owner, elsewhere, still logs in', async () => {
    const { email } = await person(a, 'emisor')
    const deps = s.server.deps
    for (let i = 0; i < 10; i++) await expect(verifyPassword(deps, { email, password: `mala ${i}`, address: '203.0.113.9' })).rejects.toThrow(LOGIN_FAILED)
    // The stranger's address is locked, even with the right password...
    await expect(verifyPassword(deps, { email, password: PASSWORD, address: '203.0.113.9' })).rejects.toThrow(LOGIN_FAILED)
    // ...the owner's office is not, and the lock is a row of that pair, kept in the database.
    expect((await verifyPassword(deps, { email, password: PASSWORD, address: '198.51.100.20' })).needsTotp).toBe(false)
    const rows = deps.store.sqlite.query('SELECT address, locked_until FROM console_login_failures WHERE account_id = ?').all(accountIdOf(email)) as Array<{ address: string; locked_until: string | null }>
    expect(rows.map((r) => r.address)).toEqual(['203.0.113.9'])
    expect(Date.parse(rows[0]!.locked_until!)).toBe(clock.now().getTime() + LOCK_MS)
  })

  test('an address past 20 failures a minute gets 429, even with the right password, until the minute ends', async () => {
    const { email } = await person(a, 'emisor')
    const other = newEmail('x')
    for (let i = 0; i < 20; i++) expect((await tryAccountLogin(s, other, 'adivinando')).status).toBe(401)
    expect((await tryAccountLogin(s, email, PASSWORD)).status).toBe(429)
    clock.advance(60_000)
    await consoleAccountLogin(s, email, PASSWORD)
  })

  test('with TOTP the password leads to the code step; a wrong or replayed code is refused, the window is one step', async () => {
    const { email, client } = await person(a, 'administrador')
    const totp = await enrol(client)
    expect((await client.get('/console/mi-cuenta')).html).toContain('Activa')
    clock.advance(30_000) // two steps after the enrolment's, so the step before this one is still unused

    expect((await tryAccountLogin(s, email, PASSWORD, () => '000000')).status).toBe(401)
    expect((await tryAccountLogin(s, email, PASSWORD, () => codeAt(totp, -90_000))).status).toBe(401)
    const previousStep = codeAt(totp, -30_000)
    await consoleAccountLogin(s, email, PASSWORD, () => previousStep)
    // The same code again, within its window: refused.
    expect((await tryAccountLogin(s, email, PASSWORD, () => previousStep)).status).toBe(401)
    clock.advance(30_000)
    const fresh = await consoleAccountLogin(s, email, PASSWORD, () => codeAt(totp))

    // Turning it off takes a current code.
    clock.advance(30_000)
    expect((await fresh.post('/console/mi-cuenta/2fa/desactivar', { codigo: '123456' })).status).toBe(400)
    expect((await fresh.post('/console/mi-cuenta/2fa/desactivar', { codigo: codeAt(totp) })).location).toBe('/console/mi-cuenta?aviso=desactivada')
    await consoleAccountLogin(s, email, PASSWORD)

    // A lost phone: only the instance administrator removes someone's second factor.
    const again = await enrol(await consoleAccountLogin(s, email, PASSWORD))
    expect((await client.post(`/console/cuentas/${accountIdOf(email)}/quitar-2fa`, {})).status).toBe(404)
    const admin = await consoleAdmin(s, a.empresa.id)
    expect((await admin.post(`/console/cuentas/${accountIdOf(email)}/quitar-2fa`, {})).location).toBe('/console/cuentas?aviso=sin2fa')
    expect(again).toBeDefined()
    await consoleAccountLogin(s, email, PASSWORD)
  })

  test('changing the password needs the current one and ends the other sessions', async () => {
    const { email, client } = await person(a, 'lectura')
    const other = await consoleAccountLogin(s, email, PASSWORD)
    const NEW = 'contraseña nueva de lectura'
    const wrong = await client.post('/console/mi-cuenta/contrasena', { actual: 'equivocada', password: NEW, password_repetida: NEW })
    expect(wrong.status).toBe(400)
    expect(wrong.html).toContain('La contraseña actual no es correcta')
    // lectura may post its own password change.
    expect((await client.post('/console/mi-cuenta/contrasena', { actual: PASSWORD, password: NEW, password_repetida: NEW })).status).toBe(303)
    expect((await client.get('/console/mi-cuenta')).status).toBe(200)
    expect((await other.get('/console/documentos')).location).toBe('/console/entrar')
    await consoleAccountLogin(s, email, NEW)
  })

  test('ten wrong current passwords in Mi cuenta lock the account; the right one is then told to wait, not that it is wrong', async () => {
    const { client } = await person(a, 'lectura')
    const NEW = 'contraseña nueva de lectura'
    for (let i = 0; i < 10; i++) expect((await client.post('/console/mi-cuenta/contrasena', { actual: `mala ${i}`, password: NEW, password_repetida: NEW })).status).toBe(400)
    const locked = await client.post('/console/mi-cuenta/contrasena', { actual: PASSWORD, password: NEW, password_repetida: NEW })
    expect(locked.status).toBe(400)
    expect(locked.html).toContain('Demasiados intentos fallidos')
    expect(locked.html).not.toContain('no es correcta')
    clock.advance(LOCK_MS)
    expect((await client.post('/console/mi-cuenta/contrasena', { actual: PASSWORD, password: NEW, password_repetida: NEW })).status).toBe(303)
  })
})

describe('roles', () => {
  test('an emisor issues but reaches neither accounts nor settings, in words', async () => {
    const { client } = await person(a, 'emisor')
    const docs = await client.get('/console/documentos')
    expect(docs.html).not.toContain('href="/console/cuentas"')
    expect(docs.html).not.toContain('href="/console/certificado"')
    for (const path of ['/console/cuentas', '/console/certificado', '/console/webhooks', '/console/correo']) {
      const page = await client.get(path)
      expect(page.status).toBe(403)
      expect(page.html).toContain('administrador de la empresa')
    }
    expect((await client.post('/console/cuentas/invitar', { email: 'x@ejemplo.cl', role: 'administrador' })).status).toBe(403)
    expect((await client.post('/console/folios', { tipo_dte: '33' })).status).toBe(403)
    expect((await client.get('/console/folios')).html).toContain('Los CAF los carga un administrador')
    // The issue form is open to an emisor: an empty one comes back with its errors, not a 403.
    expect((await client.post('/console/documentos/nuevo', { tipo_dte: '33' })).status).toBe(400)
    expect((await client.get('/console/empresas')).status).toBe(404)
  })

  test('a lectura reads but cannot issue', async () => {
    const { client } = await person(a, 'lectura')
    expect((await client.get('/console/documentos')).status).toBe(200)
    const refused = await client.post('/console/documentos/nuevo', { tipo_dte: '33' })
    expect(refused.status).toBe(403)
    expect(refused.html).toContain('Su rol en esta empresa es de solo lectura')
    expect((await client.get('/console/documentos/nuevo')).html).not.toContain('Emitir documento</button>')
  })

  test("an administrador manages the company's accounts: a role change rules at once, a removal ends the session", async () => {
    const boss = await person(a, 'administrador')
    const worker = await person(a, 'lectura')
    const accountId = accountIdOf(worker.email)
    expect((await boss.client.get('/console/cuentas')).html).toContain(`/console/cuentas/${accountId}/rol`)
    expect((await worker.client.post('/console/documentos/nuevo', { tipo_dte: '33' })).status).toBe(403)
    expect((await boss.client.post(`/console/cuentas/${accountId}/rol`, { role: 'emisor' })).location).toBe('/console/cuentas?aviso=rol')
    expect((await worker.client.post('/console/documentos/nuevo', { tipo_dte: '33' })).status).toBe(400)
    expect((await boss.client.post(`/console/cuentas/${accountId}/quitar`, {})).location).toBe('/console/cuentas?aviso=quitada')
    expect((await worker.client.get('/console/documentos')).location).toBe('/console/entrar')
    // With no company left, the right password says so.
    expect(await (await tryAccountLogin(s, worker.email, PASSWORD)).text()).toContain('ya no pertenece a ninguna empresa')
  })

  test('an administrador cannot demote or remove themselves, and reaches no other company', async () => {
    const boss = await person(a, 'administrador')
    const row = await boss.client.get('/console/cuentas')
    expect(row.html).toContain('Usted')
    const ownId = accountIdOf(boss.email)
    const demote = await boss.client.post(`/console/cuentas/${ownId}/rol`, { role: 'lectura' })
    expect(demote.status).toBe(400)
    expect(demote.html).toContain('No puede cambiar su propio rol')
    expect((await boss.client.post(`/console/cuentas/${ownId}/quitar`, {})).status).toBe(400)
    expect((await boss.client.post('/console/empresas/seleccionar', { empresa_id: b.empresa.id })).status).toBe(404)
    expect((await boss.client.get('/console/documentos')).html).not.toContain('Ferretería El Clavo')
  })

  test('the instance administrator disables an account: its sessions end and it cannot log in', async () => {
    const { email, client } = await person(a, 'emisor')
    const admin = await consoleAdmin(s, a.empresa.id)
    const id = accountIdOf(email)
    expect((await admin.post(`/console/cuentas/${id}/desactivar`, {})).location).toBe('/console/cuentas?aviso=desactivada')
    expect((await client.get('/console/documentos')).location).toBe('/console/entrar')
    expect((await tryAccountLogin(s, email, PASSWORD)).status).toBe(401)
    expect((await admin.post(`/console/cuentas/${id}/reactivar`, {})).status).toBe(303)
    await consoleAccountLogin(s, email, PASSWORD)
  })

  test('an API key session does not reach the Cuentas screen', async () => {
    const { consoleLogin } = await import('../support/console')
    const keyUser = await consoleLogin(s, a.writeKey)
    expect((await keyUser.get('/console/cuentas')).status).toBe(403)
    // The invitation service refuses a bad email and role with both fields named.
    expect(() => inviteAccount(s.server.deps, { empresaId: a.empresa.id, email: 'no-es-correo', role: 'jefe', actor: { accountId: null } })).toThrow()
  })
})
