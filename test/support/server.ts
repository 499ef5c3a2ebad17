// A real Timbre server on 127.0.0.1 (port 0) over a fresh data dir with a real SQLite file (STYLE §5).
import { afterAll, beforeAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Clock } from '../../src/clock'
import { loadConfig } from '../../src/config'
import { computeDv } from '../../src/domain/rut'
import { runServer, type RunningServer } from '../../src/cli/serve'
import { createLogger, type Logger } from '../../src/log'
import { createApiKey } from '../../src/services/api-keys'
import { createEmpresa, type EmpresaRecord } from '../../src/services/empresas'
import { issueToken } from '../../src/services/tokens'

export interface TestResponse<T = any> {
  readonly status: number
  readonly headers: Headers
  readonly json: T
  readonly text: string
}

export interface Tenant {
  readonly empresa: EmpresaRecord
  readonly readKey: string
  readonly writeKey: string
  readonly readKeyId: string
  token(opts?: { ttlSeconds?: number; sub?: string }): Promise<string>
}

export interface TestServer {
  readonly url: string
  readonly dataDir: string
  readonly server: RunningServer
  /** Log lines the server wrote, parsed. */
  readonly logs: Array<Record<string, unknown>>
  request(method: string, path: string, opts?: { headers?: Record<string, string>; body?: unknown; rawBody?: BodyInit }): Promise<TestResponse>
  tenant(rut: string, razonSocial?: string): Promise<Tenant>
  stop(): Promise<void>
}

export function tempDir(prefix = 'timbre-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

let rutSeq = 0
/** Distinct valid RUTs for tests: 20000000 + n with its check digit. */
export function testRut(): string {
  const body = String(20_000_000 + ++rutSeq * 7 + Math.floor(Math.random() * 1000) * 10_000)
  return `${body}-${computeDv(body)}`
}

/** TestServer's `request` against any server on `url`: JSON bodies sent as such, the answer's JSON parsed when it is JSON. */
export function requester(url: string): TestServer['request'] {
  return async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers }
    let body: BodyInit | undefined = o.rawBody
    if (o.body !== undefined) {
      body = JSON.stringify(o.body)
      headers['content-type'] ??= 'application/json'
    }
    const res = await fetch(url + path, { method, headers, body })
    const text = await res.text()
    let json: unknown = undefined
    try {
      json = text === '' ? undefined : JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: res.status, headers: res.headers, json, text } as TestResponse
  }
}

export async function startTestServer(
  opts: { flags?: Record<string, string>; env?: Record<string, string>; clock?: Clock; dataDir?: string } = {},
): Promise<TestServer> {
  const dataDir = opts.dataDir ?? tempDir()
  const config = loadConfig(
    { '--host': '127.0.0.1', '--port': '0', '--data-dir': dataDir, '--sii': 'simulado', '--rate-limit': '0', ...opts.flags },
    opts.env ?? {},
  )
  const logs: Array<Record<string, unknown>> = []
  const log: Logger = createLogger('debug', (line) => logs.push(JSON.parse(line) as Record<string, unknown>))
  const server = await runServer(config, { log, clock: opts.clock })
  const url = server.url

  const request = requester(url)

  async function tenant(rut: string, razonSocial = 'Empresa de Prueba Ltda.'): Promise<Tenant> {
    const empresa = createEmpresa(server.deps, {
      rut,
      razon_social: razonSocial,
      giro: 'Servicios informáticos',
      acteco: [620200],
      direccion: 'Calle Falsa 123',
      comuna: 'Ñuñoa',
      ciudad: 'Santiago',
    })
    const read = createApiKey(server.deps, { empresaId: empresa.id, write: false, nombre: 'lectura' })
    const write = createApiKey(server.deps, { empresaId: empresa.id, write: true, nombre: 'escritura' })
    return {
      empresa,
      readKey: read.key,
      readKeyId: read.id,
      writeKey: write.key,
      token: async (t = {}) =>
        (await issueToken(server.deps, { empresaId: empresa.id, sub: t.sub, ttlSeconds: t.ttlSeconds ?? 600 })).token,
    }
  }

  return {
    url,
    dataDir,
    server,
    logs,
    request,
    tenant,
    async stop() {
      await server.stop()
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * The usual set-up of a test file: a real server with one company, started before the file's tests (then `setUp`, such
 * as provisioning it to issue) and stopped after them. `ready` receives both for the file's own variables.
 */
export function useTenant(ready: (s: TestServer, t: Tenant) => void, setUp: (s: TestServer, t: Tenant) => Promise<void> = async () => {}): void {
  let server: TestServer | null = null
  beforeAll(async () => {
    server = await startTestServer()
    const tenant = await server.tenant(testRut())
    ready(server, tenant)
    await setUp(server, tenant)
  })
  afterAll(() => server?.stop())
}
