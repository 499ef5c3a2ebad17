// Issue 13 item 3, "why the SII said no", end to end through the real server, its jobs, the SII client and the
// in-process simulator over HTTP: a rejected or repaired DTE carries the SII's reason in `sii_status`,
// `tracking.glosa_sii`, its `historial_sii` (GET /dte/{id}) and the signed `dte.rejected` / `dte.repaired` webhook.
// Time is an injected clock shared with the simulator (STYLE §5).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { webhookDeliverJob } from '../../src/jobs/webhook-deliver'
import { recepcionDte, respuesta, soapResponse } from '../../src/sii/simulator/soap'
import { signDte } from '../../src/xml/signature'
import { testClock } from '../support/clock'
import { facturaSimple, issue, provisionIssuer, signer } from '../support/issuance'
import { startReceiver, type Receiver } from '../support/receiver'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const FINAL = ['aceptado', 'rechazado', 'con_reparos']
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const submit = siiSubmitJob(3_600_000)
const track = siiTrackJob(3_600_000)
const deliver = webhookDeliverJob(3_600_000)

const clock = testClock()
let s: TestServer
let t: Tenant
let rx: Receiver

beforeAll(async () => {
  s = await startTestServer({ clock, flags: { '--webhook-allow-http': 'true', '--submit-every': '1h', '--track-every': '1h', '--deliver-every': '1h' } })
  t = await s.tenant(testRut())
  await provisionIssuer(s, t, { tipos: [33, 39], folios: 50 })
  rx = startReceiver()
  const hook = await s.request('POST', '/api/v1/billing/webhooks', { headers: { 'X-Api-Key': t.writeKey }, body: { url: rx.url, events: ['dte.rejected', 'dte.repaired'] } })
  if (hook.status !== 201) throw new Error(hook.text)
})
afterAll(async () => {
  await rx.stop()
  await s.stop()
})

const get = async (id: string) => (await s.request('GET', `/api/v1/billing/dte/${id}`, { headers: { 'X-Api-Key': t.readKey } })).json

/** Runs the SII jobs and the webhook deliveries, 20 s of clock a round, until the DTE is final; returns its record. */
async function untilFinal(id: string): Promise<any> {
  for (let i = 0; i < 30; i++) {
    await submit.runOnce(s.server.deps)
    await track.runOnce(s.server.deps)
    const r = await get(id)
    if (FINAL.includes(r.estado)) {
      await deliver.runOnce(s.server.deps)
      return r
    }
    clock.advance(20_000)
  }
  throw new Error(`DTE ${id} never reached a final state`)
}

/** The webhook body this receiver got for a DTE. */
function webhookOf(id: string): any {
  return rx.received.map((r) => JSON.parse(r.body)).find((b) => b.data?.dte?.id === id)
}

const LADDER = ['REC', 'SOK', 'CRT', 'FOK', 'PRD', 'EPR']

/**
 * The history's shape: the upload, then each new envelope status in the SII's order up to EPR (which intermediate
 * ones were seen depends on when the job asked), then the document status.
 */
function expectHistory(h: any[], upload: string, documento: string): void {
  expect(h.map((e) => e.operacion)).toEqual(['upload', ...Array(h.length - 2).fill('estado_envio'), 'estado_dte'])
  expect([h[0].estado, h.at(-1).estado]).toEqual([upload, documento])
  const envio = h.slice(1, -1).map((e) => e.estado)
  expect(envio.at(-1)).toBe('EPR')
  expect(envio.map((e) => LADDER.indexOf(e))).toEqual([...new Set(envio.map((e) => LADDER.indexOf(e)))].sort((a, b) => a - b))
}

const receptor = (rut: string) => ({ rut, razon_social: 'Receptor de Prueba', giro: 'Pruebas', direccion: 'Calle 1', comuna: 'Santiago', ciudad: 'Santiago' })

