// Issue 27 end to end in headless Chromium against the compiled binary and the simulated SII: a company user saves a
// cliente (after a mistyped RUT shown beside its field) and a producto priced `12.500` in the console, picks both in
// the issue form, issues the invoice, and the API returns it with that receptor and 12 500 pesos a unit. A producto is
// then deleted with script turned off, through its confirmation page. Lists and forms are kept as screenshots, on a
// laptop and at 390 px, where nothing may be cut off.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { createCompanyWithKey, ensureBinary, provisionOverHttp, startServe, type ServeProcess } from '../support/binary'
import { launchChromium, newContext, screenshot, loginWithApiKey } from '../support/browser'
import { tempDir } from '../support/server'

const EMPRESA = { rut: '76086428-5', razonSocial: 'Ferretería Ñandú Ltda.' }
const CLIENTE = {
  rut: '76.543.210-3',
  razon_social: 'Comercializadora Los Andes SpA',
  giro: 'Venta al por mayor de materiales',
  direccion: 'Av. Providencia 1234, oficina 501',
  comuna: 'Providencia',
  ciudad: 'Santiago',
  email: 'dte@losandes.cl',
}

let serve: ServeProcess
let browser: Browser
let key = ''

beforeAll(async () => {
  await ensureBinary()
  const dir = tempDir('timbre-console-catalogo-')
  key = createCompanyWithKey(dir, EMPRESA.rut, EMPRESA.razonSocial)
  serve = await startServe(['--data-dir', dir, '--sii', 'simulado', '--rate-limit', '0', '--submit-every', '1h', '--track-every', '1h'])
  await provisionOverHttp(serve.url, key, { ...EMPRESA, folios: 10 })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  if (serve && serve.proc.exitCode === null) await serve.terminate()
})

const apiGet = async (path: string) => (await fetch(`${serve.url}/api/v1/billing${path}`, { headers: { 'X-Api-Key': key } })).json() as Promise<any>

async function login(page: Page): Promise<void> {
  await loginWithApiKey(page, serve.url, key)
}

/** Nothing wider than the window: neither the page nor a table of the catalog scrolls sideways. */
const fitsWidth = (page: Page) =>
  page.evaluate(
    () =>
      document.documentElement.scrollWidth <= window.innerWidth &&
      [...document.querySelectorAll('main .table-wrap')].every((wrap) => wrap.scrollWidth <= wrap.clientWidth),
  )

async function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
      .filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute('aria-label'))
      .map((el) => el.outerHTML.slice(0, 120)),
  )
}

test('a cliente and a producto saved in the console are picked in the issue form, and the invoice carries them', async () => {
  const context = await newContext(browser)
  const page = await context.newPage()
  await login(page)

  await page.getByRole('navigation', { name: 'Secciones' }).getByRole('link', { name: 'Clientes' }).click()
  await page.waitForURL('**/console/clientes')
  await page.getByRole('link', { name: 'Nuevo cliente' }).click()
  expect(await unlabelledControls(page)).toEqual([])
  // A wrong check digit first: refused beside the RUT, the rest kept.
  await page.getByLabel('RUT').fill('76.543.210-4')
  for (const [name, value] of Object.entries(CLIENTE)) if (name !== 'rut') await page.locator(`[name="${name}"]`).fill(value)
  await page.getByRole('button', { name: 'Guardar cliente' }).click()
  await page.waitForLoadState('load')
  expect(await page.locator('#f-rut-error').textContent()).toBe('RUT inválido.')
  expect(await page.getByLabel('Razón social').inputValue()).toBe(CLIENTE.razon_social)
  // console.js puts the focus on the summary, so a screen reader starts with what went wrong.
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('errores')
  await screenshot(page, '21-cliente-error')
  await page.getByLabel('RUT').fill(CLIENTE.rut)
  await page.getByRole('button', { name: 'Guardar cliente' }).click()
  await page.waitForURL('**/console/clientes?aviso=creado')
  expect(await page.locator('td.rut').first().textContent()).toBe('76.543.210-3')
  await screenshot(page, '20-clientes')

  await page.getByRole('navigation', { name: 'Secciones' }).getByRole('link', { name: 'Productos' }).click()
  await page.getByRole('link', { name: 'Nuevo producto' }).click()
  expect(await unlabelledControls(page)).toEqual([])
  await page.getByLabel('Nombre').fill('Taladro percutor 750 W')
  await page.getByLabel('Código').fill('TAL-750')
  await page.getByLabel('Precio unitario').fill('12.500')
  await page.getByLabel('Categoría').fill('Herramientas')
  await screenshot(page, '23-producto-form')
  await page.getByRole('button', { name: 'Guardar producto' }).click()
  await page.waitForURL('**/console/productos?aviso=creado')
  expect(await page.getByRole('cell', { name: '$ 12.500' }).isVisible()).toBe(true)
  await screenshot(page, '22-productos')

  // The issue form: the saved cliente fills the receptor, the saved producto fills the first line.
  await page.getByRole('navigation', { name: 'Secciones' }).getByRole('link', { name: 'Emitir' }).click()
  await page.locator('select[name=tipo_dte]').selectOption('33')
  await page.locator('#cliente-guardado').selectOption({ label: `${CLIENTE.razon_social} (76.543.210-3)` })
  expect(await page.locator('[name="receptor.rut"]').inputValue()).toBe('76543210-3')
  expect(await page.locator('[name="receptor.comuna"]').inputValue()).toBe('Providencia')
  await page.locator('#producto-guardado-0').selectOption({ index: 1 })
  expect(await page.locator('[name="detalle.0.nombre"]').inputValue()).toBe('Taladro percutor 750 W')
  expect(await page.locator('[name="detalle.0.precio"]').inputValue()).toBe('12.500')
  await page.locator('[name="detalle.0.cantidad"]').fill('2')
  await page.getByRole('button', { name: 'Emitir documento' }).click()
  await page.waitForURL(/\/console\/documentos\/[0-9a-f-]{36}/)
  const id = /documentos\/([0-9a-f-]{36})/.exec(page.url())![1]

  const dte = await apiGet(`/dte/${id}`)
  expect(dte).toMatchObject({ tipo_dte: 33, rut_receptor: '76543210-3', razon_social_receptor: CLIENTE.razon_social, monto_neto: 25000, iva: 4750, monto_total: 29750 })
  expect(dte.detalle).toEqual([{ nombre: 'Taladro percutor 750 W', cantidad: 2, unidad: 'UN', precio: 12500 }])
  await context.close()
}, 90_000)

