// DESIGN §1, §3: the compiled binary's admin commands, run as subprocesses against the same data dir as a live serve.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as tar from 'tar'
import { ensureBinary, runBinary, startServe, type ServeProcess } from '../support/binary'
import { tempDir } from '../support/server'

let dataDir: string
let serve: ServeProcess
const RUT = '76086428-5'

const empresaArgs = [
  'empresa', 'create', '--rut', '76.086.428-5', '--razon-social', 'Ferretería El Ñandú Ltda.', '--giro', 'Ferretería',
  '--acteco', '475200,464901', '--direccion', 'Av. Matta 1020', '--comuna', 'Santiago', '--ciudad', 'Santiago',
]

beforeAll(async () => {
  await ensureBinary()
  dataDir = tempDir('timbre-cli-')
  serve = await startServe(['--data-dir', dataDir, '--sii', 'simulado', '--rate-limit', '0'])
})
afterAll(async () => {
  if (serve.proc.exitCode === null) await serve.terminate()
})

const dd = () => ['--data-dir', dataDir]

describe('help and version', () => {
  test('timbre version prints binary and schema versions as JSON', () => {
    const r = runBinary(['version'])
    expect(r.code).toBe(0)
    expect(r.json()).toMatchObject({ version: expect.any(String), api_version: '0.2.0', schema: expect.stringMatching(/^\d{4}_/) })
  })

  test.each(['serve', 'empresa create', 'empresa list', 'empresa update', 'apikey create', 'apikey list', 'apikey revoke', 'token issue', 'backup', 'restore', 'sii-simulator', 'sii-simulator caf', 'sii-simulator set', 'sii-simulator intercambio', 'sii-simulator rcv add', 'sii-simulator rcv falla', 'sii-simulator reloj', 'sii-simulator folios', 'caf solicitar', 'caf solicitudes', 'caf anular', 'caf automatico', 'certificacion estado', 'certificacion set', 'certificacion emitir', 'certificacion simulacion', 'certificacion intercambio', 'certificacion libros', 'certificacion muestras', 'webhook deliveries', 'webhook redeliver', 'health', 'version'])(
    'timbre %s --help',
    (command) => {
    const r = runBinary([...command.split(' '), '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Uso: timbre')
    },
  )

  test('timbre --help lists every command; an unknown one exits 2 with a JSON line on stderr', () => {
    const help = runBinary(['--help'])
    expect(help.code).toBe(0)
    for (const c of ['serve', 'empresa create', 'apikey revoke', 'token issue', 'backup', 'restore', 'version']) expect(help.stdout).toContain(c)
    const bad = runBinary(['frobnicate'])
    expect(bad.code).toBe(2)
    expect(JSON.parse(bad.stderr.trim()).code).toBe('USAGE')
  })
})

describe('empresa, apikey and token against a running serve', () => {
  let empresaId: string

  test('empresa create prints the record with the RUT normalized', () => {
    const r = runBinary([...empresaArgs, ...dd()])
    expect(r.code).toBe(0)
    const empresa = r.json()
    expect(empresa).toMatchObject({ rut: RUT, razon_social: 'Ferretería El Ñandú Ltda.', acteco: [475200, 464901], ambiente: 'certificacion' })
    empresaId = empresa.id
  })

  test('errors are one JSON line on stderr with a non-zero exit, and nothing is written', () => {
    const r = runBinary(['empresa', 'create', '--rut', '76086428-4', '--razon-social', 'X', '--giro', 'G', '--acteco', '1', '--direccion', 'D', '--comuna', 'C', '--ciudad', 'C', ...dd()])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    const lines = r.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'rut', code: 'INVALID_RUT' }] })
    expect(runBinary(['empresa', 'list', ...dd()]).json()).toHaveLength(1)
    const missing = runBinary(['apikey', 'create', ...dd()])
    expect(missing.code).toBe(2)
    expect(JSON.parse(missing.stderr.trim()).message).toContain('--empresa')
  })

  test('empresa update changes ambiente and resolución; empresa list shows it', () => {
    const r = runBinary(['empresa', 'update', '--empresa', '76086428-5', '--ambiente', 'produccion', '--fecha-resolucion', '2020-03-15', '--numero-resolucion', '80', ...dd()])
    expect(r.code).toBe(0)
    expect(r.json()).toMatchObject({ id: empresaId, ambiente: 'produccion', fecha_resolucion: '2020-03-15', numero_resolucion: 80 })
    const list = runBinary(['empresa', 'list', ...dd()]).json()
    expect(list).toEqual([expect.objectContaining({ id: empresaId, ambiente: 'produccion' })])
  })

  test('apikey create --write works at once against the running server; list never shows the key; revoke takes effect', async () => {
    const created = runBinary(['apikey', 'create', '--empresa', RUT, '--write', '--nombre', 'erp', ...dd()])
    expect(created.code).toBe(0)
    const { id, key, write } = created.json()
    expect(key).toMatch(/^timbre_[A-Za-z0-9_-]{43}$/)
    expect(write).toBe(true)
    const put = await fetch(`${serve.url}/api/v1/billing/empresa`, {
      method: 'PUT',
      headers: { 'X-Api-Key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ comuna: 'Estación Central' }),
    })
    expect(put.status).toBe(200)
    const list = runBinary(['apikey', 'list', '--empresa', empresaId, ...dd()])
    expect(list.code).toBe(0)
    expect(list.stdout).not.toContain(key)
    expect(list.json()).toEqual([expect.objectContaining({ id, nombre: 'erp', write: true, prefix: key.slice(0, 12), revoked_at: null })])
    const revoked = runBinary(['apikey', 'revoke', id, ...dd()])
    expect(revoked.code).toBe(0)
    expect(revoked.json().revoked_at).toEqual(expect.any(String))
    const after = await fetch(`${serve.url}/api/v1/billing/empresa`, { headers: { 'X-Api-Key': key } })
    expect(after.status).toBe(401)
  })

  test('a read-only key from the CLI cannot write', async () => {
    const { key } = runBinary(['apikey', 'create', '--empresa', RUT, ...dd()]).json()
    const res = await fetch(`${serve.url}/api/v1/billing/empresa`, { method: 'PUT', headers: { 'X-Api-Key': key, 'content-type': 'application/json' }, body: '{}' })
    expect(res.status).toBe(403)
    expect(((await res.json()) as { code: string }).code).toBe('API_KEY_READ_ONLY')
  })

  test('token issue gives a bearer token the running server accepts', async () => {
    const r = runBinary(['token', 'issue', '--empresa', RUT, '--ttl', '120', '--sub', 'contador', ...dd()])
    expect(r.code).toBe(0)
    const { token, expires_at } = r.json()
    expect(Date.parse(expires_at) - Date.now()).toBeGreaterThan(100_000)
    const res = await fetch(`${serve.url}/api/v1/billing/empresa`, { headers: { Authorization: `Bearer ${token}` } })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { id: string }).id).toBe(empresaId)
  })

  test('secret files of the data dir are 0600', () => {
    for (const f of ['master.key', 'jwt-private.pem']) expect(statSync(join(dataDir, f)).mode & 0o777).toBe(0o600)
  })
})

