// The console's documents screens (DESIGN §14) through real parts: a server with the in-process SII simulator, DTEs
// issued over the API, then a logged-in console user: the list and its GET /dte filters, the detail, the state badge
// that stops polling once the SII decides, the PDF and XML, another company's id, and a read-only session.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { testClock } from '../support/clock'
import { consoleAdmin, consoleLogin, type ConsoleClient } from '../support/console'
import { facturaSimple, issue, provisionIssuer, storedXml } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const FINAL = ['aceptado', 'rechazado', 'con_reparos']
const clock = testClock()
const submit = siiSubmitJob(3_600_000)
const track = siiTrackJob(3_600_000)

let s: TestServer
let a: Tenant
let b: Tenant
let writer: ConsoleClient
/** A 33 sent automatically (auto_send), a 34 that waits for "Enviar al SII", a 33 to a receiver the simulator rejects. */
let factura: any
let exenta: any
let rechazada: any

const api = (t: Tenant, path: string) => s.request('GET', `/api/v1/billing${path}`, { headers: { 'X-Api-Key': t.readKey } })

async function issued(t: Tenant, body: unknown): Promise<any> {
  const res = await issue(s, t, body)
  if (res.status !== 201) throw new Error(`issue: ${res.status} ${res.text}`)
  return (await api(t, `/dte/${res.json.id}`)).json
}

/** Runs the SII jobs (the clock moving 20 s a round) until each DTE is final, as test/http/dte-intercambio does. */
async function untilFinal(t: Tenant, ids: readonly string[]): Promise<any[]> {
  for (let round = 0; round < 60; round++) {
    await submit.runOnce(s.server.deps)
    await track.runOnce(s.server.deps)
    const records = await Promise.all(ids.map(async (id) => (await api(t, `/dte/${id}`)).json))
    if (records.every((r) => FINAL.includes(r.estado))) return records
    clock.advance(20_000)
  }
  throw new Error('the DTEs did not reach a final state')
}

