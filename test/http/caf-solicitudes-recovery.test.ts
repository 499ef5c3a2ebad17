// The recovery rule of folios from the SII (DESIGN §17, docs/decisions/folios.md): a grant is never asked twice. A
// process that dies after the grant was POSTed leaves the range recorded before it, and the next process re-downloads
// it; one that stops before leaves nothing granted and asks again; failed re-downloads are retried on their waits and
// end `fallido` with the range and the words to finish by hand. An annulment refused before it reached the SII opens
// the CAF again; one whose answer was lost leaves it closed. Against the simulator over HTTP and mutual TLS; the
// portal client is wrapped only to stop a run where a crash would.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { runFoliosPass } from '../../src/services/caf-solicitudes'
import type { FoliosPortalClient } from '../../src/sii/portal/folios'
import type { SimulatorStore } from '../../src/sii/simulator/store'
import type { TestClock } from '../support/clock'
import { startFoliosWorld, type FoliosWorld } from '../support/folios'
import { facturaSimple, issue, uploadCaf, uploadCertificate } from '../support/issuance'
import { API } from '../support/received'
import { testRut, type Tenant, type TestServer } from '../support/server'

let world: FoliosWorld
let clock: TestClock
let simStore: SimulatorStore
let s: TestServer
let t: Tenant

beforeAll(async () => {
  world = await startFoliosWorld('Distribuidora El Roble SpA')
  ;({ clock, simStore, s, t } = world)
}, 60_000)
afterAll(async () => {
  await world?.stop()
})

const get = async (path: string) => (await s.request('GET', `${API}${path}`, { headers: { 'X-Api-Key': t.readKey } })).json
const post = async (path: string, body?: unknown) => s.request('POST', `${API}${path}`, { headers: { 'X-Api-Key': t.writeKey }, body })
const grants = () => simStore.folios.cuentaOtorgamientos(t.empresa.rut)
const real = (): FoliosPortalClient => s.server.deps.foliosPortal
const withPortal = (portal: Partial<FoliosPortalClient>) => ({ ...s.server.deps, foliosPortal: { ...real(), ...portal } })
const sql = (query: string, ...params: Array<string | number | null>) => s.server.deps.store.sqlite.run(query, params)

/** What a process killed mid-run leaves: its lease, held by an owner that no longer exists. */
function diedHolding(id: string): void {
  sql("UPDATE caf_solicitudes SET lease_owner = 'proceso-muerto', lease_until = '2999-01-01T00:00:00.000Z', proximo_intento_at = NULL WHERE id = ?", id)
}

test('killed after the grant was POSTed: the next process re-downloads the recorded range, one grant', async () => {
  const asked = (await post('/caf/solicitar', { tipo_dte: 33, cantidad: 20 })).json
  // The SII grants and the file arrives, but the process dies before recording it: this run never returns, and its
  // process's lease is left behind.
  void runFoliosPass(withPortal({
    solicitarCaf: async (...args) => {
      await real().solicitarCaf(...args)
      return new Promise(() => {})
    },
  }))
  for (let i = 0; i < 200 && grants() === 0; i++) await Bun.sleep(10)
  diedHolding(asked.id)
  const left = await get(`/caf/solicitudes/${asked.id}`)
  expect(left).toMatchObject({ estado: 'en_curso', folio_desde: 1, folio_hasta: 20, caf_id: null })
  expect(grants()).toBe(1)

  await runFoliosPass(s.server.deps)
  expect(await get(`/caf/solicitudes/${asked.id}`)).toMatchObject({ estado: 'descargado', folio_desde: 1, folio_hasta: 20 })
  expect(grants()).toBe(1)
})

