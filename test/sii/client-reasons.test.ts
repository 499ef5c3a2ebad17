// Issue 13 "why the SII said no": the reasons each SII answer carries, parsed into typed reasons (`MotivoSii`) by the
// client's pure mapping. Samples are shaped as the SII writes them (docs/sii-protocol.md §6.4–§6.6, §7.3) and as the
// SII's result e-mail writes a document's detail (`(DTE-3-101) …`, LibreDTE's help texts are keyed on those codes).
import { describe, expect, test } from 'bun:test'
import { glosaDeMotivos, isReparo, uniqueMotivos } from '../../src/domain/sii-respuestas'
import { boletaDteStatusOutcome, boletaEnvioOutcome } from '../../src/sii/client/boleta-rest'
import { detalleMotivos } from '../../src/domain/sii-respuestas'
import type { HttpResult } from '../../src/sii/client/http'
import { dteStatusOutcome, envioOutcome } from '../../src/sii/client/queries'
import { soapOutcome } from '../../src/sii/client/soap'
import { boletaUploadOutcome, uploadOutcome } from '../../src/sii/client/upload'

const ok = (text: string, status = 200, contentType = 'text/xml'): HttpResult => ({ kind: 'response', status, contentType, text })
const json = (body: string, status = 200) => ok(body, status, 'application/json')

function soapAnswer(operation: string, inner: string): string {
  const escaped = inner.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  return '<?xml version="1.0" encoding="utf-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" ' +
    'xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>' +
    `<ns1:${operation}Response soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/" xmlns:ns1="http://DefaultNamespace">` +
    `<${operation}Return xsi:type="xsd:string">${escaped}</${operation}Return></ns1:${operation}Response></soapenv:Body></soapenv:Envelope>`
}
const respuesta = (hdr: string, body = '') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema">${body}<SII:RESP_HDR>${hdr}</SII:RESP_HDR></SII:RESPUESTA>`
const estUp = (hdr: string, body = '') => envioOutcome(soapOutcome(ok(soapAnswer('getEstUp', respuesta(hdr, body))), 'getEstUp'))
const estDte = (hdr: string) => dteStatusOutcome(soapOutcome(ok(soapAnswer('getEstDte', respuesta(hdr))), 'getEstDte'))

describe('detail lines: `(SECCION-NIVEL-CODIGO) texto` (REVISIONDTE/DETALLE of the result e-mail)', () => {
  test('one line → one reason with its code, nivel and text', () => {
    expect(detalleMotivos('(DTE-3-101) Folio para este Tipo de documento ya fue recibido en el SII', 'estado_dte')).toEqual([
      { codigo: 'DTE-3-101', glosa: 'Folio para este Tipo de documento ya fue recibido en el SII', detalle: null, nivel: 3, fuente: 'estado_dte' },
    ])
  })

  test('several lines, a reparo among them (nivel 2), LibreDTE\'s `REF L[5] -3-758` form', () => {
    const text = '(REF-2-780) Anulación presenta diff. de monto con doc. referenciado; (REF L[5] -3-758) Falta el código de referencia\n(CAF-3-517) CAF Vencido'
    const motivos = detalleMotivos(text, 'estado_envio')
    expect(motivos.map((m) => [m.codigo, m.nivel, m.glosa])).toEqual([
      ['REF-2-780', 2, 'Anulación presenta diff. de monto con doc. referenciado'],
      ['REF L[5]-3-758', 3, 'Falta el código de referencia'],
      ['CAF-3-517', 3, 'CAF Vencido'],
    ])
    expect(motivos.map(isReparo)).toEqual([true, false, false])
  })

  test('the simulator\'s detail after an em dash goes to `detalle`; plain text without a code gives no reason', () => {
    expect(detalleMotivos('(TED-3-3) Dato del TED no coincide con el documento — DTE F1T33: MNT 1000 en el TED, 1190 en el documento', 'estado_dte'))
      .toEqual([{ codigo: 'TED-3-3', glosa: 'Dato del TED no coincide con el documento', detalle: 'DTE F1T33: MNT 1000 en el TED, 1190 en el documento', nivel: 3, fuente: 'estado_dte' }])
    expect(detalleMotivos('Documento No Recibido por el SII', 'estado_dte')).toEqual([])
    expect(detalleMotivos(null, 'estado_dte')).toEqual([])
  })

  test('the same reason from two answers is kept once; the consolidated glosa lists code and text', () => {
    const a = detalleMotivos('(RCV-3-1) Documento rechazado', 'estado_envio')
    const b = detalleMotivos('(RCV-3-1) Documento rechazado — DTE F2T39', 'estado_dte')
    expect(uniqueMotivos([...a, ...b])).toEqual(a)
    expect(glosaDeMotivos([...a, ...detalleMotivos('(DTE-3-100) DTE Repetido', 'estado_dte')])).toBe('RCV-3-1: Documento rechazado; DTE-3-100: DTE Repetido')
    expect(glosaDeMotivos([])).toBeNull()
  })
})

