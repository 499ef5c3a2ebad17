// The SII's own example envelope (test/fixtures/sii/examples/F60T33-ejemplo-oficial-SII.xml) passes every check of the
// simulator: schema, both signatures verified with their RSAKeyValue (its X509Certificate is not its signer's,
// test/fixtures/sii/README.md), the TED against its CAF and the CAF against the SII's IDK 100 key. Then it is uploaded for real.
// Also: the XSDs embedded in the binary (src/xml/schemas/, used by the simulator and by reception) are byte for byte the SII's.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { checkEnvelope, documentErrors, dteSignatureErrors, isRefusal, readEnvelope, type ReadEnvelope } from '../../src/sii/simulator/checks'
import { SCHEMA_FILES, schemaBytes, validateSchema } from '../../src/xml/xsd'
import { startSimulator } from '../../src/sii/simulator/server'
import { verifyEnvelopeSignature } from '../../src/xml/block-signature'
import { authorityKeys } from '../../src/xml/authority-keys'
import { fromLatin1Bytes, toLatin1Bytes } from '../../src/xml/latin1'
import { verifyXmlSignatures } from '../../src/xml/signature'
import { testClock } from '../support/clock'
import { OFFICIAL_EXAMPLE_FILE, SCHEMAS } from '../support/xml-tools'
import { dteUpload, estUp, field, fields, SIM_START, soap, soapToken } from './simulator-helpers'

const EXAMPLE = new Uint8Array(readFileSync(OFFICIAL_EXAMPLE_FILE))
const KEYS = authorityKeys({ allowSimulator: true })

function read(bytes: Uint8Array = EXAMPLE): ReadEnvelope {
  const r = readEnvelope(bytes, 'EnvioDTE')
  if (isRefusal(r)) throw new Error(r.message)
  return r
}

describe('the SII\'s example envelope', () => {
  test('validates against EnvioDTE_v10.xsd in process (xmllint-wasm)', async () => {
    expect(await validateSchema(EXAMPLE, 'EnvioDTE')).toEqual({ isValid: true, errors: [] })
  })

  test('its envelope signature verifies in place with its RSAKeyValue, though its certificate is another key', () => {
    const envelope = read()
    expect(verifyEnvelopeSignature(envelope.doc)).toMatchObject({ isValid: true })
    // The strict check (certificate must hold the key) fails on this file: the simulator must not require it.
    expect(verifyXmlSignatures(fromLatin1Bytes(EXAMPLE)).every((c) => c.isValid)).toBe(false)
  })

  test('its DTE signature verifies standalone (the SII\'s tool signed it without namespace, docs/sii-protocol.md §4.3)', () => {
    const envelope = read()
    expect(envelope.dtes).toHaveLength(1)
    expect(envelope.dtes.map(dteSignatureErrors)).toEqual([[]])
  })

  test('its TED verifies against its CAF, the CAF against IDK 100, and the DD matches the document', () => {
    const [dte] = read().dtes
    expect(dte?.fields).toMatchObject({ id: 'F60T33', tipo: 33, folio: 60, rutEmisor: '97975000-5', rutReceptor: '77777777-7', montoTotal: '119000' })
    expect(documentErrors(dte!, KEYS)).toEqual([])
    expect(documentErrors(dte!, authorityKeys({ allowSimulator: false }))).toEqual([])
  })

  test('passes schema, Caratula and DTE signature checks together', async () => {
    expect(await checkEnvelope(read(), EXAMPLE)).toBeNull()
  })

  test('one changed amount in the TED fails FRMT; the same change in the document fails the DD match', () => {
    const text = fromLatin1Bytes(EXAMPLE)
    const tedTampered = read(toLatin1Bytes(text.replace('<MNT>119000</MNT>', '<MNT>119001</MNT>')))
    expect(documentErrors(tedTampered.dtes[0]!, KEYS).map((e) => [e.seccion, e.codigo])).toEqual([['TED', 1]])
    const docTampered = read(toLatin1Bytes(text.replace('<MntTotal>119000</MntTotal>', '<MntTotal>119001</MntTotal>')))
    expect(documentErrors(docTampered.dtes[0]!, KEYS).map((e) => [e.seccion, e.codigo])).toEqual([['TED', 3]])
    expect(dteSignatureErrors(docTampered.dtes[0]!)).toHaveLength(1)
  })

  test('uploaded with a token of its RutEnvia 7880442-4: STATUS 0, then EPR, accepted with reparos (receptor 77777777-7)', async () => {
    const sim = await startSimulator({ clock: testClock({ at: SIM_START }).now, processingDelayMs: 0 })
    try {
      const token = await soapToken(sim.url)  // the test identity's certificate names 07880442-4, like the example's
      const up = await dteUpload(sim.url, token, EXAMPLE, '7880442-4', '97975000-5')
      expect(up.status).toBe('0')
      const answer = await estUp(sim.url, token, up.trackId ?? '', '97975000-5')
      expect(field(answer.inner, 'ESTADO')).toBe('EPR')
      expect(['INFORMADOS', 'ACEPTADOS', 'RECHAZADOS', 'REPAROS'].map((n) => fields(answer.inner, n))).toEqual([['1'], ['1'], ['0'], ['1']])
      const estDte = await soap(sim.url, 'QueryEstDte', 'getEstDte', {
        RutConsultante: '7880442', DvConsultante: '4', RutCompania: '97975000', DvCompania: '5', RutReceptor: '77777777', DvReceptor: '7',
        TipoDte: '33', FolioDte: '60', FechaEmisionDte: '13102003', MontoDte: '119000', Token: token,
      })
      expect(field(estDte.inner, 'ESTADO')).toBe('DOK')
    } finally {
      await sim.stop()
    }
  })
})

describe('embedded XSDs', () => {
  test('the exchange schemas of DESIGN §13 and the certification libros\' are embedded beside the envelopes\'', () => {
    expect(Object.keys(SCHEMA_FILES).sort()).toEqual([
      'ConsumoFolio_v10.xsd',
      'DTE_v10.xsd', 'EnvioBOLETA_v11.xsd', 'EnvioDTE_v10.xsd', 'EnvioRecibos_v10.xsd',
      'LceCal_v10.xsd', 'LceCoCertif_v10.xsd', 'LceSiiTypes_v10.xsd', 'LibroCV_v10.xsd', 'LibroGuia_v10.xsd', 'Recibos_v10.xsd',
      'RespSIILibros_v10.xsd', 'RespSII_v10.xsd', 'RespuestaEnvioDTE_v10.xsd', 'SiiTypes_v10.xsd', 'xmldsignature_v10.xsd',
    ])
  })

  test.each(Object.keys(SCHEMA_FILES))('%s is byte for byte the SII\'s file', async (name) => {
    const embedded = (await schemaBytes()).get(name)
    expect(Buffer.from(embedded ?? new Uint8Array()).equals(readFileSync(join(SCHEMAS, name)))).toBe(true)
  })

  test('a schema violation is reported with libxml2\'s message and line', async () => {
    const text = fromLatin1Bytes(EXAMPLE).replace('<MntTotal>119000</MntTotal>', '<MntTotal>x</MntTotal>')
    const result = await validateSchema(toLatin1Bytes(text), 'EnvioDTE')
    expect(result.isValid).toBe(false)
    expect(result.errors[0]).toMatch(/^envio\.xml:\d+: .*MntTotal/)
  })
})
