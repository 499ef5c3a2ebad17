// DESIGN §13 end to end, from the compiled binary: company A issues a 33 to company B of the same instance, the
// simulated SII accepts it, A mails it to B's exchange mailbox (a real dovecot + smtp-server), B's intercambio job
// reads and checks it and mails the acuse that A's job reads back, B registers ACD at the simulated SII and mails its
// ResultadoDTE, and A's DTE shows the acuse, the receiver's result and the SII's registry event — each step with its
// webhook.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { santiagoDate } from '../../src/clock'
import { ensureBinary, runBinary, startServe, type ServeProcess } from '../support/binary'
import { facturaSimple, signer } from '../support/issuance'
import { startMailHub, type MailHub } from '../support/mail'
import { exportPfx, makeTestCaf } from '../support/pki'
import { startReceiver, type Receiver } from '../support/receiver'
import { tempDir } from '../support/server'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SCHEMAS } from '../support/xml-tools'

const A = { rut: '76086428-5', razon: 'Ferretería Ñandú Ltda.', mail: 'dte@ferreteria-a.cl' }
const B = { rut: '77665544-9', razon: 'Constructora Bío Bío SpA', mail: 'dte@constructora-b.cl' }

let hub: MailHub
let serve: ServeProcess | null = null
let hooksA: Receiver
let hooksB: Receiver
/** The last API answer, for the message of a wait that timed out. */
let lastAnswer: unknown = null

beforeAll(async () => {
  await ensureBinary()
  hub = await startMailHub({ users: [A.mail, B.mail] })
  hooksA = startReceiver()
  hooksB = startReceiver()
})
afterAll(async () => {
  if (serve && serve.proc.exitCode === null) await serve.terminate()
  await hub.stop()
  await hooksA.stop()
  await hooksB.stop()
})

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const got = await probe()
    if (got) return got
    if (Date.now() > deadline) {
      const said = (serve?.lines ?? []).filter((l) => /intercambio|job|mail|recib/.test(String(l.event)))
      throw new Error(`timed out waiting for ${what}; last answer ${JSON.stringify(lastAnswer)}; the server said: ${JSON.stringify(said.slice(-15))}`)
    }
    await Bun.sleep(200)
  }
}

function eventsOf(r: Receiver): Array<{ type: string; data: any }> {
  return r.received.map((x) => JSON.parse(x.body) as { type: string; data: any })
}

