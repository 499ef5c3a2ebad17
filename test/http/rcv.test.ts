// The month's close over HTTP (DESIGN §16, issue 29), against the SII simulator's portal over real HTTP and mutual TLS:
// a supplier company issues to the receiver; the receiver imports, accepts one, claims one and leaves one open; the
// simulator's RCV also holds a purchase known only to it. The receiver's RCV is read with its certificate, the mirror
// answers by section, the reconciliation finds what the test planted, the F29 adds up the documents, the CSV and xlsx
// carry the rows, the pending board counts the days, and the simulator's faults leave the last good copy and a reason.
// One test clock is shared by the server and the simulator, so the 8 days pass for both.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import ExcelJS from 'exceljs'
import { readRegistroComprasCsv } from '../../src/domain/rcv-csv'
import { rcvJob } from '../../src/jobs/rcv'
import { followRecibidos } from '../../src/services/recibidos-sii'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { SimulatorStore } from '../../src/sii/simulator/store'
import { testClock } from '../support/clock'
import { uploadCertificate } from '../support/issuance'
import { acceptedBySii, API, envioFor, facturaPara, importar, issueFrom, supplier } from '../support/received'
import { startTestServer, tempDir, testRut, type Tenant, type TestServer } from '../support/server'

const DAY = 86_400_000
const clock = testClock()
let sim: RunningSimulator
let simStore: SimulatorStore
let s: TestServer
let receiver: Tenant
let prov: Tenant
const OUTSIDER = { rut: '96790240-3', razon: 'Importadora Solo SII Ltda.' }

