// DESIGN §13 "Sending" and "Issuer side of the same registry", through real parts: two companies on one server (the
// in-process SII simulator), a real SMTP server and dovecot (test/support/mail.ts). A's DTE reaches aceptado, its
// EnvioDTE and PDF are mailed to B's exchange mailbox; the receiver's answers and its action at the SII come back.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { importContribuyentes } from '../../src/services/contribuyentes'
import { followReceiverEvents } from '../../src/services/intercambio-dte'
import { deliverDueMail } from '../../src/services/mail-outbox'
import { applyEnvioRecibos, applyRespuestaDte } from '../../src/services/intercambio-dte'
import { siiCredentials } from '../../src/services/submit-dte'
import { buildEnvioRecibos, readEnvioRecibos } from '../../src/xml/envio-recibos'
import { buildRecepcionEnvio, buildResultadoDte, readRespuestaDte } from '../../src/xml/respuesta-dte'
import { testClock } from '../support/clock'
import { facturaSimple, issue, provisionIssuer, storedXml, uploadCertificate } from '../support/issuance'
import { startMailHub, type MailHub, type ReceivedMail } from '../support/mail'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'
import { SCHEMAS } from '../support/xml-tools'

const submit = siiSubmitJob(3_600_000)
const track = siiTrackJob(3_600_000)
const FINAL = ['aceptado', 'rechazado', 'con_reparos']
const A_MAIL = 'dte@empresa-a.cl'
const B_MAIL = 'dte@empresa-b.cl'
const C_MAIL = 'compras@cliente-c.cl'
const D_MAIL = 'intercambio@contrib-d.cl'

const clock = testClock()
let s: TestServer
let hub: MailHub
let a: Tenant
let b: Tenant
const work = mkdtempSync(join(tmpdir(), 'timbre-intercambio-'))

beforeAll(async () => {
  hub = await startMailHub({ users: [A_MAIL, B_MAIL, C_MAIL, D_MAIL] })
  s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  a = await s.tenant(testRut(), 'Empresa A SpA')
  b = await s.tenant(testRut(), 'Empresa B Limitada')
  await provisionIssuer(s, a, { tipos: [33, 34, 39, 52], folios: 50 })
  await uploadCertificate(s, b)
  const put = await s.request('PUT', '/api/v1/billing/empresa/intercambio', {
    headers: { 'X-Api-Key': a.writeKey },
    body: { inbound_email: A_MAIL, imap: hub.imapSettings(A_MAIL), smtp: hub.smtpSettings(A_MAIL) },
  })
  if (put.status !== 200) throw new Error(`mailbox: ${put.status} ${put.text}`)
}, 60_000)
afterAll(async () => {
  await s?.stop()
  await hub?.stop()
})

const get = (t: Tenant, path: string) => s.request('GET', `/api/v1/billing${path}`, { headers: { 'X-Api-Key': t.readKey } })
const receptorB = () => ({ rut: b.empresa.rut, razon_social: 'Empresa B Limitada', giro: 'Comercio', direccion: 'Calle 2', comuna: 'Santiago', ciudad: 'Santiago' })
const sql = <T>(query: string, ...params: Array<string | number>) => s.server.deps.store.sqlite.query(query).all(...params) as T[]

/** Issues each body, runs the SII jobs (the clock moving 20 s a round) until every DTE is final; the records by id. */
async function issueAccepted(t: Tenant, bodies: readonly unknown[]): Promise<any[]> {
  const ids: string[] = []
  for (const body of bodies) {
    const res = await issue(s, t, body)
    if (res.status !== 201) throw new Error(`issue: ${res.status} ${res.text}`)
    ids.push(res.json.id)
  }
  for (let round = 0; round < 60; round++) {
    await submit.runOnce(s.server.deps)
    await track.runOnce(s.server.deps)
    const records = await Promise.all(ids.map(async (id) => (await get(t, `/dte/${id}`)).json))
    if (records.every((r) => FINAL.includes(r.estado))) return records
    clock.advance(20_000)
  }
  throw new Error('the DTEs did not reach a final state')
}