test('A issues to B; mail, acuse, ACD at the SII and B\'s result reach A, each with its webhook', async () => {
  const dir = tempDir('timbre-intercambio-e2e-')
  const keys: Record<string, string> = {}
  for (const c of [A, B]) {
    const created = runBinary(['empresa', 'create', '--rut', c.rut, '--razon-social', c.razon, '--giro', 'Comercio', '--acteco', '475200', '--direccion', 'Av. Matta 1020', '--comuna', 'Santiago', '--ciudad', 'Santiago', '--data-dir', dir])
    expect(created.code).toBe(0)
    keys[c.rut] = runBinary(['apikey', 'create', '--empresa', c.rut, '--write', '--data-dir', dir]).json().key as string
  }
  serve = await startServe(
    ['--data-dir', dir, '--sii', 'simulado', '--rate-limit', '0', '--submit-every', '1s', '--track-every', '1s', '--inbox-every', '1s', '--deliver-every', '1s'],
    { TIMBRE_WEBHOOK_ALLOW_HTTP: 'true' },
  )
  const url = serve.url
  const api = async (c: { rut: string }, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}/api/v1/billing${path}`, {
      method,
      headers: { 'X-Api-Key': keys[c.rut]!, 'content-type': 'application/json', ...(method === 'POST' && path === '/dte' ? { 'Idempotency-Key': crypto.randomUUID() } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    lastAnswer = { path, status: res.status, body: text.slice(0, 500) }
    return { status: res.status, json: text ? JSON.parse(text) : null }
  }

  for (const [c, hooks] of [[A, hooksA], [B, hooksB]] as const) {
    expect((await api(c, 'POST', '/empresa/certificado/pfx', { pfx_base64: Buffer.from(exportPfx(signer(), 'x', '3des')).toString('base64'), password: 'x' })).status).toBe(201)
    const caf = makeTestCaf({ rut: c.rut, razonSocial: c.razon, tipoDte: 33, folioDesde: 1, folioHasta: 50, fechaAutorizacion: santiagoDate(new Date(Date.now() - 86_400_000)) })
    expect((await api(c, 'POST', '/caf', { tipo_dte: 33, caf_xml: caf.xml })).status).toBe(201)
    const mailbox = await api(c, 'PUT', '/empresa/intercambio', {
      inbound_email: c.mail,
      imap: { host: hub.imap.host, port: hub.imap.port, tls: false, user: c.mail, password: hub.password(c.mail), folder: 'INBOX' },
      smtp: { host: hub.smtp.host, port: hub.smtp.port, security: 'none', user: null, password: null, from: c.mail },
      test: true,
    })
    expect(mailbox.status).toBe(200)
    expect(mailbox.json.test).toMatchObject({ imap: { ok: true }, smtp: { ok: true } })
    expect((await api(c, 'POST', '/webhooks', { url: hooks.url, events: ['dte.accepted', 'recibido.created', 'dte.acuse_recibo', 'dte.resultado_receptor', 'dte.aceptado_receptor'] })).status).toBe(201)
  }

  // A issues to B, with B's exchange address.
  const issued = await api(A, 'POST', '/dte', facturaSimple({ receptor: { ...facturaSimple().receptor, rut: B.rut, razon_social: B.razon, email: B.mail } as never }))
  expect(issued.status).toBe(201)
  const dteId = issued.json.id as string

  // The simulated SII accepts it and A mails it: the EnvioDTE addressed to B, and the PDF.
  await until('aceptado', async () => (await api(A, 'GET', `/dte/${dteId}`)).json.estado === 'aceptado')
  const mailed = await hub.waitForSent((m) => m.to.includes(B.mail), 30_000)
  const envio = mailed.attachments.find((a) => a.fileName?.endsWith('.xml'))!
  const file = join(dir, 'envio.xml')
  writeFileSync(file, envio.content)
  const lint = Bun.spawnSync(['xmllint', '--noout', '--nonet', '--schema', join(SCHEMAS, 'EnvioDTE_v10.xsd'), file])
  expect(lint.stderr.toString()).toContain('validates')
  expect(Buffer.from(envio.content).toString('latin1')).toContain(`<RutReceptor>${B.rut}</RutReceptor>`)
  expect(mailed.attachments.some((a) => a.contentType === 'application/pdf')).toBe(true)
  await until('intercambio enviado', async () => (await api(A, 'GET', `/dte/${dteId}`)).json.intercambio?.estado === 'enviado')

  // B's job reads it from B's mailbox and checks it: a received document with every check passed.
  const recibido = await until('recibido at B', async () => (await api(B, 'GET', '/recibidos')).json.items?.[0])
  expect(recibido).toMatchObject({ rut_emisor: A.rut, tipo_dte: 33, folio: issued.json.folio, estado: 'recibido' })
  const detail = (await api(B, 'GET', `/recibidos/${recibido.id}`)).json
  expect(detail.checks.length).toBeGreaterThanOrEqual(7)
  expect(detail.checks.filter((c: { ok: boolean }) => !c.ok)).toEqual([])
  await until('recibido.created', async () => eventsOf(hooksB).some((e) => e.type === 'recibido.created'))

  // B's acuse goes back to A, and A's job records it.
  const acuse = await until('acuse at A', async () => (await api(A, 'GET', `/dte/${dteId}`)).json.intercambio?.acuse)
  expect(acuse).toMatchObject({ estado_recep_env: 0, estado_recep_dte: 0, firma_valida: true })
  await until('dte.acuse_recibo', async () => eventsOf(hooksA).some((e) => e.type === 'dte.acuse_recibo'))

  // B accepts at the SII once the SII's reception date is known (the plazo), then mails its ResultadoDTE.
  await until('plazo at B', async () => (await api(B, 'GET', `/recibidos/${recibido.id}`)).json.plazo)
  const acd = await api(B, 'POST', `/recibidos/${recibido.id}/acciones`, { accion: 'ACD' })
  expect(acd.status).toBe(200)
  expect(acd.json.estado).toBe('aceptado')
  expect((await api(B, 'POST', `/recibidos/${recibido.id}/acciones`, { accion: 'RCD', motivo: 'tarde' })).status).toBe(409)

  const resultado = await until('resultado at A', async () => (await api(A, 'GET', `/dte/${dteId}`)).json.intercambio?.resultado)
  expect(resultado).toMatchObject({ estado_dte: 0, firma_valida: true })
  await until('dte.resultado_receptor', async () => eventsOf(hooksA).some((e) => e.type === 'dte.resultado_receptor'))

  // The SII's registry, read by A's side: ACD by the receiver.
  const eventos = await until('eventos_receptor at A', async () => {
    const e = (await api(A, 'GET', `/dte/${dteId}`)).json.intercambio?.eventos_receptor as Array<{ accion: string }> | undefined
    return e && e.length > 0 ? e : null
  })
  expect(eventos.map((e) => e.accion)).toContain('ACD')
  await until('dte.aceptado_receptor', async () => eventsOf(hooksA).some((e) => e.type === 'dte.aceptado_receptor'))

  // Each company's mailbox status is true.
  for (const c of [A, B]) expect((await api(c, 'GET', '/empresa')).json.inbound_status).toBe('activo')
}, 150_000)
