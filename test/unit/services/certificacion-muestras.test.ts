// The certification's muestras de impresión (services/certificacion-muestras.ts) on a real server's store and worker
// pool, from DTEs issued over HTTP: one PDF per document, the cedible file exactly for 33, 34, 46 and 52, each a PDF that
// pdf-lib loads, with its PDF417 read back by pdftoppm + zxing as the stored TED bytes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { unzipSync } from 'fflate'
import { spawnSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PDFDocument } from 'pdf-lib'
import { findDte } from '../../../src/db/dte-store'
import type { DteRow } from '../../../src/db/schema'
import { TimbreError } from '../../../src/errors'
import { buildMuestrasZip, planMuestras, streamMuestrasZip } from '../../../src/services/certificacion-muestras'
import { WorkerPool } from '../../../src/workers/pool'
import type { TaskInput, TaskKind, TaskOutput, TaskRunner } from '../../../src/workers/tasks'
import { fixtureOfEachType } from '../../support/fixtures'
import { facturaSimple, issue, provisionIssuer } from '../../support/issuance'
import { startTestServer, tempDir, testRut, type Tenant, type TestServer } from '../../support/server'
import { decodePdf417, pdfText, rasterize, tedBytesOf } from '../pdf/pdf-tools'

let s: TestServer
let t: Tenant
let rows: DteRow[]
let zipBytes: Uint8Array
let zip: Record<string, Uint8Array>
const renders = { calls: 0, inFlight: 0, maxInFlight: 0 }

/** The server's own pool, counted: how many PDFs were asked for, and how many at once. */
function counted(tasks: TaskRunner, tally: typeof renders): TaskRunner {
  return {
    run<K extends TaskKind>(kind: K, input: TaskInput<K>): Promise<TaskOutput<K>> {
      tally.calls++
      tally.maxInFlight = Math.max(tally.maxInFlight, ++tally.inFlight)
      return tasks.run(kind, input).finally(() => tally.inFlight--)
    },
    close: () => tasks.close(),
  }
}

async function issued(body: unknown): Promise<DteRow> {
  const res = await issue(s, t, body)
  if (res.status !== 201) throw new Error(`issue failed: ${res.status} ${res.text}`)
  return findDte(s.server.deps.store.db, t.empresa.id, res.json.id as string)!
}

beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut(), 'Comercial Peñalolén y Cía. Ltda.')
  await provisionIssuer(s, t, { folios: 20 })
  rows = []
  for (const { request } of fixtureOfEachType()) rows.push(await issued({ ...request, auto_send: false }))
  // Two more facturas (folios 2 and 3), so the order by folio within a type shows.
  for (let i = 0; i < 2; i++) rows.push(await issued(facturaSimple({ auto_send: false })))
  const deps = { ...s.server.deps, tasks: counted(s.server.deps.tasks, renders) }
  // Given newest first: the zip's order is its own.
  zipBytes = await buildMuestrasZip(deps, { empresaId: t.empresa.id, dtes: [...rows].reverse() })
  zip = unzipSync(zipBytes)
}, 120_000)
afterAll(() => s.stop())

const row = (tipo: number, folio = 1) => rows.find((r) => r.tipo_dte === tipo && r.folio === folio)!

