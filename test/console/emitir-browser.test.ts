// The issue form for every type (issue 27) in headless Chromium against the compiled binary: a 46 with its IVA
// retention, a 110 in dollars with 12,5 as its price, and a 43 with its commission, each typed as a person types it,
// issued from the form and checked through the API (record and signed XML); 12.500 read as twelve thousand five
// hundred; blocks and required marks following the type as it changes; a bad form answered in words beside its
// fields. Screenshots of the form for 33, 43, 46 and 110 go to .test-results/console/.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { santiagoDate } from '../../src/clock'
import { createCompanyWithKey, ensureBinary, startServe, type ServeProcess } from '../support/binary'
import { launchChromium, newContext, screenshot, loginWithApiKey } from '../support/browser'
import { signer } from '../support/issuance'
import { exportPfx, makeTestCaf } from '../support/pki'
import { tempDir } from '../support/server'

const EMPRESA = { rut: '76086428-5', razon: 'Comercial Ñandú Ltda.' }

let serve: ServeProcess
let browser: Browser
let key = ''

/** What no person should read on the page: the API's dot paths, `context.x`, API routes. */
const MACHINE_WORDS = /\b(?:tipo_dte|receptor|detalle|referencias|comisiones|impuestos_retenciones|descuentos_globales|export_data|context)\.[\w.]+|POST \/|\/api\/v1/

async function apiGet(path: string): Promise<Response> {
  return fetch(`${serve.url}/api/v1/billing${path}`, { headers: { 'X-Api-Key': key } })
}

async function provision(): Promise<void> {
  const h = { 'X-Api-Key': key, 'content-type': 'application/json' }
  const pfx = Buffer.from(exportPfx(signer(), 'x', '3des')).toString('base64')
  const cert = await fetch(`${serve.url}/api/v1/billing/empresa/certificado/pfx`, { method: 'POST', headers: h, body: JSON.stringify({ pfx_base64: pfx, password: 'x' }) })
  expect(cert.status).toBe(201)
  for (const tipoDte of [33, 43, 46, 110]) {
    const caf = makeTestCaf({ rut: EMPRESA.rut, razonSocial: EMPRESA.razon, tipoDte, folioDesde: 1, folioHasta: 10, fechaAutorizacion: santiagoDate(new Date(Date.now() - 86_400_000)) })
    const res = await fetch(`${serve.url}/api/v1/billing/caf`, { method: 'POST', headers: h, body: JSON.stringify({ tipo_dte: tipoDte, caf_xml: caf.xml }) })
    expect(res.status).toBe(201)
  }
}

beforeAll(async () => {
  await ensureBinary()
  const dir = tempDir('timbre-emitir-e2e-')
  key = createCompanyWithKey(dir, EMPRESA.rut, EMPRESA.razon)
  // The SII jobs stay still: each document stays as the form issued it.
  serve = await startServe(['--data-dir', dir, '--sii', 'simulado', '--rate-limit', '0', '--submit-every', '1h', '--track-every', '1h'])
  await provision()
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  if (serve && serve.proc.exitCode === null) await serve.terminate()
})

async function openForm(): Promise<Page> {
  const context = await newContext(browser)
  const page = await context.newPage()
  await loginWithApiKey(page, serve.url, key)
  await page.goto(`${serve.url}/console/documentos/nuevo`)
  return page
}

const field = (page: Page, name: string) => page.locator(`[name="${name}"]`)

async function fillReceptor(page: Page, values: Record<string, string>): Promise<void> {
  for (const [name, value] of Object.entries(values)) await field(page, `receptor.${name}`).fill(value)
}

/** Issues with "Emitir documento" and returns the new DTE's record and signed XML, read through the API. */
async function issue(page: Page): Promise<{ record: any; xml: string }> {
  await page.getByRole('button', { name: 'Emitir documento' }).click()
  await page.waitForURL(/\/console\/documentos\/[0-9a-f-]{36}/)
  const id = /documentos\/([0-9a-f-]{36})/.exec(page.url())![1]
  const record = await (await apiGet(`/dte/${id}`)).json()
  const xml = new TextDecoder('latin1').decode(await (await apiGet(`/dte/${id}/xml`)).arrayBuffer())
  return { record, xml }
}

