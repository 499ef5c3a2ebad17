// DESIGN §4, §7, §8, §12, §13: private keys, API keys, tokens, webhook secrets and mail passwords never appear in clear
// (issue 18). Company A hands every one of them over through the API (and a few more in requests that are refused),
// then the bytes a thief or a log reader would get are searched for each, in every encoding: the data dir (the SQLite
// file, its -wal, the automatic backups), every log line the server wrote, the archive `timbre backup` makes, and every
// API answer of the run, including a GET of every operation of the route table. The only places a secret may be are
// the ones the design puts it: the webhook's create answer (spec 4.4: the secret in full, once) and the instance keys
// in their own files (master.key, jwt-private.pem, also in the backup).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { santiagoDate } from '../../src/clock'
import { ROOT } from '../support/binary'
import { consoleAdmin, consoleLogin } from '../support/console'
import { alertsJob } from '../../src/jobs/alerts'
import { housekeepingJob } from '../../src/jobs/housekeeping'
import { intercambioJob } from '../../src/jobs/intercambio'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { webhookDeliverJob } from '../../src/jobs/webhook-deliver'
import { facturaSimple, signer } from '../support/issuance'
import { makeTestCaf } from '../support/pki'
import { startReceiver, type Receiver } from '../support/receiver'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'
import { provisionCompanyA, QUIET_SERVER, type CompanyA } from './company'
import { API, apiOperations, fillPath, type Operation } from './route-table'
import { privateKeySecret, secretsIn, textSecret, untarGz, type Secret } from './secret-scan'

/** Files of the data dir that are keys by design (DESIGN §2, §3), kept out of the scan of everything else. */
const KEY_FILES = new Set(['master.key', 'jwt-private.pem'])

let s: TestServer
let a: Tenant
let rx: Receiver
let A: CompanyA
let token: string
/** Every answer the API gave in this file: where, and its exact bytes. */
const answers: Array<{ where: string; bytes: Buffer }> = []
const secondWebhookSecret = `whsec-second-${randomBytes(12).toString('hex')}`
/** What was handed over in requests the server refused: it must not be kept or logged either. */
const refused = {
  pfxPassword: `wrong-pw-${randomBytes(8).toString('hex')}`,
  webhookSecret: `ws-${randomBytes(6).toString('hex')}`, // 15 characters: one short of the minimum, so refused
  imapPassword: `bad-imap-${randomBytes(8).toString('hex')}`,
  apiKey: `timbre_${randomBytes(32).toString('base64url')}`,
  caf: makeTestCaf({ rut: '76543210-3', tipoDte: 33, folioDesde: 1, folioHasta: 5 }), // another company's CAF
}

async function call(where: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const bytes = Buffer.from(await res.arrayBuffer())
  answers.push({ where: `${where} → ${res.status}`, bytes: Buffer.concat([Buffer.from(JSON.stringify([...res.headers.entries()])), bytes]) })
  return { status: res.status, json: (res.headers.get('content-type') ?? '').includes('json') && bytes.length > 0 ? JSON.parse(bytes.toString('utf8')) : undefined }
}