function tool(args: readonly string[]): { ok: boolean; output: string } {
  const run = Bun.spawnSync([...args], { stdout: 'pipe', stderr: 'pipe' })
  return { ok: run.exitCode === 0, output: `${run.stdout.toString()}${run.stderr.toString()}` }
}

let fileSeq = 0
function saved(bytes: Uint8Array): string {
  const file = join(work, `f${++fileSeq}.xml`)
  writeFileSync(file, bytes)
  return file
}

const ID_ATTRS = ['--id-attr:ID', 'http://www.sii.cl/SiiDte:Documento', '--id-attr:ID', 'http://www.sii.cl/SiiDte:SetDTE']
/** The signed bytes with one text changed after signing: the signature no longer verifies. */
const tampered = (signed: Uint8Array, from: string, to: string) => Buffer.from(Buffer.from(signed).toString('latin1').replace(from, to), 'latin1')
const nthSignature = (n: number) => ['--node-xpath', `(//*[local-name()='Signature'])[${n}]`]

describe('a 33 accepted by the SII is mailed to the receiver', () => {
  let dte: any
  let mail: ReceivedMail

  test('aceptado → intercambio pendiente with the request\'s receptor.email, and one envio_dte mail queued in the same change', async () => {
    ;[dte] = await issueAccepted(a, [facturaSimple({ receptor: { ...receptorB(), email: B_MAIL } as never })])
    expect(dte.estado).toBe('aceptado')
    expect(dte.intercambio).toEqual({ estado: 'pendiente', email: B_MAIL, enviado_at: null, acuse: null, resultado: null, eventos_receptor: [] })
    const rows = sql<any>('SELECT kind, status, to_address, subject, attempt FROM mail_outbox WHERE dte_id = ?', dte.id)
    expect(rows).toEqual([{ kind: 'envio_dte', status: 'pending', to_address: B_MAIL, subject: `DTE 33 N° ${dte.folio} de Empresa A SpA`, attempt: 0 }])
  }, 60_000)

  test('deliverDueMail sends it through A\'s SMTP settings: EnvioDTE (valid, signed, Caratula RutReceptor = B) and the PDF', async () => {
    expect(await deliverDueMail(s.server.deps)).toBe(1)
    mail = await hub.waitForSent((m) => m.to.includes(B_MAIL), 10_000)
    expect(mail.from).toBe(A_MAIL)
    expect(mail.subject).toBe(`DTE 33 N° ${dte.folio} de Empresa A SpA`)
    const xml = mail.attachments.find((x) => x.fileName?.endsWith('.xml'))!
    const pdf = mail.attachments.find((x) => x.fileName?.endsWith('.pdf'))!
    expect(xml.fileName).toBe(`EnvioDTE_${a.empresa.rut}_T33F${dte.folio}.xml`)
    expect(pdf.fileName).toBe(`DTE-33-F${dte.folio}.pdf`)
    expect(Buffer.from(pdf.content.subarray(0, 5)).toString('latin1')).toBe('%PDF-')

    const file = saved(xml.content)
    const schema = tool(['xmllint', '--noout', '--nonet', '--schema', join(SCHEMAS, 'EnvioDTE_v10.xsd'), file])
    expect(schema.output).toContain('validates')
    expect(schema.ok).toBe(true)
    // Two signatures in document order: the DTE's own (untouched) and the envelope's (the company's certificate).
    expect(tool(['xmlsec1', '--verify', ...ID_ATTRS, ...nthSignature(1), file]).ok).toBe(true)
    expect(tool(['xmlsec1', '--verify', ...ID_ATTRS, ...nthSignature(2), file]).ok).toBe(true)
    const text = Buffer.from(xml.content).toString('latin1')
    expect(text).toContain(`<RutEmisor>${a.empresa.rut}</RutEmisor>`)
    expect(text).toContain(`<RutReceptor>${b.empresa.rut}</RutReceptor>`)
    // The DTE inside is the stored signed document byte for byte (DESIGN §6: never re-signed).
    const stored = Buffer.from(await storedXml(s, a, dte.id)).toString('latin1').replace(/^<\?xml[^>]*\?>\s*/, '').trimEnd()
    expect(text).toContain(stored)
  }, 30_000)

  test('GET /dte/{id} and the list show intercambio enviado; the mail row is sent with its message id', async () => {
    const record = (await get(a, `/dte/${dte.id}`)).json
    expect(record.intercambio).toMatchObject({ estado: 'enviado', email: B_MAIL, enviado_at: expect.stringMatching(/Z$/) })
    const listed = (await get(a, '/dte?limit=100')).json.items.find((r: any) => r.id === dte.id)
    expect(listed.intercambio).toEqual(record.intercambio)
    const [row] = sql<any>('SELECT status, attempt, message_id, sent_at, last_error FROM mail_outbox WHERE dte_id = ?', dte.id)
    expect(row).toMatchObject({ status: 'sent', attempt: 1, message_id: expect.stringContaining('@'), last_error: null })
    // Nothing is due any more: a second pass sends nothing.
    expect(await deliverDueMail(s.server.deps)).toBe(0)
    expect(hub.sent.filter((m) => m.to.includes(B_MAIL))).toHaveLength(1)
  })

  test('B\'s answers read back (RespuestaDTE recepción and resultado, EnvioRecibos): acuse and resultado recorded, their webhooks in the outbox', async () => {
    const deps = s.server.deps
    const signer = siiCredentials(deps, { empresaId: b.empresa.id, now: clock.now() })!.signer
    const doc = { tipoDte: 33, folio: dte.folio, fechaEmision: dte.fecha_emision, rutEmisor: a.empresa.rut, rutReceptor: b.empresa.rut, montoTotal: dte.monto_total }
    const otherIssuer = { ...doc, rutEmisor: '76086428-5', folio: 1 }
    const header = { rutResponde: b.empresa.rut, rutRecibe: a.empresa.rut, tmst: clock.now() }
    const recepcion = buildRecepcionEnvio(
      {
        ...header,
        idRespuesta: 1,
        envio: {
          nmbEnvio: `EnvioDTE_${a.empresa.rut}_T33F${dte.folio}.xml`, fchRecep: clock.now(), codEnvio: 7, envioDteId: 'SetDoc', digest: null,
          rutEmisor: a.empresa.rut, rutReceptor: b.empresa.rut, estadoRecepEnv: 0, glosa: 'Envio Recibido Conforme',
          documentos: [
            { ...doc, estadoRecepDte: 0, glosa: 'DTE Recibido OK' },
            { ...otherIssuer, estadoRecepDte: 0, glosa: 'DTE Recibido OK' },
          ],
        },
      },
      signer,
    )
    expect(applyRespuestaDte(deps, { empresaId: a.empresa.id, read: readRespuestaDte(recepcion)! })).toEqual({ matched: 1 })
    let record = (await get(a, `/dte/${dte.id}`)).json
    expect(record.intercambio.acuse).toEqual({
      estado_recep_env: 0, estado_recep_dte: 0, glosa: 'DTE Recibido OK', fecha: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/), firma_valida: true, recibido_at: expect.stringMatching(/Z$/),
    })
    // B's answer about A's DTE is none of B's business as an issuer: nothing of B's matches.
    expect(applyRespuestaDte(deps, { empresaId: b.empresa.id, read: readRespuestaDte(recepcion)! })).toEqual({ matched: 0 })

    const resultado = buildResultadoDte({ ...header, idRespuesta: 2, resultados: [{ ...doc, codEnvio: 7, estadoDte: 0, glosa: 'DTE Aceptado OK' }] }, signer)
    expect(applyRespuestaDte(deps, { empresaId: a.empresa.id, read: readRespuestaDte(resultado)! })).toEqual({ matched: 1 })
    const recibos = buildEnvioRecibos(
      { ...header, recibos: [{ tipoDoc: 33, folio: dte.folio, fechaEmision: dte.fecha_emision, rutEmisor: a.empresa.rut, rutRecep: b.empresa.rut, montoTotal: dte.monto_total, recinto: 'Bodega central', rutFirma: '7880442-4', tmst: clock.now() }] },
      signer,
    )
    expect(applyEnvioRecibos(deps, { empresaId: a.empresa.id, read: readEnvioRecibos(recibos)! })).toEqual({ matched: 1 })
    record = (await get(a, `/dte/${dte.id}`)).json
    expect(record.intercambio.resultado).toEqual({
      estado_dte: 0, glosa: 'DTE Aceptado OK', fecha: expect.any(String), firma_valida: true, recibido_at: expect.any(String),
      recibo: { recinto: 'Bodega central', fecha: expect.any(String), firma_valida: true, recibido_at: expect.any(String) },
    })

    const events = sql<{ type: string; body: string }>("SELECT type, body FROM events WHERE empresa_id = ? AND type IN ('dte.acuse_recibo', 'dte.resultado_receptor') ORDER BY id", a.empresa.id)
    expect(events.map((e) => e.type)).toEqual(['dte.acuse_recibo', 'dte.resultado_receptor', 'dte.resultado_receptor'])
    const last = JSON.parse(events[2]!.body).data
    expect(last.dte).toMatchObject({ id: dte.id, folio: dte.folio, estado: 'aceptado' })
    expect(last.intercambio).toEqual(record.intercambio)
  }, 30_000)

  test('a forged answer (its signature does not verify) never replaces the receiver\'s verified one', async () => {
    const deps = s.server.deps
    const signer = siiCredentials(deps, { empresaId: b.empresa.id, now: clock.now() })!.signer
    const doc = { tipoDte: 33, folio: dte.folio, fechaEmision: dte.fecha_emision, rutEmisor: a.empresa.rut, rutReceptor: b.empresa.rut, montoTotal: dte.monto_total }
    const signed = buildResultadoDte({ rutResponde: b.empresa.rut, rutRecibe: a.empresa.rut, tmst: clock.now(), idRespuesta: 3, resultados: [{ ...doc, codEnvio: 7, estadoDte: 2, glosa: 'DTE Rechazado' }] }, signer)
    const read = readRespuestaDte(tampered(signed, 'DTE Rechazado', 'DTE Rechazada'))!
    expect(read.signatureOk).toBe(false)
    expect(applyRespuestaDte(deps, { empresaId: a.empresa.id, read })).toEqual({ matched: 0 })
    expect((await get(a, `/dte/${dte.id}`)).json.intercambio.resultado).toMatchObject({ estado_dte: 0, glosa: 'DTE Aceptado OK', firma_valida: true })
  })

  test('B\'s ACD at the SII shows on A\'s DTE after the next read of the registry: eventos_receptor and dte.aceptado_receptor once', async () => {
    const deps = s.server.deps
    const creds = siiCredentials(deps, { empresaId: b.empresa.id, now: clock.now() })!
    const registered = await deps.sii.registrarAccion({ rut: b.empresa.rut, ambiente: 'certificacion', isDemo: false }, creds, { rutEmisor: a.empresa.rut, tipoDte: 33, folio: dte.folio }, 'ACD')
    expect(registered.kind).toBe('registrada')
    // B's signed ResultadoDTE (applied above) made the registry due at once: the next pass reads it.
    expect(await followReceiverEvents(deps)).toBe(1)
    const record = (await get(a, `/dte/${dte.id}`)).json
    expect(record.intercambio.eventos_receptor).toEqual([{ accion: 'ACD', fecha: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/) }])
    // Then every two minutes against the simulator (one hour against the real SII).
    expect(await followReceiverEvents(deps)).toBe(0)
    clock.advance(3 * 60_000)
    expect(await followReceiverEvents(deps)).toBe(1)
    expect((await get(a, `/dte/${dte.id}`)).json.intercambio.eventos_receptor).toHaveLength(1)
    const events = sql<{ body: string }>("SELECT body FROM events WHERE empresa_id = ? AND type = 'dte.aceptado_receptor'", a.empresa.id)
    expect(events).toHaveLength(1)
    const data = JSON.parse(events[0]!.body).data
    expect(data.dte).toMatchObject({ id: dte.id, tipo_dte: 33, folio: dte.folio, estado: 'aceptado' })
    expect(data.intercambio.eventos_receptor).toEqual([expect.objectContaining({ accion: 'ACD' })])
  }, 30_000)
})

