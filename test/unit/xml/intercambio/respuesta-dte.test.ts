// RespuestaDTE (src/xml/respuesta-dte.ts): the envelope receipt and the commercial answer. Every built document validates
// with xmllint against the SII's RespuestaEnvioDTE_v10.xsd and verifies with xmlsec1; the reader gets back what the
// builders wrote, and never throws.
import { afterAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ESTADO_RECEP_DTE, GLOSA_RECEP_DTE } from '../../../../src/domain/intercambio'
import { fromLatin1Bytes, toLatin1Bytes } from '../../../../src/xml/latin1'
import {
  buildRecepcionEnvio, buildResultadoDte, readRespuestaDte, type RecepcionEnvioInput, type ResultadoDteInput,
} from '../../../../src/xml/respuesta-dte'
import { validateSchema } from '../../../../src/xml/xsd'
import { makeCertificate, testCa } from '../../../support/pki'
import { SCHEMAS } from '../../../support/xml-tools'

const DIR = mkdtempSync(join(tmpdir(), 'timbre-respuesta-'))
afterAll(() => rmSync(DIR, { recursive: true, force: true }))

const identity = makeCertificate({ rut: '07880442-4', issuer: testCa() })
const EMISOR = '76543210-3'
const RECEPTOR = '76086428-5'
const TMST = new Date('2026-01-12T13:14:15Z')  // 10:14:15 in Santiago (UTC-3 in January)

let fileCount = 0
function write(bytes: Uint8Array): string {
  const path = join(DIR, `respuesta-${++fileCount}.xml`)
  writeFileSync(path, bytes)
  return path
}

function xmllint(bytes: Uint8Array): { ok: boolean; output: string } {
  const run = spawnSync('xmllint', ['--noout', '--nonet', '--schema', join(SCHEMAS, 'RespuestaEnvioDTE_v10.xsd'), write(bytes)], { encoding: 'latin1' })
  return { ok: run.status === 0, output: run.stderr }
}

