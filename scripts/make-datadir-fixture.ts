// Makes a data dir fixture with a released binary (issue 18, Operations): the data a real installation of that release
// holds, so the current binary's tests can prove it migrates forward (test/cli/migrate-forward.test.ts) and restores
// (test/cli/backup-roundtrip.test.ts). Run it again for each release whose data dir should stay readable:
//
//   git worktree add --detach /tmp/fx-wt <commit> && ln -s "$PWD/node_modules" /tmp/fx-wt/node_modules
//   (cd /tmp/fx-wt && bun scripts/build.ts)
//   bun scripts/make-datadir-fixture.ts --binary /tmp/fx-wt/dist/timbre --commit <commit> --out test/fixtures/datadirs/<schema>-<commit>
//
// Everything is made through that binary's own doors (CLI and HTTP, DESIGN §3), never by writing SQL: the fixture must
// be what that release writes. The certificate is the test PKI's (valid until 2049, so the fixture does not expire);
// the CAFs are the binary's own simulator CAFs. The answers the old binary gave are kept in expected.json.
import { createHash } from 'node:crypto'
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { exportPfx, makeCertificate } from '../test/support/pki'

const FILES = ['timbre.db', 'master.key', 'jwt-private.pem'] as const
export const FIXTURE_EMPRESA = {
  rut: '76086428-5',
  razonSocial: 'Ferretería El Ñandú Limitada',
} as const
const SIGNER_RUT = '7880442-4'

function flag(name: string): string {
  const i = process.argv.indexOf(name)
  const value = i >= 0 ? process.argv[i + 1] : undefined
  if (value === undefined) {
    console.error(`usage: bun scripts/make-datadir-fixture.ts --binary PATH --commit SHA --out DIR (missing ${name})`)
    process.exit(2)
  }
  return value
}

const binary = resolve(flag('--binary'))
const commit = flag('--commit')
const out = resolve(flag('--out'))
const dataDir = mkdtempSync(join(tmpdir(), 'timbre-fixture-'))
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }

function cli(args: readonly string[]): Uint8Array {
  const p = Bun.spawnSync([binary, ...args], { env, stdin: 'ignore' })
  if (p.exitCode !== 0) throw new Error(`timbre ${args.join(' ')}: ${p.stderr.toString()}`)
  return p.stdout
}
const cliJson = <T>(args: readonly string[]): T => JSON.parse(Buffer.from(cli(args)).toString()) as T

const version = cliJson<Record<string, unknown>>(['version'])
console.error(`[fixture] ${binary}: ${JSON.stringify(version)}`)
const empresa = cliJson<{ id: string }>([
  'empresa', 'create', '--rut', FIXTURE_EMPRESA.rut, '--razon-social', FIXTURE_EMPRESA.razonSocial, '--giro', 'Venta al por menor de artículos de ferretería',
  '--acteco', '475201,464901', '--direccion', 'Av. Matta 1020', '--comuna', 'Santiago', '--ciudad', 'Santiago', '--data-dir', dataDir,
])
const writeKey = cliJson<{ id: string; key: string }>(['apikey', 'create', '--empresa', FIXTURE_EMPRESA.rut, '--write', '--nombre', 'erp', '--data-dir', dataDir])
const readKey = cliJson<{ id: string; key: string }>(['apikey', 'create', '--empresa', FIXTURE_EMPRESA.rut, '--nombre', 'contador', '--data-dir', dataDir])
// First use of the instance JWT key: the release writes jwt-private.pem, which a data dir of a running installation has.
cliJson(['token', 'issue', '--empresa', FIXTURE_EMPRESA.rut, '--ttl', '60', '--data-dir', dataDir])

// The webhook's receiver: the deliveries the old binary makes are real ones, answered 200.
const received: string[] = []
const receiver = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    received.push(((await req.json()) as { type: string }).type)
    return new Response('ok')
  },
})

const serve = Bun.spawn(
  [binary, 'serve', '--port', '0', '--data-dir', dataDir, '--sii', 'simulado', '--rate-limit', '0', '--webhook-allow-http', '--submit-every', '1s', '--track-every', '1s', '--deliver-every', '1s'],
  { env, stdout: 'pipe', stderr: 'inherit', stdin: 'ignore' },
)
const url = await startedUrl(serve.stdout as ReadableStream<Uint8Array>)
console.error(`[fixture] serve at ${url}, data dir ${dataDir}`)

async function startedUrl(stdout: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stdout.getReader()
  let text = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`serve exited before starting: ${text}`)
    text += Buffer.from(value).toString()
    const started = text.split('\n').map((l) => (l.startsWith('{') ? (JSON.parse(l) as { event?: string; listen?: string }) : {})).find((l) => l.event === 'server.started')
    if (started?.listen !== undefined) {
      // Keep draining the log so serve never blocks on a full pipe.
      void (async () => {
        while (!(await reader.read()).done);
      })()
      return started.listen
    }
  }
}

