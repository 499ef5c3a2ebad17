// What the client puts on the wire and how it handles tokens, against a scripted HTTP server on 127.0.0.1 that answers
// with the SII's literal texts (docs/sii-protocol.md §6–§7). The simulator tests (client-simulator.test.ts) exercise the real
// protocol end to end; these pin the request bytes and the token rules exactly, which the simulator cannot observe.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { createSiiClient, type SiiClient, type SiiCompany, type SiiCredentials } from '../../src/sii/client/client'
import { SII_USER_AGENT } from '../../src/sii/client/http'
import { verifyXmlSignatures } from '../../src/xml/signature'
import { makeCertificate, testCa } from '../support/pki'

interface Seen {
  readonly method: string
  readonly path: string
  readonly headers: Headers
  readonly body: Uint8Array
}

type Handler = (req: Seen) => Response | Promise<Response>

const seen: Seen[] = []
let routes: Record<string, Handler> = {}
let tokenCounter = 0

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    const url = new URL(req.url)
    const s: Seen = { method: req.method, path: url.pathname + url.search, headers: req.headers, body: new Uint8Array(await req.arrayBuffer()) }
    seen.push(s)
    const handler = routes[url.pathname] ?? Object.entries(routes).find(([p]) => p.endsWith('*') && url.pathname.startsWith(p.slice(0, -1)))?.[1]
    return handler ? handler(s) : new Response('not found', { status: 404 })
  },
})
afterAll(() => server.stop(true))
const ORIGIN = `http://127.0.0.1:${server.port}`

const identity = makeCertificate({ rut: '07880442-4', issuer: testCa() })
const COMPANY: SiiCompany = { rut: '76543210-3', ambiente: 'certificacion', isDemo: false }
const CREDS: SiiCredentials = { certificateId: 'cert-1', rutFirmante: '7880442-4', signer: identity.signer }
const text = (s: Seen) => Buffer.from(s.body).toString('latin1')
const calls = (path: string) => seen.filter((s) => s.path.startsWith(path))

function soap(operation: string, inner: string, status = 200): Response {
  const escaped = inner.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  return new Response(
    '<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>' +
      `<ns1:${operation}Response xmlns:ns1="http://DefaultNamespace"><${operation}Return xsi:type="xsd:string">${escaped}</${operation}Return></ns1:${operation}Response></soapenv:Body></soapenv:Envelope>`,
    { status, headers: { 'Content-Type': 'text/xml; charset=utf-8' } },
  )
}
const respuesta = (hdr: string, body = '') =>
  `<?xml version="1.0" encoding="UTF-8"?><SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema">${body ? `<SII:RESP_BODY>${body}</SII:RESP_BODY>` : ''}<SII:RESP_HDR>${hdr}</SII:RESP_HDR></SII:RESPUESTA>`
const recepcion = (status: number, trackId?: string) =>
  new Response(`<?xml version="1.0"?>\n<RECEPCIONDTE>\n <RUTSENDER>7880442-4</RUTSENDER>\n <RUTCOMPANY>76543210-3</RUTCOMPANY>\n <FILE>envio.xml</FILE>\n <TIMESTAMP>2026-01-10 10:04:26</TIMESTAMP>\n <STATUS>${status}</STATUS>\n${trackId ? ` <TRACKID>${trackId}</TRACKID>\n` : ''}</RECEPCIONDTE>\n`)

/** The seed/token services of both channels: a new token per request, after checking the seed's signature. */
function tokenRoutes(): Record<string, Handler> {
  const issue = (s: Seen, signed: string): string => {
    expect(verifyXmlSignatures(signed)).toEqual([{ uri: '', isValid: true }])
    expect(signed).toContain('<Semilla>000000000078</Semilla>')
    void s
    return `tok${++tokenCounter}`
  }
  return {
    '/DTEWS/CrSeed.jws': () => soap('getSeed', respuesta('<ESTADO>00</ESTADO>', '<SEMILLA>000000000078</SEMILLA>')),
    '/DTEWS/GetTokenFromSeed.jws': (s) => {
      const pszXml = /<pszXml[^>]*>([\s\S]*)<\/pszXml>/.exec(text(s))?.[1] ?? ''
      const signed = pszXml.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&')
      return soap('getToken', respuesta('<ESTADO>00</ESTADO><GLOSA>Token Creado</GLOSA>', `<TOKEN>${issue(s, signed)}</TOKEN>`))
    },
    '/recursos/v1/boleta.electronica.semilla': () => new Response(respuesta('<ESTADO>00</ESTADO>', '<SEMILLA>000000000078</SEMILLA>'), { headers: { 'Content-Type': 'application/xml' } }),
    '/recursos/v1/boleta.electronica.token': (s) => new Response(respuesta('<ESTADO>00</ESTADO><GLOSA>Token Creado</GLOSA>', `<TOKEN>${issue(s, text(s))}</TOKEN>`)),
  }
}

