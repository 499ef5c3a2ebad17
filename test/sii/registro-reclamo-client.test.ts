// RegistroReclamoDTE's client (docs/sii-protocol.md §6.7): the answers read from the SII's literal shapes (the
// manual's SoapUI examples: `S:Envelope`, `ns2:…Response`, `return` with codResp and descResp), the fault of a refused
// token, and the request as it goes on the wire, against a scripted server on 127.0.0.1 (the simulator's tests,
// registro-reclamo-simulator.test.ts, run the protocol end to end).
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { createSiiClient, type SiiClient, type SiiCompany, type SiiCredentials } from '../../src/sii/client/client'
import { registroReclamoEndpoint } from '../../src/sii/client/hosts'
import type { HttpResult } from '../../src/sii/client/http'
import { eventosOutcome, fechaRecepcionOutcome, registroOutcome, registroParams } from '../../src/sii/client/registro-reclamo'
import { literalEnvelope, literalOutcome } from '../../src/sii/client/soap'
import { formatFechaSii, parseFechaSii, REGISTRO_RECLAMO_NS } from '../../src/sii/registro-reclamo-protocol'
import { makeCertificate, testCa } from '../support/pki'

const NS = 'http://ws.registroreclamodte.diii.sdi.sii.cl'

/** The SII's answer as the manual's examples show it (JAX-WS: `S:` envelope, `ns2:` response, `return` unqualified). */
function answer(operation: string, ret: string): string {
  return `<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><ns2:${operation}Response xmlns:ns2="${NS}">${ret}</ns2:${operation}Response></S:Body></S:Envelope>`
}
const TOKEN_FAULT =
  '<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><S:Fault xmlns:ns4="http://www.w3.org/2003/05/soap-envelope">' +
  '<faultcode>S:Server</faultcode><faultstring>Error de Autenticacion: TOKEN invalido</faultstring></S:Fault></S:Body></S:Envelope>'
const http = (text: string, status = 200, contentType = 'text/xml; charset=utf-8'): HttpResult => ({ kind: 'response', status, contentType, text })
const read = (operation: string, text: string, status = 200) => literalOutcome(http(text, status), operation)

/** The manual's listarEventosHistDoc example (SII-RCL v1.2, Anexo). */
const LISTADO =
  '<return><codResp>15</codResp><descResp>Listado de eventos del documento</descResp><listaEventosDoc><codEvento>ACD</codEvento>' +
  '<descEvento>Acepta Contenido del Documento</descEvento><rutResponsable>45000055</rutResponsable><dvResponsable>8</dvResponsable>' +
  '<fechaEvento>29-12-2016 12:05:36</fechaEvento></listaEventosDoc></return>'