/** The rows of the list's table, as [folio, the row's html]. */
function rowsOf(html: string): Array<{ folio: number; html: string }> {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? ''
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => ({ folio: Number(/aria-label="Ver [^"]* folio (\d+)"/.exec(m[1]!)?.[1]), html: m[1]! }))
}

const receptor = (rut: string) => ({ rut, razon_social: 'Comercial Rechazos SpA', giro: 'Comercio', direccion: 'Calle 1', comuna: 'Santiago', ciudad: 'Santiago' })

beforeAll(async () => {
  // The SII jobs run only when the test runs them, on a clock it moves.
  s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  a = await s.tenant(testRut(), 'Empresa Documentos SpA')
  b = await s.tenant(testRut(), 'Otra Empresa Limitada')
  await provisionIssuer(s, a, { tipos: [33, 34], folios: 50 })
  factura = await issued(a, facturaSimple({ metadata: { pedido: 'P-77' } }))
  exenta = await issued(a, facturaSimple({ tipo_dte: 34, auto_send: false }))
  rechazada = await issued(a, facturaSimple({ receptor: receptor('88888888-8') as never }))
  writer = await consoleLogin(s, a.writeKey)
}, 60_000)
afterAll(() => s?.stop())

describe('the list', () => {
  test('shows every DTE of the company with GET /dte total_count, links to the detail and an estado badge', async () => {
    const page = await writer.get('/console/documentos')
    expect(page.status).toBe(200)
    expect(page.html).toContain('3 documentos')
    const rows = rowsOf(page.html)
    // Newest first, as GET /dte.
    expect(rows.map((r) => r.folio)).toEqual([rechazada.folio, exenta.folio, factura.folio])
    const row34 = rows[1]!.html
    expect(row34).toContain('FACTURA NO AFECTA O EXENTA ELECTRÓNICA')
    expect(row34).toContain('(34)')
    expect(row34).toContain(`href="/console/documentos/${exenta.id}"`)
    expect(row34).toContain('Ferretería y Construcción Ñuble Limitada')
    expect(row34).toContain('76.086.428-5')
    expect(row34).toContain(`$ ${new Intl.NumberFormat('es-CL').format(exenta.monto_total)}`)
    expect(row34).toMatch(/class="badge badge-neutral">Firmado</)
    // The filters form: a GET with a label for each field.
    expect(page.html).toMatch(/<form method="get" action="\/console\/documentos" class="filters"/)
    for (const name of ['estado', 'tipo_dte', 'fecha_desde', 'fecha_hasta', 'rut_receptor']) expect(page.html).toContain(`<label for="f-${name}"`)
  })

  test('a filter narrows the list as GET /dte does (tipo_dte, estado, rut_receptor) and the form keeps it', async () => {
    const by34 = await writer.get('/console/documentos?tipo_dte=34&estado=&rut_receptor=')
    expect(by34.html).toContain('1 documento')
    expect(rowsOf(by34.html).map((r) => r.folio)).toEqual([exenta.folio])
    expect(by34.html).toMatch(/<option value="34" selected/)
    const byRut = await writer.get('/console/documentos?rut_receptor=88.888.888-8')
    expect(rowsOf(byRut.html).map((r) => r.folio)).toEqual([rechazada.folio])
    const none = await writer.get('/console/documentos?estado=aceptado&tipo_dte=34')
    expect(none.html).toContain('0 documentos')
    expect(none.html).toContain('Ningún documento coincide con estos filtros.')
    const apiCount = (await api(a, '/dte?estado=firmado')).json.total_count
    expect((await writer.get('/console/documentos?estado=firmado')).html).toContain(`${apiCount} documento`)
  })

  test('a bad filter value is 400 with the API\'s field error beside its field', async () => {
    const bad = await writer.get('/console/documentos?estado=inventado')
    expect(bad.status).toBe(400)
    const apiAnswer = await api(a, '/dte?estado=inventado')
    expect(apiAnswer.status).toBe(400)
    expect(apiAnswer.json.details[0].field).toBe('estado')
    expect(bad.html).toContain('id="f-estado-error"')
    expect(bad.html).toMatch(/id="f-estado"[^>]*aria-invalid="true"/)
    expect(bad.html).toContain('href="#f-estado"')
    // The service's own rules: a RUT whose check digit is wrong, an empty date range.
    const rut = await writer.get('/console/documentos?rut_receptor=76086428-1')
    expect(rut.status).toBe(400)
    expect(rut.html).toMatch(/id="f-rut_receptor-error" class="field-error">RUT inválido\./)
    expect(rut.html).toContain('value="76086428-1"')
    const range = await writer.get('/console/documentos?fecha_desde=2026-05-01&fecha_hasta=2026-04-01')
    expect(range.html).toContain('id="f-fecha_desde-error"')
    const fecha = await writer.get('/console/documentos?fecha_hasta=ayer')
    expect(fecha.html).toMatch(/id="f-fecha_hasta-error" class="field-error">Formato inválido\./)
    const tipo = await writer.get('/console/documentos?tipo_dte=35')
    expect(tipo.html).toMatch(/id="f-tipo_dte-error" class="field-error">Tipo de DTE desconocido\./)
    // A shape error and a rule error in one submission: both named at once.
    const both = await writer.get('/console/documentos?estado=inventado&rut_receptor=1-1')
    expect(both.html).toContain('id="f-estado-error"')
    expect(both.html).toContain('id="f-rut_receptor-error"')
  })

  test('more than 20: "Siguiente página" carries the cursor and the filters; the next page holds the rest', async () => {
    const extra = []
    for (let i = 0; i < 19; i++) extra.push(await issue(s, a, facturaSimple({ tipo_dte: 34, auto_send: false })))
    expect(extra.every((r) => r.status === 201)).toBe(true)
    const first = await writer.get('/console/documentos?tipo_dte=34')
    expect(first.html).toContain('20 documentos')
    expect(rowsOf(first.html)).toHaveLength(20)
    const all = await writer.get('/console/documentos')
    expect(all.html).toContain('22 documentos')
    expect(rowsOf(all.html)).toHaveLength(20)
    const next = /<a href="([^"]+)" rel="next">Siguiente página<\/a>/.exec(all.html)?.[1]?.replace(/&amp;/g, '&')
    expect(next).toBeDefined()
    const second = await writer.get(next!)
    expect(rowsOf(second.html).map((r) => r.folio)).toEqual([exenta.folio, factura.folio])
    expect(second.html).not.toContain('Siguiente página')
    expect(second.html).toContain('Primera página')
    const nextFiltered = /<a href="([^"]+)" rel="next">/.exec((await writer.get('/console/documentos?tipo_dte=33')).html)
    expect(nextFiltered).toBeNull()
    const cursorBad = await writer.get('/console/documentos?cursor=zzz')
    expect(cursorBad.status).toBe(400)
    expect(cursorBad.html).toContain('Cursor inválido')
  }, 30_000)
})

