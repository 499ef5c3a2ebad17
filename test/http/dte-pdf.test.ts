// GET /dte/{id}/pdf (DESIGN §8, §12; docs/sii-protocol.md §9) against the real server, read back with real tools: poppler for the
// text and the page sizes, pdftoppm + zxing for the PDF417, which must carry exactly the stored TED bytes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { updateDteIf } from '../../src/db/dte-store'
import type { EmitirDte } from '../../src/domain/emision'
import { ensureBinary, startServe } from '../support/binary'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { fixtureOfEachType } from '../support/fixtures'
import { startTestServer, tempDir, testRut, type Tenant, type TestServer } from '../support/server'
import { decodePdf417, pdfPageSizes, pdfText, rasterize, tedBytesOf } from '../unit/pdf/pdf-tools'

const DTE = '/api/v1/billing/dte'
let s: TestServer
let t: Tenant
let other: Tenant


beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut(), 'Comercial Peñalolén y Cía. Ltda.')
  other = await s.tenant(testRut())
  await provisionIssuer(s, t, { folios: 100 })
})
afterAll(() => s.stop())

async function getPdf(id: string, query = '', key = t.readKey) {
  const res = await fetch(`${s.url}${DTE}/${id}/pdf${query}`, { headers: { 'X-Api-Key': key } })
  const bytes = new Uint8Array(await res.arrayBuffer())
  return { res, bytes, json: () => JSON.parse(Buffer.from(bytes).toString('utf8')) as { code: string; details: Array<{ field: string; code: string }> } }
}

async function storedXml(id: string): Promise<Uint8Array> {
  const res = await fetch(`${s.url}${DTE}/${id}/xml`, { headers: { 'X-Api-Key': t.readKey } })
  return new Uint8Array(await res.arrayBuffer())
}

async function issued(body: EmitirDte) {
  const res = await issue(s, t, body)
  expect(res.status).toBe(201)
  const record = await s.request('GET', `${DTE}/${res.json.id}`, { headers: { 'X-Api-Key': t.readKey } })
  return record.json as { id: string; tipo_dte: number; folio: number; rut_receptor: string; razon_social_receptor: string; monto_total: number }
}

const dotted = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, '.')
const rutDotted = (rut: string) => rut.replace(/^(\d+)-/, (_, body: string) => `${dotted(Number(body))}-`)
const squash = (text: string) => text.replace(/\s+/g, ' ')

describe('every type of spec 2.1', () => {
  for (const { name, request } of fixtureOfEachType())
    test(`${name}: carta and termico open in poppler with folio, RUTs, names and total; the roll's barcode decodes to the stored TED`, async () => {
      const dte = await issued(request)
      const carta = await getPdf(dte.id)
      expect(carta.res.status).toBe(200)
      expect(carta.res.headers.get('content-type')).toBe('application/pdf')
      expect(carta.res.headers.get('content-disposition')).toBe(`inline; filename="DTE-${dte.tipo_dte}-F${dte.folio}.pdf"`)
      const termico = await getPdf(dte.id, '?formato=termico')
      expect(termico.res.status).toBe(200)
      for (const pdf of [carta.bytes, termico.bytes]) {
        const text = squash(pdfText(pdf, undefined, { layout: false }))
        expect(text).toContain(`Nº ${dte.folio}`)
        expect(text).toContain(`R.U.T.: ${rutDotted(t.empresa.rut)}`)
        expect(text).toContain(rutDotted(dte.rut_receptor))
        expect(text).toContain('Comercial Peñalolén y Cía. Ltda.')
        expect(text).toContain(squash(dte.razon_social_receptor))
        // Pesos: the total, or for exports the peso equivalent of the foreign-currency total (DESIGN §12).
        expect(text).toContain(`$ ${dotted(dte.monto_total)}`)
        expect(text).toContain('Timbre Electrónico SII')
      }
      expect(pdfPageSizes(carta.bytes)).toEqual([{ width: 612, height: 792 }])
      expect(pdfPageSizes(termico.bytes)[0]!.width).toBeCloseTo(226.77, 1)
      expect(decodePdf417(rasterize(termico.bytes, 1))).toEqual(tedBytesOf(await storedXml(dte.id)))
    }, 20_000)

  test.each([[33], [110]])('%i carta: the barcode on the page rasterized at 300 dpi decodes to exactly the stored TED bytes', async (tipo) => {
    const request = fixtureOfEachType().find((f) => f.request.tipo_dte === tipo)!.request
    const dte = await issued(request)
    const { bytes } = await getPdf(dte.id)
    expect(decodePdf417(rasterize(bytes, 1))).toEqual(tedBytesOf(await storedXml(dte.id)))
  }, 20_000)
})

