// Certification's set of tests over HTTP (DESIGN §15, issue 28): the SII's set file loaded, every case issued once
// through the POST /dte path with the SET reference and its cited cases' folios, one EnvioDTE per set sent to the
// in-process simulator and followed by the real jobs to the SII's answer; hostile files refused whole.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { unzipSync } from 'fflate'
import { siiSubmitJob } from '../../src/jobs/sii-submit'
import { siiTrackJob } from '../../src/jobs/sii-track'
import { createEmpresa } from '../../src/services/empresas'
import { createApiKey } from '../../src/services/api-keys'
import { testClock } from '../support/clock'
import { provisionIssuer } from '../support/issuance'
import { xmlsec1VerifiesAll, xsdErrors } from '../support/xml-tools'
import { startTestServer, testRut, type Tenant, type TestServer } from '../support/server'

const SETS = join(import.meta.dir, '../fixtures/sii/sets')
const sintetico = readFileSync(join(SETS, 'sintetico-2026.txt'))
const basico = readFileSync(join(SETS, '001-basico.txt'))
const submit = siiSubmitJob(3_600_000)
const track = siiTrackJob(3_600_000)
const FINAL = new Set(['aceptado', 'rechazado', 'con_reparos'])

describe('certificación: the set of tests', () => {
  const clock = testClock()
  let s: TestServer
  let t: Tenant
  const w = () => ({ 'X-Api-Key': t.writeKey })
  const post = (path: string, body?: unknown, headers = w()) => s.request('POST', `/api/v1/billing/certificacion${path}`, { headers, ...(body !== undefined ? { body } : {}) })
  const estado = async () => (await s.request('GET', '/api/v1/billing/certificacion', { headers: { 'X-Api-Key': t.readKey } })).json
  const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

  beforeAll(async () => {
    s = await startTestServer({ clock, flags: { '--submit-every': '1h', '--track-every': '1h' } })
    t = await s.tenant(testRut())
    await provisionIssuer(s, t, { folios: 60, tipos: [33, 34, 39, 41, 52, 56, 61, 110, 111, 112] })
    // The simulated SII checks a set envío against the sets it gave the company (docs/decisions/simulator.md "The set
    // of tests"): the file this test loads is recorded for the tenant in the server's simulator, as a person rehearsing
    // a real set does with `timbre sii-simulator set --from`.
    const recorded = Bun.spawnSync([process.execPath, join(import.meta.dir, '../../src/main.ts'), 'sii-simulator', 'set', '--rut', t.empresa.rut, '--from', join(SETS, 'sintetico-2026.txt'), '--data-dir', s.dataDir])
    if (recorded.exitCode !== 0) throw new Error(`sii-simulator set: ${recorded.stderr.toString()}`)
  })
  afterAll(() => s.stop())

  async function drive(): Promise<any> {
    for (let i = 0; i < 60; i++) {
      await submit.runOnce(s.server.deps)
      await track.runOnce(s.server.deps)
      const e = await estado()
      if (e.sets.every((set: any) => set.casos.every((c: any) => FINAL.has(c.estado) || c.estado === 'sin_emitir'))) return e
      clock.advance(20_000)
    }
    return estado()
  }

  test('a new company starts with every stage pending and the first step in words', async () => {
    const e = await estado()
    expect(e.etapas.map((x: any) => [x.etapa, x.estado])).toEqual([
      ['set_pruebas', 'pendiente'], ['simulacion', 'pendiente'], ['intercambio', 'pendiente'], ['muestras', 'pendiente'], ['declaracion', 'pendiente'],
    ])
    expect(e.etapas[0].siguiente_paso).toContain('descargue el set de pruebas')
    expect(e.sets).toEqual([])
  })

  test('hostile files get a 400 naming the line, and nothing is stored', async () => {
    const text = sintetico.toString('latin1')
    const broken = text.replace('DOCUMENTO\tFACTURA ELECTRONICA', 'DOCUMENTO\tFACTURA INVENTADA')
    let r = await post('/set', { archivo_base64: b64(Buffer.from(broken, 'latin1')) })
    expect(r.status).toBe(400)
    expect(r.json.code).toBe('VALIDATION_ERROR')
    expect(r.json.details[0].field).toBe('archivo_base64')
    expect(r.json.details[0].message).toMatch(/^Línea 13: .*FACTURA INVENTADA/)
    // Re-saved as UTF-8: "Caña" would become "CaÃ±a" in the documents.
    r = await post('/set', { archivo_base64: b64(Buffer.from(text, 'utf8')) })
    expect(r.status).toBe(400)
    expect(r.json.details[0].message).toContain('UTF-8')
    // A note citing a case the file does not have.
    r = await post('/set', { archivo_base64: b64(Buffer.from(text.replace('CORRESPONDIENTE A CASO 5102201-2', 'CORRESPONDIENTE A CASO 5102201-9'), 'latin1')) })
    expect(r.status).toBe(400)
    expect(r.json.details.map((d: any) => d.message).join('\n')).toContain('5102201-9')
    // Multipart, an empty part.
    const form = new FormData()
    form.set('archivo', new Blob([]), 'set.txt')
    r = await s.request('POST', '/api/v1/billing/certificacion/set', { headers: w(), rawBody: form })
    expect(r.status).toBe(400)
    expect(r.json.details[0].field).toBe('archivo')
    expect((await estado()).sets).toEqual([])
  })

  test('a read-only key cannot load a set', async () => {
    const r = await post('/set', { archivo_base64: b64(sintetico) }, { 'X-Api-Key': t.readKey })
    expect(r.status).toBe(403)
  })

  test('the file loads: every set and case with the request it will issue, names as written', async () => {
    const form = new FormData()
    form.set('archivo', new Blob([sintetico]), 'SIISetDePruebas5102201.txt')
    const r = await s.request('POST', '/api/v1/billing/certificacion/set', { headers: w(), rawBody: form })
    expect(r.status).toBe(201)
    expect(r.json.sets.map((x: any) => [x.nombre, x.numero_atencion])).toEqual([
      ['BASICO', 5102201], ['GUIA DE DESPACHO', 5102202], ['EXPORTACION 1', 5102203], ['LIBRO DE VENTAS', 5102204], ['LIBRO DE COMPRAS', 5102205], ['LIBRO DE GUIAS', 5102206],
    ])
    const b = r.json.sets[0]
    expect(b.casos.map((c: any) => [c.caso, c.tipo_dte, c.estado])).toEqual([
      ['5102201-1', 33, 'sin_emitir'], ['5102201-2', 33, 'sin_emitir'], ['5102201-3', 33, 'sin_emitir'], ['5102201-4', 61, 'sin_emitir'],
      ['5102201-5', 61, 'sin_emitir'], ['5102201-6', 61, 'sin_emitir'], ['5102201-7', 56, 'sin_emitir'],
    ])
    expect(b.casos[1].documento.detalle[0].nombre).toBe('Caña de pescar AFECTO')
    expect(b.casos[4].referencia).toEqual({ caso: '5102201-2', codigo_ref: 3, razon: 'DEVOLUCION DE MERCADERIAS' })
    expect(r.json.indicaciones[0]).toBe('INDICACIONES GENERALES:')
    expect(r.json.etapas[0]).toMatchObject({ etapa: 'set_pruebas', estado: 'en_curso' })
  })

  test('an export set in a foreign currency needs tpo_cambio, and nothing is issued without it', async () => {
    const r = await post('/set/emitir', {})
    expect(r.status).toBe(400)
    expect(r.json.details).toEqual([expect.objectContaining({ field: 'tpo_cambio', code: 'REQUIRED' })])
    expect((await estado()).sets.flatMap((x: any) => x.casos).every((c: any) => c.dte_id === null)).toBe(true)
  })

  test('emitir issues each case once, with SET and its cited folios, one envelope per set, and the SII accepts them', async () => {
    const r = await post('/set/emitir', { tpo_cambio: 950.25 })
    expect(r.status).toBe(200)
    const casos = r.json.sets.flatMap((x: any) => x.casos)
    expect(casos.every((c: any) => c.dte_id !== null && c.folio !== null)).toBe(true)
    expect(r.json.envios.map((e: any) => [e.sets, e.documentos])).toEqual([[['BASICO'], 7], [['GUIA DE DESPACHO'], 3], [['EXPORTACION 1'], 2]])
    expect(r.json.envios.every((e: any) => /^\d{10}$/.test(e.track_id))).toBe(true)

    // The note of case 5: SET first, then the invoice of case 2 with the folio and date it got.
    const byCaso = new Map(casos.map((c: any) => [c.caso, c]))
    const nota = (await s.request('GET', `/api/v1/billing/dte/${(byCaso.get('5102201-5') as any).dte_id}`, { headers: { 'X-Api-Key': t.readKey } })).json
    const factura = byCaso.get('5102201-2') as any
    expect(nota.referencias[0]).toMatchObject({ tipo_doc_ref: 'SET', folio_ref: 0, razon_ref: 'CASO 5102201-5' })
    expect(nota.referencias[1]).toMatchObject({ tipo_doc_ref: 33, folio_ref: factura.folio, codigo_ref: 3, razon_ref: 'DEVOLUCION DE MERCADERIAS' })
    // The debit note that annuls a text correction reverses no amount.
    const nd = (await s.request('GET', `/api/v1/billing/dte/${(byCaso.get('5102201-7') as any).dte_id}`, { headers: { 'X-Api-Key': t.readKey } })).json
    expect(nd.monto_total).toBe(0)
    expect(nd.referencias[1]).toMatchObject({ tipo_doc_ref: 61, folio_ref: (byCaso.get('5102201-4') as any).folio, codigo_ref: 1 })

    const final = await drive()
    expect(final.sets.flatMap((x: any) => x.casos).map((c: any) => c.estado).filter((e: string) => e !== 'aceptado')).toEqual([])
    expect(final.envios.map((e: any) => e.estado)).toEqual(['aceptado', 'aceptado', 'aceptado'])
    // The libros the set asks for are next.
    expect(final.etapas[0]).toMatchObject({ etapa: 'set_pruebas', estado: 'en_curso' })
    expect(final.etapas[0].siguiente_paso).toContain('Envíe los libros que pide el set: ventas, compras, guias')
  })

  test('the three libros: signed, valid, their totals the documents\', sent and accepted; the stage then asks to declare', async () => {
    const e0 = await estado()
    const basico = e0.sets[0].casos
    const libro = async (tipo: string) => {
      const r = await fetch(`${s.url}/api/v1/billing/certificacion/libros/${tipo}`, { headers: { 'X-Api-Key': t.readKey } })
      expect(r.status).toBe(200)
      return new Uint8Array(await r.arrayBuffer())
    }
    const ventas = await libro('ventas')
    expect(xsdErrors(ventas, 'LibroCV_v10.xsd')).toEqual([])
    expect(xmlsec1VerifiesAll(ventas, ['EnvioLibro'])).toBe(true)
    const text = Buffer.from(ventas).toString('latin1')
    expect(text).toContain('<TipoOperacion>VENTA</TipoOperacion><TipoLibro>ESPECIAL</TipoLibro><TipoEnvio>TOTAL</TipoEnvio><FolioNotificacion>1</FolioNotificacion>')
    expect(text.match(/<Detalle>/g)).toHaveLength(basico.length)
    // Its total of 33 is the sum of the invoices' totals.
    const dtes = await Promise.all(basico.map(async (c: any) => (await s.request('GET', `/api/v1/billing/dte/${c.dte_id}`, { headers: { 'X-Api-Key': t.readKey } })).json))
    const total33 = dtes.filter((d: any) => d.tipo_dte === 33).reduce((a: number, d: any) => a + d.monto_total, 0)
    expect(text).toMatch(new RegExp(`<TpoDoc>33</TpoDoc>.*?<TotMntTotal>${total33}</TotMntTotal>`, 's'))
    const compras = await libro('compras')
    expect(xsdErrors(compras, 'LibroCV_v10.xsd')).toEqual([])
    expect(Buffer.from(compras).toString('latin1')).toContain('<FolioNotificacion>2</FolioNotificacion>')
    const guias = await libro('guias')
    expect(xsdErrors(guias, 'LibroGuia_v10.xsd')).toEqual([])
    expect(xmlsec1VerifiesAll(guias, ['EnvioLibro'])).toBe(true)
    expect(Buffer.from(guias).toString('latin1')).toContain('<Anulado>2</Anulado>')
    expect((await s.request('GET', '/api/v1/billing/certificacion/libros/otro', { headers: { 'X-Api-Key': t.readKey } })).status).toBe(404)

    const sent = await post('/libros/enviar')
    expect(sent.status).toBe(200)
    expect(sent.json.libros.map((l: any) => [l.tipo, l.estado])).toEqual([['ventas', 'procesando'], ['compras', 'procesando'], ['guias', 'procesando']])
    let e: any
    for (let i = 0; i < 60; i++) {
      await submit.runOnce(s.server.deps)
      await track.runOnce(s.server.deps)
      e = await estado()
      if (e.libros.every((l: any) => l.estado !== 'procesando')) break
      clock.advance(20_000)
    }
    expect(e.libros.map((l: any) => l.estado)).toEqual(['aceptado', 'aceptado', 'aceptado'])
    expect(e.etapas[0]).toMatchObject({ etapa: 'set_pruebas', estado: 'enviado' })
    for (const x of [...e.envios, ...e.libros]) expect(e.etapas[0].siguiente_paso).toContain(x.track_id)
    // Sent once: asking again sends nothing new.
    expect((await post('/libros/enviar')).json.libros).toHaveLength(3)
  })

  test('emitir again issues nothing new; a reloaded set is refused unless replaced, and then starts over', async () => {
    const before = (await estado()).sets.flatMap((x: any) => x.casos).map((c: any) => c.dte_id)
    // As if the process had stopped between a case's issuance and its link: the case is found again by its key.
    s.server.deps.store.db.run(sql`UPDATE certificacion_casos SET dte_id = NULL WHERE caso = '5102201-3'`)
    const count = (await s.request('GET', '/api/v1/billing/dte?limit=1', { headers: { 'X-Api-Key': t.readKey } })).json.total_count
    const again = await post('/set/emitir', { tpo_cambio: 950.25 })
    expect((await s.request('GET', '/api/v1/billing/dte?limit=1', { headers: { 'X-Api-Key': t.readKey } })).json.total_count).toBe(count)
    expect(again.status).toBe(200)
    expect(again.json.sets.flatMap((x: any) => x.casos).map((c: any) => c.dte_id)).toEqual(before)
    expect(again.json.envios).toHaveLength(3)

    const r = await post('/set', { archivo_base64: b64(sintetico) })
    expect(r.status).toBe(409)
    expect(r.json.code).toBe('SET_YA_EMITIDO')
    const replaced = await post('/set?reemplazar=true', { archivo_base64: b64(sintetico) })
    expect(replaced.status).toBe(201)
    expect(replaced.json.sets[0].casos.every((c: any) => c.estado === 'sin_emitir')).toBe(true)
    // The libros sent were made of the replaced set's documents: history now, and to be sent again once re-issued.
    expect(replaced.json.libros.map((l: any) => l.vigente)).toEqual([false, false, false])
    expect(replaced.json.envios.every((e: any) => !e.vigente)).toBe(true)
    // A file of one older-layout set replaces only its own set.
    const solo = await post('/set?reemplazar=true', { archivo_base64: b64(basico) })
    expect(solo.status).toBe(201)
    expect(solo.json.sets.map((x: any) => x.nombre)).toEqual(['BASICO', 'GUIA DE DESPACHO', 'EXPORTACION 1', 'LIBRO DE VENTAS', 'LIBRO DE COMPRAS', 'LIBRO DE GUIAS'])
    expect(solo.json.sets[0].numero_atencion).not.toBe(5102201)
  })

  test('the simulation: 20 to 100 documents of the company, notes over its own invoices, in one envelope the SII accepts', async () => {
    expect((await post('/simulacion', { cantidad: 19 })).status).toBe(400)
    expect((await post('/simulacion', { cantidad: 101 })).status).toBe(400)
    for (const [rut, razon] of [['76.086.428-5', 'Ferretería Ñuble Limitada'], ['96.790.240-3', 'Distribuidora Los Andes S.A.']]) {
      const c = await s.request('POST', '/api/v1/billing/clientes', {
        headers: w(), body: { rut, razon_social: razon, giro: 'Comercio al por mayor', direccion: 'Av. Collao 1202', comuna: 'Concepción', ciudad: 'Concepción' },
      })
      expect(c.status).toBe(201)
    }
    const r = await post('/simulacion', { cantidad: 25 })
    expect(r.status).toBe(200)
    const sim = r.json.envios.find((e: any) => e.clase === 'simulacion')
    expect(sim).toMatchObject({ sets: ['SIMULACION'], documentos: 25 })
    expect(sim.track_id).toMatch(/^\d{10}$/)
    const list = (await s.request('GET', '/api/v1/billing/dte?limit=100', { headers: { 'X-Api-Key': t.readKey } })).json.items
    const docs = list.filter((d: any) => d.metadata?.certificacion?.simulacion !== undefined)
    expect(docs).toHaveLength(25)
    // Its own clientes, never a SET reference, and every note citing one of the batch's invoices by the folio it got.
    expect(new Set(docs.map((d: any) => d.rut_receptor))).toEqual(new Set(['76086428-5', '96790240-3']))
    const folios33 = new Set(docs.filter((d: any) => d.tipo_dte === 33).map((d: any) => d.folio))
    for (const d of docs) {
      const full = (await s.request('GET', `/api/v1/billing/dte/${d.id}`, { headers: { 'X-Api-Key': t.readKey } })).json
      expect(full.referencias.some((x: any) => x.tipo_doc_ref === 'SET')).toBe(false)
      if (d.tipo_dte === 61) expect(folios33.has(full.referencias[0].folio_ref)).toBe(true)
    }
    let e: any
    for (let i = 0; i < 60; i++) {
      await submit.runOnce(s.server.deps)
      await track.runOnce(s.server.deps)
      e = await estado()
      if (e.envios.find((x: any) => x.clase === 'simulacion').estado !== 'procesando') break
      clock.advance(20_000)
    }
    expect(e.envios.find((x: any) => x.clase === 'simulacion').estado).toBe('aceptado')
    expect(e.etapas[1]).toMatchObject({ etapa: 'simulacion', estado: 'enviado' })
    expect(e.etapas[1].siguiente_paso).toContain(sim.track_id)
  })

  test('intercambio: the SII test envelope answered with the three signed files in a zip; the stage moves on', async () => {
    const envelope = (rut: string) => {
      const r = Bun.spawnSync([process.execPath, join(import.meta.dir, '../../src/main.ts'), 'sii-simulator', 'intercambio', '--rut', rut, '--seed', '7'])
      if (r.exitCode !== 0) throw new Error(r.stderr.toString())
      return new Uint8Array(r.stdout)
    }
    const form = new FormData()
    form.set('archivo', new Blob([envelope(t.empresa.rut)]), 'ENVIO_DTE_INTERCAMBIO.xml')
    const r = await fetch(`${s.url}/api/v1/billing/certificacion/intercambio`, { method: 'POST', headers: w(), body: form })
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('application/zip')
    const files = unzipSync(new Uint8Array(await r.arrayBuffer()))
    expect(Object.keys(files).sort()).toEqual(['1_RecepcionDTE.xml', '2_EnvioRecibos.xml', '3_ResultadoDTE.xml'])
    expect(Buffer.from(files['3_ResultadoDTE.xml']!).toString('latin1')).toContain('<EstadoDTE>2</EstadoDTE>')
    const json = await post('/intercambio?formato=json', { archivo_base64: b64(envelope(t.empresa.rut)) })
    expect(json.status).toBe(200)
    expect(json.json.informe.documentos.map((d: any) => d.estado_dte)).toEqual([0, 2])
    expect(typeof json.json.zip_base64).toBe('string')
    expect((await estado()).etapas[2]).toMatchObject({ etapa: 'intercambio', estado: 'en_curso' })
    // Another company's envelope is no answer of this one.
    const other = await post('/intercambio', { archivo_base64: b64(envelope(testRut())) })
    expect(other.status).toBe(400)
    expect(other.json.details[0].field).toBe('archivo_base64')
  })

  test('each envío downloads as the signed EnvioDTE that went to the SII', async () => {
    const e = await estado()
    for (const envio of e.envios) {
      const r = await fetch(`${s.url}/api/v1/billing/certificacion/envios/${envio.id}/xml`, { headers: { 'X-Api-Key': t.readKey } })
      expect(r.status).toBe(200)
      const bytes = new Uint8Array(await r.arrayBuffer())
      expect(xsdErrors(bytes, 'EnvioDTE_v10.xsd')).toEqual([])
      expect(xmlsec1VerifiesAll(bytes, ['SetDTE', 'Documento', 'Exportaciones'])).toBe(true)
      const text = Buffer.from(bytes).toString('latin1')
      expect(text).toContain('<RutReceptor>60803000-K</RutReceptor>')
      expect(text).toContain('<NroResol>0</NroResol>')
    }
    expect((await s.request('GET', `/api/v1/billing/certificacion/envios/${crypto.randomUUID()}/xml`, { headers: { 'X-Api-Key': t.readKey } })).status).toBe(404)
  })

  test('muestras: one PDF per set and simulation document, and the cedible copy of 33, 34, 46 and 52', async () => {
    const e = await estado()
    const r = await fetch(`${s.url}/api/v1/billing/certificacion/muestras`, { headers: { 'X-Api-Key': t.readKey } })
    expect(r.status).toBe(200)
    const files = unzipSync(new Uint8Array(await r.arrayBuffer()))
    const issued = e.sets.flatMap((x: any) => x.casos).filter((c: any) => c.dte_id !== null)
    const list = (await s.request('GET', '/api/v1/billing/dte?limit=100', { headers: { 'X-Api-Key': t.readKey } })).json.items
    const docs = [...issued.map((c: any) => ({ tipo: c.tipo_dte, folio: c.folio })), ...list.filter((d: any) => d.metadata?.certificacion?.simulacion).map((d: any) => ({ tipo: d.tipo_dte, folio: d.folio }))]
    const expected = docs.flatMap((d) => [33, 34, 46, 52].includes(d.tipo) ? [`${d.tipo}-${d.folio}.pdf`, `${d.tipo}-${d.folio}-cedible.pdf`] : [`${d.tipo}-${d.folio}.pdf`])
    expect(Object.keys(files).sort()).toEqual(expected.sort())
    expect(Object.values(files).every((f) => Buffer.from(f.subarray(0, 5)).toString() === '%PDF-')).toBe(true)
    expect((await estado()).etapas[3]).toMatchObject({ etapa: 'muestras', estado: 'en_curso' })
  })

  test('boletas: each case once with CodRef SET, one EnvioBOLETA, and their ConsumoFolios', async () => {
    expect((await s.request('GET', '/api/v1/billing/certificacion/boletas/consumo-folios', { headers: { 'X-Api-Key': t.readKey } })).status).toBe(404)
    const body = {
      casos: [
        { caso: '1', documento: { tipo_dte: 39, detalle: [{ nombre: 'Cambio de aceite', cantidad: 1, precio: 19900 }, { nombre: 'Alineación y balanceo', cantidad: 1, precio: 9900 }] } },
        { caso: 'CASO-2', documento: { tipo_dte: 39, detalle: [{ nombre: 'Papel de regalo', cantidad: 17, precio: 120 }] } },
        { caso: '3', documento: { tipo_dte: 41, detalle: [{ nombre: 'Clase de yoga', cantidad: 1, precio: 12000 }] } },
      ],
    }
    expect((await post('/boletas', { casos: [{ caso: '1', documento: { tipo_dte: 33, detalle: [] } }] })).status).toBe(400)
    const r = await post('/boletas', body)
    expect(r.status).toBe(200)
    const envio = r.json.envios.find((x: any) => x.clase === 'boletas')
    expect(envio).toMatchObject({ sets: ['BOLETAS'], documentos: 3 })
    const again = await post('/boletas', body)
    expect(again.json.envios.filter((x: any) => x.clase === 'boletas')).toHaveLength(1)
    const xml = await fetch(`${s.url}/api/v1/billing/certificacion/envios/${envio.id}/xml`, { headers: { 'X-Api-Key': t.readKey } })
    const envioText = Buffer.from(await xml.arrayBuffer()).toString('latin1')
    expect(envioText).toContain('<EnvioBOLETA')
    expect(envioText).toContain('<TpoDocRef>SET</TpoDocRef><FolioRef>0</FolioRef><CodRef>SET</CodRef><RazonRef>CASO-2</RazonRef>')
    const consumo = await fetch(`${s.url}/api/v1/billing/certificacion/boletas/consumo-folios`, { headers: { 'X-Api-Key': t.readKey } })
    expect(consumo.status).toBe(200)
    const bytes = new Uint8Array(await consumo.arrayBuffer())
    expect(xsdErrors(bytes, 'ConsumoFolio_v10.xsd')).toEqual([])
    expect(xmlsec1VerifiesAll(bytes, ['DocumentoConsumoFolios'])).toBe(true)
    expect(Buffer.from(bytes).toString('latin1')).toContain('<FoliosEmitidos>2</FoliosEmitidos>')
  })

  test('the person records what the SII said of a stage', async () => {
    const r = await post('/etapas/set_pruebas', { estado: 'aprobado', nota: 'Aprobado el 2026-11-28' })
    expect(r.status).toBe(200)
    expect(r.json.etapas[0]).toMatchObject({ etapa: 'set_pruebas', estado: 'aprobado' })
    expect(r.json.etapas[0].actualizado_at).not.toBeNull()
    expect((await post('/etapas/otra', { estado: 'aprobado' })).status).toBe(404)
    expect((await post('/etapas/muestras', { estado: 'aceptado' })).status).toBe(400)
  })

  test('a company in producción gets 409 NOT_IN_CERTIFICATION on every operation', async () => {
    const empresa = createEmpresa(s.server.deps, {
      rut: testRut(), razon_social: 'Ya Certificada SpA', giro: 'Comercio', acteco: [479100], direccion: 'Av. Uno 1', comuna: 'Santiago', ciudad: 'Santiago',
      ambiente: 'produccion', numero_resolucion: 80, fecha_resolucion: '2014-08-22',
    })
    const key = createApiKey(s.server.deps, { empresaId: empresa.id, write: true, nombre: 'w' }).key
    const h = { 'X-Api-Key': key }
    for (const [method, path, body] of [
      ['GET', '', undefined], ['POST', '/set', { archivo_base64: b64(sintetico) }], ['POST', '/set/emitir', {}], ['POST', '/simulacion', { cantidad: 20 }], ['POST', '/intercambio', { archivo_base64: b64(sintetico) }],
      ['GET', '/muestras', undefined], ['POST', '/boletas', { casos: [{ caso: '1', documento: { tipo_dte: 39, detalle: [{ nombre: 'x', cantidad: 1, precio: 1 }] } }] }],
      ['GET', '/boletas/consumo-folios', undefined], ['GET', '/envios', undefined], ['GET', `/envios/${crypto.randomUUID()}/xml`, undefined],
      ['GET', '/libros/ventas', undefined], ['GET', '/libros/compras', undefined], ['GET', '/libros/guias', undefined], ['POST', '/libros/enviar', undefined],
      ['POST', '/etapas/set_pruebas', { estado: 'aprobado' }],
    ] as const) {
      const r = await s.request(method, `/api/v1/billing/certificacion${path}`, { headers: h, ...(body !== undefined ? { body } : {}) })
      expect({ path, status: r.status, code: r.json?.code }).toEqual({ path, status: 409, code: 'NOT_IN_CERTIFICATION' })
    }
  })
})