describe('the detail', () => {
  test('shows emisor, receptor, folio, lines, totals, metadata, tracking and the PDF preview', async () => {
    const page = await writer.get(`/console/documentos/${factura.id}`)
    expect(page.status).toBe(200)
    const clp = (n: number) => `$ ${new Intl.NumberFormat('es-CL').format(n)}`
    expect(page.html).toContain(`FACTURA ELECTRÓNICA N° ${factura.folio}`)
    expect(page.html).toContain('Empresa Documentos SpA')
    expect(page.html).toContain('Ferretería y Construcción Ñuble Limitada')
    expect(page.html).toContain('Martillo carpintero 16 oz')
    expect(page.html).toContain(clp(26970)) // 3 × 8 990
    expect(page.html).toContain(clp(4482)) // 2 × 2 490 − 10 %
    for (const n of [factura.monto_neto, factura.iva, factura.monto_total]) expect(page.html).toContain(clp(n))
    expect(page.html).toContain('P-77')
    expect(page.html).toContain('Seguimiento en el SII')
    expect(page.html).toContain(`<iframe class="pdf" title="Vista previa del PDF" src="/console/documentos/${factura.id}/pdf">`)
    expect(page.html).toContain(`href="/console/documentos/${factura.id}/pdf?cedible=true"`)
    expect(page.html).toContain(`href="/console/documentos/${factura.id}/xml"`)
  })

  test('?aviso=emitido says the folio; an unknown id, a malformed one and /documentos/nuevo are told apart', async () => {
    const page = await writer.get(`/console/documentos/${exenta.id}?aviso=emitido`)
    expect(page.html).toContain(`Documento emitido y firmado con folio ${exenta.folio}.`)
    expect((await writer.get(`/console/documentos/${crypto.randomUUID()}`)).status).toBe(404)
    expect((await writer.get('/console/documentos/no-es-un-id')).status).toBe(404)
    // The issuance form's static path wins over /documentos/:id (emitir.tsx is registered after this screen).
    const nuevo = await writer.get('/console/documentos/nuevo')
    expect(nuevo.status).not.toBe(404)
    expect(nuevo.html).not.toContain('Recurso no encontrado.')
  })

  test('the estado badge polls while the SII holds the DTE and answers a final badge without hx-trigger once decided', async () => {
    const moving = await writer.get(`/console/documentos/${factura.id}/estado`)
    expect(moving.status).toBe(200)
    expect(moving.html).toBe(
      `<span class="badge badge-neutral" hx-get="/console/documentos/${factura.id}/estado?visto=firmado" hx-trigger="every 3s" hx-swap="outerHTML">Firmado</span>`,
    )
    // The detail page's badge asks for a reload once the estado moves, so tracking and SII codes follow it.
    const detailPoll = `/console/documentos/${factura.id}/estado?visto=firmado&detalle=1`
    expect((await writer.get(`/console/documentos/${factura.id}`)).html).toContain(detailPoll.replace('&', '&amp;'))
    expect((await writer.get(detailPoll)).headers.get('hx-refresh')).toBeNull()
    // In the page, inside a live region that stays while the badge swaps itself.
    expect((await writer.get(`/console/documentos/${factura.id}`)).html).toContain(`<span class="estado" aria-live="polite"><span class="badge badge-neutral" hx-get=`)
    // A firmado DTE without auto_send waits for a person: no polling.
    expect((await writer.get(`/console/documentos/${exenta.id}/estado`)).html).toBe('<span class="badge badge-neutral">Firmado</span>')
    const [ok, no] = await untilFinal(a, [factura.id, rechazada.id])
    expect(ok.estado).toBe('aceptado')
    expect(no.estado).toBe('rechazado')
    const accepted = await writer.get(`/console/documentos/${factura.id}/estado`)
    expect(accepted.html).toBe('<span class="badge badge-ok">Aceptado</span>')
    expect(accepted.headers.get('hx-refresh')).toBeNull()
    expect((await writer.get(detailPoll)).headers.get('hx-refresh')).toBe('true')
    expect((await writer.get(`/console/documentos/${rechazada.id}/estado`)).html).toBe('<span class="badge badge-bad">Rechazado</span>')
    const list = await writer.get('/console/documentos?tipo_dte=33')
    expect(list.html).not.toContain('hx-trigger')
  }, 30_000)

  test('after the SII decides, the detail shows the track id, the SII codes and their history, and the exchange', async () => {
    const dte = (await api(a, `/dte/${rechazada.id}`)).json
    const page = await writer.get(`/console/documentos/${rechazada.id}`)
    expect(dte.tracking.track_id).not.toBeNull()
    expect(page.html).toContain(dte.tracking.track_id)
    expect(page.html).toContain('Historial del SII')
    for (const h of dte.historial_sii) expect(page.html).toContain(`<code>${h.estado}</code>`)
    for (const m of dte.sii_status.motivos) expect(page.html).toContain(`<code>${m.codigo}</code>`)
    const accepted = await writer.get(`/console/documentos/${factura.id}`)
    expect(accepted.html).toContain('Intercambio con el receptor')
    const record = (await api(a, `/dte/${factura.id}`)).json
    if (record.intercambio) expect(accepted.html).toContain('Correo del receptor')
    // A decided DTE cannot be sent again.
    expect(accepted.html).not.toContain('Enviar al SII</button>')
  })
})

