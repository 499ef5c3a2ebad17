// The SII's answers, as docs/sii-protocol.md §6–§7 quotes them, through the client's mapping: these texts pin the wire format.
import { describe, expect, test } from 'bun:test'
import { boletaDteStatusOutcome, boletaEnvioOutcome } from '../../src/sii/client/boleta-rest'
import { decodeBody, passingFault, type HttpResult } from '../../src/sii/client/http'
import { originsFor } from '../../src/sii/client/hosts'
import { dteStatusOutcome, envioOutcome } from '../../src/sii/client/queries'
import { parseRespuesta, parseSoapReply, soapEnvelope, soapOutcome } from '../../src/sii/client/soap'
import { boletaUploadOutcome, uploadOutcome } from '../../src/sii/client/upload'

const ok = (text: string, status = 200, contentType = 'text/xml'): HttpResult => ({ kind: 'response', status, contentType, text })

/** The DTEWS answer envelope of docs/sii-protocol.md §6.2, with `inner` escaped inside `<opReturn>`. */
function soapAnswer(operation: string, inner: string): string {
  const escaped = inner.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  return '<?xml version="1.0" encoding="utf-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" ' +
    'xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>' +
    `<ns1:${operation}Response soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/" xmlns:ns1="http://DefaultNamespace">` +
    `<${operation}Return xsi:type="xsd:string">${escaped}</${operation}Return></ns1:${operation}Response></soapenv:Body></soapenv:Envelope>`
}

// docs/sii-protocol.md §6.4, verbatim.
const RECEPCION_OK = `<?xml version="1.0"?>
<RECEPCIONDTE>
 <RUTSENDER>7880442-4</RUTSENDER>
 <RUTCOMPANY>97975000-5</RUTCOMPANY>
 <FILE>envio.xml</FILE>
 <TIMESTAMP>2003-10-31 10:04:26</TIMESTAMP>
 <STATUS>0</STATUS>
 <TRACKID>0107418640</TRACKID>
</RECEPCIONDTE>`

const recepcion = (status: string, extra = '') => RECEPCION_OK.replace('<STATUS>0</STATUS>\n <TRACKID>0107418640</TRACKID>', `<STATUS>${status}</STATUS>${extra}`)

// docs/sii-protocol.md §6.5 (the second group completed: the manual elides it).
const EST_UP_EPR = `<?xml version="1.0" encoding="UTF-8"?>
<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema">
  <SII:RESP_BODY>
    <TIPO_DOCTO>33</TIPO_DOCTO><INFORMADOS>22</INFORMADOS><ACEPTADOS>22</ACEPTADOS>
    <RECHAZADOS>0</RECHAZADOS><REPAROS>0</REPAROS>
    <TIPO_DOCTO>61</TIPO_DOCTO><INFORMADOS>6</INFORMADOS><ACEPTADOS>4</ACEPTADOS>
    <RECHAZADOS>1</RECHAZADOS><REPAROS>1</REPAROS>
  </SII:RESP_BODY>
  <SII:RESP_HDR>
    <TRACKID>0107418640</TRACKID><ESTADO>EPR</ESTADO><GLOSA>Envio Procesado</GLOSA>
    <NUM_ATENCION>532 ( 2004/06/14 16:44:20)</NUM_ATENCION>
  </SII:RESP_HDR>
</SII:RESPUESTA>`

const estUp = (estado: string, extra = '') =>
  `<?xml version="1.0" encoding="UTF-8"?><SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_HDR><TRACKID>0107418640</TRACKID><ESTADO>${estado}</ESTADO>${extra}</SII:RESP_HDR></SII:RESPUESTA>`