test('stopped before the grant (its range could not be recorded): nothing granted, asked again later', async () => {
  const before = grants()
  const asked = (await post('/caf/solicitar', { tipo_dte: 34, cantidad: 15 })).json
  await runFoliosPass(withPortal({
    solicitarCaf: (company, creds, pedido) => real().solicitarCaf(company, creds, {
      ...pedido,
      antesDelOtorgamiento: async (rango) => {
        // Another owner took the request meanwhile: the record fails, so the grant is never POSTed.
        sql("UPDATE caf_solicitudes SET lease_owner = 'otro' WHERE id = ?", asked.id)
        await pedido.antesDelOtorgamiento!(rango)
      },
    }),
  }))
  expect(grants()).toBe(before)
  sql('UPDATE caf_solicitudes SET lease_owner = NULL, lease_until = NULL WHERE id = ?', asked.id)
  const waiting = await get(`/caf/solicitudes/${asked.id}`)
  expect(waiting).toMatchObject({ estado: 'en_curso', folio_desde: null })
  clock.advance(61_000)
  await runFoliosPass(s.server.deps)
  expect(await get(`/caf/solicitudes/${asked.id}`)).toMatchObject({ estado: 'descargado', folio_desde: 1, folio_hasta: 15 })
  expect(grants()).toBe(before + 1)
})

test('re-downloads that keep failing wait longer each time, then end fallido with the range and what to do', async () => {
  const before = grants()
  const failing = withPortal({
    redescargarCaf: async () => ({ kind: 'failed', motivo: 'sin_conexion', mensaje: 'No hubo respuesta del SII.', etapa: 'descarga' }),
  })
  simStore.setFalla('corte_tras_otorgar', 1)
  const asked = (await post('/caf/solicitar', { tipo_dte: 52, cantidad: 10 })).json
  await runFoliosPass(failing)
  let row = await get(`/caf/solicitudes/${asked.id}`)
  expect(row).toMatchObject({ estado: 'otorgado', intentos: 1, folio_desde: 1, folio_hasta: 10 })
  const waits: number[] = []
  for (let i = 0; i < 6; i++) {
    const due = Date.parse(row.proximo_intento_at)
    waits.push(Math.round((due - clock.now().getTime()) / 1000))
    clock.advance(Math.max(0, due - clock.now().getTime()) + 1)
    await runFoliosPass(failing)
    row = await get(`/caf/solicitudes/${asked.id}`)
  }
  // The next pass, 30 s, 2 min, 10 min, 1 h, 1 h (as of the moment each failure was recorded).
  expect(waits.map((w) => Math.round(w / 10) * 10 + 0)).toEqual([0, 30, 120, 600, 3600, 3600])
  expect(row).toMatchObject({ estado: 'fallido', folio_desde: 1, folio_hasta: 10, caf_id: null, falla: { motivo: 'sin_conexion', etapa: 'descarga' } })
  expect(row.falla.mensaje).toContain('Reobtención')
  expect(grants()).toBe(before + 1)
  const events = (s.server.deps.store.sqlite.query("SELECT body FROM events WHERE empresa_id = ? AND type = 'caf.solicitud_fallida'").all(t.empresa.id) as Array<{ body: string }>)
    .map((e) => JSON.parse(e.body).data.solicitud)
  expect(events.map((e) => [e.id, e.folio_desde, e.folio_hasta])).toEqual([[asked.id, 1, 10]])
  // A new request of the type may be made now: the next range.
  const next = (await post('/caf/solicitar', { tipo_dte: 52, cantidad: 5 })).json
  await runFoliosPass(s.server.deps)
  expect(await get(`/caf/solicitudes/${next.id}`)).toMatchObject({ estado: 'descargado', folio_desde: 11, folio_hasta: 15 })
})

