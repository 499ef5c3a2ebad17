// Console received documents (DESIGN §13, §14) against a real server, a real SQLite file and the in-process SII
// simulator: a supplier company of the same server issues to the receiver, the simulator accepts its DTEs (so its
// RegistroReclamoDTE knows them), and the receiver imports the supplier's EnvioDTE, as test/http/recibidos-acciones
// does. What the console's forms do is what the API then answers. One test clock moves server, simulator and the 8 days.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { formatRut } from '../../src/console/forms'
import { followRecibidos } from '../../src/services/recibidos-sii'
import { testClock } from '../support/clock'
import { consoleLogin, type ConsoleClient } from '../support/console'
import { uploadCertificate } from '../support/issuance'
import { acceptedBySii, API, envioFor, facturaPara, importar, issueFrom, supplier, type IssuedToReceiver } from '../support/received'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const DAY = 86_400_000
const clock = testClock()
let s: TestServer
let receiver: Tenant
let prov: Tenant
let other: Tenant
let docs: IssuedToReceiver[] = []
let ids: string[] = []
let w: ConsoleClient
let ro: ConsoleClient

beforeAll(async () => {
  s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  receiver = await s.tenant(testRut(), 'Compradora del Sur Ltda.')
  await uploadCertificate(s, receiver)
  prov = await supplier(s)
  other = await s.tenant(testRut(), 'Otra Compradora SpA')
  for (let i = 0; i < 2; i++) docs.push(await issueFrom(s, prov, facturaPara(receiver)))
  await acceptedBySii(s, clock, prov, docs.map((d) => d.id))
  const res = await importar(s, receiver, envioFor(prov, receiver, docs.map((d) => d.xml)))
  if (res.status !== 201) throw new Error(`import failed: ${res.status} ${res.text}`)
  ids = res.json.documentos.map((d: { id: string }) => d.id)
  // The SII's reception date starts the 8 days (plazo).
  await followRecibidos(s.server.deps)
  w = await consoleLogin(s, receiver.writeKey)
  ro = await consoleLogin(s, receiver.readKey)
}, 60_000)
afterAll(() => s?.stop())

const apiGet = async (id: string) => (await s.request('GET', `${API}/recibidos/${id}`, { headers: { 'X-Api-Key': receiver.readKey } })).json
const textOfId = (html: string, id: string) => new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html)?.[1] ?? null
/** The table row of the list whose folio link leads to `id`. */
const rowOf = (html: string, id: string) => html.split('<tr>').find((r) => r.includes(`/console/recibidos/${id}"`)) ?? ''

describe('the list', () => {
  test('shows each received document with its emisor, folio, total, estado and the days left of the 8', async () => {
    const page = await w.get('/console/recibidos')
    expect(page.status).toBe(200)
    expect(page.html).toContain('2 documentos')
    const record = await apiGet(ids[0]!)
    expect(record.plazo).toEqual(expect.any(String))
    const row = rowOf(page.html, ids[0]!)
    expect(row).toContain(prov.empresa.razon_social)
    expect(row).toContain(formatRut(prov.empresa.rut))
    expect(row).toContain(`>${docs[0]!.folio}</a>`)
    expect(row).toContain(`$ ${new Intl.NumberFormat('es-CL').format(record.monto_total)}`)
    expect(row).toContain('<span class="badge badge-info">Recibido</span>')
    expect(row).toContain('<span class="badge badge-ok">8 días</span>')
  })

  test("the API's filters: a type with none shows none; a malformed date is 400 beside its field with the API's message", async () => {
    const none = await w.get('/console/recibidos?tipo_dte=34&rut_emisor=')
    expect(none.status).toBe(200)
    expect(none.html).toContain('Ningún documento recibido coincide')
    const byRut = await w.get(`/console/recibidos?rut_emisor=${encodeURIComponent(prov.empresa.rut)}&estado=recibido`)
    expect(byRut.html).toContain('2 documentos')
    const bad = await w.get('/console/recibidos?fecha_desde=ayer')
    expect(bad.status).toBe(400)
    const fromApi = await s.request('GET', `${API}/recibidos?fecha_desde=ayer`, { headers: { 'X-Api-Key': receiver.readKey } })
    expect(fromApi.status).toBe(400)
    expect(textOfId(bad.html, 'f-fecha_desde-error')).toBe(fromApi.json.details[0].message)
  })
  test('pages by cursor with the total count: limit=1 shows one row and a link to the next page, which keeps the filters', async () => {
    const first = await w.get(`/console/recibidos?limit=1&tipo_dte=33`)
    expect(first.html).toContain('2 documentos')
    expect(first.html.match(/<tr>/g)).toHaveLength(2)
    expect(rowOf(first.html, ids[1]!)).not.toBe('')
    const next = /href="(\/console\/recibidos\?[^"]*cursor=[^"]+)"/.exec(first.html)![1]!.replaceAll('&amp;', '&')
    expect(next).toContain('tipo_dte=33')
    const second = await w.get(next)
    expect(second.html.match(/<tr>/g)).toHaveLength(2)
    expect(rowOf(second.html, ids[0]!)).not.toBe('')
    expect(second.html).toContain('Primera página')
    expect(second.html).not.toContain('Página siguiente')
  })
})

