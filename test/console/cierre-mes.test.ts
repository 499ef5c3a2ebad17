// The console's Cierre del mes (DESIGN §16 "Console", issue 29) through real parts: a server with the in-process SII
// simulator, three companies whose RCV copies are stored by the real sync service (a fake portal client answers in place
// of the SII's portal), a supplier that issues real facturas to one of them, and what each page shows compared with what
// the API answers for the same period (GET /rcv, /conciliacion, /f29 and the SII's files) and with sums this file makes
// from the documents it wrote.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { formatRut } from '../../src/console/forms'
import { formatPesos } from '../../src/domain/numero-cl'
import { TIPOS } from '../../src/domain/tipos'
import { periodoAnterior, periodoOf } from '../../src/services/rcv'
import { followRecibidos } from '../../src/services/recibidos-sii'
import { testClock } from '../support/clock'
import { consoleAccountLogin, consoleAdmin, consoleLogin, type ConsoleClient } from '../support/console'
import { insertAccount, upsertMembership } from '../../src/db/console-account-store'
import { uploadCertificate } from '../support/issuance'
import { detalleRcv, failMirror, storeMirror } from '../support/rcv-mirror'
import { acceptedBySii, API, envioFor, facturaPara, importar, issueFrom, supplier } from '../support/received'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

setDefaultTimeout(60_000)

const clock = testClock()
let s: TestServer
let a: Tenant
let b: Tenant
let c: Tenant
let prov: Tenant
let wa: ConsoleClient
let ra: ConsoleClient
let pendientes: string[] = []

/** The month being closed (the pages' default), the one before it, and one never read by anyone. */
const P = periodoAnterior(periodoOf(clock.now()))
const P2 = periodoAnterior(P)
const P3 = periodoAnterior(P2)
const dia = (periodo: string, d: number) => `${periodo.slice(0, 4)}-${periodo.slice(4, 6)}-${String(d).padStart(2, '0')}`

const PROVEEDOR = { rut: '76086428-5', razonSocial: 'Ferretería Ñandú Ltda.' }
const CLIENTE = { rut: '77777777-7', razonSocial: 'Cliente Mayorista SpA' }
/** A: two sales, one purchase: débito 38.000 + 9.500, crédito 19.000, IVA a pagar 28.500. */
const A_COMPRAS = [detalleRcv({ ...PROVEEDOR, folio: 501, fecha: dia(P, 3), neto: 100_000, iva: 19_000 })]
const A_VENTAS = [
  detalleRcv({ ...CLIENTE, folio: 11, fecha: dia(P, 5), neto: 200_000, iva: 38_000 }),
  detalleRcv({ ...CLIENTE, folio: 12, fecha: dia(P, 6), neto: 50_000, iva: 9_500 }),
]
/** B: one sale, one big purchase: débito 19.000, crédito 57.000, a remanente of 38.000. */
const B_COMPRAS = [detalleRcv({ ...PROVEEDOR, folio: 777, fecha: dia(P, 8), neto: 300_000, iva: 57_000 })]
const B_VENTAS = [detalleRcv({ ...CLIENTE, folio: 90, fecha: dia(P, 9), neto: 100_000, iva: 19_000 })]

const ivaDe = (ds: ReadonlyArray<{ montoIva: number | null }>) => ds.reduce((sum, d) => sum + (d.montoIva ?? 0), 0)

/** The page's text as a person reads it: tags dropped, preact's entities decoded. */
const textOf = (html: string) =>
  html.replace(/<[^>]+>/g, ' ').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').replace(/\s+/g, ' ')
/** The element with this id, whole (up to its closing tag of the same name; elements here do not nest in themselves). */
function elementOf(html: string, id: string): string {
  const start = html.indexOf(`id="${id}"`)
  if (start < 0) return ''
  const open = html.lastIndexOf('<', start)
  const tag = /^<(\w+)/.exec(html.slice(open))![1]!
  return html.slice(open, html.indexOf(`</${tag}>`, start) + tag.length + 3)
}
const rowOf = (html: string, attr: string) => html.split('<tr ').find((r) => r.includes(attr)) ?? ''
const api = async (t: Tenant, path: string) => (await s.request('GET', `${API}${path}`, { headers: { 'X-Api-Key': t.readKey } })).json

