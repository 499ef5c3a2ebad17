// Folios from the SII over HTTP (DESIGN §17, issue 30), against the simulator's folio pages over real HTTP and the
// mutual-TLS login with the company's certificate: a CAF requested, stored and used; a second request of the type
// refused while one is open; the SII's refusals each a clear failure with nothing stored; a cut after the grant
// recovered by re-download with one grant counted; a changed page stopping at its step; automatic mode asking when the
// stock falls to the threshold; an expired CAF listed for annulment, annulled and shown so in its stretches.
// One test clock is shared by the server and the simulator. The folios job's pass runs as the scheduler would (its own period is an hour here).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { runFoliosPass } from '../../src/services/caf-solicitudes'
import type { SimulatorStore } from '../../src/sii/simulator/store'
import type { TestClock } from '../support/clock'
import { startFoliosWorld, type FoliosWorld } from '../support/folios'
import { facturaSimple, issue } from '../support/issuance'
import { API } from '../support/received'
import { testRut, type Tenant, type TestServer } from '../support/server'

const DAY = 86_400_000
let world: FoliosWorld
let clock: TestClock
let simStore: SimulatorStore
let s: TestServer
let t: Tenant

beforeAll(async () => {
  world = await startFoliosWorld('Ferretería Los Aromos Ltda.')
  ;({ clock, simStore, s, t } = world)
}, 60_000)
afterAll(async () => {
  await world?.stop()
})

const get = async (path: string) => s.request('GET', `${API}${path}`, { headers: { 'X-Api-Key': t.readKey } })
const post = async (path: string, body?: unknown, key = t.writeKey) => s.request('POST', `${API}${path}`, { headers: { 'X-Api-Key': key }, body })
const grants = () => simStore.folios.cuentaOtorgamientos(t.empresa.rut)
const events = (type: string) =>
  (s.server.deps.store.sqlite.query('SELECT body FROM events WHERE empresa_id = ? AND type = ? ORDER BY id').all(t.empresa.id, type) as Array<{ body: string }>).map((e) => JSON.parse(e.body).data)
const cafCount = () => (s.server.deps.store.sqlite.query('SELECT count(*) AS n FROM cafs WHERE empresa_id = ?').get(t.empresa.id) as { n: number }).n

/** Asks, then runs the folios job's passes until the request leaves en_curso (a re-download may need a second). */
async function solicitar(body: unknown): Promise<any> {
  const asked = await post('/caf/solicitar', body)
  expect(asked.status).toBe(202)
  expect(asked.json.estado).toBe('en_curso')
  expect(asked.json.solicitud_id).toBe(asked.json.id)
  expect(asked.headers.get('location')).toBe(`${API}/caf/solicitudes/${asked.json.id}`)
  await runFoliosPass(s.server.deps)
  return (await get(`/caf/solicitudes/${asked.json.id}`)).json
}