describe('the detail', () => {
  test('shows the emisor, the totals, every reception check with its code and result, the forms and the files', async () => {
    const record = await apiGet(ids[0]!)
    const page = await w.get(`/console/recibidos/${ids[0]}`)
    expect(page.status).toBe(200)
    expect(page.html).toContain(`${prov.empresa.razon_social} (${formatRut(prov.empresa.rut)})`)
    expect(page.html).toContain(`$ ${new Intl.NumberFormat('es-CL').format(record.iva)}`)
    for (const c of record.checks as Array<{ check: string; ok: boolean }>) expect(page.html).toContain(`<code>${c.check}</code>`)
    expect(page.html.match(/badge-ok">Correcta</g)).toHaveLength(record.checks.length)
    expect(page.html).toContain('Aún no se ha aceptado ni reclamado.')
    expect(page.html).toContain('name="accion" value="ACD"')
    expect(page.html).toContain('name="accion" value="ERM"')
    expect(page.html).toContain('id="f-motivo"')
    expect(page.html).toContain(`<iframe class="pdf" src="/console/recibidos/${ids[0]}/pdf"`)
  })

  test('its XML answers the exact bytes of the API; its PDF may be framed by the console only', async () => {
    const xml = await fetch(`${s.url}/console/recibidos/${ids[0]}/xml`, { headers: { cookie: w.cookie } })
    expect(xml.status).toBe(200)
    expect(xml.headers.get('content-type')).toBe('application/xml; charset=ISO-8859-1')
    const fromApi = await fetch(`${s.url}${API}/recibidos/${ids[0]}/xml`, { headers: { 'X-Api-Key': receiver.readKey } })
    expect(Buffer.from(await xml.arrayBuffer()).equals(Buffer.from(await fromApi.arrayBuffer()))).toBe(true)
    const pdf = await fetch(`${s.url}/console/recibidos/${ids[0]}/pdf`, { headers: { cookie: w.cookie } })
    expect(pdf.status).toBe(200)
    expect(pdf.headers.get('content-type')).toBe('application/pdf')
    expect(pdf.headers.get('content-security-policy')).toBe("frame-ancestors 'self'")
    expect(pdf.headers.get('x-frame-options')).toBe('SAMEORIGIN')
    expect(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-')
  })
})

describe('actions', () => {
  test('accepting (ACD) through the form: registered at the SII, 303 ?aviso=registrada, and the API shows the action', async () => {
    const posted = await w.post(`/console/recibidos/${ids[0]}/acciones`, { accion: 'ACD' })
    expect(posted.status).toBe(303)
    expect(posted.location).toBe(`/console/recibidos/${ids[0]}?aviso=registrada`)
    const record = await apiGet(ids[0]!)
    expect(record.estado).toBe('aceptado')
    expect(record.acciones).toEqual([expect.objectContaining({ accion: 'ACD', motivo: null, estado: 'registrada', cod_resp: 0 })])
    const page = await w.get(posted.location!)
    expect(page.html).toContain('Acción registrada en el SII')
    expect(page.html).toContain('Aceptación del contenido (ACD)')
    expect(page.html).toContain('<span class="badge badge-ok">Registrada</span>')
    // Accepted: no second acceptance nor a claim is offered; the receipt of goods still is (the SII's order).
    expect(page.html).not.toContain('name="accion" value="ACD"')
    expect(page.html).not.toContain('id="f-motivo"')
    expect(page.html).toContain('name="accion" value="ERM"')
  })

  test('a conflicting claim after it (a stale page): 409 with ACCION_NO_PERMITIDA beside the forms; nothing recorded', async () => {
    const page = await w.post(`/console/recibidos/${ids[0]}/acciones`, { accion: 'RCD', motivo: 'Precios no corresponden' })
    expect(page.status).toBe(409)
    expect(page.html).toContain('class="error-summary"')
    expect(page.html).toContain('La acción no está permitida para este documento en su estado actual.')
    expect(page.html).toContain('el documento ya fue aceptado')
    expect((await apiGet(ids[0]!)).acciones).toHaveLength(1)
  })

  test('a claim without a motivo: 400 beside the motivo field, the kind chosen kept; an unknown accion: 400 beside accion', async () => {
    const page = await w.post(`/console/recibidos/${ids[1]}/acciones`, { accion: 'RFT', motivo: '  ' })
    expect(page.status).toBe(400)
    expect(textOfId(page.html, 'f-motivo-error')).toContain('motivo')
    expect(page.html).toContain('<option value="RFT" selected>')
    const unknown = await w.post(`/console/recibidos/${ids[1]}/acciones`, { accion: 'XYZ' })
    expect(unknown.status).toBe(400)
    expect(unknown.html).toContain('ACD, RCD, ERM, RFP, RFT')
    expect((await apiGet(ids[1]!)).acciones).toEqual([])
  })

  test("another company's document is 404 on every console route, as in the API", async () => {
    const stranger = await consoleLogin(s, other.writeKey)
    for (const path of [`/console/recibidos/${ids[1]}`, `/console/recibidos/${ids[1]}/xml`, `/console/recibidos/${ids[1]}/pdf`, '/console/recibidos/no-es-un-id'])
      expect((await stranger.get(path)).status).toBe(404)
    expect((await stranger.post(`/console/recibidos/${ids[1]}/acciones`, { accion: 'ACD' })).status).toBe(404)
    expect((await stranger.get('/console/recibidos')).html).toContain('Aún no hay documentos recibidos')
    expect((await apiGet(ids[1]!)).acciones).toEqual([])
  })

  test('a read-only key sees the document without action forms, and its POST is refused 403', async () => {
    const page = await ro.get(`/console/recibidos/${ids[1]}`)
    expect(page.status).toBe(200)
    expect(page.html).toContain('<code>firma_dte</code>')
    expect(page.html).not.toContain('name="accion"')
    expect((await ro.get('/console/recibidos')).html).not.toContain('id="importar"')
    expect((await ro.post(`/console/recibidos/${ids[1]}/acciones`, { accion: 'ACD' })).status).toBe(403)
    expect((await apiGet(ids[1]!)).acciones).toEqual([])
  })
})

describe('import', () => {
  test('an EnvioDTE uploaded through the form: 303 ?aviso=importado and listed; the same file again changes nothing', async () => {
    const third = await issueFrom(s, prov, facturaPara(receiver))
    const envelope = envioFor(prov, receiver, [third.xml])
    const form = () => {
      const f = new FormData()
      f.set('archivo', new File([new Uint8Array(envelope)], 'EnvioDTE.xml', { type: 'text/xml' }))
      return f
    }
    const posted = await w.post('/console/recibidos/importar', form())
    expect(posted.status).toBe(303)
    expect(posted.location).toBe('/console/recibidos?aviso=importado')
    const list = await w.get(posted.location!)
    expect(list.html).toContain('EnvioDTE importado')
    expect(list.html).toContain('3 documentos')
    expect(list.html).toContain(`>${third.folio}</a>`)
    const again = await w.post('/console/recibidos/importar', form())
    expect(again.location).toBe('/console/recibidos?aviso=ya_importado')
    expect((await s.request('GET', `${API}/recibidos`, { headers: { 'X-Api-Key': receiver.readKey } })).json.total_count).toBe(3)
  })

  test('a file that is not an EnvioDTE: 400 beside the file field', async () => {
    const f = new FormData()
    f.set('archivo', new File(['<?xml version="1.0"?><Nada/>'], 'x.xml', { type: 'text/xml' }))
    const page = await w.post('/console/recibidos/importar', f)
    expect(page.status).toBe(400)
    expect(textOfId(page.html, 'f-archivo-error')).toEqual(expect.any(String))
  })
})

describe('the 8 days', () => {
  test('two days or less left: badge-warn; past the plazo: vencido, and an action is 409 PLAZO_VENCIDO beside the forms', async () => {
    const { plazo } = await apiGet(ids[1]!)
    clock.offsetMs += new Date(plazo).getTime() - clock.now().getTime() - 1.5 * DAY
    // Sessions end after 30 idle minutes: days later the user logs in again.
    const later = await consoleLogin(s, receiver.writeKey)
    expect(rowOf((await later.get('/console/recibidos')).html, ids[1]!)).toContain('<span class="badge badge-warn">2 días</span>')
    clock.advance(2 * DAY)
    const after = await consoleLogin(s, receiver.writeKey)
    expect(rowOf((await after.get('/console/recibidos')).html, ids[1]!)).toContain('<span class="badge badge-bad">Vencido</span>')
    const page = await after.post(`/console/recibidos/${ids[1]}/acciones`, { accion: 'ACD' })
    expect(page.status).toBe(409)
    expect(page.html).toContain('Pasaron los 8 días')
    expect((await apiGet(ids[1]!)).acciones).toEqual([])
  })
})
