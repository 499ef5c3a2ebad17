// Spec 4.1 listarDTEs / obtenerDTE / descargarDTEXml, spec 4.7 pagination, DESIGN §6 enviar, tenancy.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { santiagoDate } from '../../src/clock'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const DTE = '/api/v1/billing/dte'
let s: TestServer
let t: Tenant
let other: Tenant
const issued: Array<{ id: string; folio: number; tipo: number; rut: string; fecha: string }> = []
const today = santiagoDate(new Date())
const daysAgo = (n: number) => santiagoDate(new Date(Date.now() - n * 86_400_000))

beforeAll(async () => {
  s = await startTestServer()
  t = await s.tenant(testRut())
  other = await s.tenant(testRut())
  await provisionIssuer(s, t, { tipos: [33, 34, 39], folios: 100 })
  await provisionIssuer(s, other, { tipos: [33], folios: 10 })
  const plan: Array<[number, string, string]> = [
    [33, '76086428-5', daysAgo(3)],
    [33, '96874030-K', daysAgo(2)],
    [34, '76086428-5', daysAgo(2)],
    [39, '66666666-6', daysAgo(1)],
    [33, '76086428-5', daysAgo(1)],
    [33, '96874030-K', today],
    [34, '96874030-K', today],
  ]
  for (const [tipo, rut, fecha] of plan) {
    const detalle = tipo === 34 ? [{ nombre: 'Asesoría contable', cantidad: 1, precio: 50000 }] : [{ nombre: 'Producto', cantidad: 2, precio: 1190 }]
    const res = await issue(s, t, facturaSimple({ tipo_dte: tipo as 33, fecha_emision: fecha, receptor: { rut, razon_social: 'Cliente S.A.', giro: 'Comercio', direccion: 'Calle 1', comuna: 'Santiago', ciudad: 'Santiago' }, detalle, auto_send: false }))
    if (res.status !== 201) throw new Error(res.text)
    issued.push({ id: res.json.id, folio: res.json.folio, tipo, rut, fecha })
  }
})
afterAll(() => s.stop())

const list = (query = '', tenant = t) => s.request('GET', `${DTE}${query}`, { headers: { 'X-Api-Key': tenant.readKey } })