describe('backup and restore', () => {
  let archive: string

  test('backup while serve runs: a .tar.gz with a readable snapshot and the keys', async () => {
    archive = join(tempDir('timbre-bk-'), 'respaldo.tar.gz')
    const r = runBinary(['backup', '--out', archive, ...dd()])
    expect(r.code).toBe(0)
    expect(r.json()).toMatchObject({ includes_keys: true, files: ['timbre.db', 'master.key', 'jwt-private.pem'] })
    const out = tempDir('timbre-bk-x-')
    await tar.x({ file: archive, cwd: out })
    expect(readdirSync(out).sort()).toEqual(['jwt-private.pem', 'manifest.json', 'master.key', 'timbre.db'])
    const db = new Database(join(out, 'timbre.db'), { readonly: true })
    expect((db.query('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check).toBe('ok')
    expect((db.query('SELECT rut FROM empresas').all() as Array<{ rut: string }>).map((e) => e.rut)).toEqual([RUT])
    db.close()
  })

  test('backup --no-keys leaves the keys out and warns', () => {
    const target = join(tempDir('timbre-bk-'), 'sin-llaves.tar.gz')
    const r = runBinary(['backup', '--out', target, '--no-keys', ...dd()])
    expect(r.code).toBe(0)
    expect(r.json()).toMatchObject({ includes_keys: false, files: ['timbre.db'], warning: expect.stringContaining('master.key') })
    expect(r.stderr).toContain('master.key')
  })

  test('restore fills an empty data dir, which then serves the same company and keys', async () => {
    const target = tempDir('timbre-restored-')
    const r = runBinary(['restore', '--from', archive, '--data-dir', target])
    expect(r.code).toBe(0)
    expect(existsSync(join(target, 'master.key'))).toBe(true)
    const token = runBinary(['token', 'issue', '--empresa', RUT, '--data-dir', target]).json().token
    // The restored jwt key is the original one: the live server accepts a token issued from the restored dir.
    const res = await fetch(`${serve.url}/api/v1/billing/empresa`, { headers: { Authorization: `Bearer ${token}` } })
    expect(res.status).toBe(200)
  })

  test('restore refuses a non-empty data dir and a file that is not a backup', () => {
    const r = runBinary(['restore', '--from', archive, ...dd()])
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stderr.trim()).message).toContain('no está vacío')
    const junk = join(tempDir('timbre-junk-'), 'x.tar.gz')
    writeFileSync(junk, 'not a tarball')
    const bad = runBinary(['restore', '--from', junk, '--data-dir', join(tempDir('timbre-empty-'), 'd')])
    expect(bad.code).toBe(1)
  })
})

describe('migrations and lifecycle', () => {
  test('a fresh dir is migrated once; a restart applies nothing', async () => {
    const dir = tempDir('timbre-mig-')
    const first = await startServe(['--data-dir', dir, '--rate-limit', '0'])
    expect(first.lines.some((l) => l.event === 'db.migrated')).toBe(true)
    expect(first.lines.find((l) => l.event === 'server.started')).toMatchObject({ data_dir: dir, sii: expect.stringContaining('SII real'), listen: expect.stringContaining('127.0.0.1') })
    expect(await first.terminate()).toBe(0)
    const second = await startServe(['--data-dir', dir, '--rate-limit', '0'])
    expect(second.lines.some((l) => l.event === 'db.migrated')).toBe(false)
    expect(await second.terminate()).toBe(0)
  })

  test('a database migrated by a newer Timbre is refused', () => {
    const dir = tempDir('timbre-newer-')
    expect(runBinary([...empresaArgs, '--data-dir', dir]).code).toBe(0)
    const db = new Database(join(dir, 'timbre.db'))
    db.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('from-the-future', 99999999999999)")
    db.close()
    const r = runBinary(['empresa', 'list', '--data-dir', dir])
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stderr.trim()).message).toContain('más nueva')
  })

  test('SIGTERM: in-flight requests finish, the process exits 0 and logs server.stopped', async () => {
    const dir = tempDir('timbre-sig-')
    runBinary([...empresaArgs, '--data-dir', dir])
    const { key } = runBinary(['apikey', 'create', '--empresa', RUT, '--write', '--data-dir', dir]).json()
    const p = await startServe(['--data-dir', dir])
    // A request whose body is still arriving when SIGTERM comes: the server must finish it before exiting.
    let sendRest!: () => void
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode('{"ciudad": "Punta'))
        await new Promise<void>((resolve) => (sendRest = resolve))
        controller.enqueue(new TextEncoder().encode(' Arenas"}'))
        controller.close()
      },
    })
    const inflight = fetch(`${p.url}/api/v1/billing/empresa`, {
      method: 'PUT',
      headers: { 'X-Api-Key': key, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit)
    await Bun.sleep(150)
    p.proc.kill('SIGTERM')
    await Bun.sleep(150)
    sendRest()
    const res = await inflight
    expect(res.status).toBe(200)
    expect(((await res.json()) as { ciudad: string }).ciudad).toBe('Punta Arenas')
    expect(await p.proc.exited).toBe(0)
    expect(p.lines.map((l) => l.event)).toEqual(expect.arrayContaining(['server.signal', 'server.stopping', 'server.stopped']))
  })

  test('a bad setting stops serve with a one-line error naming it', () => {
    const r = runBinary(['serve', '--port', 'http', '--data-dir', tempDir()])
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stderr.trim()).message).toContain('--port')
    const env = runBinary(['serve', '--data-dir', tempDir()], { TIMBRE_SII: 'ftp://x' })
    expect(env.code).toBe(1)
    expect(JSON.parse(env.stderr.trim()).message).toContain('TIMBRE_SII')
  })

  test('an unwritable data dir is a clear error', () => {
    const file = join(tempDir(), 'file')
    writeFileSync(file, '')
    const r = runBinary(['empresa', 'list', '--data-dir', join(file, 'sub')])
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stderr.trim()).message).toContain('directorio de datos')
  })
})