/** The totals box once it shows `text` (htmx posts the form as it is typed). */
async function totalsShow(page: Page, text: string): Promise<void> {
  await page.locator('#totales', { hasText: text }).waitFor({ timeout: 10_000 })
}

test('a 33: 12.500 is read as twelve thousand five hundred; blocks and required marks follow the type as it changes', async () => {
  const page = await openForm()
  await fillReceptor(page, { rut: '76.543.210-3', razon_social: 'Comercializadora Los Andes SpA', giro: 'Venta al por mayor', direccion: 'Av. Providencia 1234', comuna: 'Providencia', ciudad: 'Santiago' })
  await field(page, 'detalle.0.nombre').fill('Malla raschel')
  await field(page, 'detalle.0.cantidad').fill('1')
  await field(page, 'detalle.0.precio').fill('12.500')
  // 12 500 neto, 2 375 IVA, 14 875 total.
  await totalsShow(page, '$ 14.875')
  expect(await page.locator('#totales').textContent()).toContain('$ 12.500')
  // Script hides what only the page without script needs, and what a 33 does not use.
  expect(await page.getByRole('button', { name: 'Mostrar los campos de este tipo' }).isVisible()).toBe(false)
  expect(await page.locator('#f-export_data').isVisible()).toBe(false)
  expect(await page.locator('#f-comisiones').isVisible()).toBe(false)
  expect(await page.locator('label[for="f-receptor-giro"] .required-mark').isVisible()).toBe(true)
  await screenshot(page, 'emitir-33')

  await page.locator('select[name=tipo_dte]').selectOption('61')
  expect(await page.locator('label[for="f-receptor-giro"] .required-mark').isVisible()).toBe(false)
  expect(await field(page, 'receptor.giro').evaluate((el) => (el as HTMLInputElement).required)).toBe(false)
  expect(await page.locator('#f-referencias').evaluate((el) => (el as HTMLDetailsElement).open)).toBe(true)
  await page.locator('select[name=tipo_dte]').selectOption('110')
  expect(await page.locator('#f-export_data').isVisible()).toBe(true)
  expect(await page.locator('label[for="f-receptor-ciudad"] .required-mark').isVisible()).toBe(true)
  expect(await field(page, 'receptor.ciudad').getAttribute('aria-required')).toBe('true')
  await page.context().close()
}, 60_000)

test('a bad form is answered in words beside its fields, with what was typed kept and nothing issued', async () => {
  const before = (await (await apiGet('/dte')).json()).total_count
  const page = await openForm()
  await fillReceptor(page, { rut: '76.543.210-4', razon_social: 'Comercializadora Los Andes SpA', giro: 'Venta al por mayor', direccion: 'Av. Providencia 1234', comuna: 'Providencia' })
  await field(page, 'detalle.0.nombre').fill('Malla raschel')
  await field(page, 'detalle.0.cantidad').fill('dos')
  await field(page, 'detalle.0.precio').fill('12,5')
  await page.getByRole('button', { name: 'Emitir documento' }).click()
  await page.waitForLoadState('load')
  expect(await page.locator('#f-detalle-0-precio-error').textContent()).toContain('Un monto en pesos es un número entero')
  expect(await page.locator('#f-receptor-rut-error').textContent()).toContain('RUT inválido')
  expect(await page.locator('#f-detalle-0-cantidad-error').isVisible()).toBe(true)
  const summary = (await page.locator('.error-summary').innerText()).replace(/\s+/g, ' ')
  expect(summary).toContain('Línea 1, Precio unitario:')
  expect(summary).toContain('Receptor, RUT:')
  expect(await field(page, 'detalle.0.precio').inputValue()).toBe('12,5')
  // Focus lands on the summary, and no text on the page is a dot path, a context key or an API route.
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('errores')
  expect((await page.locator('body').innerText()).match(MACHINE_WORDS)).toBeNull()
  await screenshot(page, 'emitir-errores')
  expect((await (await apiGet('/dte')).json()).total_count).toBe(before)
  await page.context().close()
}, 60_000)

