// Folios from the SII in headless Chromium (DESIGN §17, issue 30): a company user asks the SII for a CAF with the form
// on Folios, sees the request En curso in the history, and, once the folios job has worked it, the row turns
// Descargado by itself (the history refreshes while a request is open, then reloads the page) with the new CAF in its
// table; then turns automatic mode on. The server runs in this process against the simulator's folio pages, so the
// test can run the job's pass itself. Screenshots in .test-results/console/.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { runFoliosPass } from '../../src/services/caf-solicitudes'
import { startFoliosWorld, type FoliosWorld } from '../support/folios'
import { launchChromium, loginWithApiKey, newContext, screenshot } from '../support/browser'
import { API } from '../support/received'
import type { Tenant, TestServer } from '../support/server'

setDefaultTimeout(90_000)

let world: FoliosWorld
let s: TestServer
let t: Tenant
let browser: Browser

beforeAll(async () => {
  world = await startFoliosWorld('Librería El Quijote SpA')
  ;({ s, t } = world)
  browser = await launchChromium()
}, 120_000)
afterAll(async () => {
  await browser?.close()
  await world?.stop()
})

const api = async (path: string) => (await s.request('GET', `${API}${path}`, { headers: { 'X-Api-Key': t.readKey } })).json

test('a CAF asked for from the form turns Descargado in the history by itself; automatic mode turned on', async () => {
  const context = await newContext(browser)
  const page = await context.newPage()
  await loginWithApiKey(page, s.url, t.writeKey)
  await page.getByRole('navigation', { name: 'Secciones' }).getByRole('link', { name: 'Folios' }).click()
  await page.waitForURL('**/console/folios')

  const form = page.locator('#pedir-sii')
  await form.getByLabel('Tipo de documento').selectOption('33')
  await form.getByLabel('Cantidad de folios').fill('25')
  await form.getByRole('button', { name: 'Pedir al SII' }).click()
  await page.waitForURL(/\/console\/folios\?aviso=solicitado&solicitud=/)
  const id = new URL(page.url()).searchParams.get('solicitud')!
  expect(await page.getByRole('status').innerText()).toContain('Folios pedidos al SII: tipo 33, 25 folios.')
  const row = page.locator(`#solicitud-${id}`)
  // En curso until a pass works it (the server's own scheduler may already be at it: either is the request open).
  expect(['en_curso', 'descargado']).toContain((await row.getAttribute('data-estado')) ?? '')
  await screenshot(page, 'folios-solicitud-en-curso')

  // The job's pass, as the scheduler runs it; the page is not touched by the test from here until the row changes.
  await runFoliosPass(s.server.deps)
  await page.locator(`#solicitud-${id}[data-estado="descargado"]`).waitFor({ timeout: 20_000 })
  const done = await api(`/caf/solicitudes/${id}`)
  expect(done).toMatchObject({ estado: 'descargado', folio_desde: 1, folio_hasta: 25 })
  expect(await page.locator(`#solicitud-${id}`).innerText()).toContain('Descargado')
  expect(await page.locator(`#solicitud-${id}`).innerText()).toContain('1 – 25')
  // The reload after the last open request brought the new CAF into its table.
  await page.locator(`#caf-${done.caf_id}`).waitFor({ timeout: 10_000 })
  expect(await page.locator(`#caf-${done.caf_id}`).innerText()).toContain('1 – 25 disponibles')
  await screenshot(page, 'folios-solicitud-descargado')

  // Automatic mode, on for boletas (39).
  const auto = page.locator('#automaticos')
  await auto.getByText('Cambiar el modo automático').click()
  await auto.getByLabel('Pedir folios automáticamente').check()
  await auto.getByLabel('39 · BOLETA ELECTRÓNICA', { exact: true }).check()
  await auto.getByLabel('Folios por solicitud').fill('50')
  await auto.getByLabel('Umbral de folios libres').fill('5')
  await auto.getByRole('button', { name: 'Guardar modo automático' }).click()
  await page.waitForURL(/aviso=automaticos/)
  expect(await page.getByRole('status').innerText()).toContain('Folios automáticos guardados: activados.')
  expect(await page.locator('#automaticos dl').innerText()).toContain('Activado')
  expect(await page.locator('#automaticos dl').innerText()).toContain('39 · BOLETA ELECTRÓNICA')
  expect(await api('/empresa/folios-automaticos')).toMatchObject({ activo: true, tipos: [39], cantidad: 50, umbral: 5 })
  await screenshot(page, 'folios-automaticos')
  await context.close()
})
