// Spec 2.16, 4.5 with DESIGN §8, §12: every cliente operation and error against the real server. What every catalog
// shares (pagination, soft delete, uniqueness after delete, tenancy, read-only keys, the OpenAPI document) is
// test/http/catalog-suite.ts run on this table; here only what is the cliente's own: the RUT's spellings, search by RUT.
import { describe, expect, test } from 'bun:test'
import { testRut } from '../support/server'
import { catalogSuite } from './catalog-suite'

const dotted = (rut: string) => {
  const [body, dv] = rut.split('-') as [string, string]
  return `${body.replace(/\B(?=(\d{3})+(?!\d))/g, '.')}-${dv}`
}
const long = (n: number) => 'x'.repeat(n + 1)

const atMaximum = () => ({
  rut: testRut(),
  razon_social: 'r'.repeat(200),
  giro: 'g'.repeat(200),
  direccion: 'd'.repeat(300),
  comuna: 'c'.repeat(100),
  ciudad: 'c'.repeat(100),
  email: `${'a'.repeat(64)}@${'b'.repeat(61)}.${'c'.repeat(61)}.${'d'.repeat(62)}.cl`,
  telefono: '+56 2 2345 6789' + '0'.repeat(15),
  contacto: 'k'.repeat(200),
  notas: '✓ notas internas '.repeat(117).padEnd(2000, 'x'),
})

const c = catalogSuite({
  plural: 'clientes',
  singular: 'cliente',
  validBody: () => ({ rut: testRut(), razon_social: 'Cliente de Prueba SpA' }),
  nameField: 'razon_social',
  created: {
    says: 'RUT stored canonical',
    make: () => {
      const rut = testRut()
      return {
        body: { rut: dotted(rut).toLowerCase(), razon_social: 'Comercial Ñuñoa Limitada', giro: 'Comercio', email: 'pagos@nunoa.cl' },
        stored: { rut, razon_social: 'Comercial Ñuñoa Limitada', giro: 'Comercio', direccion: null, comuna: null, ciudad: null, email: 'pagos@nunoa.cl', telefono: null, contacto: null, notas: null },
      }
    },
  },
  atMaximum,
  unique: {
    field: 'rut',
    code: 'CLIENTE_RUT_EXISTS',
    idKey: 'cliente_id',
    value: testRut,
    spellings: (rut) => [` ${rut.replace('-', '').toLowerCase()} `, dotted(rut)],
  },
  createErrors: [
    ['rut', 'INVALID_RUT', { rut: '11.111.111-2' }],
    ['rut', 'INVALID_RUT', { rut: 'no es rut' }],
    ['rut', 'REQUIRED', { rut: undefined }],
    ['rut', 'INVALID_TYPE', { rut: 76086428 }],
    ['giro', 'TOO_LONG', { giro: long(200) }],
    ['giro', 'INVALID_TYPE', { giro: 42 }],
    ['direccion', 'TOO_LONG', { direccion: long(300) }],
    ['direccion', 'INVALID_VALUE', { direccion: 'Calle → 1' }],
    ['comuna', 'TOO_LONG', { comuna: long(100) }],
    ['ciudad', 'TOO_LONG', { ciudad: long(100) }],
    ['email', 'INVALID_FORMAT', { email: 'no-es-correo' }],
    ['email', 'INVALID_FORMAT', { email: 'a@b' }],
    ['email', 'INVALID_FORMAT', { email: '' }],
    ['email', 'TOO_LONG', { email: `${'a'.repeat(250)}@b.cl` }],
    ['telefono', 'TOO_LONG', { telefono: long(30) }],
    ['contacto', 'TOO_LONG', { contacto: long(200) }],
    ['notas', 'TOO_LONG', { notas: long(2000) }],
  ],
  allErrorsAtOnce: {
    body: { rut: '12.345.678-9', razon_social: '', email: 'x', comuna: 'c'.repeat(101), extra: 1 },
    errors: ['comuna:TOO_LONG', 'email:INVALID_FORMAT', 'extra:NOT_ALLOWED', 'razon_social:REQUIRED', 'rut:INVALID_RUT'],
  },
  update: {
    before: { giro: 'Comercio', direccion: 'Calle 1', email: 'a@b.cl' },
    change: { direccion: 'Avenida 2', email: null },
    clear: { giro: null, direccion: null, comuna: null, ciudad: null, email: null, telefono: null, contacto: null, notas: null },
  },
  updateErrors: {
    before: { email: 'ok@ok.cl' },
    rows: [
      ['email', 'INVALID_FORMAT', { email: 'sin arroba' }],
      ['notas', 'TOO_LONG', { notas: 'n'.repeat(2001) }],
    ],
  },
  listErrors: [],
  search: {
    records: {
      nunoa: { rut: '76.086.428-5', razon_social: 'Ferretería Ñuñoa Limitada' },
      k: { rut: '96874030-k', razon_social: 'Constructora ÁRBOL Alto S.A.' },
      ohiggins: { rut: '97975000-5', razon_social: 'Distribuidora O’Higgins 100% Ltda.' },
      under: { rut: '12345678-5', razon_social: 'Importadora foo_bar "Citas" SpA' },
    },
    otherCompany: { record: { rut: '76.086.428-5', razon_social: 'Ferretería Ñuñoa Limitada (de otra empresa)' }, query: 'de otra empresa' },
    finds: [
      ['nunoa', 'nunoa'],
      ['Ñuñoa', 'nunoa'],
      ['ÑUÑOA', 'nunoa'],
      ['ferreteria nun', 'nunoa'],
      ['  ferretería   ñuñoa ', 'nunoa'],
      ['arbol', 'k'],
      ['árbol alto', 'k'],
      ["o'higgins", 'ohiggins'],
      ['100%', 'ohiggins'],
      ['foo_bar', 'under'],
      ['"citas"', 'under'],
    ],
    findsShow: 'name: case, accents, typographic quotes, whitespace',
  },
  openapi: { required: ['razon_social', 'rut'], property: ['direccion', { maxLength: 300, nullable: true }] },
})