test('a 46 with its IVA retention, issued from the form and checked through the API', async () => {
  const page = await openForm()
  await page.locator('select[name=tipo_dte]').selectOption('46')
  await fillReceptor(page, { rut: '12.345.678-5', razon_social: 'Juan Pérez Araya', giro: 'Recolección de chatarra', direccion: 'Calle Uno 45', comuna: 'Puente Alto', ciudad: 'Santiago' })
  await field(page, 'detalle.0.nombre').fill('Compra de cobre recuperado')
  await field(page, 'detalle.0.cantidad').fill('50')
  await field(page, 'detalle.0.unidad').fill('KG')
  await field(page, 'detalle.0.precio').fill('2.000')
  await field(page, 'detalle.0.cod_imp_adic').selectOption('15')
  // Neto 100 000, IVA 19 000 retained in full: the total is the neto.
  await totalsShow(page, '−$ 19.000')
  await screenshot(page, 'emitir-46')
  const { record, xml } = await issue(page)
  expect(record).toMatchObject({ tipo_dte: 46, monto_neto: 100000, iva: 19000, monto_total: 100000 })
  expect(record.detalle).toEqual([{ nombre: 'Compra de cobre recuperado', cantidad: 50, unidad: 'KG', precio: 2000, cod_imp_adic: 15 }])
  expect(xml).toContain('<CodImpAdic>15</CodImpAdic>')
  expect(xml).toMatch(/<ImptoReten><TipoImp>15<\/TipoImp><TasaImp>19<\/TasaImp><MontoImp>19000<\/MontoImp><\/ImptoReten>/)
  await page.context().close()
}, 60_000)

test('a 110 in dollars with 12,5 as its price and the Customs data chosen by name, issued and checked through the API', async () => {
  const page = await openForm()
  await page.locator('select[name=tipo_dte]').selectOption('110')
  await fillReceptor(page, { rut: '55555555-5', razon_social: 'Andes Importers LLC', direccion: '1200 Brickell Ave, Suite 300', ciudad: 'Miami' })
  await field(page, 'export_data.tpo_moneda').selectOption('DOLAR USA')
  await field(page, 'export_data.tpo_cambio').fill('950,37')
  await field(page, 'export_data.forma_pago_exp').selectOption({ label: 'COBRANZA (cobranza a más de 1 año) (2)' })
  await field(page, 'export_data.modalidad_venta').selectOption({ label: 'A firme (1)' })
  await field(page, 'export_data.clausula_venta').selectOption({ label: 'FOB · Franco a bordo' })
  await field(page, 'export_data.total_clausula').fill('1.250')
  await field(page, 'export_data.via_transporte').selectOption({ label: 'Marítima, fluvial y lacustre (1)' })
  await field(page, 'export_data.puerto_embarque').selectOption({ label: 'San Antonio (906)' })
  await field(page, 'export_data.puerto_desembarque').selectOption({ label: 'Miami (Estados Unidos) (141)' })
  await field(page, 'export_data.pais_recep').selectOption({ label: 'Estados Unidos (225)' })
  await field(page, 'export_data.pais_dest').selectOption({ label: 'Estados Unidos (225)' })
  await field(page, 'export_data.tipo_bulto').selectOption({ label: 'Pallets' })
  await field(page, 'export_data.total_bultos').fill('2')
  await field(page, 'detalle.0.nombre').fill('Aceite de oliva extra virgen 500 ml')
  await field(page, 'detalle.0.cantidad').fill('100')
  await field(page, 'detalle.0.precio').fill('12,5')
  // 100 × 12,5 = 1 250 dollars; round(1 250 × 950,37) = 1 187 963 pesos.
  await totalsShow(page, 'DOLAR USA 1.250')
  expect(await page.locator('#totales').textContent()).toContain('$ 1.187.963')
  await screenshot(page, 'emitir-110')
  const { record, xml } = await issue(page)
  expect(record).toMatchObject({ tipo_dte: 110, moneda: 'DOLAR USA', monto_total_moneda: 1250, monto_total: 1187963 })
  expect(record.detalle[0]).toMatchObject({ cantidad: 100, precio: 12.5 })
  for (const element of ['<PrcItem>12.5</PrcItem>', '<TpoMoneda>DOLAR USA</TpoMoneda>', '<TpoCambio>950.37</TpoCambio>', '<CodModVenta>1</CodModVenta>', '<CodClauVenta>5</CodClauVenta>', '<CodViaTransp>1</CodViaTransp>', '<CodPtoEmbarque>906</CodPtoEmbarque>', '<CodPtoDesemb>141</CodPtoDesemb>', '<CodPaisRecep>225</CodPaisRecep>', '<FmaPagExp>2</FmaPagExp>'])
    expect(xml).toContain(element)
  await page.context().close()
}, 60_000)

