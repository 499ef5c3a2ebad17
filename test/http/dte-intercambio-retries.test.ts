// DESIGN §13 "failed sends are retried on the webhook schedule": the mail outbox against a real SMTP server that
// refuses on demand (test/support/mail.ts failNext), with the tests' clock instead of waiting the schedule out.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { isoTimestamp } from '../../src/clock'
import { RETRY_DELAYS_MS } from '../../src/domain/events'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { deliverDueMail, SIN_BUZON } from '../../src/services/mail-outbox'
import { enqueueMail } from '../../src/db/mail-outbox-store'
import { testClock } from '../support/clock'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startMailHub, type MailHub } from '../support/mail'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const submit = siiSubmitJob(3_600_000)
const track = siiTrackJob(3_600_000)
const A_MAIL = 'dte@emisor-a.cl'
const N_MAIL = 'dte@emisor-n.cl'
const B_MAIL = 'dte@receptor-b.cl'

const clock = testClock()
let s: TestServer
let hub: MailHub
let a: Tenant
let n: Tenant

const mailbox = (user: string) => ({ inbound_email: user, imap: hub.imapSettings(user), smtp: hub.smtpSettings(user) })

beforeAll(async () => {
  hub = await startMailHub({ users: [A_MAIL, N_MAIL, B_MAIL] })
  s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  a = await s.tenant(testRut(), 'Emisor A SpA')
  n = await s.tenant(testRut(), 'Emisor N SpA')
  await provisionIssuer(s, a, { tipos: [33], folios: 20 })
  await provisionIssuer(s, n, { tipos: [33], folios: 20 })
  const put = await s.request('PUT', '/api/v1/billing/empresa/intercambio', { headers: { 'X-Api-Key': a.writeKey }, body: mailbox(A_MAIL) })
  if (put.status !== 200) throw new Error(`mailbox: ${put.status} ${put.text}`)
}, 60_000)
afterAll(async () => {
  await s?.stop()
  await hub?.stop()
})

const row = (dteId: string) => s.server.deps.store.sqlite.query('SELECT * FROM mail_outbox WHERE dte_id = ?').get(dteId) as Record<string, any>
const intercambio = async (t: Tenant, id: string) =>
  (await s.request('GET', `/api/v1/billing/dte/${id}`, { headers: { 'X-Api-Key': t.readKey } })).json.intercambio

/** One factura from `t` to B's mailbox, driven through the SII jobs to aceptado; its id. */
async function accepted(t: Tenant): Promise<string> {
  const res = await issue(s, t, facturaSimple({ receptor: { rut: testRut(), razon_social: 'Receptor B', giro: 'Comercio', direccion: 'Calle 1', comuna: 'Santiago', ciudad: 'Santiago', email: B_MAIL } as never }))
  if (res.status !== 201) throw new Error(`issue: ${res.status} ${res.text}`)
  for (let round = 0; round < 60; round++) {
    await submit.runOnce(s.server.deps)
    await track.runOnce(s.server.deps)
    if ((await intercambio(t, res.json.id)) !== null) return res.json.id
    clock.advance(20_000)
  }
  throw new Error('the DTE was not accepted')
}

test('a temporary refusal (451) waits one minute, the first step of the schedule, and the next attempt sends it', async () => {
  const id = await accepted(a)
  hub.failNext(1, 451)
  const before = clock.now().getTime()
  expect(await deliverDueMail(s.server.deps)).toBe(1)
  const failed = row(id)
  expect(failed).toMatchObject({ status: 'pending', attempt: 1, last_error: expect.stringContaining('451') })
  const wait = new Date(failed.next_attempt_at).getTime() - before
  expect(wait).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[0]!)
  expect(wait).toBeLessThan(RETRY_DELAYS_MS[0]! + 5_000)
  expect(await intercambio(a, id)).toMatchObject({ estado: 'pendiente', enviado_at: null })
  // Not due yet: nothing is attempted.
  expect(await deliverDueMail(s.server.deps)).toBe(0)
  clock.advance(RETRY_DELAYS_MS[0]! + 1_000)
  expect(await deliverDueMail(s.server.deps)).toBe(1)
  expect(row(id)).toMatchObject({ status: 'sent', attempt: 2, last_error: null })
  expect(await intercambio(a, id)).toMatchObject({ estado: 'enviado', enviado_at: expect.any(String) })
}, 60_000)

