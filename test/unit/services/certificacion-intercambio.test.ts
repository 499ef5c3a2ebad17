// answerIntercambio (src/services/certificacion-intercambio.ts) against a real server's SQLite store and a real
// certificate: the simulator's set de intercambio and the SII's own 2026 one (test/fixtures/sii/examples) in, a zip of
// the three signed answers out, each file validated by xmllint against the SII's XSDs and verified by xmlsec1. Hostile
// files are refused at the caller's field or answered and reported, never a crash. Readings:
// docs/decisions/certificacion.md «Intercambio».
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { unzipSync } from 'fflate'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TimbreError } from '../../../src/errors'
import { answerIntercambio, type InformeIntercambio } from '../../../src/services/certificacion-intercambio'
import { generateIntercambioEnvelope } from '../../../src/sii/simulator/intercambio-generator'
import { readEnvioRecibos } from '../../../src/xml/envio-recibos'
import { fromLatin1Bytes } from '../../../src/xml/latin1'
import { readRespuestaDte } from '../../../src/xml/respuesta-dte'
import { SIGNER_RUT, uploadCertificate } from '../../support/issuance'
import { startTestServer, testRut, type Tenant, type TestServer } from '../../support/server'
import { SCHEMAS, SII_FIXTURES } from '../../support/xml-tools'

const DIR = mkdtempSync(join(tmpdir(), 'timbre-certinter-'))
let s: TestServer
let empresa: Tenant
let sinCertificado: Tenant
let otraEmpresa: Tenant
let siiEmpresa: Tenant
const NOW = new Date()

beforeAll(async () => {
  s = await startTestServer()
  empresa = await s.tenant(testRut(), 'Maestranza del Sur SpA')
  otraEmpresa = await s.tenant(testRut())
  sinCertificado = await s.tenant(testRut())
  // The company the SII's 2026 file was made for (its RutReceptor).
  siiEmpresa = await s.tenant('77626554-3', 'MAESTRANZA FM SPA')
  for (const t of [empresa, otraEmpresa, siiEmpresa]) await uploadCertificate(s, t)
}, 60_000)
afterAll(async () => {
  await s.stop()
  rmSync(DIR, { recursive: true, force: true })
})

let fileCount = 0
function write(bytes: Uint8Array): string {
  const path = join(DIR, `f${++fileCount}.xml`)
  writeFileSync(path, bytes)
  return path
}

/** xmllint against the project's copy of the SII's XSD: '' when valid, its messages otherwise. */
function xmllint(bytes: Uint8Array, xsd: string): string {
  const run = spawnSync('xmllint', ['--noout', '--nonet', '--schema', join(SCHEMAS, xsd), write(bytes)], { encoding: 'latin1' })
  return run.status === 0 ? '' : run.stderr
}

/** xmlsec1 on the `n`-th Signature of the file (1-based, document order), its key from KeyInfo: '' when it verifies. */
function xmlsec1(bytes: Uint8Array, idAttrs: readonly string[], n = 1): string {
  const ids = idAttrs.flatMap((a) => ['--id-attr:ID', `http://www.sii.cl/SiiDte:${a}`])
  const run = spawnSync('xmlsec1', ['--verify', ...ids, '--node-xpath', `(//*[local-name()='Signature'])[${n}]`, write(bytes)], { encoding: 'latin1' })
  return run.status === 0 ? '' : run.stderr
}

function answer(t: Tenant, bytes: Uint8Array, field = 'archivo_base64') {
  return answerIntercambio(s.server.deps, { empresaId: t.empresa.id, bytes, now: NOW, field })
}

async function refusal(t: Tenant, bytes: Uint8Array, field = 'archivo_base64'): Promise<TimbreError> {
  const err = await answer(t, bytes, field).then(() => null, (e: unknown) => e)
  expect(err).toBeInstanceOf(TimbreError)
  return err as TimbreError
}

