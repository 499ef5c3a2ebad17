// Issue 27 "Mail" in the console: the detail of a DTE whose mail ended in `error` offers "Reenviar al receptor" to a
// session that can write; pressing it queues the mail (303 with a notice), the next pass of the outbox delivers it to
// the real SMTP server of test/support/mail.ts, and the detail then shows Enviado without the button. A read-only
// session sees no button and its POST is 403; a mail already sent is refused beside the detail with the reason.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { deliverDueMail } from '../../src/services/mail-outbox'
import { testClock } from '../support/clock'
import { consoleLogin, type ConsoleClient } from '../support/console'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startMailHub, type MailHub } from '../support/mail'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const submit = siiSubmitJob(3_600_000)
const track = siiTrackJob(3_600_000)
const A_MAIL = 'dte@emisor-a.cl'
const B_MAIL = 'dte@receptor-b.cl'
const BUTTON = 'Reenviar al receptor'

const clock = testClock()
let s: TestServer
let hub: MailHub
let a: Tenant
let writer: ConsoleClient
let reader: ConsoleClient

beforeAll(async () => {
  hub = await startMailHub({ users: [A_MAIL, B_MAIL] })
  s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  a = await s.tenant(testRut(), 'Emisor A SpA')
  await provisionIssuer(s, a, { tipos: [33], folios: 10 })
  const put = await s.request('PUT', '/api/v1/billing/empresa/intercambio', {
    headers: { 'X-Api-Key': a.writeKey },
    body: { inbound_email: A_MAIL, imap: hub.imapSettings(A_MAIL), smtp: hub.smtpSettings(A_MAIL) },
  })
  if (put.status !== 200) throw new Error(`mailbox: ${put.status} ${put.text}`)
  writer = await consoleLogin(s, a.writeKey)
  reader = await consoleLogin(s, a.readKey)
}, 60_000)
afterAll(async () => {
  await s?.stop()
  await hub?.stop()
})

const intercambio = async (id: string) => (await s.request('GET', `/api/v1/billing/dte/${id}`, { headers: { 'X-Api-Key': a.readKey } })).json.intercambio

async function acceptedAndRefused(): Promise<string> {
  const res = await issue(s, a, facturaSimple({ receptor: { rut: testRut(), razon_social: 'Receptor B', giro: 'Comercio', direccion: 'Calle 1', comuna: 'Santiago', ciudad: 'Santiago', email: B_MAIL } as never }))
  if (res.status !== 201) throw new Error(`issue: ${res.status} ${res.text}`)
  for (let round = 0; round < 60 && (await intercambio(res.json.id)) === null; round++) {
    await submit.runOnce(s.server.deps)
    await track.runOnce(s.server.deps)
    clock.advance(20_000)
  }
  hub.failNext(1, 550, 'Mailbox unavailable')
  await deliverDueMail(s.server.deps)
  if ((await intercambio(res.json.id))?.estado !== 'error') throw new Error('the mail did not end in error')
  return res.json.id
}

test('in error: the button re-sends, the mail arrives, and the detail shows Enviado without the button', async () => {
  const id = await acceptedAndRefused()
  const before = await writer.get(`/console/documentos/${id}`)
  expect(before.html).toContain('Error al enviar')
  expect(before.html).toContain(BUTTON)
  expect(before.html).toContain(`action="/console/documentos/${id}/intercambio/reenviar"`)
  // The page says where the mail goes, and posts that address back.
  expect(before.html).toContain(`Se enviará a ${B_MAIL}`)
  expect(before.html).toContain(`name="email" value="${B_MAIL}"`)
  // If the address changed after the page was shown, nothing is sent and the new one is named.
  const stale = await writer.post(`/console/documentos/${id}/intercambio/reenviar`, { email: 'otro@antes.cl' })
  expect(stale.status).toBe(409)
  expect(stale.html).toContain(`ahora es ${B_MAIL}`)
  expect(await deliverDueMail(s.server.deps)).toBe(0)

  const posted = await writer.post(`/console/documentos/${id}/intercambio/reenviar`, { email: B_MAIL })
  expect(posted.status).toBe(303)
  expect(posted.location).toBe(`/console/documentos/${id}?aviso=reenviado`)
  const queued = await writer.get(posted.location!)
  expect(queued.html).toContain(`Correo en cola para ${B_MAIL}`)
  expect(queued.html).toContain('Pendiente de envío')
  expect(queued.html).not.toContain(BUTTON)

  expect(await deliverDueMail(s.server.deps)).toBe(1)
  await hub.waitForSent((m) => m.to.includes(B_MAIL), 10_000)
  const sent = await writer.get(`/console/documentos/${id}`)
  expect(sent.html).toContain('<dd>Enviado</dd>')
  expect(sent.html).not.toContain(BUTTON)

  // A stale page pressed again: 409 on the detail, with the reason in words.
  const again = await writer.post(`/console/documentos/${id}/intercambio/reenviar`, {})
  expect(again.status).toBe(409)
  expect(again.html).toContain('No se puede reenviar el correo: el correo ya fue enviado al receptor.')
  expect(again.html).not.toContain('context.')
}, 60_000)

test('a read-only session sees no button and its POST is refused 403; nothing is queued', async () => {
  const id = await acceptedAndRefused()
  const page = await reader.get(`/console/documentos/${id}`)
  expect(page.html).toContain('Error al enviar')
  expect(page.html).not.toContain(BUTTON)
  const posted = await reader.post(`/console/documentos/${id}/intercambio/reenviar`, {})
  expect(posted.status).toBe(403)
  expect(await intercambio(id)).toMatchObject({ estado: 'error' })
  expect(await deliverDueMail(s.server.deps)).toBe(0)
}, 60_000)