const logs: Array<{ event: string; fields: object }> = []
let client: SiiClient
beforeEach(() => {
  seen.length = 0
  tokenCounter = 0
  logs.length = 0
  routes = tokenRoutes()
  client = createSiiClient({ target: { kind: 'origin', origin: ORIGIN }, timeoutMs: 2_000, log: (event, fields) => logs.push({ event, fields }) })
})

/** An envelope's bytes with Latin-1 characters above 0x7F, which must reach the SII as single bytes. */
const ENVELOPE = Uint8Array.from(Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?>\n<EnvioDTE>Ñandú</EnvioDTE>', 'latin1'))

describe('SOAP channel on the wire', () => {
  test('seed → signed seed → token, then DTEUpload multipart exactly as docs/sii-protocol.md §6.4', async () => {
    routes['/cgi_dte/UPL/DTEUpload'] = () => recepcion(0, '0107418640')
    const out = await client.upload(COMPANY, CREDS, 'soap', ENVELOPE, 'envio.xml')
    expect(out).toMatchObject({ kind: 'received', trackId: '0107418640' })
    expect(seen.map((s) => s.path)).toEqual(['/DTEWS/CrSeed.jws', '/DTEWS/GetTokenFromSeed.jws', '/cgi_dte/UPL/DTEUpload'])

    const [seed, token, upload] = seen as [Seen, Seen, Seen]
    for (const s of [seed, token]) {
      expect(s.headers.get('soapaction')).toBe('""')
      expect(s.headers.get('content-type')).toBe('text/xml; charset=utf-8')
    }
    expect(text(seed)).toContain('<m:getSeed xmlns:m="http://DefaultNamespace" soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"></m:getSeed>')
    expect(text(token)).toContain('<pszXml xsi:type="xsd:string">&lt;?xml version=&quot;1.0&quot;?&gt;')

    expect(upload.headers.get('cookie')).toBe('TOKEN=tok1')
    expect(upload.headers.get('user-agent')).toBe(SII_USER_AGENT)
    expect(upload.headers.get('content-length')).toBe(String(upload.body.length))
    expect(upload.headers.get('transfer-encoding')).toBeNull()
    const boundary = /boundary=(.+)$/.exec(upload.headers.get('content-type') ?? '')?.[1] ?? ''
    const parts = text(upload).split(`--${boundary}`).slice(1, -1)
    const names = parts.map((p) => /name="([^"]+)"/.exec(p)?.[1])
    expect(names).toEqual(['rutSender', 'dvSender', 'rutCompany', 'dvCompany', 'archivo'])
    const values = parts.slice(0, 4).map((p) => p.split('\r\n\r\n')[1]?.replace(/\r\n$/, ''))
    expect(values).toEqual(['7880442', '4', '76543210', '3'])
    const archivo = parts[4] ?? ''
    expect(archivo).toContain('filename="envio.xml"')
    expect(archivo).toContain('Content-Type: text/xml')
    // The envelope's bytes, untouched: Ñ is 0xD1, ú 0xFA (one byte each, not UTF-8).
    expect(archivo.split('\r\n\r\n')[1]).toBe('<?xml version="1.0" encoding="ISO-8859-1"?>\n<EnvioDTE>\u00d1and\u00fa</EnvioDTE>\r\n')
  })

  test('the token is reused: a second upload and a query make no new seed request', async () => {
    routes['/cgi_dte/UPL/DTEUpload'] = () => recepcion(0, '0107418640')
    routes['/DTEWS/QueryEstUp.jws'] = () => soap('getEstUp', respuesta('<TRACKID>0107418640</TRACKID><ESTADO>REC</ESTADO><GLOSA>Envio Recibido</GLOSA>'))
    await client.upload(COMPANY, CREDS, 'soap', ENVELOPE, 'a.xml')
    await client.upload(COMPANY, CREDS, 'soap', ENVELOPE, 'b.xml')
    expect(await client.queryEnvio(COMPANY, CREDS, 'soap', '0107418640')).toMatchObject({ kind: 'pending', estado: 'REC', glosa: 'Envio Recibido' })
    expect(calls('/DTEWS/CrSeed.jws')).toHaveLength(1)
    const query = calls('/DTEWS/QueryEstUp.jws')[0] as Seen
    expect(query.headers.get('cookie')).toBe('TOKEN=tok1')
    expect(text(query)).toContain('<RutCompania xsi:type="xsd:string">76543210</RutCompania><DvCompania xsi:type="xsd:string">3</DvCompania><TrackId xsi:type="xsd:string">0107418640</TrackId><Token xsi:type="xsd:string">tok1</Token>')
  })

  test('STATUS 5 → one new token and one more upload; a second STATUS 5 is a retry, not a loop', async () => {
    routes['/cgi_dte/UPL/DTEUpload'] = (s) => (s.headers.get('cookie') === 'TOKEN=tok2' ? recepcion(0, '0000000042') : recepcion(5))
    expect(await client.upload(COMPANY, CREDS, 'soap', ENVELOPE, 'e.xml')).toMatchObject({ kind: 'received', trackId: '0000000042' })
    expect(calls('/DTEWS/CrSeed.jws')).toHaveLength(2)
    expect(calls('/cgi_dte/UPL/DTEUpload').map((s) => s.headers.get('cookie'))).toEqual(['TOKEN=tok1', 'TOKEN=tok2'])

    routes['/cgi_dte/UPL/DTEUpload'] = () => recepcion(5)
    seen.length = 0
    expect(await client.upload(COMPANY, CREDS, 'soap', ENVELOPE, 'e.xml')).toMatchObject({ kind: 'retry', status: '5' })
    expect(calls('/cgi_dte/UPL/DTEUpload')).toHaveLength(2)
    expect(calls('/DTEWS/CrSeed.jws')).toHaveLength(1)
  })

  test('ESTADO 001 and the SOAP fault "TOKEN invalido" on queries renew the token once', async () => {
    routes['/DTEWS/QueryEstUp.jws'] = (s) => (text(s).includes('>tok1<') ? soap('getEstUp', respuesta('<ESTADO>001</ESTADO>')) : soap('getEstUp', respuesta('<ESTADO>SOK</ESTADO>')))
    expect(await client.queryEnvio(COMPANY, CREDS, 'soap', '0107418640')).toMatchObject({ kind: 'pending', estado: 'SOK' })
    routes['/DTEWS/QueryEstDte.jws'] = (s) => (text(s).includes('>tok2<')
      ? new Response('<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><soapenv:Fault><faultcode>x</faultcode><faultstring>Error de Autenticacion: TOKEN invalido</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>', { status: 500 })
      : soap('getEstDte', respuesta('<ESTADO>DOK</ESTADO><GLOSA_ESTADO>Documento Recibido por el SII</GLOSA_ESTADO><ERR_CODE>0</ERR_CODE>')))
    const dte = { tipoDte: 33, folio: 7, rutReceptor: '77777777-7', fechaEmision: '2026-01-09', montoTotal: 1190 }
    expect(await client.queryDte(COMPANY, CREDS, 'soap', dte)).toMatchObject({ kind: 'status', estado: 'DOK', errCode: '0' })
    expect(calls('/DTEWS/CrSeed.jws')).toHaveLength(3)
    // Parameters in QueryEstDte's parameterOrder, the date DDMMAAAA (docs/sii-protocol.md §6.6).
    const params = [...text(calls('/DTEWS/QueryEstDte.jws')[1] as Seen).matchAll(/<(\w+) xsi:type="xsd:string">([^<]*)</g)].map((m) => [m[1], m[2]])
    expect(params).toEqual([
      ['RutConsultante', '7880442'], ['DvConsultante', '4'], ['RutCompania', '76543210'], ['DvCompania', '3'], ['RutReceptor', '77777777'],
      ['DvReceptor', '7'], ['TipoDte', '33'], ['FolioDte', '7'], ['FechaEmisionDte', '09012026'], ['MontoDte', '1190'], ['Token', 'tok3'],
    ])
  })

  test('concurrent callers share one token request', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((r) => { release = r })
    const seedRoute = routes['/DTEWS/CrSeed.jws'] as Handler
    routes['/DTEWS/CrSeed.jws'] = async (s) => { await gate; return seedRoute(s) }
    routes['/cgi_dte/UPL/DTEUpload'] = () => recepcion(0, '0107418640')
    const all = Promise.all(Array.from({ length: 8 }, (_, i) => client.upload(COMPANY, CREDS, 'soap', ENVELOPE, `c${i}.xml`)))
    await Bun.sleep(50)
    release()
    expect((await all).map((o) => o.kind)).toEqual(Array(8).fill('received'))
    expect(calls('/DTEWS/CrSeed.jws')).toHaveLength(1)
    expect(calls('/DTEWS/GetTokenFromSeed.jws')).toHaveLength(1)
  })

  test('tokens are per certificate and per channel', async () => {
    routes['/cgi_dte/UPL/DTEUpload'] = () => recepcion(0, '0107418640')
    routes['/recursos/v1/boleta.electronica.envio'] = () => Response.json({ trackid: 1, estado: 'REC' })
    await client.upload(COMPANY, CREDS, 'soap', ENVELOPE, 'a.xml')
    await client.upload(COMPANY, { ...CREDS, certificateId: 'cert-2' }, 'soap', ENVELOPE, 'a.xml')
    await client.upload(COMPANY, CREDS, 'boleta', ENVELOPE, 'a.xml')
    expect(calls('/DTEWS/CrSeed.jws')).toHaveLength(2)
    expect(calls('/recursos/v1/boleta.electronica.semilla')).toHaveLength(1)
  })

  test('a failed token request is not kept: getToken -07 → not_authorized, then the next call asks again', async () => {
    routes['/DTEWS/GetTokenFromSeed.jws'] = () => soap('getToken', respuesta('<ESTADO>-07</ESTADO><GLOSA>RUT no registrado</GLOSA>'))
    expect(await client.upload(COMPANY, CREDS, 'soap', ENVELOPE, 'a.xml')).toMatchObject({ kind: 'not_authorized', status: 'TOKEN -07', glosa: 'RUT no registrado' })
    routes['/DTEWS/GetTokenFromSeed.jws'] = () => soap('getToken', respuesta('<ESTADO>05</ESTADO>'))
    expect(await client.upload(COMPANY, CREDS, 'soap', ENVELOPE, 'a.xml')).toMatchObject({ kind: 'retry', reason: 'getToken: ESTADO 05: Firma inválida' })
    expect(calls('/DTEWS/CrSeed.jws')).toHaveLength(2)
  })

  test('a seed the SII could not make (ESTADO -1) is a retry', async () => {
    routes['/DTEWS/CrSeed.jws'] = () => soap('getSeed', respuesta('<ESTADO>-1</ESTADO>'))
    expect(await client.queryEnvio(COMPANY, CREDS, 'soap', '1')).toMatchObject({ kind: 'retry', reason: expect.stringContaining('getSeed: ESTADO -1') })
  })
})