beforeAll(async () => {
  s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  a = await s.tenant(testRut(), 'Comercial Uno SpA')
  b = await s.tenant(testRut(), 'Comercial Dos Ltda.')
  c = await s.tenant(testRut(), 'Sin Copia SpA')
  await uploadCertificate(s, a)
  await uploadCertificate(s, b)
  await storeMirror(s.server.deps, a.empresa.id, P, { compras: { registro: A_COMPRAS }, ventas: A_VENTAS })
  await storeMirror(s.server.deps, b.empresa.id, P, { compras: { registro: B_COMPRAS }, ventas: B_VENTAS })
  await failMirror(s.server.deps, b.empresa.id, P2, 'tope_sesiones', 'Hay 3 sesiones abiertas.')
  // Two real facturas from a supplier, received by A and waiting for its acceptance (the pending board).
  prov = await supplier(s)
  const docs = [await issueFrom(s, prov, facturaPara(a)), await issueFrom(s, prov, facturaPara(a))]
  await acceptedBySii(s, clock, prov, docs.map((d) => d.id))
  const res = await importar(s, a, envioFor(prov, a, docs.map((d) => d.xml)))
  if (res.status !== 201) throw new Error(`import failed: ${res.status} ${res.text}`)
  pendientes = res.json.documentos.map((d: { id: string }) => d.id)
  await followRecibidos(s.server.deps)
  wa = await consoleLogin(s, a.writeKey)
  ra = await consoleLogin(s, a.readKey)
}, 120_000)
afterAll(() => s?.stop())