async function api(method: string, path: string, body?: unknown, key = writeKey.key): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = { 'X-Api-Key': key }
  if (body !== undefined) headers['content-type'] = 'application/json'
  if (method === 'POST' && path === '/dte') headers['Idempotency-Key'] = crypto.randomUUID()
  const res = await fetch(`${url}/api/v1/billing${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, json: text === '' ? null : JSON.parse(text) }
}

async function must(method: string, path: string, body?: unknown): Promise<any> {
  const res = await api(method, path, body)
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`)
  return res.json
}

const identity = makeCertificate({ rut: SIGNER_RUT, commonName: 'JUAN PÉREZ SOTO', keySlot: 7, notBefore: new Date('2024-01-01T00:00:00Z'), notAfter: new Date('2049-12-31T23:59:59Z') })
await must('POST', '/empresa/certificado/pfx', { pfx_base64: Buffer.from(exportPfx(identity, 'fixture', '3des')).toString('base64'), password: 'fixture' })
const cafRanges: ReadonlyArray<readonly [number, number, number]> = [[33, 1, 50], [61, 1, 20], [39, 1, 100]]
for (const [tipo, desde, hasta] of cafRanges) {
  const caf = cli(['sii-simulator', 'caf', '--rut', FIXTURE_EMPRESA.rut, '--tipo', String(tipo), '--desde', String(desde), '--hasta', String(hasta), '--razon-social', FIXTURE_EMPRESA.razonSocial])
  await must('POST', '/caf', { tipo_dte: tipo, caf_xml: Buffer.from(caf).toString('latin1') })
}
const webhook = await must('POST', '/webhooks', { url: `http://127.0.0.1:${receiver.port}/timbre`, events: ['dte.created', 'dte.accepted'], secret: 'whsec_fixture_0123456789abcdef' })
await must('POST', '/clientes', { rut: '76.555.835-2', razon_social: 'Comercializadora Ñuñoa Limitada', giro: 'Venta al por menor de artículos de ferretería', direccion: 'Av. Irarrázaval 2345, oficina 12', comuna: 'Ñuñoa', ciudad: 'Santiago', email: 'pagos@nunoa.cl' })
await must('POST', '/productos', { codigo: 'MART-16', nombre: 'Martillo carpintero 16 oz', precio_unitario: 8990, unidad: 'UN' })

const receptor = { rut: '76.555.835-2', razon_social: 'Comercializadora Ñuñoa Limitada', giro: 'Venta al por menor de artículos de ferretería', direccion: 'Av. Irarrázaval 2345, oficina 12', comuna: 'Ñuñoa', ciudad: 'Santiago' }
// The first factura goes to the simulated SII (auto_send by default) and is accepted; the rest stay firmado.
const accepted = await must('POST', '/dte', { tipo_dte: 33, receptor, detalle: [{ nombre: 'Taladro percutor 750 W', cantidad: 3, precio: 45990 }] })
await must('POST', '/dte', { tipo_dte: 33, receptor, auto_send: false, detalle: [{ nombre: 'Martillo carpintero 16 oz', cantidad: 3, precio: 8990, unidad: 'UN' }, { nombre: 'Clavos 2½" (caja 1 kg)', cantidad: 2, precio: 2490, descuento_pct: 10 }] })
await must('POST', '/dte', { tipo_dte: 33, receptor, auto_send: false, detalle: [{ nombre: 'Curso de seguridad', cantidad: 1, precio: 120000, ind_exe: 1 }, { nombre: 'Casco', cantidad: 4, precio: 7990 }] })
await must('POST', '/dte', {
  tipo_dte: 61, receptor, auto_send: false,
  detalle: [{ nombre: 'Taladro percutor 750 W', cantidad: 1, precio: 45990 }],
  referencias: [{ tipo_doc_ref: 33, folio_ref: accepted.folio, fecha_ref: (await must('GET', `/dte/${accepted.id}`)).fecha_emision, codigo_ref: 3, razon_ref: 'Devolución de un taladro' }],
})
for (const detalle of [[{ nombre: 'Empanada de pino', cantidad: 2, precio: 1000 }, { nombre: 'Bebida 500 cc', cantidad: 1, precio: 1500 }], [{ nombre: 'Sopaipilla', cantidad: 3, precio: 500 }]])
  await must('POST', '/dte', { tipo_dte: 39, receptor: { rut: '66666666-6', razon_social: 'Consumidor final' }, auto_send: false, detalle })