describe('demo', () => {
  test('serve --demo prints a write key and a curl that reads /empresa; a restart prints a key that still works', async () => {
    const dir = tempDir('timbre-demo-')
    const p = await startServe(['--data-dir', dir, '--demo', '--sii', 'simulado'])
    const deadline = Date.now() + 15_000
    while (!p.stderr().includes('curl') && Date.now() < deadline) await Bun.sleep(20)
    const curl = /curl -s -H 'X-Api-Key: (timbre_[\w-]+)' (\S+)/.exec(p.stderr())
    expect(curl).not.toBeNull()
    const res = await fetch(curl![2]!, { headers: { 'X-Api-Key': curl![1]! } })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { razon_social: string }).razon_social).toContain('Demostración')
    const put = await fetch(curl![2]!, { method: 'PUT', headers: { 'X-Api-Key': curl![1]!, 'content-type': 'application/json' }, body: '{"ciudad":"Temuco"}' })
    expect(put.status).toBe(200)
    // The printed issuance curl works as printed (run through a shell), and running it twice issues one invoice.
    const issueLine = p.stderr().split('\n').find((l) => l.includes('-X POST'))!.trim()
    const first = Bun.spawnSync(['bash', '-c', issueLine]).stdout.toString()
    const second = Bun.spawnSync(['bash', '-c', issueLine]).stdout.toString()
    expect(JSON.parse(first)).toMatchObject({ tipo_dte: 33, folio: 1, estado: 'firmado' })
    expect(JSON.parse(second)).toEqual(JSON.parse(first))
    // DESIGN §10: that first invoice reaches aceptado through the in-process simulator within seconds.
    const id = (JSON.parse(first) as { id: string }).id
    let estado = ''
    const until = Date.now() + 20_000
    while (estado !== 'aceptado' && Date.now() < until) {
      await Bun.sleep(250)
      estado = ((await (await fetch(curl![2]!.replace('/empresa', `/dte/${id}`), { headers: { 'X-Api-Key': curl![1]! } })).json()) as { estado: string }).estado
    }
    expect(estado).toBe('aceptado')
    const cafs = await fetch(curl![2]!.replace('/empresa', '/caf?limit=100'), { headers: { 'X-Api-Key': curl![1]! } })
    expect(((await cafs.json()) as { data: Array<{ tipo_dte: number }> }).data.map((c) => c.tipo_dte).sort((a, b) => a - b)).toEqual([33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112])
    const cert = await fetch(curl![2]!.replace('/empresa', '/empresa/certificado'), { headers: { 'X-Api-Key': curl![1]! } })
    expect(((await cert.json()) as { is_active: boolean }).is_active).toBe(true)
    expect(await p.terminate()).toBe(0)
    const again = await startServe(['--data-dir', dir, '--demo', '--sii', 'simulado'])
    // The banner follows the startup line once the demo's certificate and CAFs are checked (they go through the workers).
    const bannerBy = Date.now() + 10_000
    while (!again.stderr().includes('curl') && Date.now() < bannerBy) await Bun.sleep(20)
    expect(again.stderr()).toContain(curl![1]!)
    // The printed Idempotency-Key is the same after the restart: the printed curl still issues nothing new.
    const idempotencyKeyOf = (line: string) => /Idempotency-Key: ([0-9a-f-]{36})/.exec(line)![1]
    expect(idempotencyKeyOf(again.stderr().split('\n').find((l) => l.includes('-X POST'))!)).toBe(idempotencyKeyOf(issueLine))
    expect(await again.terminate()).toBe(0)
    expect(runBinary(['empresa', 'list', '--data-dir', dir]).json()).toHaveLength(1)
    // The restart made no second set of CAFs nor a second certificate.
    const db = new Database(join(dir, 'timbre.db'), { readonly: true })
    expect(db.query('SELECT count(*) AS n FROM cafs').get()).toEqual({ n: 12 })
    expect(db.query('SELECT count(*) AS n FROM certificados').get()).toEqual({ n: 1 })
    db.close()
  }, 60_000)
})
