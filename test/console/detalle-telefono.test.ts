// Issue 27 "The detail page", "Consistency" and "On a phone (390 px)" in headless Chromium against the compiled binary
// (`serve --demo`, the simulated SII): the detail shows the receptor as issued across the page's width, not today's
// cliente; dates read dd-mm-aaaa; and at 390×844 no main screen scrolls sideways, the lists keep folio, total and
// estado in view, the menu wraps, and the company selector shows the whole RUT. Screenshots in .test-results/console/.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { ensureBinary, runBinary, startServe, type ServeProcess } from '../support/binary'
import { launchChromium, newContext, screenshot, loginWithApiKey } from '../support/browser'
import { tempDir } from '../support/server'

const PHONE = { width: 390, height: 844 }
const RECEPTOR = {
  rut: '76543210-3',
  razon_social: 'Comercializadora de Artículos de Ferretería y Construcción Los Andes del Sur SpA',
  giro: 'Venta al por mayor de materiales',
  direccion: 'Av. Providencia 1234, oficina 56',
  comuna: 'Providencia',
  ciudad: 'Santiago',
  email: 'dte.intercambio@losandesdelsur.cl',
}

let serve: ServeProcess
let browser: Browser
let dir: string
let key: string
let dteId: string

const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${serve.url}/api/v1/billing${path}`, {
    method,
    headers: { 'X-Api-Key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, json: (await res.json()) as any }
}

beforeAll(async () => {
  await ensureBinary()
  dir = tempDir('timbre-console-detalle-')
  serve = await startServe(['--data-dir', dir, '--demo', '--sii', 'simulado', '--submit-every', '1s', '--track-every', '1s', '--inbox-every', '1s', '--rate-limit', '0'])
  const banner = Date.now() + 15_000
  while (!serve.stderr().includes('API key') && Date.now() < banner) await Bun.sleep(20)
  key = readFileSync(join(dir, 'demo-api-key'), 'utf8').trim()
  const issued = await api('POST', '/dte', { tipo_dte: 33, receptor: RECEPTOR, detalle: [{ nombre: 'Taladro percutor 750W', cantidad: 2, precio: 45990 }] }, { 'Idempotency-Key': crypto.randomUUID() })
  if (issued.status !== 201) throw new Error(`issue: ${issued.status} ${JSON.stringify(issued.json)}`)
  dteId = issued.json.id
  // Today's cliente says something else: the detail must keep what was issued.
  const cliente = await api('POST', '/clientes', { rut: RECEPTOR.rut, razon_social: 'Los Andes (nombre nuevo)', giro: 'Giro cambiado después', comuna: 'Las Condes', email: 'otro@correo.cl' })
  if (cliente.status !== 201) throw new Error(`cliente: ${cliente.status}`)
  const deadline = Date.now() + 45_000
  while ((await api('GET', `/dte/${dteId}`)).json.estado !== 'aceptado' && Date.now() < deadline) await Bun.sleep(250)
  while ((await api('GET', '/recibidos')).json.items?.length !== 2 && Date.now() < deadline) await Bun.sleep(250)
  browser = await launchChromium()
}, 90_000)
afterAll(async () => {
  await browser?.close()
  if (serve && serve.proc.exitCode === null) await serve.terminate()
})

async function loginWithKey(page: Page): Promise<void> {
  await loginWithApiKey(page, serve.url, key)
}

/** The texts of a `dl.facts` inside the section headed `heading`, term → value. */
async function factsOf(page: Page, heading: string): Promise<Record<string, string>> {
  return page.locator(`section:has(> h2:text-is("${heading}")) dl.facts`).evaluate((dl) => {
    const out: Record<string, string> = {}
    const kids = [...dl.children]
    for (let i = 0; i + 1 < kids.length; i += 2) out[kids[i]!.textContent!.trim()] = kids[i + 1]!.textContent!.trim()
    return out
  })
}

const horizontalOverflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)

/** Each cell's box lies inside the viewport (visible, not cut off at the right edge, not scrolled out of a wrapper). */
async function cellsInView(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((sel) => {
    const problems: string[] = []
    for (const el of document.querySelectorAll(sel)) {
      const r = el.getBoundingClientRect()
      if (r.width === 0 || r.height === 0) problems.push(`${sel}: hidden`)
      else if (r.left < 0 || r.right > window.innerWidth) problems.push(`${sel}: ${Math.round(r.left)}–${Math.round(r.right)} of ${window.innerWidth}`)
    }
    return problems
  }, selector)
}

test('desktop: the detail shows the receptor as issued (giro, dirección, comuna, ciudad, email), side by side with the emisor, dates dd-mm-aaaa', async () => {
  const context = await newContext(browser)
  const page = await context.newPage()
  await loginWithKey(page)
  await page.goto(`${serve.url}/console/documentos/${dteId}`)
  expect(await factsOf(page, 'Receptor')).toEqual({
    'Razón social': RECEPTOR.razon_social,
    RUT: '76.543.210-3',
    Giro: RECEPTOR.giro,
    Dirección: RECEPTOR.direccion,
    Comuna: RECEPTOR.comuna,
    Ciudad: RECEPTOR.ciudad,
    Correo: RECEPTOR.email,
  })
  const html = await page.content()
  expect(html).not.toContain('Giro cambiado después')
  expect(html).not.toContain('Los Andes (nombre nuevo)')
  // Two boxes across the page, not two narrow columns: each about half of main's width, on one row.
  const boxes = await page.locator('.partes > section').evaluateAll((els) => els.map((e) => e.getBoundingClientRect()).map((r) => ({ top: r.top, width: r.width })))
  const main = await page.locator('main').evaluate((m) => m.getBoundingClientRect().width)
  expect(boxes).toHaveLength(2)
  expect(boxes[0]!.top).toBe(boxes[1]!.top)
  for (const b of boxes) expect(b.width).toBeGreaterThan(main * 0.45)
  // One date format: the resumen's fecha de emisión and creado as dd-mm-aaaa (hh:mm).
  const resumen = await factsOf(page, 'Resumen')
  expect(resumen['Fecha de emisión']).toMatch(/^\d{2}-\d{2}-\d{4}$/)
  expect(resumen.Creado).toMatch(/^\d{2}-\d{2}-\d{4} \d{2}:\d{2}$/)
  expect(resumen.Estado).toBe('Aceptado')
  await screenshot(page, '20-detalle-escritorio')
  await context.close()
}, 60_000)

test('390 px: no main screen scrolls sideways; the menu wraps; folio, total and estado stay in view on both lists', async () => {
  const context = await newContext(browser, PHONE)
  const page = await context.newPage()
  await loginWithKey(page)
  // The menu wraps onto lines of its own: every section link is inside the viewport.
  expect(await cellsInView(page, 'nav[aria-label="Secciones"] a')).toEqual([])
  const sections = await page.locator('nav[aria-label="Secciones"] a').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).pathname))
  expect(sections.length).toBeGreaterThanOrEqual(7)
  const recibidoId = (await api('GET', '/recibidos')).json.items[0].id as string
  const paths = [...sections, `/console/documentos/${dteId}`, `/console/recibidos/${recibidoId}`]
  const overflow: Array<{ path: string; px: number }> = []
  for (const path of paths) {
    await page.goto(serve.url + path)
    const px = await horizontalOverflow(page)
    if (px > 0) overflow.push({ path, px })
  }
  expect(overflow).toEqual([])

  await page.goto(`${serve.url}/console/documentos`)
  expect(await page.locator('table.plegable tbody tr').count()).toBeGreaterThan(0)
  for (const cell of ['td.folio', 'td.num', 'td:not(.col-menor) .badge']) expect(await cellsInView(page, `table.plegable tbody ${cell}`)).toEqual([])
  expect(await page.locator('table.plegable tbody td.folio', { hasText: 'Comercializadora de Artículos' }).count()).toBe(1)
  await screenshot(page, '21-documentos-telefono')

  await page.goto(`${serve.url}/console/recibidos`)
  expect(await page.locator('table.plegable tbody tr').count()).toBe(2)
  for (const cell of ['td.folio', 'td.num', 'td:not(.col-menor) .badge']) expect(await cellsInView(page, `table.plegable tbody ${cell}`)).toEqual([])
  await screenshot(page, '22-recibidos-telefono')

  await page.goto(`${serve.url}/console/documentos/${dteId}`)
  expect((await factsOf(page, 'Receptor')).Giro).toBe(RECEPTOR.giro)
  await screenshot(page, '23-detalle-telefono')
  await context.close()
}, 90_000)

test('390 px, administrator: the company selector shows the whole RUT with dots and dash', async () => {
  const link = runBinary(['console', 'link', '--url', serve.url, '--data-dir', dir])
  expect(link.code).toBe(0)
  const context = await newContext(browser, PHONE)
  const page = await context.newPage()
  await page.goto(link.json().url as string)
  await page.getByRole('button', { name: 'Entrar como administrador' }).click()
  await page.waitForLoadState('load')
  const select = page.locator('#empresa-activa')
  // The demo company, through the selector itself.
  await select.selectOption({ index: (await select.locator('option').count()) - 1 })
  await page.getByRole('button', { name: 'Cambiar' }).click()
  await page.waitForURL('**/console/documentos')
  const shown = await select.evaluate((el) => {
    const s = el as HTMLSelectElement
    const text = s.options[s.selectedIndex]?.text ?? ''
    const ctx = document.createElement('canvas').getContext('2d')!
    const style = getComputedStyle(s)
    ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`
    const room = s.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 16 // the arrow
    const rut = /^[\d.]+-[\dK]/.exec(text)?.[0] ?? ''
    return { text, rut, rutFits: ctx.measureText(rut).width <= room, right: s.getBoundingClientRect().right }
  })
  expect(shown.rut).toMatch(/^\d{1,2}\.\d{3}\.\d{3}-[\dK]$/)
  expect(shown.rutFits).toBe(true)
  expect(shown.right).toBeLessThanOrEqual(PHONE.width)
  expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0)
  await screenshot(page, '24-selector-telefono')
  await context.close()
}, 60_000)

test('the certificate page names the holder, the authority and both ends of the validity', async () => {
  const context = await newContext(browser)
  const page = await context.newPage()
  await loginWithKey(page)
  await page.goto(`${serve.url}/console/certificado`)
  const facts = await factsOf(page, 'Certificado activo')
  const status = (await api('GET', '/empresa/certificado')).json
  expect(status.titular).toEqual(expect.any(String))
  expect(facts.Titular).toBe(status.titular)
  expect(facts['Emitido por']).toBe(status.emisor_certificado)
  expect(facts['Vigente desde']).toBe(status.fecha_inicio_vigencia.split('-').reverse().join('-'))
  expect(facts.Vence).toMatch(/^\d{2}-\d{2}-\d{4}$/)
  await screenshot(page, '25-certificado')
  await context.close()
}, 60_000)