describe('a factura 33 through DTEUpload, QueryEstUp and QueryEstDte', () => {
  test('to 88888888-8: rechazado with the SII\'s reason in sii_status, glosa_sii, historial_sii and the dte.rejected webhook', async () => {
    const res = await issue(s, t, facturaSimple({ receptor: receptor('88888888-8') }))
    const r = await untilFinal(res.json.id)
    expect(r.estado).toBe('rechazado')
    const reason = { codigo: 'RCV-3-1', glosa: 'Documento rechazado (receptor de prueba 88888888-8)', nivel: 3, fuente: 'estado_dte' }
    expect(r.tracking).toMatchObject({ estado_envio: 'EPR', rechazados: 1, glosa_sii: 'RCV-3-1: Documento rechazado (receptor de prueba 88888888-8)' })
    expect(r.tracking.glosa_sii).not.toContain('Envio Procesado')
    // getEstDte: not received (FAU, ERR_CODE 3), GLOSA_ERR naming the rejection (docs/decisions/simulator.md).
    expect(r.sii_status).toMatchObject({
      source: 'documento', track_id: r.tracking.track_id, estado_sii: 'FAU', err_code: '3',
      glosa: 'RCV-3-1: Documento rechazado (receptor de prueba 88888888-8)', motivos: [expect.objectContaining(reason)],
    })
    // Checked with toMatch, not inside toMatchObject: Bun writes a passing asymmetric matcher into the received object.
    expect(r.sii_status.glosa_err).toMatch(/^\(RCV-3-1\) Documento rechazado \(receptor de prueba 88888888-8\) — DTE /)
    expect(r.sii_status.num_atencion).toMatch(/^\d+ \( \d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2}\)$/)
    // The history: the upload, each new envelope status, the document status, in order.
    const h = r.historial_sii as any[]
    expectHistory(h, '0', 'FAU')
    expect(h.every((e) => e.canal === 'soap' && e.track_id === r.tracking.track_id && RFC3339_MS.test(e.at))).toBe(true)
    expect(h.map((e) => e.at)).toEqual([...h.map((e) => e.at)].sort())
    expect(h[0]).toMatchObject({ glosa: 'Upload OK', motivos: [] })
    for (const e of h.slice(1, -1)) expect(e.num_atencion).toMatch(/^\d+ \(/)
    for (const e of h.slice(1, -2)) expect(e).toMatchObject({ estadistica: null, motivos: [] })
    expect(h.at(-2)).toMatchObject({ glosa: 'Envio Procesado', estadistica: [{ tipo: 33, informados: 1, aceptados: 0, rechazados: 1, reparos: 0 }] })
    expect(h.at(-1)).toMatchObject({ err_code: '3', glosa_err: r.sii_status.glosa_err, motivos: [expect.objectContaining(reason)] })
    // The receiver knows what to fix without asking again.
    const hook = webhookOf(res.json.id)
    expect(hook).toMatchObject({ type: 'dte.rejected', data: { dte: { estado: 'rechazado', tracking: { glosa_sii: r.tracking.glosa_sii }, sii_status: { motivos: [expect.objectContaining(reason)] } } } })
  }, 60_000)

  test('to 77777777-7: con_reparos with its observation, and the dte.repaired webhook carries it', async () => {
    const res = await issue(s, t, facturaSimple({ receptor: receptor('77777777-7') }))
    const r = await untilFinal(res.json.id)
    expect(r.estado).toBe('con_reparos')
    const reparo = { codigo: 'RCV-2-2', glosa: 'Documento aceptado con reparos (receptor de prueba 77777777-7)', nivel: 2, fuente: 'estado_dte' }
    expect(r.tracking).toMatchObject({ reparos: 1, glosa_sii: 'RCV-2-2: Documento aceptado con reparos (receptor de prueba 77777777-7)' })
    expect(r.sii_status).toMatchObject({ estado_sii: 'DOK', err_code: '0', motivos: [expect.objectContaining(reparo)] })
    expect(r.sii_status.glosa_err).toMatch(/^\(RCV-2-2\) Documento aceptado con reparos/)
    expectHistory(r.historial_sii, '0', 'DOK')
    expect(webhookOf(res.json.id)).toMatchObject({ type: 'dte.repaired', data: { dte: { estado: 'con_reparos', sii_status: { motivos: [expect.objectContaining(reparo)] } } } })
  }, 60_000)

  test('a forged TED: rechazado naming the simulator\'s TED check (TED-3-1)', async () => {
    const res = await issue(s, t, facturaSimple())
    const row = s.server.deps.store.sqlite.query('SELECT xml FROM dtes WHERE id = ?').get(res.json.id) as { xml: Uint8Array }
    // FRMT's first character changed: the TED no longer verifies; the DTE signature is left broken too, so sign again.
    const text = Buffer.from(row.xml).toString('latin1').replace(/<Signature[\s\S]*<\/Signature>/, '')
    const forged = text.replace(/<FRMT algoritmo="SHA1withRSA">(.)/, (_m, c: string) => `<FRMT algoritmo="SHA1withRSA">${c === 'A' ? 'B' : 'A'}`)
    s.server.deps.store.sqlite.run('UPDATE dtes SET xml = ? WHERE id = ?', [Buffer.from(signDte(forged, signer().signer), 'latin1'), res.json.id])
    const r = await untilFinal(res.json.id)
    expect(r.estado).toBe('rechazado')
    expect(r.tracking.glosa_sii).toBe('TED-3-1: Firma del TED (FRMT) no corresponde al CAF')
    expect(r.sii_status.motivos).toEqual([expect.objectContaining({ codigo: 'TED-3-1', fuente: 'estado_dte' })])
  }, 60_000)
})

