// Issue 18, Operations: a newer binary migrates an older data dir forward (DESIGN §1). The data dir release 0.1.0 made at
// commit 61ebb99 (test/fixtures/datadirs/0010-61ebb99, made by scripts/make-datadir-fixture.ts) is served by the current
// binary: it backs up before migrating, migrates to its newest schema, and every record the release answered is still
// answered the same, its signed XML byte for byte, its certificate, CAFs, API keys and JWT key still usable.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ensureBinary, runBinary, startServe, type ServeProcess } from '../support/binary'
import { copyDataDirFixture, databaseChecks, QUIET_JOBS, rowCounts, type DataDirFixture } from '../support/datadir-fixture'
import { xmlsec1Verifies } from '../support/xml-tools'
import type { TipoDte } from '../../src/domain/emision'

let fx: DataDirFixture
let serve: ServeProcess
let binarySchema: { schema: string; migrations: number }
let countsBefore: Record<string, number>
let versionBefore: { data_dir?: Record<string, unknown> }

const get = (path: string, key = fx.readKey) => fetch(`${serve.url}/api/v1/billing${path}`, { headers: { 'X-Api-Key': key } })
const getJson = async (path: string, key = fx.readKey): Promise<any> => {
  const res = await get(path, key)
  expect(res.status).toBe(200)
  return res.json()
}

beforeAll(async () => {
  await ensureBinary()
  binarySchema = runBinary(['version']).json()
  fx = copyDataDirFixture()
  countsBefore = rowCounts(join(fx.dir, 'timbre.db'))
  versionBefore = runBinary(['version', '--data-dir', fx.dir]).json()
  serve = await startServe(['--data-dir', fx.dir, '--sii', 'simulado', '--rate-limit', '0', ...QUIET_JOBS])
}, 60_000)
afterAll(async () => {
  if (serve.proc.exitCode === null) await serve.terminate()
})

describe('the first start of the current binary on a 0010 data dir', () => {
  test('the fixture is older than this binary (else this file tests nothing)', () => {
    expect(fx.expected.made_by.version.schema).toBe('0010_dte_list_counts')
    expect(binarySchema.schema).not.toBe('0010_dte_list_counts')
    expect(binarySchema.migrations).toBeGreaterThan(fx.expected.made_by.version.migrations)
  })

  test('timbre version --data-dir told beforehand what the start would do, and changed nothing (the start still migrated)', () => {
    expect(versionBefore.data_dir).toEqual({
      path: fx.dir,
      schema: '0010_dte_list_counts',
      pending_migrations: binarySchema.migrations - fx.expected.made_by.version.migrations,
      is_newer: false,
    })
    expect(serve.lines.some((l) => l.event === 'db.migrated')).toBe(true)
    expect(runBinary(['version', '--data-dir', fx.dir]).json().data_dir).toMatchObject({ schema: binarySchema.schema, pending_migrations: 0, is_newer: false })
  })

  test('logs the automatic backup, then the migration to the schema `timbre version` names', () => {
    const events = serve.lines.map((l) => l.event)
    const backup = serve.lines.find((l) => l.event === 'db.backup.before_migration')
    expect(backup).toMatchObject({ from: '0010_dte_list_counts', to: binarySchema.schema, path: expect.stringContaining(join(fx.dir, 'backups')) })
    expect(serve.lines.find((l) => l.event === 'db.migrated')).toMatchObject({ from: '0010_dte_list_counts', to: binarySchema.schema })
    expect(events.indexOf('db.backup.before_migration')).toBeLessThan(events.indexOf('db.migrated'))
  })

  test('the backup in backups/ is the old database, whole: its schema, its rows, integrity ok', () => {
    const files = readdirSync(join(fx.dir, 'backups'))
    expect(files).toEqual([expect.stringMatching(new RegExp(`^timbre-.*-before-${binarySchema.schema}\\.db$`))])
    const file = join(fx.dir, 'backups', files[0]!)
    expect(databaseChecks(file)).toEqual({ integrity: 'ok', foreignKeyErrors: 0, migrations: fx.expected.made_by.version.migrations })
    expect(rowCounts(file)).toEqual(countsBefore)
  })

  test('no row is lost: every table of the old schema holds as many rows as before', () => {
    const after = rowCounts(join(fx.dir, 'timbre.db'))
    for (const [table, n] of Object.entries(countsBefore)) if (table !== '__drizzle_migrations' && table in after) expect({ table, n: after[table] }).toEqual({ table, n })
    expect(after.__drizzle_migrations).toBe(binarySchema.migrations)
    expect(after.dtes).toBe(6)
  })

  test('/ready says the schema is current', async () => {
    const ready = await fetch(`${serve.url}/ready`)
    expect(ready.status).toBe(200)
    expect(((await ready.json()) as { checks: Record<string, string> }).checks).toMatchObject({ database: 'ok', migrations: 'ok' })
  })
})

