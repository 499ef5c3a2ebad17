// Every way to stop `serve` drains like SIGTERM (issue 26, DESIGN §18), here on Linux with the compiled binary: SIGHUP
// (a closed terminal) and `timbre stop`, the request-file stop that also works on Windows (services/serve-stop.ts).
// The Windows side, Ctrl-C and `timbre stop` inside the .exe, is test/cli/windows-wine.test.ts.
import { Database } from 'bun:sqlite'
import { beforeAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BINARY, ensureBinary, exitWithin, runBinary, startServe, type ServeProcess } from '../support/binary'
import { tempDir } from '../support/server'

beforeAll(async () => {
  await ensureBinary()
})


const events = (serve: ServeProcess) => serve.lines.map((l) => l.event)

test('SIGHUP (the terminal closed) drains like SIGTERM: exit 0, server.stopped', async () => {
  const serve = await startServe(['--data-dir', tempDir('timbre-hup-'), '--sii', 'simulado'])
  serve.proc.kill('SIGHUP')
  expect(await exitWithin(serve.proc, 10_000, { kill: true })).toBe(0)
  expect(serve.lines.find((l) => l.event === 'server.signal')).toMatchObject({ signal: 'SIGHUP' })
  expect(events(serve)).toEqual(expect.arrayContaining(['server.stopping', 'server.stopped']))
}, 30_000)

test('timbre stop: serve drains and exits 0, stop returns once the lock is free, the request is gone', async () => {
  const dir = tempDir('timbre-stop-')
  const serve = await startServe(['--data-dir', dir, '--sii', 'simulado'])
  const stopped = runBinary(['stop', '--data-dir', dir])
  expect(stopped.code).toBe(0)
  expect(stopped.json()).toMatchObject({ data_dir: dir, was_running: true, stopped: true })
  expect(await exitWithin(serve.proc, 5_000, { kill: true })).toBe(0)
  expect(serve.lines.find((l) => l.event === 'server.signal')).toMatchObject({ signal: 'stop-request' })
  expect(events(serve)).toContain('server.stopped')
  expect(existsSync(join(dir, 'stop-request'))).toBe(false)
  // The lock is free: another serve starts on the same data dir.
  const next = await startServe(['--data-dir', dir, '--sii', 'simulado'])
  expect(await next.terminate()).toBe(0)
}, 30_000)

test('timbre stop with no serve: nothing to do, exit 0, nothing written; a folder with no database is an error naming it', async () => {
  const dir = tempDir('timbre-stop-idle-')
  const served = await startServe(['--data-dir', dir, '--sii', 'simulado'])
  expect(await served.terminate()).toBe(0)
  const idle = runBinary(['stop', '--data-dir', dir])
  expect(idle.code).toBe(0)
  expect(idle.json()).toMatchObject({ data_dir: dir, was_running: false })
  expect(existsSync(join(dir, 'stop-request'))).toBe(false)
  // A mistyped --data-dir must not read as "stopped" to a script that then replaces the executable.
  const absent = runBinary(['stop', '--data-dir', join(dir, 'no-existe')])
  expect(absent.code).toBe(1)
  expect(absent.stderr).toContain(join(dir, 'no-existe', 'timbre.db'))
  expect(existsSync(join(dir, 'no-existe'))).toBe(false)
}, 30_000)

test('a stop request left from before (its server died) does not stop the next serve', async () => {
  const dir = tempDir('timbre-stop-stale-')
  writeFileSync(join(dir, 'stop-request'), '{}\n')
  const serve = await startServe(['--data-dir', dir, '--sii', 'simulado'])
  await Bun.sleep(1_500) // three of serve's 500 ms looks
  expect(serve.proc.exitCode).toBeNull()
  expect(existsSync(join(dir, 'stop-request'))).toBe(false)
  expect(await serve.terminate()).toBe(0)
}, 30_000)

test('timbre stop gives up after --timeout with exit 1 when the lock is never freed', () => {
  const dir = tempDir('timbre-stop-stuck-')
  writeFileSync(join(dir, 'timbre.db'), '') // stop only looks for it; nothing opens it here
  // Something holds serve's lock and never reads the request (a serve that hangs).
  const held = new Database(join(dir, 'serve.lock'), { create: true })
  held.run('PRAGMA locking_mode = EXCLUSIVE')
  held.run('BEGIN EXCLUSIVE')
  try {
    const started = performance.now()
    const stuck = runBinary(['stop', '--data-dir', dir, '--timeout', '1s'])
    expect(stuck.code).toBe(1)
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_000)
    expect(JSON.parse(stuck.stderr).message).toContain(`timbre serve de ${dir} no terminó en 1 s`)
  } finally {
    held.close()
  }
})

test('a relative --data-dir is logged and used as the absolute path of the folder serve started in', async () => {
  const cwd = tempDir('timbre-reldir-')
  mkdirSync(join(cwd, 'sub'))
  const proc = Bun.spawn([BINARY, 'serve', '--port', '0', '--sii', 'simulado', '--data-dir', 'sub/datos'], { cwd, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore', env: { PATH: process.env.PATH ?? '' } })
  let out = ''
  const reader = (async () => {
    for await (const chunk of proc.stdout) out += Buffer.from(chunk).toString()
  })()
  for (let i = 0; i < 300 && !out.includes('server.started'); i++) await Bun.sleep(20)
  const started = out.split('\n').map((l) => (l.startsWith('{') ? (JSON.parse(l) as Record<string, unknown>) : {})).find((l) => l.event === 'server.started')
  expect(started?.data_dir).toBe(join(cwd, 'sub/datos'))
  expect(existsSync(join(cwd, 'sub/datos/timbre.db'))).toBe(true)
  proc.kill('SIGTERM')
  expect(await proc.exited).toBe(0)
  await reader
}, 30_000)

test.skipIf(process.getuid?.() !== 0)('timbre stop from an account that may not write the data dir: exit 1 saying so, serve untouched', async () => {
  const dir = tempDir('timbre-stop-denied-')
  const serve = await startServe(['--data-dir', dir, '--sii', 'simulado'])
  const denied = Bun.spawnSync(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', BINARY, 'stop', '--data-dir', dir], { stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '' } })
  expect(denied.exitCode).toBe(1)
  expect(JSON.parse(denied.stderr.toString()).message).toContain(`no se puede escribir en el directorio de datos ${dir}`)
  await Bun.sleep(700)
  expect(serve.proc.exitCode).toBeNull()
  expect(await serve.terminate()).toBe(0)
}, 30_000)

test('under nohup SIGHUP stays ignored: serve keeps running, SIGTERM still drains', async () => {
  const proc = Bun.spawn(['nohup', BINARY, 'serve', '--port', '0', '--sii', 'simulado', '--data-dir', tempDir('timbre-nohup-')], { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore', env: { PATH: process.env.PATH ?? '' } })
  let out = ''
  const reader = (async () => {
    for await (const chunk of proc.stdout) out += Buffer.from(chunk).toString()
  })()
  for (let i = 0; i < 300 && !out.includes('server.started'); i++) await Bun.sleep(20)
  expect(out).toContain('server.started')
  proc.kill('SIGHUP')
  await Bun.sleep(500)
  expect(proc.exitCode).toBeNull()
  proc.kill('SIGTERM')
  expect(await proc.exited).toBe(0)
  await reader
  expect(out).not.toContain('"signal":"SIGHUP"')
  expect(out).toContain('"signal":"SIGTERM"')
}, 30_000)
