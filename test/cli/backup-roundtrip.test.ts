// Issue 18, Operations: backup then restore into a new data dir gives the same data (DESIGN §3). test/cli/cli.test.ts
// checks the archive's files and that a restored dir opens; here the data dir has real content (the 0.1.0 fixture,
// migrated, plus a boleta the current binary issued), the backup is taken while serve runs, and every GET of the route
// table (read from /docs/json, so a new route is compared too) answers the same from the restored dir, the stored XML
// and PDF byte for byte. A --no-keys backup of the same data restores, and serve then refuses to start.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { BINARY, ensureBinary, runBinary, startServe, type ServeProcess } from '../support/binary'
import { copyDataDirFixture, databaseChecks, QUIET_JOBS, type DataDirFixture } from '../support/datadir-fixture'
import { tempDir } from '../support/server'

const API = '/api/v1/billing'
let fx: DataDirFixture
let original: ServeProcess
let restored: ServeProcess
let restoredDir: string
let archive: string
let before: Map<string, unknown>

type Answer = { status: number; type: string; body: unknown }

/** One answer, comparable across servers: JSON without its request id, other bodies as their SHA-256. */
async function answer(url: string, path: string, key: string): Promise<Answer> {
  const res = await fetch(`${url}${path}`, { headers: { 'X-Api-Key': key } })
  const type = res.headers.get('content-type') ?? ''
  if (type.includes('json')) {
    const body = (await res.json()) as { context?: { request_id?: string } }
    if (body.context?.request_id !== undefined) delete body.context.request_id
    return { status: res.status, type, body }
  }
  return { status: res.status, type, body: createHash('sha256').update(new Uint8Array(await res.arrayBuffer())).digest('hex') }
}

