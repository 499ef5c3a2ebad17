// The Windows executable, run under Wine (issue 26, DESIGN §18): built the way `npm run release` builds it, then
// started the way a person on Windows starts it. One .exe and one fresh Wine prefix for the whole file; the tests run in
// order and share what the earlier ones made (the data dir, the demo invoice, the backup).
//
// Two test-only pieces, built here from test/support/wine/ and never shipped: bcryptprimitives.dll (Bun's runtime needs
// ProcessPrng, which Wine 8.0 lacks; beside the .exe) and console-run.exe (a console host that can send Ctrl-C).
// scripts/test.sh installs wine and the mingw compiler; without them this file says why it skips.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEMO_INVOICE } from '../../src/cli/demo-banner'
import { exitWithin, ROOT } from '../support/binary'
import { tempDir } from '../support/server'

const WINE = Bun.which('wine')
const MINGW = Bun.which('x86_64-w64-mingw32-gcc')
const PDFTOTEXT = Bun.which('pdftotext')
const missing = [!WINE && 'wine', !MINGW && 'x86_64-w64-mingw32-gcc (gcc-mingw-w64-x86-64-win32)', !PDFTOTEXT && 'pdftotext (poppler-utils)'].filter(Boolean)
const API = '/api/v1/billing'
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version

let work: string
let app: string
let exe: string
let consoleRun: string
let env: Record<string, string>

/** `/tmp/x/y` as Windows programs under Wine name it: drive Z: is the Unix root. */
const winPath = (unix: string) => `Z:${unix.replaceAll('/', '\\')}`

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

