// The compiled binary, as users run it. `npm test` builds it first; a lone `bun test` builds it when missing.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { santiagoDate } from '../../src/clock'
import { signer } from './issuance'
import { exportPfx, makeTestCaf } from './pki'

export const ROOT = join(import.meta.dir, '../..')
export const BINARY = join(ROOT, 'dist/timbre')

export async function ensureBinary(): Promise<string> {
  if (!existsSync(BINARY)) {
    const build = Bun.spawnSync([process.execPath, join(ROOT, 'scripts/build.ts')], { cwd: ROOT, stdout: 'inherit', stderr: 'inherit' })
    if (build.exitCode !== 0) throw new Error('could not build dist/timbre')
  }
  return BINARY
}

export interface RunResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  json<T = any>(): T
}

export function runBinary(args: readonly string[], env: Record<string, string> = {}): RunResult {
  const p = Bun.spawnSync([BINARY, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdin: 'ignore' })
  const stdout = p.stdout.toString()
  return { code: p.exitCode ?? -1, stdout, stderr: p.stderr.toString(), json: () => JSON.parse(stdout) }
}

export interface ServeProcess {
  readonly url: string
  readonly lines: Array<Record<string, unknown>>
  readonly stderr: () => string
  readonly proc: ReturnType<typeof Bun.spawn>
  /** Sends SIGTERM and waits for the exit code. */
  terminate(): Promise<number>
}

/** Starts `timbre serve` on a free port and waits for its startup log line. */
export async function startServe(args: readonly string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  const proc = Bun.spawn([BINARY, 'serve', '--port', '0', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
  })
  const lines: Array<Record<string, unknown>> = []
  let err = ''
  void (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) err += Buffer.from(chunk).toString()
  })()
  let url: string | null = null
  let pending = ''
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  const readLines = async () => {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      pending += Buffer.from(value).toString()
      let nl: number
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl)
        pending = pending.slice(nl + 1)
        try {
          const parsed = JSON.parse(line) as Record<string, unknown>
          lines.push(parsed)
          if (parsed.event === 'server.started') url = String(parsed.listen)
        } catch {
          lines.push({ unparsed: line })
        }
      }
    }
  }
  void readLines()
  const deadline = Date.now() + 15_000
  while (url === null) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`serve did not start: ${err}`)
    await Bun.sleep(20)
  }
  return {
    url,
    lines,
    stderr: () => err,
    proc,
    async terminate() {
      proc.kill('SIGTERM')
      return proc.exited
    },
  }
}

/** A data dir with one company and a write key, made by the binary's own CLI (DESIGN §3), for the crash tests. */
export function createCompanyWithKey(dir: string, rut: string, razonSocial: string): string {
  const made = runBinary(['empresa', 'create', '--rut', rut, '--razon-social', razonSocial, '--giro', 'Ferretería', '--acteco', '475200', '--direccion', 'Av. Matta 1020', '--comuna', 'Santiago', '--ciudad', 'Santiago', '--data-dir', dir])
  if (made.code !== 0) throw new Error(`empresa create: ${made.stderr}`)
  return runBinary(['apikey', 'create', '--empresa', rut, '--write', '--data-dir', dir]).json().key as string
}

/** Uploads the test signer's certificate and a type 33 CAF of `folios` folios to a running server; throws unless both are 201. */
export async function provisionOverHttp(url: string, key: string, company: { rut: string; razonSocial: string; folios: number }): Promise<void> {
  const h = { 'X-Api-Key': key, 'content-type': 'application/json' }
  const pfx = Buffer.from(exportPfx(signer(), 'x', '3des')).toString('base64')
  const cert = await fetch(`${url}/api/v1/billing/empresa/certificado/pfx`, { method: 'POST', headers: h, body: JSON.stringify({ pfx_base64: pfx, password: 'x' }) })
  if (cert.status !== 201) throw new Error(`certificate upload: ${cert.status} ${await cert.text()}`)
  const caf = makeTestCaf({ rut: company.rut, razonSocial: company.razonSocial, tipoDte: 33, folioDesde: 1, folioHasta: company.folios, fechaAutorizacion: santiagoDate(new Date(Date.now() - 86_400_000)) })
  const res = await fetch(`${url}/api/v1/billing/caf`, { method: 'POST', headers: h, body: JSON.stringify({ tipo_dte: 33, caf_xml: caf.xml }) })
  if (res.status !== 201) throw new Error(`CAF upload: ${res.status} ${await res.text()}`)
}

/** The process's exit code, or 'still running' after `ms` (then killed with SIGKILL when `kill` is set, so no test leaks it). */
export async function exitWithin(proc: ReturnType<typeof Bun.spawn>, ms: number, opts: { kill?: boolean } = {}): Promise<number | 'still running'> {
  const code = await Promise.race([proc.exited, Bun.sleep(ms).then(() => 'still running' as const)])
  if (code === 'still running' && opts.kill) proc.kill('SIGKILL')
  return code
}