describe('every record the old release answered is answered the same', () => {
  test('GET /dte: the same DTEs, folios, estados and totals', async () => {
    const list = await getJson('/dte?limit=100')
    expect(list).toMatchObject(fx.expected.dte_list)
    expect(list.items.map((d: any) => `${d.tipo_dte}/${d.folio}/${d.estado}/${d.monto_total}`)).toEqual(
      fx.expected.dte_list.items.map((d: any) => `${d.tipo_dte}/${d.folio}/${d.estado}/${d.monto_total}`),
    )
    expect(list.items.filter((d: any) => d.estado === 'aceptado')).toHaveLength(1)
  })

  test('GET /dte/{id} of each: the same answer, SII history and references included', async () => {
    for (const [id, old] of Object.entries(fx.expected.dtes)) expect(await getJson(`/dte/${id}`)).toMatchObject(old as object)
  })

  test("each DTE's stored XML: the same bytes, and its signature verifies (xmlsec1)", async () => {
    for (const [id, old] of Object.entries(fx.expected.dtes) as Array<[string, { tipo_dte: TipoDte }]>) {
      const xml = new Uint8Array(await (await get(`/dte/${id}/xml`)).arrayBuffer())
      expect(createHash('sha256').update(xml).digest('hex')).toBe(fx.expected.xml_sha256[id])
      expect({ id, verifies: xmlsec1Verifies(xml, old.tipo_dte) }).toEqual({ id, verifies: true })
    }
  })

  test("each DTE's PDF renders", async () => {
    for (const id of Object.keys(fx.expected.dtes)) {
      const res = await get(`/dte/${id}/pdf`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toContain('application/pdf')
      expect(Buffer.from(await res.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-')
    }
  })

  test('empresa, cliente, producto, webhook and its delivery log', async () => {
    expect(await getJson('/empresa')).toMatchObject(fx.expected.empresa)
    expect(await getJson('/clientes')).toMatchObject(fx.expected.clientes)
    expect(await getJson('/productos')).toMatchObject(fx.expected.productos)
    expect(await getJson('/webhooks')).toMatchObject(fx.expected.webhooks)
    const webhookId = fx.expected.webhooks[0].id
    expect(await getJson(`/webhooks/${webhookId}/deliveries?limit=100`)).toMatchObject(fx.expected.webhook_deliveries)
  })

  test('certificate and CAFs: the same records (days left and vigencia depend on today, not on the migration)', async () => {
    const { dias_para_vencimiento: _days, ...certificado } = fx.expected.certificado
    expect(await getJson('/empresa/certificado')).toMatchObject({ ...certificado, is_active: true })
    const cafs = await getJson('/caf')
    expect(cafs.data).toHaveLength(fx.expected.cafs.data.length)
    // 33 and 61 CAFs expire 180 days after their authorisation (src/domain/folios.ts): is_active is today's answer.
    for (const [i, { is_active: _active, ...caf }] of (fx.expected.cafs.data as Array<Record<string, unknown>>).entries()) expect(cafs.data[i]).toMatchObject(caf)
  })

  test('apikey list: the same keys, names and rights', () => {
    const strip = (keys: Array<Record<string, unknown>>) => keys.map(({ last_used_at: _used, ...k }) => k)
    const listed = runBinary(['apikey', 'list', '--data-dir', fx.dir])
    expect(listed.code).toBe(0)
    expect(strip(listed.json())).toEqual(strip(fx.expected.api_keys))
  })
})

describe('the migrated data dir is usable', () => {
  test("the old API keys authenticate, each with its rights; the old JWT key signs tokens serve accepts", async () => {
    expect((await get('/empresa', fx.writeKey)).status).toBe(200)
    const denied = await fetch(`${serve.url}/api/v1/billing/productos`, {
      method: 'POST',
      headers: { 'X-Api-Key': fx.readKey, 'content-type': 'application/json' },
      body: JSON.stringify({ nombre: 'Serrucho' }),
    })
    expect(denied.status).toBe(403)
    expect(((await denied.json()) as { code: string }).code).toBe('API_KEY_READ_ONLY')
    const token = runBinary(['token', 'issue', '--empresa', fx.expected.empresa.rut, '--data-dir', fx.dir]).json().token as string
    const res = await fetch(`${serve.url}/api/v1/billing/empresa`, { headers: { Authorization: `Bearer ${token}` } })
    expect(res.status).toBe(200)
  })

  test('a new boleta takes the next folio of the old CAF (no reuse, no gap), signed with the old sealed certificate', async () => {
    // Boletas: their CAF never expires (unlike 33 and 61), so this holds whenever the test runs.
    const issued = await fetch(`${serve.url}/api/v1/billing/dte`, {
      method: 'POST',
      headers: { 'X-Api-Key': fx.writeKey, 'content-type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
      body: JSON.stringify({ tipo_dte: 39, receptor: { rut: '66666666-6', razon_social: 'Consumidor final' }, auto_send: false, detalle: [{ nombre: 'Mote con huesillo', cantidad: 2, precio: 1800 }] }),
    })
    expect(issued.status).toBe(201)
    const dte = (await issued.json()) as { id: string; folio: number }
    const oldFolios = (fx.expected.dte_list.items as Array<{ tipo_dte: number; folio: number }>).filter((d) => d.tipo_dte === 39).map((d) => d.folio)
    expect(dte.folio).toBe(Math.max(...oldFolios) + 1)
    const boletas = (await getJson('/dte?tipo_dte=39&limit=100')).items.map((d: { folio: number }) => d.folio).sort((a: number, b: number) => a - b)
    expect(boletas).toEqual([1, 2, 3])
    const xml = new Uint8Array(await (await get(`/dte/${dte.id}/xml`)).arrayBuffer())
    expect(xmlsec1Verifies(xml, 39)).toBe(true)
    const caf = (await getJson('/caf')).data.find((c: { tipo_dte: number }) => c.tipo_dte === 39)
    expect(caf.folios_disponibles).toBe(97)
  })

  test('stopped: integrity_check ok, every migration recorded; a second start neither migrates nor backs up', async () => {
    expect(await serve.terminate()).toBe(0)
    expect(existsSync(join(fx.dir, 'timbre.db-wal')) ? Bun.file(join(fx.dir, 'timbre.db-wal')).size : 0).toBe(0)
    expect(databaseChecks(join(fx.dir, 'timbre.db'))).toEqual({ integrity: 'ok', foreignKeyErrors: 0, migrations: binarySchema.migrations })
    const again = await startServe(['--data-dir', fx.dir, '--sii', 'simulado', ...QUIET_JOBS])
    try {
      expect(again.lines.some((l) => l.event === 'db.migrated' || l.event === 'db.backup.before_migration')).toBe(false)
      expect(readdirSync(join(fx.dir, 'backups'))).toHaveLength(1)
      expect((await fetch(`${again.url}/api/v1/billing/dte?limit=100`, { headers: { 'X-Api-Key': fx.readKey } }).then((r) => r.json()) as { total_count: number }).total_count).toBe(7)
    } finally {
      expect(await again.terminate()).toBe(0)
    }
  }, 30_000)
})

test('the fixture itself is untouched by the run (its database is only ever copied)', () => {
  expect(readdirSync(join(import.meta.dir, '../fixtures/datadirs/0010-61ebb99')).sort()).toEqual(
    ['README.md', 'TEST-FIXTURE-ONLY-api-keys.json', 'expected.json', 'jwt-private.pem', 'master.key', 'timbre.db'],
  )
})
