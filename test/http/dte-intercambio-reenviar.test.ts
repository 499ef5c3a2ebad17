// Issue 27 "Mail": a DTE's mail that ended in `error` (or `sin_destinatario`) is queued again with
// POST /dte/{id}/intercambio/reenviar, against a real SMTP server that refuses on demand (test/support/mail.ts
// failNext) and the tests' clock: the send fails, is re-sent, and arrives. Every other exchange estado is 409
// ACCION_NO_PERMITIDA with its reason; a read-only key is 403; another company's DTE is 404.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { deliverDueMail } from '../../src/services/mail-outbox'
import { testClock } from '../support/clock'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startMailHub, type MailHub } from '../support/mail'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const submit = siiSubmitJob(3_600_000)
const track = siiTrackJob(3_600_000)
const A_MAIL = 'dte@emisor-a.cl'
const B_MAIL = 'dte@receptor-b.cl'
const C_MAIL = 'facturas@receptor-c.cl'

const clock = testClock()
let s: TestServer
let hub: MailHub
let a: Tenant
let other: Tenant

beforeAll(async () => {
  hub = await startMailHub({ users: [A_MAIL, B_MAIL, C_MAIL] })
  s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  a = await s.tenant(testRut(), 'Emisor A SpA')
  other = await s.tenant(testRut(), 'Otra Empresa SpA')
  await provisionIssuer(s, a, { tipos: [33], folios: 20 })
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

const rows = (dteId: string) => s.server.deps.store.sqlite.query('SELECT * FROM mail_outbox WHERE dte_id = ? ORDER BY id').all(dteId) as Array<Record<string, any>>
const intercambio = async (id: string) => (await s.request('GET', `/api/v1/billing/dte/${id}`, { headers: { 'X-Api-Key': a.readKey } })).json.intercambio
const reenviar = (id: string, key = a.writeKey) => s.request('POST', `/api/v1/billing/dte/${id}/intercambio/reenviar`, { headers: { 'X-Api-Key': key } })

/** One factura of A to `receptor`, issued and (unless `accept` is false) driven through the SII jobs to aceptado. */
async function factura(receptor: { rut: string; email?: string }, accept = true): Promise<string> {
  const body = facturaSimple({ receptor: { razon_social: 'Receptor SpA', giro: 'Comercio', direccion: 'Calle 1', comuna: 'Santiago', ciudad: 'Santiago', ...receptor } as never })
  const res = await issue(s, a, body)
  if (res.status !== 201) throw new Error(`issue: ${res.status} ${res.text}`)
  if (!accept) return res.json.id
  for (let round = 0; round < 60; round++) {
    await submit.runOnce(s.server.deps)
    await track.runOnce(s.server.deps)
    if ((await intercambio(res.json.id)) !== null) return res.json.id
    clock.advance(20_000)
  }
  throw new Error('the DTE was not accepted')
}

test('refused for good (550): intercambio error; re-sent → 202 pendiente; the next pass delivers the same envelope', async () => {
  const id = await factura({ rut: testRut(), email: B_MAIL })
  hub.failNext(1, 550, 'Mailbox unavailable')
  expect(await deliverDueMail(s.server.deps)).toBe(1)
  expect(await intercambio(id)).toMatchObject({ estado: 'error', email: B_MAIL, enviado_at: null })
  const [failed] = rows(id)
  expect(failed).toMatchObject({ status: 'failed', last_error: expect.stringContaining('550') })
  // Nothing would ever send it again by itself.
  clock.advance(24 * 3_600_000)
  expect(await deliverDueMail(s.server.deps)).toBe(0)

  const res = await reenviar(id)
  expect(res.status).toBe(202)
  expect(res.json).toMatchObject({ estado: 'pendiente', email: B_MAIL, enviado_at: null })
  expect(await intercambio(id)).toMatchObject({ estado: 'pendiente' })
  expect(await deliverDueMail(s.server.deps)).toBe(1)
  const mail = await hub.waitForSent((m) => m.to.includes(B_MAIL), 10_000)
  const xml = mail.attachments.find((f) => f.fileName?.startsWith('EnvioDTE_'))!
  expect(mail.attachments.some((f) => f.fileName?.endsWith('.pdf'))).toBe(true)
  // The envelope signed for the refused attempt, byte for byte: the failed row is kept with its reason.
  expect(Buffer.from(xml.content).equals(Buffer.from(failed!.attachment))).toBe(true)
  expect(rows(id).map((r) => r.status)).toEqual(['failed', 'sent'])
  expect(rows(id)[0]!.last_error).toContain('550')
  expect(await intercambio(id)).toMatchObject({ estado: 'enviado', email: B_MAIL, enviado_at: expect.any(String) })

  // Sent: a second re-send is refused with its reason in words, and queues nothing.
  const again = await reenviar(id)
  expect(again.status).toBe(409)
  expect(again.json).toMatchObject({ code: 'ACCION_NO_PERMITIDA', context: { intercambio_estado: 'enviado', motivo: 'El correo ya fue enviado al receptor.' } })
  expect(again.json.message).toContain('ya fue enviado')
  expect(rows(id)).toHaveLength(2)
}, 60_000)

test("a request's email that bounced, then the cliente corrected: the re-send goes to the cliente's address (review)", async () => {
  const rut = testRut()
  const id = await factura({ rut, email: 'dte@receptor-c-con-error.cl' })
  hub.failNext(1, 550, 'No such user')
  expect(await deliverDueMail(s.server.deps)).toBe(1)
  expect(await intercambio(id)).toMatchObject({ estado: 'error', email: 'dte@receptor-c-con-error.cl' })
  const alta = await s.request('POST', '/api/v1/billing/clientes', { headers: { 'X-Api-Key': a.writeKey }, body: { rut, razon_social: 'Receptor SpA', email: C_MAIL } })
  expect(alta.status).toBe(201)
  const res = await reenviar(id)
  expect(res.status).toBe(202)
  expect(res.json).toMatchObject({ estado: 'pendiente', email: C_MAIL })
  expect(await deliverDueMail(s.server.deps)).toBe(1)
  await hub.waitForSent((m) => m.to.includes(C_MAIL), 10_000)
  expect(await intercambio(id)).toMatchObject({ estado: 'enviado', email: C_MAIL })
}, 60_000)

test('sin_destinatario: refused while no address is known; once the cliente has an email, re-sent there and delivered', async () => {
  const rut = testRut()
  const id = await factura({ rut })
  expect(await intercambio(id)).toMatchObject({ estado: 'sin_destinatario', email: null })
  const refused = await reenviar(id)
  expect(refused.status).toBe(409)
  expect(refused.json.context).toMatchObject({ intercambio_estado: 'sin_destinatario', motivo: expect.stringContaining('agréguelo al cliente') })
  expect(await intercambio(id)).toMatchObject({ estado: 'sin_destinatario' })

  const cliente = await s.request('POST', '/api/v1/billing/clientes', { headers: { 'X-Api-Key': a.writeKey }, body: { rut, razon_social: 'Receptor C SpA', email: C_MAIL } })
  expect(cliente.status).toBe(201)
  const res = await reenviar(id)
  expect(res.status).toBe(202)
  expect(res.json).toMatchObject({ estado: 'pendiente', email: C_MAIL })
  expect(await deliverDueMail(s.server.deps)).toBe(1)
  await hub.waitForSent((m) => m.to.includes(C_MAIL), 10_000)
  expect(await intercambio(id)).toMatchObject({ estado: 'enviado', email: C_MAIL })
}, 60_000)

test('a pending mail, a DTE not yet accepted, a read-only key and another company are refused; nothing is queued', async () => {
  const pending = await factura({ rut: testRut(), email: B_MAIL })
  const res = await reenviar(pending)
  expect(res.status).toBe(409)
  expect(res.json.context).toMatchObject({ intercambio_estado: 'pendiente', motivo: expect.stringContaining('en cola') })
  const firmado = await factura({ rut: testRut(), email: B_MAIL }, false)
  const notYet = await reenviar(firmado)
  expect(notYet.status).toBe(409)
  expect(notYet.json.context).toMatchObject({ intercambio_estado: null, motivo: expect.stringContaining('cuando el SII lo acepta') })
  const readOnly = await reenviar(pending, a.readKey)
  expect(readOnly.status).toBe(403)
  expect(readOnly.json.code).toBe('API_KEY_READ_ONLY')
  const foreign = await reenviar(pending, other.writeKey)
  expect(foreign.status).toBe(404)
  expect(foreign.json.code).toBe('NOT_FOUND')
  expect((await reenviar('no-es-un-uuid')).status).toBe(404)
  expect(rows(pending)).toHaveLength(1)
  expect(rows(firmado)).toHaveLength(0)
  await deliverDueMail(s.server.deps)
}, 60_000)

test('/docs/json lists reenviarIntercambioDTE as an extension answering 202 with the intercambio record', async () => {
  const doc = (await s.request('GET', '/docs/json')).json
  const op = doc.paths['/api/v1/billing/dte/{id}/intercambio/reenviar'].post
  expect(op).toMatchObject({ operationId: 'reenviarIntercambioDTE', 'x-timbre-extension': true })
  expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['202', '404', '409']))
})
