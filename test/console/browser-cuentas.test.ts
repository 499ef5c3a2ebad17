// DESIGN §14 "People, not keys" (issue 27) end to end in headless Chromium against the compiled binary: the instance
// administrator invites three people; one accepts, turns on TOTP in Mi cuenta and logs in with password and code;
// an emisor cannot reach Cuentas; a lectura cannot issue; wrong passwords lock the account. Screenshots of the login,
// code, Cuentas and Mi cuenta pages go to .test-results/console/.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { Secret, TOTP } from 'otpauth'
import type { Browser, Page } from 'playwright-core'
import { createCompanyWithKey, ensureBinary, runBinary, startServe, type ServeProcess } from '../support/binary'
import { launchChromium, newContext, screenshot } from '../support/browser'
import { tempDir } from '../support/server'

setDefaultTimeout(120_000)

const A = { rut: '76086428-5', razon: 'Ferretería Ñandú Ltda.' }
const PASSWORD = 'correcaminos en el desierto'
const people = { jefa: 'Jefa@Nandu.cl', emisor: 'emisor@nandu.cl', lectura: 'lectura@nandu.cl' }
const links: Record<string, string> = {}

let serve: ServeProcess
let browser: Browser
let dir: string

beforeAll(async () => {
  await ensureBinary()
  dir = tempDir('timbre-console-cuentas-')
  createCompanyWithKey(dir, A.rut, A.razon)
  serve = await startServe(['--data-dir', dir, '--sii', 'simulado', '--rate-limit', '0'])
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  if (serve && serve.proc.exitCode === null) await serve.terminate()
  rmSync(dir, { recursive: true, force: true })
})

async function acceptInvitation(page: Page, link: string): Promise<void> {
  await page.goto(link)
  await page.getByLabel('Contraseña nueva').fill(PASSWORD)
  await page.getByLabel('Repita la contraseña').fill(PASSWORD)
  await page.getByRole('button', { name: 'Guardar y entrar' }).click()
  await page.waitForURL('**/console/documentos')
}

