// DESIGN §14 end to end in headless Chromium against the compiled binary and the simulated SII: the administrator's
// one-time link, a company created, its certificate and CAF uploaded, an invoice issued from the form (first with a
// mistake shown beside its field) that reaches `aceptado` while the page watches, its PDF, a webhook and its delivery;
// then a company user who cannot see another company, and a form refused without its CSRF token. Each main screen is
// saved in .test-results/console/ for people to look at.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { santiagoDate } from '../../src/clock'
import { ensureBinary, runBinary, startServe, type ServeProcess } from '../support/binary'
import { launchChromium, newContext, screenshot } from '../support/browser'
import { signer } from '../support/issuance'
import { exportPfx, makeTestCaf } from '../support/pki'
import { startReceiver, type Receiver } from '../support/receiver'
import { tempDir } from '../support/server'

const A = { rut: '76086428-5', razon: 'Ferretería Ñandú Ltda.' }
const B = { rut: '77665544-9', razon: 'Constructora Bío Bío SpA' }

let serve: ServeProcess
let browser: Browser
let hooks: Receiver
let dir: string

beforeAll(async () => {
  await ensureBinary()
  dir = tempDir('timbre-console-e2e-')
  hooks = startReceiver()
  serve = await startServe(['--data-dir', dir, '--sii', 'simulado', '--rate-limit', '0', '--submit-every', '1s', '--track-every', '1s', '--deliver-every', '1s'], {
    TIMBRE_WEBHOOK_ALLOW_HTTP: 'true',
  })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  if (serve && serve.proc.exitCode === null) await serve.terminate()
  await hooks?.stop()
})

/** Every visible control has a label a screen reader announces (DESIGN §14: keyboard accessible). */
async function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
      .filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute('aria-label'))
      .map((el) => el.outerHTML.slice(0, 120)),
  )
}

async function submitFormWith(page: Page, field: string): Promise<void> {
  await page.locator(`form:has([name="${field}"]) button[type=submit]`).first().click()
  await page.waitForLoadState('load')
}

const issueButton = (page: Page) => page.getByRole('button', { name: 'Emitir documento' })

let dteId = ''
let keyB = ''

