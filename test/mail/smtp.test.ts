// sendMail and testSmtp (src/mail/smtp.ts) against the hub's real SMTP server (test/support/mail.ts): exact bytes,
// permanent against temporary refusals, and failures that come back fast as values.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sendMail, testSmtp } from '../../src/mail/smtp'
import type { OutgoingMail } from '../../src/mail/types'
import { freePort, startMailHub, startSilentServer, type MailHub } from '../support/mail'

const FROM = 'dte@empresa-a.test'
const TO = 'dte@empresa-b.test'
/** Every byte value an ISO-8859-1 DTE can hold, ñ (0xF1) and º (0xBA) among them. */
const LATIN1 = Buffer.concat([
  Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?>\n<DTE>Ñuñoa Nº 5 — ', 'latin1'),
  Buffer.from(Array.from({ length: 256 }, (_, i) => i).filter((b) => b >= 0x20 && b !== 0x3c && b !== 0x26)),
  Buffer.from('</DTE>\r\n', 'latin1'),
])

let hub: MailHub
beforeAll(async () => {
  hub = await startMailHub({ users: [TO] })
})
afterAll(() => hub?.stop())

function mail(subject: string, extra: Partial<OutgoingMail> = {}): OutgoingMail {
  return {
    to: TO,
    subject,
    text: 'Estimado receptor: adjuntamos el DTE y su representación impresa.',
    attachments: [
      { fileName: 'EnvioDTE_76000000-0_33_7.xml', content: LATIN1, contentType: 'application/xml' },
      { fileName: 'DTE_33_7.pdf', content: new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d, 0x00, 0xff, 0x80]), contentType: 'application/pdf' },
    ],
    ...extra,
  }
}

describe('sendMail', () => {
  test('delivers the message: envelope, subject, attachments byte for byte, and the Message-ID it returns', async () => {
    const outcome = await sendMail(hub.smtpSettings(FROM), mail('Envío DTE 33 Nº 7 — Ñuñoa'), 5000)
    expect(outcome).toEqual({ ok: true, messageId: expect.stringMatching(/^<.+@.+>$/) })
    const got = await hub.waitForSent((m) => m.subject === 'Envío DTE 33 Nº 7 — Ñuñoa')
    expect(got.from).toBe(FROM)
    expect(got.to).toEqual([TO])
    expect(got.attachments.map((a) => [a.fileName, a.contentType])).toEqual([
      ['EnvioDTE_76000000-0_33_7.xml', 'application/xml'],
      ['DTE_33_7.pdf', 'application/pdf'],
    ])
    expect(Buffer.from(got.attachments[0]!.content).equals(LATIN1)).toBe(true)
    expect([...got.attachments[1]!.content]).toEqual([0x25, 0x50, 0x44, 0x46, 0x2d, 0x00, 0xff, 0x80])
    expect(Buffer.from(got.raw).toString('latin1')).toContain(`Message-ID: ${outcome.ok ? outcome.messageId : ''}`)
    // The hub user's Maildir got it too: this is what readUnseen will find.
    expect((await hub.messages(TO)).map((m) => m.subject)).toContain('Envío DTE 33 Nº 7 — Ñuñoa')
  })

  test('logs in when a user is set', async () => {
    const outcome = await sendMail({ ...hub.smtpSettings(FROM), user: 'dte@empresa-a.test', password: 'secreta' }, mail('con login'), 5000)
    expect(outcome.ok).toBe(true)
    expect((await hub.waitForSent((m) => m.subject === 'con login')).authUser).toBe('dte@empresa-a.test')
    expect((await hub.waitForSent((m) => m.subject === 'Envío DTE 33 Nº 7 — Ñuñoa')).authUser).toBeNull()
  })

  test('a 5xx refusal is permanent, a 4xx one temporary, and the next message goes through', async () => {
    const before = hub.sent.length
    hub.failNext(1, 550)
    const refused = await sendMail(hub.smtpSettings(FROM), mail('rechazado'), 5000)
    expect(refused).toEqual({ ok: false, permanent: true, error: expect.stringContaining('550') })

    hub.failNext(1, 451)
    const deferred = await sendMail(hub.smtpSettings(FROM), mail('diferido'), 5000)
    expect(deferred).toEqual({ ok: false, permanent: false, error: expect.stringContaining('451') })
    expect(hub.sent.length).toBe(before)

    expect((await sendMail(hub.smtpSettings(FROM), mail('reintento'), 5000)).ok).toBe(true)
    expect(hub.sent.slice(before).map((m) => m.subject)).toEqual(['reintento'])
  })

  test('implicit TLS against a clear-text port says so', async () => {
    const outcome = await sendMail({ ...hub.smtpSettings(FROM), security: 'tls' }, mail('tls'), 2000)
    expect(outcome).toEqual({ ok: false, permanent: false, error: expect.stringContaining('no habla TLS') })
  })

  test('an address nodemailer cannot use is permanent', async () => {
    expect(await sendMail(hub.smtpSettings(FROM), mail('sin destinatario', { to: 'no es una dirección' }), 2000))
      .toEqual({ ok: false, permanent: true, error: expect.any(String) })
  })

  test('a closed port is a temporary failure, returned at once', async () => {
    const started = performance.now()
    const outcome = await sendMail({ ...hub.smtpSettings(FROM), port: await freePort() }, mail('sin servidor'), 1000)
    expect(outcome).toEqual({ ok: false, permanent: false, error: expect.stringContaining('conexión rechazada') })
    expect(performance.now() - started).toBeLessThan(1000)
  })

  test('a server that never greets is a temporary failure within the timeout', async () => {
    const silent = await startSilentServer()
    try {
      const started = performance.now()
      const outcome = await sendMail({ ...hub.smtpSettings(FROM), port: silent.port }, mail('mudo'), 300)
      expect(outcome).toEqual({ ok: false, permanent: false, error: expect.stringContaining('sin respuesta') })
      expect(performance.now() - started).toBeLessThan(2000)
    } finally {
      await silent.stop()
    }
  })

  test('starttls against a server without STARTTLS refuses to send in clear text', async () => {
    const before = hub.sent.length
    const settings = { ...hub.smtpSettings(FROM), security: 'starttls' as const, user: 'u', password: 'clave-que-no-debe-viajar' }
    const outcome = await sendMail(settings, mail('en claro'), 5000)
    expect(outcome).toEqual({ ok: false, permanent: true, error: expect.stringContaining('no acepta STARTTLS') })
    expect(!outcome.ok && outcome.error).not.toContain('clave-que-no-debe-viajar')
    expect(hub.sent.length).toBe(before)
  })
})

describe('testSmtp', () => {
  test('ok against a running server, with or without a login', async () => {
    expect(await testSmtp(hub.smtpSettings(FROM), 5000)).toEqual({ ok: true })
    expect(await testSmtp({ ...hub.smtpSettings(FROM), user: 'u', password: 'p' }, 5000)).toEqual({ ok: true })
  })

  test('a closed port fails at once with a reason', async () => {
    const started = performance.now()
    const check = await testSmtp({ ...hub.smtpSettings(FROM), port: await freePort() }, 1000)
    expect(check).toEqual({ ok: false, error: expect.stringContaining('conexión rechazada') })
    expect(performance.now() - started).toBeLessThan(1000)
  })

  test('a server that never greets fails within the timeout', async () => {
    const silent = await startSilentServer()
    try {
      const check = await testSmtp({ ...hub.smtpSettings(FROM), port: silent.port }, 300)
      expect(check).toEqual({ ok: false, error: expect.stringContaining('sin respuesta') })
    } finally {
      await silent.stop()
    }
  })
})