describe('the receiver\'s address, and the types that are mailed', () => {
  const rutC = testRut()
  const rutD = testRut()
  const rutE = testRut()
  const receptor = (rut: string, extra: Record<string, unknown> = {}) => ({ rut, razon_social: 'Receptor SpA', giro: 'Comercio', direccion: 'Calle 3', comuna: 'Santiago', ciudad: 'Santiago', ...extra })
  let records: any[]

  beforeAll(async () => {
    // C is a cliente of A with an address, and also in the SII's list with another one; D only in the SII's list.
    const cliente = await s.request('POST', '/api/v1/billing/clientes', { headers: { 'X-Api-Key': a.writeKey }, body: { rut: rutC, razon_social: 'Cliente C', email: C_MAIL } })
    expect(cliente.status).toBe(201)
    const csv = join(work, 'ce_empresas_dwnld.csv')
    writeFileSync(csv, Buffer.from(`RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL\r\n${rutC};CLIENTE C;0;01-01-2020 ;otro@cliente-c.cl;;\r\n${rutD};CONTRIBUYENTE DÑ;0;01-01-2020 ;${D_MAIL};;\r\n`, 'latin1'))
    expect(await importContribuyentes(s.server.deps, { path: csv })).toMatchObject({ imported: 2, skipped: 0 })
    records = await issueAccepted(a, [
      facturaSimple({ receptor: receptor(rutC) }),
      facturaSimple({ receptor: receptor(rutD) }),
      facturaSimple({ receptor: receptor(rutE) }),
      facturaSimple({ receptor: receptor(rutC, { email: B_MAIL }) as never }),
      { tipo_dte: 39, receptor: { rut: '66666666-6', razon_social: 'Consumidor final' }, detalle: [{ nombre: 'Café', cantidad: 1, precio: 1500 }] },
      { tipo_dte: 52, receptor: receptor(rutD), ind_traslado: 1, tipo_despacho: 2, detalle: [{ nombre: 'Saco de cemento', cantidad: 4, precio: 4590 }] },
    ])
  }, 60_000)

  test('receptor.email, else the cliente with that RUT, else the SII\'s list; none → sin_destinatario, nothing to send', () => {
    expect(records.map((r) => r.estado)).toEqual(['aceptado', 'aceptado', 'aceptado', 'aceptado', 'aceptado', 'aceptado'])
    expect(records.map((r) => [r.intercambio?.estado, r.intercambio?.email])).toEqual([
      ['pendiente', C_MAIL],
      ['pendiente', D_MAIL],
      ['sin_destinatario', null],
      ['pendiente', B_MAIL],
      [undefined, undefined],
      ['pendiente', D_MAIL],
    ])
    const [row] = sql<any>('SELECT status, to_address, next_attempt_at FROM mail_outbox WHERE dte_id = ?', records[2].id)
    expect(row).toEqual({ status: 'sin_destinatario', to_address: null, next_attempt_at: null })
  })

  test('a boleta (39) gets no intercambio and no mail; a guía (52) is mailed but its registry is not read (only 33, 34, 43)', () => {
    expect(records[4].intercambio).toBeNull()
    expect(sql('SELECT id FROM mail_outbox WHERE dte_id = ?', records[4].id)).toEqual([])
    expect(sql('SELECT dte_id FROM dte_intercambio WHERE dte_id = ?', records[4].id)).toEqual([])
    const [guia] = sql<any>('SELECT eventos_hasta, next_eventos_at FROM dte_intercambio WHERE dte_id = ?', records[5].id)
    expect(guia).toEqual({ eventos_hasta: null, next_eventos_at: null })
    const [factura] = sql<any>('SELECT eventos_hasta, next_eventos_at FROM dte_intercambio WHERE dte_id = ?', records[0].id)
    expect(new Date(factura.eventos_hasta).getTime() - new Date(factura.next_eventos_at).getTime()).toBe(8 * 86_400_000 - 2 * 60_000)
  })

  test('the queued mails go to each address; the sin_destinatario one is never sent', async () => {
    const before = hub.sent.length
    expect(await deliverDueMail(s.server.deps)).toBe(4)
    await hub.waitForSent((m) => m.to.includes(D_MAIL) && (m.subject ?? '').startsWith('DTE 52'), 10_000)
    const to = hub.sent.slice(before).map((m) => m.to.join(','))
    expect(to.sort()).toEqual([B_MAIL, C_MAIL, D_MAIL, D_MAIL].sort())
    const estados = await Promise.all(records.map(async (r) => (await get(a, `/dte/${r.id}`)).json.intercambio?.estado))
    expect(estados).toEqual(['enviado', 'enviado', 'sin_destinatario', 'enviado', undefined, 'enviado'])
  }, 30_000)

  test('an answer whose signature does not verify is recorded, flagged firma_valida false; the verified one then replaces it', async () => {
    const deps = s.server.deps
    const signer = siiCredentials(deps, { empresaId: b.empresa.id, now: clock.now() })!.signer
    const r = records[0]
    const answer = (glosa: string) =>
      buildRecepcionEnvio(
        {
          rutResponde: rutC, rutRecibe: a.empresa.rut, tmst: clock.now(), idRespuesta: 10,
          envio: {
            nmbEnvio: 'envio.xml', fchRecep: clock.now(), codEnvio: 1, envioDteId: 'SetDoc', digest: null, rutEmisor: a.empresa.rut, rutReceptor: rutC,
            estadoRecepEnv: 0, glosa: 'Envio Recibido Conforme',
            documentos: [{ tipoDte: 33, folio: r.folio, fechaEmision: r.fecha_emision, rutEmisor: a.empresa.rut, rutReceptor: rutC, montoTotal: r.monto_total, estadoRecepDte: 0, glosa }],
          },
        },
        signer,
      )
    const forged = readRespuestaDte(tampered(answer('DTE Recibido OK'), 'DTE Recibido OK', 'DTE Recibido OJ'))!
    expect(applyRespuestaDte(deps, { empresaId: a.empresa.id, read: forged })).toEqual({ matched: 1 })
    expect((await get(a, `/dte/${r.id}`)).json.intercambio.acuse).toMatchObject({ glosa: 'DTE Recibido OJ', firma_valida: false })
    expect(applyRespuestaDte(deps, { empresaId: a.empresa.id, read: readRespuestaDte(answer('DTE Recibido OK'))! })).toEqual({ matched: 1 })
    expect((await get(a, `/dte/${r.id}`)).json.intercambio.acuse).toMatchObject({ glosa: 'DTE Recibido OK', firma_valida: true })
  })

  test('receptor.email must be an address: 400 INVALID_FORMAT at receptor.email, nothing issued', async () => {
    const res = await issue(s, a, facturaSimple({ receptor: receptor(rutC, { email: 'no es un correo' }) as never }))
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual(expect.objectContaining({ field: 'receptor.email', code: 'INVALID_FORMAT' }))
  })
})