test('the administrator sets up a company and issues an invoice that reaches aceptado, with its PDF and a webhook', async () => {
  const link = runBinary(['console', 'link', '--url', serve.url, '--data-dir', dir])
  expect(link.code).toBe(0)
  const context = await newContext(browser)
  const page = await context.newPage()
  await page.goto(link.json().url as string)
  await page.getByRole('button', { name: 'Entrar como administrador' }).click()
  await page.waitForURL('**/console/empresas')
  expect(await page.getByText('Aún no hay empresas').isVisible()).toBe(true)

  // Two companies through the form; the first becomes the active one.
  for (const c of [B, A]) {
    await page.getByLabel('RUT', { exact: false }).first().fill(c.rut)
    await page.getByLabel('Razón social').fill(c.razon)
    await page.getByLabel('Giro').fill('Comercio')
    await page.getByLabel('Actividades económicas (Acteco)').fill('475200')
    await page.getByLabel('Dirección').fill('Av. Matta 1020')
    await page.getByLabel('Comuna').fill('Santiago')
    await page.getByLabel('Ciudad').fill('Santiago')
    await page.getByRole('button', { name: 'Crear empresa' }).click()
    await page.waitForURL('**/console/empresas?aviso=creada')
    if (c === B) {
      await page.getByLabel('Con escritura (emitir, subir CAF…)').check()
      await page.getByRole('button', { name: 'Crear API key' }).click()
      keyB = (await page.locator('#api-key-creada').textContent())!.trim()
    }
  }
  expect(keyB).toStartWith('timbre_')
  expect(await page.locator('#empresa-activa').inputValue()).not.toBe('')
  await screenshot(page, '01-empresas')
  expect(await unlabelledControls(page)).toEqual([])

  // Certificate, with the wrong password first.
  const pfxPath = join(dir, 'firma.pfx')
  writeFileSync(pfxPath, exportPfx(signer(), 'clave-correcta', '3des'))
  await page.goto(`${serve.url}/console/certificado`)
  await page.locator('input[name=pfx]').setInputFiles(pfxPath)
  await page.locator('input[name=password]').fill('otra')
  await submitFormWith(page, 'pfx')
  expect(await page.locator('.field-error').count()).toBeGreaterThan(0)
  await page.locator('input[name=pfx]').setInputFiles(pfxPath)
  await page.locator('input[name=password]').fill('clave-correcta')
  await submitFormWith(page, 'pfx')
  expect(page.url()).toContain('aviso=cargado')
  await screenshot(page, '03-certificado')

  // A CAF of folios 1 to 50 for facturas.
  const caf = makeTestCaf({ rut: A.rut, razonSocial: A.razon, tipoDte: 33, folioDesde: 1, folioHasta: 50, fechaAutorizacion: santiagoDate(new Date(Date.now() - 86_400_000)) })
  const cafPath = join(dir, 'caf33.xml')
  writeFileSync(cafPath, caf.bytes)
  await page.goto(`${serve.url}/console/folios`)
  await page.locator('select[name=tipo_dte]').selectOption('33')
  await page.locator('input[name=caf]').setInputFiles(cafPath)
  await submitFormWith(page, 'caf')
  expect(page.url()).toContain('aviso=cargado')
  expect(await page.content()).toContain('50')
  await screenshot(page, '04-folios')

  // The webhook before the invoice, so its events are delivered too.
  await page.goto(`${serve.url}/console/webhooks`)
  await page.locator('input[name=url]').fill(hooks.url)
  const boxes = page.locator('input[type=checkbox][name=events]')
  for (let i = 0; i < (await boxes.count()); i++) await boxes.nth(i).check()
  await submitFormWith(page, 'url')
  expect(await page.content()).toContain(hooks.url)

  // The invoice: a price that is not a number first, shown beside its field; nothing issued.
  await page.goto(`${serve.url}/console/documentos/nuevo`)
  expect(await unlabelledControls(page)).toEqual([])
  await page.locator('select[name=tipo_dte]').selectOption('33')
  await page.locator('[name="receptor.rut"]').fill('76.543.210-3')
  await page.locator('[name="receptor.razon_social"]').fill('Comercializadora Los Andes SpA')
  await page.locator('[name="receptor.giro"]').fill('Venta al por mayor')
  await page.locator('[name="receptor.direccion"]').fill('Av. Providencia 1234')
  await page.locator('[name="receptor.comuna"]').fill('Providencia')
  await page.locator('[name="receptor.ciudad"]').fill('Santiago')
  await page.locator('[name="detalle.0.nombre"]').fill('Taladro percutor 750W')
  await page.locator('[name="detalle.0.cantidad"]').fill('2')
  await page.locator('[name="detalle.0.precio"]').fill('cuarenta mil')
  await issueButton(page).click()
  await page.waitForLoadState('load')
  const error = page.locator('#f-detalle-0-precio-error')
  expect(await error.isVisible()).toBe(true)
  expect(await page.locator('[name="receptor.razon_social"]').inputValue()).toBe('Comercializadora Los Andes SpA')
  await screenshot(page, '05-emitir-error')
  // Totals follow the typing: 2 × 45.990 = 91.980 neto, 17.476 IVA, 109.456 total.
  await page.locator('[name="detalle.0.precio"]').fill('45990')
  await page.getByText('109.456').first().waitFor({ timeout: 5_000 })
  await screenshot(page, '05-emitir')
  await issueButton(page).click()
  await page.waitForURL(/\/console\/documentos\/[0-9a-f-]{36}/)
  dteId = /documentos\/([0-9a-f-]{36})/.exec(page.url())![1]!

  // The badge changes by itself while the simulated SII answers.
  await page.locator('.badge', { hasText: /aceptado/i }).first().waitFor({ timeout: 45_000 })
  await screenshot(page, '06-documento')
  const pdfHref = await page.locator('a', { hasText: 'Abrir PDF' }).first().getAttribute('href')
  const pdf = await page.request.get(new URL(pdfHref!, serve.url).toString())
  expect(pdf.headers()['content-type']).toBe('application/pdf')
  expect((await pdf.body()).subarray(0, 5).toString()).toBe('%PDF-')

  await page.goto(`${serve.url}/console/documentos`)
  expect(await page.content()).toContain('Comercializadora Los Andes SpA')
  await screenshot(page, '02-documentos')

  // The webhook received the invoice's events; its page lists the deliveries with their attempts.
  const deadline = Date.now() + 30_000
  while (!hooks.received.some((r) => r.body.includes('dte.accepted')) && Date.now() < deadline) await Bun.sleep(200)
  expect(hooks.received.some((r) => r.body.includes(dteId))).toBe(true)
  await page.goto(`${serve.url}/console/webhooks`)
  await page.locator(`a[href*="/console/webhooks/"]`).first().click()
  await page.getByText('dte.accepted').first().waitFor({ timeout: 10_000 })
  await screenshot(page, '07-webhook-entregas')

  for (const [path, name] of [['/console/recibidos', '08-recibidos'], ['/console/correo', '09-correo']] as const) {
    await page.goto(serve.url + path)
    expect(await unlabelledControls(page)).toEqual([])
    await screenshot(page, name)
  }
  await context.close()
}, 120_000)