async function run(cmd: readonly string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<Run> {
  const p = Bun.spawn([...cmd], { cwd: opts.cwd ?? work, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  const timer = setTimeout(() => p.kill('SIGKILL'), opts.timeoutMs ?? 60_000)
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  clearTimeout(timer)
  return { code, stdout, stderr }
}

const timbre = (args: readonly string[], opts: { cwd?: string } = {}) => run([WINE!, exe, ...args], opts)

interface Served {
  readonly url: string
  readonly lines: Array<Record<string, unknown>>
  readonly stderr: () => string
  readonly proc: ReturnType<typeof Bun.spawn>
  /** console-run's stdin: a line sends the console Ctrl-C. */
  ctrlC(): void
}

/** `serve` inside console-run (a console of its own, as a window gives it), waiting for its startup line. */
async function serve(args: readonly string[], opts: { cwd?: string } = {}): Promise<Served> {
  const proc = Bun.spawn([WINE!, consoleRun, exe, 'serve', '--port', '0', ...args], { cwd: opts.cwd ?? work, env, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
  const lines: Array<Record<string, unknown>> = []
  let err = ''
  void (async () => {
    for await (const chunk of proc.stderr) err += Buffer.from(chunk).toString()
  })()
  void (async () => {
    let pending = ''
    for await (const chunk of proc.stdout) {
      pending += Buffer.from(chunk).toString()
      const parts = pending.split('\n')
      pending = parts.pop()!
      for (const line of parts) if (line.trim() !== '') lines.push(JSON.parse(line.trim()) as Record<string, unknown>)
    }
  })()
  const started = () => lines.find((l) => l.event === 'server.started')
  for (let i = 0; i < 600 && !started() && proc.exitCode === null; i++) await Bun.sleep(100)
  if (!started()) throw new Error(`serve did not start: ${err}`)
  return {
    url: String(started()!.listen),
    lines,
    stderr: () => err,
    proc,
    ctrlC() {
      proc.stdin.write('c\n')
      proc.stdin.end()
    },
  }
}

async function compileC(source: string, out: string, extra: readonly string[] = []): Promise<void> {
  const r = await run([MINGW!, '-O2', '-Wall', ...extra, '-o', out, join(ROOT, 'test/support/wine', source), ...(extra.includes('-shared') ? ['-ladvapi32'] : [])])
  if (r.code !== 0) throw new Error(`${source}: ${r.stderr}`)
}

if (missing.length > 0) {
  test.skip(`Windows smoke test under Wine skipped: ${missing.join(', ')} not installed (scripts/test.sh installs them)`, () => undefined)
} else {
  describe('timbre-windows-x64.exe under Wine (issue 26)', () => {
    let versionRun: Run
    let first: Served
    let firstDir: string
    let apiKey: string
    let dteId: string
    let folio: number
    let archive: string

    beforeAll(async () => {
      work = tempDir('timbre-wine-')
      app = join(work, 'app')
      env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', WINEPREFIX: join(work, 'prefix'), WINEDEBUG: '-all', WINEDLLOVERRIDES: 'mscoree,mshtml=' }
      const built = Bun.spawn([process.execPath, join(ROOT, 'scripts/release.ts'), '--targets', 'windows-x64', '--no-zip', '--out', app], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
      const [, buildErr, buildCode] = await Promise.all([new Response(built.stdout).text(), new Response(built.stderr).text(), built.exited])
      if (buildCode !== 0) throw new Error(`release build: ${buildErr}`)
      exe = join(app, 'timbre-windows-x64.exe')
      consoleRun = join(work, 'tools', 'console-run.exe')
      mkdirSync(join(work, 'tools'))
      await compileC('bcryptprimitives.c', join(app, 'bcryptprimitives.dll'), ['-shared'])
      await compileC('console-run.c', consoleRun)
      // The first command also makes the prefix (~10 s).
      versionRun = await timbre(['version'])
    }, 180_000)

    afterAll(async () => {
      first?.proc.kill('SIGKILL')
      // Every Windows process of this file's own prefix, whatever a failed test left running.
      if (env) await run(['wineserver', '-k'])
      if (work) rmSync(work, { recursive: true, force: true })
    })

    test('version and --help', async () => {
      expect(versionRun.code).toBe(0)
      expect(JSON.parse(versionRun.stdout)).toMatchObject({ version: VERSION, bun: Bun.version })
      const help = await timbre(['--help'])
      expect(help.code).toBe(0)
      for (const command of ['serve', 'stop', 'backup', 'restore']) expect(help.stdout).toContain(`  ${command} `)
    }, 60_000)

    test('serve --demo on a data dir given as a Windows path: absolute in the log, access rules set, the banner pastes into PowerShell and cmd', async () => {
      firstDir = join(work, 'datos uno')
      first = await serve(['--sii', 'simulado', '--demo', '--data-dir', winPath(firstDir)])
      const started = first.lines.find((l) => l.event === 'server.started')!
      expect(started.data_dir).toBe(winPath(firstDir))
      const acl = first.lines.find((l) => l.event === 'data_dir.acl_applied')
      expect(acl?.icacls).toEqual(expect.arrayContaining([winPath(firstDir), '/inheritance:r', '*S-1-5-32-544:(OI)(CI)F', '*S-1-5-18:(OI)(CI)F']))
      // Windows has no modes to tighten: no warnings about them (every file there reads 0666).
      expect(first.lines.filter((l) => String(l.event).startsWith('data_dir.permissions'))).toEqual([])
      expect(await (await fetch(`${first.url}/health`)).json()).toMatchObject({ status: 'ok' })
      for (let i = 0; i < 100 && !first.stderr().includes('--data-binary'); i++) await Bun.sleep(100)
      const invoiceFile = winPath(join(firstDir, 'demo-factura.json'))
      expect(first.stderr()).toContain(`curl.exe -s -X POST ${first.url}${API}/dte -H "X-Api-Key: `)
      expect(first.stderr()).toContain(`--data-binary "@${invoiceFile}"`)
      expect(JSON.parse(readFileSync(join(firstDir, 'demo-factura.json'), 'utf8'))).toEqual(DEMO_INVOICE)
      apiKey = readFileSync(join(firstDir, 'demo-api-key'), 'utf8').trim()
    }, 90_000)

    test('the demo invoice issued through the API reaches aceptado, and its PDF is a real PDF with its folio', async () => {
      // Signing (task pool), the WAL checkpointer and the XSD check of the envelope run in Workers inside the .exe.
      const res = await fetch(`${first.url}${API}/dte`, {
        method: 'POST',
        headers: { 'X-Api-Key': apiKey, 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
        body: JSON.stringify(DEMO_INVOICE),
      })
      expect(res.status).toBe(201)
      ;({ id: dteId, folio } = (await res.json()) as { id: string; folio: number })
      let estado = ''
      for (let i = 0; i < 120 && estado !== 'aceptado'; i++) {
        await Bun.sleep(250)
        estado = ((await (await fetch(`${first.url}${API}/dte/${dteId}`, { headers: { 'X-Api-Key': apiKey } })).json()) as { estado: string }).estado
      }
      expect(estado).toBe('aceptado')
      expect(first.lines.filter((l) => l.event === 'worker.lost')).toEqual([])
      const pdf = await fetch(`${first.url}${API}/dte/${dteId}/pdf`, { headers: { 'X-Api-Key': apiKey } })
      expect(pdf.status).toBe(200)
      const bytes = new Uint8Array(await pdf.arrayBuffer())
      expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe('%PDF-')
      const pdfPath = join(work, 'factura.pdf')
      writeFileSync(pdfPath, bytes)
      const text = await run([PDFTOTEXT!, '-enc', 'UTF-8', pdfPath, '-'])
      expect(text.stdout).toMatch(new RegExp(`N[º°]?\\s*${folio}\\b`))
    }, 90_000)

    test('a second serve on the same data dir is refused with the clear error', async () => {
      const second = await timbre(['serve', '--port', '0', '--sii', 'simulado', '--data-dir', winPath(firstDir)])
      expect(second.code).toBe(1)
      expect(second.stderr).toContain('otro proceso timbre serve')
      expect(second.stderr).toContain(JSON.stringify(winPath(firstDir)).slice(1, -1))
    }, 60_000)

    test('backup while serve runs, to a relative --out: the archive is where the result says', async () => {
      const out = await timbre(['backup', '--out', 'respaldos\\timbre.tar.gz', '--data-dir', winPath(firstDir)])
      expect(out.stderr).toBe('')
      expect(out.code).toBe(0)
      const result = JSON.parse(out.stdout) as { path: string; files: string[] }
      expect(result.path).toBe(winPath(join(work, 'respaldos', 'timbre.tar.gz')))
      expect(result.files).toEqual(['timbre.db', 'master.key', 'jwt-private.pem'])
      archive = join(work, 'respaldos', 'timbre.tar.gz')
      expect(existsSync(archive)).toBe(true)
    }, 60_000)

    test('a scheduled-style copy (backup run) to a folder, while serve runs: made on the backup Worker, read back, verified, listed', async () => {
      // The copy's snapshot, archive and read-back run on the backup Worker inside the .exe; its staging is removed
      // file by file (Bun's recursive rmSync fails under Wine, docs/decisions/platforms.md).
      const folder = join(work, 'usb')
      mkdirSync(folder)
      const made = await timbre(['backup', 'run', '--backup-dir', winPath(folder), '--data-dir', winPath(firstDir)])
      expect({ code: made.code, stderr: made.stderr.split('\n').filter((l) => l.includes('"error"')) }).toEqual({ code: 0, stderr: [] })
      const result = JSON.parse(made.stdout) as { targets: Array<{ ok: boolean; copy: string; includes_keys: boolean }> }
      expect(result.targets).toEqual([expect.objectContaining({ ok: true, includes_keys: true })])
      const listed = await timbre(['backup', 'list', '--backup-dir', winPath(folder)])
      expect(listed.code).toBe(0)
      const listing = JSON.parse(listed.stdout) as { copies: Array<{ name: string; verified: boolean; dte_count: number }> }
      expect(listing.copies).toEqual([expect.objectContaining({ name: result.targets[0]!.copy, verified: true })])
      expect(listing.copies[0]!.dte_count).toBeGreaterThanOrEqual(1)
      expect(readdirSync(join(firstDir, 'backups')).filter((n) => n.startsWith('.staging-'))).toEqual([])
    }, 90_000)

    test('Ctrl-C in its console: serve drains and exits 0, its lock given back', async () => {
      first.ctrlC()
      const code = await exitWithin(first.proc, 20_000)
      expect(code).toBe(0)
      const events = first.lines.map((l) => l.event)
      expect(first.lines.find((l) => l.event === 'server.signal')).toMatchObject({ signal: 'SIGINT' })
      expect(events).toEqual(expect.arrayContaining(['server.stopping', 'server.stopped']))
      expect(events).not.toContain('server.stop_timeout')
      const probe = await timbre(['stop', '--data-dir', winPath(firstDir)])
      expect(JSON.parse(probe.stdout)).toMatchObject({ was_running: false })
    }, 60_000)

    test('the default data dir is beside the executable, whatever folder it starts in; timbre stop drains it', async () => {
      const elsewhere = join(work, 'otra carpeta')
      mkdirSync(elsewhere)
      const server = await serve(['--sii', 'simulado'], { cwd: elsewhere })
      expect(server.lines.find((l) => l.event === 'server.started')!.data_dir).toBe(winPath(join(app, 'data')))
      expect(existsSync(join(app, 'data', 'timbre.db'))).toBe(true)
      expect(existsSync(join(elsewhere, 'data'))).toBe(false)
      const stopped = await timbre(['stop'], { cwd: elsewhere })
      expect(stopped.code).toBe(0)
      expect(JSON.parse(stopped.stdout)).toMatchObject({ data_dir: winPath(join(app, 'data')), was_running: true, stopped: true })
      // `stop` returns once the lock is free; the process is then at its exit.
      expect(await exitWithin(server.proc, 10_000)).toBe(0)
      expect(server.lines.find((l) => l.event === 'server.signal')).toMatchObject({ signal: 'stop-request' })
      expect(server.lines.map((l) => l.event)).toContain('server.stopped')
      expect(existsSync(join(app, 'data', 'stop-request'))).toBe(false)
      const again = await timbre(['stop'], { cwd: elsewhere })
      expect(JSON.parse(again.stdout)).toMatchObject({ was_running: false })
    }, 90_000)

    test('restore into an empty dir, then serve it: the same DTE, aceptado (relative paths throughout)', async () => {
      // Relative, as typed at a prompt: Bun's writeFileSync fails on relative paths under Wine, so this is the case that
      // needs config to make them absolute (docs/decisions/platforms.md).
      const restoredDir = join(work, 'restaurado')
      const restored = await timbre(['restore', '--from', 'respaldos\\timbre.tar.gz', '--data-dir', 'restaurado'])
      expect(restored.code).toBe(0)
      expect(JSON.parse(restored.stdout)).toMatchObject({ data_dir: winPath(restoredDir), files: ['jwt-private.pem', 'manifest.json', 'master.key', 'timbre.db'] })
      const server = await serve(['--sii', 'simulado', '--data-dir', 'restaurado'])
      expect(server.lines.find((l) => l.event === 'server.started')!.data_dir).toBe(winPath(restoredDir))
      const res = await fetch(`${server.url}${API}/dte/${dteId}`, { headers: { 'X-Api-Key': apiKey } })
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ id: dteId, folio, estado: 'aceptado' })
      const stopped = await timbre(['stop', '--data-dir', '.\\restaurado'])
      expect(stopped.code).toBe(0)
      expect(await exitWithin(server.proc, 10_000)).toBe(0)
    }, 90_000)
  })
}
