// The console's Certificación screen (DESIGN §15 "Console", issue 28) through real parts: a server with the in-process
// SII simulator, real certificates and CAFs, the SII's set file uploaded as multipart, the same services as the API's
// /certificacion, and the answers read back through the API. The simulated SII checks a set envío against the sets it
// gave the company, so the fixture set is recorded for the tenant first, as `timbre sii-simulator set --from` does.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { unzipSync } from 'fflate'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { createApiKey } from '../../src/services/api-keys'
import { createEmpresa } from '../../src/services/empresas'
import { testClock } from '../support/clock'
import { consoleAccountLogin, consoleAdmin, consoleLogin, preSession, type ConsoleClient, type ConsolePage } from '../support/console'
import { provisionIssuer } from '../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

// Issuing a set and a simulation signs dozens of documents on a machine other test files share.
setDefaultTimeout(120_000)

const MAIN = join(import.meta.dir, '../../src/main.ts')
const SETS = join(import.meta.dir, '../fixtures/sii/sets')
const sintetico = readFileSync(join(SETS, 'sintetico-2026.txt'))
const basico = readFileSync(join(SETS, '001-basico.txt'))
const FINAL = new Set(['aceptado', 'rechazado', 'con_reparos'])
const PASSWORD = 'una frase bastante larga'
const clock = testClock()
const submit = siiSubmitJob(3_600_000)
const track = siiTrackJob(3_600_000)

let s: TestServer
/** Its set recorded in the simulator: the SII accepts its set envíos. */
let t: Tenant
/** Its set never recorded: the SII rejects every set document (SET-3-2), so «Reemitir rechazados» has work. */
let u: Tenant
let w: ConsoleClient
let wu: ConsoleClient
let ro: ConsoleClient

const estadoApi = async (tenant: Tenant) => (await s.request('GET', '/api/v1/billing/certificacion', { headers: { 'X-Api-Key': tenant.readKey } })).json

/** The page's text as a person reads it: tags dropped, preact's entities decoded. */
const textOf = (html: string) =>
  html.replace(/<[^>]+>/g, '').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')

/** The text of the element with this id up to its first tag, for an error shown beside a field. */
function textOfId(html: string, id: string): string | null {
  const m = new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html)
  return m ? textOf(m[1]!) : null
}

function setForm(bytes: Uint8Array, fields: Record<string, string> = {}): FormData {
  const form = new FormData()
  form.set('archivo_set', new File([new Uint8Array(bytes)], 'SIISetDePruebas5102201.txt', { type: 'text/plain' }))
  for (const [k, v] of Object.entries(fields)) form.set(k, v)
  return form
}

function recordSet(tenant: Tenant, file: string): void {
  const r = Bun.spawnSync([process.execPath, MAIN, 'sii-simulator', 'set', '--rut', tenant.empresa.rut, '--from', join(SETS, file), '--data-dir', s.dataDir])
  if (r.exitCode !== 0) throw new Error(`sii-simulator set: ${r.stderr.toString()}`)
}

/** The SII jobs, the clock moving 20 s a round, until every issued case of the tenant has the SII's final answer. */
async function untilAnswered(tenant: Tenant): Promise<any> {
  for (let round = 0; round < 60; round++) {
    await submit.runOnce(s.server.deps)
    await track.runOnce(s.server.deps)
    const e = await estadoApi(tenant)
    if (e.sets.every((set: any) => set.casos.every((c: any) => c.dte_id === null || FINAL.has(c.estado)))) return e
    clock.advance(20_000)
  }
  throw new Error('the set documents did not reach a final state')
}

/** A person with an account of `tenant` and `role`, invited through the console as the Cuentas screen does. */
async function person(tenant: Tenant, role: string): Promise<ConsoleClient> {
  const admin = await consoleAdmin(s, tenant.empresa.id)
  const email = `${role}.${crypto.randomUUID().slice(0, 8)}@ejemplo.cl`
  const invited = await admin.post('/console/cuentas/invitar', { email, role })
  const link = /id="enlace-invitacion">([^<]+)</.exec(invited.html)![1]!.replace(/&amp;/g, '&')
  const token = new URL(link).searchParams.get('token')!
  const accepted = await preSession(s, '/console/entrar', '/console/invitacion', { token, password: PASSWORD, password_repetida: PASSWORD })
  expect(accepted.status).toBe(303)
  return consoleAccountLogin(s, email, PASSWORD)
}

