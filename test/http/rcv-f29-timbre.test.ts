// The F29 from Timbre's own documents, while no RCV copy exists (DESIGN §16; services/cierre-mes.ts): a factura de
// compra (46) the company received is a sale whose IVA the buyer retained, never a purchase credit; a received guía
// (52) is no VAT document and blocks nothing; a received 33 past its 8 days counts as accepted even before the
// follow-up records it. The supplier is a second company of the server; the SII is the simulator, on one test clock.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { followRecibidos } from '../../src/services/recibidos-sii'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { testClock } from '../support/clock'
import { facturaSimple, provisionIssuer, uploadCertificate } from '../support/issuance'
import { acceptedBySii, API, envioFor, importar, issueFrom } from '../support/received'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const DAY = 86_400_000
const clock = testClock()
let sim: RunningSimulator
let s: TestServer
let comprador: Tenant
let vendedor: Tenant

beforeAll(async () => {
  sim = await startSimulator({ clock: clock.now, processingDelayMs: 1000 })
  s = await startTestServer({ clock, flags: { '--sii': sim.url, '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  comprador = await s.tenant(testRut(), 'Compradora Retenedora SpA')
  await uploadCertificate(s, comprador)
  vendedor = await s.tenant(testRut(), 'Agricultor Vendedor Ltda.')
  await provisionIssuer(s, vendedor, { tipos: [33, 46, 52] })
}, 90_000)
afterAll(async () => {
  await s?.stop()
  await sim?.stop()
})

const receptor = (t: Tenant) => ({ ...facturaSimple().receptor, rut: t.empresa.rut, razon_social: t.empresa.razon_social })

test('received 46 is a sale with its retained IVA, a guía blocks nothing, a 33 past its plazo gives credit', async () => {
  // The "supplier" issues to the company: a factura, a guía, and a factura de compra (the company is the buyer's seller).
  const factura = await issueFrom(s, vendedor, facturaSimple({ receptor: receptor(comprador), detalle: [{ nombre: 'Insumos', cantidad: 1, precio: 100_000 }] }))
  const guia = await issueFrom(s, vendedor, { tipo_dte: 52, receptor: receptor(comprador), ind_traslado: 1, tipo_despacho: 2, detalle: [{ nombre: 'Saco de cemento', cantidad: 4, precio: 4590 }] } as never)
  const compra = await issueFrom(s, vendedor, { ...facturaSimple(), receptor: receptor(comprador), tipo_dte: 46, detalle: [{ nombre: 'Trigo', cantidad: 1, precio: 50_000 }], impuestos_retenciones: [{ tipo_imp: 15, tasa_imp: 19 }] } as never)
  await acceptedBySii(s, clock, vendedor, [factura.id, guia.id, compra.id])
  expect((await importar(s, comprador, envioFor(vendedor, comprador, [factura.xml, guia.xml, compra.xml]))).status).toBe(201)
  await followRecibidos(s.server.deps)
  const periodo = (await s.request('GET', `${API}/recibidos?limit=1`, { headers: { 'X-Api-Key': comprador.readKey } })).json.items[0].fecha_emision.slice(0, 7).replace('-', '')
  const f29 = async () => (await s.request('GET', `${API}/f29/${periodo}`, { headers: { 'X-Api-Key': comprador.readKey } })).json
  const codigo = (f: any, c: number) => f.codigos.find((x: any) => x.codigo === c)

  const antes = await f29()
  expect(antes.origen).toBe('timbre')
  // The 46 is no purchase: nothing of it in the credit codes; it is among the sales, with the IVA the buyer retained.
  const creditos = [519, 520].flatMap((c) => codigo(antes, c)?.documentos ?? [])
  expect(creditos.map((d: any) => d.tipo_dte)).not.toContain(46)
  expect(antes.codigos.some((c: any) => c.documentos.some((d: any) => d.tipo_dte === 46 && d.folio === compra.folio))).toBe(true)
  expect(antes.advertencias.filter((a: any) => a.tipo === 'retencion_parcial')).toEqual([])
  // The guía blocks nothing.
  expect(antes.advertencias.filter((a: any) => a.tipo === 'tipo_sin_codigo')).toEqual([])
  // The factura waits for acceptance: no credit yet, and the warning blocks.
  expect(codigo(antes, 520)).toBeUndefined()
  expect(antes.advertencias.some((a: any) => a.tipo === 'pendientes_aceptacion' && a.bloquea)).toBe(true)

  // Nine days later, before any follow-up records the tacit acceptance, the factura gives its credit.
  clock.advance(9 * DAY)
  const despues = await f29()
  expect(codigo(despues, 520)?.valor).toBe(19_000)
  expect(codigo(despues, 519)?.valor).toBe(1)
  expect(despues.advertencias.some((a: any) => a.tipo === 'pendientes_aceptacion')).toBe(false)
}, 120_000)

test('the pending board pages by its order: a document that leaves between pages does not restart the list', async () => {
  const docs = []
  for (const precio of [1000, 2000, 3000]) docs.push(await issueFrom(s, vendedor, facturaSimple({ receptor: receptor(comprador), detalle: [{ nombre: 'Insumo', cantidad: 1, precio }] })))
  await acceptedBySii(s, clock, vendedor, docs.map((d) => d.id))
  const imported = await importar(s, comprador, envioFor(vendedor, comprador, docs.map((d) => d.xml)))
  expect(imported.status).toBe(201)
  await followRecibidos(s.server.deps)
  const ids = imported.json.documentos.map((d: { id: string }) => d.id) as string[]
  const page = async (cursor?: string) =>
    (await s.request('GET', `${API}/recibidos?pendientes=true&limit=1&rut_emisor=${vendedor.empresa.rut}${cursor ? `&cursor=${cursor}` : ''}`, { headers: { 'X-Api-Key': comprador.readKey } })).json
  const first = await page()
  expect(first.total_count).toBe(3)
  expect(first.items.map((r: any) => r.id)).toEqual([ids[0]])
  const second = await page(first.next_cursor)
  expect(second.items.map((r: any) => r.id)).toEqual([ids[1]])
  // The page's own document is accepted before the next page is asked for: the next is the third, not the first again.
  expect((await s.request('POST', `${API}/recibidos/${ids[1]}/acciones`, { headers: { 'X-Api-Key': comprador.writeKey }, body: { accion: 'ACD' } })).status).toBeLessThan(300)
  const third = await page(second.next_cursor)
  expect(third.items.map((r: any) => r.id)).toEqual([ids[2]])
  expect(third.next_cursor).toBeNull()
  // The list's filters still apply, and a bad one is the list's 400.
  expect((await s.request('GET', `${API}/recibidos?pendientes=true&tipo_dte=34`, { headers: { 'X-Api-Key': comprador.readKey } })).json.total_count).toBe(0)
  expect((await s.request('GET', `${API}/recibidos?pendientes=true&rut_emisor=12`, { headers: { 'X-Api-Key': comprador.readKey } })).status).toBe(400)
}, 120_000)
