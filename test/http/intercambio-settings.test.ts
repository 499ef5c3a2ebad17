// DESIGN §13 "Mailbox of a company": PUT/GET/DELETE /empresa/intercambio against a real server, a real SQLite file and
// a real mail hub (dovecot IMAP, smtp-server). Passwords go in and never come out: not in answers, logs or the file.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sealedSecretSamples } from '../../src/db/sealed-secrets'
import { configuredMailboxes, mailboxSettings, recordPoll } from '../../src/services/mailbox'
import { freePort, startMailHub, type MailHub } from '../support/mail'
import { testRut, useTenant, type Tenant, type TestServer } from '../support/server'

const INTERCAMBIO = '/api/v1/billing/empresa/intercambio'
const SMTP_PASSWORD = 'smtp-Secreto-9f3a7c2e'
let s: TestServer
let a: Tenant
let b: Tenant
let hub: MailHub

useTenant((server, tenant) => {
  s = server
  a = tenant
})
beforeAll(async () => {
  b = await s.tenant(testRut(), 'Empresa B SpA')
  hub = await startMailHub({ users: ['dte-a', 'dte-b'] })
})
afterAll(() => hub?.stop())

const get = (key = a.readKey, query = '') => s.request('GET', `${INTERCAMBIO}${query}`, { headers: { 'X-Api-Key': key } })
const put = (body: unknown, key = a.writeKey) => s.request('PUT', INTERCAMBIO, { headers: { 'X-Api-Key': key }, body })
const del = (key = a.writeKey) => s.request('DELETE', INTERCAMBIO, { headers: { 'X-Api-Key': key } })
const empresa = (key = a.readKey) => s.request('GET', '/api/v1/billing/empresa', { headers: { 'X-Api-Key': key } })

type Section = Record<string, unknown>
interface Body {
  inbound_email: string
  imap: Section
  smtp: Section
  [k: string]: unknown
}

/** A valid body for the hub's user: IMAP with its password, SMTP through the hub's relay without a login. */
function settingsFor(user: string, overrides: { imap?: Section; smtp?: Section; [k: string]: unknown } = {}): Body {
  const imap = hub.imapSettings(user)
  const { imap: imapOverrides, smtp: smtpOverrides, ...rest } = overrides
  return {
    inbound_email: `${user}@intercambio.example.cl`,
    imap: { host: imap.host, port: imap.port, tls: imap.tls, user: imap.user, password: imap.password, folder: imap.folder, ...imapOverrides },
    smtp: { host: '127.0.0.1', port: hub.smtp.port, security: 'none', user: null, password: null, from: `${user}@intercambio.example.cl`, ...smtpOverrides },
    ...rest,
  }
}

/** Every byte SQLite holds for the data dir: the database and, in WAL mode, its log. */
function storeBytes(): Buffer {
  const base = join(s.dataDir, 'timbre.db')
  return Buffer.concat([base, `${base}-wal`].filter(existsSync).map((f) => readFileSync(f)))
}

const secrets = () => [hub.password('dte-a'), hub.password('dte-b'), SMTP_PASSWORD]
function expectNoSecretIn(text: string) {
  for (const secret of secrets()) expect(text).not.toContain(secret)
}

describe('before any configuration', () => {
  test('GET answers sin_configurar with imap and smtp null; the company record agrees', async () => {
    const res = await get()
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ inbound_email: null, inbound_status: 'sin_configurar', last_poll_at: null, last_error: null, imap: null, smtp: null })
    expect((await empresa()).json).toMatchObject({ inbound_email: null, inbound_status: 'sin_configurar' })
  })

  test('?test=true has nothing to test: test is null', async () => {
    const res = await get(a.readKey, '?test=true')
    expect(res.status).toBe(200)
    expect(res.json.test).toBeNull()
  })

  test('?test=yes is 400 at field test', async () => {
    const res = await get(a.readKey, '?test=yes')
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual(expect.objectContaining({ field: 'test' }))
  })
})

