// readUnseen and testImap (src/mail/imap.ts) against a real dovecot (test/support/mail.ts), with mail that arrived
// through the hub's SMTP server sent by sendMail, and hostile mail dropped straight into the Maildir.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readUnseen, testImap } from '../../src/mail/imap'
import { sendMail } from '../../src/mail/smtp'
import type { ImapSettings, InboxMessage, ReadOptions } from '../../src/mail/types'
import { freePort, startMailHub, startSilentServer, type MailHub } from '../support/mail'

const A = 'dte@empresa-a.test'
/** One mailbox per test, so no test sees another's messages. */
const B = {
  attachments: 'adjuntos@empresa-b.test',
  seenAfter: 'visto@empresa-b.test',
  throws: 'falla@empresa-b.test',
  oversize: 'grande@empresa-b.test',
  max: 'maximo@empresa-b.test',
  hostile: 'hostil@empresa-b.test',
  empty: 'vacio@empresa-b.test',
}
const OPTS: ReadOptions = { maxMessages: 50, maxMessageBytes: 1_000_000, timeoutMs: 5000 }
/** An ISO-8859-1 EnvioDTE-like file: ñ and º are single bytes that must arrive as such. */
const XML_LATIN1 = Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?>\n<EnvioDTE>Ñuñoa Nº 1 &amp; más</EnvioDTE>\n', 'latin1')

let hub: MailHub
beforeAll(async () => {
  hub = await startMailHub({ users: [A, ...Object.values(B)] })
})
afterAll(() => hub?.stop())

/** readUnseen that records what it was handed. */
async function readAll(settings: ImapSettings, opts: ReadOptions = OPTS, each: (m: InboxMessage) => Promise<void> = async () => {}) {
  const got: InboxMessage[] = []
  const outcome = await readUnseen(settings, opts, async (m) => {
    got.push(m)
    await each(m)
  })
  return { outcome, got }
}

function plainMail(subject: string): string {
  return `From: Proveedor <Facturas@Proveedor.test>\r\nTo: x@empresa-b.test\r\nSubject: ${subject}\r\n` +
    `Message-ID: <${subject}@proveedor.test>\r\n\r\ncuerpo\r\n`
}