describe('answers of ingresarAceptacionReclamoDoc', () => {
  test('codResp 0 "Acción Completada OK" (the manual\'s example) → registrada', () => {
    const op = 'ingresarAceptacionReclamoDoc'
    expect(registroOutcome(read(op, answer(op, '<return><codResp>0</codResp><descResp>Acción Completada OK</descResp></return>'))))
      .toEqual({ kind: 'registrada', codResp: 0, descResp: 'Acción Completada OK' })
  })

  test.each([
    [7, 'Evento registrado previamente'],
    [8, 'Pasados 8 días después de la recepción no es posible registrar reclamos o eventos'],
    [11, 'No se puede reclamar DTE previamente aceptado'],
    [12, 'No se puede dar por aceptado DTE previamente rechazado por RCD'],
    [18, 'Documento no ha sido recibido'],
    [27, 'No se puede registrar un evento (acuse de recibo, reclamo o aceptación de contenido) de un DTE pagado al contado o gratuito'],
  ])('codResp %i → rechazada with the SII\'s descResp', (codResp, descResp) => {
    const op = 'ingresarAceptacionReclamoDoc'
    expect(registroOutcome(read(op, answer(op, `<return><codResp>${codResp}</codResp><descResp>${descResp}</descResp></return>`))))
      .toEqual({ kind: 'rechazada', codResp, descResp })
  })

  test('an empty descResp takes the manual\'s text for the code', () => {
    const op = 'ingresarAceptacionReclamoDoc'
    expect(registroOutcome(read(op, answer(op, '<return><codResp>13</codResp><descResp/></return>'))))
      .toEqual({ kind: 'rechazada', codResp: 13, descResp: 'No se puede reclamar DTE previamente registrado como que acuso recibo mercadería' })
  })

  test('codResp -1 "Error Interno … reintentar" is the SII failing → retry', () => {
    const op = 'ingresarAceptacionReclamoDoc'
    expect(registroOutcome(read(op, answer(op, '<return><codResp>-1</codResp><descResp>Error Interno</descResp></return>'))))
      .toEqual({ kind: 'retry', reason: 'codResp -1: Error Interno' })
  })

  test('the fault "Error de Autenticacion: TOKEN invalido" (HTTP 500) asks for a new token, in every operation', () => {
    const rejected = { kind: 'token_invalid', raw: TOKEN_FAULT } as const
    expect(registroOutcome(read('ingresarAceptacionReclamoDoc', TOKEN_FAULT, 500))).toEqual(rejected)
    expect(eventosOutcome(read('listarEventosHistDoc', TOKEN_FAULT, 500))).toEqual(rejected)
    expect(fechaRecepcionOutcome(read('consultarFechaRecepcionSii', TOKEN_FAULT, 500))).toEqual(rejected)
  })

  test.each([
    ['an HTML maintenance page', http('<!DOCTYPE html><html><body>Servicio en mantención</body></html>'), 'HTML page instead of an answer (HTTP 200)'],
    ['a 503 page', http('<html><body><h1>503 Service Unavailable</h1></body></html>', 503, 'text/html'), 'HTML page instead of an answer (HTTP 503)'],
    ['an empty body', http(''), 'empty body (HTTP 200)'],
    ['a timeout', { kind: 'failure', reason: 'timeout after 30000 ms' } as HttpResult, 'timeout after 30000 ms'],
    ['another SOAP fault', http('<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><S:Fault><faultcode>S:Server</faultcode><faultstring>java.lang.NullPointerException</faultstring></S:Fault></S:Body></S:Envelope>', 500), 'SOAP fault: java.lang.NullPointerException'],
    ['an answer without codResp', http(answer('ingresarAceptacionReclamoDoc', '<return><descResp>?</descResp></return>')), 'ingresarAceptacionReclamoDoc answer without codResp'],
  ])('%s → retry', (_what, res, reason) => {
    expect(registroOutcome(literalOutcome(res, 'ingresarAceptacionReclamoDoc'))).toEqual({ kind: 'retry', reason })
  })
})

