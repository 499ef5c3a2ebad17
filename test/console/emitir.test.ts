// The console's issuance form (DESIGN §14) through real parts: a server, a company ready to issue 33 only, clientes and
// productos created over the API, and a logged-in console user. The form must validate as POST /dte does (the same
// errors at the same paths, each beside its input), issue through the same idempotency (a reload never issues twice),
// show the totals issuance then stores, and refuse what the API refuses.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CATALOG } from '../../src/errors'
import { formatPesos } from '../../src/domain/numero-cl'
import { consoleLogin, type ConsoleClient } from '../support/console'
import { dteCount, provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const FORM = '/console/documentos/nuevo'

let s: TestServer
/** Ready to issue 33 (certificate and a CAF of 33 only). */
let a: Tenant
/** No certificate, no CAF. */
let sinCertificado: Tenant
let writer: ConsoleClient
let cliente: any
let producto: any

const api = (t: Tenant, path: string) => s.request('GET', `/api/v1/billing${path}`, { headers: { 'X-Api-Key': t.readKey } })
const create = async (t: Tenant, path: string, body: unknown) => {
  const res = await s.request('POST', `/api/v1/billing${path}`, { headers: { 'X-Api-Key': t.writeKey }, body })
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`)
  return res.json
}

const keyOf = (html: string) => /name="idempotency_key" value="([^"]+)"/.exec(html)?.[1] ?? null

/** What a browser posts for the form as first rendered (3 lines, 1 referencia), with the factura's values typed in. */
function facturaForm(key: string, changes: Record<string, string> = {}): Record<string, string> {
  const fields: Record<string, string> = {
    idempotency_key: key,
    tipo_dte: '33',
    fecha_emision: '',
    ind_traslado: '',
    'receptor.rut': '76.086.428-5',
    'receptor.razon_social': 'Ferretería y Construcción Ñuble Limitada',
    'receptor.giro': 'Venta de materiales de construcción',
    'receptor.direccion': 'Av. Libertador Bernardo O’Higgins 1234',
    'receptor.comuna': 'Chillán',
    'receptor.ciudad': 'Chillán',
    'receptor.email': '',
    'detalle.0.nombre': 'Martillo carpintero 16 oz',
    'detalle.0.dsc_item': '',
    'detalle.0.cantidad': '3',
    'detalle.0.unidad': 'UN',
    'detalle.0.precio': '8990',
    'detalle.0.descuento_pct': '',
    'detalle.0.ind_exe': '',
    'detalle.1.nombre': 'Clavos 2½" (caja 1 kg)',
    'detalle.1.dsc_item': '',
    'detalle.1.cantidad': '2',
    'detalle.1.unidad': '',
    'detalle.1.precio': '2490',
    'detalle.1.descuento_pct': '10',
    'detalle.1.ind_exe': '',
    'detalle.2.nombre': 'Flete',
    'detalle.2.dsc_item': 'Despacho a obra',
    'detalle.2.cantidad': '1',
    'detalle.2.unidad': '',
    'detalle.2.precio': '5000',
    'detalle.2.descuento_pct': '',
    'detalle.2.ind_exe': '1',
    // A fourth line added and left empty: trailing, so it is not sent.
    'detalle.3.nombre': '',
    'detalle.3.dsc_item': '',
    'detalle.3.cantidad': '',
    'detalle.3.unidad': '',
    'detalle.3.precio': '',
    'detalle.3.descuento_pct': '',
    'detalle.3.ind_exe': '',
    'referencias.0.tipo_doc_ref': '',
    'referencias.0.folio_ref': '',
    'referencias.0.fecha_ref': '',
    'referencias.0.codigo_ref': '',
    'referencias.0.razon_ref': '',
  }
  return { ...fields, ...changes }
}

// 3 × 8990 + (2 × 2490 − 10 %) afectos, 5000 exento: neto 31452, IVA round(31452 × 19 %) = 5976, total 42428.
const EXPECTED = { monto_neto: 31452, monto_exento: 5000, iva: 5976, monto_total: 42428 }

/** The data-values of every option of the page, decoded. */
function dataValues(html: string): Array<Record<string, unknown>> {
  const unescape = (v: string) => v.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
  return [...html.matchAll(/data-values="([^"]*)"/g)].map((m) => JSON.parse(unescape(m[1]!)) as Record<string, unknown>)
}

beforeAll(async () => {
  // The SII jobs stay still, so the issued document stays as the form left it.
  s = await startTestServer({ flags: { '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  a = await s.tenant(testRut(), 'Empresa Emisora SpA')
  sinCertificado = await s.tenant(testRut(), 'Empresa Sin Certificado Ltda.')
  await provisionIssuer(s, a, { tipos: [33], folios: 20 })
  cliente = await create(a, '/clientes', {
    rut: '76.086.428-5',
    razon_social: 'Ferretería y Construcción Ñuble Limitada',
    giro: 'Venta de materiales de construcción',
    direccion: 'Av. Libertador Bernardo O’Higgins 1234',
    comuna: 'Chillán',
    ciudad: 'Chillán',
    email: 'dte@ferreteria-nuble.cl',
  })
  producto = await create(a, '/productos', { codigo: 'MART-16', nombre: 'Martillo carpintero 16 oz', descripcion: 'Mango de fibra', precio_unitario: 8990 })
  await create(a, '/productos', { nombre: 'Asesoría contable', precio_unitario: 50000, unidad: 'HR', es_exento: true })
  writer = await consoleLogin(s, a.writeKey)
})

afterAll(() => s?.stop())

describe('the issuance form', () => {
  test('labels every field, starts with 3 lines, and fills its pickers from the clientes and productos of the API', async () => {
    const page = await writer.get(FORM)
    expect(page.status).toBe(200)
    const labelled = [
      'tipo_dte',
      'fecha_emision',
      ...['rut', 'razon_social', 'giro', 'direccion', 'comuna', 'ciudad', 'email'].map((f) => `receptor.${f}`),
      ...[0, 1, 2].flatMap((i) => ['nombre', 'dsc_item', 'cantidad', 'unidad', 'precio', 'descuento_pct', 'ind_exe'].map((f) => `detalle.${i}.${f}`)),
      ...['tipo_doc_ref', 'folio_ref', 'fecha_ref', 'codigo_ref', 'razon_ref'].map((f) => `referencias.0.${f}`),
    ]
    for (const path of labelled) {
      const id = `f-${path.replace(/[^A-Za-z0-9_-]/g, '-')}`
      expect(page.html).toContain(`<label for="${id}"`)
      expect(page.html).toContain(`id="${id}" name="${path}"`)
    }
    expect(page.html).not.toContain('name="detalle.3.nombre"')
    expect(page.html).toContain('33 · Factura electrónica')
    expect(page.html).toContain('61 · Nota de crédito electrónica')
    // The referencias are folded away until a note needs them.
    expect(page.html).toMatch(/<details id="f-referencias" data-open-tipos="56 61 111 112">/)

    // The cliente picker fills receptor.*; each line's producto picker fills that line.
    expect(page.html).toContain('<label for="cliente-guardado">Cliente guardado</label>')
    for (const i of [0, 1, 2]) expect(page.html).toContain(`data-fill-prefix="detalle.${i}."`)
    const values = dataValues(page.html)
    expect(values).toContainEqual({
      'receptor.rut': cliente.rut,
      'receptor.razon_social': 'Ferretería y Construcción Ñuble Limitada',
      'receptor.giro': 'Venta de materiales de construcción',
      'receptor.direccion': 'Av. Libertador Bernardo O’Higgins 1234',
      'receptor.comuna': 'Chillán',
      'receptor.ciudad': 'Chillán',
      'receptor.email': 'dte@ferreteria-nuble.cl',
    })
    expect(values).toContainEqual({ nombre: producto.nombre, dsc_item: 'Mango de fibra', precio: '8.990', unidad: 'UN', ind_exe: '' })
    expect(values).toContainEqual({ nombre: 'Asesoría contable', dsc_item: null, precio: '50.000', unidad: 'HR', ind_exe: '1' })

    // The live totals, and a fresh idempotency key for each rendered form.
    expect(page.html).toContain('aria-live="polite" hx-post="/console/documentos/nuevo/totales" hx-trigger="input changed delay:400ms from:closest form"')
    const key = keyOf(page.html)
    expect(key).toMatch(/^[0-9a-f-]{36}$/)
    expect(keyOf((await writer.get(FORM)).html)).not.toBe(key)
  })

  test('"Agregar línea" renders one more line and keeps what was typed, issuing nothing', async () => {
    const key = keyOf((await writer.get(FORM)).html)!
    const fields = facturaForm(key)
    for (const f of ['nombre', 'dsc_item', 'cantidad', 'unidad', 'precio', 'descuento_pct', 'ind_exe']) delete fields[`detalle.3.${f}`]
    const page = await writer.post(FORM, { ...fields, accion: 'agregar-linea' })
    expect(page.status).toBe(200)
    expect(page.html).toContain('name="detalle.3.nombre"')
    expect(page.html).not.toContain('name="detalle.4.nombre"')
    expect(page.html).toContain('value="Despacho a obra"')
    expect(keyOf(page.html)).toBe(key)
    expect(await dteCount(s, a)).toBe(0)
  })
})

describe('issuing from the form', () => {
  let key: string
  let location: string

  test('a post with mistakes answers 400 with each error beside its field and the typed values kept, and issues nothing', async () => {
    key = keyOf((await writer.get(FORM)).html)!
    const page = await writer.post(FORM, facturaForm(key, { 'receptor.razon_social': '', 'detalle.0.precio': 'ocho mil' }))
    expect(page.status).toBe(400)
    expect(page.html).toContain('class="error-summary"')
    expect(page.html).toMatch(/id="f-receptor-razon_social-error" class="field-error">[^<]+</)
    expect(page.html).toMatch(/id="f-detalle-0-precio-error" class="field-error">[^<]+</)
    expect(page.html).toContain('aria-describedby="f-detalle-0-precio-error"')
    expect(page.html).toContain('value="ocho mil"')
    expect(page.html).toContain('value="Martillo carpintero 16 oz"')
    expect(page.html).toContain('value="Despacho a obra"')
    // The same key comes back: a refused body stored nothing under it.
    expect(keyOf(page.html)).toBe(key)
    // Lines 1 and 2 were valid and the rest is still shown, but the totals wait for every line.
    expect(page.html).toMatch(/<dt class="total">Total<\/dt><dd class="total">—<\/dd>/)
    expect(await dteCount(s, a)).toBe(0)
  })

  test('the corrected post, with the same key, issues the document with the form\'s values and totals', async () => {
    const page = await writer.post(FORM, facturaForm(key))
    expect(page.status).toBe(303)
    location = page.location!
    const id = /^\/console\/documentos\/([0-9a-f-]{36})\?aviso=emitido$/.exec(location)?.[1]
    expect(id).toBeDefined()
    const record = (await api(a, `/dte/${id}`)).json
    expect(record).toMatchObject({ tipo_dte: 33, folio: 1, estado: 'firmado', rut_receptor: '76086428-5', razon_social_receptor: 'Ferretería y Construcción Ñuble Limitada', ...EXPECTED })
    expect(record.detalle).toEqual([
      { nombre: 'Martillo carpintero 16 oz', cantidad: 3, unidad: 'UN', precio: 8990 },
      { nombre: 'Clavos 2½" (caja 1 kg)', cantidad: 2, precio: 2490, descuento_pct: 10 },
      { nombre: 'Flete', dsc_item: 'Despacho a obra', cantidad: 1, precio: 5000, ind_exe: 1 },
    ])
    expect(await dteCount(s, a)).toBe(1)
  })

  test('posting the same form again (reload, double click) lands on the same document and issues nothing more', async () => {
    const again = await writer.post(FORM, facturaForm(key))
    expect(again.status).toBe(303)
    expect(again.location).toBe(location)
    expect(await dteCount(s, a)).toBe(1)
  })

  test('the totals fragment shows the IVA and total the API stored, and issues nothing', async () => {
    const id = /documentos\/([0-9a-f-]{36})/.exec(location)![1]
    const record = (await api(a, `/dte/${id}`)).json
    // As htmx sends it: the CSRF token in the header.
    const fragment = await writer.post(`${FORM}/totales`, facturaForm(crypto.randomUUID()), { withoutCsrf: true, headers: { 'X-CSRF-Token': writer.csrf } })
    expect(fragment.status).toBe(200)
    expect(fragment.html).not.toContain('<html')
    expect(fragment.html).toContain(`<dt>IVA (19 %)</dt><dd>${formatPesos(record.iva)}</dd>`)
    expect(fragment.html).toContain(`<dd class="total">${formatPesos(record.monto_total)}</dd>`)
    expect(fragment.html).toContain(`<dt>Neto</dt><dd>${formatPesos(record.monto_neto)}</dd>`)
    expect(fragment.html).toContain(`<dt>Exento</dt><dd>${formatPesos(record.monto_exento)}</dd>`)
    // While the receptor is still being typed the totals already show; an invalid line shows "—".
    const sinReceptor = await writer.post(`${FORM}/totales`, facturaForm(crypto.randomUUID(), { 'receptor.rut': '', 'receptor.giro': '' }))
    expect(sinReceptor.html).toContain(`<dd class="total">${formatPesos(EXPECTED.monto_total)}</dd>`)
    const lineaMala = await writer.post(`${FORM}/totales`, facturaForm(crypto.randomUUID(), { 'detalle.1.cantidad': 'dos' }))
    expect(lineaMala.html).toContain('<dd class="total">—</dd>')
    expect(await dteCount(s, a)).toBe(1)
  })

  test('the key of an issued document sent with other values is refused, and the form comes back with a fresh key', async () => {
    const page = await writer.post(FORM, facturaForm(key, { 'detalle.0.cantidad': '4' }))
    expect(page.status).toBe(422)
    expect(page.html).toContain('Este formulario ya se envió antes con otros datos.')
    expect(page.html).toContain('value="4"')
    const fresh = keyOf(page.html)
    expect(fresh).not.toBe(key)
    expect(await dteCount(s, a)).toBe(1)
    const issued = await writer.post(FORM, facturaForm(fresh!, { 'detalle.0.cantidad': '4' }))
    expect(issued.status).toBe(303)
    expect(issued.location).not.toBe(location)
    expect(await dteCount(s, a)).toBe(2)
  })
})

describe('refusals the form explains', () => {
  test('a type without a CAF shows NO_FOLIOS_AVAILABLE with its action and a link to Folios', async () => {
    const before = await dteCount(s, a)
    const key = keyOf((await writer.get(FORM)).html)!
    const page = await writer.post(FORM, facturaForm(key, { tipo_dte: '34', 'detalle.2.ind_exe': '' }))
    expect(page.status).toBe(422)
    expect(page.html).toContain(CATALOG.NO_FOLIOS_AVAILABLE.message)
    expect(page.html).toContain('Cargue un CAF nuevo de este tipo en la sección Folios.')
    expect(page.html).toContain('href="/console/folios"')
    expect(page.html).toMatch(/<option value="34" selected>/)
    expect(keyOf(page.html)).toBe(key)
    expect(await dteCount(s, a)).toBe(before)
  })

  test('a company without a certificate is sent to Certificado', async () => {
    const client = await consoleLogin(s, sinCertificado.writeKey)
    const key = keyOf((await client.get(FORM)).html)!
    const page = await client.post(FORM, facturaForm(key))
    expect(page.status).toBe(422)
    expect(page.html).toContain(CATALOG.CERTIFICATE_REQUIRED.message)
    expect(page.html).toContain('href="/console/certificado"')
    expect(await dteCount(s, sinCertificado)).toBe(0)
  })

  test('a read-only key sees no form, and its POST is refused with 403', async () => {
    const before = await dteCount(s, a)
    const reader = await consoleLogin(s, a.readKey)
    const page = await reader.get(FORM)
    expect(page.status).toBe(200)
    expect(page.html).toContain('solo lectura')
    expect(page.html).not.toContain('name="idempotency_key"')
    expect(page.html).not.toContain('name="receptor.rut"')
    const post = await reader.post(FORM, facturaForm(crypto.randomUUID()))
    expect(post.status).toBe(403)
    expect(await dteCount(s, a)).toBe(before)
  })

  test('a POST without the CSRF token is refused with 403 and issues nothing', async () => {
    const before = await dteCount(s, a)
    const page = await writer.post(FORM, facturaForm(crypto.randomUUID()), { withoutCsrf: true })
    expect(page.status).toBe(403)
    expect((await writer.post(`${FORM}/totales`, facturaForm(crypto.randomUUID()), { withoutCsrf: true })).status).toBe(403)
    expect(await dteCount(s, a)).toBe(before)
  })
})
