// Exports in a foreign currency through the real server (issue 13 items 1 and 2; DESIGN §12 "Exports"): `precio` takes up
// to 4 decimals in a foreign currency and none in pesos; the XML carries PrcItem with its decimals and MntTotal in the
// currency (valid against DTE_v10.xsd, signed, TED verifying); the record adds `moneda` and `monto_total_moneda` beside
// the peso `monto_total`; the PDF prints the decimal price; migration 0007 fills both columns of older exports from
// their stored XML.
import { beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { MIGRATIONS } from '../../src/db/migrations.gen'
import { openDatabase } from '../../src/db/open'
import type { EmitirDte } from '../../src/domain/emision'
import { verifyTed } from '../../src/xml/ted'
import { pdfText } from '../unit/pdf/pdf-tools'
import { dteCount, facturaSimple, issue, provisionIssuer, storedXml, useIssuer } from '../support/issuance'
import { startTestServer, tempDir, type Tenant, testRut, type TestServer } from '../support/server'
import { schemaErrors, xmlsec1Verifies } from '../support/xml-tools'

const DTE = '/api/v1/billing/dte'
let s: TestServer
let t: Tenant

useIssuer((server, tenant) => {
  s = server
  t = tenant
}, { folios: 50, tipos: [33, 110, 111, 112] })

const RECEPTOR = { rut: '55555555-5', razon_social: 'Andes Importers LLC', direccion: '1200 Brickell Ave, Suite 300', ciudad: 'Miami' }
const ADUANA = {
  nacionalidad: '225', forma_pago_exp: 2, modalidad_venta: 1, clausula_venta: 'FOB', total_clausula: 1250, via_transporte: 1,
  puerto_embarque: '906', puerto_desembarque: 'Port Everglades', total_bultos: 1, pais_recep: '225', pais_dest: '225',
}

function exportacion(detalle: EmitirDte['detalle'], overrides: Partial<EmitirDte> = {}, moneda: Partial<NonNullable<EmitirDte['export_data']>> = {}): EmitirDte {
  return {
    tipo_dte: 110,
    receptor: RECEPTOR,
    detalle,
    export_data: { ...ADUANA, tpo_moneda: 'DOLAR USA', tpo_cambio: 950.25, ...moneda },
    ...overrides,
  }
}

const get = async (id: string) => (await s.request('GET', `${DTE}/${id}`, { headers: { 'X-Api-Key': t.readKey } })).json
const xmlOf = (id: string) => storedXml(s, t, id)
const count = () => dteCount(s, t)
const tag = (xml: string, name: string) => [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, 'g'))].map((m) => m[1])

describe('a 110 in DOLAR USA at USD 12.50', () => {
  let id: string
  let xml: string
  let bytes: Uint8Array

  beforeAll(async () => {
    const res = await issue(s, t, exportacion([{ nombre: 'Horas de consultoría', cantidad: 100, precio: 12.5, unidad: 'HR' }]))
    expect(res.status).toBe(201)
    // Spec 2.2: the issuance response's monto_total is pesos: round(1250 × 950.25) = round(1 187 812.5), half away from zero.
    expect(res.json.monto_total).toBe(1_187_813)
    id = res.json.id
    bytes = await xmlOf(id)
    xml = Buffer.from(bytes).toString('latin1')
  })

  test('201: the XML is valid against DTE_v10.xsd, its signature verifies with xmlsec1 and its TED verifies', () => {
    expect(schemaErrors(bytes, 110)).toEqual([])
    expect(xmlsec1Verifies(bytes, 110)).toBe(true)
    expect(verifyTed(xml)).toBe(true)
  })

  test('PrcItem 12.5, MontoItem and MntTotal 1250 in the currency; OtraMoneda and the TED as docs/sii-protocol.md §2.6, §3.1 say', () => {
    expect(tag(xml, 'PrcItem')).toEqual(['12.5'])
    expect(tag(xml, 'MontoItem')).toEqual(['1250'])
    expect(tag(xml, 'TpoMoneda')).toEqual(['DOLAR USA', 'PESO CL'])
    expect(tag(xml, 'MntTotal')).toEqual(['1250'])
    expect(tag(xml, 'MntTotOtrMnda')).toEqual(['1187813'])
    expect(tag(xml, 'MNT')).toEqual(['1250'])
  })

  test('GET /dte/{id}: moneda and monto_total_moneda beside the peso monto_total; detalle keeps the price as sent', async () => {
    const r = await get(id)
    expect(r).toMatchObject({ tipo_dte: 110, monto_total: 1_187_813, monto_exento: 1_187_813, moneda: 'DOLAR USA', monto_total_moneda: 1250 })
    expect(r.detalle[0].precio).toBe(12.5)
    const listed = (await s.request('GET', `${DTE}?tipo_dte=110`, { headers: { 'X-Api-Key': t.readKey } })).json.items.find((d: any) => d.id === id)
    expect(listed).toMatchObject({ moneda: 'DOLAR USA', monto_total_moneda: 1250 })
  })

  test('the PDF prints the price with its decimals, the currency and the total in it', async () => {
    const pdf = new Uint8Array(await (await fetch(`${s.url}${DTE}/${id}/pdf`, { headers: { 'X-Api-Key': t.readKey } })).arrayBuffer())
    const text = pdfText(pdf, undefined, { layout: false }).replace(/\s+/g, ' ')
    // Amounts in the currency print bare beside its name (src/pdf/format.ts formatMonto); pesos carry the $.
    expect(text).toContain('Moneda: DOLAR USA')
    expect(text).toMatch(/Precio unitario Monto 12,5 1\.250 /)
    expect(text).toContain('TOTAL DOLAR USA')
    expect(text).toContain('$ 1.187.813')
  })
})