test('refused at every attempt: retried after 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then failed and intercambio error', async () => {
  const id = await accepted(a)
  hub.failNext(RETRY_DELAYS_MS.length + 1, 421)
  for (const delay of RETRY_DELAYS_MS) {
    expect(await deliverDueMail(s.server.deps)).toBe(1)
    expect(row(id)).toMatchObject({ status: 'pending' })
    clock.advance(delay - 1_000)
    expect(await deliverDueMail(s.server.deps)).toBe(0)
    clock.advance(2_000)
  }
  expect(await deliverDueMail(s.server.deps)).toBe(1)
  expect(row(id)).toMatchObject({ status: 'failed', attempt: RETRY_DELAYS_MS.length + 1, next_attempt_at: null, last_error: expect.stringContaining('421') })
  expect(await intercambio(a, id)).toMatchObject({ estado: 'error', enviado_at: null })
  clock.advance(24 * 3_600_000)
  expect(await deliverDueMail(s.server.deps)).toBe(0)
}, 60_000)

test('a permanent refusal (550) fails at once: intercambio error, never retried', async () => {
  const id = await accepted(a)
  hub.failNext(1, 550, 'Mailbox unavailable')
  expect(await deliverDueMail(s.server.deps)).toBe(1)
  expect(row(id)).toMatchObject({ status: 'failed', attempt: 1, next_attempt_at: null, last_error: expect.stringContaining('550') })
  expect(await intercambio(a, id)).toMatchObject({ estado: 'error' })
  clock.advance(RETRY_DELAYS_MS[0]! + 1_000)
  expect(await deliverDueMail(s.server.deps)).toBe(0)
}, 60_000)

test('a company without a mailbox: kept pending with the reason, retried on the schedule, sent once it configures one', async () => {
  const id = await accepted(n)
  expect(await deliverDueMail(s.server.deps)).toBe(1)
  expect(row(id)).toMatchObject({ status: 'pending', attempt: 1, last_error: SIN_BUZON })
  expect(await intercambio(n, id)).toMatchObject({ estado: 'pendiente' })
  const put = await s.request('PUT', '/api/v1/billing/empresa/intercambio', { headers: { 'X-Api-Key': n.writeKey }, body: mailbox(N_MAIL) })
  expect(put.status).toBe(200)
  clock.advance(RETRY_DELAYS_MS[0]! + 1_000)
  expect(await deliverDueMail(s.server.deps)).toBe(1)
  await hub.waitForSent((m) => m.from === N_MAIL, 10_000)
  expect(row(id)).toMatchObject({ status: 'sent', attempt: 2 })
  expect(await intercambio(n, id)).toMatchObject({ estado: 'enviado' })
}, 60_000)

test('one pass is bounded and fair: a company with a backlog does not hold back another company\'s mail', async () => {
  const at = isoTimestamp(clock.now())
  const db = s.server.deps.store.db
  const answer = (empresaId: string, i: number) =>
    enqueueMail(db, { empresaId, kind: 'recepcion_envio', to: B_MAIL, subject: `Respuesta ${i}`, attachment: new TextEncoder().encode('<RespuestaDTE/>'), attachmentName: `respuesta-${i}.xml`, at })
  for (let i = 0; i < 30; i++) answer(a.empresa.id, i)
  answer(n.empresa.id, 99)
  const before = hub.sent.length
  const first = await deliverDueMail(s.server.deps)
  expect(first).toBe(21)
  await hub.waitForSent((m) => m.subject === 'Respuesta 99', 10_000)
  expect(await deliverDueMail(s.server.deps)).toBe(10)
  const sent = hub.sent.slice(before)
  expect(sent).toHaveLength(31)
  expect(sent.find((m) => m.subject === 'Respuesta 0')!.attachments[0]).toMatchObject({ fileName: 'respuesta-0.xml' })
}, 60_000)

test('no log line carries a mailbox password', () => {
  const secrets = [A_MAIL, N_MAIL].map((u) => hub.password(u))
  const text = JSON.stringify(s.logs)
  for (const secret of secrets) expect(text).not.toContain(secret)
})