test('a company user sees only its company, on a tablet too; a form without its CSRF token is refused', async () => {
  expect(dteId).not.toBe('')
  const context = await newContext(browser, { width: 820, height: 1180 })
  const page = await context.newPage()
  await page.goto(`${serve.url}/console/entrar`)
  // Keyboard only: skip link, the account form (email first), then the folded API-key form opened with Enter.
  await page.keyboard.press('Tab')
  expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Saltar al contenido')
  await page.keyboard.press('Tab')
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('email')
  for (let i = 0; i < 6 && (await page.evaluate(() => document.activeElement?.tagName)) !== 'SUMMARY'; i++) await page.keyboard.press('Tab')
  expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Con una API key (integradores)')
  await page.keyboard.press('Enter')
  await page.keyboard.press('Tab')
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('api_key')
  await page.keyboard.type(keyB)
  await page.keyboard.press('Enter')
  await page.waitForURL('**/console/documentos')
  const html = await page.content()
  expect(html).toContain(B.razon)
  expect(html).not.toContain(A.razon)
  expect(html).not.toContain('Comercializadora Los Andes')
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true)
  await screenshot(page, '10-tablet-otra-empresa')
  const other = await page.goto(`${serve.url}/console/documentos/${dteId}`)
  expect(other!.status()).toBe(404)
  // A write session: the POST below is refused for its missing CSRF token alone, and the same POST with the page's
  // token goes through.
  expect(html).not.toContain('Solo lectura')
  const registered = async () => ((await (await fetch(`${serve.url}/api/v1/billing/webhooks`, { headers: { 'X-Api-Key': keyB } })).json()) as unknown[]).length
  const forged = await page.request.post(`${serve.url}/console/webhooks`, { form: { url: hooks.url, events: 'dte.accepted' } })
  expect(forged.status()).toBe(403)
  expect(await forged.text()).toContain('CSRF')
  expect(await registered()).toBe(0)
  await page.goto(`${serve.url}/console/webhooks`)
  const token = await page.locator('input[name=_csrf]').first().inputValue()
  const withToken = await page.request.post(`${serve.url}/console/webhooks`, { form: { url: hooks.url, events: 'dte.accepted', _csrf: token } })
  expect(withToken.status()).toBe(200)
  expect(await registered()).toBe(1)
  await context.close()
}, 60_000)