describe('decimal prices with discounts and surcharges', () => {
  test('line discount in whole units, 4-decimal price, a % global surcharge: exact totals, valid XML', async () => {
    const res = await issue(s, t, exportacion(
      [
        // 3 × 12.5 = 37.5; 10 % → DescuentoMonto round(3.75) = 4 whole units (DESIGN §12): MontoItem 33.5.
        { nombre: 'Horas de consultoría', cantidad: 3, precio: 12.5, descuento_pct: 10 },
        // 7 × 0.1234 = 0.8638.
        { nombre: 'Tornillo inoxidable', cantidad: 7, precio: 0.1234 },
        // A line total with decimals (monto_item) in the currency.
        { nombre: 'Embalaje', monto_item: 10.05 },
      ],
      // +5 % of 44.4138 = 2.22069 → 2.2207 (4 decimals): MntTotal 46.6345.
      { descuentos_globales: [{ tpo_mov: 'R', tpo_valor: '%', valor_dr: 5, glosa_dr: 'Seguro' }] },
      { tpo_cambio: 1000 },
    ))
    expect(res.status).toBe(201)
    const bytes = await xmlOf(res.json.id)
    const xml = Buffer.from(bytes).toString('latin1')
    expect(schemaErrors(bytes, 110)).toEqual([])
    expect(xmlsec1Verifies(bytes, 110)).toBe(true)
    expect(verifyTed(xml)).toBe(true)
    expect(tag(xml, 'PrcItem')).toEqual(['12.5', '0.1234'])
    expect(tag(xml, 'DescuentoMonto')).toEqual(['4'])
    expect(tag(xml, 'MontoItem')).toEqual(['33.5', '0.8638', '10.05'])
    expect(tag(xml, 'MntTotal')).toEqual(['46.6345'])
    expect(tag(xml, 'MNT')).toEqual(['46.6345'])
    expect(await get(res.json.id)).toMatchObject({ monto_total: 46_635, moneda: 'DOLAR USA', monto_total_moneda: 46.6345 })
  })
})

describe('decimals where the currency does not take them → 400, nothing stored', () => {
  test.each([
    ['precio 12.5 on a 33', 'detalle.0.precio', 'INVALID_TYPE', facturaSimple({ detalle: [{ nombre: 'Martillo', cantidad: 1, precio: 12.5 }] })],
    ['monto_item 10.5 on a 33', 'detalle.0.monto_item', 'INVALID_TYPE', facturaSimple({ detalle: [{ nombre: 'Martillo', monto_item: 10.5 }] })],
    ['a 110 in PESO CL with precio 12.5', 'detalle.0.precio', 'INVALID_TYPE',
      exportacion([{ nombre: 'Horas', cantidad: 100, precio: 12.5 }], {}, { tpo_moneda: 'PESO CL', tpo_cambio: undefined })],
    ['precio with 5 decimals in DOLAR USA', 'detalle.0.precio', 'INVALID_FORMAT', exportacion([{ nombre: 'Horas', cantidad: 100, precio: 12.12345 }])],
    ['monto_item with 5 decimals in DOLAR USA', 'detalle.0.monto_item', 'INVALID_FORMAT', exportacion([{ nombre: 'Horas', monto_item: 0.00001 }])],
  ] as const)('%s → 400 %s %s', async (_, field, code, body) => {
    const before = await count()
    const res = await issue(s, t, body)
    expect(res.status).toBe(400)
    expect(res.json.code).toBe('VALIDATION_ERROR')
    expect(res.json.details).toContainEqual(expect.objectContaining({ field, code, message: expect.any(String) }))
    expect(await count()).toBe(before)
  })

  test('the message says why in Spanish', async () => {
    const pesos = await issue(s, t, facturaSimple({ detalle: [{ nombre: 'Martillo', cantidad: 1, precio: 12.5 }] }))
    expect(pesos.json.details).toContainEqual(expect.objectContaining({ field: 'detalle.0.precio', message: expect.stringContaining('En pesos, precio es un número entero') }))
    const usd = await issue(s, t, exportacion([{ nombre: 'Horas', cantidad: 1, precio: 12.12345 }]))
    expect(usd.json.details).toContainEqual(expect.objectContaining({ field: 'detalle.0.precio', message: expect.stringContaining('como máximo 4 decimales') }))
  })

  test('the amount limits still hold with decimal prices: a MontoItem past 14 integer digits is 400 OUT_OF_RANGE', async () => {
    const res = await issue(s, t, exportacion([{ nombre: 'Horas', cantidad: 1000, precio: 999999999999.9999 }]))
    expect(res.status).toBe(400)
    expect(res.json.details).toContainEqual(expect.objectContaining({ field: 'detalle.0.cantidad', code: 'OUT_OF_RANGE' }))
  })
})

