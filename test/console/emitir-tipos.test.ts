// The issue form for every type (issue 27) over HTTP against a real server: each type offered, its blocks shown only
// for it, required marks that follow the type, numbers read as people in Chile type them, and refusals told with the
// form's labels (never a dot path, `context.x` or an API path). The browser test (emitir-browser.test.ts) drives the
// same form in Chromium against the compiled binary.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MENSAJE_PESOS_ENTEROS } from '../../src/domain/numero-cl'
import { TIPOS_DTE } from '../../src/domain/emision'
import { consoleLogin, type ConsoleClient } from '../support/console'
import { dteCount, storedXml, uploadCaf, uploadCertificate } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const FORM = '/console/documentos/nuevo'

let s: TestServer
let a: Tenant
let writer: ConsoleClient

const api = (path: string) => s.request('GET', `/api/v1/billing${path}`, { headers: { 'X-Api-Key': a.readKey } })
const keyOf = (html: string) => /name="idempotency_key" value="([^"]+)"/.exec(html)![1]!

/** The page as a person reads it: tags, scripts and attributes gone, entities decoded. */
function textOf(html: string): string {
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
}

/** What no person should read: the API's dot paths, `context.x`, API routes, snake_case field names. */
const MACHINE_WORDS = /\b(?:tipo_dte|receptor|detalle|referencias|comisiones|impuestos_retenciones|descuentos_globales|export_data|context)\.[\w.]+|POST \/|\/api\/v1|\b[a-z]+_[a-z_]+\b/

const RECEPTOR = {
  'receptor.rut': '76.086.428-5',
  'receptor.razon_social': 'Ferretería y Construcción Ñuble Limitada',
  'receptor.giro': 'Venta de materiales de construcción',
  'receptor.direccion': 'Av. Libertador Bernardo O’Higgins 1234',
  'receptor.comuna': 'Chillán',
  'receptor.ciudad': 'Chillán',
}

async function freshKey(): Promise<string> {
  return keyOf((await writer.get(FORM)).html)
}

/** The `<div data-tipos=…>` wrapper of a block, with whether it is hidden. */
function block(html: string, tipos: string): { found: boolean; hidden: boolean } {
  const m = new RegExp(`<div class="para-tipos" data-tipos="${tipos}"( hidden)?>`).exec(html)
  return { found: m !== null, hidden: m?.[1] !== undefined }
}

/** The input element of `name`, as rendered. */
const inputOf = (html: string, name: string) => new RegExp(`<input[^>]*name="${name.replace(/\./g, '\\.')}"[^>]*>`).exec(html)?.[0] ?? ''

