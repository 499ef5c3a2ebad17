// A set the SII rejects and its re-issue (DESIGN §15 `reemitir`): documents whose case the simulated SII never gave the
// company come back rejected with its reason, the stage says so and what to do; once the set is the one the SII gave,
// `reemitir` issues the rejected cases again with new folios, in a new envelope, and the SII accepts them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { testClock } from '../support/clock'
import { provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const SET_FILE = join(import.meta.dir, '../fixtures/sii/sets/001-basico.txt')
const submit = siiSubmitJob(3_600_000)
const track = siiTrackJob(3_600_000)

describe('certificación: a rejected set re-issued with new folios', () => {
  const clock = testClock()
  let s: TestServer
  let t: Tenant
  const estado = async () => (await s.request('GET', '/api/v1/billing/certificacion', { headers: { 'X-Api-Key': t.readKey } })).json
  const emitir = (body: unknown) => s.request('POST', '/api/v1/billing/certificacion/set/emitir', { headers: { 'X-Api-Key': t.writeKey }, body })

  async function settle(): Promise<any> {
    for (let i = 0; i < 60; i++) {
      await submit.runOnce(s.server.deps)
      await track.runOnce(s.server.deps)
      const e = await estado()
      if (e.envios.every((x: any) => x.estado !== 'procesando' && x.estado !== 'por_enviar')) return e
      clock.advance(20_000)
    }
    return estado()
  }

  beforeAll(async () => {
    s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h' } })
    t = await s.tenant(testRut())
    await provisionIssuer(s, t, { folios: 40, tipos: [33, 56, 61] })
    const r = await s.request('POST', '/api/v1/billing/certificacion/set', { headers: { 'X-Api-Key': t.writeKey }, body: { archivo_base64: readFileSync(SET_FILE).toString('base64') } })
    expect(r.status).toBe(201)
  })
  afterAll(() => s.stop())

  test('a set the SII never gave this company: every document rejected with the reason, and the stage says what to do', async () => {
    expect((await emitir({})).status).toBe(200)
    const e = await settle()
    const casos = e.sets[0].casos
    expect(casos.every((c: any) => c.estado === 'rechazado')).toBe(true)
    expect(casos[0].glosa_sii).toContain('Caso no corresponde a un set de pruebas')
    expect(e.envios[0].estado).toBe('rechazado')
    expect(e.etapas[0]).toMatchObject({ etapa: 'set_pruebas', estado: 'con_errores' })
    expect(e.etapas[0].siguiente_paso).toContain('Reemitir rechazados')
  })

  test('reemitir: the same cases again with new folios in a new envelope, accepted once the set is the SII\'s', async () => {
    const before = (await estado()).sets[0].casos.map((c: any) => ({ id: c.dte_id, folio: c.folio, tipo: c.tipo_dte }))
    // The person downloaded this set from the SII: the simulated SII now knows it (timbre sii-simulator set --from).
    const recorded = Bun.spawnSync([process.execPath, join(import.meta.dir, '../../src/main.ts'), 'sii-simulator', 'set', '--rut', t.empresa.rut, '--from', SET_FILE, '--data-dir', s.dataDir])
    expect(recorded.exitCode).toBe(0)
    const r = await emitir({ reemitir: true })
    expect(r.status).toBe(200)
    const after = r.json.sets[0].casos
    expect(after).toHaveLength(before.length)
    after.forEach((c: any, i: number) => {
      expect(c.dte_id).not.toBe(before[i].id)
      expect(c.folio).toBeGreaterThan(Math.max(...before.filter((b: any) => b.tipo === c.tipo_dte).map((b: any) => b.folio)))
    })
    expect(r.json.envios).toHaveLength(2)
    const e = await settle()
    expect(e.sets[0].casos.map((c: any) => c.estado)).toEqual(after.map(() => 'aceptado'))
    expect(e.envios.map((x: any) => x.estado)).toEqual(['rechazado', 'aceptado'])
    // The rejected envelope stays in the record; the stage only asks for the libros the set's file asks for, or to declare.
    expect(e.etapas[0].estado).not.toBe('con_errores')
    // A second reemitir finds nothing to re-issue.
    const again = await emitir({ reemitir: true })
    expect(again.json.sets[0].casos.map((c: any) => c.dte_id)).toEqual(after.map((c: any) => c.dte_id))
  })
})

describe('certificación: documents issued without an envelope are sent by the next emitir', () => {
  let s: TestServer
  let t: Tenant
  beforeAll(async () => {
    s = await startTestServer({ flags: { '--submit-every': '1h', '--track-every': '1h' } })
    t = await s.tenant(testRut())
    await provisionIssuer(s, t, { folios: 20, tipos: [33, 56, 61] })
    expect((await s.request('POST', '/api/v1/billing/certificacion/set', { headers: { 'X-Api-Key': t.writeKey }, body: { archivo_base64: readFileSync(SET_FILE).toString('base64') } })).status).toBe(201)
  })
  afterAll(() => s.stop())

  test('emitir with enviar false issues every case and sends nothing; emitir again puts them all in one envelope', async () => {
    const quiet = await s.request('POST', '/api/v1/billing/certificacion/set/emitir', { headers: { 'X-Api-Key': t.writeKey }, body: { enviar: false } })
    expect(quiet.status).toBe(200)
    const casos = quiet.json.sets[0].casos
    expect(casos.every((c: any) => c.estado === 'firmado')).toBe(true)
    expect(quiet.json.envios).toEqual([])
    const sent = await s.request('POST', '/api/v1/billing/certificacion/set/emitir', { headers: { 'X-Api-Key': t.writeKey }, body: {} })
    expect(sent.json.envios).toHaveLength(1)
    expect(sent.json.envios[0].track_id).toMatch(/^\d{10}$/)
    expect(sent.json.envios[0].documentos).toBe(casos.length)
    expect(sent.json.sets[0].casos.map((c: any) => c.dte_id)).toEqual(casos.map((c: any) => c.dte_id))
    // Nothing left to send: a third run makes no envelope.
    expect((await s.request('POST', '/api/v1/billing/certificacion/set/emitir', { headers: { 'X-Api-Key': t.writeKey }, body: {} })).json.envios).toHaveLength(1)
  })
})

describe('certificación: one document of a set objected, re-issued alone', () => {
  const clock = testClock()
  let s: TestServer
  let t: Tenant
  const estado = async () => (await s.request('GET', '/api/v1/billing/certificacion', { headers: { 'X-Api-Key': t.readKey } })).json
  beforeAll(async () => {
    s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h' } })
    t = await s.tenant(testRut())
    await provisionIssuer(s, t, { folios: 20, tipos: [33, 56, 61] })
    expect((await s.request('POST', '/api/v1/billing/certificacion/set', { headers: { 'X-Api-Key': t.writeKey }, body: { archivo_base64: readFileSync(SET_FILE).toString('base64') } })).status).toBe(201)
    expect(Bun.spawnSync([process.execPath, join(import.meta.dir, '../../src/main.ts'), 'sii-simulator', 'set', '--rut', t.empresa.rut, '--from', SET_FILE, '--data-dir', s.dataDir]).exitCode).toBe(0)
  })
  afterAll(() => s.stop())

  async function settle(): Promise<any> {
    for (let i = 0; i < 60; i++) {
      await submit.runOnce(s.server.deps)
      await track.runOnce(s.server.deps)
      const e = await estado()
      if (e.sets[0].casos.every((c: any) => ['aceptado', 'rechazado', 'con_reparos'].includes(c.estado))) return e
      clock.advance(20_000)
    }
    return estado()
  }

  test('two requests uploading the same envelope at once: one upload, one track id', async () => {
    const { crearEnvio, subirEnvio } = await import('../../src/services/certificacion-emitir')
    const quiet = await s.request('POST', '/api/v1/billing/certificacion/set/emitir', { headers: { 'X-Api-Key': t.writeKey }, body: { enviar: false } })
    const ids = quiet.json.sets[0].casos.map((c: any) => c.dte_id)
    const deps = s.server.deps
    const { findEmpresaById } = await import('../../src/db/empresa-store')
    const { findDtesById } = await import('../../src/db/certificacion-store')
    const rows = [...findDtesById(deps.store.db, t.empresa.id, ids).values()]
    const envio = await crearEnvio(deps, findEmpresaById(deps.store.db, t.empresa.id)!, { clase: 'set', nombres: ['BASICO'], dtes: rows })
    const outcomes = await Promise.all([subirEnvio(deps, envio), subirEnvio(deps, envio)])
    expect(outcomes.filter((o) => o !== null)).toHaveLength(1)
    const e = await estado()
    expect(e.envios).toHaveLength(1)
    expect(e.envios[0].track_id).toMatch(/^\d{10}$/)
  })

  test('a reparo on one document: reemitir re-issues that case alone, and the stage clears once it is accepted', async () => {
    const e0 = await settle()
    expect(e0.sets[0].casos.every((c: any) => c.estado === 'aceptado')).toBe(true)
    // The SII's reparo on the first invoice (the simulator gives reparos by receiver, which a set does not choose).
    const objected = e0.sets[0].casos.find((c: any) => c.tipo_dte === 33 && c.referencia === null && !e0.sets[0].casos.some((o: any) => o.referencia?.caso === c.caso))
    s.server.deps.store.db.run(sql`UPDATE dtes SET estado = 'con_reparos', glosa_sii = 'Reparo de prueba' WHERE id = ${objected.dte_id}`)
    const e1 = await estado()
    expect(e1.etapas[0]).toMatchObject({ etapa: 'set_pruebas', estado: 'con_errores' })
    const r = await s.request('POST', '/api/v1/billing/certificacion/set/emitir', { headers: { 'X-Api-Key': t.writeKey }, body: { reemitir: true } })
    const changed = r.json.sets[0].casos.filter((c: any, i: number) => c.dte_id !== e0.sets[0].casos[i].dte_id).map((c: any) => c.caso)
    expect(changed).toEqual([objected.caso])
    expect(r.json.envios.map((x: any) => x.documentos)).toEqual([e0.sets[0].casos.length, 1])
    const e2 = await settle()
    expect(e2.envios.map((x: any) => [x.estado, x.vigente])).toEqual([['aceptado', true], ['aceptado', true]])
    expect(e2.etapas[0].estado).not.toBe('con_errores')
  })
})
