// Acting on a received DTE (DESIGN §13): the receiver accepts or claims a supplier's document at the SII
// (RegistroReclamoDTE of the SII simulator, over HTTP on 127.0.0.1) and answers the issuer by mail; the follow-up
// (followRecibidos) asks the SII's reception date, registers actions queued while the SII was down, warns before the
// plazo and records the tacit acceptance. The supplier is a second company of the same server whose DTEs the
// simulator accepted first. Time is one test clock shared by the server and the simulator.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { followRecibidos } from '../../src/services/recibidos-sii'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { testClock } from '../support/clock'
import { uploadCertificate } from '../support/issuance'
import { acceptedBySii, API, envioFor, facturaPara, importar, issueFrom, supplier, type IssuedToReceiver } from '../support/received'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'
import { SCHEMAS } from '../support/xml-tools'

const DAY = 86_400_000
const clock = testClock()
/** While true, every call to the simulator is answered 503 (its fault injection, drawn from this switch). */
let siiDown = false
let sim: RunningSimulator
let s: TestServer
let receiver: Tenant
let prov: Tenant
const SUPPLIER_MAIL = 'dte@proveedora.example'

beforeAll(async () => {
  sim = await startSimulator({ clock: clock.now, processingDelayMs: 1000, faults: { errorRate: 0.5 }, random: () => (siiDown ? 0 : 0.9) })
  s = await startTestServer({ clock, flags: { '--sii': sim.url, '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  receiver = await s.tenant(testRut(), 'Compradora del Sur Ltda.')
  await uploadCertificate(s, receiver)
  prov = await supplier(s)
  // The SII's list of issuers names the supplier's exchange address: where the answers go for an imported envelope.
  s.server.deps.store.sqlite.run('INSERT INTO contribuyentes (rut, razon_social, email_intercambio, updated_at) VALUES (?, ?, ?, ?)', [
    prov.empresa.rut, prov.empresa.razon_social, SUPPLIER_MAIL, new Date().toISOString(),
  ])
}, 60_000)
afterAll(async () => {
  await s?.stop()
  await sim?.stop()
})

const deps = () => s.server.deps
const get = async (id: string) => (await s.request('GET', `${API}/recibidos/${id}`, { headers: { 'X-Api-Key': receiver.readKey } })).json
const act = (id: string, accion: string, motivo?: string) =>
  s.request('POST', `${API}/recibidos/${id}/acciones`, { headers: { 'X-Api-Key': receiver.writeKey }, body: motivo === undefined ? { accion } : { accion, motivo } })
const mailOf = (id: string) =>
  s.server.deps.store.sqlite.query('SELECT kind, to_address, status, subject, attachment, attachment_name FROM mail_outbox WHERE recibido_id = ? ORDER BY id').all(id) as Array<{
    kind: string; to_address: string | null; status: string; subject: string; attachment: Uint8Array; attachment_name: string
  }>
const eventsOf = (type: string) =>
  (s.server.deps.store.sqlite.query('SELECT body FROM events WHERE empresa_id = ? AND type = ? ORDER BY id').all(receiver.empresa.id, type) as Array<{ body: string }>).map(
    (e) => JSON.parse(e.body).data.recibido,
  )

/** `n` facturas of the supplier to the receiver, accepted by the SII, imported by the receiver: their received ids. */
async function receivedAtSii(n: number): Promise<{ ids: string[]; docs: IssuedToReceiver[] }> {
  const docs: IssuedToReceiver[] = []
  for (let i = 0; i < n; i++) docs.push(await issueFrom(s, prov, facturaPara(receiver)))
  await acceptedBySii(s, clock, prov, docs.map((d) => d.id))
  const res = await importar(s, receiver, envioFor(prov, receiver, docs.map((d) => d.xml)))
  expect(res.status).toBe(201)
  return { ids: res.json.documentos.map((d: { id: string }) => d.id), docs }
}

let work: string | undefined
function tempFile(bytes: Uint8Array): string {
  work ??= mkdtempSync(join(tmpdir(), 'timbre-acciones-'))
  const file = join(work, `${crypto.randomUUID()}.xml`)
  writeFileSync(file, bytes)
  return file
}
function xmllint(bytes: Uint8Array, xsd: string): string {
  const run = Bun.spawnSync(['xmllint', '--noout', '--nonet', '--schema', join(SCHEMAS, xsd), tempFile(bytes)], { stdout: 'pipe', stderr: 'pipe' })
  return run.exitCode === 0 ? '' : run.stderr.toString('latin1')
}
function xmlsec1(bytes: Uint8Array, idAttr: string): string {
  const run = Bun.spawnSync(['xmlsec1', '--verify', '--id-attr:ID', idAttr, tempFile(bytes)], { stdout: 'pipe', stderr: 'pipe' })
  return run.exitCode === 0 ? '' : run.stderr.toString('latin1')
}

describe('the reception date and the plazo', () => {
  test('followRecibidos asks the SII when it received each document: fecha_recepcion_sii, and plazo 8 days later', async () => {
    const { ids } = await receivedAtSii(1)
    expect(await get(ids[0]!)).toMatchObject({ fecha_recepcion_sii: null, plazo: null })
    expect(await followRecibidos(deps())).toBeGreaterThanOrEqual(1)
    const r = await get(ids[0]!)
    expect(r.fecha_recepcion_sii).toEqual(expect.any(String))
    expect(new Date(r.plazo).getTime() - new Date(r.fecha_recepcion_sii).getTime()).toBe(8 * DAY)
    // Nothing is due again until the warning, two days before the plazo.
    const row = s.server.deps.store.sqlite.query('SELECT next_sii_at FROM recibidos WHERE id = ?').get(ids[0]!) as { next_sii_at: string }
    expect(new Date(row.next_sii_at).getTime()).toBe(new Date(r.plazo).getTime() - 2 * DAY)
  }, 120_000)
})

describe('POST /recibidos/{id}/acciones', () => {
  let ids: string[] = []
  let docs: IssuedToReceiver[] = []
  beforeAll(async () => {
    ;({ ids, docs } = await receivedAtSii(4))
    await followRecibidos(deps())
  }, 120_000)

  test('ACD: registered at the SII, 200 with the record aceptado, and a signed ResultadoDTE queued to the issuer', async () => {
    const res = await act(ids[0]!, 'ACD')
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ id: ids[0], estado: 'aceptado' })
    expect(res.json.acciones).toEqual([
      { accion: 'ACD', motivo: null, estado: 'registrada', cod_resp: 0, desc_resp: expect.any(String), solicitada_at: expect.any(String), registrada_at: expect.any(String) },
    ])
    expect(await get(ids[0]!)).toEqual(res.json)
    const [mail, ...rest] = mailOf(ids[0]!)
    expect(rest).toEqual([])
    expect(mail).toMatchObject({ kind: 'resultado_dte', to_address: SUPPLIER_MAIL, status: 'pending' })
    expect(mail!.attachment_name).toMatch(/^RespuestaDTE_\d+[0-9K]_\d+\.xml$/)
    const xml = Buffer.from(mail!.attachment).toString('latin1')
    expect(xml).toContain(`<Folio>${docs[0]!.folio}</Folio>`)
    expect(xml).toMatch(/<EstadoDTE>0<\/EstadoDTE>/)
    expect(xmllint(mail!.attachment, 'RespuestaEnvioDTE_v10.xsd')).toBe('')
    expect(xmlsec1(mail!.attachment, 'http://www.sii.cl/SiiDte:Resultado')).toBe('')
  })

  test('ERM after ACD: registered; an EnvioRecibos (Ley 19.983) queued that validates against EnvioRecibos_v10.xsd', async () => {
    const res = await act(ids[0]!, 'ERM')
    expect(res.status).toBe(200)
    expect(res.json.acciones.map((a: { accion: string; estado: string }) => [a.accion, a.estado])).toEqual([['ACD', 'registrada'], ['ERM', 'registrada']])
    const recibos = mailOf(ids[0]!).filter((m) => m.kind === 'envio_recibos')
    expect(recibos).toHaveLength(1)
    expect(recibos[0]).toMatchObject({ to_address: SUPPLIER_MAIL, status: 'pending' })
    expect(xmllint(recibos[0]!.attachment, 'EnvioRecibos_v10.xsd')).toBe('')
    expect(Buffer.from(recibos[0]!.attachment).toString('latin1')).toContain('Ley 19.983')
  })

  test('RCD with a motivo: reclamado, and the ResultadoDTE rejects with that glosa; then ACD is 409 ACCION_NO_PERMITIDA', async () => {
    const res = await act(ids[1]!, 'RCD', 'Precios no corresponden a la orden de compra')
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ estado: 'reclamado', acciones: [{ accion: 'RCD', motivo: 'Precios no corresponden a la orden de compra', estado: 'registrada' }] })
    const xml = Buffer.from(mailOf(ids[1]!)[0]!.attachment).toString('latin1')
    expect(xml).toMatch(/<EstadoDTE>2<\/EstadoDTE>/)
    expect(xml).toContain('Precios no corresponden a la orden de compra')
    const again = await act(ids[1]!, 'ACD')
    expect(again.status).toBe(409)
    expect(again.json).toMatchObject({ code: 'ACCION_NO_PERMITIDA', context: { motivo: expect.stringContaining('reclamado') } })
    expect((await act(ids[1]!, 'ERM')).json.code).toBe('ACCION_NO_PERMITIDA')
    expect((await get(ids[1]!)).acciones).toHaveLength(1)
    expect(mailOf(ids[1]!)).toHaveLength(1)
  })

  test('two actions at once on one document: one is registered, the other refused', async () => {
    const [a, b] = await Promise.all([act(ids[2]!, 'ACD'), act(ids[2]!, 'RCD')])
    expect([a.status, b.status].sort()).toEqual([200, 409])
    const r = await get(ids[2]!)
    expect(r.acciones.filter((x: { estado: string }) => x.estado === 'registrada')).toHaveLength(1)
    expect(mailOf(ids[2]!)).toHaveLength(1)
  })

  test('SII unreachable: 202, the action pendiente; the follow-up registers it later and emits recibido.accion', async () => {
    siiDown = true
    const res = await act(ids[3]!, 'ACD')
    expect(res.status).toBe(202)
    expect(res.json).toMatchObject({ estado: 'recibido', acciones: [{ accion: 'ACD', estado: 'pendiente', cod_resp: null, registrada_at: null }] })
    expect(mailOf(ids[3]!)).toEqual([])
    // While pending, another action waits for it.
    expect((await act(ids[3]!, 'RCD')).json).toMatchObject({ code: 'ACCION_NO_PERMITIDA' })
    // Still down: the follow-up tries again and keeps it pending.
    clock.advance(60_000)
    await followRecibidos(deps())
    expect((await get(ids[3]!)).acciones[0].estado).toBe('pendiente')
    expect(eventsOf('recibido.accion')).toEqual([])
    siiDown = false
    clock.advance(5 * 60_000)
    await followRecibidos(deps())
    const r = await get(ids[3]!)
    expect(r).toMatchObject({ estado: 'aceptado', acciones: [{ accion: 'ACD', estado: 'registrada', cod_resp: 0 }] })
    const announced = eventsOf('recibido.accion')
    expect(announced).toHaveLength(1)
    expect(announced[0]).toEqual(r)
    expect(mailOf(ids[3]!).map((m) => m.kind)).toEqual(['resultado_dte'])
    // Registered: nothing is left to follow.
    expect((s.server.deps.store.sqlite.query('SELECT next_sii_at FROM recibidos WHERE id = ?').get(ids[3]!) as { next_sii_at: string | null }).next_sii_at).toBeNull()
  }, 60_000)
})