test('an annulment refused before reaching the SII opens the CAF again; one whose answer was lost keeps it closed', async () => {
  const caf = (await get('/caf?tipo_dte=33')).data[0]
  expect(caf).toMatchObject({ folio_desde: 1, folio_hasta: 20, folios_disponibles: 20 })

  const first = (await post(`/caf/${caf.id}/anular`, { motivo: 'Cambio de sistema' })).json
  // Closed at once: issuance finds no folio of type 33 while the annulment runs.
  expect((await issue(s, t, facturaSimple())).json.code).toBe('NO_FOLIOS_AVAILABLE')
  await runFoliosPass(withPortal({ anularFolios: async () => ({ kind: 'failed', motivo: 'login_rechazado', mensaje: 'El SII no aceptó el certificado.', etapa: 'ingreso' }) }))
  expect(await get(`/caf/solicitudes/${first.id}`)).toMatchObject({ estado: 'fallido', falla: { motivo: 'login_rechazado', etapa: 'ingreso' } })
  expect(await get(`/caf/${caf.id}`)).toMatchObject({ anulacion: null, folios_disponibles: 20, is_active: true })
  const dte = await issue(s, t, facturaSimple())
  expect(dte.status).toBe(201)
  expect(dte.json.folio).toBe(1)

  const second = (await post(`/caf/${caf.id}/anular`, { motivo: 'Cambio de sistema' })).json
  expect(second).toMatchObject({ folio_desde: 2, folio_hasta: 20 })
  await runFoliosPass(withPortal({ anularFolios: async () => ({ kind: 'failed', motivo: 'sin_conexion', mensaje: 'No hubo respuesta del SII.', etapa: 'anulacion' }) }))
  const lost = await get(`/caf/solicitudes/${second.id}`)
  expect(lost.estado).toBe('fallido')
  expect(lost.falla.mensaje).toContain('Puede que el SII sí los haya anulado')
  expect(await get(`/caf/${caf.id}`)).toMatchObject({ anulacion: { estado: 'en_curso' }, folios_disponibles: 0, is_active: false })
  expect((await issue(s, t, facturaSimple())).json.code).toBe('NO_FOLIOS_AVAILABLE')

  // Asked again, the SII annuls them.
  const third = (await post(`/caf/${caf.id}/anular`, { motivo: 'Cambio de sistema' })).json
  await runFoliosPass(s.server.deps)
  expect(await get(`/caf/solicitudes/${third.id}`)).toMatchObject({ estado: 'anulado' })
  expect((await get(`/caf/${caf.id}`)).tramos).toEqual([{ desde: 1, hasta: 1, estado: 'usado' }, { desde: 2, hasta: 20, estado: 'anulado' }])
})

test('an annulment whose answer was lost, asked again and refused (already annulled), keeps the CAF closed; ya_anulados confirms it', async () => {
  const got = (await post('/caf/solicitar', { tipo_dte: 39, cantidad: 30 })).json
  await runFoliosPass(s.server.deps)
  const cafId = (await get(`/caf/solicitudes/${got.id}`)).caf_id
  const disponibles = simStore.folios.disponibles(t.empresa.rut, 39)

  // The SII annuls them, and the answer is lost on the way back.
  const first = (await post(`/caf/${cafId}/anular`, { motivo: 'Cierre de la sucursal' })).json
  await runFoliosPass(withPortal({
    anularFolios: async (...args) => {
      await real().anularFolios(...args)
      return { kind: 'failed', motivo: 'sin_conexion', mensaje: 'No hubo respuesta del SII.', etapa: 'anulacion' }
    },
  }))
  expect(simStore.folios.disponibles(t.empresa.rut, 39)).toBe(disponibles - 30)
  expect((await get(`/caf/solicitudes/${first.id}`)).estado).toBe('fallido')
  expect((await get(`/caf/${cafId}`)).anulacion).toMatchObject({ estado: 'en_curso', rangos: [] })

  // Asked again, the SII refuses: they are annulled already. The CAF stays closed: no folio of it is handed out.
  const second = (await post(`/caf/${cafId}/anular`, { motivo: 'Cierre de la sucursal' })).json
  await runFoliosPass(s.server.deps)
  const refused = await get(`/caf/solicitudes/${second.id}`)
  expect(refused.estado).toBe('fallido')
  expect(await get(`/caf/${cafId}`)).toMatchObject({ anulacion: { estado: 'en_curso' }, folios_disponibles: 0, is_active: false })
  const boleta = { tipo_dte: 39, receptor: { rut: '66666666-6', razon_social: 'Consumidor final' }, auto_send: false, detalle: [{ nombre: 'Pan', cantidad: 1, precio: 990 }] }
  expect((await issue(s, t, boleta)).json.code).toBe('NO_FOLIOS_AVAILABLE')

  // The person sees them annulled at the SII and says so: recorded without asking the SII again.
  const confirmed = await post(`/caf/${cafId}/anular`, { motivo: 'Anulados en el SII', ya_anulados: true })
  expect(confirmed.status).toBe(202)
  expect(confirmed.json).toMatchObject({ operacion: 'anulacion', estado: 'anulado', folio_desde: 1, folio_hasta: 30 })
  expect(await get(`/caf/${cafId}`)).toMatchObject({ anulacion: { estado: 'anulado', rangos: [{ desde: 1, hasta: 30 }] }, tramos: [{ desde: 1, hasta: 30, estado: 'anulado' }] })
  const again = await post(`/caf/${cafId}/anular`, { motivo: 'x', ya_anulados: true })
  expect(again.json).toMatchObject({ code: 'CAF_NO_ANULABLE', context: { motivo: 'sin_anulacion_incierta' } })
})