describe('buildMuestrasZip', () => {
  test('one file per document by tipo then folio, and a cedible file right after it exactly for 33, 34, 46 and 52 (not 43)', () => {
    expect(Object.keys(zip)).toEqual([
      '33-1.pdf', '33-1-cedible.pdf', '33-2.pdf', '33-2-cedible.pdf', '33-3.pdf', '33-3-cedible.pdf',
      '34-1.pdf', '34-1-cedible.pdf', '39-1.pdf', '41-1.pdf', '43-1.pdf', '46-1.pdf', '46-1-cedible.pdf',
      '52-1.pdf', '52-1-cedible.pdf', '56-1.pdf', '61-1.pdf', '110-1.pdf', '111-1.pdf', '112-1.pdf',
    ])
  })

  test('Info-ZIP\'s unzip tests every entry (deflated, sizes after the data as a streamed zip writes them) without an error', () => {
    const dir = tempDir('timbre-muestras-')
    try {
      writeFileSync(join(dir, 'muestras.zip'), zipBytes)
      const run = spawnSync('unzip', ['-t', join(dir, 'muestras.zip')], { encoding: 'utf8' })
      expect(run.stdout).toContain('No errors detected in compressed data')
      expect(run.status).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('every file is a PDF pdf-lib loads: the tributario copy one page, the cedible file the tributario then the cedible copy', async () => {
    for (const [name, bytes] of Object.entries(zip)) {
      const doc = await PDFDocument.load(bytes)
      expect({ name, pages: doc.getPageCount() }).toEqual({ name, pages: name.endsWith('-cedible.pdf') ? 2 : 1 })
    }
    for (const [tipo, legend] of [[33, 'CEDIBLE'], [34, 'CEDIBLE'], [46, 'CEDIBLE'], [52, 'CEDIBLE CON SU FACTURA']] as const) {
      const cedible = zip[`${tipo}-1-cedible.pdf`]!
      expect(pdfText(cedible, 1)).not.toContain('CEDIBLE')
      expect(pdfText(cedible, 2)).toContain(legend)
      expect(pdfText(zip[`${tipo}-1.pdf`]!)).not.toContain('CEDIBLE')
    }
  })

  test('carta with the company\'s resolution under the timbre, as GET /dte/{id}/pdf prints it', () => {
    const text = pdfText(zip['33-2.pdf']!)
    expect(text).toContain('Nº 2')
    expect(text).toContain(`Res. ${t.empresa.numero_resolucion} de ${t.empresa.fecha_resolucion.slice(0, 4)}`)
  })

  test.each(fixtureOfEachType().map((f) => f.request.tipo_dte))('%i: the tributario\'s PDF417 reads back as the stored TED bytes', (tipo) => {
    expect(decodePdf417(rasterize(zip[`${tipo}-1.pdf`]!, 1))).toEqual(tedBytesOf(row(tipo).xml))
  }, 20_000)

  test.each([33, 34, 46, 52])('%i: the cedible copy\'s PDF417 reads back as the stored TED bytes', (tipo) => {
    expect(decodePdf417(rasterize(zip[`${tipo}-1-cedible.pdf`]!, 2))).toEqual(tedBytesOf(row(tipo).xml))
  }, 20_000)

  test('drawn in the worker pool a few at a time: one task per file, at most 4 at once', () => {
    expect(renders.calls).toBe(Object.keys(zip).length)
    expect(renders.maxInFlight).toBeGreaterThan(1)
    expect(renders.maxInFlight).toBeLessThanOrEqual(4)
  })

  test('streamed: the first bytes go out when the first PDFs are drawn, not the whole zip (Bun.serve cuts a silent request at 10 s)', async () => {
    const tally = { calls: 0, inFlight: 0, maxInFlight: 0 }
    const deps = { ...s.server.deps, tasks: counted(s.server.deps.tasks, tally) }
    const reader = streamMuestrasZip(deps, { empresaId: t.empresa.id, dtes: rows }).getReader()
    const first = await reader.read()
    // A local file header: the zip has begun with 33-1.pdf while at most four of its 20 PDFs were asked for.
    expect(Buffer.from(first.value!.subarray(0, 4)).toString('hex')).toBe('504b0304')
    expect(tally.calls).toBeLessThanOrEqual(4)
    await reader.cancel()
    expect(tally.calls).toBeLessThanOrEqual(4)
  }, 20_000)

  test('the same documents give the same bytes; a DTE given twice is one document', async () => {
    const some = [row(52), row(39)]
    const once = await buildMuestrasZip(s.server.deps, { empresaId: t.empresa.id, dtes: some })
    const again = await buildMuestrasZip(s.server.deps, { empresaId: t.empresa.id, dtes: [...some, row(52)] })
    expect(Buffer.from(again).equals(Buffer.from(once))).toBe(true)
    expect(Object.keys(unzipSync(once))).toEqual(['39-1.pdf', '52-1.pdf', '52-1-cedible.pdf'])
  }, 20_000)

  test('no documents: an empty zip', async () => {
    expect(unzipSync(await buildMuestrasZip(s.server.deps, { empresaId: t.empresa.id, dtes: [] }))).toEqual({})
  })

  test('a row of another company is refused before anything is drawn', () => {
    expect(() => planMuestras(t.empresa.id, [row(33), { ...row(34), empresa_id: 'otra' }])).toThrow('belongs to another company')
  })

  test('a PDF past the pool\'s time limit fails the whole zip with its 503, and nothing more is drawn after it', async () => {
    const pool = new WorkerPool({ size: 1, limitsMs: { 'render-pdf': 1 } })
    const tally = { calls: 0, inFlight: 0, maxInFlight: 0 }
    try {
      const deps = { ...s.server.deps, tasks: counted(pool, tally) }
      const failed = buildMuestrasZip(deps, { empresaId: t.empresa.id, dtes: rows })
      await expect(failed).rejects.toBeInstanceOf(TimbreError)
      await expect(failed).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' })
      expect(tally.calls).toBeLessThanOrEqual(4)
    } finally {
      await pool.close()
    }
  }, 20_000)
})
