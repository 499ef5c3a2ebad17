// Issue 6 end to end on 127.0.0.1: issued DTEs travel through the real jobs and the SII client to the simulator over
// HTTP and back to a final state (DESIGN §6), with faults, restarts and re-uploads. Time is an injected clock shared
// with the in-process simulator, so "a minute later" is an argument, not a sleep.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { EmitirDte } from '../../src/domain/emision'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { startSimulator } from '../../src/sii/simulator/server'
import { signDte } from '../../src/xml/signature'
import { testClock, type TestClock } from '../support/clock'
import { fixtureOfEachType as fixturesByType } from '../support/fixtures'
import { facturaSimple, issue, provisionIssuer, signer } from '../support/issuance'
import { startTestServer, tempDir, testRut, type Tenant, type TestServer } from '../support/server'

const FINAL = ['aceptado', 'rechazado', 'con_reparos']
const submit = siiSubmitJob(3_600_000)
const track = siiTrackJob(3_600_000)

/** Runs the two jobs, advancing the clock, until every DTE is final (or the rounds run out). */
async function drive(s: TestServer, clock: TestClock, ids: readonly string[], rounds = 60): Promise<Map<string, any>> {
  const deps = s.server.deps
  const records = new Map<string, any>()
  for (let i = 0; i < rounds; i++) {
    await submit.runOnce(deps)
    await track.runOnce(deps)
    records.clear()
    for (const id of ids) records.set(id, (await s.request('GET', `/api/v1/billing/dte/${id}`, { headers: { 'X-Api-Key': tenantOf.get(s)!.readKey } })).json)
    if ([...records.values()].every((r) => FINAL.includes(r.estado))) return records
    clock.advance(20_000)
  }
  return records
}
const tenantOf = new Map<TestServer, Tenant>()

/** Every type, with the receptors the simulator treats specially (DESIGN §9) replaced: here all should be accepted. */
function fixtureOfEachType(): EmitirDte[] {
  return fixturesByType().map(({ request }) => {
    const special = ['77777777-7', '88888888-8'].includes(request.receptor.rut)
    return { ...request, receptor: special ? { ...request.receptor, rut: '76086428-5' } : request.receptor }
  })
}

