// `timbre empresa intercambio` (DESIGN §3, §13): the CLI, spawned as `bun src/main.ts` (STYLE §5), on the data dir of a
// live server, against a real mail hub. The CLI and HTTP share the services: what one writes the other reads.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startMailHub, type MailHub } from '../support/mail'
import { startTestServer, tempDir, testRut, type Tenant, type TestServer } from '../support/server'

const ROOT = join(import.meta.dir, '../..')
const INTERCAMBIO = '/api/v1/billing/empresa/intercambio'
let hub: MailHub
let s: TestServer
let t: Tenant
let dataDir: string
let passwordFile: string

beforeAll(async () => {
  hub = await startMailHub({ users: ['cli-a'] })
  dataDir = tempDir('timbre-cli-intercambio-')
  s = await startTestServer({ dataDir })
  t = await s.tenant(testRut(), 'Ferretería CLI Ltda.')
  passwordFile = join(tempDir('timbre-cli-secret-'), 'imap.pass')
  writeFileSync(passwordFile, `${hub.password('cli-a')}\n`, { mode: 0o600 })
})
afterAll(async () => {
  await s?.stop()
  await hub?.stop()
})

/** Spawned without blocking: the hub's SMTP server and the HTTP server live in this process and must keep answering. */
async function cli(args: readonly string[], env: Record<string, string> = {}) {
  const p = Bun.spawn([process.execPath, join(ROOT, 'src/main.ts'), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { code, stdout, stderr, json: () => JSON.parse(stdout), error: () => JSON.parse(stderr.trim().split('\n').at(-1)!) }
}

const base = () => ['empresa', 'intercambio', '--empresa', t.empresa.rut, '--data-dir', dataDir]
const settings = () => [
  '--imap-host', '127.0.0.1', '--imap-port', String(hub.imap.port), '--imap-user', 'cli-a',
  '--smtp-host', '127.0.0.1', '--smtp-port', String(hub.smtp.port), '--smtp-security', 'none', '--smtp-from', 'dte@ferreteria-cli.example.cl',
]
const httpGet = async () => (await s.request('GET', INTERCAMBIO, { headers: { 'X-Api-Key': t.readKey } })).json
function expectNoPassword(text: string) {
  expect(text).not.toContain(hub.password('cli-a'))
}

describe('timbre empresa intercambio', async () => {
  test('--help shows the usage, the password file and env flags, and no flag that takes a password itself', async () => {
    const r = await cli(['empresa', 'intercambio', '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Uso: timbre empresa intercambio')
    for (const flag of ['--imap-password-file', '--imap-password-env', '--smtp-password-file', '--smtp-password-env', '--show', '--test']) expect(r.stdout).toContain(flag)
    expect(r.stdout).not.toMatch(/--(imap|smtp)-password VALOR/)
    expect((await cli(['empresa', '--help'])).stdout).toContain('empresa intercambio')
  })

  test('a password as an argv value is refused (argv is visible in ps): exit 2, nothing saved', async () => {
    const r = await cli([...base(), ...settings(), '--imap-password', hub.password('cli-a')])
    expect(r.code).toBe(2)
    expect(r.error()).toMatchObject({ code: 'USAGE', message: expect.stringContaining('--imap-password') })
    expect((await httpGet()).inbound_status).toBe('sin_configurar')
  })

  test('the first configuration needs the IMAP password: exit 1 with the field', async () => {
    const r = await cli([...base(), ...settings()])
    expect(r.code).toBe(1)
    expect(r.error()).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ field: 'imap.password', code: 'REQUIRED' })] })
  })

  test('an unset password variable is a usage error naming it, not its value', async () => {
    const r = await cli([...base(), ...settings(), '--imap-password-env', 'TIMBRE_TEST_NO_SUCH_VAR'])
    expect(r.code).toBe(2)
    expect(r.error().message).toContain('TIMBRE_TEST_NO_SUCH_VAR')
  })

  test('set with --imap-password-file and --test: both connections ok, activo, no password printed; HTTP sees it', async () => {
    const r = await cli([...base(), ...settings(), '--imap-password-file', passwordFile, '--test'])
    expect(r.code).toBe(0)
    expectNoPassword(r.stdout + r.stderr)
    expect(r.json()).toMatchObject({
      inbound_email: 'dte@ferreteria-cli.example.cl',
      inbound_status: 'activo',
      imap: { host: '127.0.0.1', port: hub.imap.port, tls: false, user: 'cli-a', folder: 'INBOX', password_set: true },
      smtp: { security: 'none', user: null, from: 'dte@ferreteria-cli.example.cl', password_set: false },
      test: { imap: { ok: true }, smtp: { ok: true } },
    })
    const { test: _test, ...saved } = r.json()
    expect(await httpGet()).toEqual(saved)
  })

  test('--show prints the settings without a password; with --test it checks them', async () => {
    const r = await cli([...base(), '--show'])
    expect(r.code).toBe(0)
    expectNoPassword(r.stdout)
    expect(r.json()).toMatchObject({ inbound_status: 'activo', imap: { user: 'cli-a', password_set: true } })
    expect(r.json().test).toBeUndefined()
    expect((await cli([...base(), '--show', '--test'])).json().test).toEqual({ imap: { ok: true }, smtp: { ok: true } })
    const bad = await cli([...base(), '--show', '--imap-host', 'otro'])
    expect(bad.code).toBe(2)
  })

  test('setting again without a password keeps the stored one; --inbound-email changes the address', async () => {
    const r = await cli([...base(), ...settings(), '--inbound-email', 'intercambio@ferreteria-cli.example.cl', '--test'])
    expect(r.code).toBe(0)
    expect(r.json()).toMatchObject({ inbound_email: 'intercambio@ferreteria-cli.example.cl', inbound_status: 'activo', test: { imap: { ok: true } } })
  })

  test('--imap-password-env with a wrong password: the test reports IMAP, inbound_status error, the address is kept', async () => {
    const wrong = 'clave-equivocada-8812'
    const r = await cli([...base(), ...settings(), '--imap-password-env', 'MAILBOX_PASS', '--test'], { MAILBOX_PASS: wrong })
    expect(r.code).toBe(0)
    expect(r.stdout).not.toContain(wrong)
    expect(r.json()).toMatchObject({ inbound_email: 'intercambio@ferreteria-cli.example.cl', inbound_status: 'error', test: { imap: { ok: false }, smtp: { ok: true } } })
    expect((await httpGet()).last_error).toStartWith('IMAP')
    const empresa = (await s.request('GET', '/api/v1/billing/empresa', { headers: { 'X-Api-Key': t.readKey } })).json
    expect(empresa.inbound_status).toBe('error')
  })

  test('no password reaches the SQLite file', async () => {
    const db = join(dataDir, 'timbre.db')
    const bytes = Buffer.concat([db, `${db}-wal`].filter(existsSync).map((f) => readFileSync(f)))
    expect(bytes.includes(Buffer.from('cli-a'))).toBe(true)
    for (const secret of [hub.password('cli-a'), 'clave-equivocada-8812']) expect(bytes.includes(Buffer.from(secret))).toBe(false)
  })

  test('--delete removes the mailbox: sin_configurar for HTTP too', async () => {
    const r = await cli([...base(), '--delete'])
    expect(r.code).toBe(0)
    expect(r.json()).toMatchObject({ inbound_status: 'sin_configurar', imap: null, smtp: null })
    expect(await httpGet()).toMatchObject({ inbound_status: 'sin_configurar', imap: null })
  })

  test('an unknown company is an error on stderr, exit 1', async () => {
    const r = await cli(['empresa', 'intercambio', '--empresa', '11111111-1', '--show', '--data-dir', dataDir])
    expect(r.code).toBe(1)
    expect(r.error().code).toBe('NOT_FOUND')
  })
})