describe('cedible copy (docs/sii-protocol.md §9)', () => {
  test('33 carta: the original, then the copy with CEDIBLE and the receipt block with the Ley 19.983 legend', async () => {
    const dte = await issued(facturaSimple())
    const { res, bytes } = await getPdf(dte.id, '?cedible=true')
    expect(res.status).toBe(200)
    expect(pdfPageSizes(bytes)).toHaveLength(2)
    const [original, copia] = [squash(pdfText(bytes, 1, { layout: false })), squash(pdfText(bytes, 2, { layout: false }))]
    expect(original).not.toContain('CEDIBLE')
    expect(original).not.toContain('ACUSE DE RECIBO')
    for (const s of ['CEDIBLE', 'ACUSE DE RECIBO', 'Nombre:', 'R.U.T.:', 'Fecha:', 'Recinto:', 'Firma:', 'Ley 19.983', `Nº ${dte.folio}`, 'Timbre Electrónico SII'])
      expect(copia).toContain(s)
    // Without cedible=true, one page and no copy.
    expect(pdfPageSizes((await getPdf(dte.id, '?cedible=false')).bytes)).toHaveLength(1)
  })

  test('52 termico: two 80 mm pages, the second "CEDIBLE CON SU FACTURA" with its receipt block', async () => {
    const request = fixtureOfEachType().find((f) => f.request.tipo_dte === 52)!.request
    const dte = await issued(request)
    const { res, bytes } = await getPdf(dte.id, '?formato=termico&cedible=true')
    expect(res.status).toBe(200)
    const sizes = pdfPageSizes(bytes)
    expect(sizes).toHaveLength(2)
    for (const size of sizes) expect(size.width).toBeCloseTo(226.77, 1)
    // The copy is taller by its receipt block and legend.
    expect(sizes[1]!.height).toBeGreaterThan(sizes[0]!.height + 100)
    const copia = squash(pdfText(bytes, 2, { layout: false }))
    for (const s of ['CEDIBLE CON SU FACTURA', 'ACUSE DE RECIBO', 'Recinto:', 'Firma:', 'Ley 19.983']) expect(copia).toContain(s)
  })

  test.each([[39], [41], [56], [61], [110], [111], [112]])('%i has no cedible copy: cedible=true is 400 NOT_ALLOWED', async (tipo) => {
    const request = fixtureOfEachType().find((f) => f.request.tipo_dte === tipo)!.request
    const dte = await issued(request)
    const got = await getPdf(dte.id, '?cedible=true')
    expect(got.res.status).toBe(400)
    expect(got.json().code).toBe('VALIDATION_ERROR')
    expect(got.json().details).toContainEqual(expect.objectContaining({ field: 'cedible', code: 'NOT_ALLOWED' }))
    expect((await getPdf(dte.id, '?cedible=false')).res.status).toBe(200)
  })
})

describe('errors', () => {
  let id: string
  beforeAll(async () => {
    id = (await issued(facturaSimple())).id
  })

  test.each([
    ['?formato=a4', 'formato'],
    ['?formato=', 'formato'],
    ['?formato=CARTA', 'formato'],
    ['?cedible=si', 'cedible'],
  ])('%s → 400 VALIDATION_ERROR at %s', async (query, field) => {
    const got = await getPdf(id, query)
    expect(got.res.status).toBe(400)
    expect(got.json().code).toBe('VALIDATION_ERROR')
    expect(got.json().details).toContainEqual(expect.objectContaining({ field }))
  })

  test('another company\'s DTE, an unknown id and a malformed id are 404 NOT_FOUND', async () => {
    for (const [path, key] of [
      [id, other.readKey],
      [crypto.randomUUID(), t.readKey],
      ['no-es-un-uuid', t.readKey],
    ] as const) {
      const got = await getPdf(path, '', key)
      expect(got.res.status).toBe(404)
      expect(got.json().code).toBe('NOT_FOUND')
    }
  })

  test('without a credential: 401', async () => {
    expect((await fetch(`${s.url}${DTE}/${id}/pdf`)).status).toBe(401)
  })

  test('a read-only key may print; so may a bearer token', async () => {
    expect((await getPdf(id, '', t.readKey)).res.status).toBe(200)
    const res = await fetch(`${s.url}${DTE}/${id}/pdf`, { headers: { Authorization: `Bearer ${await t.token()}` } })
    expect(res.status).toBe(200)
  })

  test('/docs/json lists descargarDTEPdf with its query parameters and application/pdf', async () => {
    const doc = (await s.request('GET', '/docs/json')).json as { paths: Record<string, Record<string, { operationId?: string; parameters?: Array<{ name: string }>; responses?: Record<string, { content?: Record<string, unknown> }> }>> }
    const op = doc.paths['/api/v1/billing/dte/{id}/pdf']?.get
    expect(op?.operationId).toBe('descargarDTEPdf')
    expect(op?.parameters?.map((p) => p.name)).toEqual(expect.arrayContaining(['formato', 'cedible']))
    expect(Object.keys(op?.responses?.['200']?.content ?? {})).toContain('application/pdf')
  })
})