describe('answers of listarEventosHistDoc', () => {
  const op = 'listarEventosHistDoc'

  test('codResp 15 with the manual\'s event: codEvento, descEvento, responsable and its Chile-local date in UTC', () => {
    expect(eventosOutcome(read(op, answer(op, LISTADO)))).toEqual({
      kind: 'eventos',
      eventos: [{ accion: 'ACD', descripcion: 'Acepta Contenido del Documento', fecha: '2016-12-29T15:05:36.000Z', rutResponsable: '45000055-8' }],
    })
  })

  test('codResp 16 "Documento no presenta eventos…" → eventos []', () => {
    expect(eventosOutcome(read(op, answer(op, '<return><codResp>16</codResp><descResp>Documento no presenta eventos de reclamos o acuse de recibo</descResp></return>'))))
      .toEqual({ kind: 'eventos', eventos: [] })
  })

  test('codResp 8 (past the 8 days) still lists its events (LibreDTE reads 8, 15 and 16 alike); a nil entry is skipped', () => {
    const ret = LISTADO.replace('<codResp>15</codResp>', '<codResp>8</codResp>').replace('</return>', '<listaEventosDoc xsi:nil="true" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"/></return>')
    const out = eventosOutcome(read(op, answer(op, ret)))
    expect(out.kind === 'eventos' ? out.eventos.map((e) => e.accion) : out).toEqual(['ACD'])
  })

  test('several events keep the SII\'s order; NCA (a credit note the SII adds) passes as its code', () => {
    const ev = (cod: string, fecha: string) => `<listaEventosDoc><codEvento>${cod}</codEvento><descEvento>d</descEvento><rutResponsable>76086428</rutResponsable><dvResponsable>5</dvResponsable><fechaEvento>${fecha}</fechaEvento></listaEventosDoc>`
    const out = eventosOutcome(read(op, answer(op, `<return><codResp>15</codResp><descResp>x</descResp>${ev('ERM', '02-03-2026 12:00:00')}${ev('NCA', '03-03-2026 09:30:00')}</return>`)))
    expect(out).toEqual({ kind: 'eventos', eventos: [
      { accion: 'ERM', descripcion: 'd', fecha: '2026-03-02T15:00:00.000Z', rutResponsable: '76086428-5' },
      { accion: 'NCA', descripcion: 'd', fecha: '2026-03-03T12:30:00.000Z', rutResponsable: '76086428-5' },
    ] })
  })

  test('codResp 18 → rechazada; a fechaEvento that is no date → retry', () => {
    expect(eventosOutcome(read(op, answer(op, '<return><codResp>18</codResp><descResp>Documento no ha sido recibido</descResp></return>'))))
      .toEqual({ kind: 'rechazada', codResp: 18, descResp: 'Documento no ha sido recibido' })
    expect(eventosOutcome(read(op, answer(op, LISTADO.replace('29-12-2016 12:05:36', '2016-12-29')))))
      .toEqual({ kind: 'retry', reason: 'listarEventosHistDoc: fechaEvento "2016-12-29" is not dd-mm-yyyy hh:mm:ss' })
  })
})

describe('answers of consultarFechaRecepcionSii', () => {
  const op = 'consultarFechaRecepcionSii'

  test('the manual\'s example "21-02-2017 19:02:03" (Chile, summer time) → 2017-02-21T22:02:03.000Z', () => {
    expect(fechaRecepcionOutcome(read(op, answer(op, '<return>21-02-2017 19:02:03</return>')))).toEqual({ kind: 'fecha', fecha: '2017-02-21T22:02:03.000Z' })
  })

  test('no return, or an empty one → rechazada 18 "Documento no ha sido recibido"; other text → retry', () => {
    const noRecibido = { kind: 'rechazada', codResp: 18, descResp: 'Documento no ha sido recibido' } as const
    expect(fechaRecepcionOutcome(read(op, answer(op, '')))).toEqual(noRecibido)
    expect(fechaRecepcionOutcome(read(op, answer(op, '<return></return>')))).toEqual(noRecibido)
    expect(fechaRecepcionOutcome(read(op, answer(op, '<return>Error</return>')))).toEqual({ kind: 'retry', reason: 'consultarFechaRecepcionSii answered "Error", not a dd-mm-yyyy hh:mm:ss date' })
  })
})

describe('the SII\'s date-time text', () => {
  test.each([
    ['15-07-2026 10:00:00', '2026-07-15T14:00:00.000Z'],  // winter, UTC-4
    ['02-03-2026 12:00', '2026-03-02T15:00:00.000Z'],  // summer, UTC-3, no seconds
    ['04-04-2026 23:30:00', '2026-04-05T02:30:00.000Z'],  // the hour that occurs twice: its first occurrence
    ['05-04-2026 00:30:00', '2026-04-05T04:30:00.000Z'],
  ])('%s (America/Santiago) → %s', (text, iso) => {
    expect(parseFechaSii(text)).toBe(iso)
    expect(formatFechaSii(new Date(iso))).toBe(text.length === 16 ? `${text}:00` : text)
  })

  test.each(['31-02-2026 10:00:00', '2026-03-02 10:00:00', '02-03-2026', ''])('%p is no SII date', (text) => {
    expect(parseFechaSii(text)).toBeNull()
  })
})