describe('DTEUpload (docs/sii-protocol.md §6.4): a refusal\'s STATUS and DETAIL/ERROR lines', () => {
  const recepcion = (status: string, extra = '') =>
    `<?xml version="1.0"?>\n<RECEPCIONDTE>\n <RUTSENDER>7880442-4</RUTSENDER>\n <RUTCOMPANY>97975000-5</RUTCOMPANY>\n <FILE>envio.xml</FILE>\n <TIMESTAMP>2003-10-31 10:04:26</TIMESTAMP>\n <STATUS>${status}</STATUS>\n${extra}</RECEPCIONDTE>`

  test('STATUS 7 → refused with one reason: the STATUS, its meaning, the schema messages as detail', () => {
    const out = uploadOutcome(ok(recepcion('7', ' <DETAIL>\n  <ERROR>LSX-00213: only 0 occurrences of particle "MntTotal"</ERROR>\n  <ERROR>LSX-00021: undefined element "MntTotl"</ERROR>\n </DETAIL>\n')))
    expect(out).toMatchObject({ kind: 'refused', status: '7' })
    expect((out as { motivos: unknown }).motivos).toEqual([{
      codigo: '7', glosa: 'Esquema inválido', detalle: 'LSX-00213: only 0 occurrences of particle "MntTotal"\nLSX-00021: undefined element "MntTotl"', nivel: null, fuente: 'upload',
    }])
  })

  test('STATUS 6 → not_authorized with its reason; the boleta envío\'s RFR → refused with its reason', () => {
    expect(uploadOutcome(ok(recepcion('6')))).toMatchObject({ kind: 'not_authorized', motivos: [{ codigo: '6', glosa: 'Empresa no autorizada a enviar archivos', fuente: 'upload' }] })
    expect(boletaUploadOutcome(json('{"trackid": 1014, "estado": "RFR"}'))).toMatchObject({ kind: 'refused', motivos: [{ codigo: 'RFR', fuente: 'upload' }] })
  })
})

