// Spec 2.17, 4.6 with DESIGN §8, §12: every producto operation and error against the real server. What every catalog
// shares (codigo uniqueness, search, pagination, soft delete, tenancy, read-only keys, the OpenAPI document) is
// test/http/catalog-suite.ts run on this table; here only what is the producto's own: precio_unitario, unidad,
// es_exento, productos without codigo, the categoria filter, search by code, issued DTEs untouched.
import { describe, expect, test } from 'bun:test'
import { facturaSimple, issue, provisionIssuer } from '../support/issuance'
import { testRut } from '../support/server'
import { catalogSuite, ids } from './catalog-suite'

const long = (n: number) => 'x'.repeat(n + 1)
let seq = 0

const p = catalogSuite({
  plural: 'productos',
  singular: 'producto',
  validBody: () => ({ nombre: `Producto ${++seq}` }),
  nameField: 'nombre',
  created: {
    says: 'unidad UN and es_exento false by default',
    make: () => ({
      body: { nombre: 'Martillo carpintero 16 oz', precio_unitario: 8990 },
      stored: { codigo: null, nombre: 'Martillo carpintero 16 oz', descripcion: null, precio_unitario: 8990, unidad: 'UN', es_exento: false, categoria: null },
    }),
  },
  atMaximum: () => ({
    codigo: 'C'.repeat(50),
    nombre: 'N'.repeat(200),
    descripcion: 'D'.repeat(1000),
    precio_unitario: 999_999_999_999,
    unidad: 'M3',
    es_exento: true,
    categoria: 'K'.repeat(100),
  }),
  unique: {
    field: 'codigo',
    code: 'PRODUCTO_CODIGO_EXISTS',
    idKey: 'producto_id',
    // One length for every code: no code is a fragment of another, so a search by code finds that one only.
    value: () => `SKU-${crypto.randomUUID().slice(0, 8)}`,
  },
  createErrors: [
    ['codigo', 'TOO_LONG', { codigo: long(50) }],
    ['codigo', 'REQUIRED', { codigo: '' }],
    ['descripcion', 'TOO_LONG', { descripcion: long(1000) }],
    ['descripcion', 'INVALID_VALUE', { descripcion: 'Ω' }],
    ['categoria', 'TOO_LONG', { categoria: long(100) }],
    ['precio_unitario', 'OUT_OF_RANGE', { precio_unitario: -1 }],
    ['precio_unitario', 'OUT_OF_RANGE', { precio_unitario: 9_007_199_254_740_992 }],
    ['precio_unitario', 'INVALID_TYPE', { precio_unitario: 10.5 }],
    ['precio_unitario', 'INVALID_TYPE', { precio_unitario: '100' }],
    ['unidad', 'INVALID_VALUE', { unidad: 'CAJA' }],
    ['unidad', 'INVALID_VALUE', { unidad: 'un' }],
    ['unidad', 'INVALID_VALUE', { unidad: null }],
    ['es_exento', 'INVALID_TYPE', { es_exento: 'true' }],
    ['es_exento', 'INVALID_TYPE', { es_exento: null }],
    ['stock', 'NOT_ALLOWED', { stock: 3 }],
  ],
  allErrorsAtOnce: {
    body: { nombre: '', precio_unitario: -5, unidad: 'XX', descripcion: '€uro' },
    errors: ['descripcion:INVALID_VALUE', 'nombre:REQUIRED', 'precio_unitario:OUT_OF_RANGE', 'unidad:INVALID_VALUE'],
  },
  update: {
    before: { codigo: 'PUT-1', descripcion: 'Desc', precio_unitario: 100, categoria: 'Ferretería' },
    change: { precio_unitario: 150, unidad: 'KG' },
    clear: { codigo: null, descripcion: null, precio_unitario: null, categoria: null },
  },
  updateErrors: {
    before: { precio_unitario: 10 },
    rows: [
      ['unidad', 'INVALID_VALUE', { unidad: null }],
      ['es_exento', 'INVALID_TYPE', { es_exento: null }],
      ['precio_unitario', 'OUT_OF_RANGE', { precio_unitario: -1 }],
    ],
  },
  listErrors: [['categoria=', 'categoria']],
  search: {
    records: {
      cafe: { nombre: 'Café de Grano Orgánico 1 kg', codigo: 'CAF-001' },
      te: { nombre: 'Té Verde en Hojas', codigo: 'TÉ-Ñ42' },
      asesoria: { nombre: 'Asesoría Contable Mensual', codigo: null, categoria: 'Servicios' },
    },
    otherCompany: { record: { nombre: 'Café de Grano Orgánico (otra empresa)', codigo: 'CAF-001' }, query: 'otra empresa' },
    finds: [
      ['cafe', 'cafe'],
      ['CAFÉ DE GRANO', 'cafe'],
      ['organico', 'cafe'],
      ['caf-001', 'cafe'],
      ['001', 'cafe'],
      ['te-n4', 'te'],
      ['TÉ-Ñ42', 'te'],
      ['verde', 'te'],
      ['asesoria contable', 'asesoria'],
      ['ñ4', 'te'],
    ],
    findsShow: 'name or code, case and accents ignored',
  },
  openapi: { required: ['nombre'], property: ['precio_unitario', { type: 'integer', minimum: 0 }] },
})

