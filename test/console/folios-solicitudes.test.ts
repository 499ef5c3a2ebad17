// The console's folios from the SII (DESIGN §17, issue 30) against a real server and the simulator's folio pages over
// HTTP and the mutual-TLS login: a CAF asked for with the form, worked by the folios job's pass and shown Descargado
// with its range, the CAF in its table; a refusal of the SII shown Fallido in its own words; a second request of the
// type told in words; automatic mode saved and shown, a bad form saving nothing; an expired CAF listed under Por
// anular, annulled with its form and shown Anulado. What each page shows is compared with what the API answers.
// A read-only key sees it all without forms and cannot post.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { runFoliosPass } from '../../src/services/caf-solicitudes'
import type { SimulatorStore } from '../../src/sii/simulator/store'
import type { TestClock } from '../support/clock'
import { startFoliosWorld, type FoliosWorld } from '../support/folios'
import { consoleLogin, type ConsoleClient } from '../support/console'
import { API } from '../support/received'
import { testRut, type Tenant, type TestServer } from '../support/server'

setDefaultTimeout(60_000)

const DAY = 86_400_000
let world: FoliosWorld
let clock: TestClock
let simStore: SimulatorStore
let s: TestServer
let t: Tenant
let w: ConsoleClient
let ro: ConsoleClient

beforeAll(async () => {
  world = await startFoliosWorld('Ferretería Los Aromos Ltda.')
  ;({ clock, simStore, s, t } = world)
  w = await consoleLogin(s, t.writeKey)
  ro = await consoleLogin(s, t.readKey)
}, 60_000)
afterAll(async () => {
  await world?.stop()
})

const api = async (path: string) => (await s.request('GET', `${API}${path}`, { headers: { 'X-Api-Key': t.readKey } })).json
const solicitudCount = () => (s.server.deps.store.sqlite.query('SELECT count(*) AS n FROM caf_solicitudes WHERE empresa_id = ?').get(t.empresa.id) as { n: number }).n
/** The page without the fragment of a redirect's location. */
const pathOf = (location: string) => location.split('#')[0]!

/** The page's text as a person reads it: tags dropped, entities decoded. */
const textOf = (html: string) =>
  html.replace(/<[^>]+>/g, ' ').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').replace(/\s+/g, ' ').trim()
/** The element with this id, whole (up to its closing tag of the same name; the ones read here do not nest in themselves). */
function elementOf(html: string, id: string): string {
  const start = html.indexOf(`id="${id}"`)
  if (start < 0) return ''
  const open = html.lastIndexOf('<', start)
  const tag = /^<(\w+)/.exec(html.slice(open))![1]!
  return html.slice(open, html.indexOf(`</${tag}>`, start) + tag.length + 3)
}
const historyRow = (html: string, id: string) => textOf(elementOf(html, `solicitud-${id}`))
const cafRow = (html: string, id: string) => textOf(elementOf(html, `caf-${id}`))

/**
 * The folios job's passes until the request leaves en_curso (the server's own runs hourly here: `--folios-every 1h`).
 */
async function worked(id: string): Promise<any> {
  for (let i = 0; i < 100; i++) {
    await runFoliosPass(s.server.deps)
    const r = await api(`/caf/solicitudes/${id}`)
    if (r.estado !== 'en_curso') return r
    await Bun.sleep(50)
  }
  throw new Error(`request ${id} still en_curso`)
}

const pedir = (tipo: string, cantidad = '', client = w) => client.post('/console/folios/solicitar', { 'solicitar.tipo_dte': tipo, 'solicitar.cantidad': cantidad })