describe('boleta channel on the wire (docs/sii-protocol.md §7.3)', () => {
  test('semilla GET, token POST of the signed seed, envío multipart with Accept JSON; 401 renews once', async () => {
    routes['/recursos/v1/boleta.electronica.envio'] = (s) =>
      s.headers.get('cookie') === 'TOKEN=tok1' ? new Response('', { status: 401 }) : Response.json({ rut_emisor: '76543210-3', trackid: 123456789012345, estado: 'REC' })
    expect(await client.upload(COMPANY, CREDS, 'boleta', ENVELOPE, 'boletas.xml')).toMatchObject({ kind: 'received', trackId: '123456789012345' })
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      'GET /recursos/v1/boleta.electronica.semilla', 'POST /recursos/v1/boleta.electronica.token', 'POST /recursos/v1/boleta.electronica.envio',
      'GET /recursos/v1/boleta.electronica.semilla', 'POST /recursos/v1/boleta.electronica.token', 'POST /recursos/v1/boleta.electronica.envio',
    ])
    const tokenReq = seen[1] as Seen
    expect(tokenReq.headers.get('content-type')).toBe('application/xml')
    expect(text(tokenReq).startsWith('<?xml version="1.0"?>\n<getToken><item><Semilla>000000000078</Semilla></item><Signature')).toBe(true)
    const envio = seen[5] as Seen
    expect(envio.headers.get('accept')).toBe('application/json')
    expect(envio.headers.get('user-agent')).toBe(SII_USER_AGENT)
    expect(envio.headers.get('content-length')).toBe(String(envio.body.length))
  })

  test('envío status and consulta: paths, query parameters, DD-MM-AAAA', async () => {
    routes['/recursos/v1/boleta.electronica.envio/*'] = () => Response.json({ trackid: 1014, estado: 'EPR', estadistica: [{ tipo: 39, informados: 1, aceptados: 1, rechazados: 0, reparos: 0 }], detalle_rep_rech: null })
    routes['/recursos/v1/boleta.electronica/*'] = () => Response.json({ codigo: 'DOK', descripcion: 'Documento Recibido por el SII' })
    expect(await client.queryEnvio(COMPANY, CREDS, 'boleta', '1014')).toMatchObject({ kind: 'processed', aceptados: 1, detalle: [] })
    const dte = { tipoDte: 39, folio: 12, rutReceptor: '66666666-6', fechaEmision: '2026-01-09', montoTotal: 5000 }
    expect(await client.queryDte(COMPANY, CREDS, 'boleta', dte)).toMatchObject({ kind: 'status', estado: 'DOK', glosaEstado: 'Documento Recibido por el SII' })
    const paths = seen.filter((s) => s.method === 'GET' && !s.path.includes('semilla')).map((s) => s.path)
    expect(paths).toEqual([
      '/recursos/v1/boleta.electronica.envio/76543210-3-1014',
      '/recursos/v1/boleta.electronica/76543210-3-39-12/estado?rut_receptor=66666666&dv_receptor=6&monto=5000&fechaEmision=09-01-2026',
    ])
    expect(seen.filter((s) => s.method === 'GET' && !s.path.includes('semilla')).every((s) => s.headers.get('cookie') === 'TOKEN=tok1')).toBe(true)
  })
})