function xmlsec1(bytes: Uint8Array): { ok: boolean; output: string } {
  const run = spawnSync('xmlsec1', ['--verify', '--id-attr:ID', 'http://www.sii.cl/SiiDte:Resultado', write(bytes)], { encoding: 'utf8' })
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` }
}

const recepcion = (overrides: Partial<RecepcionEnvioInput['envio']> = {}): RecepcionEnvioInput => ({
  rutResponde: RECEPTOR, rutRecibe: '76.543.210-3', idRespuesta: 17, nmbContacto: 'Juana Pérez', mailContacto: 'dte@ñuble.cl', tmst: TMST,
  envio: {
    nmbEnvio: 'EnvioDTE_76543210-3_2026.xml', fchRecep: new Date('2026-01-12T12:00:00Z'), codEnvio: 42, envioDteId: 'SetDoc',
    digest: 'hlmQtu/AyjUjTDhM3852wvRCr8w=', rutEmisor: EMISOR, rutReceptor: RECEPTOR, estadoRecepEnv: 0, glosa: 'Envio Recibido Conforme',
    documentos: [
      { tipoDte: 33, folio: 1, fechaEmision: '2026-01-10', rutEmisor: EMISOR, rutReceptor: RECEPTOR, montoTotal: 38021, estadoRecepDte: 0, glosa: GLOSA_RECEP_DTE[0] },
      { tipoDte: 61, folio: 9, fechaEmision: '2026-01-11', rutEmisor: EMISOR, rutReceptor: RECEPTOR, montoTotal: 1190, estadoRecepDte: ESTADO_RECEP_DTE.repetido, glosa: 'DTE No Recibido - DTE Repetido: tipo 61 folio 9 ya fue recibido' },
    ],
    ...overrides,
  },
})

const resultado: ResultadoDteInput = {
  rutResponde: RECEPTOR, rutRecibe: EMISOR, idRespuesta: 18, tmst: TMST,
  resultados: [
    { tipoDte: 33, folio: 1, fechaEmision: '2026-01-10', rutEmisor: EMISOR, rutReceptor: RECEPTOR, montoTotal: 38021, codEnvio: 42, estadoDte: 0, glosa: 'Aceptado' },
    { tipoDte: 34, folio: 5, fechaEmision: '2026-01-10', rutEmisor: EMISOR, rutReceptor: RECEPTOR, montoTotal: 5000, codEnvio: 42, estadoDte: 2, glosa: 'Mercadería no solicitada', codRchDsc: -1 },
  ],
}

describe('buildRecepcionEnvio: the acuse de recibo', () => {
  const bytes = buildRecepcionEnvio(recepcion(), identity.signer)

  test('validates against RespuestaEnvioDTE_v10.xsd (xmllint, and in process) and xmlsec1 verifies its signature over Resultado', async () => {
    const lint = xmllint(bytes)
    expect(lint.output).toContain('validates')
    expect(lint.ok).toBe(true)
    expect(await validateSchema(bytes, 'RespuestaDTE')).toEqual({ isValid: true, errors: [] })
    expect(xmlsec1(bytes).ok).toBe(true)
  })

  test('is ISO-8859-1 with the SII\'s root attributes, RUTs canonical, Santiago timestamps, the Signature after Resultado', () => {
    const text = fromLatin1Bytes(bytes)
    expect(text).toStartWith(
      '<?xml version="1.0" encoding="ISO-8859-1"?>\n<RespuestaDTE xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ' +
        'xsi:schemaLocation="http://www.sii.cl/SiiDte RespuestaEnvioDTE_v10.xsd" version="1.0">\n<Resultado ID="RespuestaRecepcion"><Caratula version="1.0">' +
        `<RutResponde>${RECEPTOR}</RutResponde><RutRecibe>${EMISOR}</RutRecibe><IdRespuesta>17</IdRespuesta><NroDetalles>1</NroDetalles>` +
        '<NmbContacto>Juana Pérez</NmbContacto><MailContacto>dte@ñuble.cl</MailContacto><TmstFirmaResp>2026-01-12T10:14:15</TmstFirmaResp></Caratula>',
    )
    expect(text).toContain('<FchRecep>2026-01-12T09:00:00</FchRecep><CodEnvio>42</CodEnvio><EnvioDTEID>SetDoc</EnvioDTEID><Digest>hlmQtu/AyjUjTDhM3852wvRCr8w=</Digest>')
    expect(text).toContain('<NroDTE>2</NroDTE><RecepcionDTE><TipoDTE>33</TipoDTE>')
    expect(text).toMatch(/<\/Resultado>\n<Signature xmlns="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#"><SignedInfo>.*<Reference URI="#RespuestaRecepcion">.*<\/Signature><\/RespuestaDTE>\n$/s)
    expect(bytes.includes(0xf1)).toBe(true)  // ñ as one ISO-8859-1 byte
  })

  test('readRespuestaDte gets back what was written, the signature verified', () => {
    expect(readRespuestaDte(bytes)).toEqual({
      kind: 'recepcion', rutResponde: RECEPTOR, rutRecibe: EMISOR, signatureOk: true,
      envios: [{
        envioDteId: 'SetDoc', estadoRecepEnv: 0, glosa: 'Envio Recibido Conforme', fchRecep: '2026-01-12T09:00:00',
        documentos: [
          { tipoDte: 33, folio: 1, rutEmisor: EMISOR, rutReceptor: RECEPTOR, montoTotal: 38021, estadoRecepDte: 0, glosa: 'DTE Recibido OK' },
          { tipoDte: 61, folio: 9, rutEmisor: EMISOR, rutReceptor: RECEPTOR, montoTotal: 1190, estadoRecepDte: 4, glosa: 'DTE No Recibido - DTE Repetido: tipo 61 folio 9 ya fue recibido' },
        ],
      }],
    })
  })

  test('an unreadable envelope (91: no ID, no digest, no RUTs, no documents) still makes a valid, signed receipt', async () => {
    const ilegible = buildRecepcionEnvio(recepcion({
      envioDteId: '', digest: null, rutEmisor: null, rutReceptor: 'basura', estadoRecepEnv: 91, glosa: 'Envio Rechazado - Archivo Ilegible: el archivo no es XML', documentos: [],
    }), identity.signer)
    expect(xmllint(ilegible).ok).toBe(true)
    expect(xmlsec1(ilegible).ok).toBe(true)
    const text = fromLatin1Bytes(ilegible)
    expect(text).toContain('<EnvioDTEID></EnvioDTEID><EstadoRecepEnv>91</EstadoRecepEnv>')
    expect(text).not.toMatch(/<NroDTE>|<RecepcionDTE>|<Digest>|<RutEmisor>|<RutReceptor>/)
  })

  test('texts are cut to the XSD\'s lengths, typographic and non-Latin-1 characters made ISO-8859-1; a document that cannot be named is left out', () => {
    const long = `Glosa “larga” — ${'ñ'.repeat(300)} 😀`
    const built = buildRecepcionEnvio(recepcion({
      nmbEnvio: 'x'.repeat(100), glosa: long,
      documentos: [
        { tipoDte: 33, folio: 0, fechaEmision: '2026-01-10', rutEmisor: EMISOR, rutReceptor: RECEPTOR, montoTotal: 1, estadoRecepDte: 99, glosa: 'folio 0' },
        { tipoDte: 33, folio: 3, fechaEmision: '2026-02-30', rutEmisor: EMISOR, rutReceptor: RECEPTOR, montoTotal: 1, estadoRecepDte: 99, glosa: 'fecha' },
        { tipoDte: 33, folio: 4, fechaEmision: '2026-01-10', rutEmisor: '1-1', rutReceptor: RECEPTOR, montoTotal: 1, estadoRecepDte: 99, glosa: 'rut' },
        { tipoDte: 33, folio: 5, fechaEmision: '2026-01-10', rutEmisor: EMISOR, rutReceptor: RECEPTOR, montoTotal: 0.5, estadoRecepDte: 99, glosa: 'monto' },
        { tipoDte: 33, folio: 6, fechaEmision: '2026-01-10', rutEmisor: EMISOR, rutReceptor: RECEPTOR, montoTotal: 1, estadoRecepDte: 99, glosa: 'a & <b> "c"' },
      ],
    }), identity.signer)
    expect(xmllint(built).ok).toBe(true)
    const text = fromLatin1Bytes(built)
    expect(text).toContain(`<NmbEnvio>${'x'.repeat(80)}</NmbEnvio>`)
    expect(text).toContain(`<RecepEnvGlosa>Glosa &quot;larga&quot; - ${'ñ'.repeat(256 - 16)}</RecepEnvGlosa>`)
    expect(text).toContain('<NroDTE>1</NroDTE><RecepcionDTE><TipoDTE>33</TipoDTE><Folio>6</Folio>')
    expect(text).toContain('<RecepDTEGlosa>a &amp; &lt;b&gt; &quot;c&quot;</RecepDTEGlosa>')
    expect(readRespuestaDte(built)?.kind === 'recepcion' && readRespuestaDte(built)).toMatchObject({ envios: [{ documentos: [{ folio: 6, glosa: 'a & <b> "c"' }] }] })
  })

  test('a 43 (liquidación-factura) is written as what it is, which the SII\'s 2005 DTEType does not list: the XSD refuses it', () => {
    const built = buildRecepcionEnvio(recepcion({
      documentos: [{ tipoDte: 43, folio: 1, fechaEmision: '2026-01-10', rutEmisor: EMISOR, rutReceptor: RECEPTOR, montoTotal: 1, estadoRecepDte: 0, glosa: 'DTE Recibido OK' }],
    }), identity.signer)
    expect(fromLatin1Bytes(built)).toContain('<TipoDTE>43</TipoDTE>')
    const lint = xmllint(built)
    expect(lint.ok).toBe(false)
    expect(lint.output).toContain('TipoDTE')
    expect(xmlsec1(built).ok).toBe(true)
  })

  test.each([
    ['rutResponde', { rutResponde: '12345678-9' }],
    ['rutRecibe', { rutRecibe: '' }],
    ['idRespuesta', { idRespuesta: 0 }],
    ['tmst', { tmst: new Date(Number.NaN) }],
  ] as const)('the caller\'s own bad %s throws RangeError', (_field, overrides) => {
    expect(() => buildRecepcionEnvio({ ...recepcion(), ...overrides }, identity.signer)).toThrow(RangeError)
  })
})

describe('buildResultadoDte: the commercial answer', () => {
  const bytes = buildResultadoDte(resultado, identity.signer)

  test('validates against RespuestaEnvioDTE_v10.xsd and xmlsec1 verifies it', async () => {
    expect(xmllint(bytes).ok).toBe(true)
    expect(await validateSchema(bytes, 'RespuestaDTE')).toEqual({ isValid: true, errors: [] })
    expect(xmlsec1(bytes).ok).toBe(true)
    const text = fromLatin1Bytes(bytes)
    expect(text).toContain('<Resultado ID="RespuestaResultado">')
    expect(text).toContain('<NroDetalles>2</NroDetalles>')
    expect(text).toContain('<CodEnvio>42</CodEnvio><EstadoDTE>2</EstadoDTE><EstadoDTEGlosa>Mercadería no solicitada</EstadoDTEGlosa><CodRchDsc>-1</CodRchDsc></ResultadoDTE>')
  })

  test('readRespuestaDte gets back what was written', () => {
    expect(readRespuestaDte(bytes)).toEqual({
      kind: 'resultado', rutResponde: RECEPTOR, rutRecibe: EMISOR, signatureOk: true, tmst: '2026-01-12T10:14:15',
      resultados: [
        { tipoDte: 33, folio: 1, rutEmisor: EMISOR, rutReceptor: RECEPTOR, montoTotal: 38021, estadoDte: 0, glosa: 'Aceptado' },
        { tipoDte: 34, folio: 5, rutEmisor: EMISOR, rutReceptor: RECEPTOR, montoTotal: 5000, estadoDte: 2, glosa: 'Mercadería no solicitada' },
      ],
    })
  })

  test.each([
    ['no resultados', { resultados: [] }],
    ['a positive codRchDsc', { resultados: [{ ...resultado.resultados[1]!, codRchDsc: 1 }] }],
    ['a folio of 0', { resultados: [{ ...resultado.resultados[0]!, folio: 0 }] }],
    ['an invalid RUT', { resultados: [{ ...resultado.resultados[0]!, rutEmisor: '76543210-4' }] }],
  ] as const)('%s throws RangeError', (_name, overrides) => {
    expect(() => buildResultadoDte({ ...resultado, ...overrides }, identity.signer)).toThrow(RangeError)
  })
})

describe('readRespuestaDte on what others send', () => {
  const bytes = buildResultadoDte(resultado, identity.signer)

  test('a Resultado changed after signing reads, with signatureOk false', () => {
    const tampered = toLatin1Bytes(fromLatin1Bytes(bytes).replace('<EstadoDTE>0</EstadoDTE>', '<EstadoDTE>2</EstadoDTE>'))
    expect(readRespuestaDte(tampered)).toMatchObject({ kind: 'resultado', signatureOk: false, resultados: [{ estadoDte: 2 }, { estadoDte: 2 }] })
  })

  test('an entry whose numbers cannot be read is left out; RUTs that are not RUTs come as written', () => {
    const odd = toLatin1Bytes(fromLatin1Bytes(bytes).replace('<Folio>5</Folio>', '<Folio>cinco</Folio>').replace(`<RutRecibe>${EMISOR}</RutRecibe>`, '<RutRecibe>no-es-rut</RutRecibe>'))
    expect(readRespuestaDte(odd)).toMatchObject({ rutRecibe: 'no-es-rut', resultados: [{ folio: 1 }] })
  })

  test.each([
    ['garbage', new Uint8Array([1, 2, 3, 0xff])],
    ['an EnvioDTE', new TextEncoder().encode('<EnvioDTE xmlns="http://www.sii.cl/SiiDte"/>')],
    ['a RespuestaDTE without Resultado', new TextEncoder().encode('<RespuestaDTE xmlns="http://www.sii.cl/SiiDte"/>')],
    ['deep nesting', new TextEncoder().encode(`<RespuestaDTE><Resultado><Caratula>${'<a>'.repeat(50_000)}${'</a>'.repeat(50_000)}</Caratula></Resultado></RespuestaDTE>`)],
  ])('%s: null or a reading, never a throw', (_name, input) => {
    const read = readRespuestaDte(input)
    expect(read === null || read.signatureOk === false).toBe(true)
  })
})