describe('POST /clientes: the cliente’s own', () => {
  test('the body at the maximum has an email of 254 and notas of 2000 characters', () => {
    const body = atMaximum()
    expect(body.email.length).toBe(254)
    expect(body.notas.length).toBe(2000)
  })

  test('null reads as not sent', async () => {
    const nulls = await c.post({ rut: testRut(), razon_social: 'Sin datos', giro: null, email: null })
    expect(nulls.status).toBe(201)
    expect(nulls.json.giro).toBeNull()
    expect(nulls.json.email).toBeNull()
  })
})

describe('PUT /clientes/{id}: the RUT', () => {
  test('the same RUT in another spelling is accepted; a different or invalid one → 400 NOT_ALLOWED on rut', async () => {
    const cliente = await c.create()
    expect((await c.put(cliente.id, { rut: dotted(cliente.rut), razon_social: 'Renombrada' })).json).toMatchObject({ rut: cliente.rut, razon_social: 'Renombrada' })
    for (const rut of [testRut(), 'basura', null, 123]) {
      const res = await c.put(cliente.id, { rut, giro: 'Otro' })
      expect(res.status).toBe(400)
      expect(res.json.details).toEqual([{ field: 'rut', code: 'NOT_ALLOWED', message: expect.stringContaining(cliente.rut) }])
    }
    expect((await c.get(`/${cliente.id}`)).json.giro).toBeNull()
  })
})

describe('GET /clientes/search: by RUT', () => {
  test.each([
    ['76.086.428-5', 'nunoa'],
    ['76086428-5', 'nunoa'],
    ['760864285', 'nunoa'],
    ['76086428', 'nunoa'],
    ['086.428', 'nunoa'],
    ['96.874.030-K', 'k'],
    ['96874030-k', 'k'],
    ['96874030K', 'k'],
    ['4030k', 'k'],
  ])('RUT: %p finds %s (with or without dots and dash, k or K, partial)', async (q, who) => {
    expect(await c.found(q)).toEqual([c.records[who]!.id])
  })

  test('short queries (1–2 characters, below the trigram) search the same way, newest first', async () => {
    const { nunoa, k, ohiggins, under } = c.records
    expect(await c.found('ñu')).toEqual([nunoa!.id])
    expect(await c.found('%')).toEqual([ohiggins!.id])
    expect(await c.found('_')).toEqual([under!.id])
    expect(await c.found('a')).toEqual([under!.id, ohiggins!.id, k!.id, nunoa!.id])
    expect(await c.found('zz')).toEqual([])
    expect(await c.found('0k')).toEqual([k!.id])
    expect(await c.found('0-K')).toEqual([k!.id])
    expect(await c.found('28')).toEqual([nunoa!.id])
  })
})