describe('DTEUpload answers (docs/sii-protocol.md §6.4)', () => {
  test('STATUS 0 → received, the TRACKID kept as text with its leading zero', () => {
    expect(uploadOutcome(ok(RECEPCION_OK))).toEqual({ kind: 'received', trackId: '0107418640', raw: RECEPCION_OK })
  })

  test.each([
    ['1', 'not_authorized'], ['6', 'not_authorized'],
    ['2', 'refused'], ['7', 'refused'], ['8', 'refused'],
  ])('STATUS %s → %s, with the SII meaning as glosa', (status, kind) => {
    const out = uploadOutcome(ok(recepcion(status)))
    expect(out.kind).toBe(kind as 'refused')
    expect(out).toMatchObject({ status })
    expect((out as { glosa: string }).glosa.length).toBeGreaterThan(0)
  })

  test('STATUS 7 carries DETAIL/ERROR schema messages in its glosa', () => {
    const out = uploadOutcome(ok(recepcion('7', '<DETAIL><ERROR>LSX-00213: only 0 occurrences of particle "MntTotal"</ERROR></DETAIL>')))
    expect(out).toMatchObject({ kind: 'refused', status: '7' })
    expect((out as { glosa: string }).glosa).toContain('LSX-00213')
  })

  test.each(['3', '9', '4', '42'])('STATUS %s → retry with the status', (status) => {
    expect(uploadOutcome(ok(recepcion(status)))).toMatchObject({ kind: 'retry', status })
  })

  test('STATUS 5 → the token is invalid (the client refreshes it and uploads once more)', () => {
    expect(uploadOutcome(ok(recepcion('5')))).toMatchObject({ kind: 'token_invalid', status: '5' })
  })

  test('STATUS 99 → already_received, with the track id when the answer carries one, null otherwise', () => {
    expect(uploadOutcome(ok(recepcion('99')))).toMatchObject({ kind: 'already_received', trackId: null })
    expect(uploadOutcome(ok(recepcion('99', '<TRACKID>0107418640</TRACKID>')))).toMatchObject({ kind: 'already_received', trackId: '0107418640' })
  })

  test('STATUS 0 without TRACKID is not a reception', () => {
    expect(uploadOutcome(ok(recepcion('0')))).toMatchObject({ kind: 'retry', status: '0' })
  })

  test.each([
    ['empty body', ok(''), 'empty body'],
    ['the literal "Error 500"', ok('Error 500'), 'Error 500'],
    ['an HTML maintenance page', ok('<!DOCTYPE html><html><body>Servicio en mantención</body></html>', 200, 'text/html'), 'HTML'],
    ['a 503', ok('Service Unavailable', 503, 'text/plain'), 'HTTP 503'],
    ['malformed XML', ok('<RECEPCIONDTE><STATUS>0</STATUS>'), 'not XML'],
    ['another XML document', ok('<foo/>'), 'not RECEPCIONDTE'],
    ['a timeout', { kind: 'failure', reason: 'timeout after 30000 ms' } as HttpResult, 'timeout'],
  ])('%s → retry with a reason, no throw', (_, res, reason) => {
    const out = uploadOutcome(res)
    expect(out.kind).toBe('retry')
    expect((out as { reason: string }).reason).toContain(reason)
  })

  test('an ISO-8859-1 answer is decoded byte for byte (docs/sii-protocol.md §1.2), not as windows-1252', () => {
    const bytes = Uint8Array.from([...Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><X>', 'latin1'), 0xd1, 0x80, ...Buffer.from('</X>')])
    expect(decodeBody(bytes, 'text/xml')).toBe('<?xml version="1.0" encoding="ISO-8859-1"?><X>Ñ\u0080</X>')
    expect(decodeBody(Buffer.from('<X>Ñ</X>', 'utf8'), 'text/xml; charset=UTF-8')).toBe('<X>Ñ</X>')
  })
})

describe('SOAP answers (docs/sii-protocol.md §6.2)', () => {
  test('the Return string is entity-decoded and parsed again; RESP_HDR found after RESP_BODY', () => {
    const reply = parseSoapReply(soapAnswer('getEstUp', EST_UP_EPR), 'getEstUp')
    expect(reply.kind).toBe('respuesta')
    if (reply.kind !== 'respuesta') return
    expect(reply.respuesta.hdr).toEqual({ TRACKID: '0107418640', ESTADO: 'EPR', GLOSA: 'Envio Procesado', NUM_ATENCION: '532 ( 2004/06/14 16:44:20)' })
    expect(reply.respuesta.body[0]).toEqual({ name: 'TIPO_DOCTO', text: '33' })
  })

  test('getSeed and getToken inner answers (§6.3)', () => {
    const seed = parseRespuesta('<?xml version="1.0" encoding="UTF-8"?><SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_BODY><SEMILLA>000000000078</SEMILLA></SII:RESP_BODY><SII:RESP_HDR><ESTADO>00</ESTADO></SII:RESP_HDR></SII:RESPUESTA>')
    expect(seed).toEqual({ hdr: { ESTADO: '00' }, body: [{ name: 'SEMILLA', text: '000000000078' }] })
    const token = parseRespuesta('<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_HDR><ESTADO>00</ESTADO><GLOSA>Token Creado</GLOSA></SII:RESP_HDR><SII:RESP_BODY><TOKEN>XAuSbYXiNh9Ik</TOKEN></SII:RESP_BODY></SII:RESPUESTA>')
    expect(token.body).toEqual([{ name: 'TOKEN', text: 'XAuSbYXiNh9Ik' }])
  })

  test('a Fault is a fault whatever the HTTP status (Axis answers faults with 500)', () => {
    const fault = '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><soapenv:Fault><faultcode>soapenv:Server</faultcode><faultstring>Error de Autenticacion: TOKEN invalido</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>'
    expect(soapOutcome(ok(fault, 500), 'getEstUp')).toMatchObject({ kind: 'fault', faultString: 'Error de Autenticacion: TOKEN invalido' })
    expect(envioOutcome(soapOutcome(ok(fault, 500), 'getEstUp'))).toMatchObject({ kind: 'token_invalid' })
    const other = fault.replace('Error de Autenticacion: TOKEN invalido', 'java.lang.NullPointerException')
    expect(envioOutcome(soapOutcome(ok(other, 500), 'getEstUp'))).toMatchObject({ kind: 'retry', reason: 'SOAP fault: java.lang.NullPointerException' })
  })

  test.each([
    ['HTML with 200', ok('<html><head><title>Mantención</title></head></html>'), 'HTML'],
    ['HTML with 503', ok('<!doctype html><p>down</p>', 503), 'HTML'],
    ['Error 500 text', ok('Error 500', 500), 'Error 500'],
    ['empty 200', ok(''), 'empty body'],
    ['Return that is not RESPUESTA', ok(soapAnswer('getEstUp', '<foo/>')), 'not an SII:RESPUESTA'],
    ['Return with garbage', ok(soapAnswer('getEstUp', 'no xml here')), 'not an SII:RESPUESTA'],
    ['no Return element', ok('<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body/></soapenv:Envelope>'), 'without getEstUpReturn'],
  ])('%s → failure with a reason', (_, res, reason) => {
    const out = envioOutcome(soapOutcome(res, 'getEstUp'))
    expect(out.kind).toBe('retry')
    expect((out as { reason: string }).reason).toContain(reason)
  })

  test('requests are RPC style with typed string parameters in the given order, values escaped', () => {
    const xml = soapEnvelope('getEstUp', [['RutCompania', '97975000'], ['DvCompania', '5'], ['TrackId', '0107418640'], ['Token', 'a<b&c']])
    expect(xml).toContain('<m:getEstUp xmlns:m="http://DefaultNamespace" soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/">' +
      '<RutCompania xsi:type="xsd:string">97975000</RutCompania><DvCompania xsi:type="xsd:string">5</DvCompania>' +
      '<TrackId xsi:type="xsd:string">0107418640</TrackId><Token xsi:type="xsd:string">a&lt;b&amp;c</Token></m:getEstUp>')
  })
})

describe('getEstUp (docs/sii-protocol.md §6.5)', () => {
  const reply = (inner: string) => envioOutcome(soapOutcome(ok(soapAnswer('getEstUp', inner)), 'getEstUp'))

  test('EPR → processed, counters summed over the per-type groups, paired by position', () => {
    expect(reply(EST_UP_EPR)).toMatchObject({
      kind: 'processed', estado: 'EPR', glosa: 'Envio Procesado', informados: 28, aceptados: 26, rechazados: 1, reparos: 1,
      estadistica: [
        { tipo: 33, informados: 22, aceptados: 22, rechazados: 0, reparos: 0 },
        { tipo: 61, informados: 6, aceptados: 4, rechazados: 1, reparos: 1 },
      ],
      detalle: [],
    })
  })

  test.each(['REC', 'SOK', 'CRT', 'FOK', 'PDR', 'PRD'])('%s → pending', (estado) => {
    expect(reply(estUp(estado, '<GLOSA>x</GLOSA>'))).toMatchObject({ kind: 'pending', estado, glosa: 'x' })
  })

  test.each(['RSC', 'RCT', 'RFR', 'RCH', 'RPT', 'RCO', 'VOF'])('%s → rejected', (estado) => {
    expect(reply(estUp(estado))).toMatchObject({ kind: 'rejected', estado, glosa: null })
  })

  test.each(['001', '002', '003'])('ESTADO %s → the token is invalid', (estado) => {
    expect(reply(estUp(estado))).toMatchObject({ kind: 'token_invalid', estado })
  })

  test('-11 with ERR_CODE 2 → pending (not ready yet, DSPY); with ERR_CODE 1 → retry', () => {
    expect(reply(estUp('-11', '<ERR_CODE>2</ERR_CODE><SQL_CODE>0</SQL_CODE>'))).toMatchObject({ kind: 'pending', estado: '-11' })
    expect(reply(estUp('-11', '<ERR_CODE>1</ERR_CODE>'))).toMatchObject({ kind: 'retry' })
  })

  test('-3 (RUT usuario no existe) → retry with the code in the reason', () => {
    expect(reply(estUp('-3', '<GLOSA>RUT usuario no existe</GLOSA>'))).toMatchObject({ kind: 'retry', reason: 'ESTADO -3: RUT usuario no existe' })
  })
})

describe('getEstDte (docs/sii-protocol.md §6.6)', () => {
  const reply = (hdr: string) => dteStatusOutcome(soapOutcome(ok(soapAnswer('getEstDte',
    `<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_HDR>${hdr}</SII:RESP_HDR></SII:RESPUESTA>`)), 'getEstDte'))

  test('DOK → status with every field', () => {
    expect(reply('<ESTADO>DOK</ESTADO><GLOSA_ESTADO>Documento Recibido por el SII. Datos Coinciden con los Registrados</GLOSA_ESTADO><ERR_CODE>0</ERR_CODE><GLOSA_ERR></GLOSA_ERR><NUM_ATENCION>3279 ( 2004/06/14 16:48:04)</NUM_ATENCION>'))
      .toMatchObject({ kind: 'status', estado: 'DOK', glosaEstado: 'Documento Recibido por el SII. Datos Coinciden con los Registrados', errCode: '0', glosaErr: null, numAtencion: '3279 ( 2004/06/14 16:48:04)' })
  })

  test.each(['DNK', 'FAU', 'FNA', 'FAN', 'EMP', 'TMD', 'TMC', 'MMD', 'MMC', 'AND', 'ANC'])('%s → status', (estado) => {
    expect(reply(`<ESTADO>${estado}</ESTADO>`)).toMatchObject({ kind: 'status', estado })
  })

  test('001 → the token is invalid; -1 → retry', () => {
    expect(reply('<ESTADO>001</ESTADO>')).toMatchObject({ kind: 'token_invalid' })
    expect(reply('<ESTADO>-1</ESTADO><GLOSA_ESTADO>Error</GLOSA_ESTADO>')).toMatchObject({ kind: 'retry', reason: 'ESTADO -1: Error' })
  })
})

describe('boleta REST (docs/sii-protocol.md §7.3)', () => {
  const json = (body: string, status = 200) => ok(body, status, 'application/json')

  test('envío: {"trackid": 1014, "estado": "REC"} → received with trackId "1014"', () => {
    const body = '{"rut_emisor": "45000054-K", "rut_envia": "8315495-0", "trackid": 1014, "fecha_recepcion": "2020-07-30 07:57:42", "estado": "REC", "file": "envio.xml"}'
    expect(boletaUploadOutcome(json(body))).toEqual({ kind: 'received', trackId: '1014', raw: body })
  })

  test('envío: a 15-digit track id keeps every digit', () => {
    expect(boletaUploadOutcome(json('{"trackid": 123456789012345, "estado": "REC"}'))).toMatchObject({ trackId: '123456789012345' })
  })

  test('envío: 401 → token invalid; 503/HTML/garbage → retry', () => {
    expect(boletaUploadOutcome(json('', 401))).toMatchObject({ kind: 'token_invalid' })
    expect(boletaUploadOutcome(json('{}', 503))).toMatchObject({ kind: 'retry', reason: 'HTTP 503: {}' })
    expect(boletaUploadOutcome(ok('<html>x</html>'))).toMatchObject({ kind: 'retry' })
    expect(boletaUploadOutcome(json('{"trackid": 10'))).toMatchObject({ kind: 'retry', reason: expect.stringContaining('malformed JSON') })
  })

  test('envío status EPR (the SII OpenAPI example) → processed with estadistica and detalle_rep_rech', () => {
    const body = `{
      "rut_emisor": "45000054-K", "rut_envia": "8315495-0", "trackid": 1014,
      "fecha_recepcion": "30/07/2020 07:57:42", "estado": "EPR",
      "estadistica": [ {"tipo": 39, "informados": 3, "aceptados": 2, "rechazados": 1, "reparos": 0} ],
      "detalle_rep_rech": [ {"tipo": 39, "folio": 1202, "estado": "RCH", "descripcion": "Dte Rechazado",
          "error": [ {"seccion": "CRT", "linea": 155, "nivel": 3, "codigo": 11, "descripcion": "RUT envia diferente al Upload", "detalle": "x"} ] } ]
    }`
    expect(boletaEnvioOutcome(json(body))).toEqual({
      kind: 'processed', estado: 'EPR', glosa: null, informados: 3, aceptados: 2, rechazados: 1, reparos: 0,
      estadistica: [{ tipo: 39, informados: 3, aceptados: 2, rechazados: 1, reparos: 0 }],
      detalle: [{
        tipo: 39, folio: 1202, estado: 'RCH', descripcion: 'Dte Rechazado',
        motivos: [{ codigo: 'CRT-3-11', glosa: 'RUT envia diferente al Upload', detalle: 'x — línea 155', nivel: 3, fuente: 'estado_envio' }],
      }], raw: body,
    })
  })

  test('envío status REC with detalle_rep_rech null → pending; RFR → rejected; 404 → retry; 401 → token invalid', () => {
    expect(boletaEnvioOutcome(json('{"trackid": 1014, "estado": "REC", "estadistica": null, "detalle_rep_rech": null}'))).toMatchObject({ kind: 'pending', estado: 'REC' })
    expect(boletaEnvioOutcome(json('{"trackid": 1014, "estado": "RFR"}'))).toMatchObject({ kind: 'rejected', estado: 'RFR' })
    expect(boletaEnvioOutcome(json('{"error":"not found"}', 404))).toMatchObject({ kind: 'retry', reason: expect.stringContaining('HTTP 404') })
    expect(boletaEnvioOutcome(json('', 401))).toMatchObject({ kind: 'token_invalid' })
  })

  test('consulta {"codigo": "DOK", "descripcion": "…"} → status', () => {
    const body = '{"codigo": "DOK", "descripcion": "Documento Recibido por el SII. Datos Coinciden con los Registrados"}'
    expect(boletaDteStatusOutcome(json(body))).toEqual({
      kind: 'status', estado: 'DOK', glosaEstado: 'Documento Recibido por el SII. Datos Coinciden con los Registrados', errCode: null, glosaErr: null, numAtencion: null, motivos: [], raw: body,
    })
  })
})

describe('hosts (docs/sii-protocol.md §6.1, §7.3)', () => {
  test('by ambiente on the real SII; one origin for everything otherwise', () => {
    expect(originsFor({ kind: 'sii' }, 'certificacion')).toEqual({ soap: 'https://maullin.sii.cl', upload: 'https://maullin.sii.cl', boletaApi: 'https://apicert.sii.cl', boletaEnvio: 'https://pangal.sii.cl' })
    expect(originsFor({ kind: 'sii' }, 'produccion')).toEqual({ soap: 'https://palena.sii.cl', upload: 'https://palena.sii.cl', boletaApi: 'https://api.sii.cl', boletaEnvio: 'https://rahue.sii.cl' })
    const o = 'http://127.0.0.1:9999'
    expect(originsFor({ kind: 'origin', origin: `${o}/` }, 'produccion')).toEqual({ soap: o, upload: o, boletaApi: o, boletaEnvio: o })
  })

  test('passingFault leaves a normal answer alone', () => {
    expect(passingFault({ kind: 'response', status: 200, contentType: 'text/xml', text: RECEPCION_OK })).toBeNull()
  })
})