describe('domestic documents', () => {
  test('a 33 has moneda and monto_total_moneda null', async () => {
    const res = await issue(s, t, facturaSimple())
    expect(res.status).toBe(201)
    expect(await get(res.json.id)).toMatchObject({ moneda: null, monto_total_moneda: null, monto_total: 37428 })
  })
})

describe('migration 0007 backfills exports issued before it from their signed XML', () => {
  test('a database at 0006 with exports gets moneda and monto_total_moneda from TpoMoneda and the first MntTotal of Totales', async () => {
    const dataDir = tempDir()
    const old = await startTestServer({ dataDir })
    const tenant = await old.tenant(testRut())
    await provisionIssuer(old, tenant, { folios: 5, tipos: [33, 110, 112] })
    const eur = await issue(old, tenant, exportacion([{ nombre: 'Añejo reserva «Ñuble»', cantidad: 3, precio: 1234.5678 }], {}, { tpo_moneda: 'EURO', tpo_cambio: 1021.17 }))
    const clp = await issue(old, tenant, exportacion([{ nombre: 'Horas', cantidad: 100, precio: 12 }], {}, { tpo_moneda: 'PESO CL', tpo_cambio: undefined }))
    const nc = await issue(old, tenant, exportacion([{ nombre: 'Horas', cantidad: 10, precio: 12.5 }], {
      tipo_dte: 112,
      referencias: [{ tipo_doc_ref: 110, folio_ref: 1, fecha_ref: '2025-06-25', codigo_ref: 3, razon_ref: 'Horas no prestadas' }],
    }))
    const domestic = await issue(old, tenant, facturaSimple())
    for (const r of [eur, clp, nc, domestic]) expect(r.status).toBe(201)
    const columns = (db: Database) => db.query('SELECT id, moneda, monto_total_moneda FROM dtes ORDER BY id').all()
    const atIssuance = columns(old.server.deps.store.sqlite)
    await old.stop()

    // Back to the schema of 0006: without the two columns, 0007 not applied.
    const file = join(dataDir, 'timbre.db')
    const raw = new Database(file)
    raw.run('ALTER TABLE dtes DROP COLUMN moneda')
    raw.run('ALTER TABLE dtes DROP COLUMN monto_total_moneda')
    // The migrations after 0007 go too: their tables dropped, their records deleted, so the store is at 0006 again.
    const since0007 = MIGRATIONS.slice(MIGRATIONS.findIndex((m) => m.tag === '0007_dte_moneda'))
    // Newest first, as a rollback goes: a column added to an older table is dropped while every trigger it meets still
    // has its tables.
    const madeSince = new Set(since0007.flatMap((m) => [...m.sql.matchAll(/CREATE TABLE `([^`]+)`/g)].map(([, table]) => table!)))
    for (const m of since0007.slice(1).reverse()) {
      // The columns they add to tables older than 0007 (0018's on cafs); a newer table goes whole.
      for (const [, table, column] of m.sql.matchAll(/ALTER TABLE `([^`]+)` ADD `([^`]+)`/g))
        if (!madeSince.has(table!)) raw.run(`ALTER TABLE "${table}" DROP COLUMN "${column}"`)
      for (const [, table] of m.sql.matchAll(/CREATE TABLE `([^`]+)`/g)) raw.run(`DROP TABLE IF EXISTS "${table}"`)
      // And the new indexes they put on older tables (0011's on dtes, 0012's on webhook_deliveries); an index a migration
      // rebuilds (drops, then creates again, like 0010's) stays, since replaying that migration drops it first.
      for (const [, index] of m.sql.matchAll(/CREATE INDEX `([^`]+)` ON `[^`]+`/g))
        if (!m.sql.includes(`DROP INDEX \`${index}\``)) raw.run(`DROP INDEX IF EXISTS "${index}"`)
    }
    for (const m of since0007) raw.run('DELETE FROM __drizzle_migrations WHERE created_at = ?', [m.when])
    raw.close()

    const store = openDatabase(dataDir)
    try {
      expect(store.schema).toMatchObject({ pending: 0, databaseVersion: MIGRATIONS.at(-1)!.tag })
      expect(columns(store.sqlite)).toEqual(atIssuance)
      const byId = (id: string) => store.sqlite.query('SELECT moneda, monto_total_moneda FROM dtes WHERE id = ?').get(id)
      expect(byId(eur.json.id)).toEqual({ moneda: 'EURO', monto_total_moneda: '3703.7034' })
      expect(byId(clp.json.id)).toEqual({ moneda: 'PESO CL', monto_total_moneda: '1200' })
      expect(byId(nc.json.id)).toEqual({ moneda: 'DOLAR USA', monto_total_moneda: '125' })
      expect(byId(domestic.json.id)).toEqual({ moneda: null, monto_total_moneda: null })
    } finally {
      store.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 30_000)
})