test('a CAF requested at the SII is checked, stored and used; a second request of the type waits for the first', async () => {
  const asked = await post('/caf/solicitar', { tipo_dte: 33, cantidad: 40 })
  expect(asked.status).toBe(202)
  const again = await post('/caf/solicitar', { tipo_dte: 33 })
  expect(again.status).toBe(409)
  expect(again.json.code).toBe('CAF_SOLICITUD_EN_CURSO')
  expect(again.json.context.solicitud_id).toBe(asked.json.id)

  expect(await runFoliosPass(s.server.deps)).toBe(1)
  const done = (await get(`/caf/solicitudes/${asked.json.id}`)).json
  expect(done).toMatchObject({ operacion: 'solicitud', origen: 'api', tipo_dte: 33, estado: 'descargado', cantidad_pedida: 40, cantidad_solicitada: 40, folio_desde: 1, folio_hasta: 40, falla: null })
  expect(done.max_autor).toBeGreaterThanOrEqual(40)
  expect(grants()).toBe(1)

  const caf = (await get(`/caf/${done.caf_id}`)).json
  expect(caf).toMatchObject({ tipo_dte: 33, folio_desde: 1, folio_hasta: 40, folios_disponibles: 40, is_active: true, anulacion: null })
  const [obtenido] = events('caf.obtenido')
  expect(obtenido.solicitud.id).toBe(asked.json.id)
  expect(obtenido.caf.id).toBe(done.caf_id)

  // Issued with it.
  const dte = await issue(s, t, facturaSimple())
  expect(dte.status).toBe(201)
  expect(dte.json.folio).toBe(1)
  expect((await get(`/caf/${done.caf_id}`)).json.tramos).toEqual([{ desde: 1, hasta: 1, estado: 'usado' }, { desde: 2, hasta: 40, estado: 'disponible' }])

  // Without a quantity, the SII's maximum; the numbering continues.
  simStore.folios.setAjustes(t.empresa.rut, { ...simStore.folios.ajustes(t.empresa.rut), maxAutor: { 33: 25 } })
  const max = await solicitar({ tipo_dte: 33 })
  expect(max).toMatchObject({ estado: 'descargado', cantidad_pedida: null, cantidad_solicitada: 25, max_autor: 25, folio_desde: 41, folio_hasta: 65 })
  expect(grants()).toBe(2)
})

test('the SII\'s refusals are failures in words with nothing stored: over the maximum, not authorised, F29 pending', async () => {
  const before = cafCount()
  const ajustes = simStore.folios.ajustes(t.empresa.rut)
  simStore.folios.setAjustes(t.empresa.rut, { ...ajustes, maxAutor: { ...ajustes.maxAutor, 34: 0 } })
  const over = await solicitar({ tipo_dte: 34, cantidad: 10 })
  expect(over).toMatchObject({ estado: 'fallido', falla: { motivo: 'excede_maximo', etapa: 'documento' }, folio_desde: null })

  simStore.folios.setAjustes(t.empresa.rut, { ...ajustes, noAutorizado: true })
  const notAuth = await solicitar({ tipo_dte: 56, cantidad: 10 })
  expect(notAuth.estado).toBe('fallido')
  expect(notAuth.falla.motivo).toBe('no_autorizado')
  expect(notAuth.falla.mensaje).toMatch(/autoriz/i)

  simStore.folios.setAjustes(t.empresa.rut, { ...ajustes, f29Pendiente: true })
  const f29 = await solicitar({ tipo_dte: 61, cantidad: 10 })
  expect(f29.estado).toBe('fallido')
  expect(f29.falla.motivo).toBe('f29_pendiente')
  expect(f29.falla.mensaje).toMatch(/F29/)
  simStore.folios.setAjustes(t.empresa.rut, ajustes)

  expect(cafCount()).toBe(before)
  const fallidas = events('caf.solicitud_fallida').map((d) => d.solicitud.id)
  expect(fallidas).toEqual([over.id, notAuth.id, f29.id])
  // The history lists them newest first, filtered by estado.
  const list = (await get('/caf/solicitudes?estado=fallido')).json
  expect(list.data.map((r: { id: string }) => r.id)).toEqual([f29.id, notAuth.id, over.id])
})

test('a connection cut after the grant is recovered by re-download: one grant, the CAF stored', async () => {
  const before = grants()
  simStore.setFalla('corte_tras_otorgar', 1)
  const first = await solicitar({ tipo_dte: 52, cantidad: 30 })
  expect(first.estado).toBe('otorgado')
  expect(first).toMatchObject({ folio_desde: 1, folio_hasta: 30, caf_id: null, intentos: 1 })
  expect(first.falla.etapa).toBe('otorgamiento')
  expect(grants()).toBe(before + 1)
  // While granted, a new request of the type waits; the next pass re-downloads.
  expect((await post('/caf/solicitar', { tipo_dte: 52 })).status).toBe(409)
  await runFoliosPass(s.server.deps)
  const done = (await get(`/caf/solicitudes/${first.id}`)).json
  expect(done).toMatchObject({ estado: 'descargado', folio_desde: 1, folio_hasta: 30, falla: null })
  expect(grants()).toBe(before + 1)
  expect((await get(`/caf/${done.caf_id}`)).json).toMatchObject({ tipo_dte: 52, folio_desde: 1, folio_hasta: 30 })
})