// Until the accepted one is aceptado and the receiver has every event (6 dte.created, 1 dte.accepted).
const deadline = Date.now() + 60_000
while ((await must('GET', `/dte/${accepted.id}`)).estado !== 'aceptado' || received.length < 7) {
  if (Date.now() > deadline) throw new Error(`not settled: estado ${(await must('GET', `/dte/${accepted.id}`)).estado}, ${received.length} deliveries`)
  await Bun.sleep(250)
}
await Bun.sleep(1500) // the delivery job records its last answer after the receiver has it

// What the release answered, to compare the current binary's answers with.
const list = await must('GET', '/dte?limit=100')
const dtes: Record<string, unknown> = {}
const xmlSha256: Record<string, string> = {}
for (const d of list.items as Array<{ id: string }>) {
  dtes[d.id] = await must('GET', `/dte/${d.id}`)
  const xml = new Uint8Array(await (await fetch(`${url}/api/v1/billing/dte/${d.id}/xml`, { headers: { 'X-Api-Key': writeKey.key } })).arrayBuffer())
  xmlSha256[d.id] = createHash('sha256').update(xml).digest('hex')
}
const expected = {
  made_by: { commit, version },
  empresa: await must('GET', '/empresa'),
  certificado: await must('GET', '/empresa/certificado'),
  cafs: await must('GET', '/caf'),
  dte_list: list,
  dtes,
  xml_sha256: xmlSha256,
  clientes: await must('GET', '/clientes'),
  productos: await must('GET', '/productos'),
  webhooks: await must('GET', '/webhooks'),
  webhook_deliveries: await must('GET', `/webhooks/${webhook.id}/deliveries?limit=100`),
  api_keys: cliJson(['apikey', 'list', '--data-dir', dataDir]),
}

serve.kill('SIGTERM')
const code = await serve.exited
receiver.stop(true)
if (code !== 0) throw new Error(`serve exited ${code} on SIGTERM`)
const left = readdirSync(dataDir).filter((f) => !(FILES as readonly string[]).includes(f) && f !== 'timbre.db-shm' && f !== 'timbre.db-wal')
if (left.length > 0) console.error(`[fixture] left out of the fixture: ${left.join(', ')}`)
if (existsSync(join(dataDir, 'timbre.db-wal')) && Bun.file(join(dataDir, 'timbre.db-wal')).size > 0) throw new Error('the WAL was not checkpointed on SIGTERM')

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
for (const f of FILES) {
  copyFileSync(join(dataDir, f), join(out, f))
  chmodSync(join(out, f), 0o600)
}
rmSync(dataDir, { recursive: true, force: true })
writeFileSync(join(out, 'expected.json'), `${JSON.stringify(expected, null, 2)}\n`)
writeFileSync(
  join(out, 'TEST-FIXTURE-ONLY-api-keys.json'),
  `${JSON.stringify({ warning: 'Throwaway keys of a test fixture: they open nothing but this folder.', empresa_id: empresa.id, write: writeKey, read: readKey }, null, 2)}\n`,
)
writeFileSync(join(out, 'README.md'), readme())
console.error(`[fixture] written to ${out}: ${readdirSync(out).join(', ')}`)

function readme(): string {
  return `# Data dir made by Timbre ${String(version.version)} at commit ${commit} (schema ${String(version.schema)})

Made by \`scripts/make-datadir-fixture.ts\` with the binary built from commit \`${commit}\`:

\`\`\`sh
git worktree add --detach /tmp/fx-wt ${commit} && ln -s "$PWD/node_modules" /tmp/fx-wt/node_modules
(cd /tmp/fx-wt && bun scripts/build.ts)
bun scripts/make-datadir-fixture.ts --binary /tmp/fx-wt/dist/timbre --commit ${commit} --out test/fixtures/datadirs/${out.split('/').pop()}
\`\`\`

- \`timbre.db\`, \`master.key\`, \`jwt-private.pem\`: the data dir after a clean SIGTERM stop (WAL checkpointed, no
  \`backups/\`; \`serve.lock\` and the simulated SII's own \`sii-simulator.db\` left out: an installation that talks to
  the real SII has neither). One company (${FIXTURE_EMPRESA.rut}), a test certificate valid until 2049, simulator CAFs for 33, 61
  and 39, three facturas (folio 1 accepted by the in-process simulated SII), a nota de crédito referring to it, two
  boletas, a webhook with its delivered events, a cliente, a producto, a write and a read-only API key.
- \`expected.json\`: what that binary answered over HTTP just before it stopped, and the SHA-256 of each stored XML.
- \`TEST-FIXTURE-ONLY-api-keys.json\`: the API keys in clear. They are throwaway keys of this fixture; so is
  \`master.key\`. Nothing here is a secret of any real installation.

Used by \`test/cli/migrate-forward.test.ts\` and \`test/cli/backup-roundtrip.test.ts\`. Never edit these files by hand:
make a new fixture with the script instead (\`git add -f\` its \`timbre.db\`: \`*.db\` is in .gitignore).
`
}
