// Issue 29 end to end, from the compiled binary against its built-in simulated SII, as an accountant with two client
// companies on one install would run it: A issues to B and to a customer outside Timbre; B receives A's facturas,
// accepts one, claims one and leaves one to lapse; the simulator's RCV also holds a purchase from a supplier known only
// to it (`timbre sii-simulator rcv add`). `timbre rcv sincronizar` reads both registers with each company's certificate;
// the sections, the reconciliation, the pending board, the F29 codes, the CSV and the xlsx are each checked against
// figures this test computes from what it issued. `timbre sii-simulator reloj` moves the SII's clock past the 8 days.
// Faults (an expired session, the session cap, a deferred download that never ends, a malformed answer) each leave the
// last good copy and a clear reason.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import ExcelJS from 'exceljs'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { readRegistroComprasCsv, readRegistroVentasCsv } from '../../src/domain/rcv-csv'
import { createCompanyWithKey, ensureBinary, provisionOverHttp, runBinary, startServe, type ServeProcess } from '../support/binary'
import { facturaSimple } from '../support/issuance'
import { envioDte } from '../support/received'
import { tempDir } from '../support/server'
import { launchChromium, newContext, screenshot } from '../support/browser'
import { formatPesos } from '../../src/domain/numero-cl'

const API = '/api/v1/billing'
const A = { rut: '76086428-5', razon: 'Ferretería Los Aromos SpA' }
const B = { rut: '77270733-9', razon: 'Constructora Quillay Ltda.' }
const OUTSIDE_CUSTOMER = { rut: '96790240-3', razon: 'Cliente Sin Timbre S.A.' }
const SII_ONLY_SUPPLIER = { rut: '76354771-K', razon: 'Proveedor Solo SII SpA' }
let serve: ServeProcess | null = null
let dir: string
let keyA: string
let keyB: string

beforeAll(async () => {
  await ensureBinary()
  dir = tempDir('timbre-rcv-e2e-')
})
afterAll(async () => {
  if (serve && serve.proc.exitCode === null) await serve.terminate()
})