describe('Enviar al SII', () => {
  test('a firmado DTE without auto_send: the form posts, the API then says enviando, and the badge starts polling', async () => {
    const before = await writer.get(`/console/documentos/${exenta.id}`)
    expect(before.html).toContain(`action="/console/documentos/${exenta.id}/enviar"`)
    const sent = await writer.post(`/console/documentos/${exenta.id}/enviar`, {})
    expect(sent.status).toBe(303)
    expect(sent.location).toBe(`/console/documentos/${exenta.id}?aviso=enviado`)
    expect((await api(a, `/dte/${exenta.id}`)).json.estado).toBe('enviando')
    const after = await writer.get(sent.location!)
    expect(after.html).toContain('Documento en cola para su envío al SII')
    expect(after.html).not.toContain('Enviar al SII</button>')
    expect((await writer.get(`/console/documentos/${exenta.id}/estado`)).html).toContain('hx-trigger="every 3s"')
    // Twice: the API's 409, shown on the page.
    const again = await writer.post(`/console/documentos/${exenta.id}/enviar`, {})
    expect(again.status).toBe(409)
    expect(again.html).toContain('El DTE no está en estado firmado y no puede enviarse.')
  })
})

describe('PDF and XML', () => {
  test('the PDF is application/pdf, inline, not cached, and may be framed by this origin only', async () => {
    const res = await fetch(`${s.url}/console/documentos/${factura.id}/pdf`, { headers: { cookie: writer.cookie } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/pdf')
    expect(res.headers.get('content-disposition')).toBe(`inline; filename="DTE-33-F${factura.folio}.pdf"`)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('content-security-policy')).toBe("frame-ancestors 'self'")
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN')
    expect(Buffer.from(await res.arrayBuffer()).subarray(0, 5).toString('latin1')).toBe('%PDF-')
    const cedible = await writer.get(`/console/documentos/${factura.id}/pdf?cedible=true&formato=termico`)
    expect(cedible.status).toBe(200)
    expect((await writer.get(`/console/documentos/${factura.id}/pdf?formato=a4`)).status).toBe(400)
  })

  test('the XML is the stored bytes of GET /dte/{id}/xml, ISO-8859-1, as an attachment', async () => {
    const res = await fetch(`${s.url}/console/documentos/${factura.id}/xml`, { headers: { cookie: writer.cookie } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/xml; charset=ISO-8859-1')
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="DTE-33-F${factura.folio}.xml"`)
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from(await storedXml(s, a, factura.id)))
  })
})

describe('who sees what', () => {
  test("another company's user gets 404 for every route of a DTE of A, and an empty list", async () => {
    const other = await consoleLogin(s, b.writeKey)
    for (const path of ['', '/estado', '/pdf', '/xml']) expect((await other.get(`/console/documentos/${factura.id}${path}`)).status).toBe(404)
    expect((await other.post(`/console/documentos/${factura.id}/enviar`, {})).status).toBe(404)
    expect((await other.get('/console/documentos')).html).toContain('0 documentos')
  })

  test('a read-only key sees the detail without the "Enviar al SII" form, and its POST is refused with 403', async () => {
    const dte = await issued(a, facturaSimple({ tipo_dte: 34, auto_send: false }))
    const reader = await consoleLogin(s, a.readKey)
    const page = await reader.get(`/console/documentos/${dte.id}`)
    expect(page.status).toBe(200)
    expect(page.html).toContain(`N° ${dte.folio}`)
    expect(page.html).not.toContain('/enviar"')
    expect(page.html).not.toContain('Enviar al SII</button>')
    const refused = await reader.post(`/console/documentos/${dte.id}/enviar`, {})
    expect(refused.status).toBe(403)
    expect((await api(a, `/dte/${dte.id}`)).json.estado).toBe('firmado')
  })

  test('the administrator sees the company it chose', async () => {
    const admin = await consoleAdmin(s, a.empresa.id)
    expect((await admin.get(`/console/documentos/${factura.id}`)).status).toBe(200)
    expect((await admin.get('/console/documentos')).html).toContain('23 documentos')
  })
})