beforeAll(async () => {
  s = await startTestServer({ flags: { '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  a = await s.tenant(testRut(), 'Exportadora Austral SpA')
  await uploadCertificate(s, a)
  for (const tipo of [33, 110]) await uploadCaf(s, a, tipo, 1, 20)
  writer = await consoleLogin(s, a.writeKey)
})

afterAll(() => s?.stop())

describe('every type, with what it uses', () => {
  test('the twelve types the API issues are offered, each block hidden until its type is chosen', async () => {
    const page = await writer.get(FORM)
    for (const tipo of TIPOS_DTE) expect(page.html).toMatch(new RegExp(`<option value="${tipo}"( selected)?>${tipo} · `))
    expect(page.html).toContain('43 · Liquidación factura electrónica')
    expect(page.html).toContain('110 · Factura de exportación electrónica')
    // A fresh form is a 33: no export block, no commissions; global discounts and additional taxes are there.
    expect(block(page.html, '110 111 112')).toEqual({ found: true, hidden: true })
    expect(block(page.html, '43 46 56 61')).toEqual({ found: true, hidden: true })
    expect(block(page.html, '33 34 39 41 46 52 56 61 110 111 112')).toEqual({ found: true, hidden: false })
    // Clients are made in the console now, not "por la API".
    expect(page.html).toContain('Cree clientes en <a href="/console/clientes/nuevo">Clientes</a>.')
    expect(page.html).not.toContain('POST /clientes')
  })

  test('"Mostrar los campos de este tipo" renders the form for the chosen type, keeping what was typed, issuing nothing', async () => {
    const key = await freshKey()
    const page = await writer.post(FORM, { idempotency_key: key, tipo_dte: '110', accion: 'cambiar-tipo', 'receptor.razon_social': 'Andes Importers LLC' })
    expect(page.status).toBe(200)
    expect(block(page.html, '110 111 112')).toEqual({ found: true, hidden: false })
    expect(block(page.html, '43 46 56 61')).toEqual({ found: true, hidden: true })
    expect(page.html).toContain('value="Andes Importers LLC"')
    // Customs codes are offered with their names.
    expect(page.html).toContain('<option value="906">San Antonio (906)</option>')
    expect(page.html).toContain('<option value="9">Sin pago (9)</option>')
    expect(page.html).toContain('<option value="FOB">FOB · Franco a bordo</option>')
    expect(page.html).toContain('<option value="1">Marítima, fluvial y lacustre (1)</option>')
    expect(page.html).toContain('<option value="DOLAR USA">DOLAR USA</option>')
    expect(keyOf(page.html)).toBe(key)
    expect(await dteCount(s, a)).toBe(0)
  })

  test('giro, dirección and comuna are marked required on 33, 34 and 52, and not on a note; the export asks for the city', async () => {
    const marks = async (tipo: string) => {
      const html = (await writer.post(FORM, { idempotency_key: await freshKey(), tipo_dte: tipo, accion: 'cambiar-tipo' })).html
      return Object.fromEntries(
        ['giro', 'direccion', 'comuna', 'ciudad'].map((f) => {
          const input = inputOf(html, `receptor.${f}`)
          const mark = new RegExp(`<label for="f-receptor-${f}">[^<]*<span class="required-mark" aria-hidden="true"( hidden)?>`).exec(html)
          return [f, { required: / required(?=[ >])/.test(input) && input.includes('aria-required="true"'), markShown: mark !== null && mark[1] === undefined }]
        }),
      )
    }
    for (const tipo of ['33', '34', '52']) {
      const m = await marks(tipo)
      for (const f of ['giro', 'direccion', 'comuna']) expect(m[f]).toEqual({ required: true, markShown: true })
      expect(m.ciudad).toEqual({ required: false, markShown: false })
    }
    const nota = await marks('61')
    for (const f of ['giro', 'direccion', 'comuna', 'ciudad']) expect(nota[f]).toEqual({ required: false, markShown: false })
    const exportacion = await marks('110')
    expect(exportacion.ciudad).toEqual({ required: true, markShown: true })
    expect(exportacion.giro).toEqual({ required: false, markShown: false })
    // The types each mark follows, for console.js, read from domain/tipos.ts.
    expect(inputOf((await writer.get(FORM)).html, 'receptor.giro')).toContain('data-required-tipos="33 34 43 46 52"')
  })
})

describe('numbers as people in Chile type them', () => {
  test('12.500 is twelve thousand five hundred pesos and 1,5 one and a half', async () => {
    const before = await dteCount(s, a)
    const page = await writer.post(FORM, {
      idempotency_key: await freshKey(),
      tipo_dte: '33',
      ...RECEPTOR,
      'detalle.0.nombre': 'Malla raschel 80 %',
      'detalle.0.cantidad': '1,5',
      'detalle.0.precio': '$ 12.500',
      // The selects of untouched lists, as a browser posts them: their defaults alone send nothing.
      'comisiones.0.tipo_movim': 'C',
      'descuentos_globales.0.tpo_mov': 'D',
      'descuentos_globales.0.tpo_valor': '%',
      'descuentos_globales.0.ind_exe_dr': '',
      'impuestos_retenciones.0.tipo_imp': '',
    })
    expect(page.status).toBe(303)
    const id = /documentos\/([0-9a-f-]{36})/.exec(page.location!)![1]
    const record = (await api(`/dte/${id}`)).json
    expect(record.detalle).toEqual([{ nombre: 'Malla raschel 80 %', cantidad: 1.5, precio: 12500 }])
    expect(record).toMatchObject({ tipo_dte: 33, monto_neto: 18750, iva: 3563, monto_total: 22313 })
    expect(await dteCount(s, a)).toBe(before + 1)
  })

  test('the totals as you type read numbers the same way and show them as $ 12.500', async () => {
    const fields = { tipo_dte: '33', ...RECEPTOR, 'detalle.0.nombre': 'Malla', 'detalle.0.cantidad': '2', 'detalle.0.precio': '12.500' }
    const fragment = await writer.post(`${FORM}/totales`, fields, { withoutCsrf: true, headers: { 'X-CSRF-Token': writer.csrf } })
    expect(fragment.html).toContain('<dt>Neto</dt><dd>$ 25.000</dd>')
    expect(fragment.html).toContain('<dd class="total">$ 29.750</dd>')
    const comma = await writer.post(`${FORM}/totales`, { ...fields, 'detalle.0.precio': '12,5' }, { withoutCsrf: true, headers: { 'X-CSRF-Token': writer.csrf } })
    expect(comma.html).toContain('<dd class="total">—</dd>')
  })

  test('12,5 in a peso price is refused in words beside the field, what was typed kept, nothing issued', async () => {
    const before = await dteCount(s, a)
    const key = await freshKey()
    const page = await writer.post(FORM, { idempotency_key: key, tipo_dte: '33', ...RECEPTOR, 'detalle.0.nombre': 'Malla', 'detalle.0.cantidad': '1', 'detalle.0.precio': '12,5' })
    expect(page.status).toBe(400)
    expect(page.html).toContain(`<p id="f-detalle-0-precio-error" class="field-error">${MENSAJE_PESOS_ENTEROS}</p>`)
    expect(page.html).toContain('value="12,5"')
    expect(textOf(page.html)).toContain(`Línea 1, Precio unitario: ${MENSAJE_PESOS_ENTEROS}`)
    expect(keyOf(page.html)).toBe(key)
    expect(await dteCount(s, a)).toBe(before)
  })

  test('a 110 in dollars takes 12,5 as its price, with the Customs codes chosen by name in the signed XML', async () => {
    const page = await writer.post(FORM, {
      idempotency_key: await freshKey(),
      tipo_dte: '110',
      'receptor.rut': '55555555-5',
      'receptor.razon_social': 'Andes Importers LLC',
      'receptor.direccion': '1200 Brickell Ave',
      'receptor.ciudad': 'Miami',
      'detalle.0.nombre': 'Aceite de oliva 500 ml',
      'detalle.0.cantidad': '100',
      'detalle.0.precio': '12,5',
      'export_data.tpo_moneda': 'DOLAR USA',
      'export_data.tpo_cambio': '950,37',
      'export_data.forma_pago_exp': '2',
      'export_data.modalidad_venta': '1',
      'export_data.clausula_venta': 'FOB',
      'export_data.total_clausula': '1.250',
      'export_data.via_transporte': '1',
      'export_data.puerto_embarque': '906',
      'export_data.puerto_desembarque': '141',
      'export_data.pais_recep': '225',
      'export_data.pais_dest': '225',
      'export_data.tipo_bulto': 'PALLETS',
      'export_data.total_bultos': '2',
      'export_data.peso_bruto': '1.050,5',
      'export_data.unidad_peso_bruto': '6',
    })
    expect(page.status).toBe(303)
    const id = /documentos\/([0-9a-f-]{36})/.exec(page.location!)![1]
    const record = (await api(`/dte/${id}`)).json
    // 100 × 12.5 = 1250 dollars; round(1250 × 950.37) = 1 187 963 pesos.
    expect(record).toMatchObject({ tipo_dte: 110, moneda: 'DOLAR USA', monto_total_moneda: 1250, monto_total: 1187963 })
    expect(record.detalle[0]).toMatchObject({ cantidad: 100, precio: 12.5 })
    const xml = new TextDecoder('latin1').decode(await storedXml(s, a, id!))
    for (const element of ['<PrcItem>12.5</PrcItem>', '<TpoMoneda>DOLAR USA</TpoMoneda>', '<CodModVenta>1</CodModVenta>', '<CodClauVenta>5</CodClauVenta>', '<CodViaTransp>1</CodViaTransp>', '<CodPtoEmbarque>906</CodPtoEmbarque>', '<CodPtoDesemb>141</CodPtoDesemb>', '<CodTpoBultos>80</CodTpoBultos>', '<CodPaisDestin>225</CodPaisDestin>', '<FmaPagExp>2</FmaPagExp>'])
      expect(xml).toContain(element)
  })
})

describe('messages in words', () => {
  test('a bad 43 names each field as the form labels it, beside its input, with no dot path, context or API path', async () => {
    const before = await dteCount(s, a)
    const page = await writer.post(FORM, {
      idempotency_key: await freshKey(),
      tipo_dte: '43',
      'receptor.rut': '76.086.428-4',
      'receptor.razon_social': '',
      'detalle.0.nombre': 'Venta por cuenta de mandante',
      'detalle.0.cantidad': '1',
      'detalle.0.precio': 'mil',
      'referencias.0.folio_ref': '1,5',
    })
    expect(page.status).toBe(400)
    const text = textOf(page.html)
    for (const said of [
      'Receptor, RUT: RUT inválido',
      'Receptor, Razón social:',
      'Receptor, Giro: El SII exige el giro del receptor',
      'Línea 1, Tipo del documento liquidado:',
      'Línea 1, Precio unitario: Escriba un número entero',
      'Comisiones: La liquidación-factura (43) requiere sus comisiones.',
      'Referencia 1, Folio referenciado: Es un número entero, sin decimales.',
    ])
      expect(text).toContain(said)
    expect(page.html).toMatch(/id="f-detalle-0-tipo_doc_liq-error" class="field-error">[^<]+</)
    expect(page.html).toContain('href="#f-comisiones"')
    expect(text.match(MACHINE_WORDS)).toBeNull()
    expect(await dteCount(s, a)).toBe(before)
  })

  test('a refusal with no field input still reads as words (a 61 without a reference)', async () => {
    const page = await writer.post(FORM, { idempotency_key: await freshKey(), tipo_dte: '61', ...RECEPTOR, 'detalle.0.nombre': 'Devolución', 'detalle.0.cantidad': '1', 'detalle.0.precio': '1.000' })
    expect(page.status).toBe(400)
    const text = textOf(page.html)
    expect(text).toContain('Referencias: El tipo 61 debe referenciar el documento que modifica.')
    expect(text.match(MACHINE_WORDS)).toBeNull()
  })
})