test('a page the flow does not recognise stops it at its step, nothing granted', async () => {
  const before = grants()
  simStore.setFalla('pagina_cambiada', 1)
  const got = await solicitar({ tipo_dte: 46, cantidad: 5 })
  expect(got.estado).toBe('fallido')
  expect(got.falla.motivo).toBe('pagina_desconocida')
  expect(['inicio', 'empresa', 'documento', 'numeracion']).toContain(got.falla.etapa)
  expect(grants()).toBe(before)
})

test('bad input changes nothing: unknown type, quantity out of range, no certificate', async () => {
  const n = (s.server.deps.store.sqlite.query('SELECT count(*) AS n FROM caf_solicitudes').get() as { n: number }).n
  const bad = await post('/caf/solicitar', { tipo_dte: 35, cantidad: 0 })
  expect(bad.status).toBe(400)
  expect(bad.json.code).toBe('VALIDATION_ERROR')
  expect(bad.json.details.map((d: { field: string }) => d.field).sort()).toEqual(['cantidad', 'tipo_dte'])
  expect((await post('/caf/solicitar', { tipo_dte: 33 }, t.readKey)).status).toBe(403)
  const nocert = await s.tenant(testRut())
  const refused = await s.request('POST', `${API}/caf/solicitar`, { headers: { 'X-Api-Key': nocert.writeKey }, body: { tipo_dte: 33 } })
  expect(refused.status).toBe(422)
  expect(refused.json.code).toBe('CERTIFICATE_REQUIRED')
  expect((s.server.deps.store.sqlite.query('SELECT count(*) AS n FROM caf_solicitudes').get() as { n: number }).n).toBe(n)
})

test('automatic mode asks for the next CAF when the free folios fall to the threshold, once', async () => {
  const off = (await get('/empresa/folios-automaticos')).json
  expect(off).toMatchObject({ activo: false, tipos: [], umbral: null, dias_antes_de_vencer: 15 })
  const bad = await s.request('PUT', `${API}/empresa/folios-automaticos`, { headers: { 'X-Api-Key': t.writeKey }, body: { activo: true, tipos: [], cantidad: 10 } })
  expect(bad.status).toBe(400)
  expect(bad.json.details[0].field).toBe('tipos')
  // A CAF must lift the stock over the threshold, or each new one would ask for the next.
  const loop = await s.request('PUT', `${API}/empresa/folios-automaticos`, { headers: { 'X-Api-Key': t.writeKey }, body: { activo: true, tipos: [39], cantidad: 5, umbral: 5 } })
  expect(loop.status).toBe(400)
  expect(loop.json.details[0].field).toBe('cantidad')
  expect((await get('/empresa/folios-automaticos')).json.activo).toBe(false)

  // Type 39: 8 folios, threshold 5.
  const first = await solicitar({ tipo_dte: 39, cantidad: 8 })
  expect(first.estado).toBe('descargado')
  const set = await s.request('PUT', `${API}/empresa/folios-automaticos`, { headers: { 'X-Api-Key': t.writeKey }, body: { activo: true, tipos: [39], cantidad: 20, umbral: 5 } })
  expect(set.status).toBe(200)
  expect(set.json).toMatchObject({ activo: true, tipos: [39], cantidad: 20, umbral: 5, umbral_efectivo: 5 })

  const boleta = { tipo_dte: 39, receptor: { rut: '66666666-6', razon_social: 'Consumidor final' }, auto_send: false, detalle: [{ nombre: 'Café', cantidad: 1, precio: 1500 }] }
  for (let i = 0; i < 2; i++) expect((await issue(s, t, boleta)).status).toBe(201)
  await runFoliosPass(s.server.deps)
  expect((await get('/caf/solicitudes?tipo_dte=39')).json.data).toHaveLength(1)
  expect((await issue(s, t, boleta)).status).toBe(201)
  // 5 left: at the threshold.
  await runFoliosPass(s.server.deps)
  const list = (await get('/caf/solicitudes?tipo_dte=39')).json.data
  expect(list).toHaveLength(2)
  expect(list[0]).toMatchObject({ origen: 'automatica', estado: 'descargado', cantidad_pedida: 20, folio_desde: 9, folio_hasta: 28 })
  // Now 25 free: quiet.
  await runFoliosPass(s.server.deps)
  expect((await get('/caf/solicitudes?tipo_dte=39')).json.data).toHaveLength(2)
  await s.request('PUT', `${API}/empresa/folios-automaticos`, { headers: { 'X-Api-Key': t.writeKey }, body: { activo: false, tipos: [39], cantidad: 20 } })
})