/** Every item of a list, following next_cursor (lists answer items, data or a bare array). */
async function allItems(url: string, path: string, key: string): Promise<Array<{ id: string }>> {
  const items: Array<{ id: string }> = []
  let cursor: string | null = null
  do {
    const res = await fetch(`${url}${path}?limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, { headers: { 'X-Api-Key': key } })
    expect({ path, status: res.status }).toEqual({ path, status: 200 })
    const body = (await res.json()) as { items?: Array<{ id: string }>; data?: Array<{ id: string }>; next_cursor?: string | null } | Array<{ id: string }>
    items.push(...(Array.isArray(body) ? body : (body.items ?? body.data ?? [])))
    cursor = Array.isArray(body) ? null : (body.next_cursor ?? null)
  } while (cursor !== null)
  return items
}

/**
 * Every GET of the API as the company sees it: each path of /docs/json without a parameter (searches with q=a), each
 * list followed to its end, and each `{id}` path for every id its list holds.
 */
async function snapshot(url: string, key: string): Promise<Map<string, unknown>> {
  const spec = (await (await fetch(`${url}/docs/json`)).json()) as { paths: Record<string, { get?: unknown }> }
  const paths = Object.keys(spec.paths).filter((p) => p.startsWith(API) && spec.paths[p]!.get !== undefined).sort()
  const out = new Map<string, unknown>()
  for (const path of paths) {
    const m = /^(.*)\/\{id\}(\/.*)?$/.exec(path)
    if (m === null) {
      const first = await answer(url, path.endsWith('/search') ? `${path}?q=a` : path, key)
      out.set(path, first)
      const isList = Array.isArray(first.body) || (typeof first.body === 'object' && first.body !== null && 'next_cursor' in first.body)
      if (isList && !path.endsWith('/search')) out.set(`${path} (every page)`, await allItems(url, path, key))
      continue
    }
    expect(paths).toContain(m[1]!)
    for (const { id } of await allItems(url, m[1]!, key)) out.set(`${m[1]}/${id}${m[2] ?? ''}`, await answer(url, `${m[1]}/${id}${m[2] ?? ''}`, key))
  }
  return out
}

async function issueBoleta(url: string, key: string): Promise<{ status: number; folio: number }> {
  const res = await fetch(`${url}${API}/dte`, {
    method: 'POST',
    headers: { 'X-Api-Key': key, 'content-type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
    body: JSON.stringify({ tipo_dte: 39, receptor: { rut: '66666666-6', razon_social: 'Consumidor final' }, auto_send: false, detalle: [{ nombre: 'Pan amasado', cantidad: 6, precio: 250 }] }),
  })
  return { status: res.status, folio: ((await res.json()) as { folio: number }).folio }
}

/** The CLI's view, without what reading changes (last_used_at moves when a key is used). */
function cliView(dir: string): unknown {
  const empresas = runBinary(['empresa', 'list', '--data-dir', dir]).json()
  const keys = runBinary(['apikey', 'list', '--data-dir', dir]).json().map(({ last_used_at: _used, ...k }: Record<string, unknown>) => k)
  const deliveries = runBinary(['webhook', 'deliveries', '--empresa', fx.expected.empresa.rut, '--data-dir', dir]).json()
  return { empresas, keys, deliveries }
}

beforeAll(async () => {
  await ensureBinary()
  fx = copyDataDirFixture()
  original = await startServe(['--data-dir', fx.dir, '--sii', 'simulado', '--rate-limit', '0', ...QUIET_JOBS])
  // Something the current binary wrote, beside what the old release did.
  expect(await issueBoleta(original.url, fx.writeKey)).toEqual({ status: 201, folio: 3 })
  before = await snapshot(original.url, fx.readKey)
  archive = join(tempDir('timbre-roundtrip-'), 'respaldo.tar.gz')
  const made = runBinary(['backup', '--out', archive, '--data-dir', fx.dir])
  expect(made.code).toBe(0)
  expect(made.json()).toMatchObject({ includes_keys: true, files: ['timbre.db', 'master.key', 'jwt-private.pem'] })
  restoredDir = join(tempDir('timbre-roundtrip-'), 'data')
  const r = runBinary(['restore', '--from', archive, '--data-dir', restoredDir])
  expect(r.code).toBe(0)
  restored = await startServe(['--data-dir', restoredDir, '--sii', 'simulado', '--rate-limit', '0', ...QUIET_JOBS])
}, 60_000)
afterAll(async () => {
  for (const p of [original, restored]) if (p !== undefined && p.proc.exitCode === null) await p.terminate()
})

describe('backup while serve runs, restore into a new data dir, serve it', () => {
  test('the original answered the same before and after the backup (so the comparison below means something)', async () => {
    expect(await snapshot(original.url, fx.readKey)).toEqual(before)
    expect(before.size).toBeGreaterThan(20)
    expect([...before.keys()].filter((k) => /\/dte\/[^/]+\/xml$/.test(k))).toHaveLength(7)
  })

  test('the restored dir answers every GET the same: lists, records, stored XML and PDF bytes', async () => {
    const after = await snapshot(restored.url, fx.readKey)
    expect([...after.keys()]).toEqual([...before.keys()])
    for (const [path, was] of before) expect({ path, answer: after.get(path) }).toEqual({ path, answer: was })
  })

  test('the CLI sees the same companies, keys and webhook deliveries', () => {
    expect(cliView(restoredDir)).toEqual(cliView(fx.dir))
  })

  test('the restore is the schema it was taken at: no migration, no pre-migration backup; integrity ok', () => {
    expect(restored.lines.some((l) => l.event === 'db.migrated')).toBe(false)
    expect(existsSync(join(restoredDir, 'backups'))).toBe(false)
    expect(readdirSync(restoredDir).sort()).toEqual(expect.arrayContaining(['jwt-private.pem', 'master.key', 'timbre.db']))
  })

  test('the write key works on the restored dir and a new issuance continues the folios', async () => {
    expect(await issueBoleta(restored.url, fx.writeKey)).toEqual({ status: 201, folio: 4 })
    // The original is its own data dir now: it takes the same next folio, independently.
    expect(await issueBoleta(original.url, fx.writeKey)).toEqual({ status: 201, folio: 4 })
  })

  test('a token issued from the restored dir is accepted by the original (the same JWT key)', async () => {
    const token = runBinary(['token', 'issue', '--empresa', fx.expected.empresa.rut, '--data-dir', restoredDir]).json().token as string
    expect((await fetch(`${original.url}${API}/empresa`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200)
  })

  test('stopped: the restored database passes integrity_check', async () => {
    expect(await restored.terminate()).toBe(0)
    expect(databaseChecks(join(restoredDir, 'timbre.db'))).toMatchObject({ integrity: 'ok', foreignKeyErrors: 0 })
  })
})

describe('backup --no-keys of the same data', () => {
  test('restores, then serve refuses to start: it names the missing master.key and makes none', () => {
    const noKeys = join(tempDir('timbre-roundtrip-'), 'sin-llaves.tar.gz')
    expect(runBinary(['backup', '--out', noKeys, '--no-keys', '--data-dir', fx.dir]).code).toBe(0)
    const dir = join(tempDir('timbre-roundtrip-'), 'data')
    expect(runBinary(['restore', '--from', noKeys, '--data-dir', dir]).code).toBe(0)
    expect(existsSync(join(dir, 'master.key'))).toBe(false)
    // A serve that wrongly starts would never exit: the timeout turns that into a failure instead of a hang.
    const p = Bun.spawnSync([BINARY, 'serve', '--port', '0', '--data-dir', dir, '--sii', 'simulado'], { env: { PATH: process.env.PATH ?? '' }, stdin: 'ignore', timeout: 15_000 })
    expect(p.exitCode).toBe(1)
    const stderr = p.stderr.toString()
    expect(stderr).toContain('master.key')
    expect(stderr).toContain('--no-keys')
    expect(stderr).toContain('TIMBRE_MASTER_KEY')
    expect(existsSync(join(dir, 'master.key'))).toBe(false)
  }, 30_000)
})