describe('refused at upload', () => {
  test('a stored envelope that is not XML: DTEUpload STATUS 7, rechazado with the upload\'s reason and its DETAIL', async () => {
    const res = await issue(s, t, facturaSimple({ auto_send: false }))
    // As if the stored envelope had been damaged on disk: the SII refuses the file for its content.
    const db = s.server.deps.store.sqlite
    const envioId = crypto.randomUUID()
    db.run("INSERT INTO envios (id, empresa_id, canal, file_name, xml, created_at) VALUES (?, ?, 'soap', 'roto.xml', ?, ?)", [envioId, t.empresa.id, Buffer.from('esto no es XML', 'latin1'), clock.now().toISOString()])
    db.run("UPDATE dtes SET envio_id = ?, estado = 'enviando', next_attempt_at = '2000-01-01T00:00:00.000Z' WHERE id = ?", [envioId, res.json.id])
    const r = await untilFinal(res.json.id)
    expect(r.estado).toBe('rechazado')
    expect(r.tracking).toMatchObject({ codigo_sii: '7', track_id: null })
    expect(r.tracking.glosa_sii).toStartWith('Esquema inválido; el archivo no es XML bien formado')
    expect(r.sii_status).toMatchObject({ source: 'upload', estado_sii: '7', glosa_estado: 'Esquema inválido', motivos: [expect.objectContaining({ codigo: '7', glosa: 'Esquema inválido', fuente: 'upload' })] })
    expect(r.sii_status.glosa_err).toStartWith('el archivo no es XML bien formado')
    expect(r.historial_sii.map((e: any) => `${e.operacion}:${e.estado}`)).toEqual(['upload:7'])
    expect(webhookOf(res.json.id)).toMatchObject({ type: 'dte.rejected', data: { dte: { sii_status: { source: 'upload', estado_sii: '7' } } } })
  }, 60_000)
})