describe('pages and states', () => {
  test('a 60-line invoice flows onto a second letter page; totals and timbre on the last page only', async () => {
    const detalle = Array.from({ length: 60 }, (_, i) => ({ nombre: `Tornillo galvanizado Nº ${i + 1} (caja de 100)`, cantidad: 1, precio: 1000 }))
    const dte = await issued(facturaSimple({ detalle }))
    const { bytes } = await getPdf(dte.id)
    expect(pdfPageSizes(bytes)).toHaveLength(2)
    const [first, last] = [pdfText(bytes, 1), pdfText(bytes, 2)]
    expect(first).toContain('Nº 1 (caja de 100)')
    expect(last).toContain('Nº 60 (caja de 100)')
    expect(first).not.toMatch(/TOTAL/)
    expect(first).not.toContain('Timbre Electrónico SII')
    expect(last).toMatch(new RegExp(`TOTAL\\s+\\$ ${dotted(dte.monto_total).replace(/\./g, '\\.')}`))
    expect(decodePdf417(rasterize(bytes, 2))).toEqual(tedBytesOf(await storedXml(dte.id)))
  }, 20_000)

  test('a rechazado DTE prints "RECHAZADO POR EL SII"; the same DTE firmado does not', async () => {
    // auto_send false: the submission job must not take it out of firmado before the state is set below.
    const dte = await issued(facturaSimple({ auto_send: false }))
    expect(pdfText((await getPdf(dte.id)).bytes)).not.toContain('RECHAZADO')
    // The SII's verdict arrives through the tracking job; here the state is set where that job would set it.
    expect(updateDteIf(s.server.deps.store.db, dte.id, ['firmado'], { estado: 'rechazado' })).toBeDefined()
    for (const query of ['', '?formato=termico']) expect(pdfText((await getPdf(dte.id, query)).bytes)).toContain('RECHAZADO POR EL SII')
  })
})

describe('compiled binary (dist/timbre)', () => {
  test('pdf-lib and bwip-js work inside it: a demo invoice prints, and its barcode decodes to the stored TED', async () => {
    await ensureBinary()
    const dir = tempDir('timbre-pdf-bin-')
    const p = await startServe(['--data-dir', dir, '--demo', '--sii', 'simulado'])
    try {
      const deadline = Date.now() + 10_000
      while (!p.stderr().includes('curl') && Date.now() < deadline) await Bun.sleep(20)
      const key = /X-Api-Key: (timbre_[\w-]+)/.exec(p.stderr())![1]!
      const headers = { 'X-Api-Key': key, 'Idempotency-Key': crypto.randomUUID(), 'content-type': 'application/json' }
      const created = await fetch(`${p.url}${DTE}`, { method: 'POST', headers, body: JSON.stringify(facturaSimple()) })
      expect(created.status).toBe(201)
      const { id, folio } = (await created.json()) as { id: string; folio: number }
      const res = await fetch(`${p.url}${DTE}/${id}/pdf?cedible=true`, { headers: { 'X-Api-Key': key } })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-disposition')).toBe(`inline; filename="DTE-33-F${folio}.pdf"`)
      const pdf = new Uint8Array(await res.arrayBuffer())
      expect(squash(pdfText(pdf, 2, { layout: false }))).toContain('CEDIBLE')
      const xml = new Uint8Array(await (await fetch(`${p.url}${DTE}/${id}/xml`, { headers: { 'X-Api-Key': key } })).arrayBuffer())
      expect(decodePdf417(rasterize(pdf, 1))).toEqual(tedBytesOf(xml))
    } finally {
      expect(await p.terminate()).toBe(0)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000)
})