test('a 43 with its commission, issued from the form and checked through the API', async () => {
  const page = await openForm()
  await page.locator('select[name=tipo_dte]').selectOption('43')
  // The type requires commissions: their list opens by itself.
  expect(await page.locator('#f-comisiones').evaluate((el) => (el as HTMLDetailsElement).open)).toBe(true)
  expect(await page.locator('[name="detalle.0.descuento_pct"]').isVisible()).toBe(false)
  await fillReceptor(page, { rut: '96.874.030-K', razon_social: 'Viña Concha del Toro S.A.', giro: 'Producción de vinos', direccion: 'Av. Nueva Tajamar 481', comuna: 'Las Condes', ciudad: 'Santiago' })
  await field(page, 'detalle.0.nombre').fill('Venta vino reserva según factura 1523')
  await field(page, 'detalle.0.tipo_doc_liq').fill('33')
  await field(page, 'detalle.0.cantidad').fill('100')
  await field(page, 'detalle.0.precio').fill('1.000')
  await field(page, 'comisiones.0.glosa').fill('Comisión de venta 8 %')
  await field(page, 'comisiones.0.tasa_comision').fill('8')
  await field(page, 'comisiones.0.val_com_neto').fill('8.000')
  await field(page, 'comisiones.0.val_com_exe').fill('0')
  // 100 000 neto + 19 000 IVA − (8 000 + 1 520 IVA of the commission) = 109 480.
  await totalsShow(page, '$ 109.480')
  await screenshot(page, 'emitir-43')
  const { record, xml } = await issue(page)
  expect(record).toMatchObject({ tipo_dte: 43, monto_neto: 100000, iva: 19000, monto_total: 109480 })
  expect(xml).toContain('<TpoDocLiq>33</TpoDocLiq>')
  expect(xml).toMatch(/<Comisiones><NroLinCom>1<\/NroLinCom><TipoMovim>C<\/TipoMovim><Glosa>Comisión de venta 8 %<\/Glosa><TasaComision>8<\/TasaComision><ValComNeto>8000<\/ValComNeto><ValComExe>0<\/ValComExe><ValComIVA>1520<\/ValComIVA><\/Comisiones>/)
  await page.context().close()
}, 60_000)

test('a form the server rendered for a 52, switched to a 33 with script, still issues: the hidden guía fields do not block it (review)', async () => {
  const page = await openForm()
  await page.locator('select[name=tipo_dte]').selectOption('52')
  // A refused 52 (submitted without the browser's checks): the server renders the form for the 52, ind_traslado required.
  const answered = page.waitForResponse((r) => r.request().method() === 'POST')
  await page.evaluate(() => (document.querySelector('select[name="tipo_dte"]') as HTMLSelectElement).form!.submit())
  expect((await answered).status()).toBe(400)
  await page.waitForLoadState('load')
  expect(await page.locator('select[name="ind_traslado"]').getAttribute('required')).not.toBeNull()
  await page.locator('select[name=tipo_dte]').selectOption('33')
  expect(await page.locator('select[name="ind_traslado"]').isDisabled()).toBe(true)
  await fillReceptor(page, { rut: '76.543.210-3', razon_social: 'Comercializadora Los Andes SpA', giro: 'Venta al por mayor', direccion: 'Av. Providencia 1234', comuna: 'Providencia', ciudad: 'Santiago' })
  await field(page, 'detalle.0.nombre').fill('Malla raschel')
  await field(page, 'detalle.0.cantidad').fill('1')
  await field(page, 'detalle.0.precio').fill('12.500')
  await page.getByRole('button', { name: 'Emitir documento' }).click()
  await page.waitForURL(/\/console\/documentos\/[0-9a-f-]{36}/)
  const id = /documentos\/([0-9a-f-]{36})/.exec(page.url())![1]!
  const dte = (await (await fetch(`${serve.url}/api/v1/billing/dte/${id}`, { headers: { 'X-Api-Key': key } })).json()) as { tipo_dte: number; monto_total: number }
  expect(dte).toMatchObject({ tipo_dte: 33, monto_total: 14875 })
  await page.context().close()
}, 60_000)