function timbre(...args: string[]): any {
  const r = runBinary([...args, '--data-dir', dir, ...(args[0] === 'rcv' && args[1] === 'sincronizar' && serve ? ['--url', serve.url] : [])])
  if (r.code !== 0) throw new Error(`timbre ${args.join(' ')} exited ${r.code}: ${r.stderr}`)
  return r.json()
}
function timbreFails(...args: string[]): string {
  const r = runBinary([...args, '--data-dir', dir, '--url', serve!.url])
  expect(r.code).not.toBe(0)
  return r.stderr
}
const call = async (key: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${serve!.url}${API}${path}`, { method, headers: { 'X-Api-Key': key, 'Idempotency-Key': crypto.randomUUID(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  const type = res.headers.get('content-type') ?? ''
  return { status: res.status, json: type.includes('json') ? await res.json() as any : null, res }
}
async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const got = await probe()
    if (got) return got
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(300)
  }
}

const iva = (neto: number) => Math.round(neto * 0.19)
const factura = (to: { rut: string; razon: string }, precio: number) =>
  facturaSimple({ receptor: { ...facturaSimple().receptor, rut: to.rut, razon_social: to.razon }, detalle: [{ nombre: 'Materiales', cantidad: 1, precio }] } as never)

test('two companies of one install close their month from the binary against the simulated SII', async () => {
  keyA = createCompanyWithKey(dir, A.rut, A.razon)
  keyB = createCompanyWithKey(dir, B.rut, B.razon)
  serve = await startServe(['--data-dir', dir, '--sii', 'simulado', '--rate-limit', '0', '--submit-every', '1s', '--track-every', '1s', '--inbox-every', '1s', '--rcv-diferida-espera', '6s'])
  await provisionOverHttp(serve.url, keyA, { rut: A.rut, razonSocial: A.razon, folios: 20 })
  await provisionOverHttp(serve.url, keyB, { rut: B.rut, razonSocial: B.razon, folios: 5 })

  // A issues three facturas to B and one to a customer outside Timbre; the SII accepts them.
  const precios = [100_000, 250_000, 40_000]
  const toB: any[] = []
  for (const p of precios) toB.push((await call(keyA, 'POST', '/dte', factura(B, p))).json)
  const outside = (await call(keyA, 'POST', '/dte', factura(OUTSIDE_CUSTOMER, 70_000))).json
  let issued = [...toB, outside]
  for (const d of issued) expect({ d }).toEqual({ d: expect.objectContaining({ folio: expect.any(Number) }) })
  await until('A\'s documents accepted', async () => {
    const estados = await Promise.all(issued.map(async (d) => (await call(keyA, 'GET', `/dte/${d.id}`)).json.estado))
    return estados.every((e) => e === 'aceptado')
  })
  // The records as GET /dte shows them (fecha_emision, iva, monto_total).
  issued = await Promise.all(issued.map(async (d) => (await call(keyA, 'GET', `/dte/${d.id}`)).json))
  toB.splice(0, 3, ...issued.slice(0, 3))
  const periodo = issued[0].fecha_emision.slice(0, 7).replace('-', '')

  // B receives A's three facturas (A's EnvioDTE imported), accepts one, claims one, leaves one.
  const xmls = await Promise.all(toB.map(async (d) => new Uint8Array(await (await call(keyA, 'GET', `/dte/${d.id}/xml`)).res.arrayBuffer())))
  const imported = await call(keyB, 'POST', '/recibidos/importar', { xml_base64: Buffer.from(envioDte(xmls, { rutEmisor: A.rut, rutReceptor: B.rut })).toString('base64') })
  expect(imported.status).toBe(201)
  const [aceptar, reclamar, dejar] = imported.json.documentos.map((d: any) => d.id)
  expect((await call(keyB, 'POST', `/recibidos/${aceptar}/acciones`, { accion: 'ACD' })).status).toBeLessThan(300)
  expect((await call(keyB, 'POST', `/recibidos/${reclamar}/acciones`, { accion: 'RCD', motivo: 'Mercadería no solicitada' })).status).toBeLessThan(300)
  await until('the SII reception date of B\'s documents', async () => (await call(keyB, 'GET', `/recibidos/${dejar}`)).json.fecha_recepcion_sii)

  // A purchase of B that only the SII knows.
  const rows = join(dir, 'solo-sii.json')
  const fecha = issued[0].fecha_emision
  writeFileSync(rows, JSON.stringify([{ registro: 'compras', tipo: 33, rut: SII_ONLY_SUPPLIER.rut, razon_social: SII_ONLY_SUPPLIER.razon, folio: 9001, fecha_emision: fecha, fecha_recepcion: `${fecha}T11:30:00`, monto_exento: 0, monto_neto: 30_000, monto_iva: 5_700, monto_total: 35_700 }]))
  runBinary(['sii-simulator', 'rcv', 'add', '--rut', B.rut, rows, '--data-dir', dir])

  // Both registers read with each company's certificate.
  const syncB = timbre('rcv', 'sincronizar', '--empresa', B.rut, '--periodo', periodo)
  expect(syncB.estado).toBe('sincronizado')
  const syncA = timbre('rcv', 'sincronizar', '--empresa', A.rut, '--periodo', periodo)
  expect(syncA.estado).toBe('sincronizado')

  const seccion = async (s: string) => ((await call(keyB, 'GET', `/rcv/${periodo}/compras?seccion=${s}&limit=100`)).json.items as any[]).map((d) => `${d.rut}:${d.folio}`).sort()
  expect(await seccion('registro')).toEqual([`${A.rut}:${toB[0].folio}`])
  expect(await seccion('reclamado')).toEqual([`${A.rut}:${toB[1].folio}`])
  expect(await seccion('pendiente')).toEqual([`${A.rut}:${toB[2].folio}`, `${SII_ONLY_SUPPLIER.rut}:9001`].sort())
  const ventasA = (await call(keyA, 'GET', `/rcv/${periodo}/ventas?limit=100`)).json.items as any[]
  expect(ventasA.map((d) => d.folio).sort((x, y) => x - y)).toEqual(issued.map((d) => d.folio).sort((x, y) => x - y))
  for (const d of issued) expect(ventasA.find((v) => v.folio === d.folio)!.monto_total).toBe(d.monto_total)

  // Reconciliation of B: the SII-only purchase has no document; two purchases wait for acceptance.
  const conc = (await call(keyB, 'GET', `/conciliacion/${periodo}`)).json
  expect(conc.hallazgos.filter((h: any) => h.tipo === 'compra_sin_documento').map((h: any) => h.documentos[0].folio)).toEqual([9001])
  const pendientes = conc.hallazgos.filter((h: any) => h.tipo === 'pendiente_aceptacion')
  // One finding per document: the open factura is seen in the SII's pendiente section and in Timbre, both named.
  expect(pendientes.map((h: any) => h.documentos[0].folio).sort((x: number, y: number) => x - y)).toEqual([toB[2].folio, 9001].sort((x, y) => x - y))
  const abierta = pendientes.find((h: any) => h.documentos[0].folio === toB[2].folio)
  expect(abierta.documentos.map((d: any) => d.origen).sort()).toEqual(['sii', 'timbre'])
  expect(abierta.documentos.find((d: any) => d.origen === 'timbre').id).toBe(dejar)
  // Reconciliation of A: its outside customer's factura is in the RV; nothing is missing.
  expect((await call(keyA, 'GET', `/conciliacion/${periodo}`)).json.por_tipo.emitido_sin_registro ?? 0).toBe(0)

  // The pending board: the one B left open, with the days left the reconciliation counts.
  const board = (await call(keyB, 'GET', '/recibidos?pendientes=true')).json
  expect(board.items.map((r: any) => r.id)).toEqual([dejar])
  // Received by the SII seconds ago: 8 whole days left (Ley 19.983), counted up.
  expect(board.items[0].dias_restantes).toBe(8)

  // F29 of A: 503 counts the four facturas, 502 their IVA.
  const f29A = (await call(keyA, 'GET', `/f29/${periodo}`)).json
  const code = (f: any, c: number) => f.codigos.find((x: any) => x.codigo === c)?.valor
  expect(f29A.origen).toBe('rcv')
  expect(code(f29A, 503)).toBe(4)
  expect(code(f29A, 502)).toBe(issued.reduce((a, d) => a + d.iva, 0))
  expect(code(f29A, 502)).toBe([...precios, 70_000].reduce((a, p) => a + iva(p), 0))
  // F29 of B now: only the accepted purchase gives credit (520), and the pending ones block a clean filing.
  const f29B = (await call(keyB, 'GET', `/f29/${periodo}`)).json
  expect(code(f29B, 520)).toBe(iva(precios[0]!))
  expect(f29B.limpia).toBe(false)

  // Files: B's registro CSV and A's ventas CSV read back; the xlsx has the sections, read with exceljs.
  const csv = await (await call(keyB, 'GET', `/rcv/${periodo}/compras.csv?seccion=pendiente`)).res.text()
  const read = readRegistroComprasCsv('pendiente', csv)
  expect(read.ok && read.value.map((d) => d.montoTotal).sort((x, y) => x - y)).toEqual([toB[2].monto_total, 35_700].sort((x, y) => x - y))
  const ventasCsv = readRegistroVentasCsv(await (await call(keyA, 'GET', `/rcv/${periodo}/ventas.csv`)).res.text())
  expect(ventasCsv.ok && ventasCsv.value.reduce((a, d) => a + d.montoTotal, 0)).toBe(issued.reduce((a, d) => a + d.monto_total, 0))
  const book = new ExcelJS.Workbook()
  await book.xlsx.load(await (await call(keyB, 'GET', `/rcv/${periodo}/compras.xlsx`)).res.arrayBuffer())
  expect(book.getWorksheet('Pendientes')!.rowCount).toBe(3)
  expect(book.getWorksheet('Reclamados')!.getRow(2).getCell(6).value).toBe(toB[1].folio)

  // The SII's clock moves past the 8 days: both open purchases now count as accepted.
  runBinary(['sii-simulator', 'reloj', '--avanzar', '9d', '--data-dir', dir])
  const again = timbre('rcv', 'sincronizar', '--empresa', B.rut, '--periodo', periodo)
  expect(again.estado).toBe('sincronizado')
  expect(await seccion('pendiente')).toEqual([])
  expect(await seccion('registro')).toEqual([`${A.rut}:${toB[0].folio}`, `${A.rut}:${toB[2].folio}`, `${SII_ONLY_SUPPLIER.rut}:9001`].sort())
  const f29After = (await call(keyB, 'GET', `/f29/${periodo}`)).json
  expect(code(f29After, 520)).toBe(iva(precios[0]!) + iva(precios[2]!) + 5_700)
  expect(code(f29After, 519)).toBe(3)

  // The administrator's month, every company.
  const mes = timbre('rcv', 'estado', '--periodo', periodo)
  const rowOf = (rut: string) => mes.empresas.find((e: any) => e.empresa.rut === rut)
  // Figures this test computes from what it issued: A's débito is the IVA of its four facturas (no notes); B's crédito
  // the IVA of its three purchases in registro (no notes either).
  const debitoA = [...precios, 70_000].reduce((a, p) => a + iva(p), 0)
  const creditoB = iva(precios[0]!) + iva(precios[2]!) + 5_700
  expect(code(f29A, 538)).toBe(debitoA)
  expect(code(f29After, 537)).toBe(creditoB)
  expect({ debito: rowOf(A.rut).debito, iva: rowOf(A.rut).iva_a_pagar }).toEqual({ debito: debitoA, iva: debitoA })
  expect({ credito: rowOf(B.rut).credito, iva: rowOf(B.rut).iva_a_pagar }).toEqual({ credito: creditoB, iva: -creditoB })
  expect(rowOf(B.rut).rcv.estado).toBe('sincronizado')

  // The same month in the console, as the administrator sees it in Chromium: each company's row with those figures.
  const link = runBinary(['console', 'link', '--url', serve.url, '--data-dir', dir])
  expect(link.code).toBe(0)
  const browser = await launchChromium()
  try {
    const page = await (await newContext(browser)).newPage()
    await page.goto(link.json().url as string)
    await page.getByRole('button', { name: 'Entrar como administrador' }).click()
    await page.waitForURL('**/console/empresas')
    await page.goto(`${serve.url}/console/cierre-mes/empresas?periodo=${periodo}`)
    for (const e of [rowOf(A.rut), rowOf(B.rut)]) {
      const cells = await page.locator(`tr[data-empresa="${e.empresa.id}"]`).evaluate((tr) =>
        Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.classList[td.classList.length - 1], (td as HTMLElement).innerText.replace(/\s+/g, ' ').trim()])))
      expect({ rut: e.empresa.rut, debito: cells.debito, credito: cells.credito, rcv: cells.rcv }).toEqual({
        rut: e.empresa.rut, debito: formatPesos(e.debito), credito: formatPesos(e.credito), rcv: 'Copia al día',
      })
    }
    await screenshot(page, '42-cierre-mes-binario')
  } finally {
    await browser.close()
  }

  // Faults: each leaves the last good copy and says why.
  const good = (await call(keyB, 'GET', `/rcv/${periodo}`)).json.sincronizado_at
  for (const [falla, motivo, extra] of [
    ['sesion_expirada', 'sesion_expirada', []],
    ['tope_sesiones', 'tope_sesiones', []],
    ['respuesta_malformada', 'respuesta_invalida', []],
  ] as const) {
    runBinary(['sii-simulator', 'rcv', 'falla', '--tipo', falla, '--data-dir', dir, ...extra])
    const said = timbreFails('rcv', 'sincronizar', '--empresa', B.rut, '--periodo', periodo)
    expect({ falla, said: said.includes(motivo) }).toEqual({ falla, said: true })
    const state = (await call(keyB, 'GET', `/rcv/${periodo}`)).json
    expect({ falla, estado: state.estado, motivo: state.falla?.motivo, good: state.sincronizado_at }).toEqual({ falla, estado: 'fallido', motivo, good })
    expect(await seccion('registro')).toHaveLength(3)
    runBinary(['sii-simulator', 'rcv', 'falla', '--tipo', falla, '--quitar', '--data-dir', dir])
  }
  // A deferred download that never finishes: with a threshold of 1 document every detail goes deferred.
  await serve.terminate()
  serve = await startServe(['--data-dir', dir, '--sii', 'simulado', '--rate-limit', '0', '--rcv-diferida-desde', '1', '--rcv-diferida-espera', '5s'])
  runBinary(['sii-simulator', 'rcv', 'falla', '--tipo', 'diferida_eterna', '--veces', '0', '--data-dir', dir])
  const eterna = timbreFails('rcv', 'sincronizar', '--empresa', B.rut, '--periodo', periodo)
  expect(eterna).toContain('descarga_diferida_sin_terminar')
  expect(await seccion('registro')).toHaveLength(3)
  // Cleared, the same deferred path reads the copy whole.
  runBinary(['sii-simulator', 'rcv', 'falla', '--tipo', 'diferida_eterna', '--quitar', '--data-dir', dir])
  const diferida = timbre('rcv', 'sincronizar', '--empresa', B.rut, '--periodo', periodo)
  expect(diferida.estado).toBe('sincronizado')
  expect(diferida.diferidas).toBeGreaterThan(0)
  expect(await seccion('registro')).toHaveLength(3)
  expect(await seccion('reclamado')).toHaveLength(1)
}, 240_000)