test('the first timbraje starts after the folios the company already holds; a proposal over a CAF it holds is refused before the grant', async () => {
  const other = await s.tenant(testRut(), 'Comercial Los Andes Ltda.')
  await uploadCertificate(s, other)
  const auth = { headers: { 'X-Api-Key': other.writeKey } }
  // CAFs obtained elsewhere, 1–100: the SII's first timbraje proposes folio 1, Timbre confirms 101.
  await uploadCaf(s, other, 46, 1, 100)
  const first = (await s.request('POST', `${API}/caf/solicitar`, { ...auth, body: { tipo_dte: 46, cantidad: 10 } })).json
  await runFoliosPass(s.server.deps)
  expect((await s.request('GET', `${API}/caf/solicitudes/${first.id}`, auth)).json).toMatchObject({ estado: 'descargado', folio_desde: 101, folio_hasta: 110 })

  // 111–150 uploaded by hand: the SII (unaware) proposes 111–120 next, which Timbre refuses before it is granted.
  const before = simStore.folios.cuentaOtorgamientos(other.empresa.rut)
  await uploadCaf(s, other, 46, 111, 150)
  const second = (await s.request('POST', `${API}/caf/solicitar`, { ...auth, body: { tipo_dte: 46, cantidad: 10 } })).json
  await runFoliosPass(s.server.deps)
  const refused = (await s.request('GET', `${API}/caf/solicitudes/${second.id}`, auth)).json
  expect(refused).toMatchObject({ estado: 'fallido', folio_desde: null, falla: { motivo: 'respuesta_invalida', etapa: 'otorgamiento' } })
  expect(refused.falla.mensaje).toContain('111 a 150')
  expect(simStore.folios.cuentaOtorgamientos(other.empresa.rut)).toBe(before)
})

test('an internal error is counted like a failed attempt and ends fallido with its webhook, never a loop', async () => {
  const asked = (await post('/caf/solicitar', { tipo_dte: 110, cantidad: 5 })).json
  const broken = withPortal({ solicitarCaf: async () => { throw new Error('worker lost') } })
  for (let i = 0; i < 7; i++) {
    await runFoliosPass(broken)
    clock.advance(61_000)
  }
  const row = await get(`/caf/solicitudes/${asked.id}`)
  expect(row).toMatchObject({ estado: 'fallido', intentos: 7, falla: { motivo: 'error_interno' } })
  const fallidas = (s.server.deps.store.sqlite.query("SELECT body FROM events WHERE empresa_id = ? AND type = 'caf.solicitud_fallida'").all(t.empresa.id) as Array<{ body: string }>)
    .map((e) => JSON.parse(e.body).data.solicitud.id)
  expect(fallidas).toContain(asked.id)
  // The type is free again.
  expect((await post('/caf/solicitar', { tipo_dte: 110, cantidad: 5 })).status).toBe(202)
})

test('GET /caf?por_anular=false lists every CAF that has nothing to annul, those of types that never expire included', async () => {
  const all = (await get('/caf?limit=100')).data as Array<{ id: string; tipo_dte: number; tramos: Array<{ estado: string }> }>
  const pending = (await get('/caf?por_anular=true&limit=100')).data as Array<{ id: string }>
  const rest = (await get('/caf?por_anular=false&limit=100')).data as Array<{ id: string; tipo_dte: number }>
  expect(rest.map((c) => c.id).sort()).toEqual(all.filter((c) => !c.tramos.some((x) => x.estado === 'por_anular')).map((c) => c.id).sort())
  expect(pending.length + rest.length).toBe(all.length)
  expect(rest.some((c) => c.tipo_dte === 52)).toBe(true)
})