describe('getEstUp (docs/sii-protocol.md §6.5): ESTADO and GLOSA are all the SOAP envelope status says', () => {
  test('RFR with the SII\'s plain GLOSA → rejected, the ESTADO as the reason\'s code', () => {
    expect(estUp('<TRACKID>0107418640</TRACKID><ESTADO>RFR</ESTADO><GLOSA>Rechazado por Error en Firma</GLOSA><NUM_ATENCION>532 ( 2004/06/14 16:44:20)</NUM_ATENCION>')).toMatchObject({
      kind: 'rejected', estado: 'RFR', numAtencion: '532 ( 2004/06/14 16:44:20)', detalle: [],
      motivos: [{ codigo: 'RFR', glosa: 'Rechazado por Error en Firma', detalle: null, nivel: null, fuente: 'estado_envio' }],
    })
  })

  test('RSC without GLOSA → the code\'s meaning; a GLOSA holding a detail line → that line\'s code', () => {
    expect(estUp('<ESTADO>RSC</ESTADO>')).toMatchObject({ motivos: [{ codigo: 'RSC', glosa: 'Rechazado por error en esquema' }] })
    expect(estUp('<ESTADO>RCT</ESTADO><GLOSA>Rechazado por Error en Caratula: (CRT-3-14) RutReceptor debe ser el SII — RutReceptor 76086428-5</GLOSA>'))
      .toMatchObject({ motivos: [{ codigo: 'CRT-3-14', glosa: 'RutReceptor debe ser el SII', detalle: 'RutReceptor 76086428-5', nivel: 3 }] })
  })

  test('EPR keeps NUM_ATENCION; the SOAP channel lists no documents', () => {
    const body = '<SII:RESP_BODY><TIPO_DOCTO>33</TIPO_DOCTO><INFORMADOS>1</INFORMADOS><ACEPTADOS>0</ACEPTADOS><RECHAZADOS>1</RECHAZADOS><REPAROS>0</REPAROS></SII:RESP_BODY>'
    expect(estUp('<TRACKID>0107418640</TRACKID><ESTADO>EPR</ESTADO><GLOSA>Envio Procesado</GLOSA><NUM_ATENCION>7</NUM_ATENCION>', body))
      .toMatchObject({ kind: 'processed', rechazados: 1, numAtencion: '7', detalle: [] })
  })
})

describe('getEstDte (docs/sii-protocol.md §6.6): ESTADO, GLOSA_ESTADO, ERR_CODE, GLOSA_ERR', () => {
  test('FAU whose GLOSA_ERR holds the document\'s detail lines → one reason per line', () => {
    const out = estDte('<ESTADO>FAU</ESTADO><GLOSA_ESTADO>Documento No Recibido por el SII</GLOSA_ESTADO><ERR_CODE>3</ERR_CODE>' +
      '<GLOSA_ERR>(RCV-3-1) Documento rechazado (receptor de prueba 88888888-8) — DTE F5T33</GLOSA_ERR><NUM_ATENCION>12 ( 2026/03/02 12:00:00)</NUM_ATENCION>')
    expect(out).toMatchObject({
      kind: 'status', estado: 'FAU', errCode: '3', glosaErr: '(RCV-3-1) Documento rechazado (receptor de prueba 88888888-8) — DTE F5T33',
      motivos: [{ codigo: 'RCV-3-1', glosa: 'Documento rechazado (receptor de prueba 88888888-8)', detalle: 'DTE F5T33', nivel: 3, fuente: 'estado_dte' }],
    })
  })

  test('DNK without detail lines → the ESTADO is the reason, ERR_CODE and GLOSA_ERR its detail; DOK alone → no reason', () => {
    expect(estDte('<ESTADO>DNK</ESTADO><GLOSA_ESTADO>Documento Recibido por el SII. Datos No Coinciden con los Registrados</GLOSA_ESTADO><ERR_CODE>1</ERR_CODE><GLOSA_ERR>No coincide: monto</GLOSA_ERR>'))
      .toMatchObject({ motivos: [{ codigo: 'DNK', glosa: 'Documento Recibido por el SII. Datos No Coinciden con los Registrados', detalle: 'ERR_CODE 1: No coincide: monto', nivel: null }] })
    expect(estDte('<ESTADO>DOK</ESTADO><GLOSA_ESTADO>Documento Recibido por el SII. Datos Coinciden con los Registrados</GLOSA_ESTADO><ERR_CODE>0</ERR_CODE><GLOSA_ERR></GLOSA_ERR>'))
      .toMatchObject({ kind: 'status', motivos: [] })
  })

  test('DOK listing a reparo (nivel 2) → the reparo is its reason', () => {
    const out = estDte('<ESTADO>DOK</ESTADO><GLOSA_ESTADO>Documento Recibido por el SII. Datos Coinciden con los Registrados</GLOSA_ESTADO><ERR_CODE>0</ERR_CODE><GLOSA_ERR>(REF-2-780) Anulación presenta diff. de monto con doc. referenciado</GLOSA_ERR>')
    expect(out).toMatchObject({ motivos: [{ codigo: 'REF-2-780', nivel: 2 }] })
  })
})

