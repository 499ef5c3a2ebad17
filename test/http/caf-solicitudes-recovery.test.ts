// The recovery rule of folios from the SII (DESIGN §17, docs/decisions/folios.md): a grant is never asked twice. A
// process that dies after the grant was POSTed leaves the range recorded before it, and the next process re-downloads
// it; one that stops before leaves nothing granted and asks again; failed re-downloads are retried on their waits and
// end `fallido` with the range and the words to finish by hand. An annulment refused before it reached the SII opens
// the CAF again; one whose answer was lost leaves it closed. Against the simulator over HTTP and mutual TLS; the
// portal client is wrapped only to stop a run where a crash would.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { runFoliosPass } from '../../src/services/caf-solicitudes'
import type { FoliosPortalClient } from '../../src/sii/portal/folios'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { SimulatorStore } from '../../src/sii/simulator/store'
import { testClock } from '../support/clock'
import { facturaSimple, issue, uploadCertificate } from '../support/issuance'
import { API } from '../support/received'
import { startTestServer, tempDir, testRut, type Tenant, type TestServer } from '../support/server'

const clock = testClock()
let sim: RunningSimulator
let simStore: SimulatorStore
let s: TestServer
let t: Tenant

beforeAll(async () => {
  const simDir = tempDir('timbre-folios-recovery-sim-')
  sim = await startSimulator({ clock: clock.now, processingDelayMs: 0, dataDir: simDir })
  simStore = new SimulatorStore(simDir)
  s = await startTestServer({ clock, flags: { '--sii': sim.url, '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h', '--folios-every': '1h' } })
  t = await s.tenant(testRut(), 'Distribuidora El Roble SpA')
  await uploadCertificate(s, t)
}, 60_000)
afterAll(async () => {
  await s?.stop()
  simStore?.close()
  await sim?.stop()
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
  // The SII grants and the file arrives, but the process dies before recording it.
  await runFoliosPass(withPortal({
    solicitarCaf: async (...args) => {
      await real().solicitarCaf(...args)
      throw new Error('killed')
    },
  }))
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