beforeAll(async () => {
  s = await startTestServer({ flags: QUIET_SERVER })
  a = await s.tenant(testRut())
  rx = startReceiver()
  A = await provisionCompanyA(s, a, rx.url)
  token = await a.token()
  const w = { 'X-Api-Key': a.writeKey }
  // Refused requests that carry a secret: the error answer, its log line and the store must not keep it.
  expect((await call('wrong PFX password', 'POST', `${API}/empresa/certificado/pfx`, w, { pfx_base64: A.sent.pfxBase64, password: refused.pfxPassword })).status).toBe(400)
  expect((await call('short webhook secret', 'POST', `${API}/webhooks`, w, { url: rx.url, events: ['dte.created'], secret: refused.webhookSecret })).status).toBe(400)
  expect((await call('another company CAF', 'POST', `${API}/caf`, w, { tipo_dte: 33, caf_xml: refused.caf.xml })).status).toBe(400)
  expect((await call('unknown API key', 'GET', `${API}/empresa`, { 'X-Api-Key': refused.apiKey })).status).toBe(401)
  const badMailbox = { inbound_email: 'dte-a@intercambio.example.cl', imap: { host: '127.0.0.1', port: 70000, tls: false, user: 'dte-a', password: refused.imapPassword }, smtp: { host: '127.0.0.1', port: 9, security: 'none', from: 'x' } }
  expect((await call('invalid mailbox', 'PUT', `${API}/empresa/intercambio`, w, badMailbox)).status).toBe(400)
  // The one answer allowed to carry a webhook secret in full: its creation (spec 4.4), checked below.
  expect((await call('webhook created', 'POST', `${API}/webhooks`, w, { url: `${rx.url}/otro`, events: ['dte.created'], secret: secondWebhookSecret })).status).toBe(201)
  // Every job once, so the secrets are used as in production: the certificate and its key sign an envelope for the
  // SII (simulated), webhooks are signed and sent, the mailbox is polled (and fails: a closed port), alerts, housekeeping.
  expect((await call('DTE to submit', 'POST', `${API}/dte`, { ...w, 'Idempotency-Key': crypto.randomUUID() }, facturaSimple())).status).toBe(201)
  for (const job of [siiSubmitJob(1), siiTrackJob(1), webhookDeliverJob(1), intercambioJob(1), alertsJob, housekeepingJob]) await job.runOnce(s.server.deps)
  // The mailbox connection test, which reports errors from the servers it tried.
  expect((await call('mailbox test', 'GET', `${API}/empresa/intercambio?test=true`, { 'X-Api-Key': a.readKey })).status).toBe(200)
  // Every read of the route table, once with the API key and once with the bearer token.
  const operations = await apiOperations(s)
  for (const op of operations.filter((o) => o.method === 'GET'))
    for (const auth of [{ 'X-Api-Key': a.readKey }, { Authorization: `Bearer ${token}` }] as Array<Record<string, string>>) {
      const res = await call(op.name, 'GET', `${fillPath(op, A.ids)}${queryOf(op)}`, auth)
      expect({ op: op.name, status: res.status }).toEqual({ op: op.name, status: 200 })
    }
  // The console's screens of the same data (DESIGN §14), as the company's user and as the administrator.
  const user = await consoleLogin(s, a.readKey)
  const admin = await consoleAdmin(s, a.empresa.id)
  const { dte, recibidos, webhooks } = A.ids
  const screens = ['/documentos', `/documentos/${dte}`, '/documentos/nuevo', '/recibidos', `/recibidos/${recibidos}`, '/folios', '/certificado', '/correo', '/webhooks', `/webhooks/${webhooks}`, `/webhooks/${webhooks}/entregas`]
  for (const [who, client] of [['console user', user], ['console admin', admin]] as const)
    for (const path of [...screens, ...(who === 'console admin' ? ['/empresas'] : [])]) {
      const page = await client.get(`/console${path}`)
      answers.push({ where: `${who} GET /console${path} → ${page.status}`, bytes: Buffer.from(page.html) })
      expect({ path, status: page.status }).toEqual({ path, status: 200 })
    }
}, 60_000)
afterAll(async () => {
  await rx?.stop()
  await s?.stop()
})

function queryOf(op: Operation): string {
  return op.requiredQuery.includes('q') ? '?q=A' : ''
}

function secrets(): Secret[] {
  const masterKey = Buffer.from(readFileSync(join(s.dataDir, 'master.key'), 'utf8').trim(), 'base64')
  const rsask = (xml: string) => /<RSASK>([\s\S]*?)<\/RSASK>/.exec(xml)![1]!.trim()
  return [
    privateKeySecret('certificate private key', signer().privateKey),
    privateKeySecret('CAF private key (RSASK)', rsask(A.sent.caf.xml)),
    privateKeySecret('refused CAF private key (RSASK)', rsask(refused.caf.xml)),
    textSecret('uploaded PFX file', A.sent.pfxBase64.slice(200, 260)),
    textSecret('PFX password', A.secrets.pfxPassword),
    textSecret('refused PFX password', refused.pfxPassword),
    // The part past the 12 characters `apikey list` shows (DESIGN §12).
    textSecret('read API key', a.readKey.slice(12)),
    textSecret('write API key', a.writeKey.slice(12)),
    textSecret('unknown API key', refused.apiKey.slice(12)),
    textSecret('bearer token signature', token.split('.')[2]!),
    // Lists show the last 4 characters (DESIGN §7): everything before them is the secret.
    textSecret('webhook secret', A.secrets.webhookSecret.slice(0, -4)),
    textSecret('second webhook secret', secondWebhookSecret.slice(0, -4)),
    textSecret('refused webhook secret', refused.webhookSecret),
    textSecret('IMAP password', A.secrets.imapPassword),
    textSecret('SMTP password', A.secrets.smtpPassword),
    textSecret('refused IMAP password', refused.imapPassword),
    { name: 'master key', raw: [masterKey], text: [masterKey.toString('base64'), masterKey.toString('hex')] },
    privateKeySecret('JWT signing key', readFileSync(join(s.dataDir, 'jwt-private.pem'), 'utf8')),
  ]
}