beforeAll(async () => {
  const simDir = tempDir('timbre-rcv-sim-')
  sim = await startSimulator({ clock: clock.now, processingDelayMs: 1000, dataDir: simDir })
  simStore = new SimulatorStore(simDir)
  s = await startTestServer({ clock, flags: { '--sii': sim.url, '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  receiver = await s.tenant(testRut(), 'Compradora del Sur Ltda.')
  await uploadCertificate(s, receiver)
  prov = await supplier(s)
}, 90_000)
afterAll(async () => {
  await s?.stop()
  simStore?.close()
  await sim?.stop()
})

const get = async (path: string, tenant = receiver) => s.request('GET', `${API}${path}`, { headers: { 'X-Api-Key': tenant.readKey } })
/** The month of the documents, fixed at the start: the test's 9 days may cross into the next month. */
let fixedPeriodo: string | null = null
const periodo = () => (fixedPeriodo ??= new Date(clock.now().getTime() - 3 * 3600_000).toISOString().slice(0, 7).replace('-', ''))

/** Asks for a sync and runs the rcv job's pass, as the scheduler would within seconds. */
async function sync(): Promise<any> {
  const asked = await s.request('POST', `${API}/rcv/${periodo()}/sincronizar`, { headers: { 'X-Api-Key': receiver.writeKey } })
  expect(asked.status).toBe(202)
  expect(asked.json.estado).toBe('pendiente')
  await rcvJob.runOnce(s.server.deps)
  return (await get(`/rcv/${periodo()}`)).json
}

test('the receiver reads its RCV with its certificate: sections, findings, F29, files, pending board, and faults', async () => {
  // Before any sync: lists are 409, the reconciliation and the F29 still answer from Timbre's own documents.
  expect((await get(`/rcv/${periodo()}`)).json.estado).toBe('sin_sincronizar')
  expect((await get(`/rcv/${periodo()}/compras`)).status).toBe(409)
  expect((await get(`/rcv/${periodo()}/compras`)).json.code).toBe('RCV_NO_SINCRONIZADO')
  expect((await get(`/f29/${periodo()}`)).json.origen).toBe('timbre')

  // Three facturas of the supplier to the receiver, accepted by the SII, imported by the receiver.
  const montos = [10_000, 25_000, 40_000]
  const docs = []
  for (const precio of montos) {
    docs.push(await issueFrom(s, prov, facturaPara(receiver, { detalle: [{ nombre: 'Servicio', cantidad: 1, precio }] } as never)))
  }
  await acceptedBySii(s, clock, prov, docs.map((d) => d.id))
  const imported = await importar(s, receiver, envioFor(prov, receiver, docs.map((d) => d.xml)))
  expect(imported.status).toBe(201)
  const [aceptar, reclamar, dejar] = imported.json.documentos.map((d: { id: string }) => d.id) as [string, string, string]
  await followRecibidos(s.server.deps)
  expect((await s.request('POST', `${API}/recibidos/${aceptar}/acciones`, { headers: { 'X-Api-Key': receiver.writeKey }, body: { accion: 'ACD' } })).status).toBeLessThan(300)
  expect((await s.request('POST', `${API}/recibidos/${reclamar}/acciones`, { headers: { 'X-Api-Key': receiver.writeKey }, body: { accion: 'RCD', motivo: 'No corresponde' } })).status).toBeLessThan(300)

  // A purchase only the SII knows (issued outside Timbre, never mailed).
  const fecha = clock.now().toISOString().slice(0, 10)
  simStore.insertRcvFilas([{
    rut_empresa: receiver.empresa.rut, registro: 'compras', tipo: 33, rut: OUTSIDER.rut, razon_social: OUTSIDER.razon, folio: 777,
    fecha_emision: fecha, fecha_recepcion: `${fecha}T09:00:00`, monto_exento: 0, monto_neto: 5000, monto_iva: 950, monto_total: 5950,
    seccion: 'registro', added_at: clock.now().getTime(),
  }])

  // The first sync: the accepted one in registro, the claimed one in reclamado, the open one pendiente.
  const first = await sync()
  expect(first.estado).toBe('sincronizado')
  const compras = (await get(`/rcv/${periodo()}/compras?limit=100`)).json
  const bySection = (seccion: string) => compras.items.filter((d: any) => d.seccion === seccion).map((d: any) => `${d.rut}:${d.folio}`).sort()
  const folios = docs.map((d) => `${prov.empresa.rut}:${d.folio}`)
  expect(bySection('registro')).toEqual([folios[0], `${OUTSIDER.rut}:777`].sort())
  expect(bySection('reclamado')).toEqual([folios[1]])
  expect(bySection('pendiente')).toEqual([folios[2]])
  expect(first.resumen.compras.pendiente[0].cantidad).toBe(1)
  // The supplier's Registro de Ventas holds the three.
  await s.request('POST', `${API}/rcv/${periodo()}/sincronizar`, { headers: { 'X-Api-Key': prov.writeKey } })
  await rcvJob.runOnce(s.server.deps)
  const ventas = (await get(`/rcv/${periodo()}/ventas`, prov)).json
  expect(ventas.items.map((d: any) => d.folio).sort()).toEqual(docs.map((d) => d.folio).sort())

  // Reconciliation: the outsider's purchase has no document; the open one is pending with its days left.
  const conc = (await get(`/conciliacion/${periodo()}`)).json
  expect(conc.completa).toBe(true)
  expect(conc.hallazgos.filter((h: any) => h.tipo === 'compra_sin_documento').map((h: any) => h.documentos[0].folio)).toEqual([777])
  const pend = conc.hallazgos.filter((h: any) => h.tipo === 'pendiente_aceptacion')
  expect(pend).toHaveLength(1)
  expect(pend[0].documentos.map((d: any) => d.folio)).toContain(docs[2]!.folio)
  expect(pend[0].dias_restantes).toBeGreaterThan(0)
  expect(pend[0].dias_restantes).toBeLessThanOrEqual(8)

  // The pending board agrees.
  const board = (await get('/recibidos?pendientes=true')).json
  expect(board.items.map((r: any) => r.id)).toEqual([dejar])
  expect(board.items[0].dias_restantes).toBe(pend[0].dias_restantes)

  // F29 from the RCV: credit 520 is the IVA of the registro purchases (the accepted factura and the outsider's).
  const f29 = (await get(`/f29/${periodo()}`)).json
  expect(f29.origen).toBe('rcv')
  const registroIva = compras.items.filter((d: any) => d.seccion === 'registro').reduce((a: number, d: any) => a + (d.monto_iva ?? 0), 0)
  expect(f29.codigos.find((c: any) => c.codigo === 520)?.valor).toBe(registroIva)
  expect(f29.advertencias.some((a: any) => a.tipo === 'pendientes_aceptacion' && a.bloquea)).toBe(true)

  // Files: the registro CSV reads back to the same rows; the xlsx has every section.
  const csv = await fetch(`${s.url}${API}/rcv/${periodo()}/compras.csv?seccion=registro`, { headers: { 'X-Api-Key': receiver.readKey } })
  expect(csv.headers.get('content-disposition')).toContain(`RCV_COMPRA_REGISTRO_${receiver.empresa.rut}_${periodo()}.csv`)
  const read = readRegistroComprasCsv('registro', await csv.text())
  expect(read.ok && read.value.map((d) => `${d.rut}:${d.folio}`).sort()).toEqual(bySection('registro'))
  const xlsx = await fetch(`${s.url}${API}/rcv/${periodo()}/compras.xlsx`, { headers: { 'X-Api-Key': receiver.readKey } })
  const book = new ExcelJS.Workbook()
  await book.xlsx.load(await xlsx.arrayBuffer())
  expect(book.worksheets.map((w) => w.name)).toEqual(['Resumen', 'Registro', 'Pendientes', 'No incluir', 'Reclamados'])
  expect(book.getWorksheet('Registro')!.rowCount).toBe(1 + bySection('registro').length)

  // Eight days later on both clocks the open one counts as accepted: registro at the SII.
  clock.advance(9 * DAY)
  const second = await sync()
  expect(second.estado).toBe('sincronizado')
  const after = (await get(`/rcv/${periodo()}/compras?seccion=pendiente`)).json
  expect(after.items).toHaveLength(0)
  const registro = (await get(`/rcv/${periodo()}/compras?seccion=registro`)).json
  expect(registro.items.map((d: any) => d.folio)).toContain(docs[2]!.folio)

  // Faults: each leaves the last good copy and says why.
  const good = second.sincronizado_at
  for (const [falla, motivo] of [['sesion_expirada', 'sesion_expirada'], ['tope_sesiones', 'tope_sesiones'], ['respuesta_malformada', 'respuesta_invalida']] as const) {
    simStore.setFalla(falla, 1)
    clock.advance(60_000)
    const failed = await sync()
    expect({ falla, estado: failed.estado, motivo: failed.falla?.motivo }).toEqual({ falla, estado: 'fallido', motivo })
    expect(failed.sincronizado_at).toBe(good)
    expect((await get(`/rcv/${periodo()}/compras?seccion=registro`)).json.total_count).toBe(registro.total_count)
    simStore.removeFalla(falla)
  }
  // The webhook's events: one per sync, ok or fallido.
  const events = s.server.deps.store.sqlite.query("SELECT body FROM events WHERE empresa_id = ? AND type = 'rcv.sincronizado' ORDER BY id").all(receiver.empresa.id) as Array<{ body: string }>
  expect(events.map((e) => JSON.parse(e.body).data.resultado)).toEqual(['ok', 'ok', 'fallido', 'fallido', 'fallido'])
}, 180_000)

test('bad input changes nothing: a period before the RCV, a future one, an unknown section, no certificate', async () => {
  expect((await get('/rcv/201612')).status).toBe(400)
  expect((await get('/rcv/209901')).status).toBe(400)
  expect((await get(`/rcv/${periodo()}/compras?seccion=otra`)).status).toBeOneOf([400, 409])
  const sinCert = await s.tenant(testRut(), 'Sin Certificado SpA')
  const r = await s.request('POST', `${API}/rcv/${periodo()}/sincronizar`, { headers: { 'X-Api-Key': sinCert.writeKey } })
  expect(r.status).toBe(422)
  expect(r.json.code).toBe('CERTIFICATE_REQUIRED')
  expect((await get(`/rcv/${periodo()}`, sinCert)).json.estado).toBe('sin_sincronizar')
})