describe('validation: every failing field at once, in dot notation, and nothing changes', () => {
  test('a body wrong everywhere → 400 with each field', async () => {
    const res = await put({
      inbound_email: 'no-es-correo',
      imap: { host: 'mail server', port: 0, tls: 'yes', user: '', folder: 'F'.repeat(256) },
      smtp: { port: 70000, security: 'ssl', user: 42, from: 'tampoco', extra: 1 },
      test: 'si',
    })
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    const got = Object.fromEntries((res.json.details as Array<{ field: string; code: string }>).map((d) => [d.field, d.code]))
    expect(got).toEqual({
      inbound_email: 'INVALID_FORMAT',
      'imap.host': 'INVALID_FORMAT',
      'imap.port': 'OUT_OF_RANGE',
      'imap.tls': 'INVALID_TYPE',
      'imap.user': 'REQUIRED',
      'imap.folder': 'TOO_LONG',
      'imap.password': 'REQUIRED',
      'smtp.host': 'REQUIRED',
      'smtp.port': 'OUT_OF_RANGE',
      'smtp.security': 'INVALID_VALUE',
      'smtp.user': 'INVALID_TYPE',
      'smtp.from': 'INVALID_FORMAT',
      'smtp.extra': 'NOT_ALLOWED',
      test: 'INVALID_TYPE',
    })
    expect((await get()).json.inbound_status).toBe('sin_configurar')
  })

  test.each([
    ['missing imap and smtp', (b: Partial<Body>) => { delete b.imap; delete b.smtp }, [['imap', 'REQUIRED'], ['smtp', 'REQUIRED']]],
    ['imap.port as text', (b: Body) => { b.imap.port = '993' }, [['imap.port', 'INVALID_TYPE']]],
    ['smtp.password without smtp.user', (b: Body) => { b.smtp.password = 'x1234' }, [['smtp.password', 'INCONSISTENT']]],
    ['smtp.user without a password', (b: Body) => { b.smtp.user = 'relay' }, [['smtp.password', 'REQUIRED']]],
    ['an empty imap.password', (b: Body) => { b.imap.password = '' }, [['imap.password', 'REQUIRED']]],
    ['a bad IPv6 host', (b: Body) => { b.smtp.host = '[::zz]' }, [['smtp.host', 'INVALID_FORMAT']]],
  ] as const)('%s → 400 and nothing is stored', async (_name, spoil, expected) => {
    const body = settingsFor('dte-a')
    spoil(body)
    const res = await put(body)
    expect(res.status).toBe(400)
    for (const [field, code] of expected) expect(res.json.details).toContainEqual(expect.objectContaining({ field, code }))
    expect((await get()).json.inbound_status).toBe('sin_configurar')
  })

  test('a body that is not an object → 400 at body; IPv6 and IP hosts are accepted shapes', async () => {
    expect((await put([1, 2])).json.details).toContainEqual(expect.objectContaining({ field: 'body' }))
    const res = await put(settingsFor('dte-a', { imap: { host: '[::1]' }, smtp: { host: '192.168.1.10' }, test: 'no' }))
    expect(res.json.details).toEqual([expect.objectContaining({ field: 'test', code: 'INVALID_TYPE' })])
  })

  test('the error answer names no password', async () => {
    const res = await put(settingsFor('dte-a', { inbound_email: 'mal', smtp: { user: 'relay', password: SMTP_PASSWORD, port: 0 } }))
    expect(res.status).toBe(400)
    expectNoSecretIn(res.text)
  })
})

