// validateSchema (src/xml/xsd.ts) on the exchange's roots: what the SII's XSDs refuse is refused in process too, with
// libxml2's message naming the document by its kind. (The embedded XSDs are compared byte for byte with
// test/fixtures/sii/schemas in test/sii/simulator-official.test.ts; the valid documents are in each builder's test.)
import { describe, expect, test } from 'bun:test'
import { buildEnvioRecibos } from '../../../../src/xml/envio-recibos'
import { fromLatin1Bytes, toLatin1Bytes } from '../../../../src/xml/latin1'
import { buildResultadoDte } from '../../../../src/xml/respuesta-dte'
import { validateSchema, type SchemaRoot } from '../../../../src/xml/xsd'
import { makeCertificate, testCa } from '../../../support/pki'

const identity = makeCertificate({ rut: '07880442-4', issuer: testCa() })
const TMST = new Date('2026-01-12T13:14:15Z')

const resultado = buildResultadoDte({
  rutResponde: '76086428-5', rutRecibe: '76543210-3', idRespuesta: 1, tmst: TMST,
  resultados: [{ tipoDte: 33, folio: 1, fechaEmision: '2026-01-10', rutEmisor: '76543210-3', rutReceptor: '76086428-5', montoTotal: 100, codEnvio: 1, estadoDte: 0, glosa: 'OK' }],
}, identity.signer)
const recibos = buildEnvioRecibos({
  rutResponde: '76086428-5', rutRecibe: '76543210-3', tmst: TMST,
  recibos: [{ tipoDoc: 33, folio: 1, fechaEmision: '2026-01-10', rutEmisor: '76543210-3', rutRecep: '76086428-5', montoTotal: 100, recinto: 'Bodega', rutFirma: '7880442-4', tmst: TMST }],
}, identity.signer)
const respSii = new TextEncoder().encode('<RESULTADO_ENVIO><IDENTIFICACION><RUTEMISOR>76543210-3</RUTEMISOR><RUTENVIA>7880442-4</RUTENVIA>' +
  '<TRACKID>1</TRACKID><TMSTRECEPCION>x</TMSTRECEPCION><ESTADO>EPR</ESTADO></IDENTIFICACION></RESULTADO_ENVIO>')

const spoil = (bytes: Uint8Array, from: string, to: string): Uint8Array => toLatin1Bytes(fromLatin1Bytes(bytes).replace(from, to))

describe('validateSchema on the exchange documents', () => {
  test.each([
    ['RespuestaDTE', resultado, 'respuesta.xml', '<EstadoDTE>0</EstadoDTE>', '<EstadoDTE>7</EstadoDTE>', 'EstadoDTE'],
    ['EnvioRecibos', recibos, 'recibos.xml', '<Recinto>Bodega</Recinto>', '', 'RutFirma'],
    ['RespSII', respSii, 'resultado.xml', '<TRACKID>1</TRACKID>', '<TRACKID>uno</TRACKID>', 'TRACKID'],
  ] as const)('%s: valid as built; one spoiled element is refused with libxml2\'s line', async (root, bytes, fileName, from, to, element) => {
    expect(await validateSchema(bytes, root as SchemaRoot)).toEqual({ isValid: true, errors: [] })
    const result = await validateSchema(spoil(bytes, from, to), root as SchemaRoot)
    expect(result.isValid).toBe(false)
    expect(result.errors[0]).toStartWith(`${fileName}:`)
    expect(result.errors.join('\n')).toContain(element)
  })

  test('a document of another kind is refused by the schema of the root asked for', async () => {
    expect((await validateSchema(resultado, 'EnvioRecibos')).isValid).toBe(false)
    expect((await validateSchema(recibos, 'RespSII')).isValid).toBe(false)
  })

  test('a file that is not well-formed is invalid, with the parser\'s reason, never a throw', async () => {
    const result = await validateSchema(new TextEncoder().encode('<RespuestaDTE><Resultado>'), 'RespuestaDTE')
    expect(result.isValid).toBe(false)
    expect(result.errors.length).toBeGreaterThan(0)
  })
})
