// `timbre health` (docs/decisions/operations.md "Health probe"): the probe the Docker image's HEALTHCHECK runs, against
// the compiled binary's serve; and the Dockerfile's runtime stage, read as data, probes the server it starts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BINARY, ensureBinary, ROOT, runBinary, startServe, type ServeProcess } from '../support/binary'
import { tempDir } from '../support/server'
import { serverIdentity } from '../support/webhook-tls'

let serve: ServeProcess
let port: string

beforeAll(async () => {
  await ensureBinary()
  serve = await startServe(['--data-dir', tempDir('timbre-health-'), '--sii', 'simulado', '--rate-limit', '0'])
  port = new URL(serve.url).port
})
afterAll(async () => {
  if (serve.proc.exitCode === null) await serve.terminate()
})

/** Lines of the Dockerfile's last stage (the image that runs), continuation lines joined. */
function runtimeStage(): string[] {
  const lines = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ').split('\n')
  const from = lines.findLastIndex((l) => /^FROM\s/i.test(l))
  return lines.slice(from).filter((l) => l.trim() !== '' && !l.startsWith('#'))
}

describe('timbre health', () => {
  test('answers 0 with the server\'s /health, and /ready with --ready', () => {
    const alive = runBinary(['health', '--port', port])
    expect(alive.code).toBe(0)
    expect(alive.json()).toMatchObject({ status: 'ok', http_status: 200, url: `http://127.0.0.1:${port}/health` })
    const ready = runBinary(['health', '--ready', '--url', serve.url])
    expect(ready.code).toBe(0)
    expect(ready.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', migrations: 'ok', jobs: 'ok' } })
  })

  test('a wildcard TIMBRE_HOST is probed on loopback; TIMBRE_PORT is read like serve reads it', () => {
    const r = runBinary(['health'], { TIMBRE_HOST: '0.0.0.0', TIMBRE_PORT: port })
    expect(r.code).toBe(0)
    expect(r.json().url).toBe(`http://127.0.0.1:${port}/health`)
  })

  test('a serve with TLS (TIMBRE_TLS_CERT) is probed over https on loopback, its certificate for another name accepted', async () => {
    const dir = tempDir('timbre-health-tls-')
    const identity = serverIdentity(['timbre.example'])
    const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')]
    writeFileSync(cert, identity.certPem)
    writeFileSync(key, identity.keyPem)
    const tls = await startServe(['--data-dir', join(dir, 'data'), '--sii', 'simulado', '--tls-cert', cert, '--tls-key', key])
    try {
      const tlsPort = new URL(tls.url).port
      const p = Bun.spawn([BINARY, 'health', '--ready'], { env: { PATH: process.env.PATH ?? '', TIMBRE_TLS_CERT: cert, TIMBRE_PORT: tlsPort }, stdout: 'pipe', stderr: 'pipe' })
      expect(await p.exited).toBe(0)
      expect(JSON.parse(await new Response(p.stdout).text())).toMatchObject({ url: `https://127.0.0.1:${tlsPort}/ready`, status: 'ready' })
      // Given as --url, the same origin is checked like any client's: the test CA is not trusted, so it fails.
      const strict = runBinary(['health', '--url', `https://127.0.0.1:${tlsPort}`])
      expect(strict.code).toBe(1)
    } finally {
      await tls.terminate()
    }
  })

  test('no server on the port: exit 1 and one JSON line on stderr naming the address', async () => {
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
    const freePort = closed.port
    closed.stop(true)
    const r = runBinary(['health', '--port', String(freePort)])
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stderr.trim())).toMatchObject({ code: 'ERROR', message: expect.stringContaining(`127.0.0.1:${freePort}`) })
  })

  test('a server that answers 503 is unhealthy (exit 1, its body in the message)', async () => {
    const sick = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ status: 'unavailable' }, { status: 503 }) })
    try {
      // Spawned, not spawnSync: this process serves the 503 and must keep its event loop running meanwhile.
      const p = Bun.spawn([BINARY, 'health', '--ready', '--url', `http://127.0.0.1:${sick.port}`], { stdout: 'pipe', stderr: 'pipe' })
      expect(await p.exited).toBe(1)
      expect(JSON.parse((await new Response(p.stderr).text()).trim()).message).toContain('HTTP 503')
    } finally {
      sick.stop(true)
    }
  })
})

describe('Dockerfile runtime stage', () => {
  test('runs as a non-root user and its HEALTHCHECK, run with the image\'s ENV, finds the running server ready', () => {
    const stage = runtimeStage()
    const user = stage.find((l) => /^USER\s/.test(l))?.split(/\s+/)[1]
    expect(user).toBeDefined()
    expect(['root', '0']).not.toContain(user!)
    const env: Record<string, string> = {}
    for (const l of stage.filter((x) => /^ENV\s/.test(x))) for (const [, k, v] of l.matchAll(/(\w+)=(\S+)/g)) env[k!] = v!
    expect(env.TIMBRE_HOST).toBe('0.0.0.0')
    const check = /^HEALTHCHECK\s.*CMD\s+(\[.*\])\s*$/.exec(stage.find((l) => l.startsWith('HEALTHCHECK')) ?? '')
    expect(check).not.toBeNull()
    const argv = JSON.parse(check![1]!) as string[]
    expect(argv[0]).toBe('/usr/local/bin/timbre')
    // The image's binary is this one; its port is the one this test's serve took.
    const r = runBinary(argv.slice(1), { ...env, TIMBRE_PORT: port })
    expect(r.code).toBe(0)
    expect(r.json().status).toBe(argv.includes('--ready') ? 'ready' : 'ok')
  })
})