/** Every form of the page that posts to the certification screen. */
const certificacionForms = (page: ConsolePage) => [...page.html.matchAll(/<form[^>]*action="\/console\/certificacion[^"]*"/g)].map((m) => m[0])

beforeAll(async () => {
  // The SII jobs run only when a test runs them, on a clock it moves.
  s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  t = await s.tenant(testRut(), 'Certificandose SpA')
  u = await s.tenant(testRut(), 'Set Sin Registrar Ltda.')
  await provisionIssuer(s, t, { folios: 60, tipos: [33, 34, 39, 41, 52, 56, 61, 110, 111, 112] })
  await provisionIssuer(s, u, { folios: 40, tipos: [33, 56, 61] })
  recordSet(t, 'sintetico-2026.txt')
  w = await consoleLogin(s, t.writeKey)
  wu = await consoleLogin(s, u.writeKey)
  ro = await consoleLogin(s, t.readKey)
}, 120_000)
afterAll(() => s.stop())

describe('where it applies', () => {
  test('a fresh company in certificación: a menu entry, and the five stages with their next step in full', async () => {
    expect((await w.get('/console/documentos')).html).toContain('<a href="/console/certificacion">Certificación</a>')
    const page = await w.get('/console/certificacion')
    expect(page.status).toBe(200)
    expect(page.html).toContain('<a href="/console/certificacion" aria-current="page">Certificación</a>')
    const text = textOf(page.html)
    const { etapas } = await estadoApi(t)
    expect(etapas.map((e: any) => e.estado)).toEqual(['pendiente', 'pendiente', 'pendiente', 'pendiente', 'pendiente'])
    for (const [i, label] of ['Set de pruebas', 'Simulación', 'Intercambio de información', 'Muestras de impresión', 'Declaración de cumplimiento'].entries()) {
      expect(text).toContain(`${i + 1}. ${label}`)
      expect(text).toContain(etapas[i].siguiente_paso)
    }
    expect((page.html.match(/<span class="badge badge-neutral">Pendiente<\/span>/g) ?? []).length).toBe(5)
    // Nothing to issue yet: the upload, not the emitir button; nothing to download.
    expect(page.html).toContain('id="subir-set"')
    expect(page.html).not.toContain('Emitir y enviar el set')
    expect(page.html).not.toContain('href="/console/certificacion/muestras"')
    expect(text).toContain('Aún no hay envíos.')
  })

  test('a company in producción: no menu entry, and the page and its actions answer 409 saying certification does not apply', async () => {
    const empresa = createEmpresa(s.server.deps, {
      rut: testRut(), razon_social: 'Ya Certificada SpA', giro: 'Comercio', acteco: [479100], direccion: 'Av. Uno 1', comuna: 'Santiago', ciudad: 'Santiago',
      ambiente: 'produccion', numero_resolucion: 80, fecha_resolucion: '2014-08-22',
    })
    const client = await consoleLogin(s, createApiKey(s.server.deps, { empresaId: empresa.id, write: true, nombre: 'w' }).key)
    const docs = await client.get('/console/documentos')
    expect(docs.status).toBe(200)
    expect(docs.html).not.toContain('href="/console/certificacion"')
    const page = await client.get('/console/certificacion')
    expect(page.status).toBe(409)
    expect(textOf(page.html)).toContain('La empresa está en producción: la certificación ante el SII ya no corresponde.')
    expect(page.html).not.toContain('id="subir-set"')
    for (const path of ['/console/certificacion/emitir', '/console/certificacion/simulacion', '/console/certificacion/etapas/set_pruebas'])
      expect({ path, status: (await client.post(path, { cantidad: '20' })).status }).toEqual({ path, status: 409 })
    expect((await client.post('/console/certificacion/set', setForm(sintetico))).status).toBe(409)
    expect((await client.get('/console/certificacion/muestras')).status).toBe(409)
  })
})

describe('the set of tests', () => {
  test('a broken file: 400 with each line error beside the file input, and nothing is stored', async () => {
    const broken = Buffer.from(sintetico.toString('latin1').replace('DOCUMENTO\tFACTURA ELECTRONICA', 'DOCUMENTO\tFACTURA INVENTADA'), 'latin1')
    const page = await w.post('/console/certificacion/set', setForm(broken))
    expect(page.status).toBe(400)
    const error = textOfId(page.html, 'f-archivo_set-error')
    expect(error).toMatch(/^Línea 13: .*FACTURA INVENTADA/)
    expect(page.html).toContain('aria-invalid="true"')
    expect(page.html).toContain('class="error-summary"')
    // Re-saved as UTF-8 by an editor: refused too, saying so.
    const utf8 = await w.post('/console/certificacion/set', setForm(Buffer.from(sintetico.toString('latin1'), 'utf8')))
    expect(utf8.status).toBe(400)
    expect(textOfId(utf8.html, 'f-archivo_set-error')).toContain('UTF-8')
    // No file chosen.
    const form = new FormData()
    form.set('reemplazar', 'si')
    const none = await w.post('/console/certificacion/set', form)
    expect(none.status).toBe(400)
    expect(textOfId(none.html, 'f-archivo_set-error')).toContain('Adjunte el archivo del set de pruebas')
    expect((await estadoApi(t)).sets).toEqual([])
  })

  test('the fixture set uploads as multipart: every set and case in the tables, the tipo de cambio asked for the export set', async () => {
    const posted = await w.post('/console/certificacion/set', setForm(sintetico))
    expect(posted.status).toBe(303)
    expect(posted.location).toBe('/console/certificacion?aviso=cargado')
    const page = await w.get(posted.location!)
    const text = textOf(page.html)
    expect(text).toContain('Set de pruebas cargado')
    const e = await estadoApi(t)
    expect(e.sets.map((x: any) => x.nombre)).toEqual(['BASICO', 'GUIA DE DESPACHO', 'EXPORTACION 1', 'LIBRO DE VENTAS', 'LIBRO DE COMPRAS', 'LIBRO DE GUIAS'])
    for (const set of e.sets) {
      expect(text).toContain(`${set.nombre} · número de atención ${set.numero_atencion}`)
      for (const c of set.casos) expect(page.html).toContain(`<td class="caso">${c.caso}<span class="solo-telefono muted">`)
    }
    expect(page.html).toContain('<td class="col-menor">33 · FACTURA ELECTRÓNICA</td>')
    expect((page.html.match(/>Sin emitir</g) ?? []).length).toBe(e.sets.flatMap((x: any) => x.casos).length)
    expect(page.html).toContain('id="f-tpo_cambio"')
    expect(text).toContain('Tipo de cambio (pesos por DOLAR USA)')
    expect(page.html).toContain('Emitir y enviar el set')
    // Nothing was rejected: nothing to re-issue; nothing issued: no replacing to offer.
    expect(page.html).not.toContain('Reemitir rechazados')
    expect(page.html).not.toContain('name="reemplazar"')
    expect(page.html).toContain('<span class="badge badge-info">En curso</span>')
    // The libros need the set's documents: asked too early, the reason is shown at the libros form and nothing is sent.
    const early = await w.post('/console/certificacion/libros/enviar', {})
    expect(early.status).toBe(404)
    const summary = /<section class="card stack" id="libros"[\s\S]*?<div class="error-summary"[^>]*>([\s\S]*?)<\/div>/.exec(early.html)?.[1] ?? ''
    expect(textOf(summary)).toContain('El libro de ventas necesita los documentos emitidos del set BASICO')
    expect((await estadoApi(t)).libros).toEqual([])
  })

  test('emitir without the tipo de cambio: 400 beside its field, and nothing is issued', async () => {
    const page = await w.post('/console/certificacion/emitir', { accion: 'emitir' })
    expect(page.status).toBe(400)
    expect(textOfId(page.html, 'f-tpo_cambio-error')).toContain('indique el tipo de cambio')
    const bad = await w.post('/console/certificacion/emitir', { accion: 'emitir', tpo_cambio: '950.25' })
    expect(bad.status).toBe(400)
    expect(textOfId(bad.html, 'f-tpo_cambio-error')).toContain('coma')
    expect(bad.html).toContain('value="950.25"')
    expect((await estadoApi(t)).sets.flatMap((x: any) => x.casos).every((c: any) => c.dte_id === null)).toBe(true)
  })

  test('emitir y enviar: every case gets its folio, each envío its track id and XML, and the SII\'s answers show', async () => {
    const posted = await w.post('/console/certificacion/emitir', { accion: 'emitir', tpo_cambio: '950,25' })
    expect(posted.status).toBe(303)
    expect(posted.location).toBe('/console/certificacion?aviso=emitido')
    let page = await w.get(posted.location!)
    let e = await estadoApi(t)
    const casos = e.sets.flatMap((x: any) => x.casos)
    expect(casos.every((c: any) => c.folio !== null)).toBe(true)
    for (const c of casos) expect(page.html).toContain(`<a href="/console/documentos/${c.dte_id}">${c.folio}</a>`)
    expect(e.envios).toHaveLength(3)
    for (const envio of e.envios) {
      expect(envio.track_id).toMatch(/^\d{10}$/)
      expect(page.html).toContain(`<code class="copiable">${envio.track_id}</code>`)
      const xml = await fetch(`${s.url}/console/certificacion/envios/${envio.id}/xml`, { headers: { cookie: w.cookie } })
      expect(xml.status).toBe(200)
      expect(xml.headers.get('content-type')).toBe('application/xml; charset=ISO-8859-1')
      expect(xml.headers.get('content-disposition')).toStartWith('attachment; filename="')
      const bytes = new Uint8Array(await xml.arrayBuffer())
      const api = await fetch(`${s.url}/api/v1/billing/certificacion/envios/${envio.id}/xml`, { headers: { 'X-Api-Key': t.readKey } })
      expect(Buffer.from(bytes).equals(Buffer.from(await api.arrayBuffer()))).toBe(true)
      expect(Buffer.from(bytes).toString('latin1')).toContain('<RutReceptor>60803000-K</RutReceptor>')
    }
    expect(textOf(page.html)).toContain('Set BASICO')
    expect((await w.get(`/console/certificacion/envios/${crypto.randomUUID()}/xml`)).status).toBe(404)
    expect((await w.get('/console/certificacion/envios/no-es-un-id/xml')).status).toBe(404)

    e = await untilAnswered(t)
    expect(e.sets.flatMap((x: any) => x.casos).map((c: any) => c.estado).filter((x: string) => x !== 'aceptado')).toEqual([])
    page = await w.get('/console/certificacion')
    expect((page.html.match(/<span class="badge badge-ok">Aceptado<\/span>/g) ?? []).length).toBe(casos.length + e.envios.length)
    // The next step names what the set still asks for, in full.
    expect(textOf(page.html)).toContain(e.etapas[0].siguiente_paso)
    expect(e.etapas[0].siguiente_paso).toContain('libros')
    // Issued: the upload now offers to replace, and the muestras can be downloaded.
    expect(page.html).toContain('name="reemplazar"')
    expect(page.html).toContain('href="/console/certificacion/muestras"')
  })

  test('libros: each one downloads signed, «Enviar los libros al SII» sends them, and their track ids join the stage\'s next step', async () => {
    let page = await w.get('/console/certificacion')
    expect(page.html).toContain('id="libros"')
    for (const [tipo, root] of [['ventas', '<LibroCompraVenta'], ['compras', '<LibroCompraVenta'], ['guias', '<LibroGuia']] as const) {
      expect(page.html).toContain(`href="/console/certificacion/libros/${tipo}"`)
      const res = await fetch(`${s.url}/console/certificacion/libros/${tipo}`, { headers: { cookie: w.cookie } })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/xml; charset=ISO-8859-1')
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="Libro_${tipo}.xml"`)
      expect(Buffer.from(await res.arrayBuffer()).toString('latin1')).toContain(root)
    }
    expect((await w.get('/console/certificacion/libros/otro')).status).toBe(404)

    const posted = await w.post('/console/certificacion/libros/enviar', {})
    expect(posted.status).toBe(303)
    expect(posted.location).toBe('/console/certificacion?aviso=libros')
    let e = await estadoApi(t)
    expect(e.libros.map((l: any) => l.tipo)).toEqual(['ventas', 'compras', 'guias'])
    page = await w.get(posted.location!)
    const table = /<table class="libros plegable">([\s\S]*?)<\/table>/.exec(page.html)![1]!
    for (const l of e.libros) expect(table).toContain(`<code class="copiable">${l.track_id}</code>`)
    expect(textOf(table)).toContain('Libro de guías')
    for (let round = 0; round < 30 && e.libros.some((l: any) => l.estado === 'procesando'); round++) {
      await submit.runOnce(s.server.deps)
      await track.runOnce(s.server.deps)
      clock.advance(20_000)
      e = await estadoApi(t)
    }
    expect(e.libros.map((l: any) => l.estado)).toEqual(['aceptado', 'aceptado', 'aceptado'])
    page = await w.get('/console/certificacion')
    const item = /<li class="card etapa" id="etapa-set_pruebas">([\s\S]*?)<\/li>/.exec(page.html)![1]!
    expect(item).toContain('Enviado: falta declarar el avance')
    for (const x of [...e.envios, ...e.libros]) expect(item).toContain(`<code class="copiable">${x.track_id}</code>`)
  })

  test('a rejected set: the SII\'s glosa beside each case, and «Reemitir rechazados» issues them again with new folios', async () => {
    expect((await wu.post('/console/certificacion/set', setForm(basico))).status).toBe(303)
    expect((await wu.post('/console/certificacion/emitir', { accion: 'emitir' })).status).toBe(303)
    const e = await untilAnswered(u)
    const before = e.sets[0].casos
    expect(before.every((c: any) => c.estado === 'rechazado')).toBe(true)
    let page = await wu.get('/console/certificacion')
    expect(page.html).toContain('Reemitir rechazados')
    expect(page.html).toContain('<span class="badge badge-bad">Con errores</span>')
    for (const c of before) expect(c.glosa_sii).toEqual(expect.any(String))
    expect(page.html).toContain(`<td class="glosa col-menor">${before[0].glosa_sii}</td>`)

    const posted = await wu.post('/console/certificacion/emitir', { accion: 'reemitir' })
    expect(posted.status).toBe(303)
    expect(posted.location).toBe('/console/certificacion?aviso=reemitido')
    const after = (await estadoApi(u)).sets[0].casos
    expect(after.every((c: any) => c.dte_id !== null)).toBe(true)
    const key = (c: any) => `${c.tipo_dte}-${c.folio}`
    expect(after.map(key).filter((k: string) => before.map(key).includes(k))).toEqual([])
    page = await wu.get(posted.location!)
    expect(textOf(page.html)).toContain('reemitidos con folios nuevos')
    // The first envelope is history now: listed, marked, and no longer what the stage asks to declare.
    const envios = (await estadoApi(u)).envios
    expect(envios.map((x: any) => x.vigente)).toEqual([false, true])
    expect(page.html).toContain(`<tr id="envio-${envios[0].id}" class="historial">`)
    expect(page.html).toContain(`<tr id="envio-${envios[1].id}">`)
    expect(/<tr id="envio-[^"]+" class="historial"><td>Set BASICO <span class="badge badge-neutral">Historial<\/span>/.test(page.html)).toBe(true)
    // A set without libro blocks offers no libros.
    expect(page.html).not.toContain('id="libros"')
  })

  test('emitir without folios of a type: 422 with the service\'s words at the emitir form, and nothing is issued', async () => {
    const sinFolios = await s.tenant(testRut(), 'Sin Folios SpA')
    await provisionIssuer(s, sinFolios, { tipos: [33] })
    const client = await consoleLogin(s, sinFolios.writeKey)
    expect((await client.post('/console/certificacion/set', setForm(basico))).status).toBe(303)
    const page = await client.post('/console/certificacion/emitir', { accion: 'emitir' })
    expect(page.status).toBe(422)
    const summary = /<form[^>]*id="emitir-set"[\s\S]*?<div class="error-summary"[^>]*>([\s\S]*?)<\/div>/.exec(page.html)?.[1] ?? ''
    expect(textOf(summary)).toMatch(/Faltan folios del tipo (56|61)/)
    expect(textOf(summary)).toContain('Cargue un CAF nuevo de este tipo en la sección Folios.')
    expect((await estadoApi(sinFolios)).sets[0].casos.every((c: any) => c.dte_id === null)).toBe(true)
  })

  test('an issued set is replaced only when asked: SET_YA_EMITIDO beside the file with the checkbox, then its cases start over', async () => {
    const refused = await wu.post('/console/certificacion/set', setForm(basico))
    expect(refused.status).toBe(409)
    expect(textOfId(refused.html, 'f-archivo_set-error')).toBe('Ese set ya tiene casos emitidos (BASICO).')
    expect(textOf(refused.html)).toContain('marque «Reemplazar el set ya emitido»')
    expect(refused.html).toContain('name="reemplazar"')
    const before = (await estadoApi(u)).sets[0].casos.map((c: any) => c.dte_id)
    expect(before.every((id: string | null) => id !== null)).toBe(true)
    const replaced = await wu.post('/console/certificacion/set', setForm(basico, { reemplazar: 'si' }))
    expect(replaced.status).toBe(303)
    expect((await estadoApi(u)).sets[0].casos.every((c: any) => c.estado === 'sin_emitir')).toBe(true)
  })
})

describe('the other stages', () => {
  test('simulación: the cantidad checked as the API does, then the documents in one envío with its track id', async () => {
    for (const [cantidad, message] of [['19', '20'], ['101', '100'], ['veinte', 'número entero']] as const) {
      const page = await w.post('/console/certificacion/simulacion', { cantidad })
      expect(page.status).toBe(400)
      expect(textOfId(page.html, 'f-cantidad-error')).toContain(message)
      expect(page.html).toContain(`value="${cantidad}"`)
    }
    const posted = await w.post('/console/certificacion/simulacion', { cantidad: '20' })
    expect(posted.status).toBe(303)
    expect(posted.location).toBe('/console/certificacion?aviso=simulacion')
    const sim = (await estadoApi(t)).envios.find((x: any) => x.clase === 'simulacion')
    expect(sim).toMatchObject({ documentos: 20 })
    const page = await w.get(posted.location!)
    const row = new RegExp(`<tr id="envio-${sim.id}">([\\s\\S]*?)</tr>`).exec(page.html)![1]!
    expect(textOf(row)).toContain('Simulación')
    expect(row).toContain(`<code class="copiable">${sim.track_id}</code>`)
  })

  test('intercambio: the SII\'s test envelope answered with the zip of the three signed files; the stage moves on', async () => {
    const envelope = Bun.spawnSync([process.execPath, MAIN, 'sii-simulator', 'intercambio', '--rut', t.empresa.rut, '--seed', '7'])
    expect(envelope.exitCode).toBe(0)
    const form = new FormData()
    form.set('archivo_intercambio', new File([new Uint8Array(envelope.stdout)], 'ENVIO_DTE_INTERCAMBIO.xml', { type: 'text/xml' }))
    form.set('_csrf', w.csrf)
    const res = await fetch(`${s.url}/console/certificacion/intercambio`, { method: 'POST', headers: { cookie: w.cookie }, body: form })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/zip')
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="intercambio.zip"')
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()))
    expect(Object.keys(files).sort()).toEqual(['1_RecepcionDTE.xml', '2_EnvioRecibos.xml', '3_ResultadoDTE.xml'])
    expect((await estadoApi(t)).etapas[2]).toMatchObject({ etapa: 'intercambio', estado: 'en_curso' })

    const wrong = new FormData()
    wrong.set('archivo_intercambio', new File([new Uint8Array(sintetico)], 'set.txt'))
    const page = await w.post('/console/certificacion/intercambio', wrong)
    expect(page.status).toBe(400)
    expect(textOfId(page.html, 'f-archivo_intercambio-error')).toEqual(expect.any(String))
  })

  test('muestras de impresión: the zip of the set\'s and the simulation\'s PDFs, as the API gives it', async () => {
    const before = (await estadoApi(t)).etapas[3]
    const res = await fetch(`${s.url}/console/certificacion/muestras`, { headers: { cookie: w.cookie } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/zip')
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()))
    const e = await estadoApi(t)
    const documentos = e.sets.flatMap((x: any) => x.casos).filter((c: any) => c.dte_id !== null).length + 20
    const tributarios = Object.keys(files).filter((n) => !n.endsWith('-cedible.pdf'))
    expect(tributarios).toHaveLength(documentos)
    expect(Object.values(files).every((f) => Buffer.from(f.subarray(0, 5)).toString() === '%PDF-')).toBe(true)
    // A download records nothing: the stage follows the simulation the SII accepted, not a GET.
    expect(e.etapas[3]).toEqual(before)
  })

  test('boletas sent through the API: their envío in the table and the ConsumoFolios to download', async () => {
    expect((await w.get('/console/certificacion')).html).not.toContain('href="/console/certificacion/consumo-folios"')
    const r = await s.request('POST', '/api/v1/billing/certificacion/boletas', {
      headers: { 'X-Api-Key': t.writeKey },
      body: { casos: [{ caso: '1', documento: { tipo_dte: 39, detalle: [{ nombre: 'Cambio de aceite', cantidad: 1, precio: 19900 }] } }] },
    })
    expect(r.status).toBe(200)
    const page = await w.get('/console/certificacion')
    expect(textOf(page.html)).toContain('Set de boletas')
    expect(page.html).toContain('href="/console/certificacion/consumo-folios"')
    const xml = await fetch(`${s.url}/console/certificacion/consumo-folios`, { headers: { cookie: w.cookie } })
    expect(xml.status).toBe(200)
    expect(xml.headers.get('content-disposition')).toBe('attachment; filename="ConsumoFolios.xml"')
    expect(Buffer.from(await xml.arrayBuffer()).toString('latin1')).toContain('<ConsumoFolios')
  })

  test('a stage recorded as the SII said: aprobado with a note, a bad estado refused beside its field, an unknown stage 404', async () => {
    const bad = await w.post('/console/certificacion/etapas/simulacion', { 'simulacion.estado': 'aceptado' })
    expect(bad.status).toBe(400)
    expect(textOfId(bad.html, 'f-simulacion-estado-error')).toEqual(expect.any(String))
    expect(bad.html).toContain('<details class="registrar" open>')
    const long = await w.post('/console/certificacion/etapas/simulacion', { 'simulacion.estado': 'aprobado', 'simulacion.nota': 'x'.repeat(501) })
    expect(long.status).toBe(400)
    expect(textOfId(long.html, 'f-simulacion-nota-error')).toEqual(expect.any(String))
    expect((await w.post('/console/certificacion/etapas/otra', { 'otra.estado': 'aprobado' })).status).toBe(404)

    const posted = await w.post('/console/certificacion/etapas/set_pruebas', { 'set_pruebas.estado': 'aprobado', 'set_pruebas.nota': 'Aprobado el 28-11-2026' })
    expect(posted.status).toBe(303)
    const e = await estadoApi(t)
    expect(e.etapas[0]).toMatchObject({ etapa: 'set_pruebas', estado: 'aprobado' })
    const page = await w.get(posted.location!)
    const item = /<li class="card etapa" id="etapa-set_pruebas">([\s\S]*?)<\/li>/.exec(page.html)![1]!
    expect(item).toContain('<span class="badge badge-ok">Aprobado</span>')
    expect(textOf(item)).toContain(e.etapas[0].siguiente_paso)
    expect(textOf(item)).toContain('Última marca:')
    expect(textOf(page.html)).toContain('Etapa registrada.')
  })
})

describe('who may act', () => {
  test('a read-only key sees the stages, cases, track ids and downloads, but no form, and cannot post', async () => {
    const page = await ro.get('/console/certificacion')
    expect(page.status).toBe(200)
    const e = await estadoApi(t)
    for (const c of e.sets[0].casos) expect(page.html).toContain(`<a href="/console/documentos/${c.dte_id}">${c.folio}</a>`)
    for (const envio of e.envios) expect(page.html).toContain(`<code class="copiable">${envio.track_id}</code>`)
    expect(page.html).toContain('href="/console/certificacion/muestras"')
    expect(certificacionForms(page)).toEqual([])
    expect(page.html).not.toContain('type="file"')
    expect(textOf(page.html)).toContain('solo lectura')
    expect((await ro.post('/console/certificacion/etapas/declaracion', { 'declaracion.estado': 'aprobado' })).status).toBe(403)
    expect((await ro.post('/console/certificacion/set', setForm(sintetico))).status).toBe(403)
    expect((await estadoApi(t)).etapas[4].estado).toBe('pendiente')
  })

  test('people: lectura reads the page without forms; emisor gets them and may act', async () => {
    const lectura = await person(t, 'lectura')
    const read = await lectura.get('/console/certificacion')
    expect(read.status).toBe(200)
    expect(read.html).toContain('<a href="/console/certificacion" aria-current="page">Certificación</a>')
    expect(certificacionForms(read)).toEqual([])
    expect((await lectura.post('/console/certificacion/simulacion', { cantidad: '20' })).status).toBe(403)

    const emisor = await person(t, 'emisor')
    const page = await emisor.get('/console/certificacion')
    expect(certificacionForms(page).length).toBeGreaterThanOrEqual(8)
    expect(page.html).toContain('id="subir-set"')
    const posted = await emisor.post('/console/certificacion/etapas/simulacion', { 'simulacion.estado': 'aprobado' })
    expect(posted.status).toBe(303)
    expect((await estadoApi(t)).etapas[1]).toMatchObject({ etapa: 'simulacion', estado: 'aprobado' })
  })
})

describe('an SII that does not take the envío', () => {
  // Every SII call answers 503: the cases are issued with their folios, and the envío waits for the submission job.
  let busy: ReturnType<typeof Bun.serve>
  let s2: TestServer
  beforeAll(async () => {
    busy = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('ocupado', { status: 503 }) })
    s2 = await startTestServer({ flags: { '--sii': `http://127.0.0.1:${busy.port}`, '--submit-every': '1h', '--track-every': '1h', '--inbox-every': '1h' } })
  })
  afterAll(async () => {
    await s2?.stop()
    busy?.stop(true)
  })

  test('emitir y enviar answers with the page: folios issued, the envío «Por enviar al SII» without a track id, the SII\'s reason beside it', async () => {
    const tenant = await s2.tenant(testRut(), 'Paciente SpA')
    await provisionIssuer(s2, tenant, { folios: 20, tipos: [33, 56, 61] })
    const client = await consoleLogin(s2, tenant.writeKey)
    expect((await client.post('/console/certificacion/set', setForm(basico))).status).toBe(303)
    const posted = await client.post('/console/certificacion/emitir', { accion: 'emitir' })
    expect(posted.status).toBe(303)
    const page = await client.get(posted.location!)
    const e = (await s2.request('GET', '/api/v1/billing/certificacion', { headers: { 'X-Api-Key': tenant.readKey } })).json
    expect(e.sets[0].casos.every((c: any) => c.folio !== null)).toBe(true)
    expect(e.envios).toEqual([expect.objectContaining({ track_id: null, estado: 'por_enviar', glosa_sii: expect.any(String) })])
    const row = new RegExp(`<tr id="envio-${e.envios[0].id}">([\\s\\S]*?)</tr>`).exec(page.html)![1]!
    expect(row).toContain('Sin track id aún')
    expect(row).toContain('Por enviar al SII')
    expect(textOf(row)).toContain(e.envios[0].glosa_sii)
  })
})