describe('PUT then GET', () => {
  test('saves, answers the settings without passwords, and the company record shows inbound_email and activo', async () => {
    const res = await put(settingsFor('dte-a', { smtp: { user: 'relay-a', password: SMTP_PASSWORD } }))
    expect(res.status).toBe(200)
    const expected = {
      inbound_email: 'dte-a@intercambio.example.cl',
      inbound_status: 'activo',
      last_poll_at: null,
      last_error: null,
      imap: { host: '127.0.0.1', port: hub.imap.port, tls: false, user: 'dte-a', folder: 'INBOX', password_set: true },
      smtp: { host: '127.0.0.1', port: hub.smtp.port, security: 'none', user: 'relay-a', from: 'dte-a@intercambio.example.cl', password_set: true },
    }
    expect(res.json).toEqual(expected)
    expectNoSecretIn(res.text)
    const again = await get()
    expect(again.json).toEqual(expected)
    expectNoSecretIn(again.text)
    expect((await empresa()).json).toMatchObject({ inbound_email: 'dte-a@intercambio.example.cl', inbound_status: 'activo' })
  })

  test('the passwords are sealed: not in the SQLite file nor its WAL, not in the logs; the vault opens them', () => {
    const bytes = storeBytes()
    // The row itself is in those bytes (its clear fields are found), so the passwords' absence means something.
    expect(bytes.includes(Buffer.from('relay-a', 'utf8'))).toBe(true)
    for (const secret of secrets()) expect(bytes.includes(Buffer.from(secret, 'utf8'))).toBe(false)
    expectNoSecretIn(JSON.stringify(s.logs))
    const opened = mailboxSettings(s.server.deps, { empresaId: a.empresa.id })!
    expect(opened.imap.password).toBe(hub.password('dte-a'))
    expect(opened.smtp).toMatchObject({ user: 'relay-a', password: SMTP_PASSWORD, security: 'none' })
    expect(opened.inboundEmail).toBe('dte-a@intercambio.example.cl')
  })

  test('the master-key check samples the mailbox passwords (DESIGN §3: serve refuses a key that cannot open them)', () => {
    const purposes = sealedSecretSamples(s.server.deps.store.db).map((x) => x.purpose)
    expect(purposes).toEqual(expect.arrayContaining([`mailbox-imap:${a.empresa.id}`, `mailbox-smtp:${a.empresa.id}`]))
  })

  test('a PUT without the passwords keeps the stored ones; folder falls back to INBOX', async () => {
    const body = settingsFor('dte-a', { imap: { folder: undefined }, smtp: { user: 'relay-a' } })
    delete body.imap.password
    delete body.smtp.password
    body.inbound_email = 'nuevo-dte-a@intercambio.example.cl'
    const res = await put(body)
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ inbound_email: 'nuevo-dte-a@intercambio.example.cl', imap: { folder: 'INBOX', password_set: true }, smtp: { password_set: true } })
    const opened = mailboxSettings(s.server.deps, { empresaId: a.empresa.id })!
    expect(opened.imap.password).toBe(hub.password('dte-a'))
    expect(opened.smtp.password).toBe(SMTP_PASSWORD)
  })

  test('smtp.user null drops SMTP authentication and its password', async () => {
    const body = settingsFor('dte-a')
    delete body.imap.password
    const res = await put(body)
    expect(res.status).toBe(200)
    expect(res.json.smtp).toMatchObject({ user: null, password_set: false })
    expect(mailboxSettings(s.server.deps, { empresaId: a.empresa.id })!.smtp).toMatchObject({ user: null, password: null })
  })

  test('configuredMailboxes lists the company; recordPoll writes last_poll_at, last_error and inbound_status', async () => {
    expect(configuredMailboxes(s.server.deps)).toContain(a.empresa.id)
    expect(configuredMailboxes(s.server.deps)).not.toContain(b.empresa.id)
    recordPoll(s.server.deps, { empresaId: a.empresa.id, error: 'IMAP 127.0.0.1: conexión rechazada' })
    const failed = (await get()).json
    expect(failed).toMatchObject({ inbound_status: 'error', last_error: 'IMAP 127.0.0.1: conexión rechazada', last_poll_at: expect.stringMatching(/Z$/) })
    expect((await empresa()).json.inbound_status).toBe('error')
    recordPoll(s.server.deps, { empresaId: a.empresa.id, error: null })
    expect((await get()).json).toMatchObject({ inbound_status: 'activo', last_error: null })
    expect((await empresa()).json.inbound_status).toBe('activo')
  })

  test('a poll that read settings since replaced records nothing: the new settings keep their own status', async () => {
    const read = mailboxSettings(s.server.deps, { empresaId: a.empresa.id })!
    recordPoll(s.server.deps, { empresaId: a.empresa.id, error: 'IMAP: autenticación fallida', settingsAt: read.updatedAt })
    expect((await get()).json.last_error).toBe('IMAP: autenticación fallida')
    recordPoll(s.server.deps, { empresaId: a.empresa.id, error: null, settingsAt: '2000-01-01T00:00:00.000Z' })
    expect((await get()).json).toMatchObject({ inbound_status: 'error', last_error: 'IMAP: autenticación fallida' })
  })
})