describe('through the in-process simulator', () => {
  const clock = testClock()
  let s: TestServer
  let tenant: Tenant

  beforeAll(async () => {
    s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h' } })
    tenant = await s.tenant(testRut())
    tenantOf.set(s, tenant)
    await provisionIssuer(s, tenant, { folios: 100 })
  })
  afterAll(() => s.stop())

  test('each of the 12 types reaches aceptado, with tracking and sii_status filled from the SII answers', async () => {
    const ids: string[] = []
    for (const request of fixtureOfEachType()) {
      const res = await issue(s, tenant, request)
      expect(res.status).toBe(201)
      ids.push(res.json.id)
    }
    const records = await drive(s, clock, ids)
    for (const [, r] of records) {
      expect({ tipo: r.tipo_dte, estado: r.estado }).toEqual({ tipo: r.tipo_dte, estado: 'aceptado' })
      expect(r.tracking.track_id).toMatch(/^\d+$/)
      expect(r.tracking.envio_id).toMatch(/^[0-9a-f-]{36}$/)
      expect(r.tracking.intentos).toBeGreaterThanOrEqual(1)
      expect(r.tracking.aceptados).toBe(1)
      expect(r.sii_status).toMatchObject({ track_id: r.tracking.track_id, checked_at: expect.any(String) })
      expect(r.sii_status.estado_sii).toBeTruthy()
    }
  }, 120_000)

  test('receptor 88888888-8 → rechazado; 77777777-7 → con_reparos; 66666666-6 boleta → aceptado', async () => {
    const rechazo = await issue(s, tenant, facturaSimple({ receptor: { rut: '88888888-8', razon_social: 'Rechazo SpA', giro: 'Pruebas', direccion: 'Calle 1', comuna: 'Santiago', ciudad: 'Santiago' } }))
    const reparo = await issue(s, tenant, facturaSimple({ receptor: { rut: '77777777-7', razon_social: 'Reparos Ltda', giro: 'Pruebas', direccion: 'Calle 2', comuna: 'Santiago', ciudad: 'Santiago' } }))
    const boleta = await issue(s, tenant, { tipo_dte: 39, receptor: { rut: '66666666-6', razon_social: 'Consumidor final' }, detalle: [{ nombre: 'Completo italiano', cantidad: 2, precio: 2500 }] })
    const records = await drive(s, clock, [rechazo.json.id, reparo.json.id, boleta.json.id])
    expect(records.get(rechazo.json.id)).toMatchObject({ estado: 'rechazado', tracking: { rechazados: 1 } })
    expect(records.get(reparo.json.id)).toMatchObject({ estado: 'con_reparos', tracking: { reparos: 1 } })
    expect(records.get(boleta.json.id)).toMatchObject({ estado: 'aceptado' })
  }, 120_000)

  test('auto_send false waits in firmado until POST /enviar; final states never change', async () => {
    const held = await issue(s, tenant, facturaSimple({ auto_send: false }))
    await drive(s, clock, [held.json.id], 3)
    expect((await s.request('GET', `/api/v1/billing/dte/${held.json.id}`, { headers: { 'X-Api-Key': tenant.readKey } })).json.estado).toBe('firmado')
    expect((await s.request('POST', `/api/v1/billing/dte/${held.json.id}/enviar`, { headers: { 'X-Api-Key': tenant.writeKey } })).status).toBe(202)
    const done = await drive(s, clock, [held.json.id])
    expect(done.get(held.json.id).estado).toBe('aceptado')
    // Nothing moves it again: a manual due date and more job runs leave it aceptado.
    s.server.deps.store.sqlite.run("UPDATE dtes SET next_attempt_at = '2000-01-01T00:00:00.000Z' WHERE id = ?", [held.json.id])
    await submit.runOnce(s.server.deps)
    await track.runOnce(s.server.deps)
    expect((await s.request('GET', `/api/v1/billing/dte/${held.json.id}`, { headers: { 'X-Api-Key': tenant.readKey } })).json.estado).toBe('aceptado')
  }, 60_000)

  test('a DTE whose stored signature was broken is refused by the SII (RFR) and becomes rechazado', async () => {
    const res = await issue(s, tenant, facturaSimple())
    const row = s.server.deps.store.sqlite.query('SELECT xml FROM dtes WHERE id = ?').get(res.json.id) as { xml: Uint8Array }
    const tampered = Buffer.from(Buffer.from(row.xml).toString('latin1').replace('<MntTotal>', '<MntTotal>1'), 'latin1')
    s.server.deps.store.sqlite.run('UPDATE dtes SET xml = ? WHERE id = ?', [tampered, res.json.id])
    const r = (await drive(s, clock, [res.json.id])).get(res.json.id)
    expect(r.estado).toBe('rechazado')
    // The SII takes the file, then refuses the envelope for its signature (docs/sii-protocol.md §6.5 RFR).
    expect(r.tracking).toMatchObject({ estado_envio: 'RFR', glosa_sii: expect.stringContaining('Firma') })
    expect(r.sii_status).toMatchObject({ source: 'envio', estado_sii: 'RFR' })
  }, 60_000)

  test('a forged TED (re-signed document, FRMT not matching) is rejected by the simulator', async () => {
    const res = await issue(s, tenant, facturaSimple())
    const row = s.server.deps.store.sqlite.query('SELECT xml FROM dtes WHERE id = ?').get(res.json.id) as { xml: Uint8Array }
    const text = Buffer.from(row.xml).toString('latin1')
    const unsigned = text.replace(/<Signature[\s\S]*<\/Signature>/, '')
    const forged = unsigned.replace(/<FRMT algoritmo="SHA1withRSA">(.)/, (_m, c: string) => `<FRMT algoritmo="SHA1withRSA">${c === 'A' ? 'B' : 'A'}`)
    s.server.deps.store.sqlite.run('UPDATE dtes SET xml = ? WHERE id = ?', [Buffer.from(signDte(forged, signer().signer), 'latin1'), res.json.id])
    const r = (await drive(s, clock, [res.json.id])).get(res.json.id)
    expect(r.estado).toBe('rechazado')
    // The envelope is processed with this document rejected; the SII never registers it as received.
    expect(r.tracking).toMatchObject({ estado_envio: 'EPR', informados: 1, aceptados: 0, rechazados: 1 })
    expect(r.sii_status).toMatchObject({ source: 'documento', estado_sii: 'FAU' })
  }, 60_000)

  test('STATUS 99 on a re-upload of the same envelope keeps the original track id', async () => {
    const res = await issue(s, tenant, facturaSimple())
    await submit.runOnce(s.server.deps)
    const first = (await s.request('GET', `/api/v1/billing/dte/${res.json.id}`, { headers: { 'X-Api-Key': tenant.readKey } })).json
    expect(first.estado).toBe('procesando')
    // As if the process died after the SII took the file but before the answer was stored.
    s.server.deps.store.sqlite.run("UPDATE dtes SET estado = 'enviando', track_id = NULL, next_attempt_at = '2000-01-01T00:00:00.000Z' WHERE id = ?", [res.json.id])
    await submit.runOnce(s.server.deps)
    const again = (await s.request('GET', `/api/v1/billing/dte/${res.json.id}`, { headers: { 'X-Api-Key': tenant.readKey } })).json
    expect(again.tracking.codigo_sii).toBe('99')
    expect(again.tracking.track_id).toBe(first.tracking.track_id)
    expect((await drive(s, clock, [res.json.id])).get(res.json.id).estado).toBe('aceptado')
  }, 60_000)

  test('GET /ready reports when the SII last answered', async () => {
    const ready = await s.request('GET', '/ready')
    expect(ready.json.sii.last_ok_at).toEqual(expect.any(String))
  })
})