/** Every file under `dir`, by path relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => statSync(join(dir, f)).isFile())
}

function findings(places: Array<{ where: string; bytes: Buffer | string }>, allowed: (where: string, secret: string) => boolean = () => false): string[] {
  const all = secrets()
  return places.flatMap(({ where, bytes }) => secretsIn(bytes, all).filter((name) => !allowed(where, name)).map((name) => `${where}: ${name}`))
}

describe('secrets never in clear (DESIGN §4, §7, §12, §13)', () => {
  test('the scan finds each secret where the design puts it (so a miss below means absent, not unseen)', () => {
    const [certKey, cafKey] = secrets()
    expect(secretsIn(signer().privateKeyPem, [certKey!])).toEqual(['certificate private key'])
    expect(secretsIn(JSON.stringify({ caf: A.sent.caf.xml }), [cafKey!])).toEqual(['CAF private key (RSASK)'])
    expect(secretsIn(readFileSync(join(s.dataDir, 'master.key')), secrets())).toEqual(['master key'])
    expect(secretsIn(readFileSync(join(s.dataDir, 'jwt-private.pem')), secrets())).toEqual(['JWT signing key'])
    expect(answers.filter((x) => x.where.startsWith('webhook created')).flatMap((x) => secretsIn(x.bytes, secrets()))).toEqual(['second webhook secret'])
  })

  test('the data dir (timbre.db, timbre.db-wal, automatic backups) holds none, as raw bytes', () => {
    const files = filesUnder(s.dataDir).filter((f) => !KEY_FILES.has(f))
    expect(files).toEqual(expect.arrayContaining(['timbre.db', 'timbre.db-wal']))
    expect(findings(files.map((f) => ({ where: f, bytes: readFileSync(join(s.dataDir, f)) })))).toEqual([])
  })

  test('no log line the server wrote holds one', () => {
    expect(s.logs.length).toBeGreaterThan(50)
    expect(findings(s.logs.map((line, i) => ({ where: `log line ${i} (${String(line.event)})`, bytes: JSON.stringify(line) })))).toEqual([])
  })

  test('the archive of `timbre backup` holds none outside the instance key files', () => {
    const out = join(s.dataDir, 'backups', 'security-scan.tar.gz')
    const run = Bun.spawnSync([process.execPath, join(ROOT, 'src/main.ts'), 'backup', '--out', out, '--data-dir', s.dataDir], { stdin: 'ignore' })
    expect({ code: run.exitCode, stderr: run.stderr.toString() }).toEqual({ code: 0, stderr: '' })
    const entries = untarGz(readFileSync(out))
    expect([...entries.keys()].sort()).toEqual(['jwt-private.pem', 'manifest.json', 'master.key', 'timbre.db'])
    const places = [...entries].filter(([name]) => !KEY_FILES.has(name)).map(([name, bytes]) => ({ where: `backup ${name}`, bytes }))
    places.push({ where: 'backup command output', bytes: Buffer.concat([run.stdout, run.stderr]) })
    expect(findings(places)).toEqual([])
  })

  test('no API answer holds one, but the webhook secret in the answer that created it', () => {
    expect(answers.length).toBeGreaterThan(40)
    expect(findings(answers, (where, name) => where.startsWith('webhook created') && name === 'second webhook secret')).toEqual([])
  })
})
