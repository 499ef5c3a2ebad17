// The clientes and productos screens (issue 27) through real parts: a server, two companies, logged-in console users.
// The forms must refuse what POST and PUT /clientes and /productos refuse, each error in words beside its field with
// what was typed kept and nothing stored; read RUTs and prices as Chileans type them; page as the API pages; delete
// softly, as the API does; and never show another company's records.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { computeDv } from '../../src/domain/rut'
import { consoleLogin, type ConsoleClient } from '../support/console'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

let s: TestServer
let a: Tenant
let b: Tenant
let writer: ConsoleClient
let reader: ConsoleClient
let clienteB: any
let productoB: any

const api = (t: Tenant, path: string) => s.request('GET', `/api/v1/billing${path}`, { headers: { 'X-Api-Key': t.readKey } })
const create = async (t: Tenant, path: string, body: unknown) => {
  const res = await s.request('POST', `/api/v1/billing${path}`, { headers: { 'X-Api-Key': t.writeKey }, body })
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`)
  return res.json
}
/** Every live cliente (or producto) of the company, as the API pages them. */
async function all(t: Tenant, path: '/clientes' | '/productos'): Promise<any[]> {
  const rows: any[] = []
  let cursor: string | null = null
  do {
    const res: any = (await api(t, `${path}?limit=100${cursor ? `&cursor=${cursor}` : ''}`)).json
    rows.push(...res.data)
    cursor = res.next_cursor
  } while (cursor)
  return rows
}

/** The value attribute of the input named `name`, unescaped; null when the input has none. */
function inputValue(html: string, name: string): string | null {
  const tag = new RegExp(`<input[^>]*name="${name.replace(/\./g, '\\.')}"[^>]*>`).exec(html)?.[0]
  if (!tag) throw new Error(`no input ${name}`)
  const value = /value="([^"]*)"/.exec(tag)?.[1]
  return value === undefined ? null : unescape(value)
}
const unescape = (v: string) => v.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
/** The error shown beside the field, or null. */
function errorBeside(html: string, field: string): string | null {
  const m = new RegExp(`id="f-${field}-error" class="field-error">([^<]*)<`).exec(html)
  return m ? unescape(m[1]!) : null
}
const rut = (body: number) => `${body}-${computeDv(String(body))}`

const CLIENTE_FORM = {
  rut: '76.543.210-3',
  razon_social: 'Comercializadora Ñandú Limitada',
  giro: 'Venta al por mayor',
  direccion: 'Av. Providencia 1234',
  comuna: 'Providencia',
  ciudad: 'Santiago',
  email: 'dte@nandu.cl',
  telefono: '+56 2 2345 6789',
  contacto: 'María José Pérez',
  notas: '',
}

beforeAll(async () => {
  s = await startTestServer({ flags: { '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  a = await s.tenant(testRut(), 'Empresa Catálogo SpA')
  b = await s.tenant(testRut(), 'Otra Empresa Ltda.')
  clienteB = await create(b, '/clientes', { rut: '11.111.111-1', razon_social: 'Cliente Secreto de B' })
  productoB = await create(b, '/productos', { codigo: 'SECRETO', nombre: 'Producto Secreto de B', precio_unitario: 1000 })
  writer = await consoleLogin(s, a.writeKey)
  reader = await consoleLogin(s, a.readKey)
})
afterAll(() => s?.stop())

describe('clientes', () => {
  let id = ''

  test('the menu offers Clientes and Productos; an empty list says so and offers the first', async () => {
    const page = await writer.get('/console/clientes')
    expect(page.status).toBe(200)
    expect(page.html).toContain('<a href="/console/clientes" aria-current="page">Clientes</a>')
    expect(page.html).toContain('<a href="/console/productos">Productos</a>')
    expect(page.html).toContain('Aún no hay clientes guardados.')
    expect(page.html).toContain('href="/console/clientes/nuevo"')
    expect(page.html).not.toContain('Cliente Secreto de B')
  })

  test('a cliente typed with dots is stored as the API stores it and listed with dots', async () => {
    const form = await writer.get('/console/clientes/nuevo')
    expect(form.status).toBe(200)
    for (const f of Object.keys(CLIENTE_FORM)) expect(form.html).toContain(`<label for="f-${f}"`)
    const res = await writer.post('/console/clientes', CLIENTE_FORM)
    expect(res.status).toBe(303)
    expect(res.location).toBe('/console/clientes?aviso=creado')
    const [stored] = await all(a, '/clientes')
    expect(stored).toMatchObject({ rut: '76543210-3', razon_social: 'Comercializadora Ñandú Limitada', comuna: 'Providencia', email: 'dte@nandu.cl', notas: null })
    id = stored.id
    const list = await writer.get(res.location!)
    expect(list.html).toContain('Cliente guardado')
    expect(list.html).toContain('<td class="rut">76.543.210-3</td>')
    expect(list.html).toContain(`href="/console/clientes/${id}"`)
  })

  test('a RUT typed without dots, a lower-case k, is accepted too', async () => {
    const res = await writer.post('/console/clientes', { ...CLIENTE_FORM, rut: '12345670k', razon_social: 'Kiosco El Kilómetro' })
    expect(res.status).toBe(303)
    expect((await all(a, '/clientes')).map((c) => c.rut)).toContain('12345670-K')
    expect((await writer.get('/console/clientes')).html).toContain('12.345.670-K')
  })

  test('a bad RUT is refused beside its field, what was typed kept, nothing stored', async () => {
    const before = (await all(a, '/clientes')).length
    const page = await writer.post('/console/clientes', { ...CLIENTE_FORM, rut: '76.543.210-4', razon_social: 'Otra Razón' })
    expect(page.status).toBe(400)
    expect(errorBeside(page.html, 'rut')).toBe('RUT inválido.')
    expect(page.html).toContain('aria-describedby="f-rut-ayuda f-rut-error"')
    expect(inputValue(page.html, 'rut')).toBe('76.543.210-4')
    expect(inputValue(page.html, 'razon_social')).toBe('Otra Razón')
    expect(inputValue(page.html, 'contacto')).toBe('María José Pérez')
    // The summary names the field as the form labels it, and links to it.
    expect(page.html).toContain('<a href="#f-rut">RUT: RUT inválido.</a>')
    expect((await all(a, '/clientes')).length).toBe(before)
  })

  test('a RUT already saved is told in words beside the field, with a link to the cliente that has it', async () => {
    const before = (await all(a, '/clientes')).length
    const page = await writer.post('/console/clientes', { ...CLIENTE_FORM, rut: '76543210-3', razon_social: 'Duplicada SpA' })
    expect(page.status).toBe(409)
    expect(errorBeside(page.html, 'rut')).toBe('Ya existe un cliente con el RUT 76.543.210-3.')
    expect(page.html).toContain(`<a href="/console/clientes/${id}">Ver el cliente que ya tiene este RUT</a>`)
    expect(inputValue(page.html, 'razon_social')).toBe('Duplicada SpA')
    expect(page.html).not.toContain('CLIENTE_RUT_EXISTS')
    expect(page.html).not.toContain('context.')
    expect((await all(a, '/clientes')).length).toBe(before)
  })

  test('a blank razón social and over-long fields are refused at once, each beside its field, in words', async () => {
    const before = (await all(a, '/clientes')).length
    const page = await writer.post('/console/clientes', {
      ...CLIENTE_FORM,
      rut: rut(30_000_001),
      razon_social: '   ',
      giro: 'g'.repeat(201),
      notas: 'n'.repeat(2001),
      email: 'no es un correo',
    })
    expect(page.status).toBe(400)
    expect(errorBeside(page.html, 'razon_social')).toBe('No puede estar vacío.')
    expect(errorBeside(page.html, 'giro')).toBe('Excede el largo máximo de 200 caracteres.')
    expect(errorBeside(page.html, 'notas')).toBe('Excede el largo máximo de 2000 caracteres.')
    expect(errorBeside(page.html, 'email')).toBe('Correo electrónico inválido.')
    expect(inputValue(page.html, 'giro')).toBe('g'.repeat(201))
    expect(page.html).toContain(`>${'n'.repeat(2001)}</textarea>`)
    expect(page.html).toContain('Razón social: No puede estar vacío.')
    expect(page.html).toContain('Notas internas: Excede el largo máximo de 2000 caracteres.')
    expect(page.html).not.toMatch(/razon_social:|notas:|email:/)
    expect((await all(a, '/clientes')).length).toBe(before)
  })

  test('editing changes the fields sent, clears a blank one, and never offers the RUT', async () => {
    const page = await writer.get(`/console/clientes/${id}`)
    expect(page.status).toBe(200)
    expect(page.html).toContain('<span class="rut-fijo">76.543.210-3</span>')
    expect(page.html).not.toContain('name="rut"')
    expect(inputValue(page.html, 'comuna')).toBe('Providencia')
    const res = await writer.post(`/console/clientes/${id}`, { ...CLIENTE_FORM, rut: '', giro: 'Importación de repuestos', comuna: '' })
    expect(res.status).toBe(303)
    expect(res.location).toBe(`/console/clientes/${id}?aviso=guardado`)
    expect((await api(a, `/clientes/${id}`)).json).toMatchObject({ rut: '76543210-3', giro: 'Importación de repuestos', comuna: null, direccion: 'Av. Providencia 1234' })
    expect((await writer.get(res.location!)).html).toContain('Cambios guardados.')
  })

  test('an edit with a blank razón social is refused beside it and changes nothing', async () => {
    const before = (await api(a, `/clientes/${id}`)).json
    const page = await writer.post(`/console/clientes/${id}`, { ...CLIENTE_FORM, razon_social: '', giro: 'Otro giro' })
    expect(page.status).toBe(400)
    expect(errorBeside(page.html, 'razon_social')).toBe('No puede estar vacío.')
    expect(inputValue(page.html, 'giro')).toBe('Otro giro')
    expect((await api(a, `/clientes/${id}`)).json).toEqual(before)
  })

  test('search finds by name without accents or case, and by RUT with or without dots, as GET /clientes/search does', async () => {
    for (const q of ['ñandu', 'NANDU', '543.210', '76543210-3', '765432103']) {
      const page = await writer.get(`/console/clientes?q=${encodeURIComponent(q)}`)
      expect(page.status).toBe(200)
      expect(page.html).toContain(`Resultados para «${q}»`)
      const found = (await api(a, `/clientes/search?q=${encodeURIComponent(q)}`)).json as any[]
      expect(found.map((c) => c.id)).toEqual([id])
      expect(page.html).toContain(`href="/console/clientes/${id}"`)
      expect(page.html).not.toContain('Kiosco El Kilómetro')
    }
    const none = await writer.get('/console/clientes?q=inexistente')
    expect(none.html).toContain('Ningún cliente coincide con la búsqueda.')
    expect(inputValue(none.html, 'q')).toBe('inexistente')
    expect((await writer.get('/console/clientes?q=secreto')).html).not.toContain('Cliente Secreto de B')
  })

  test('a search over 100 characters is refused beside the search box', async () => {
    const page = await writer.get(`/console/clientes?q=${'x'.repeat(101)}`)
    expect(page.status).toBe(200)
    expect(errorBeside(page.html, 'q')).toBe('Excede el largo máximo de 100 caracteres.')
    expect(page.html).toContain('Buscar: Excede el largo máximo de 100 caracteres.')
  })

  test('the list pages 20 at a time with the API\'s cursor, newest first', async () => {
    for (let i = 0; i < 23; i++) await create(a, '/clientes', { rut: rut(40_000_000 + i), razon_social: `Cliente en lote ${String(i).padStart(2, '0')}` })
    const everyone = await all(a, '/clientes')
    expect(everyone.length).toBe(25)
    const first = await writer.get('/console/clientes')
    const rows = (html: string) => [...html.matchAll(/<td><a href="\/console\/clientes\/([0-9a-f-]{36})">/g)].map((m) => m[1])
    expect(rows(first.html)).toEqual(everyone.slice(0, 20).map((c) => c.id))
    const next = /href="(\/console\/clientes\?cursor=[^"]+)" rel="next">Siguiente página</.exec(first.html)?.[1]
    expect(next).toBeDefined()
    expect(first.html).not.toContain('Primera página')
    const apiPage = (await api(a, '/clientes')).json
    expect(next).toBe(`/console/clientes?cursor=${apiPage.next_cursor}`)
    const second = await writer.get(unescape(next!))
    expect(rows(second.html)).toEqual(everyone.slice(20).map((c) => c.id))
    expect(second.html).toContain('>Primera página</a>')
    expect(second.html).not.toContain('Siguiente página')
    const bad = await writer.get('/console/clientes?cursor=nada')
    expect(bad.html).toContain('El enlace de la página está incompleto')
    expect(bad.html).not.toContain('next_cursor')
  })

  test('delete asks on a page of its own, then the cliente is gone from the list, the search and the API', async () => {
    const ask = await writer.get(`/console/clientes/${id}/eliminar`)
    expect(ask.status).toBe(200)
    expect(ask.html).toContain('¿Eliminar a Comercializadora Ñandú Limitada (RUT 76.543.210-3)?')
    expect(ask.html).toContain(`<form method="post" action="/console/clientes/${id}/eliminar"`)
    expect((await api(a, `/clientes/${id}`)).status).toBe(200)
    const res = await writer.post(`/console/clientes/${id}/eliminar`, {})
    expect(res.status).toBe(303)
    expect(res.location).toBe('/console/clientes?aviso=eliminado')
    expect((await writer.get(res.location!)).html).toContain('Cliente eliminado')
    expect((await api(a, `/clientes/${id}`)).status).toBe(404)
    expect((await writer.get(`/console/clientes/${id}`)).status).toBe(404)
    expect((await writer.get('/console/clientes?q=nandu')).html).toContain('Ningún cliente coincide con la búsqueda.')
    const all25 = await all(a, '/clientes')
    expect(all25.map((c) => c.id)).not.toContain(id)
    for (let cursor: string | null = '', seen = 0; cursor !== null && seen < 3; seen++) {
      const page = await writer.get(`/console/clientes${cursor ? `?cursor=${cursor}` : ''}`)
      expect(page.html).not.toContain(id)
      cursor = /cursor=([^"&]+)" rel="next"/.exec(page.html)?.[1] ?? null
    }
    // The RUT is free again, as the API frees it.
    expect((await writer.post('/console/clientes', CLIENTE_FORM)).status).toBe(303)
    expect((await writer.post(`/console/clientes/${id}/eliminar`, {})).status).toBe(404)
  })

  test("another company's cliente, and a malformed id, are 404 pages: nothing shown, changed or deleted", async () => {
    for (const path of [`/console/clientes/${clienteB.id}`, `/console/clientes/${clienteB.id}/eliminar`, '/console/clientes/no-es-un-id']) {
      const page = await writer.get(path)
      expect(page.status).toBe(404)
      expect(page.html).toContain('No encontrado')
      expect(page.html).not.toContain('Cliente Secreto de B')
    }
    expect((await writer.post(`/console/clientes/${clienteB.id}`, { ...CLIENTE_FORM, razon_social: 'Cambiado por A' })).status).toBe(404)
    expect((await writer.post(`/console/clientes/${clienteB.id}/eliminar`, {})).status).toBe(404)
    expect((await api(b, `/clientes/${clienteB.id}`)).json.razon_social).toBe('Cliente Secreto de B')
  })

  test('a read-only session sees the list and each cliente, but no button to create, edit or delete, and its POSTs are refused', async () => {
    const list = await reader.get('/console/clientes')
    expect(list.status).toBe(200)
    expect(list.html).toContain('76.543.210-3')
    expect(list.html).not.toContain('Nuevo cliente')
    expect(list.html).not.toContain('/eliminar')
    expect(list.html).not.toContain('>Editar<')
    const [first] = await all(a, '/clientes')
    const one = await reader.get(`/console/clientes/${first.id}`)
    expect(one.status).toBe(200)
    expect(one.html).toContain('<dt>RUT</dt>')
    expect(one.html).not.toContain('name="razon_social"')
    expect(one.html).not.toContain('Eliminar')
    expect((await reader.get('/console/clientes/nuevo')).status).toBe(403)
    const before = (await all(a, '/clientes')).length
    expect((await reader.post('/console/clientes', { ...CLIENTE_FORM, rut: rut(50_000_000) })).status).toBe(403)
    expect((await reader.post(`/console/clientes/${first.id}/eliminar`, {})).status).toBe(403)
    expect((await all(a, '/clientes')).length).toBe(before)
  })

  test('a cliente saved here is offered in the issue form\'s cliente picker', async () => {
    await writer.post('/console/clientes', { ...CLIENTE_FORM, rut: rut(60_000_000), razon_social: 'Recién Guardado Ltda.' })
    const form = await writer.get('/console/documentos/nuevo')
    expect(form.html).toMatch(/<option value="[0-9a-f-]{36}" data-values="[^"]*Recién Guardado Ltda\.[^"]*">Recién Guardado Ltda\./)
  })
})

describe('productos', () => {
  let id = ''
  const PRODUCTO_FORM = { nombre: 'Taladro percutor 750 W', codigo: 'TAL-750', precio_unitario: '12.500', unidad: 'UN', categoria: 'Herramientas', descripcion: '' }

  test('a price typed 12.500 is stored as 12500 pesos and listed as $ 12.500', async () => {
    const empty = await writer.get('/console/productos')
    expect(empty.html).toContain('Aún no hay productos guardados.')
    expect(empty.html).not.toContain('Producto Secreto de B')
    const res = await writer.post('/console/productos', PRODUCTO_FORM)
    expect(res.status).toBe(303)
    expect(res.location).toBe('/console/productos?aviso=creado')
    const [stored] = await all(a, '/productos')
    expect(stored).toMatchObject({ nombre: 'Taladro percutor 750 W', codigo: 'TAL-750', precio_unitario: 12500, unidad: 'UN', es_exento: false, categoria: 'Herramientas', descripcion: null })
    id = stored.id
    const list = await writer.get(res.location!)
    expect(list.html).toContain('<td class="num">$ 12.500</td>')
    expect(list.html).toContain('Producto guardado')
  })

  test('$ 12.500, 12500 and 1.234.567 read as whole pesos; an exento producto in hours is stored so', async () => {
    const cases: Array<[string, number]> = [['$ 12.500', 12500], ['12500', 12500], ['1.234.567', 1234567]]
    for (const [typed, pesos] of cases) {
      const res = await writer.post('/console/productos', { ...PRODUCTO_FORM, codigo: '', nombre: `Precio ${typed}`, precio_unitario: typed, unidad: 'HR', es_exento: '1' })
      expect(res.status).toBe(303)
      const found = (await api(a, `/productos/search?q=${encodeURIComponent(`Precio ${typed}`)}`)).json[0]
      expect(found).toMatchObject({ precio_unitario: pesos, unidad: 'HR', es_exento: true, codigo: null })
    }
  })

  test('12,5 is not a whole price: refused beside the field with a blank nombre at once, what was typed kept', async () => {
    const before = (await all(a, '/productos')).length
    const page = await writer.post('/console/productos', { ...PRODUCTO_FORM, codigo: 'OTRO', nombre: '', precio_unitario: '12,5', descripcion: 'Con su maletín' })
    expect(page.status).toBe(400)
    expect(errorBeside(page.html, 'precio_unitario')).toBe('Escriba el precio en pesos, sin decimales: 12.500 o 12500.')
    expect(errorBeside(page.html, 'nombre')).toBe('No puede estar vacío.')
    expect(inputValue(page.html, 'precio_unitario')).toBe('12,5')
    expect(page.html).toContain('>Con su maletín</textarea>')
    expect(page.html).toContain('Precio unitario: Escriba el precio en pesos')
    expect((await all(a, '/productos')).length).toBe(before)
  })

  test('a negative price and an over-long nombre are refused in words', async () => {
    const page = await writer.post('/console/productos', { ...PRODUCTO_FORM, codigo: '', nombre: 'x'.repeat(201), precio_unitario: '-1.000' })
    expect(page.status).toBe(400)
    expect(errorBeside(page.html, 'precio_unitario')).toBe('Debe estar entre $ 0 y $ 9.007.199.254.740.991.')
    expect(errorBeside(page.html, 'nombre')).toBe('Excede el largo máximo de 200 caracteres.')
  })

  test('a código already used is told beside its field, with a link to the producto that has it', async () => {
    const before = (await all(a, '/productos')).length
    const page = await writer.post('/console/productos', { ...PRODUCTO_FORM, nombre: 'Otro taladro' })
    expect(page.status).toBe(409)
    expect(errorBeside(page.html, 'codigo')).toBe('Ya existe un producto con el código TAL-750.')
    expect(page.html).toContain(`<a href="/console/productos/${id}">Ver el producto que ya tiene este código</a>`)
    expect(inputValue(page.html, 'nombre')).toBe('Otro taladro')
    expect((await all(a, '/productos')).length).toBe(before)
  })

  test('editing shows the price as it is typed, stores a new one, clears a blank código and sets exento', async () => {
    const page = await writer.get(`/console/productos/${id}`)
    expect(inputValue(page.html, 'precio_unitario')).toBe('12.500')
    const res = await writer.post(`/console/productos/${id}`, { ...PRODUCTO_FORM, codigo: '', precio_unitario: '13.990', es_exento: '1', unidad: 'KG' })
    expect(res.status).toBe(303)
    expect((await api(a, `/productos/${id}`)).json).toMatchObject({ codigo: null, precio_unitario: 13990, es_exento: true, unidad: 'KG' })
    const again = await writer.get(res.location!)
    expect(again.html).toContain('Cambios guardados.')
    expect(again.html).toMatch(/<input type="checkbox" id="f-es_exento" name="es_exento" value="1" checked/)
    // A bad price in an edit changes nothing.
    const bad = await writer.post(`/console/productos/${id}`, { ...PRODUCTO_FORM, precio_unitario: 'trece mil' })
    expect(bad.status).toBe(400)
    expect((await api(a, `/productos/${id}`)).json.precio_unitario).toBe(13990)
  })

  test('search by name or código and the categoría filter find what the API finds', async () => {
    await create(a, '/productos', { codigo: 'SRV-01', nombre: 'Asesoría contable', precio_unitario: 50000, categoria: 'Servicios' })
    for (const q of ['TALADRO', 'srv-01', 'asesoria']) {
      const page = await writer.get(`/console/productos?q=${encodeURIComponent(q)}`)
      const found = (await api(a, `/productos/search?q=${encodeURIComponent(q)}`)).json as any[]
      expect(found.length).toBe(1)
      expect(page.html).toContain(`href="/console/productos/${found[0].id}"`)
    }
    const servicios = await writer.get('/console/productos?categoria=Servicios')
    expect(servicios.html).toContain('Asesoría contable')
    expect(servicios.html).not.toContain('Taladro percutor')
    expect(servicios.html).toContain('Quitar el filtro de categoría')
  })

  test('delete asks first, then the producto is gone from the list and the search, and its código is free', async () => {
    const [withCode] = (await api(a, '/productos/search?q=srv-01')).json
    const ask = await writer.get(`/console/productos/${withCode.id}/eliminar`)
    expect(ask.html).toContain('¿Eliminar Asesoría contable (código SRV-01)?')
    const res = await writer.post(`/console/productos/${withCode.id}/eliminar`, {})
    expect(res.status).toBe(303)
    const list = await writer.get(res.location!)
    expect(list.html).toContain('Producto eliminado')
    expect(list.html).not.toContain('Asesoría contable')
    expect((await writer.get('/console/productos?q=asesoria')).html).toContain('Ningún producto coincide.')
    expect((await api(a, `/productos/${withCode.id}`)).status).toBe(404)
    expect((await writer.post('/console/productos', { ...PRODUCTO_FORM, codigo: 'SRV-01', nombre: 'Asesoría tributaria' })).status).toBe(303)
  })

  test("another company's producto is a 404 page, and stays as it was", async () => {
    expect((await writer.get(`/console/productos/${productoB.id}`)).status).toBe(404)
    expect((await writer.get(`/console/productos/${productoB.id}/eliminar`)).status).toBe(404)
    expect((await writer.post(`/console/productos/${productoB.id}`, PRODUCTO_FORM)).status).toBe(404)
    expect((await writer.post(`/console/productos/${productoB.id}/eliminar`, {})).status).toBe(404)
    expect((await api(b, `/productos/${productoB.id}`)).json).toMatchObject({ nombre: 'Producto Secreto de B', codigo: 'SECRETO' })
  })

  test('a read-only session sees prices but no button to create, edit or delete', async () => {
    const list = await reader.get('/console/productos')
    expect(list.html).toContain('$ 13.990')
    expect(list.html).not.toContain('Nuevo producto')
    expect(list.html).not.toContain('/eliminar')
    const one = await reader.get(`/console/productos/${id}`)
    expect(one.html).toContain('<dd>$ 13.990</dd>')
    expect(one.html).not.toContain('name="nombre"')
    expect((await reader.post('/console/productos', PRODUCTO_FORM)).status).toBe(403)
  })
})

test('no page of the catalog shows a field path, an API route or an error code to a person', async () => {
  const pages = [
    await writer.post('/console/clientes', { ...CLIENTE_FORM, rut: 'x', razon_social: '', email: 'y' }),
    await writer.post('/console/productos', { nombre: '', precio_unitario: '1,5', codigo: 'z'.repeat(51) }),
    await writer.get('/console/clientes?cursor=roto'),
  ]
  for (const page of pages) {
    const text = page.html.replace(/<[^>]+>/g, ' ')
    expect(text).not.toMatch(/\/api\/|POST \/|context\.|VALIDATION_ERROR|INVALID_|precio_unitario|razon_social/)
  }
})