async function login(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${serve.url}/console/entrar`)
  await page.getByLabel('Correo').fill(email)
  await page.getByLabel('Contraseña', { exact: true }).fill(password)
  await page.getByRole('button', { name: 'Entrar', exact: true }).click()
  await page.waitForLoadState('load')
}

test('the instance administrator invites three people from the Cuentas screen', async () => {
  const link = runBinary(['console', 'link', '--url', serve.url, '--data-dir', dir])
  expect(link.code).toBe(0)
  const context = await newContext(browser)
  const page = await context.newPage()
  await page.goto(link.json().url as string)
  await page.getByRole('button', { name: 'Entrar como administrador' }).click()
  await page.waitForURL('**/console/empresas')
  await page.locator('#empresa-activa').selectOption({ label: `76.086.428-5 · ${A.razon}` })
  await page.getByRole('button', { name: 'Cambiar' }).click()
  await page.getByRole('link', { name: 'Cuentas' }).click()
  await page.waitForURL('**/console/cuentas')
  for (const [who, role] of [['jefa', 'administrador'], ['emisor', 'emisor'], ['lectura', 'lectura']] as const) {
    await page.getByLabel('Correo').fill(people[who])
    await page.getByRole('combobox', { name: 'Rol', exact: true }).selectOption(role)
    await page.getByRole('button', { name: 'Crear invitación' }).click()
    await page.waitForLoadState('load')
    links[who] = (await page.locator('#enlace-invitacion').textContent())!.trim()
    expect(links[who]).toStartWith(`${serve.url}/console/invitacion?token=`)
  }
  await screenshot(page, 'cuentas-01-invitaciones')
  expect(await page.locator('#tabla-invitaciones tbody tr').count()).toBe(3)
  await context.close()
})

test('an invitation accepted, TOTP turned on in Mi cuenta, then a login with password and code', async () => {
  const context = await newContext(browser)
  const page = await context.newPage()
  await page.goto(links.jefa!)
  expect(await page.locator('#invitacion-email').textContent()).toBe('jefa@nandu.cl')
  // A short password is refused beside its field.
  await page.getByLabel('Contraseña nueva').fill('corta')
  await page.getByLabel('Repita la contraseña').fill('corta')
  await page.getByRole('button', { name: 'Guardar y entrar' }).click()
  await page.waitForLoadState('load')
  expect(await page.locator('.field-error').first().textContent()).toContain('al menos 10 caracteres')
  // The refused attempt left the link unused: the same link still works.
  await acceptInvitation(page, links.jefa!)

  await page.getByRole('link', { name: 'jefa@nandu.cl' }).click()
  await page.waitForURL('**/console/mi-cuenta')
  await page.getByRole('button', { name: 'Activar verificación en dos pasos' }).click()
  await page.waitForLoadState('load')
  const secret = (await page.locator('#totp-clave').textContent())!.replace(/\s+/g, '')
  expect(await page.locator('#totp-uri').textContent()).toContain('otpauth://totp/Timbre:jefa%40nandu.cl?')
  expect(await page.locator('img.qr').evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(50)
  await screenshot(page, 'cuentas-02-mi-cuenta-activar')
  const totp = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) })
  await page.getByLabel('Código de 6 dígitos de la aplicación').fill(totp.generate())
  await page.getByRole('button', { name: 'Confirmar y activar' }).click()
  await page.waitForURL('**/console/mi-cuenta?aviso=activada')
  expect(await page.getByText('Verificación en dos pasos activada').isVisible()).toBe(true)
  await screenshot(page, 'cuentas-03-mi-cuenta')
  await page.getByRole('button', { name: 'Salir' }).click()
  await page.waitForURL('**/console/entrar')
  await screenshot(page, 'cuentas-04-entrar')

  await login(page, 'JEFA@nandu.cl', PASSWORD)
  expect(await page.getByRole('heading', { name: 'Timbre · Verificación en dos pasos' }).isVisible()).toBe(true)
  await page.getByLabel('Código de su aplicación de autenticación').fill('000000')
  await page.getByRole('button', { name: 'Verificar' }).click()
  await page.waitForLoadState('load')
  expect(await page.getByRole('alert').textContent()).toContain('no son correctos')
  await screenshot(page, 'cuentas-05-codigo')
  // The enrolment spent this step's code; the next step's is within the window of one.
  await page.getByLabel('Código de su aplicación de autenticación').fill(totp.generate({ timestamp: Date.now() + 30_000 }))
  await page.getByRole('button', { name: 'Verificar' }).click()
  await page.waitForURL('**/console/documentos')
  expect(await page.getByRole('link', { name: 'Cuentas' }).isVisible()).toBe(true)
  await page.getByRole('link', { name: 'Cuentas' }).click()
  await page.waitForURL('**/console/cuentas')
  expect(await page.locator('#tabla-cuentas').textContent()).toContain('jefa@nandu.cl')
  await screenshot(page, 'cuentas-06-cuentas')
  await context.close()
})

test('an emisor cannot manage accounts', async () => {
  const context = await newContext(browser)
  const page = await context.newPage()
  await acceptInvitation(page, links.emisor!)
  expect(await page.getByRole('link', { name: 'Cuentas' }).count()).toBe(0)
  expect(await page.getByRole('link', { name: 'Certificado' }).count()).toBe(0)
  const res = await page.goto(`${serve.url}/console/cuentas`)
  expect(res!.status()).toBe(403)
  expect(await page.getByText('Solo un administrador de la empresa invita personas').isVisible()).toBe(true)
  await screenshot(page, 'cuentas-07-emisor-sin-permiso')
  await context.close()
})

test('a lectura cannot issue', async () => {
  const context = await newContext(browser)
  const page = await context.newPage()
  await acceptInvitation(page, links.lectura!)
  expect(await page.getByText('Solo lectura').first().isVisible()).toBe(true)
  await page.goto(`${serve.url}/console/documentos/nuevo`)
  expect(await page.getByRole('button', { name: 'Emitir documento' }).count()).toBe(0)
  expect(await page.getByText('Su rol en esta empresa es de solo lectura').isVisible()).toBe(true)
  // Even a hand-made post with a valid CSRF token is refused by the door.
  const status = await page.evaluate(async () => {
    const csrf = (document.querySelector('input[name=_csrf]') as HTMLInputElement).value
    const res = await fetch('/console/documentos/nuevo', { method: 'POST', body: new URLSearchParams({ _csrf: csrf, tipo_dte: '33' }) })
    return res.status
  })
  expect(status).toBe(403)
  await context.close()
})

test('wrong passwords are limited: after 10 the account is locked, the right password included', async () => {
  const context = await newContext(browser)
  const page = await context.newPage()
  for (let i = 0; i < 10; i++) {
    await login(page, people.emisor, `equivocada ${i}`)
    expect(page.url()).toEndWith('/console/entrar/cuenta')
  }
  await login(page, people.emisor, PASSWORD)
  expect(page.url()).toEndWith('/console/entrar/cuenta')
  expect(await page.getByRole('alert').textContent()).toContain('se bloquea 15 minutos')
  expect(await page.getByLabel('Correo').inputValue()).toBe(people.emisor)
  await screenshot(page, 'cuentas-08-bloqueada')
  await context.close()
})