describe('a boleta 39 through the boleta REST API', () => {
  test('to 88888888-8: rechazado with the reason of the envío status\'s detalle_rep_rech', async () => {
    const res = await issue(s, t, { tipo_dte: 39, receptor: { rut: '88888888-8', razon_social: 'Rechazo' }, detalle: [{ nombre: 'Completo italiano', cantidad: 1, precio: 2500 }] })
    const r = await untilFinal(res.json.id)
    expect(r.estado).toBe('rechazado')
    const reason = { codigo: 'RCV-3-1', glosa: 'Documento rechazado (receptor de prueba 88888888-8)', nivel: 3, fuente: 'estado_envio' }
    expect(r.tracking).toMatchObject({ estado_envio: 'EPR', rechazados: 1, glosa_sii: 'RCV-3-1: Documento rechazado (receptor de prueba 88888888-8)' })
    // The consulta has no ERR_CODE: the detail's reason fills err_code and glosa_err.
    expect(r.sii_status).toMatchObject({ source: 'documento', estado_sii: 'FAU', err_code: 'RCV-3-1', glosa_err: 'Documento rechazado (receptor de prueba 88888888-8)', motivos: [expect.objectContaining(reason)] })
    const h = r.historial_sii as any[]
    expectHistory(h, 'REC', 'FAU')
    expect(h.every((e) => e.canal === 'boleta')).toBe(true)
    expect(h.at(-2).motivos).toEqual([expect.objectContaining(reason)])
    expect(h.at(-1).motivos).toEqual([expect.objectContaining({ codigo: 'RCV-3-1', fuente: 'estado_dte' })])
    expect(webhookOf(res.json.id)).toMatchObject({ type: 'dte.rejected', data: { dte: { sii_status: { motivos: [expect.objectContaining(reason)] } } } })
  }, 60_000)

  test('an accepted boleta sent again in a new envelope: rechazado with the SII\'s DTE-3-100 "DTE Repetido"', async () => {
    const res = await issue(s, t, { tipo_dte: 39, receptor: { rut: '66666666-6', razon_social: 'Consumidor final' }, detalle: [{ nombre: 'Empanada', cantidad: 2, precio: 1800 }] })
    expect((await untilFinal(res.json.id)).estado).toBe('aceptado')
    // As if the stored envelope were lost and the DTE resent: a new envelope (signed later: other bytes, a new track id).
    s.server.deps.store.sqlite.run("UPDATE dtes SET estado = 'enviando', envio_id = NULL, track_id = NULL, next_attempt_at = '2000-01-01T00:00:00.000Z' WHERE id = ?", [res.json.id])
    const r = await untilFinal(res.json.id)
    expect(r.estado).toBe('rechazado')
    expect(r.tracking.glosa_sii).toBe('DTE-3-100: DTE Repetido')
    expect(r.sii_status.motivos).toEqual([expect.objectContaining({ codigo: 'DTE-3-100', glosa: 'DTE Repetido', nivel: 3, fuente: 'estado_envio' })])
    // Both rounds are in the history, each upload with its own track id.
    const uploads = (r.historial_sii as any[]).filter((e) => e.operacion === 'upload')
    expect(uploads.length).toBe(2)
    expect(uploads[0].track_id).not.toBe(uploads[1].track_id)
  }, 60_000)
})