describe('faults are outcomes, not throws', () => {
  test('a hanging server → retry "timeout after N ms", within the timeout', async () => {
    const fast = createSiiClient({ target: { kind: 'origin', origin: ORIGIN }, timeoutMs: 300 })
    routes['/DTEWS/CrSeed.jws'] = () => new Promise<Response>(() => {})
    const started = performance.now()
    expect(await fast.upload(COMPANY, CREDS, 'soap', ENVELOPE, 'a.xml')).toEqual({ kind: 'retry', reason: 'getSeed: timeout after 300 ms' })
    expect(performance.now() - started).toBeLessThan(1_500)
  })

  test('headers sent, then the body hangs → timeout too', async () => {
    const fast = createSiiClient({ target: { kind: 'origin', origin: ORIGIN }, timeoutMs: 300 })
    routes['/DTEWS/CrSeed.jws'] = () => new Response(new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode('<soapenv:Envelope')) } }))
    expect(await fast.queryEnvio(COMPANY, CREDS, 'soap', '1')).toMatchObject({ kind: 'retry', reason: 'getSeed: timeout after 300 ms' })
  })

  test('connection refused → retry "network error"', async () => {
    const nowhere = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const origin = `http://127.0.0.1:${nowhere.port}`
    nowhere.stop(true)
    const c = createSiiClient({ target: { kind: 'origin', origin } })
    expect(await c.upload(COMPANY, CREDS, 'soap', ENVELOPE, 'a.xml')).toMatchObject({ kind: 'retry', reason: expect.stringContaining('network error') })
  })

  test.each([
    ['503', () => new Response('Service Unavailable', { status: 503 }), 'HTTP 503'],
    ['HTML', () => new Response('<html><body>Mantención</body></html>', { headers: { 'Content-Type': 'text/html' } }), 'HTML page'],
    ['empty', () => new Response(''), 'empty body'],
    ['Error 500', () => new Response('Error 500', { status: 500 }), 'Error 500'],
  ])('upload answered %s → retry with a reason', async (_, answer, reason) => {
    routes['/cgi_dte/UPL/DTEUpload'] = answer
    const out = await client.upload(COMPANY, CREDS, 'soap', ENVELOPE, 'a.xml')
    expect(out.kind).toBe('retry')
    expect((out as { reason: string }).reason).toContain(reason)
  })
})