describe('test flag: both connections checked against the real mail hub', () => {
  test('PUT with test: true against the hub → both ok, activo', async () => {
    const res = await put(settingsFor('dte-a', { test: true }))
    expect(res.status).toBe(200)
    expect(res.json.test).toEqual({ imap: { ok: true }, smtp: { ok: true } })
    expect(res.json).toMatchObject({ inbound_status: 'activo', last_error: null })
  })

  test('a wrong IMAP password and a closed SMTP port → each reported, saved anyway with inbound_status error', async () => {
    const closed = await freePort()
    const wrong = 'clave-incorrecta-4471'
    const res = await put(settingsFor('dte-a', { imap: { password: wrong }, smtp: { port: closed }, test: true }))
    expect(res.status).toBe(200)
    expect(res.json.test.imap).toEqual({ ok: false, error: expect.any(String) })
    expect(res.json.test.smtp).toEqual({ ok: false, error: expect.any(String) })
    expect(res.json.inbound_status).toBe('error')
    expect(res.json.last_error).toBe(`${res.json.test.imap.error}; ${res.json.test.smtp.error}`)
    expect(res.json.last_error).toMatch(/^IMAP.*; SMTP/)
    expect(res.text).not.toContain(wrong)
    expect(res.json.smtp.port).toBe(closed)
    expect((await empresa()).json.inbound_status).toBe('error')
    // GET ?test=true checks what is stored (the same failures) and writes nothing.
    const checked = await get(a.readKey, '?test=true')
    expect(checked.json.test.imap.ok).toBe(false)
    expect(checked.json.test.smtp.ok).toBe(false)
    expect(checked.json.last_error).toBe(res.json.last_error)
  })

  test('the IMAP check alone failing still reports SMTP ok', async () => {
    const res = await put(settingsFor('dte-a', { imap: { folder: 'NoExiste' }, test: true }))
    expect(res.json.test.smtp).toEqual({ ok: true })
    expect(res.json.test.imap.ok).toBe(false)
    expect(res.json.last_error).toStartWith('IMAP')
    expect(res.json.last_error).not.toContain('SMTP')
  })

  test('fixing the settings with test: true brings the mailbox back to activo; GET ?test=true agrees', async () => {
    const res = await put(settingsFor('dte-a', { test: true }))
    expect(res.json).toMatchObject({ inbound_status: 'activo', last_error: null, test: { imap: { ok: true }, smtp: { ok: true } } })
    expect((await get(a.readKey, '?test=true')).json.test).toEqual({ imap: { ok: true }, smtp: { ok: true } })
  })
})

describe('credentials and tenancy', () => {
  test('a read-only key cannot PUT or DELETE: 403 API_KEY_READ_ONLY, and nothing changes', async () => {
    const before = (await get()).json
    const putRes = await put(settingsFor('dte-b'), a.readKey)
    expect(putRes.status).toBe(403)
    expect(putRes.json.code).toBe('API_KEY_READ_ONLY')
    const delRes = await del(a.readKey)
    expect(delRes.status).toBe(403)
    expect(delRes.json.code).toBe('API_KEY_READ_ONLY')
    expect((await get()).json).toEqual(before)
  })

  test('no credential → 401', async () => {
    expect((await s.request('GET', INTERCAMBIO)).status).toBe(401)
  })

  test("another company's key sees its own mailbox, not this one's; saving it leaves this one alone", async () => {
    expect((await get(b.readKey)).json).toMatchObject({ inbound_status: 'sin_configurar', imap: null, smtp: null })
    const before = (await get()).json
    const res = await put(settingsFor('dte-b'), b.writeKey)
    expect(res.status).toBe(200)
    expect(res.json.imap.user).toBe('dte-b')
    expect((await get(b.readKey)).json.inbound_email).toBe('dte-b@intercambio.example.cl')
    expect((await get()).json).toEqual(before)
    expect(mailboxSettings(s.server.deps, { empresaId: b.empresa.id })!.imap.password).toBe(hub.password('dte-b'))
  })
})

describe('DELETE', () => {
  test('204; the mailbox goes, inbound_status is sin_configurar, inbound_email stays; a second DELETE is 204 too', async () => {
    const res = await del()
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    const after = (await get()).json
    expect(after).toEqual({ inbound_email: 'dte-a@intercambio.example.cl', inbound_status: 'sin_configurar', last_poll_at: null, last_error: null, imap: null, smtp: null })
    expect((await empresa()).json).toMatchObject({ inbound_email: 'dte-a@intercambio.example.cl', inbound_status: 'sin_configurar' })
    expect(mailboxSettings(s.server.deps, { empresaId: a.empresa.id })).toBeNull()
    expect(configuredMailboxes(s.server.deps)).not.toContain(a.empresa.id)
    expect((await del()).status).toBe(204)
    expect((await get(b.readKey)).json.inbound_status).toBe('activo')
  })

  test('after a DELETE the IMAP password is required again', async () => {
    const body = settingsFor('dte-a')
    delete body.imap.password
    const res = await put(body)
    expect(res.status).toBe(400)
    expect(res.json.details).toEqual([expect.objectContaining({ field: 'imap.password', code: 'REQUIRED' })])
  })

  test('recordPoll for a removed mailbox changes nothing', async () => {
    recordPoll(s.server.deps, { empresaId: a.empresa.id, error: null })
    expect((await get()).json.inbound_status).toBe('sin_configurar')
  })
})

describe('/docs/json', () => {
  test('the three operations are documented as extensions, with the request body', async () => {
    const doc = (await s.request('GET', '/docs/json')).json
    const path = doc.paths[INTERCAMBIO]
    for (const method of ['get', 'put', 'delete']) expect(path[method]['x-timbre-extension']).toBe(true)
    expect(path.put.requestBody.content['application/json'].schema).toBeDefined()
    expect(Object.keys(path.delete.responses)).toContain('204')
  })
})