test('on a phone (390 px) the lists and forms fit the width; a producto is deleted through its confirmation with script off', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'es-CL', timezoneId: 'America/Santiago', javaScriptEnabled: false })
  const page = await context.newPage()
  await login(page)
  for (const [path, name] of [
    ['/console/clientes', '30-clientes-390'],
    ['/console/clientes/nuevo', '31-cliente-form-390'],
    ['/console/productos', '32-productos-390'],
    ['/console/productos/nuevo', '33-producto-form-390'],
  ] as const) {
    await page.goto(serve.url + path)
    await screenshot(page, name)
    expect({ path, fits: await fitsWidth(page) }).toEqual({ path, fits: true })
  }
  // Without script too, a price with decimals comes back refused beside its field, as typed.
  await page.getByLabel('Nombre').fill('Broca 8 mm')
  await page.getByLabel('Precio unitario').fill('12,5')
  await page.getByRole('button', { name: 'Guardar producto' }).click()
  await page.waitForLoadState('load')
  expect(await page.locator('#f-precio_unitario-error').textContent()).toBe('Escriba el precio en pesos, sin decimales: 12.500 o 12500.')
  expect(await page.getByLabel('Precio unitario').inputValue()).toBe('12,5')
  expect(await fitsWidth(page)).toBe(true)
  await screenshot(page, '35-producto-error-390')
  // The columns kept on a phone: the name, the RUT, the price.
  await page.goto(`${serve.url}/console/clientes`)
  expect(await page.locator('td.rut').first().isVisible()).toBe(true)
  expect(await page.getByRole('columnheader', { name: 'Giro' }).isVisible()).toBe(false)
  await page.goto(`${serve.url}/console/productos`)
  expect(await page.getByRole('cell', { name: '$ 12.500' }).isVisible()).toBe(true)

  await page.getByRole('link', { name: 'Eliminar Taladro percutor 750 W' }).click()
  await page.waitForURL(/\/eliminar$/)
  expect(await page.getByRole('heading', { name: '¿Eliminar Taladro percutor 750 W (código TAL-750)?' }).isVisible()).toBe(true)
  await screenshot(page, '34-producto-eliminar-390')
  await page.getByRole('button', { name: 'Sí, eliminar producto' }).click()
  await page.waitForURL('**/console/productos?aviso=eliminado')
  expect(await page.getByText('Producto eliminado').isVisible()).toBe(true)
  expect((await apiGet('/productos')).data).toEqual([])
  expect(await apiGet('/productos/search?q=taladro')).toEqual([])
  await context.close()
}, 60_000)