describe('readUnseen', () => {
  test('gives the XML attachments of a message sent through SMTP, byte for byte, and ignores the rest', async () => {
    const sent = await sendMail({ ...hub.smtpSettings(`"Empresa A" <DTE@Empresa-A.test>`) }, {
      to: B.attachments,
      subject: 'EnvioDTE 33 folio 7',
      text: 'Adjunto DTE.',
      attachments: [
        { fileName: 'envio.xml', content: XML_LATIN1, contentType: 'application/xml' },
        { fileName: 'DTE_33_7.XML', content: XML_LATIN1, contentType: 'application/octet-stream' },
        { fileName: 'respuesta', content: XML_LATIN1, contentType: 'text/xml' },
        { fileName: 'factura.pdf', content: new Uint8Array([0x25, 0x50, 0x44, 0x46, 0xff, 0x00]), contentType: 'application/pdf' },
        { fileName: 'nota.txt', content: Buffer.from('<xml/>'), contentType: 'text/plain' },
      ],
    }, 5000)
    expect(sent.ok).toBe(true)

    const { outcome, got } = await readAll(hub.imapSettings(B.attachments))
    expect(outcome).toEqual({ ok: true, handled: 1 })
    expect(got).toHaveLength(1)
    const msg = got[0]!
    expect(msg.from).toBe('dte@empresa-a.test')
    expect(msg.subject).toBe('EnvioDTE 33 folio 7')
    expect(msg.messageId).toBe(sent.ok ? sent.messageId : '')
    expect(msg.oversize).toBe(false)
    expect(msg.xmlAttachments.map((a) => a.fileName)).toEqual(['envio.xml', 'DTE_33_7.XML', 'respuesta'])
    for (const a of msg.xmlAttachments) {
      expect(Buffer.from(a.content!).equals(XML_LATIN1)).toBe(true)
      expect(a.size).toBe(XML_LATIN1.length)
    }
    expect((await hub.messages(B.attachments)).map((m) => m.seen)).toEqual([true])
    // Read again: nothing unseen is left.
    expect((await readAll(hub.imapSettings(B.attachments))).outcome).toEqual({ ok: true, handled: 0 })
  })

  test('marks a message seen only after handle resolved', async () => {
    await hub.deliver(B.seenAfter, plainMail('uno'))
    const during: boolean[] = []
    const { outcome } = await readAll(hub.imapSettings(B.seenAfter), OPTS, async () => {
      during.push(...(await hub.messages(B.seenAfter)).map((m) => m.seen))
    })
    expect(outcome).toEqual({ ok: true, handled: 1 })
    expect(during).toEqual([false])
    expect((await hub.messages(B.seenAfter)).map((m) => m.seen)).toEqual([true])
  })

  test('a handle that throws stops the loop there: that message and the later ones stay unseen for the next read', async () => {
    for (const s of ['m1', 'm2', 'm3']) await hub.deliver(B.throws, plainMail(s))
    const first = await readAll(hub.imapSettings(B.throws), OPTS, async (m) => {
      if (m.subject === 'm2') throw new Error('la base de datos no responde')
    })
    expect(first.outcome.ok).toBe(false)
    expect(first.outcome.handled).toBe(1)
    expect(!first.outcome.ok && first.outcome.error).toContain('la base de datos no responde')
    expect(first.got.map((m) => m.subject)).toEqual(['m1', 'm2'])
    expect((await hub.messages(B.throws)).map((m) => [m.subject, m.seen])).toEqual([['m1', true], ['m2', false], ['m3', false]])

    const second = await readAll(hub.imapSettings(B.throws))
    expect(second.outcome).toEqual({ ok: true, handled: 2 })
    expect(second.got.map((m) => m.subject)).toEqual(['m2', 'm3'])
    expect((await hub.messages(B.throws)).every((m) => m.seen)).toBe(true)
  })

  test('an oversize message is reported (sender, subject, size) without being downloaded, then marked seen', async () => {
    const big = Buffer.alloc(300_000, 'A').toString('base64').replace(/.{76}/g, '$&\r\n')
    const raw = `From: Grande <Grande@Proveedor.test>\r\nSubject: enorme\r\nMessage-ID: <enorme@proveedor.test>\r\nMIME-Version: 1.0\r\n` +
      `Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhola\r\n--b\r\n` +
      `Content-Type: application/xml; name="envio.xml"\r\nContent-Transfer-Encoding: base64\r\n\r\n${big}\r\n--b--\r\n`
    await hub.deliver(B.oversize, raw)
    const { outcome, got } = await readAll(hub.imapSettings(B.oversize), { ...OPTS, maxMessageBytes: 100_000 })
    expect(outcome).toEqual({ ok: true, handled: 1 })
    expect(got).toEqual([{
      uid: expect.any(Number), messageId: '<enorme@proveedor.test>', from: 'grande@proveedor.test', subject: 'enorme',
      xmlAttachments: [], oversize: true, size: expect.any(Number),
    }])
    expect(got[0]!.size).toBeGreaterThan(300_000)
    expect((await hub.messages(B.oversize)).map((m) => m.seen)).toEqual([true])
    // Dovecot logs what each session sent: far less than the message.
    const out = await sessionOut(B.oversize)
    expect(out).toBeLessThan(20_000)
  })

  test('reads at most maxMessages per call, oldest first', async () => {
    for (const s of ['a', 'b', 'c']) await hub.deliver(B.max, plainMail(s))
    const first = await readAll(hub.imapSettings(B.max), { ...OPTS, maxMessages: 2 })
    expect(first.outcome).toEqual({ ok: true, handled: 2 })
    expect(first.got.map((m) => m.subject)).toEqual(['a', 'b'])
    expect((await hub.messages(B.max)).map((m) => m.seen)).toEqual([true, true, false])
    const second = await readAll(hub.imapSettings(B.max), { ...OPTS, maxMessages: 2 })
    expect(second.got.map((m) => m.subject)).toEqual(['c'])
  })

  test('hostile mail: no From, no attachments, broken MIME, an inline text/xml part; each is handed over and marked seen', async () => {
    const inlineXml = `Subject: inline\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="z"\r\n\r\n--z\r\n` +
      `Content-Type: text/plain\r\n\r\nver adjunto\r\n--z\r\nContent-Type: text/xml; charset=ISO-8859-1\r\nContent-Disposition: inline\r\n\r\n` +
      `<RespuestaDTE/>\r\n--z--\r\n`
    await hub.deliver(B.hostile, 'Subject: sin remitente\r\n\r\nnada\r\n')
    const broken = `From: <<<>>>\r\nSubject: roto\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="nunca"\r\n\r\n` +
      `--otro\r\n\x00\xff\xfe basura`
    await hub.deliver(B.hostile, broken)
    await hub.deliver(B.hostile, inlineXml)
    await hub.deliver(B.hostile, new Uint8Array([0xff, 0xfe, 0x00, 0x0d, 0x0a, 0x0d, 0x0a, 0x80]))
    const { outcome, got } = await readAll(hub.imapSettings(B.hostile))
    expect(outcome).toEqual({ ok: true, handled: 4 })
    expect(got[0]).toMatchObject({ from: null, subject: 'sin remitente', xmlAttachments: [] })
    expect(got[1]).toMatchObject({ subject: 'roto', xmlAttachments: [] })
    expect(got[2]!.xmlAttachments.map((a) => Buffer.from(a.content!).toString('latin1'))).toEqual(['<RespuestaDTE/>'])
    expect((await hub.messages(B.hostile)).every((m) => m.seen)).toBe(true)
  })

  test('an empty folder is ok with nothing handled', async () => {
    expect((await readAll(hub.imapSettings(B.empty))).outcome).toEqual({ ok: true, handled: 0 })
  })

  test('a folder that does not exist, a wrong password, a silent server: ok false with a reason, nothing handled', async () => {
    const missing = await readAll(hub.imapSettings(B.empty, 'Recibidos'))
    expect(missing.outcome).toEqual({ ok: false, handled: 0, error: expect.stringContaining('la carpeta "Recibidos" no existe') })
    const wrong = await readAll({ ...hub.imapSettings(B.empty), password: 'otra-clave' })
    expect(wrong.outcome).toEqual({ ok: false, handled: 0, error: expect.stringContaining('usuario o contraseña rechazados') })
    const silent = await startSilentServer()
    try {
      const started = performance.now()
      const hung = await readAll({ ...hub.imapSettings(B.empty), port: silent.port }, { ...OPTS, timeoutMs: 300 })
      expect(hung.outcome).toEqual({ ok: false, handled: 0, error: expect.stringContaining('sin respuesta') })
      expect(performance.now() - started).toBeLessThan(2000)
    } finally {
      await silent.stop()
    }
  })
})