describe('POST /productos: the producto’s own', () => {
  test('a precio_unitario of 0 is a price', async () => {
    expect((await p.post({ nombre: 'Gratis', precio_unitario: 0 })).json.precio_unitario).toBe(0)
  })

  test.each(['UN', 'HR', 'KG', 'LT', 'MT', 'M2', 'M3'])('unidad %s is accepted', async (unidad) => {
    expect((await p.create({ unidad })).unidad).toBe(unidad)
  })

  test('productos without codigo never clash', async () => {
    expect((await p.post({ nombre: 'Sin código' })).status).toBe(201)
    expect((await p.post({ nombre: 'Sin código' })).status).toBe(201)
    expect((await p.post({ nombre: 'Sin código', codigo: null })).status).toBe(201)
  })
})

describe('PUT /productos/{id}: the codigo', () => {
  test("a codigo of another live producto → 409 with its id; its own codigo, or a deleted one's, is fine", async () => {
    const a = await p.create({ codigo: 'PUT-A' })
    const b = await p.create({ codigo: 'PUT-B' })
    const clash = await p.put(b.id, { codigo: 'PUT-A' })
    expect(clash.status).toBe(409)
    expect(clash.json.code).toBe('PRODUCTO_CODIGO_EXISTS')
    expect(clash.json.context.producto_id).toBe(a.id)
    expect((await p.put(b.id, { codigo: 'PUT-B', nombre: 'Renombrado' })).status).toBe(200)
    await p.del(a.id)
    expect((await p.put(b.id, { codigo: 'PUT-A' })).json.codigo).toBe('PUT-A')
  })
})

describe('DELETE /productos/{id}: issued DTEs', () => {
  test('a DTE issued with a producto is untouched by editing and deleting it', async () => {
    const tenant = await p.s.tenant(testRut())
    await provisionIssuer(p.s, tenant, { tipos: [33], folios: 5 })
    const producto = await p.create({ codigo: 'MART-16', nombre: 'Martillo carpintero 16 oz', precio_unitario: 8990, unidad: 'UN' }, tenant)
    const linea = { nombre: producto.nombre, cantidad: 2, precio: producto.precio_unitario, unidad: producto.unidad }
    const dte = await issue(p.s, tenant, facturaSimple({ detalle: [linea], auto_send: false }))
    expect(dte.status).toBe(201)
    const before = await p.s.request('GET', `/api/v1/billing/dte/${dte.json.id}?include_xml=true`, { headers: { 'X-Api-Key': tenant.readKey } })
    await p.put(producto.id, { nombre: 'Martillo nuevo', precio_unitario: 9990 }, tenant)
    expect((await p.del(producto.id, tenant)).status).toBe(204)
    const after = await p.s.request('GET', `/api/v1/billing/dte/${dte.json.id}?include_xml=true`, { headers: { 'X-Api-Key': tenant.readKey } })
    expect(after.json).toEqual(before.json)
    expect(after.json.detalle[0]).toMatchObject({ nombre: 'Martillo carpintero 16 oz', precio: 8990 })
  })
})

describe('GET /productos: the categoria filter', () => {
  test('newest first; a walk by cursor sees every producto once; categoria filters exactly', async () => {
    const tenant = await p.s.tenant(testRut())
    const made: Array<{ id: string; categoria: string }> = []
    for (let i = 0; i < 9; i++) {
      const categoria = i % 3 === 0 ? 'Herramientas' : 'Insumos'
      made.push({ id: (await p.create({ categoria }, tenant)).id, categoria })
    }
    await p.del(made[4]!.id, tenant)
    const live = made.filter((_, i) => i !== 4).reverse()
    expect(await p.walk('', tenant, 2)).toEqual(live.map((x) => x.id))
    expect(await p.walk('&categoria=Herramientas', tenant, 2)).toEqual(live.filter((x) => x.categoria === 'Herramientas').map((x) => x.id))
    expect(await p.walk(`&categoria=${encodeURIComponent('Insumos')}`, tenant, 2)).toEqual(live.filter((x) => x.categoria === 'Insumos').map((x) => x.id))
    expect((await p.get('?categoria=insumos', tenant)).json).toEqual({ data: [], next_cursor: null })
    expect((await p.get('', tenant)).json.data).toHaveLength(8)
    expect(ids((await p.get('?limit=100', p.other)).json.data)).not.toContain(live[0]!.id)
  })
})

describe('GET /productos/search: by code and fragment', () => {
  test('a fragment in several productos lists them newest first; limit caps it', async () => {
    const { cafe, te, asesoria } = p.records
    expect(await p.found('de')).toEqual([te!.id, cafe!.id])
    expect(await p.found('e', '&limit=2')).toEqual([asesoria!.id, te!.id])
    expect(await p.found('e')).toEqual([asesoria!.id, te!.id, cafe!.id])
  })

  test('a renamed producto is found by its new name and code only', async () => {
    const tenant = await p.s.tenant(testRut())
    const x = await p.create({ nombre: 'Tornillo Hexagonal', codigo: 'TOR-1' }, tenant)
    await p.put(x.id, { nombre: 'Perno Hexagonal', codigo: 'PER-1' }, tenant)
    expect(await p.found('tornillo', '', tenant)).toEqual([])
    expect(await p.found('tor-1', '', tenant)).toEqual([])
    expect(await p.found('perno', '', tenant)).toEqual([x.id])
    expect(await p.found('per-1', '', tenant)).toEqual([x.id])
  })
})