describe('requests and endpoints', () => {
  test('RPC/literal: operation element in the service namespace, parts unqualified in parameterOrder, DV uppercase', () => {
    expect(REGISTRO_RECLAMO_NS).toBe(NS)
    const xml = literalEnvelope(NS, 'ingresarAceptacionReclamoDoc', registroParams({ rutEmisor: '45000054-k', tipoDte: 34, folio: 17 }, 'ACD'))
    expect(xml).toContain(`<soapenv:Body><ws:ingresarAceptacionReclamoDoc xmlns:ws="${NS}"><rutEmisor>45000054</rutEmisor><dvEmisor>K</dvEmisor><tipoDoc>34</tipoDoc><folio>17</folio><accionDoc>ACD</accionDoc></ws:ingresarAceptacionReclamoDoc></soapenv:Body>`)
    expect(xml).not.toContain('xsi:type')
    expect(() => registroParams({ rutEmisor: '76543210-4', tipoDte: 33, folio: 1 })).toThrow('not a valid RUT')
    expect(() => registroParams({ rutEmisor: '76543210-3', tipoDte: 33, folio: 0 })).toThrow('folio')
  })

  test('ws2 …CERT for certificación, ws1 for producción, both with a palena token (LibreDTE issue #72); an origin takes both paths', () => {
    expect(registroReclamoEndpoint({ kind: 'sii' }, 'certificacion')).toEqual({ url: 'https://ws2.sii.cl/WSREGISTRORECLAMODTECERT/registroreclamodteservice', tokenOrigin: 'https://palena.sii.cl' })
    expect(registroReclamoEndpoint({ kind: 'sii' }, 'produccion')).toEqual({ url: 'https://ws1.sii.cl/WSREGISTRORECLAMODTE/registroreclamodteservice', tokenOrigin: 'https://palena.sii.cl' })
    expect(registroReclamoEndpoint({ kind: 'origin', origin: 'http://127.0.0.1:9/' }, 'certificacion'))
      .toEqual({ url: 'http://127.0.0.1:9/WSREGISTRORECLAMODTECERT/registroreclamodteservice', tokenOrigin: 'http://127.0.0.1:9' })
  })
})

// ---- On the wire, against a scripted server ----

interface Seen { readonly path: string; readonly headers: Headers; readonly body: string }
const seen: Seen[] = []
let registro: (s: Seen) => Response = () => new Response('not set', { status: 500 })
let tokens = 0
const soapString = (operation: string, inner: string) => new Response(
  '<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>' +
    `<ns1:${operation}Response xmlns:ns1="http://DefaultNamespace"><${operation}Return>${inner.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</${operation}Return></ns1:${operation}Response></soapenv:Body></soapenv:Envelope>`,
  { headers: { 'Content-Type': 'text/xml; charset=utf-8' } },
)
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    const url = new URL(req.url)
    const s: Seen = { path: url.pathname, headers: req.headers, body: await req.text() }
    seen.push(s)
    const respuesta = (hdr: string, body: string) => `<?xml version="1.0" encoding="UTF-8"?><SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_BODY>${body}</SII:RESP_BODY><SII:RESP_HDR>${hdr}</SII:RESP_HDR></SII:RESPUESTA>`
    if (url.pathname === '/DTEWS/CrSeed.jws') return soapString('getSeed', respuesta('<ESTADO>00</ESTADO>', '<SEMILLA>000000000078</SEMILLA>'))
    if (url.pathname === '/DTEWS/GetTokenFromSeed.jws') return soapString('getToken', respuesta('<ESTADO>00</ESTADO><GLOSA>Token Creado</GLOSA>', `<TOKEN>tok${++tokens}</TOKEN>`))
    return registro(s)
  },
})
afterAll(() => server.stop(true))

const identity = makeCertificate({ rut: '07880442-4', issuer: testCa() })
const RECEPTOR: SiiCompany = { rut: '76086428-5', ambiente: 'produccion', isDemo: false }
const CREDS: SiiCredentials = { certificateId: 'cert-wire', rutFirmante: '7880442-4', signer: identity.signer }
const DOC = { rutEmisor: '76543210-3', tipoDte: 33, folio: 42 }
const logs: Array<{ event: string; fields: object }> = []
let client: SiiClient