describe('testImap', () => {
  test('ok with the right user, password and folder', async () => {
    expect(await testImap(hub.imapSettings(B.empty), 5000)).toEqual({ ok: true })
  })

  test('a wrong password is refused, and the reason does not carry the password', async () => {
    const check = await testImap({ ...hub.imapSettings(B.empty), password: 'clave-equivocada-123' }, 5000)
    expect(check).toEqual({ ok: false, error: expect.stringContaining('usuario o contraseña rechazados') })
    expect(JSON.stringify(check)).not.toContain('clave-equivocada-123')
  })

  test('a closed port fails at once', async () => {
    const started = performance.now()
    const check = await testImap({ ...hub.imapSettings(B.empty), port: await freePort() }, 1000)
    expect(check).toEqual({ ok: false, error: expect.stringContaining('conexión rechazada') })
    expect(performance.now() - started).toBeLessThan(1000)
  })

  test('a server that never greets fails within the timeout', async () => {
    const silent = await startSilentServer()
    try {
      const started = performance.now()
      const check = await testImap({ ...hub.imapSettings(B.empty), port: silent.port }, 300)
      expect(check).toEqual({ ok: false, error: expect.stringContaining('sin respuesta') })
      expect(performance.now() - started).toBeLessThan(2000)
    } finally {
      await silent.stop()
    }
  })

  test('a missing folder is named', async () => {
    expect(await testImap(hub.imapSettings(B.empty, 'NoExiste'), 5000)).toEqual({ ok: false, error: expect.stringContaining('"NoExiste" no existe') })
  })
})

/** Bytes dovecot sent in the user's last finished session (its "Disconnected" line, written by its log process). */
async function sessionOut(user: string): Promise<number> {
  const pattern = new RegExp(`imap\\(${user.replace(/[.@]/g, '\\$&')}\\).*Disconnected.* out=(\\d+)`, 'g')
  for (let wait = 5; wait < 2000; wait *= 2) {
    const found = [...hub.log().matchAll(pattern)].at(-1)
    if (found) return Number(found[1])
    await Bun.sleep(wait)
  }
  throw new Error(`no session of ${user} in dovecot's log:\n${hub.log()}`)
}