function stored(): { recibidos: number; envios: number; mails: number } {
  const count = (table: string) => (s.server.deps.store.sqlite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
  return { recibidos: count('recibidos'), envios: count('recibidos_envios'), mails: count('mail_outbox') }
}

const text = (bytes: Uint8Array) => fromLatin1Bytes(bytes)
const folios = (xml: string) => [...xml.matchAll(/<Folio>(\d+)<\/Folio>/g)].map((m) => Number(m[1]))

describe('the simulator\'s set de intercambio', () => {
  let envelope: Uint8Array
  let files: Record<string, Uint8Array>
  let informe: InformeIntercambio
  let before: ReturnType<typeof stored>

  beforeAll(async () => {
    envelope = generateIntercambioEnvelope({ rutReceptor: empresa.empresa.rut, seed: 2026, now: NOW })
    before = stored()
    const out = await answer(empresa, envelope)
    files = unzipSync(out.zip)
    informe = out.informe
  }, 60_000)

  test('the zip holds the three files, in order', () => {
    expect(Object.keys(files)).toEqual(['1_RecepcionDTE.xml', '2_EnvioRecibos.xml', '3_ResultadoDTE.xml'])
    expect(informe.archivos).toEqual(Object.keys(files))
  })

  test('each file is valid against its XSD (xmllint with the SII\'s schemas)', () => {
    expect(xmllint(files['1_RecepcionDTE.xml']!, 'RespuestaEnvioDTE_v10.xsd')).toBe('')
    expect(xmllint(files['2_EnvioRecibos.xml']!, 'EnvioRecibos_v10.xsd')).toBe('')
    expect(xmllint(files['3_ResultadoDTE.xml']!, 'RespuestaEnvioDTE_v10.xsd')).toBe('')
  })

  test('xmlsec1 verifies every signature: each RespuestaDTE over Resultado, each Recibo and the SetRecibos', () => {
    expect(xmlsec1(files['1_RecepcionDTE.xml']!, ['Resultado'])).toBe('')
    expect(xmlsec1(files['3_ResultadoDTE.xml']!, ['Resultado'])).toBe('')
    const recibos = ['SetRecibos', 'DocumentoRecibo']
    expect([1, 2].map((n) => xmlsec1(files['2_EnvioRecibos.xml']!, recibos, n))).toEqual(['', ''])
  })

  test('a tampered answer does not verify (the referee can fail)', () => {
    const tampered = text(files['3_ResultadoDTE.xml']!).replace('<EstadoDTE>2</EstadoDTE>', '<EstadoDTE>0</EstadoDTE>')
    expect(xmlsec1(Buffer.from(tampered, 'latin1'), ['Resultado'])).not.toBe('')
  })

  test('1_RecepcionDTE: envelope received (0); the company\'s DTE 0, the other RUT\'s 3', () => {
    const read = readRespuestaDte(files['1_RecepcionDTE.xml']!)
    expect(read).toMatchObject({ kind: 'recepcion', rutResponde: empresa.empresa.rut, rutRecibe: '88888888-8', signatureOk: true })
    if (read?.kind !== 'recepcion') throw new Error('not a RecepcionEnvio')
    expect(read.envios).toHaveLength(1)
    expect(read.envios[0]).toMatchObject({ envioDteId: 'SetDoc', estadoRecepEnv: 0 })
    expect(read.envios[0]!.documentos.map((d) => [d.rutReceptor, d.estadoRecepDte])).toEqual([[empresa.empresa.rut, 0], ['69507000-4', 3]])
    expect(read.envios[0]!.documentos[1]!.glosa).toContain('Error en RUT Receptor')
  })

  test('3_ResultadoDTE: the company\'s DTE accepted (0), the other rejected (2) "RUT Receptor no corresponde"', () => {
    const read = readRespuestaDte(files['3_ResultadoDTE.xml']!)
    if (read?.kind !== 'resultado') throw new Error('not a ResultadoDTE')
    expect(read).toMatchObject({ rutResponde: empresa.empresa.rut, rutRecibe: '88888888-8', signatureOk: true })
    expect(read.resultados.map((r) => [r.rutReceptor, r.estadoDte, r.glosa])).toEqual([
      [empresa.empresa.rut, 0, 'DTE Aceptado - Mercadería Conforme'],
      ['69507000-4', 2, 'DTE Rechazado - RUT Receptor no corresponde'],
    ])
  })

  test('2_EnvioRecibos: one Recibo, only the company\'s DTE, with the recinto, the signer\'s RUT and the Ley 19.983 declaration', () => {
    const read = readEnvioRecibos(files['2_EnvioRecibos.xml']!)
    expect(read).toMatchObject({ rutResponde: empresa.empresa.rut, rutRecibe: '88888888-8', signatureOk: true })
    const company = informe.documentos.find((d) => d.rut_receptor === empresa.empresa.rut)!
    expect(read!.recibos).toEqual([{
      tipoDoc: 33, folio: company.folio, fechaEmision: company.fecha_emision, rutEmisor: '88888888-8', rutRecep: empresa.empresa.rut,
      montoTotal: company.monto_total, recinto: 'Calle Falsa 123, Ñuñoa', tmst: expect.any(String),
    }])
    const xml = text(files['2_EnvioRecibos.xml']!)
    expect(xml).toContain(`<RutFirma>${SIGNER_RUT}</RutFirma>`)
    expect(xml).toContain('Ley 19.983')
    expect(folios(xml)).toEqual([company.folio])
  })

  test('informe: every check ran and passed for the company\'s DTE (TED and CAF under the simulator\'s IDK 900); the other fails `receptor` only', () => {
    expect(informe).toMatchObject({ estado_recep_env: 0, glosa: 'Envio Recibido Conforme' })
    expect(informe.checks.map((c) => [c.check, c.ok])).toEqual([['schema', true], ['firma_envio', true], ['receptor_envio', true]])
    const [mine, other] = informe.documentos
    expect(mine!.checks.map((c) => c.check)).toEqual(['schema', 'firma_envio', 'receptor_envio', 'firma_dte', 'ted', 'caf', 'receptor', 'emisor', 'duplicado'])
    expect(mine!.checks.every((c) => c.ok)).toBe(true)
    expect(mine).toMatchObject({ tipo_dte: 33, rut_emisor: '88888888-8', decide: null, estado_recep_dte: 0, estado_dte: 0, recibo: true, en_respuestas: true })
    expect(other!.checks.filter((c) => !c.ok).map((c) => c.check)).toEqual(['receptor'])
    expect(other).toMatchObject({ rut_receptor: '69507000-4', decide: 'receptor', estado_recep_dte: 3, estado_dte: 2, recibo: false, folio: mine!.folio + 1 })
  })

  test('nothing is stored: no received envelope, document or mail', () => {
    expect(stored()).toEqual(before)
  })

  test('the same file answered again gives the same codes (nothing was kept to make it a duplicate)', async () => {
    const again = await answer(empresa, envelope)
    expect(again.informe.documentos.map((d) => [d.estado_recep_dte, d.estado_dte])).toEqual([[0, 0], [3, 2]])
  })
})

describe('the SII\'s own 2026 set de intercambio (test/fixtures/sii/examples)', () => {
  const bytes = new Uint8Array(readFileSync(join(SII_FIXTURES, 'examples/ENVIO_DTE_4739877_XML_INTERCAMBIO.xml')))

  test('answered as the SII expects: 0 and 3 at reception, 0 and 2 as result, one Recibo for folio 52268', async () => {
    const { zip, informe } = await answer(siiEmpresa, bytes)
    const files = unzipSync(zip)
    expect(Object.keys(files)).toEqual(['1_RecepcionDTE.xml', '2_EnvioRecibos.xml', '3_ResultadoDTE.xml'])
    expect(informe.documentos.map((d) => [d.folio, d.rut_receptor, d.estado_recep_dte, d.estado_dte, d.recibo])).toEqual([
      [52268, '77626554-3', 0, 0, true],
      [52269, '69507000-4', 3, 2, false],
    ])
    expect(folios(text(files['2_EnvioRecibos.xml']!))).toEqual([52268])
    const recepcion = text(files['1_RecepcionDTE.xml']!)
    // Its SetDTE's digest as the SII wrote it, the envelope's identity for the SII.
    expect(recepcion).toContain('<Digest>a+hR0C0he/0Qqohd5G/1Djc32cs=</Digest>')
    expect(xmllint(files['1_RecepcionDTE.xml']!, 'RespuestaEnvioDTE_v10.xsd')).toBe('')
    expect(xmllint(files['2_EnvioRecibos.xml']!, 'EnvioRecibos_v10.xsd')).toBe('')
    expect(xmllint(files['3_ResultadoDTE.xml']!, 'RespuestaEnvioDTE_v10.xsd')).toBe('')
    expect(xmlsec1(files['3_ResultadoDTE.xml']!, ['Resultado'])).toBe('')
  })

  test('its schema and signatures pass; its TEDs do not verify and its CAF (IDK 1) is not checked: reported, not decisive', async () => {
    const { informe } = await answer(siiEmpresa, bytes)
    expect(informe.checks.every((c) => c.ok)).toBe(true)
    for (const d of informe.documentos) {
      const failing = d.checks.filter((c) => !c.ok).map((c) => c.check)
      expect(failing).toEqual(d.folio === 52268 ? ['ted', 'caf'] : ['ted', 'caf', 'receptor'])
      expect(d.checks.find((c) => c.check === 'ted')!.detalle).toContain('FRMT no verifica')
    }
    expect(informe.documentos[0]!.decide).toBeNull()
  })
})

describe('hostile files', () => {
  const envelopeFor = (t: Tenant, seed = 7) => generateIntercambioEnvelope({ rutReceptor: t.empresa.rut, seed, now: NOW })

  test.each([
    ['empty', new Uint8Array(), 'REQUIRED'],
    ['not XML', new TextEncoder().encode('%PDF-1.4 esto no es XML'), 'INVALID_FORMAT'],
    ['XML that is no exchange document', new TextEncoder().encode('<?xml version="1.0"?><Libro/>'), 'INVALID_FORMAT'],
    ['an EnvioDTE without SetDTE', new TextEncoder().encode('<EnvioDTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Nada/></EnvioDTE>'), 'INVALID_FORMAT'],
  ])('%s: 400 VALIDATION_ERROR at the caller\'s field, nothing stored', async (_, bytes, code) => {
    const before = stored()
    const err = await refusal(empresa, bytes as Uint8Array, 'archivo')
    expect(err.code).toBe('VALIDATION_ERROR')
    expect(err.extra.details).toEqual([expect.objectContaining({ field: 'archivo', code })])
    expect(stored()).toEqual(before)
  })

  test('an exchange answer instead of the envelope: 400 naming what it is', async () => {
    const { zip } = await answer(empresa, envelopeFor(empresa))
    const err = await refusal(empresa, unzipSync(zip)['1_RecepcionDTE.xml']!)
    expect(err.extra.details?.[0]).toMatchObject({ field: 'archivo_base64', code: 'INVALID_VALUE', message: expect.stringContaining('RespuestaDTE') })
  })

  test('an envelope from another issuer than 88888888-8: 400, not the SII\'s', async () => {
    const other = text(envelopeFor(empresa)).replace('<RutEmisor>88888888-8</RutEmisor>', '<RutEmisor>76086428-5</RutEmisor>')
    const err = await refusal(empresa, Buffer.from(other, 'latin1'))
    expect(err.extra.details?.[0]).toMatchObject({ field: 'archivo_base64', code: 'INVALID_VALUE', message: expect.stringContaining('no del SII') })
  })

  test('another company\'s set de intercambio: 400', async () => {
    const err = await refusal(empresa, envelopeFor(otraEmpresa))
    expect(err.extra.details?.[0]?.message).toContain('otra empresa')
  })

  test('an envelope with no DTE for the company: 400', async () => {
    const rut = empresa.empresa.rut
    const moved = text(envelopeFor(empresa)).replaceAll(`<RUTRecep>${rut}</RUTRecep>`, '<RUTRecep>76086428-5</RUTRecep>')
    const err = await refusal(empresa, Buffer.from(moved, 'latin1'))
    expect(err.extra.details?.[0]?.message).toBe(`Ningún DTE del envío está dirigido a ${rut} (receptores: 76086428-5, 69507000-4).`)
  })

  test('a tampered envelope signature: answered and reported (EstadoRecepEnv 2, both DTEs 1 and rejected), no EnvioRecibos', async () => {
    const original = text(envelopeFor(empresa))
    // The last SignatureValue is the envelope's (over SetDTE); the DTEs' own stay intact.
    const at = original.lastIndexOf('<SignatureValue>') + '<SignatureValue>'.length
    const tampered = `${original.slice(0, at)}${original[at] === 'A' ? 'B' : 'A'}${original.slice(at + 1)}`
    const { zip, informe } = await answer(empresa, Buffer.from(tampered, 'latin1'))
    expect(informe.estado_recep_env).toBe(2)
    expect(informe.checks.find((c) => c.check === 'firma_envio')).toMatchObject({ ok: false, detalle: expect.any(String) })
    expect(informe.documentos.map((d) => d.checks.find((c) => c.check === 'firma_dte')?.ok)).toEqual([true, true])
    expect(informe.documentos.map((d) => [d.estado_recep_dte, d.estado_dte, d.decide, d.recibo])).toEqual([[1, 2, 'firma_envio', false], [1, 2, 'firma_envio', false]])
    const files = unzipSync(zip)
    expect(Object.keys(files)).toEqual(['1_RecepcionDTE.xml', '3_ResultadoDTE.xml'])
    expect(informe.archivos).toEqual(['1_RecepcionDTE.xml', '3_ResultadoDTE.xml'])
    expect(xmllint(files['1_RecepcionDTE.xml']!, 'RespuestaEnvioDTE_v10.xsd')).toBe('')
    expect(text(files['1_RecepcionDTE.xml']!)).toContain('<EstadoRecepEnv>2</EstadoRecepEnv>')
    expect(text(files['3_ResultadoDTE.xml']!)).not.toContain('<EstadoDTE>0</EstadoDTE>')
  })

  test('a DTE amount changed after signing: its own signature and the envelope\'s fail; reported, nothing accepted', async () => {
    const original = text(envelopeFor(empresa, 11))
    const total = /<MntTotal>(\d+)<\/MntTotal>/.exec(original)![1]!
    const { informe } = await answer(empresa, Buffer.from(original.replace(`<MntTotal>${total}</MntTotal>`, `<MntTotal>${Number(total) + 1}</MntTotal>`), 'latin1'))
    const mine = informe.documentos[0]!
    expect(mine.checks.filter((c) => !c.ok).map((c) => c.check)).toEqual(expect.arrayContaining(['firma_envio', 'firma_dte', 'ted']))
    expect(mine).toMatchObject({ estado_recep_dte: 1, estado_dte: 2, recibo: false })
  })

  test('a company without an active certificate: 422 CERTIFICATE_REQUIRED, after the file was found to be its set', async () => {
    expect((await refusal(sinCertificado, envelopeFor(sinCertificado))).code).toBe('CERTIFICATE_REQUIRED')
    expect((await refusal(sinCertificado, new Uint8Array([1, 2, 3]))).code).toBe('VALIDATION_ERROR')
  })
})

describe('the duplicate look-up of received envelopes', () => {
  test('a set already imported as received documents: `duplicado` fails and is reported; the answers do not change', async () => {
    const envelope = generateIntercambioEnvelope({ rutReceptor: empresa.empresa.rut, seed: 99, now: NOW })
    const imported = await s.request('POST', '/api/v1/billing/recibidos/importar', {
      headers: { 'X-Api-Key': empresa.writeKey }, body: { xml_base64: Buffer.from(envelope).toString('base64') },
    })
    expect(imported.status).toBe(201)
    const { informe } = await answer(empresa, envelope)
    const mine = informe.documentos[0]!
    expect(mine.checks.find((c) => c.check === 'duplicado')).toMatchObject({ ok: false, detalle: expect.stringContaining('ya fue recibido') })
    expect(mine).toMatchObject({ estado_recep_dte: 0, estado_dte: 0, recibo: true })
  })
})