beforeEach(() => {
  seen.length = 0
  logs.length = 0
  tokens = 0
  client = createSiiClient({ target: { kind: 'origin', origin: `http://127.0.0.1:${server.port}` }, timeoutMs: 2_000, log: (event, fields) => logs.push({ event, fields }) })
})

describe('on the wire', () => {
  test('POST to the producción path: SOAPAction "", text/xml, Cookie TOKEN, the DTEWS token fetched once', async () => {
    registro = () => new Response(answer('ingresarAceptacionReclamoDoc', '<return><codResp>0</codResp><descResp>Acción Completada OK</descResp></return>'), { headers: { 'Content-Type': 'text/xml; charset=utf-8' } })
    expect(await client.registrarAccion(RECEPTOR, CREDS, DOC, 'ERM')).toEqual({ kind: 'registrada', codResp: 0, descResp: 'Acción Completada OK' })
    expect(await client.registrarAccion(RECEPTOR, CREDS, DOC, 'ACD')).toMatchObject({ kind: 'registrada' })
    expect(seen.map((s) => s.path)).toEqual(['/DTEWS/CrSeed.jws', '/DTEWS/GetTokenFromSeed.jws', '/WSREGISTRORECLAMODTE/registroreclamodteservice', '/WSREGISTRORECLAMODTE/registroreclamodteservice'])
    const call = seen[2] as Seen
    expect(call.headers.get('soapaction')).toBe('""')
    expect(call.headers.get('content-type')).toBe('text/xml; charset=utf-8')
    expect(call.headers.get('cookie')).toBe('TOKEN=tok1')
    expect(call.body).toContain(`<ws:ingresarAceptacionReclamoDoc xmlns:ws="${NS}"><rutEmisor>76543210</rutEmisor><dvEmisor>3</dvEmisor><tipoDoc>33</tipoDoc><folio>42</folio><accionDoc>ERM</accionDoc></ws:ingresarAceptacionReclamoDoc>`)
    expect(logs.find((l) => l.event === 'sii.registro_reclamo')?.fields).toEqual({
      operation: 'ingresarAceptacionReclamoDoc', rut_empresa: '76086428-5', rut_emisor: '76543210-3', tipo_dte: 33, folio: 42, accion: 'ERM',
      outcome: 'registrada', cod_resp: 0, desc_resp: 'Acción Completada OK',
    })
    expect(JSON.stringify(logs)).not.toContain('tok1')
  })

  test('the TOKEN invalido fault → one new token and the call once more; HTTP 401 likewise; twice refused → retry', async () => {
    let n = 0
    registro = () => (++n === 1 ? new Response(TOKEN_FAULT, { status: 500, headers: { 'Content-Type': 'text/xml; charset=utf-8' } }) : new Response(answer('listarEventosHistDoc', LISTADO)))
    expect(await client.listarEventos(RECEPTOR, CREDS, DOC)).toMatchObject({ kind: 'eventos', eventos: [{ accion: 'ACD' }] })
    const cookies = seen.filter((s) => s.path.startsWith('/WSREGISTRO')).map((s) => s.headers.get('cookie'))
    expect(cookies).toEqual(['TOKEN=tok1', 'TOKEN=tok2'])

    n = 0
    registro = () => (++n === 1 ? new Response('Unauthorized', { status: 401 }) : new Response(answer('consultarFechaRecepcionSii', '<return>21-02-2017 19:02:03</return>')))
    expect(await client.fechaRecepcion(RECEPTOR, CREDS, DOC)).toEqual({ kind: 'fecha', fecha: '2017-02-21T22:02:03.000Z' })

    registro = () => new Response(TOKEN_FAULT, { status: 500 })
    expect(await client.registrarAccion(RECEPTOR, CREDS, DOC, 'RCD')).toEqual({ kind: 'retry', reason: 'token refused twice in a row (TOKEN invalido)' })
    expect(tokens).toBe(4)
  })
})
