// The SII's result mail (src/xml/resp-sii.ts): RESULTADO_ENVIO files written as RespSII_v10.xsd describes them (xmllint
// checks each sample against the SII's schema first), read back with their per-document reasons.
import { afterAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toLatin1Bytes } from '../../../../src/xml/latin1'
import { readRespSii } from '../../../../src/xml/resp-sii'
import { validateSchema } from '../../../../src/xml/xsd'
import { SCHEMAS } from '../../../support/xml-tools'

const DIR = mkdtempSync(join(tmpdir(), 'timbre-respsii-'))
afterAll(() => rmSync(DIR, { recursive: true, force: true }))

let fileCount = 0
function xmllint(bytes: Uint8Array): boolean {
  const path = join(DIR, `resultado-${++fileCount}.xml`)
  writeFileSync(path, bytes)
  return spawnSync('xmllint', ['--noout', '--nonet', '--schema', join(SCHEMAS, 'RespSII_v10.xsd'), path]).status === 0
}

const identificacion = (estado: string): string =>
  `<IDENTIFICACION><RUTEMISOR>76543210-3</RUTEMISOR><RUTENVIA>7880442-4</RUTENVIA><TRACKID>0012345678</TRACKID>` +
  `<TMSTRECEPCION>12/01/2026 10:32:07</TMSTRECEPCION><ESTADO>${estado}</ESTADO></IDENTIFICACION>`

/** Processed with one rejection and one repair among three facturas (ISO-8859-1, CRLF, as the SII's files are). */
const PROCESADO = toLatin1Bytes(
  '<?xml version="1.0" encoding="ISO-8859-1"?>\r\n<RESULTADO_ENVIO>\r\n' + identificacion('EPR') +
    '<ESTADISTICA><SUBTOTAL><TIPODOC>33</TIPODOC><INFORMADO>3</INFORMADO><RECHAZO>1</RECHAZO><REPARO>1</REPARO><ACEPTA>2</ACEPTA></SUBTOTAL></ESTADISTICA>\r\n' +
    '<REVISIONENVIO>' +
    '<REVISIONDTE><FOLIO>12</FOLIO><TIPODTE>33</TIPODTE><ESTADO>RCH</ESTADO>' +
    '<DETALLE>(DTE-3-101) Folio para este Tipo de documento ya fue recibido en el SII</DETALLE><DETALLE>(REF L[1] -3-750) Referencia no existe</DETALLE></REVISIONDTE>' +
    '<REVISIONDTE><FOLIO>13</FOLIO><TIPODTE>33</TIPODTE><ESTADO>RPR</ESTADO><DETALLE>(RCV-2-2) Giro del receptor no coincide con el registrado</DETALLE></REVISIONDTE>' +
    '<REVISIONDTE><FOLIO>14</FOLIO><TIPODTE>33</TIPODTE><ESTADO>RCH</ESTADO><DETALLE>Documento con observación sin código</DETALLE></REVISIONDTE>' +
    '</REVISIONENVIO>\r\n</RESULTADO_ENVIO>\r\n',
)

/** Rejected as a whole: only the envelope's errors. */
const RECHAZADO = toLatin1Bytes(
  '<?xml version="1.0" encoding="ISO-8859-1"?>\n<RESULTADO_ENVIO>' + identificacion('RFR') +
    '<ERRORENVIO><DETERRENVIO>Error en Firma: Firma del envío no válida</DETERRENVIO><DETERRENVIO>Envío rechazado</DETERRENVIO></ERRORENVIO></RESULTADO_ENVIO>',
)

describe('readRespSii', () => {
  test('the samples are RespSII_v10.xsd documents (xmllint, and in process)', async () => {
    expect(xmllint(PROCESADO)).toBe(true)
    expect(xmllint(RECHAZADO)).toBe(true)
    expect(await validateSchema(PROCESADO, 'RespSII')).toEqual({ isValid: true, errors: [] })
  })

  test('a processed envelope: track id as written, estado, no envelope glosa, each REVISIONDTE with its coded reasons', () => {
    expect(readRespSii(PROCESADO)).toEqual({
      trackId: '0012345678', estado: 'EPR', glosa: null, rutEmisor: '76543210-3',
      documentos: [
        {
          tipoDte: 33, folio: 12, estado: 'RCH', motivos: [
            { codigo: 'DTE-3-101', glosa: 'Folio para este Tipo de documento ya fue recibido en el SII', detalle: null, nivel: 3, fuente: 'estado_envio' },
            { codigo: 'REF L[1]-3-750', glosa: 'Referencia no existe', detalle: null, nivel: 3, fuente: 'estado_envio' },
          ],
        },
        { tipoDte: 33, folio: 13, estado: 'RPR', motivos: [{ codigo: 'RCV-2-2', glosa: 'Giro del receptor no coincide con el registrado', detalle: null, nivel: 2, fuente: 'estado_envio' }] },
        { tipoDte: 33, folio: 14, estado: 'RCH', motivos: [{ codigo: 'RCH', glosa: 'Documento con observación sin código', detalle: null, nivel: null, fuente: 'estado_envio' }] },
      ],
    })
  })

  test('a rejected envelope: its DETERRENVIO lines are the glosa, no documents', () => {
    expect(readRespSii(RECHAZADO)).toEqual({
      trackId: '0012345678', estado: 'RFR', glosa: 'Error en Firma: Firma del envío no válida; Envío rechazado', rutEmisor: '76543210-3', documentos: [],
    })
  })

  test('IDENTIFICACION\'s fields straight under the root (a producer that left the level out) are read too', () => {
    const flat = new TextEncoder().encode('<RESULTADO_ENVIO><RUTEMISOR>76543210-3</RUTEMISOR><TRACKID>99</TRACKID><ESTADO>EPR</ESTADO></RESULTADO_ENVIO>')
    expect(readRespSii(flat)).toMatchObject({ trackId: '99', estado: 'EPR', rutEmisor: '76543210-3', documentos: [] })
  })

  test.each([
    ['garbage', new Uint8Array([0x00, 0x01, 0xfe])],
    ['another root', new TextEncoder().encode('<EnvioDTE xmlns="http://www.sii.cl/SiiDte"/>')],
    ['no TRACKID', new TextEncoder().encode('<RESULTADO_ENVIO><IDENTIFICACION><ESTADO>EPR</ESTADO></IDENTIFICACION></RESULTADO_ENVIO>')],
    ['a TRACKID that is not a number', new TextEncoder().encode('<RESULTADO_ENVIO><IDENTIFICACION><TRACKID>x</TRACKID><ESTADO>EPR</ESTADO></IDENTIFICACION></RESULTADO_ENVIO>')],
    ['deep nesting', new TextEncoder().encode(`<RESULTADO_ENVIO><IDENTIFICACION><TRACKID>1</TRACKID><ESTADO>${'<a>'.repeat(50_000)}${'</a>'.repeat(50_000)}</ESTADO></IDENTIFICACION></RESULTADO_ENVIO>`)],
  ])('%s: null, never a throw', (_name, bytes) => {
    expect(readRespSii(bytes)).toBeNull()
  })

  test('a REVISIONDTE whose folio cannot be read is left out', () => {
    const text = '<RESULTADO_ENVIO>' + identificacion('EPR') +
      '<REVISIONENVIO><REVISIONDTE><FOLIO>x</FOLIO><TIPODTE>33</TIPODTE><ESTADO>RCH</ESTADO><DETALLE>?</DETALLE></REVISIONDTE></REVISIONENVIO></RESULTADO_ENVIO>'
    expect(readRespSii(new TextEncoder().encode(text))?.documentos).toEqual([])
  })
})