describe('boleta REST (docs/sii-protocol.md §7.3): the envío status\'s detalle_rep_rech and the consulta', () => {
  test('EPR: each boleta of detalle_rep_rech with its `error[]` lines as reasons, a reparo at nivel 2', () => {
    const body = JSON.stringify({
      rut_emisor: '45000054-K', rut_envia: '8315495-0', trackid: 1014, fecha_recepcion: '30/07/2020 07:57:42', estado: 'EPR',
      estadistica: [{ tipo: 39, informados: 3, aceptados: 2, rechazados: 1, reparos: 1 }],
      detalle_rep_rech: [
        { tipo: 39, folio: 1202, estado: 'RCH', descripcion: 'Dte Rechazado', error: [{ seccion: 'DTE', linea: 0, nivel: 3, codigo: 101, descripcion: 'Folio para este Tipo de documento ya fue recibido en el SII', detalle: '' }] },
        { tipo: 39, folio: 1203, estado: 'RPR', descripcion: 'Dte Aceptado con Reparos', error: [{ seccion: 'REF', linea: 12, nivel: 2, codigo: 780, descripcion: 'Anulación presenta diff. de monto', detalle: 'doc 33 F9' }] },
      ],
    })
    const out = boletaEnvioOutcome(json(body))
    expect(out).toMatchObject({ kind: 'processed', rechazados: 1, reparos: 1 })
    const detalle = (out as { detalle: Array<{ folio: number; motivos: unknown }> }).detalle
    expect(detalle.map((d) => [d.folio, d.motivos])).toEqual([
      [1202, [{ codigo: 'DTE-3-101', glosa: 'Folio para este Tipo de documento ya fue recibido en el SII', detalle: null, nivel: 3, fuente: 'estado_envio' }]],
      [1203, [{ codigo: 'REF-2-780', glosa: 'Anulación presenta diff. de monto', detalle: 'doc 33 F9 — línea 12', nivel: 2, fuente: 'estado_envio' }]],
    ])
  })

  test('a rejected envelope (RCT) takes its reasons from detalle_rep_rech, as the SII\'s own example lists them', () => {
    const body = '{"trackid": 1014, "estado": "RCT", "estadistica": [], "detalle_rep_rech": [{"tipo": 39, "folio": 1, "estado": "RCH", "descripcion": "Dte Rechazado",' +
      ' "error": [{"seccion": "CRT", "linea": 0, "nivel": 3, "codigo": 11, "descripcion": "RUT envia diferente al Upload", "detalle": ""}]}]}'
    expect(boletaEnvioOutcome(json(body))).toMatchObject({
      kind: 'rejected', estado: 'RCT', motivos: [{ codigo: 'CRT-3-11', glosa: 'RUT envia diferente al Upload' }], detalle: [{ folio: 1, estado: 'RCH' }],
    })
    expect(boletaEnvioOutcome(json('{"trackid": 1014, "estado": "RSC", "detalle_rep_rech": null}'))).toMatchObject({ kind: 'rejected', motivos: [{ codigo: 'RSC' }] })
  })

  test('the consulta: detail lines in its descripcion are the reasons; a plain FAU is one; DOK is none', () => {
    expect(boletaDteStatusOutcome(json('{"codigo": "FAU", "descripcion": "Documento No Recibido por el SII: (RCV-3-1) Documento rechazado — DTE F2T39"}')))
      .toMatchObject({ kind: 'status', estado: 'FAU', motivos: [{ codigo: 'RCV-3-1', glosa: 'Documento rechazado', detalle: 'DTE F2T39', fuente: 'estado_dte' }] })
    expect(boletaDteStatusOutcome(json('{"codigo": "FAU", "descripcion": "Documento No Recibido por el SII"}')))
      .toMatchObject({ motivos: [{ codigo: 'FAU', glosa: 'Documento No Recibido por el SII', nivel: null }] })
    expect(boletaDteStatusOutcome(json('{"codigo": "DOK", "descripcion": "Documento Recibido por el SII"}'))).toMatchObject({ motivos: [] })
  })
})