describe('the company view', () => {
  test('a menu entry; by default the month before this one, its RCV state and the SII summaries', async () => {
    expect((await wa.get('/console/documentos')).html).toContain('<a href="/console/cierre-mes">Cierre del mes</a>')
    const page = await wa.get('/console/cierre-mes')
    expect(page.status).toBe(200)
    expect(page.html).toContain('<a href="/console/cierre-mes" aria-current="page">Cierre del mes</a>')
    expect(page.html).toContain(`<option value="${P}" selected>`)
    const estado = await api(a, `/rcv/${P}`)
    expect(estado.estado).toBe('sincronizado')
    expect(elementOf(page.html, 'estado-rcv')).toContain('Copia al día')
    const text = textOf(page.html)
    expect(text).toMatch(/Leída del SII \d{2}-\d{2}-\d{4} \d{2}:\d{2}/)
    // The summaries are the SII's per type: one purchase of 119.000, two sales of 297.500 in all.
    const compras = textOf(elementOf(page.html, 'resumen-compras-registro'))
    expect(compras).toContain(`33 ${TIPOS[33].nombre} · 1 documento 1 `)
    expect(compras).toContain(formatPesos(119_000))
    const ventas = textOf(elementOf(page.html, 'resumen-ventas'))
    expect(ventas).toContain(`33 ${TIPOS[33].nombre} · 2 documentos 2 `)
    expect(ventas).toContain(formatPesos(47_500))
    expect(ventas).toContain(formatPesos(297_500))
    expect(textOf(elementOf(page.html, 'resumen-compras-pendiente'))).toContain('sin documentos')
  })

  test('the findings grouped by kind with their documents, as GET /conciliacion counts them', async () => {
    const page = await wa.get(`/console/cierre-mes?periodo=${P}`)
    const conciliacion = await api(a, `/conciliacion/${P}`)
    // Nothing of this month was issued or received in Timbre: the SII's three documents have none behind them.
    expect(conciliacion.por_tipo).toEqual({ compra_sin_documento: 1, venta_sin_documento: 2 })
    expect(textOf(elementOf(page.html, 'hallazgos-total')).trim()).toBe('3 hallazgos.')
    expect(textOf(elementOf(page.html, 'hallazgo-compra_sin_documento')).trim()).toBe('Compras del RCV sin documento en Timbre (1)')
    expect(textOf(elementOf(page.html, 'hallazgo-venta_sin_documento')).trim()).toBe('Ventas del RCV no emitidas por Timbre (2)')
    const text = textOf(page.html)
    expect(text).toContain(`${TIPOS[33].nombre} N° 501, RUT ${formatRut(PROVEEDOR.rut)} en el Registro de Compras (Registro)`)
    for (const folio of [11, 12]) expect(text).toContain(`${TIPOS[33].nombre} N° ${folio}, RUT ${formatRut(CLIENTE.rut)} en el Registro de Ventas`)
  })

  test('the F29 sheet: every code of GET /f29 with its glosa and value in pesos, the unconfirmed marked with their source', async () => {
    const page = await wa.get(`/console/cierre-mes?periodo=${P}`)
    const f29 = await api(a, `/f29/${P}`)
    expect(f29.origen).toBe('rcv')
    const value = (code: number) => f29.codigos.find((x: { codigo: number }) => x.codigo === code).valor
    expect([value(502), value(538), value(520), value(537), value(89)]).toEqual([ivaDe(A_VENTAS), ivaDe(A_VENTAS), ivaDe(A_COMPRAS), ivaDe(A_COMPRAS), 28_500])
    for (const code of f29.codigos) {
      const row = textOf(elementOf(page.html, `f29-${code.codigo}`))
      expect(row).toContain(`${code.codigo} ${code.glosa}`)
      expect(row).toContain(code.glosa.startsWith('Cantidad') ? ` ${code.valor} ` : formatPesos(code.valor))
      expect(row.includes('Sin confirmar')).toBe(!code.confirmado)
      if (!code.confirmado) expect(row).toContain(code.fuente)
      expect(row.trim().endsWith(String(code.documentos.length))).toBe(true)
    }
    const resultado = textOf(elementOf(page.html, 'f29-89')).trim()
    expect(resultado.startsWith('89 IVA determinado a pagar')).toBe(true)
    expect(resultado.endsWith(`${formatPesos(28_500)} 3`)).toBe(true)
    const warnings = textOf(elementOf(page.html, 'f29-advertencias'))
    for (const w of f29.advertencias) expect(warnings).toContain(`${w.bloquea ? 'Bloquea' : 'Aviso'} ${w.mensaje}`)
    expect(page.html).toContain('Con advertencias que bloquean')
  })

  test('the downloads are the API\'s files, byte for byte', async () => {
    const page = await wa.get(`/console/cierre-mes?periodo=${P}`)
    const links = [...elementOf(page.html, 'descargas').matchAll(/href="([^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'))
    expect(links).toEqual([
      ...['registro', 'pendiente', 'no_incluir', 'reclamado'].map((sec) => `/console/cierre-mes/compras.csv?periodo=${P}&seccion=${sec}`),
      `/console/cierre-mes/ventas.csv?periodo=${P}`,
      `/console/cierre-mes/compras.xlsx?periodo=${P}`,
      `/console/cierre-mes/ventas.xlsx?periodo=${P}`,
    ])
    const apiPaths = [
      ...['registro', 'pendiente', 'no_incluir', 'reclamado'].map((sec) => `/rcv/${P}/compras.csv?seccion=${sec}`),
      `/rcv/${P}/ventas.csv`, `/rcv/${P}/compras.xlsx`, `/rcv/${P}/ventas.xlsx`,
    ]
    for (const [i, link] of links.entries()) {
      const mine = await fetch(s.url + link, { headers: { cookie: wa.cookie } })
      const theirs = await fetch(`${s.url}${API}${apiPaths[i]}`, { headers: { 'X-Api-Key': a.readKey } })
      expect(mine.status).toBe(200)
      expect(mine.headers.get('content-type')).toBe(theirs.headers.get('content-type'))
      expect(mine.headers.get('content-disposition')).toBe(theirs.headers.get('content-disposition'))
      expect(Buffer.from(await mine.arrayBuffer()).equals(Buffer.from(await theirs.arrayBuffer()))).toBe(true)
    }
    const csv = await (await fetch(s.url + links[4]!, { headers: { cookie: wa.cookie } })).text()
    expect(csv.split('\r\n').filter(Boolean)).toHaveLength(1 + A_VENTAS.length)
  })

  test('a period never read: its state in words, no links, and a download asked anyway is a 409 page, not a crash', async () => {
    const page = await wa.get(`/console/cierre-mes?periodo=${P3}`)
    expect(page.status).toBe(200)
    expect(elementOf(page.html, 'estado-rcv')).toContain('Sin leer del SII')
    expect(elementOf(page.html, 'descargas')).not.toContain('href=')
    for (const file of ['compras.csv', 'ventas.csv', 'compras.xlsx', 'ventas.xlsx']) {
      const res = await wa.get(`/console/cierre-mes/${file}?periodo=${P3}`)
      expect(res.status).toBe(409)
      expect(res.headers.get('content-type')).toContain('text/html')
      expect(textOf(elementOf(res.html, 'descargas'))).toContain('Ese período del RCV no se ha leído del SII.')
    }
  })

  test('a failed read shows why, and that the last good copy stays', async () => {
    const wb = await consoleLogin(s, b.writeKey)
    const page = await wb.get(`/console/cierre-mes?periodo=${P2}`)
    expect(elementOf(page.html, 'estado-rcv')).toContain('Falló la última lectura')
    const falla = (await api(b, `/rcv/${P2}`)).falla
    expect(textOf(elementOf(page.html, 'falla-rcv'))).toContain(falla.mensaje)
    expect(falla.mensaje).toContain('Hay 3 sesiones abiertas.')
  })

  test('a period the API refuses is refused on the page, beside the picker, with its 400', async () => {
    for (const bad of ['201701', '2026-13', `${Number(periodoOf(clock.now())) + 100}`]) {
      const page = await wa.get(`/console/cierre-mes?periodo=${encodeURIComponent(bad)}`)
      expect(page.status).toBe(400)
      expect(page.html).toContain('class="error-summary"')
      expect(page.html).not.toContain('id="f29"')
    }
  })
})

describe('«Leer del SII»', () => {
  test('a writer asks for the read: post/redirect/get with a notice, and the API sees the request', async () => {
    const res = await wa.post('/console/cierre-mes/sincronizar', { periodo: P2 })
    expect(res.status).toBe(303)
    expect(res.location).toBe(`/console/cierre-mes?periodo=${P2}&aviso=lectura`)
    const page = await wa.get(res.location!)
    expect(page.html).toContain('Lectura del RCV pedida')
    // The rcv job takes the request within seconds (and this server's portal cannot answer): any state but "never".
    const estado = await api(a, `/rcv/${P2}`)
    expect(['pendiente', 'sincronizando', 'fallido']).toContain(estado.estado)
  })

  test('lectura sees no button and its post is refused; a post without the CSRF token too; nothing is asked', async () => {
    const page = await ra.get(`/console/cierre-mes?periodo=${P3}`)
    expect(page.status).toBe(200)
    expect(page.html).not.toContain('action="/console/cierre-mes/sincronizar"')
    expect((await wa.get(`/console/cierre-mes?periodo=${P3}`)).html).toContain('action="/console/cierre-mes/sincronizar"')
    expect((await ra.post('/console/cierre-mes/sincronizar', { periodo: P3 })).status).toBe(403)
    expect((await wa.post('/console/cierre-mes/sincronizar', { periodo: P3 }, { withoutCsrf: true })).status).toBe(403)
    expect((await wa.post('/console/cierre-mes/sincronizar', { periodo: P3 }, { headers: { origin: 'https://evil.example' } })).status).toBe(403)
    expect((await api(a, `/rcv/${P3}`)).estado).toBe('sin_sincronizar')
  })

  test('a company without a certificate is told so beside the button, with the API\'s status', async () => {
    const wc = await consoleLogin(s, c.writeKey)
    const res = await wc.post('/console/cierre-mes/sincronizar', { periodo: P })
    expect(res.status).toBe(422)
    expect(textOf(elementOf(res.html, 'rcv'))).toContain('Suba el certificado de la empresa en la sección Certificado.')
    expect((await api(c, `/rcv/${P}`)).estado).toBe('sin_sincronizar')
  })
})

describe('the administrator\'s month', () => {
  /** What this file wrote for each company, summed here. */
  const expected = () => [
    { t: a, estado: 'Copia al día', hallazgos: 3, debito: ivaDe(A_VENTAS), credito: ivaDe(A_COMPRAS) },
    { t: b, estado: 'Copia al día', hallazgos: 2, debito: ivaDe(B_VENTAS), credito: ivaDe(B_COMPRAS) },
    { t: c, estado: 'Sin leer del SII', hallazgos: 0, debito: 0, credito: 0 },
    { t: prov, estado: 'Sin leer del SII', hallazgos: 0, debito: 0, credito: 0 },
  ]

  test('every company in one table: RCV state, findings, débito, crédito, IVA a pagar or remanente', async () => {
    const admin = await consoleAdmin(s)
    const page = await admin.get(`/console/cierre-mes/empresas?periodo=${P}`)
    expect(page.status).toBe(200)
    expect(page.html.match(/<tr data-empresa=/g)).toHaveLength(4)
    for (const e of expected()) {
      const row = rowOf(page.html, `data-empresa="${e.t.empresa.id}"`)
      const text = textOf(row)
      expect(text).toContain(e.t.empresa.razon_social)
      expect(text).toContain(formatRut(e.t.empresa.rut))
      expect(text).toContain(e.estado)
      expect(textOf(/<td class="num col-menor hallazgos">.*?<\/td>/.exec(row)![0]).trim()).toBe(String(e.hallazgos))
      expect(textOf(/<td class="num col-menor debito">.*?<\/td>/.exec(row)![0]).trim()).toBe(formatPesos(e.debito))
      expect(textOf(/<td class="num col-menor credito">.*?<\/td>/.exec(row)![0]).trim()).toBe(formatPesos(e.credito))
      const iva = e.debito - e.credito
      const cell = textOf(/<td class="num iva">(.*?)<\/td>/.exec(row)![1]!).trim()
      expect(cell).toBe(iva < 0 ? `Remanente ${formatPesos(-iva)}` : formatPesos(iva))
    }
  })

  test('the table as a CSV with the same figures', async () => {
    const admin = await consoleAdmin(s)
    const res = await fetch(`${s.url}/console/cierre-mes/empresas.csv?periodo=${P}`, { headers: { cookie: admin.cookie } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="cierre_${P}.csv"`)
    const lines = (await res.text()).replace(/^\uFEFF/, '').split('\r\n').filter(Boolean).map((l) => l.split(';'))
    expect(lines[0]!.slice(0, 3)).toEqual(['Periodo', 'RUT', 'Razon social'])
    for (const e of expected()) {
      const line = lines.find((l) => l[1] === e.t.empresa.rut)!
      const iva = e.debito - e.credito
      expect(line[6]).toBe(String(e.hallazgos))
      expect(line.slice(8, 12)).toEqual([String(e.debito), String(e.credito), String(iva), iva < 0 ? 'Remanente de credito fiscal (77)' : 'IVA a pagar (89)'])
    }
  })

  test('a row leads to that company\'s view, switching the console to it', async () => {
    const admin = await consoleAdmin(s)
    const res = await admin.post('/console/cierre-mes/empresas/ver', { empresa_id: b.empresa.id, periodo: P })
    expect(res.status).toBe(303)
    expect(res.location).toBe(`/console/cierre-mes?periodo=${P}`)
    const page = await admin.get(res.location!)
    expect(page.html).toContain(`<option value="${b.empresa.id}" selected>`)
    const resultado = textOf(elementOf(page.html, 'f29-77')).trim()
    expect(resultado.startsWith('77 Remanente de crédito fiscal')).toBe(true)
    expect(resultado.endsWith(`${formatPesos(38_000)} 2`)).toBe(true)
  })

  test('no one else reaches it', async () => {
    expect((await wa.get(`/console/cierre-mes/empresas?periodo=${P}`)).status).toBe(404)
    expect((await wa.get(`/console/cierre-mes/empresas.csv?periodo=${P}`)).status).toBe(404)
    expect((await wa.post('/console/cierre-mes/empresas/ver', { empresa_id: b.empresa.id })).status).toBe(404)
    expect((await wa.get('/console/cierre-mes')).html).not.toContain('Todas las empresas')
  })
})

describe('the pending board', () => {
  test('a person with accounts in several companies sees each one\'s, and may switch only to theirs', async () => {
    const now = new Date().toISOString()
    const email = `contadora.${Date.now()}@ejemplo.cl`
    const account = insertAccount(s.server.deps.store.db, { id: crypto.randomUUID(), email, nombre: 'Contadora', password_hash: await Bun.password.hash('una frase bastante larga'), failed_logins: 0, created_at: now, updated_at: now })
    for (const t of [b, a]) upsertMembership(s.server.deps.store.db, { account_id: account.id, empresa_id: t.empresa.id, role: 'emisor', created_at: now })
    const person = await consoleAccountLogin(s, email, 'una frase bastante larga')
    const page = await person.get('/console/cierre-mes/pendientes')
    expect(page.status).toBe(200)
    const rows = [...page.html.matchAll(/<tr data-recibido="([^"]+)"/g)].map((m) => m[1])
    // A's open facturas are on the board of a person whose current company may be B.
    for (const id of pendientes.slice(1)) expect(rows).toContain(id)
    expect(textOf(page.html)).toContain(a.empresa.razon_social)
    // Switching to one of theirs works; to a company not theirs is 404, as another company's data.
    expect((await person.post('/console/cierre-mes/empresas/ver', { empresa_id: a.empresa.id, recibido_id: pendientes[1]! })).status).toBe(303)
    expect((await person.post('/console/cierre-mes/empresas/ver', { empresa_id: c.empresa.id })).status).toBe(404)
    // A company user (API key) still sees only its own company.
    const onlyB = await consoleLogin(s, b.readKey)
    expect((await onlyB.get('/console/cierre-mes/pendientes')).html).not.toContain(`data-recibido="${pendientes[1]}"`)
  })

  test('the company\'s open facturas, oldest deadline first, with days left and the Recibidos screen\'s actions', async () => {
    const page = await wa.get('/console/cierre-mes/pendientes')
    expect(page.status).toBe(200)
    const rows = [...page.html.matchAll(/<tr data-recibido="([^"]+)"/g)].map((m) => m[1])
    const api = (await s.request('GET', `${API}/recibidos?pendientes=true`, { headers: { 'X-Api-Key': a.readKey } })).json
    expect(rows).toEqual(api.items.map((r: { id: string }) => r.id))
    expect(new Set(rows)).toEqual(new Set(pendientes))
    for (const item of api.items as Array<{ id: string; dias_restantes: number }>) {
      const id = item.id
      const row = rowOf(page.html, `data-recibido="${id}"`)
      expect(item.dias_restantes).toBeGreaterThan(1)
      expect(textOf(row)).toMatch(new RegExp(` ${item.dias_restantes} días hasta \\d{2}-\\d{2}-\\d{4}`))
      expect(row).toContain(`action="/console/recibidos/${id}/acciones"`)
      expect(row).toContain(`href="/console/recibidos/${id}#responder"`)
    }
  })

  test('accepting from the board goes through the Recibidos action, and the factura leaves the board', async () => {
    const id = pendientes[0]!
    const res = await wa.post(`/console/recibidos/${id}/acciones`, { accion: 'ACD' })
    expect(res.status).toBe(303)
    expect((await api(a, `/recibidos/${id}`)).estado).toBe('aceptado')
    const page = await wa.get('/console/cierre-mes/pendientes')
    expect(page.html).not.toContain(`data-recibido="${id}"`)
    expect(page.html).toContain(`data-recibido="${pendientes[1]}"`)
  })

  test('lectura sees the board without actions; the administrator sees every company\'s, each behind a switch', async () => {
    const ro = await ra.get('/console/cierre-mes/pendientes')
    expect(ro.html).toContain(`data-recibido="${pendientes[1]}"`)
    expect(ro.html).not.toContain('/acciones"')
    const admin = await consoleAdmin(s, b.empresa.id)
    const page = await admin.get('/console/cierre-mes/pendientes')
    const row = rowOf(page.html, `data-recibido="${pendientes[1]}"`)
    expect(textOf(row)).toContain(a.empresa.razon_social)
    expect(row).toContain('action="/console/cierre-mes/empresas/ver"')
    const go = await admin.post('/console/cierre-mes/empresas/ver', { empresa_id: a.empresa.id, recibido_id: pendientes[1]! })
    expect(go.status).toBe(303)
    expect(go.location).toBe(`/console/recibidos/${pendientes[1]}#responder`)
    expect((await admin.get(`/console/recibidos/${pendientes[1]}`)).status).toBe(200)
  })
})
