// Cierre del mes (DESIGN §16 "Console") in headless Chromium: the instance administrator enters by the one-time link,
// follows the menu to the month of every company, and reads each company's row (RCV state, findings, débito, crédito,
// IVA a pagar or remanente) with the figures this file sums from the RCV copies it stored; a row's «Ver» opens that
// company's month; at 390 px nothing scrolls sideways. The server runs in this process (not the compiled binary, as
// certificacion-browser does) because the copies are stored by the real sync service with a fake portal client, which
// only an in-process server's deps can take. Screenshots in .test-results/console/.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { formatRut } from '../../src/console/forms'
import { formatPesos } from '../../src/domain/numero-cl'
import { createAdminLink } from '../../src/services/console-sessions'
import { periodoAnterior, periodoOf } from '../../src/services/rcv'
import { launchChromium, newContext, screenshot } from '../support/browser'
import { uploadCertificate } from '../support/issuance'
import { detalleRcv, storeMirror } from '../support/rcv-mirror'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

setDefaultTimeout(60_000)

const PHONE = { width: 390, height: 844 }
const P = periodoAnterior(periodoOf(new Date()))
const dia = (d: number) => `${P.slice(0, 4)}-${P.slice(4, 6)}-${String(d).padStart(2, '0')}`
const PROVEEDOR = { rut: '76086428-5', razonSocial: 'Ferretería Ñandú Ltda.' }
const CLIENTE = { rut: '77777777-7', razonSocial: 'Cliente Mayorista SpA' }

let s: TestServer
let browser: Browser
/** Each company with the IVA of the documents its RCV copy holds (none for the last: never read). */
let companies: Array<{ t: Tenant; ventas: number[]; compras: number[]; estado: string }>

beforeAll(async () => {
  s = await startTestServer({ flags: { '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  const a = await s.tenant(testRut(), 'Panadería La Espiga SpA')
  const b = await s.tenant(testRut(), 'Importadora del Pacífico Ltda.')
  const c = await s.tenant(testRut(), 'Almacén Sin Copia SpA')
  companies = [
    { t: a, ventas: [38_000, 9_500, 1_900], compras: [19_000], estado: 'Copia al día' },
    { t: b, ventas: [19_000], compras: [57_000, 3_800], estado: 'Copia al día' },
    { t: c, ventas: [], compras: [], estado: 'Sin leer del SII' },
  ]
  for (const { t, ventas, compras } of companies.slice(0, 2)) {
    await uploadCertificate(s, t)
    await storeMirror(s.server.deps, t.empresa.id, P, {
      ventas: ventas.map((iva, i) => detalleRcv({ ...CLIENTE, folio: 100 + i, fecha: dia(3 + i), neto: Math.round(iva / 0.19), iva })),
      compras: { registro: compras.map((iva, i) => detalleRcv({ ...PROVEEDOR, folio: 700 + i, fecha: dia(10 + i), neto: Math.round(iva / 0.19), iva })) },
    })
  }
  browser = await launchChromium()
}, 120_000)
afterAll(async () => {
  await browser?.close()
  await s?.stop()
})

async function enterAsAdmin(page: Page): Promise<void> {
  const { token } = createAdminLink(s.server.deps)
  await page.goto(`${s.url}/console/enlace?token=${token}`)
  await page.getByRole('button', { name: 'Entrar como administrador' }).click()
  await page.waitForURL('**/console/empresas')
}

const sum = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0)

/** The visible text of each cell of a company's row, by the cell's class. */
async function rowOf(page: Page, t: Tenant): Promise<Record<string, string>> {
  return page.locator(`tr[data-empresa="${t.empresa.id}"]`).evaluate((tr) =>
    Object.fromEntries([...tr.querySelectorAll('td')].map((td, i) => [td.classList[td.classList.length - 1] ?? String(i), (td as HTMLElement).innerText.replace(/\s+/g, ' ').trim()])),
  )
}

test('the administrator\'s month: each company\'s row with its RCV state, findings, débito, crédito and IVA', async () => {
  const context = await newContext(browser)
  const page = await context.newPage()
  await enterAsAdmin(page)
  await page.getByRole('navigation', { name: 'Secciones' }).getByRole('link', { name: 'Cierre del mes' }).click()
  // No company chosen yet: the menu entry opens the month of every company, on the month being closed.
  await page.waitForURL('**/console/cierre-mes/empresas')
  expect(await page.getByLabel('Período tributario').inputValue()).toBe(P)
  expect(await page.locator('#mes-empresas tbody tr').count()).toBe(companies.length)
  for (const { t, ventas, compras, estado } of companies) {
    const row = await rowOf(page, t)
    expect(row.empresa).toContain(t.empresa.razon_social)
    expect(row.empresa).toContain(formatRut(t.empresa.rut))
    expect(row.rcv).toBe(estado)
    // Every document of a copy is one the company never issued or received in Timbre: each is a finding.
    expect(row.hallazgos).toBe(String(ventas.length + compras.length))
    expect(row.debito).toBe(formatPesos(sum(ventas)))
    expect(row.credito).toBe(formatPesos(sum(compras)))
    const iva = sum(ventas) - sum(compras)
    expect(row.iva).toBe(iva < 0 ? `Remanente ${formatPesos(-iva)}` : formatPesos(iva))
  }
  await screenshot(page, '40-cierre-mes-empresas')

  // «Ver» on the remanente's row: the console switches to that company and shows its month.
  const b = companies[1]!
  await page.getByRole('button', { name: `Ver el cierre de ${b.t.empresa.razon_social}` }).click()
  await page.waitForURL(`**/console/cierre-mes?periodo=${P}`)
  expect(await page.locator('#f29-77').innerText()).toContain(formatPesos(sum(b.compras) - sum(b.ventas)))
  expect(await page.locator('#estado-rcv').innerText()).toBe('Copia al día')
  await screenshot(page, '41-cierre-mes-empresa')
  await context.close()
})

test('390 px: the month table and a company\'s month do not scroll sideways; figures and actions stay in view', async () => {
  const context = await newContext(browser, PHONE)
  const page = await context.newPage()
  await enterAsAdmin(page)
  await page.goto(`${s.url}/console/cierre-mes/empresas?periodo=${P}`)
  const outside = () =>
    page.evaluate(() =>
      [...document.querySelectorAll('table.plegable td:not(.col-menor), table.plegable td button')]
        .map((el) => ({ el: el.outerHTML.slice(0, 80), r: el.getBoundingClientRect() }))
        .filter(({ r }) => r.width === 0 || r.left < 0 || r.right > window.innerWidth)
        .map(({ el }) => el),
    )
  expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0)
  expect(await outside()).toEqual([])
  // The folded columns come back under the company's name on a phone.
  const a = companies[0]!
  expect((await rowOf(page, a.t)).empresa).toContain(`Débito ${formatPesos(sum(a.ventas))} · crédito ${formatPesos(sum(a.compras))} · ${a.ventas.length + a.compras.length} hallazgos`)
  expect((await rowOf(page, a.t)).iva).toBe(formatPesos(sum(a.ventas) - sum(a.compras)))
  await screenshot(page, '42-cierre-mes-empresas-telefono')
  await page.getByRole('button', { name: `Ver el cierre de ${a.t.empresa.razon_social}` }).click()
  await page.waitForURL(`**/console/cierre-mes?periodo=${P}`)
  expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0)
  expect(await outside()).toEqual([])
  await screenshot(page, '43-cierre-mes-telefono')
  await context.close()
})
