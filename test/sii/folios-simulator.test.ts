// Issue 30's two halves together: the folio client (src/sii/portal/folios.ts) against the simulator's folio pages
// (src/sii/simulator/folios-service.ts), over real HTTP and the mutual-TLS login, with a company certificate made by the
// test. A CAF requested on the first timbraje and downloaded again byte for byte without a second grant; the SII's
// maximum capping the quantity; not authorised and a pending F29 refused with nothing granted; a connection cut after
// the grant recovered by re-download, the simulator counting one grant; a changed page stopping the flow at its step;
// unused folios annulled.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { openPfx } from '../../src/crypto/pfx'
import type { SiiCompany, SiiCredentials } from '../../src/sii/client/client'
import { createFoliosPortalClient } from '../../src/sii/portal/folios'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { SimulatorStore } from '../../src/sii/simulator/store'
import { parseCaf } from '../../src/xml/caf'
import { exportPfx, makeCertificate } from '../support/pki'
import { tempDir } from '../support/server'

const identity = makeCertificate({ rut: '11111111-1', commonName: 'Representante Legal', keySlot: 9, serial: '7f30' })
const certificado = openPfx(exportPfx(identity, 'clave', '3des'), 'clave')
const creds: SiiCredentials = { certificateId: 'cert-folios', rutFirmante: certificado.rutFirmante, signer: certificado.signer }
const company: SiiCompany = { rut: '76354771-K', ambiente: 'certificacion', isDemo: false }
let sim: RunningSimulator
let store: SimulatorStore
let client: ReturnType<typeof createFoliosPortalClient>

beforeAll(async () => {
  const dir = tempDir('timbre-folios-sim-')
  sim = await startSimulator({ processingDelayMs: 0, dataDir: dir })
  store = new SimulatorStore(dir)
  client = createFoliosPortalClient({ target: { kind: 'origin', origin: sim.url } })
})
afterAll(async () => {
  store?.close()
  await sim?.stop()
})

const grants = () => store.folios.cuentaOtorgamientos(company.rut)

test('a CAF on the first timbraje of a type, and the same file again without a second grant', async () => {
  const got = await client.solicitarCaf(company, creds, { tipo: 33, cantidad: 50 })
  if (got.kind !== 'otorgado') throw new Error(JSON.stringify(got))
  expect({ desde: got.folioDesde, hasta: got.folioHasta }).toEqual({ desde: 1, hasta: 50 })
  const caf = parseCaf(got.caf)
  expect({ rut: caf.rutEmisor, tipo: caf.tipoDte, desde: caf.folioDesde, hasta: caf.folioHasta }).toEqual({ rut: company.rut, tipo: 33, desde: 1, hasta: 50 })
  expect(grants()).toBe(1)
  const again = await client.redescargarCaf(company, creds, { tipo: 33, folioDesde: got.folioDesde, folioHasta: got.folioHasta, fecha: got.fecha })
  if (again.kind !== 'descargado') throw new Error(JSON.stringify(again))
  expect(Buffer.from(again.caf).equals(Buffer.from(got.caf))).toBe(true)
  expect(grants()).toBe(1)
  // The next request continues the numbering.
  const next = await client.solicitarCaf(company, creds, { tipo: 33, cantidad: 10 })
  expect(next.kind === 'otorgado' && [next.folioDesde, next.folioHasta]).toEqual([51, 60])
  expect(grants()).toBe(2)
})

test('the quantity is capped at the SII\'s maximum for the type', async () => {
  store.folios.setAjustes(company.rut, { ...store.folios.ajustes(company.rut), maxAutor: { 34: 20 } })
  const got = await client.solicitarCaf(company, creds, { tipo: 34, cantidad: 100 })
  if (got.kind !== 'otorgado') throw new Error(JSON.stringify(got))
  expect(got.folioHasta - got.folioDesde + 1).toBe(20)
  expect(got.maxAutor).toBe(20)
})

test('not authorised and a pending F29: clear refusals, nothing granted', async () => {
  const before = grants()
  store.folios.setAjustes(company.rut, { ...store.folios.ajustes(company.rut), noAutorizado: true })
  expect(await client.solicitarCaf(company, creds, { tipo: 33, cantidad: 5 })).toMatchObject({ kind: 'failed', motivo: 'no_autorizado' })
  store.folios.setAjustes(company.rut, { ...store.folios.ajustes(company.rut), noAutorizado: false, f29Pendiente: true })
  expect(await client.solicitarCaf(company, creds, { tipo: 33, cantidad: 5 })).toMatchObject({ kind: 'failed', motivo: 'f29_pendiente' })
  store.folios.setAjustes(company.rut, { ...store.folios.ajustes(company.rut), f29Pendiente: false })
  expect(grants()).toBe(before)
})

test('a connection cut after the grant: the outcome carries the range, the re-download gets it, one grant only', async () => {
  const before = grants()
  store.setFalla('corte_tras_otorgar', 1)
  const cut = await client.solicitarCaf(company, creds, { tipo: 33, cantidad: 5 })
  expect(cut).toMatchObject({ kind: 'failed', otorgado: { tipo: 33, folioDesde: 61, folioHasta: 65 } })
  expect(grants()).toBe(before + 1)
  if (cut.kind !== 'failed' || !cut.otorgado) throw new Error('no range')
  const recovered = await client.redescargarCaf(company, creds, cut.otorgado)
  if (recovered.kind !== 'descargado') throw new Error(JSON.stringify(recovered))
  expect(parseCaf(recovered.caf).folioDesde).toBe(61)
  expect(grants()).toBe(before + 1)
})

test('a page in a changed layout stops the flow at its step, nothing granted', async () => {
  const before = grants()
  store.setFalla('pagina_cambiada', 1)
  const changed = await client.solicitarCaf(company, creds, { tipo: 33, cantidad: 5 })
  expect(changed).toMatchObject({ kind: 'failed', motivo: 'pagina_desconocida' })
  expect(changed.kind === 'failed' && changed.etapa).toBeTruthy()
  expect(grants()).toBe(before)
  store.removeFalla('pagina_cambiada')
})

test('unused folios of a granted range annulled; folios never granted refused', async () => {
  expect(await client.anularFolios(company, creds, { tipo: 33, folioDesde: 56, folioHasta: 60, motivo: 'CAF vencido' })).toMatchObject({ kind: 'anulado', folioDesde: 56, folioHasta: 60 })
  expect(await client.anularFolios(company, creds, { tipo: 33, folioDesde: 900, folioHasta: 910, motivo: 'CAF vencido' })).toMatchObject({ kind: 'failed' })
})