describe('logs and configuration', () => {
  test('log lines never carry the token, the seed signature or key material', async () => {
    routes['/cgi_dte/UPL/DTEUpload'] = () => recepcion(5)
    await client.upload(COMPANY, CREDS, 'soap', ENVELOPE, 'a.xml')
    const all = JSON.stringify(logs)
    expect(logs.map((l) => l.event)).toContain('sii.token.obtained')
    expect(logs.map((l) => l.event)).toContain('sii.token.rejected')
    for (const secret of ['tok1', 'tok2', 'SignatureValue', 'Semilla', identity.signer.modulusBase64.slice(0, 20)]) expect(all).not.toContain(secret)
  })

  test('"simulado" is the composition root\'s job: the client wants the simulator\'s origin', () => {
    expect(() => createSiiClient({ target: { kind: 'simulado' } })).toThrow('origin')
  })

  test('a malformed RUT or date is a caller bug and throws', async () => {
    await expect(client.queryEnvio({ ...COMPANY, rut: '76543210-4' }, CREDS, 'soap', '1')).rejects.toThrow('not a valid RUT')
    await expect(client.queryDte(COMPANY, CREDS, 'soap', { tipoDte: 33, folio: 1, rutReceptor: '77777777-7', fechaEmision: '09-01-2026', montoTotal: 1 })).rejects.toThrow('YYYY-MM-DD')
  })
})