describe('the 8 days (run last: it moves the shared clock)', () => {
  test('two days before the plazo recibido.plazo_por_vencer fires once; past it the document is aceptado_tacito and actions are 409 PLAZO_VENCIDO', async () => {
    const { ids } = await receivedAtSii(1)
    const id = ids[0]!
    await followRecibidos(deps())
    const { plazo } = await get(id)
    clock.advance(new Date(plazo).getTime() - clock.now().getTime() - DAY)
    await followRecibidos(deps())
    await followRecibidos(deps())
    expect(eventsOf('recibido.plazo_por_vencer').filter((r) => r.id === id)).toHaveLength(1)
    expect((await get(id)).estado).toBe('recibido')
    clock.advance(DAY + 60_000)
    await followRecibidos(deps())
    expect((await get(id)).estado).toBe('aceptado_tacito')
    const res = await act(id, 'ACD')
    expect(res.status).toBe(409)
    expect(res.json).toMatchObject({ code: 'PLAZO_VENCIDO', context: { motivo: expect.any(String) } })
  }, 120_000)

  test('past the 8 days at the SII before Timbre knew the plazo: the SII refuses (codResp 8) → 409 PLAZO_VENCIDO, recorded rechazada', async () => {
    const { ids } = await receivedAtSii(1)
    clock.advance(9 * DAY)
    const res = await act(ids[0]!, 'RCD')
    expect(res.status).toBe(409)
    expect(res.json).toMatchObject({ code: 'PLAZO_VENCIDO', context: { cod_resp: 8, desc_resp: expect.any(String) } })
    expect((await get(ids[0]!)).acciones).toEqual([expect.objectContaining({ accion: 'RCD', estado: 'rechazada', cod_resp: 8 })])
  }, 120_000)
})
