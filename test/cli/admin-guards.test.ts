// Issue 13 items 5–8, the admin traps of DESIGN §3, through the compiled binary as an operator runs it: commands run
// from the wrong folder, a backup restored without its keys, two servers on one data dir, a redelivery that no job
// would ever take.
import { beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { copyFileSync, existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { BINARY, ensureBinary, runBinary, startServe } from '../support/binary'
import { startReceiver } from '../support/receiver'
import { startTestServer, tempDir, testRut } from '../support/server'

beforeAll(async () => {
  await ensureBinary()
})

function runIn(cwd: string, args: readonly string[], env: Record<string, string> = {}) {
  const p = Bun.spawnSync([BINARY, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdin: 'ignore' })
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() }
}

/** Waits for a `serve` started with Bun.spawn to exit by itself, up to `ms`. */
async function exitWithin(proc: ReturnType<typeof Bun.spawn>, ms: number): Promise<number | null> {
  const timer = Bun.sleep(ms).then(() => null)
  return Promise.race([proc.exited, timer])
}

describe('only serve, empresa create and restore create a database (DESIGN §3)', () => {
  test('from a folder with no data dir, every other command exits non-zero naming the absolute path, and creates nothing', () => {
    const cwd = tempDir('timbre-elsewhere-')
    const expected = join(cwd, 'data', 'timbre.db')
    for (const args of [
      ['apikey', 'revoke', crypto.randomUUID()],
      ['apikey', 'list'],
      ['empresa', 'list'],
      ['empresa', 'update', '--empresa', '76086428-5', '--giro', 'Otro'],
      ['apikey', 'create', '--empresa', '76086428-5'],
      ['token', 'issue', '--empresa', '76086428-5'],
      ['webhook', 'deliveries', '--empresa', '76086428-5'],
      ['webhook', 'redeliver', '--event', crypto.randomUUID()],
      ['backup', '--out', join(cwd, 'b.tar.gz')],
    ]) {
      const r = runIn(cwd, args)
      expect({ args, code: r.code }).toEqual({ args, code: 1 })
      expect(JSON.parse(r.stderr.trim().split('\n').at(-1)!).message).toContain(expected)
      expect(r.stdout).toBe('')
    }
    expect(readdirSync(cwd)).toEqual([])
  })

  test('--data-dir pointing nowhere is refused the same way and is not created', () => {
    const nowhere = join(tempDir('timbre-nowhere-'), 'no', 'existe')
    const r = runBinary(['empresa', 'list', '--data-dir', nowhere])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(join(nowhere, 'timbre.db'))
    expect(existsSync(nowhere)).toBe(false)
  })

  test('empresa create still creates the database, and the others then find it', () => {
    const cwd = tempDir('timbre-fresh-')
    const created = runIn(cwd, ['empresa', 'create', '--rut', '76086428-5', '--razon-social', 'Ferretería SpA', '--giro', 'Ferretería', '--acteco', '475201', '--direccion', 'Calle 1', '--comuna', 'Santiago', '--ciudad', 'Santiago'])
    expect(created.code).toBe(0)
    expect(existsSync(join(cwd, 'data', 'timbre.db'))).toBe(true)
    const listed = runIn(cwd, ['empresa', 'list'])
    expect(listed.code).toBe(0)
    expect(JSON.parse(listed.stdout)).toHaveLength(1)
  })
})

describe('sealed secrets and the master key (DESIGN §3)', () => {
  let original: string
  let archive: string

  beforeAll(async () => {
    // A data dir with a certificate, CAFs and their sealed private keys: the demo's.
    original = tempDir('timbre-sealed-')
    const p = await startServe(['--data-dir', original, '--demo', '--sii', 'simulado'])
    const deadline = Date.now() + 10_000
    while (!p.stderr().includes('curl') && Date.now() < deadline) await Bun.sleep(20)
    // The banner comes after the demo's certificate and CAFs are sealed: without it the backup could hold nothing sealed.
    expect(p.stderr()).toContain('curl')
    expect(await p.terminate()).toBe(0)
    archive = join(tempDir('timbre-archive-'), 'sin-llaves.tar.gz')
    expect(runBinary(['backup', '--out', archive, '--no-keys', '--data-dir', original]).code).toBe(0)
  }, 30_000)

  test('a --no-keys backup restored: serve refuses to start, says why and what to do, and makes no new master key', async () => {
    const restored = join(tempDir('timbre-restored-'), 'data')
    const r = runBinary(['restore', '--from', archive, '--data-dir', restored])
    expect(r.code).toBe(0)
    const proc = Bun.spawn([BINARY, 'serve', '--port', '0', '--data-dir', restored, '--sii', 'simulado'], { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
    expect(await exitWithin(proc, 10_000)).toBe(1)
    const stderr = await new Response(proc.stderr as ReadableStream).text()
    expect(stderr).toContain('master.key')
    expect(stderr).toContain('--no-keys')
    expect(stderr).toContain('TIMBRE_MASTER_KEY')
    expect(existsSync(join(restored, 'master.key'))).toBe(false)
    // With the original key copied in, the same data dir serves and its certificate is usable.
    copyFileSync(join(original, 'master.key'), join(restored, 'master.key'))
    const p = await startServe(['--data-dir', restored, '--sii', 'simulado'])
    expect(await p.terminate()).toBe(0)
  }, 30_000)

  test('a wrong TIMBRE_MASTER_KEY: serve refuses to start naming the variable', async () => {
    const wrong = Buffer.alloc(32, 7).toString('base64')
    const proc = Bun.spawn([BINARY, 'serve', '--port', '0', '--data-dir', original, '--sii', 'simulado'], {
      env: { PATH: process.env.PATH ?? '', TIMBRE_MASTER_KEY: wrong },
      stdout: 'pipe',
      stderr: 'pipe',
      stdin: 'ignore',
    })
    expect(await exitWithin(proc, 10_000)).toBe(1)
    const stderr = await new Response(proc.stderr as ReadableStream).text()
    expect(stderr).toContain('TIMBRE_MASTER_KEY')
    expect(stderr).toContain('no abre los secretos sellados')
  }, 30_000)
})

describe('one serve per data dir (DESIGN §3)', () => {
  test('a second serve exits with a clear error; after the first stops, or is killed, a new one starts', async () => {
    const dir = tempDir('timbre-lock-')
    const first = await startServe(['--data-dir', dir, '--sii', 'simulado'])
    const second = Bun.spawn([BINARY, 'serve', '--port', '0', '--data-dir', dir, '--sii', 'simulado'], { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
    expect(await exitWithin(second, 10_000)).toBe(1)
    const stderr = await new Response(second.stderr as ReadableStream).text()
    expect(stderr).toContain(`otro proceso timbre serve (pid ${first.proc.pid})`)
    expect(stderr).toContain(dir)
    // The first one still serves.
    expect((await fetch(`${first.url}/health`)).status).toBe(200)
    // Admin commands are not servers: they still work beside it.
    expect(runBinary(['empresa', 'list', '--data-dir', dir]).code).toBe(0)
    expect(await first.terminate()).toBe(0)
    const third = await startServe(['--data-dir', dir, '--sii', 'simulado'])
    third.proc.kill('SIGKILL')
    await third.proc.exited
    // SIGKILL leaves no stale lock: the operating system released it with the process.
    const fourth = await startServe(['--data-dir', dir, '--sii', 'simulado'])
    expect(await fourth.terminate()).toBe(0)
  }, 60_000)
})

describe('webhook redeliver --event of a deleted webhook (issue 13 item 8)', () => {
  test('is refused with a clear error and leaves no delivery pending', async () => {
    const receiver = startReceiver()
    const s = await startTestServer({ flags: { '--webhook-allow-http': 'true', '--deliver-every': '1s' } })
    try {
      const t = await s.tenant(testRut())
      const auth = { 'X-Api-Key': t.writeKey }
      const hook = await s.request('POST', '/api/v1/billing/webhooks', { headers: auth, body: { url: receiver.url, events: ['dte.created'] } })
      expect(hook.status).toBe(201)
      expect((await s.request('POST', `/api/v1/billing/webhooks/${hook.json.id}/test`, { headers: auth })).status).toBe(202)
      const deadline = Date.now() + 10_000
      while (receiver.received.length === 0 && Date.now() < deadline) await Bun.sleep(50)
      const eventId = JSON.parse(receiver.received[0]!.body).id as string
      expect((await s.request('DELETE', `/api/v1/billing/webhooks/${hook.json.id}`, { headers: auth })).status).toBe(200)

      const r = runBinary(['webhook', 'redeliver', '--event', eventId, '--data-dir', s.dataDir])
      expect(r.code).toBe(1)
      expect(JSON.parse(r.stderr.trim()).message).toContain('webhooks eliminados')
      const db = new Database(join(s.dataDir, 'timbre.db'), { readonly: true })
      expect(db.query("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'").get()).toEqual({ n: 0 })
      db.close()
    } finally {
      await s.stop()
      await receiver.stop()
    }
  }, 30_000)

  test('housekeeping cancels pending deliveries of deleted webhooks that an older version left behind', async () => {
    const s = await startTestServer({ flags: { '--webhook-allow-http': 'true', '--deliver-every': '1h' } })
    try {
      const t = await s.tenant(testRut())
      const auth = { 'X-Api-Key': t.writeKey }
      const hook = await s.request('POST', '/api/v1/billing/webhooks', { headers: auth, body: { url: 'http://127.0.0.1:9/x', events: ['dte.created'] } })
      expect((await s.request('POST', `/api/v1/billing/webhooks/${hook.json.id}/test`, { headers: auth })).status).toBe(202)
      expect((await s.request('DELETE', `/api/v1/billing/webhooks/${hook.json.id}`, { headers: auth })).status).toBe(200)
      // What the old `redeliver --event` did: the cancelled delivery back to pending.
      const raw = new Database(join(s.dataDir, 'timbre.db'))
      raw.run("UPDATE webhook_deliveries SET status = 'pending'")
      raw.close()
      const { housekeepingJob } = await import('../../src/jobs/housekeeping')
      housekeepingJob.runOnce(s.server.deps)
      const db = new Database(join(s.dataDir, 'timbre.db'), { readonly: true })
      expect(db.query('SELECT status FROM webhook_deliveries').all()).toEqual([{ status: 'cancelled' }])
      db.close()
    } finally {
      await s.stop()
    }
  })
})