test('an expired CAF is listed for annulment, closed at once and annulled at the SII; its stretches say so', async () => {
  // The first test's two CAFs of type 33: folios 1–40 (folio 1 used) and 41–65.
  const cafs33 = (await get('/caf?tipo_dte=33')).json.data as Array<{ id: string; folio_desde: number }>
  const [segundo, primero] = cafs33.map((c) => c.id)
  expect(cafs33.map((c) => c.folio_desde)).toEqual([41, 1])
  expect((await get('/caf?por_anular=true')).json.data).toEqual([])

  clock.advance(181 * DAY)
  try {
    const porAnular = (await get('/caf?por_anular=true')).json.data
    expect(porAnular.map((c: { id: string }) => c.id)).toEqual([segundo, primero])
    expect(porAnular[1].tramos).toEqual([{ desde: 1, hasta: 1, estado: 'usado' }, { desde: 2, hasta: 40, estado: 'por_anular' }])

    const bad = await post(`/caf/${primero}/anular`, { motivo: '' })
    expect(bad.status).toBe(400)
    const asked = await post(`/caf/${primero}/anular`, { motivo: 'Folios vencidos sin usar' })
    expect(asked.status).toBe(202)
    expect(asked.json).toMatchObject({ operacion: 'anulacion', estado: 'en_curso', folio_desde: 2, folio_hasta: 40, caf_id: primero })
    expect((await post(`/caf/${primero}/anular`, { motivo: 'otra vez' })).json.context.motivo).toBe('anulacion_en_curso')
    expect((await get(`/caf/${primero}`)).json.tramos.at(-1)).toEqual({ desde: 2, hasta: 40, estado: 'en_anulacion' })

    const disponiblesAntes = simStore.folios.disponibles(t.empresa.rut, 33)
    await runFoliosPass(s.server.deps)
    const done = (await get(`/caf/solicitudes/${asked.json.id}`)).json
    expect(done.estado).toBe('anulado')
    const caf = (await get(`/caf/${primero}`)).json
    expect(caf.anulacion).toMatchObject({ estado: 'anulado', rangos: [{ desde: 2, hasta: 40 }], motivo: 'Folios vencidos sin usar' })
    expect(caf.tramos).toEqual([{ desde: 1, hasta: 1, estado: 'usado' }, { desde: 2, hasta: 40, estado: 'anulado' }])
    expect(caf.folios_disponibles).toBe(0)
    expect(simStore.folios.disponibles(t.empresa.rut, 33)).toBe(disponiblesAntes - 39)
    expect(events('caf.anulado').map((d) => d.caf.id)).toEqual([primero])
    expect((await get('/caf?por_anular=true')).json.data.map((c: { id: string }) => c.id)).toEqual([segundo])
    const again = await post(`/caf/${primero}/anular`, { motivo: 'otra vez' })
    expect(again.status).toBe(409)
    expect(again.json).toMatchObject({ code: 'CAF_NO_ANULABLE', context: { motivo: 'ya_anulado' } })
  } finally {
    clock.advance(-181 * DAY)
  }
})