describe('GET /dte', () => {
  test('newest first, `items`, `next_cursor` null, `total_count`', async () => {
    const res = await list()
    expect(res.status).toBe(200)
    expect(res.json.items.map((d: { id: string }) => d.id)).toEqual(issued.map((d) => d.id).reverse())
    expect(res.json.next_cursor).toBeNull()
    expect(res.json.total_count).toBe(issued.length)
    expect(res.json.items[0].xml_documento).toBeUndefined()
  })

  test('a pagination walk with filters sees every match once, total_count on every page', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const res = await list(`?tipo_dte=33&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      expect(res.json.total_count).toBe(4)
      expect(res.json.items.length).toBeLessThanOrEqual(2)
      seen.push(...res.json.items.map((d: { id: string }) => d.id))
      cursor = res.json.next_cursor
      pages++
    } while (cursor)
    expect(pages).toBe(2)
    expect(seen).toEqual(issued.filter((d) => d.tipo === 33).map((d) => d.id).reverse())
  })

  test.each([
    ['?rut_receptor=96.874.030-k', (d: (typeof issued)[number]) => d.rut === '96874030-K'],
    ['?rut_receptor=96874030k', (d: (typeof issued)[number]) => d.rut === '96874030-K'],
    [`?fecha_desde=${daysAgo(2)}&fecha_hasta=${daysAgo(1)}`, (d: (typeof issued)[number]) => d.fecha >= daysAgo(2) && d.fecha <= daysAgo(1)],
    [`?fecha_desde=${today}`, (d: (typeof issued)[number]) => d.fecha === today],
    ['?estado=firmado&tipo_dte=34', (d: (typeof issued)[number]) => d.tipo === 34],
    ['?estado=aceptado', () => false],
  ])('%s', async (query, match) => {
    const res = await list(query)
    expect(res.status).toBe(200)
    const expected = issued.filter(match).map((d) => d.id).reverse()
    expect(res.json.items.map((d: { id: string }) => d.id)).toEqual(expected)
    expect(res.json.total_count).toBe(expected.length)
  })

  test.each([
    ['?limit=0', 'limit', 'OUT_OF_RANGE'],
    ['?limit=101', 'limit', 'OUT_OF_RANGE'],
    ['?cursor=xyz', 'cursor', 'INVALID_FORMAT'],
    ['?tipo_dte=99', 'tipo_dte', 'INVALID_VALUE'],
    ['?estado=anulado', 'estado', 'INVALID_VALUE'],
    ['?rut_receptor=12345678-9', 'rut_receptor', 'INVALID_RUT'],
    ['?fecha_desde=2026-13-45x', 'fecha_desde', 'INVALID_FORMAT'],
    [`?fecha_desde=${today}&fecha_hasta=${daysAgo(1)}`, 'fecha_desde', 'INCONSISTENT'],
  ])('%s → 400 at %s (%s)', async (query, field, code) => {
    const res = await list(query)
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual(expect.objectContaining({ field, code }))
  })

  test('limit defaults to 20 and accepts 100', async () => {
    expect((await list('?limit=100')).status).toBe(200)
    expect((await list()).json.items.length).toBe(Math.min(20, issued.length))
  })
})

describe('GET /dte/{id} and /xml', () => {
  test('the XML is the standalone signed DTE, ISO-8859-1, with a file name', async () => {
    const res = await fetch(`${s.url}${DTE}/${issued[0]!.id}/xml`, { headers: { 'X-Api-Key': t.readKey } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/xml; charset=ISO-8859-1')
    expect(res.headers.get('content-disposition')).toBe(`inline; filename="DTE-33-F${issued[0]!.folio}.xml"`)
    const text = Buffer.from(await res.arrayBuffer()).toString('latin1')
    expect(text.startsWith('<?xml version="1.0" encoding="ISO-8859-1"?>')).toBe(true)
    expect(text).toContain('<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">')
  })

  test("another company's DTE is 404 everywhere and absent from its list; a malformed id is 404", async () => {
    const id = issued[0]!.id
    for (const path of [`${DTE}/${id}`, `${DTE}/${id}/xml`])
      expect((await s.request('GET', path, { headers: { 'X-Api-Key': other.readKey } })).status).toBe(404)
    expect((await s.request('POST', `${DTE}/${id}/enviar`, { headers: { 'X-Api-Key': other.writeKey } })).status).toBe(404)
    expect((await list('', other)).json.total_count).toBe(0)
    for (const path of [`${DTE}/123`, `${DTE}/${crypto.randomUUID()}`]) {
      const res = await s.request('GET', path, { headers: { 'X-Api-Key': t.readKey } })
      expect(res.status).toBe(404)
      expect(res.json.code).toBe('NOT_FOUND')
    }
  })
})

describe('POST /dte/{id}/enviar', () => {
  test('firmado → 202 with the record in enviando; a second time → 409 DTE_NOT_SENDABLE', async () => {
    const id = issued[1]!.id
    const res = await s.request('POST', `${DTE}/${id}/enviar`, { headers: { 'X-Api-Key': t.writeKey } })
    expect(res.status).toBe(202)
    expect(res.json).toMatchObject({ id, estado: 'enviando' })
    const again = await s.request('POST', `${DTE}/${id}/enviar`, { headers: { 'X-Api-Key': t.writeKey } })
    expect(again.status).toBe(409)
    expect(again.json).toMatchObject({ code: 'DTE_NOT_SENDABLE', context: { dte_id: id, estado: 'enviando' } })
    expect((await list('?estado=enviando')).json.items.map((d: { id: string }) => d.id)).toEqual([id])
  })

  test('total_count follows the estado change: one less firmado, one more enviando, for every filter it matches', async () => {
    const { id, rut, fecha, tipo } = issued[4]!
    const filters = [`?rut_receptor=${rut}`, `?fecha_desde=${fecha}&fecha_hasta=${fecha}`, `?tipo_dte=${tipo}&rut_receptor=${rut}&fecha_desde=${fecha}`, '']
    const count = async (q: string) => (await list(q)).json.total_count as number
    const before = await Promise.all(filters.flatMap((f) => [count(`${f}${f ? '&' : '?'}estado=firmado`), count(`${f}${f ? '&' : '?'}estado=enviando`)]))
    expect((await s.request('POST', `${DTE}/${id}/enviar`, { headers: { 'X-Api-Key': t.writeKey } })).status).toBe(202)
    const after = await Promise.all(filters.flatMap((f) => [count(`${f}${f ? '&' : '?'}estado=firmado`), count(`${f}${f ? '&' : '?'}estado=enviando`)]))
    expect(after).toEqual(before.map((n, i) => (i % 2 === 0 ? n - 1 : n + 1)))
    const page = await list(`?estado=enviando&rut_receptor=${rut}&fecha_desde=${fecha}&fecha_hasta=${fecha}`)
    expect(page.json.items.map((d: { id: string }) => d.id)).toContain(id)
  })

  test('a read-only key cannot ask for submission', async () => {
    expect((await s.request('POST', `${DTE}/${issued[2]!.id}/enviar`, { headers: { 'X-Api-Key': t.readKey } })).status).toBe(403)
  })
})