describe('restart mid-flight', () => {
  test('a DTE procesando when the server stops reaches its final state after a restart on the same data dir', async () => {
    const clock = testClock()
    const dataDir = tempDir('timbre-restart-')
    const first = await startTestServer({ clock, dataDir, flags: { '--submit-every': '1h', '--track-every': '1h' } })
    const tenant = await first.tenant(testRut())
    tenantOf.set(first, tenant)
    await provisionIssuer(first, tenant, { tipos: [33], folios: 10 })
    const res = await issue(first, tenant, facturaSimple())
    await submit.runOnce(first.server.deps)
    expect((await first.request('GET', `/api/v1/billing/dte/${res.json.id}`, { headers: { 'X-Api-Key': tenant.readKey } })).json.estado).toBe('procesando')
    await first.stop()
    const second = await startTestServer({ clock, dataDir, flags: { '--submit-every': '1h', '--track-every': '1h' } })
    tenantOf.set(second, tenant)
    try {
      clock.advance(60_000)
      expect((await drive(second, clock, [res.json.id])).get(res.json.id).estado).toBe('aceptado')
    } finally {
      await second.stop()
    }
  }, 60_000)
})

describe('with 30 % faults (an SII origin, DESIGN §2)', () => {
  test('every DTE still reaches a final state and tracking.intentos counts the retries', async () => {
    const clock = testClock()
    let seed = 42
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
    const simulator = await startSimulator({ port: 0, dataDir: null, clock: clock.now, random, faults: { errorRate: 0.15, htmlRate: 0.1, hangRate: 0.05, hangMs: 3000 } })
    const s = await startTestServer({ clock, flags: { '--sii': simulator.url, '--submit-every': '1h', '--track-every': '1h' } })
    try {
      const tenant = await s.tenant(testRut())
      tenantOf.set(s, tenant)
      await provisionIssuer(s, tenant, { tipos: [33, 39], folios: 50 })
      const ids: string[] = []
      for (let i = 0; i < 10; i++) ids.push((await issue(s, tenant, i % 2 ? facturaSimple() : { tipo_dte: 39, receptor: { rut: '66666666-6', razon_social: 'Consumidor final' }, detalle: [{ nombre: 'Empanada', cantidad: 3, precio: 1800 }] })).json.id)
      const records = await drive(s, clock, ids, 120)
      for (const [, r] of records) expect(FINAL).toContain(r.estado)
      expect([...records.values()].some((r) => r.tracking.intentos > 1)).toBe(true)
    } finally {
      await s.stop()
      await simulator.stop()
    }
  }, 240_000)
})
