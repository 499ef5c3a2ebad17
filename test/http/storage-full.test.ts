// A full disk (issue 18, "Operations"): writes answer a clear 503 and change nothing, reads go on, no folio is lost or
// skipped, and once there is room again the same request issues. SQLite's own full-database path is used: the server's
// connection is capped with `PRAGMA max_page_count` at the pages it has, so the next page it needs fails with
// SQLITE_FULL exactly as a full disk fails it (same error code, same statement and transaction rollback).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { computeDv as dvOf } from '../../src/domain/rut'
import { dteCount, facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

let s: TestServer
let tenant: Tenant

beforeAll(async () => {
  s = await startTestServer()
  tenant = await s.tenant(testRut())
  await provisionIssuer(s, tenant, { folios: 50, tipos: [33] })
})

afterAll(() => s.stop())

const sqlite = () => s.server.deps.store.sqlite
const pages = () => (sqlite().query('PRAGMA page_count').get() as { page_count: number }).page_count

function fillDisk(): void {
  // No free pages left: they would absorb a few writes before the cap bites.
  sqlite().run('VACUUM')
  expect(sqlite().query('PRAGMA freelist_count').get()).toEqual({ freelist_count: 0 })
  sqlite().run(`PRAGMA max_page_count = ${pages()}`)
}

function makeRoom(): void {
  sqlite().run('PRAGMA max_page_count = 4294967294')
}

test('with the disk full, issuing answers 503 SERVICE_UNAVAILABLE naming the storage, stores nothing, and the folio is issued once there is room', async () => {
  const first = await issue(s, tenant, facturaSimple())
  expect(first.status).toBe(201)
  expect(first.json.folio).toBe(1)
  const before = await dteCount(s, tenant)

  fillDisk()
  const key = crypto.randomUUID()
  // Several at once: they share a group commit, and every one of them must get the 503.
  const refused = await Promise.all([issue(s, tenant, facturaSimple(), key), ...Array.from({ length: 4 }, () => issue(s, tenant, facturaSimple()))])
  for (const r of refused) {
    expect(r.status).toBe(503)
    expect(r.json.code).toBe('SERVICE_UNAVAILABLE')
    expect(r.json.message).toContain('almacenamiento')
    expect(r.json.context).toMatchObject({ motivo: 'almacenamiento_lleno' })
    expect(r.headers.get('retry-after')).not.toBeNull()
  }
  // Another kind of write, through the plain transaction path: small rows fit in pages already there, until one needs a
  // new page; each answer is then a 201 or the same 503, never a 500.
  const statuses: number[] = []
  for (let i = 0; i < 300 && !statuses.includes(503); i++) {
    const r = await s.request('POST', '/api/v1/billing/clientes', {
      headers: { 'X-Api-Key': tenant.writeKey },
      body: { rut: `${10_000_000 + i}-${dvOf(String(10_000_000 + i))}`, razon_social: `Cliente ${i} ${'x'.repeat(80)}`, giro: 'Comercio', direccion: 'Calle 1', comuna: 'Santiago', ciudad: 'Santiago' },
    })
    statuses.push(r.status)
    if (r.status === 503) expect(r.json.context).toMatchObject({ motivo: 'almacenamiento_lleno' })
  }
  expect(statuses.at(-1)).toBe(503)
  expect(statuses.filter((st) => st !== 201 && st !== 503)).toEqual([])
  expect(await dteCount(s, tenant)).toBe(before)
  const health = await s.request('GET', '/health')
  expect(health.status).toBe(200)
  // Logged for the operator, once per failing request at most, with the cause.
  expect(s.logs.some((l) => l.event === 'http.storage_unwritable' && l.sqlite_code === 'SQLITE_FULL')).toBe(true)

  makeRoom()
  // The same Idempotency-Key was not spent by the refusal: the retry issues, with the next folio (none skipped).
  const retried = await issue(s, tenant, facturaSimple(), key)
  expect(retried.status).toBe(201)
  expect(retried.json.folio).toBe(2)
  const next = await issue(s, tenant, facturaSimple())
  expect(next.json.folio).toBe(3)
  expect(sqlite().query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
})