describe('pedir al SII', () => {
  let solicitudId: string

  test('before any request: the form, an empty history, automatic mode off, nothing to annul', async () => {
    const page = await w.get('/console/folios')
    expect(page.status).toBe(200)
    expect(page.html).toContain('id="pedir-sii"')
    expect(page.html).toContain('id="f-solicitar-tipo_dte"')
    expect(textOf(elementOf(page.html, 'f-solicitar-cantidad-ayuda'))).toContain('Vacío pide el máximo que autoriza el SII')
    expect(textOf(elementOf(page.html, 'historial'))).toContain('Aún no se han pedido ni anulado folios')
    expect(textOf(elementOf(page.html, 'automaticos'))).toContain('Desactivado')
    expect(textOf(elementOf(page.html, 'por-anular'))).toContain('no hay nada que anular')
    // The manual upload stays.
    expect(page.html).toContain('id="subir-caf"')
  })

  test('a request from the form: 303 to the screen with the request highlighted En curso; a second of the type is told in words, 409, nothing stored', async () => {
    const posted = await pedir('33', '40')
    expect(posted.status).toBe(303)
    expect(posted.location).toMatch(/^\/console\/folios\?aviso=solicitado&solicitud=[0-9a-f-]{36}#historial$/)
    solicitudId = /solicitud=([0-9a-f-]{36})/.exec(posted.location!)![1]!
    expect(await api(`/caf/solicitudes/${solicitudId}`)).toMatchObject({ tipo_dte: 33, cantidad_pedida: 40, origen: 'api' })

    // At once, while the first is surely open (the server's own folios job passes every 5 s).
    const again = await pedir('33', '')
    expect(again.status).toBe(409)
    expect(textOf(elementOf(again.html, 'errores'))).toContain('Ya hay una solicitud de folios en curso para ese tipo de documento.')
    expect(textOf(elementOf(again.html, 'f-solicitar-tipo_dte-error'))).toContain('esa solicitud sigue en curso')
    // The open one is the row highlighted; the type picked stays in the form.
    expect(elementOf(again.html, `solicitud-${solicitudId}`)).toContain('aria-current="true"')
    expect(again.html).toContain('<option value="33" selected>')
    expect(solicitudCount()).toBe(1)

    const page = await w.get(pathOf(posted.location!))
    expect(page.html).toContain('Folios pedidos al SII: tipo 33, 40 folios.')
    expect(elementOf(page.html, `solicitud-${solicitudId}`)).toContain('aria-current="true"')
    expect(historyRow(page.html, solicitudId)).toContain('Solicitud Manual 33 En curso')
    expect(historyRow(page.html, solicitudId)).toContain('Pedida: 40')
    // While it is open, the history asks for itself every 3 s.
    expect(elementOf(page.html, 'historial')).toContain('hx-trigger="every 3s"')
  })

  test('after the job\'s pass: Descargado with its range and figures, the CAF in its table, the live region asks for a reload', async () => {
    const done = await worked(solicitudId)
    expect(done).toMatchObject({ estado: 'descargado', folio_desde: 1, folio_hasta: 40, cantidad_solicitada: 40 })

    const page = await w.get('/console/folios')
    const row = historyRow(page.html, solicitudId)
    expect(row).toContain('Descargado')
    expect(row).toContain('1 – 40')
    expect(row).toContain(`Pedida: 40 · solicitada: 40 · máximo del SII: ${done.max_autor.toLocaleString('es-CL')}`)
    expect(elementOf(page.html, `solicitud-${solicitudId}`)).toContain(`href="#caf-${done.caf_id}"`)
    expect(elementOf(page.html, 'historial')).not.toContain('hx-trigger')
    // The CAF, with its stretches, in the type's table.
    expect(cafRow(page.html, done.caf_id)).toContain('1 – 40 disponibles')
    expect(cafRow(page.html, done.caf_id)).toContain('Vigente')
    expect(textOf(page.html)).toContain('40 folios disponibles en CAF vigentes')
    // A CAF whose folios still serve offers the annulment of its unused folios, with its warning.
    expect(textOf(elementOf(page.html, `anular-${done.caf_id}`))).toContain('No se puede deshacer')

    const fragment = await w.get('/console/folios/historial', { 'HX-Request': 'true' })
    expect(fragment.status).toBe(200)
    expect(fragment.headers.get('HX-Refresh')).toBe('true')
    expect(fragment.html).not.toContain('<html')
  })

  test('a refusal of the SII: Fallido with its words and step, as the API records it; nothing stored', async () => {
    const cafs = (await api('/caf')).data.length
    const ajustes = simStore.folios.ajustes(t.empresa.rut)
    simStore.folios.setAjustes(t.empresa.rut, { ...ajustes, noAutorizado: true })
    try {
      const posted = await pedir('56', '10')
      expect(posted.status).toBe(303)
      const id = /solicitud=([0-9a-f-]{36})/.exec(posted.location!)![1]!
      const failed = await worked(id)
      expect(failed).toMatchObject({ estado: 'fallido', falla: { motivo: 'no_autorizado' } })
      const row = historyRow((await w.get('/console/folios')).html, id)
      expect(row).toContain('Fallido')
      expect(row).toContain(textOf(failed.falla.mensaje))
      expect(row).toContain('paso:')
    } finally {
      simStore.folios.setAjustes(t.empresa.rut, ajustes)
    }
    expect((await api('/caf')).data).toHaveLength(cafs)
  })

  test('a bad form: every field told beside it, 400, nothing stored', async () => {
    const before = solicitudCount()
    const page = await pedir('', '12,5')
    expect(page.status).toBe(400)
    expect(textOf(elementOf(page.html, 'f-solicitar-tipo_dte-error'))).toBe('Campo requerido.')
    expect(textOf(elementOf(page.html, 'f-solicitar-cantidad-error'))).toContain('número entero')
    expect(textOf(elementOf(page.html, 'errores'))).toContain('Cantidad de folios:')
    const zero = await pedir('34', '0')
    expect(zero.status).toBe(400)
    expect(textOf(elementOf(zero.html, 'f-solicitar-cantidad-error'))).toBe('Debe estar entre 1 y 100000.')
    expect(solicitudCount()).toBe(before)
  })

  test('a company without a certificate: 422 in words, pointing to Certificado', async () => {
    const other = await s.tenant(testRut())
    const client = await consoleLogin(s, other.writeKey)
    expect((await client.get('/console/folios')).html).toContain('Sin certificado activo')
    const page = await pedir('33', '', client)
    expect(page.status).toBe(422)
    expect(textOf(elementOf(page.html, 'errores'))).toContain('La empresa no tiene un certificado activo')
    expect(textOf(elementOf(page.html, 'errores'))).toContain('Suba el certificado de la empresa en la sección Certificado.')
  })
})

describe('folios automáticos', () => {
  test('activo with no tipos: the error beside the types, 400, nothing saved; what was typed stays', async () => {
    const page = await w.post('/console/folios/automaticos', { 'auto.activo': 'true', 'auto.cantidad': '20', 'auto.umbral': '', 'auto.dias_antes_de_vencer': '10' })
    expect(page.status).toBe(400)
    expect(textOf(elementOf(page.html, 'f-auto-tipos-error'))).toContain('Indique al menos un tipo de documento')
    expect(elementOf(page.html, 'f-auto-tipos')).toContain('class="field-invalid"')
    expect(page.html).toContain('value="20"')
    expect(await api('/empresa/folios-automaticos')).toMatchObject({ activo: false, tipos: [], updated_at: null })
  })

  test('saved from the form and shown; the API answers the same; turned off again', async () => {
    const form = new URLSearchParams({ 'auto.activo': 'true', 'auto.cantidad': '20', 'auto.umbral': '', 'auto.dias_antes_de_vencer': '10', _csrf: w.csrf })
    form.append('auto.tipos', '33')
    form.append('auto.tipos', '39')
    const res = await fetch(`${s.url}/console/folios/automaticos`, { method: 'POST', redirect: 'manual', headers: { cookie: w.cookie }, body: form })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/console/folios?aviso=automaticos#automaticos')
    const setting = await api('/empresa/folios-automaticos')
    expect(setting).toMatchObject({ activo: true, tipos: [33, 39], cantidad: 20, umbral: null, dias_antes_de_vencer: 10 })

    const page = await w.get('/console/folios?aviso=automaticos')
    expect(page.html).toContain('Folios automáticos guardados: activados.')
    const section = textOf(elementOf(page.html, 'automaticos'))
    expect(section).toContain('Activado')
    expect(section).toContain('33 · FACTURA ELECTRÓNICA')
    expect(section).toContain(`Pide cuando quedan ${setting.umbral_efectivo} folios libres o menos (el umbral de esta instalación)`)
    expect(page.html).toMatch(/id="f-auto-tipos-39"[^>]*checked/)
    expect(page.html).not.toMatch(/id="f-auto-tipos-34"[^>]*checked/)

    const off = await w.post('/console/folios/automaticos', { 'auto.cantidad': '20', 'auto.umbral': '5', 'auto.dias_antes_de_vencer': '10' })
    expect(off.status).toBe(303)
    expect(await api('/empresa/folios-automaticos')).toMatchObject({ activo: false, tipos: [], cantidad: 20, umbral: 5 })
    expect(textOf(elementOf((await w.get('/console/folios')).html, 'automaticos'))).toContain('Desactivado')
  })
})

describe('por anular', () => {
  test('an expired CAF is listed, annulled with its form and shown Anulado; a second annulment is told in words', async () => {
    const caf33 = (await api('/caf?tipo_dte=33')).data[0]
    clock.advance(181 * DAY)
    try {
      // Six months on, the earlier console session has long expired (12 hours at most): a new one.
      const w = await consoleLogin(s, t.writeKey)
      let page = await w.get('/console/folios')
      const section = textOf(elementOf(page.html, 'por-anular'))
      expect(section).toContain('33 · FACTURA ELECTRÓNICA, folios 1 – 40')
      expect(section).toContain('1 – 40 por anular')
      expect(cafRow(page.html, caf33.id)).toContain('Vencido: por anular')
      expect((await api('/caf?por_anular=true')).data.map((c: { id: string }) => c.id)).toEqual([caf33.id])

      const blank = await w.post(`/console/folios/${caf33.id}/anular`, { motivo: '  ' })
      expect(blank.status).toBe(400)
      expect(textOf(elementOf(blank.html, `f-anular-${caf33.id}-motivo-error`))).toBe('No puede estar vacío.')
      expect((await api(`/caf/${caf33.id}`)).anulacion).toBeNull()

      const posted = await w.post(`/console/folios/${caf33.id}/anular`, { motivo: 'Folios vencidos sin usar' })
      expect(posted.status).toBe(303)
      const id = /solicitud=([0-9a-f-]{36})/.exec(posted.location!)![1]!
      page = await w.get(pathOf(posted.location!))
      expect(page.html).toContain('Anulación pedida al SII: folios 1 a 40 del tipo 33.')
      expect(historyRow(page.html, id)).toContain('Anulación Manual 33 En curso 1 – 40 40 folios Motivo: Folios vencidos sin usar')
      // Closed at once: no longer listed to annul, its row says so, and its form is not offered again.
      expect(cafRow(page.html, caf33.id)).toContain('En anulación')
      expect(cafRow(page.html, caf33.id)).toContain('1 – 40 en anulación')
      expect(cafRow(page.html, caf33.id)).toContain('Anulación en curso')
      expect(page.html).not.toContain(`id="por-anular-${caf33.id}"`)
      expect(page.html).not.toContain(`id="anular-${caf33.id}"`)

      expect((await worked(id)).estado).toBe('anulado')
      page = await w.get('/console/folios')
      expect(historyRow(page.html, id)).toContain('Anulado')
      const row = cafRow(page.html, caf33.id)
      expect(row).toContain('Anulado')
      expect(row).toContain('1 – 40 anulados')
      expect(row).toContain('motivo: Folios vencidos sin usar')
      expect(textOf(elementOf(page.html, 'por-anular'))).toContain('no hay nada que anular')

      const again = await w.post(`/console/folios/${caf33.id}/anular`, { motivo: 'otra vez' })
      expect(again.status).toBe(409)
      expect(textOf(elementOf(again.html, 'errores'))).toContain('ya se anularon')
    } finally {
      clock.advance(-181 * DAY)
      // Logging in six months on swept the sessions that had expired by then: back today, new ones.
      w = await consoleLogin(s, t.writeKey)
      ro = await consoleLogin(s, t.readKey)
    }
  })

  test('another company\'s CAF or a malformed id: 404', async () => {
    expect((await w.post(`/console/folios/${crypto.randomUUID()}/anular`, { motivo: 'x' })).status).toBe(404)
    expect((await w.post('/console/folios/no-es-un-id/anular', { motivo: 'x' })).status).toBe(404)
  })
})

describe('read-only key', () => {
  test('sees the history and the automatic mode without any form, and cannot post', async () => {
    const page = await ro.get('/console/folios')
    expect(page.status).toBe(200)
    expect(textOf(elementOf(page.html, 'historial'))).toContain('Descargado')
    expect(textOf(elementOf(page.html, 'automaticos'))).toContain('Desactivado')
    for (const form of ['id="pedir-sii"', 'id="form-automaticos"', 'id="anular-', 'id="subir-caf"']) expect(page.html).not.toContain(form)
    const before = solicitudCount()
    expect((await pedir('52', '', ro)).status).toBe(403)
    expect((await ro.post('/console/folios/automaticos', { 'auto.activo': 'true', 'auto.tipos': '33', 'auto.cantidad': '5' })).status).toBe(403)
    expect(solicitudCount()).toBe(before)
    expect((await api('/empresa/folios-automaticos')).activo).toBe(false)
  })
})
