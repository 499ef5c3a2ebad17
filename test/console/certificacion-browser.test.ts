// The Certificación screen (DESIGN §15 "Console") in headless Chromium against the compiled binary (`serve --demo`, the
// simulated SII; the demo company is in certificación): the menu entry, the SII's set file chosen in a real file input,
// its cases, the exchange rate typed the Chilean way, «Emitir y enviar el set» and the folios and track ids it leaves,
// the libros sent; every control labelled; at 390 px nothing scrolls sideways. Screenshots in .test-results/console/.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { ensureBinary, runBinary, startServe, type ServeProcess } from '../support/binary'
import { launchChromium, loginWithApiKey, newContext, screenshot } from '../support/browser'
import { tempDir } from '../support/server'

const SET = join(import.meta.dir, '../fixtures/sii/sets/sintetico-2026.txt')
const PHONE = { width: 390, height: 844 }

let serve: ServeProcess
let browser: Browser
let dir: string
let key: string

beforeAll(async () => {
  await ensureBinary()
  dir = tempDir('timbre-console-certificacion-')
  serve = await startServe(['--data-dir', dir, '--demo', '--sii', 'simulado', '--submit-every', '1s', '--track-every', '1s', '--inbox-every', '1h', '--rate-limit', '0'])
  const banner = Date.now() + 15_000
  while (!serve.stderr().includes('API key') && Date.now() < banner) await Bun.sleep(20)
  key = readFileSync(join(dir, 'demo-api-key'), 'utf8').trim()
  // The simulated SII accepts a set envío only for a set it gave the company: record the fixture, as a person
  // rehearsing a real set does (`timbre sii-simulator set --from`).
  const empresa = (await (await fetch(`${serve.url}/api/v1/billing/empresa`, { headers: { 'X-Api-Key': key } })).json()) as { rut: string }
  const recorded = runBinary(['sii-simulator', 'set', '--rut', empresa.rut, '--from', SET, '--data-dir', dir])
  if (recorded.code !== 0) throw new Error(`sii-simulator set: ${recorded.stderr}`)
  browser = await launchChromium()
}, 120_000)
afterAll(async () => {
  await browser?.close()
  if (serve && serve.proc.exitCode === null) await serve.terminate()
})

async function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
      .filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute('aria-label'))
      .map((el) => el.outerHTML.slice(0, 120)),
  )
}

test('the set uploaded from a file input, issued and sent from the page: folios and track ids appear', async () => {
  const context = await newContext(browser)
  const page = await context.newPage()
  await loginWithApiKey(page, serve.url, key)
  await page.getByRole('navigation', { name: 'Secciones' }).getByRole('link', { name: 'Certificación' }).click()
  await page.waitForURL('**/console/certificacion')
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Certificación ante el SII')
  expect(await page.locator('ol.etapas > li').count()).toBe(5)

  await page.getByLabel('Archivo del set de pruebas').setInputFiles(SET)
  await page.getByRole('button', { name: 'Cargar el set' }).click()
  await page.waitForURL('**/console/certificacion?aviso=cargado')
  expect(await page.locator('table.casos tbody tr').count()).toBe(12)
  expect(await unlabelledControls(page)).toEqual([])

  await page.getByLabel('Tipo de cambio (pesos por DOLAR USA)').fill('950,25')
  await page.getByRole('button', { name: 'Emitir y enviar el set' }).click()
  await page.waitForURL('**/console/certificacion?aviso=emitido', { timeout: 90_000 })
  expect(await page.locator('table.casos tbody td.num a').count()).toBe(12)
  // An envío the sii-submit job claimed first (every second here) is uploaded by the job, not by the request: its
  // track id shows once that upload ends, on a reload (the request never uploads an envelope the job holds).
  const uploaded = Date.now() + 30_000
  while (Date.now() < uploaded && (await page.locator('table.envios code.copiable').count()) < 3) {
    await Bun.sleep(500)
    await page.reload()
  }
  const trackIds = await page.locator('table.envios code.copiable').allTextContents()
  expect(trackIds).toHaveLength(3)
  for (const id of trackIds) expect(id).toMatch(/^\d{10}$/)

  // The jobs follow the envíos to the SII's answer; a reload shows it.
  const deadline = Date.now() + 45_000
  while (Date.now() < deadline && (await page.locator('table.casos .badge', { hasText: 'Aceptado' }).count()) < 12) {
    await Bun.sleep(1000)
    await page.reload()
  }
  expect(await page.locator('table.casos .badge', { hasText: 'Aceptado' }).count()).toBe(12)

  // The libros the set asks for, built from those documents and sent from the page.
  await page.getByRole('button', { name: 'Enviar los libros al SII' }).click()
  await page.waitForURL('**/console/certificacion?aviso=libros', { timeout: 60_000 })
  expect(await page.locator('table.libros code.copiable').count()).toBe(3)
  await screenshot(page, '30-certificacion')
  await context.close()
}, 180_000)

test('390 px: the page with its sets and envíos does not scroll sideways, and the stages stay readable', async () => {
  const context = await newContext(browser, PHONE)
  const page = await context.newPage()
  await loginWithApiKey(page, serve.url, key)
  await page.goto(`${serve.url}/console/certificacion`)
  expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0)
  // The tables fold as the documents list does: caso, folio and estado of each case, envío, track id and estado of
  // each envío stay in view, with no sideways scroll inside their card either.
  const outside = await page.evaluate(() =>
    [...document.querySelectorAll('ol.etapas h3, .siguiente-paso, ol.etapas .badge, table.casos td:not(.col-menor), table.envios td:not(.col-menor), table.libros td:not(.col-menor)')]
      .map((el) => ({ el: el.outerHTML.slice(0, 80), r: el.getBoundingClientRect() }))
      .filter(({ r }) => r.width === 0 || r.left < 0 || r.right > window.innerWidth)
      .map(({ el }) => el),
  )
  expect(outside).toEqual([])
  expect(await page.locator('table.casos tbody tr').count()).toBe(12)
  expect(await page.locator('table.envios code.copiable').count()).toBe(3)
  expect(await page.locator('table.libros code.copiable').count()).toBe(3)
  await screenshot(page, '31-certificacion-telefono')
  await context.close()
}, 60_000)