describe('against answers shaped as the real SII\'s, which name no reason on the SOAP channel', () => {
  test('a rejected 33 says so, with the counters and FAU, and points at the SII\'s result e-mail', async () => {
    // A scripted SII on 127.0.0.1 answering with the literal shapes of docs/sii-protocol.md §6.3–§6.6: EPR with
    // RECHAZADOS 1 and getEstDte FAU, nothing more (the real SII mails the reason).
    const xml = (body: string) => new Response(body, { headers: { 'content-type': 'text/xml' } })
    const soap = (operation: string, inner: string) => xml(soapResponse({ operation, namespace: 'http://DefaultNamespace' }, inner))
    const sii = Bun.serve({
      hostname: '127.0.0.1', port: 0,
      fetch(req) {
        const path = new URL(req.url).pathname
        if (path === '/DTEWS/CrSeed.jws') return soap('getSeed', respuesta([['ESTADO', '00']], [['SEMILLA', '000000000042']]))
        if (path === '/DTEWS/GetTokenFromSeed.jws') return soap('getToken', respuesta([['ESTADO', '00'], ['GLOSA', 'Token Creado']], [['TOKEN', 'TOKENPRUEBA01']]))
        if (path === '/cgi_dte/UPL/DTEUpload') {
          return xml(recepcionDte({ rutSender: '7880442-4', rutCompany: t.empresa.rut, file: 'envio.xml', timestamp: '2026-03-02 12:00:00', status: 0, trackId: '0107418640' }))
        }
        if (path === '/DTEWS/QueryEstUp.jws') {
          return soap('getEstUp', respuesta(
            [['TRACKID', '0107418640'], ['ESTADO', 'EPR'], ['GLOSA', 'Envio Procesado'], ['NUM_ATENCION', '532 ( 2026/03/02 12:00:05)']],
            [['TIPO_DOCTO', 33], ['INFORMADOS', 1], ['ACEPTADOS', 0], ['RECHAZADOS', 1], ['REPAROS', 0]],
          ))
        }
        if (path === '/DTEWS/QueryEstDte.jws') {
          return soap('getEstDte', respuesta([['ESTADO', 'FAU'], ['GLOSA_ESTADO', 'DTE No Recibido'], ['ERR_CODE', '3'], ['GLOSA_ERR', 'DTE No Recibido'], ['NUM_ATENCION', '533 ( 2026/03/02 12:00:06)']]))
        }
        return new Response('no', { status: 404 })
      },
    })
    const real = await startTestServer({ clock, flags: { '--sii': `http://127.0.0.1:${sii.port}`, '--submit-every': '1h', '--track-every': '1h' } })
    try {
      const tenant = await real.tenant(testRut())
      await provisionIssuer(real, tenant, { tipos: [33], folios: 5 })
      const res = await issue(real, tenant, facturaSimple({ receptor: receptor('76086428-5') }))
      await submit.runOnce(real.server.deps)
      await track.runOnce(real.server.deps)
      const r = (await real.request('GET', `/api/v1/billing/dte/${res.json.id}`, { headers: { 'X-Api-Key': tenant.readKey } })).json
      expect(r.estado).toBe('rechazado')
      expect(r.tracking.glosa_sii).toBe(
        'Documento rechazado por el SII (envío EPR: 1 informados, 1 rechazados, 0 con reparos); FAU: DTE No Recibido; ' +
        'el SII informa el motivo en su correo "Resultado de Revision Envio 0107418640"',
      )
      expect(r.sii_status).toMatchObject({ source: 'documento', estado_sii: 'FAU', err_code: '3', glosa_err: 'DTE No Recibido', num_atencion: '533 ( 2026/03/02 12:00:06)' })
      expect(r.sii_status.motivos).toEqual([{ codigo: 'FAU', glosa: 'DTE No Recibido', detalle: 'ERR_CODE 3: DTE No Recibido', nivel: null, fuente: 'estado_dte' }])
      expect(r.historial_sii.map((e: any) => `${e.operacion}:${e.estado}`)).toEqual(['upload:0', 'estado_envio:EPR', 'estado_dte:FAU'])
      expect(r.historial_sii[1]).toMatchObject({ num_atencion: '532 ( 2026/03/02 12:00:05)', estadistica: [{ tipo: 33, informados: 1, aceptados: 0, rechazados: 1, reparos: 0 }] })
    } finally {
      await real.stop()
      await sii.stop(true)
    }
  }, 60_000)
})

describe('the contract', () => {
  test('lists do not carry historial_sii; /docs/json describes it and the reasons', async () => {
    const list = await s.request('GET', '/api/v1/billing/dte?limit=5', { headers: { 'X-Api-Key': t.readKey } })
    expect(list.json.items.length).toBeGreaterThan(0)
    expect(list.json.items.every((d: any) => d.historial_sii === undefined)).toBe(true)
    const doc = JSON.stringify((await s.request('GET', '/docs/json')).json)
    for (const name of ['historial_sii', 'motivos', 'MotivoSII', 'estado_envio', 'estado_dte']) expect(doc).toContain(name)
  })
})
