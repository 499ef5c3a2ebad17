// A supplier's EnvioDTE as DESIGN §13 receives it (src/xml/received-envio.ts): envelopes built with Timbre's own issuance
// pieces (buildDteXml, buildTed with a CAF of the simulator's authority, signDte, buildEnvioDte), then spoiled one way
// at a time. Every code of docs/decisions/intercambio.md "Receipt checks and codes" is reached; each received DTE comes
// out as a standalone file xmlsec1 verifies and DTE_v10.xsd accepts.
import { afterAll, describe, expect, test } from 'bun:test'
import { generateKeyPairSync } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { EmitirDte } from '../../../../src/domain/emision'
import { CHECK_NAMES, type CheckName } from '../../../../src/domain/intercambio'
import { authorityKeys } from '../../../../src/xml/authority-keys'
import { buildDteXml, tedDataFor, type EmpresaEmisora } from '../../../../src/xml/dte-xml'
import { buildEnvioDte, envelopeBytes } from '../../../../src/xml/envelope'
import { fromLatin1Bytes, toLatin1Bytes } from '../../../../src/xml/latin1'
import { checkReceivedEnvio, type ReceivedEnvio, type ReceptionContext } from '../../../../src/xml/received-envio'
import { buildRecepcionEnvio, readRespuestaDte } from '../../../../src/xml/respuesta-dte'
import { signDte } from '../../../../src/xml/signature'
import { buildTed, type TedData } from '../../../../src/xml/ted'
import { makeCertificate, makeTestCaf, testCa, testCafAuthority, type CafAuthority, type TestCaf } from '../../../support/pki'
import { SCHEMAS, schemaErrors } from '../../../support/xml-tools'

const DIR = mkdtempSync(join(tmpdir(), 'timbre-recepcion-'))
afterAll(() => rmSync(DIR, { recursive: true, force: true }))

const EMISOR = '76543210-3'  // makeTestCaf's company
const EMPRESA = '76086428-5'  // the company that receives
const OTRA_EMPRESA = '77777777-7'
const identity = makeCertificate({ rut: '07880442-4', issuer: testCa() })
const CAF_33 = makeTestCaf({ tipoDte: 33 })  // signed by the simulator's authority, IDK 900
const KEYS = authorityKeys({ allowSimulator: true })

const EMPRESA_EMISORA: EmpresaEmisora = {
  rut: EMISOR, razon_social: 'Comercializadora Ñandú Limitada', giro: 'Venta de café', acteco: [620100],
  direccion: 'Av. Irarrázaval 1234', comuna: 'Ñuñoa', ciudad: 'Santiago',
}

function factura(receptorRut: string): EmitirDte {
  return {
    tipo_dte: 33,
    fecha_emision: '2026-01-10',
    receptor: { rut: receptorRut, razon_social: 'Ferretería Ñuble & "Cía" Ltda.', giro: 'Ferretería', direccion: 'Calle 1', comuna: 'Chillán', ciudad: 'Chillán' },
    detalle: [{ nombre: 'Martillo carpintero 16 oz', cantidad: 3, precio: 8990 }, { nombre: 'Clavos', cantidad: 2, precio: 2490 }],
  }
}

interface DteOptions {
  readonly folio: number
  readonly receptor?: string
  readonly caf?: TestCaf
  /** Changes to the TED's data after it was computed from the document, before it is stamped (a TED that lies). */
  readonly ted?: Partial<TedData>
  /** Changes to the unsigned text, before signing (a document ID other than F<folio>T33, say). */
  readonly unsigned?: (xml: string) => string
}

/** One signed DTE 33 as Timbre issues it: the document, its TED stamped with the CAF, the signature. */
function dte(o: DteOptions): string {
  const input = { empresa: EMPRESA_EMISORA, folio: o.folio, request: factura(o.receptor ?? EMPRESA), today: '2026-01-10' }
  const ted = buildTed({ ...tedDataFor(input), timestamp: '2026-01-10T10:11:12', ...o.ted }, (o.caf ?? CAF_33).caf)
  const unsigned = buildDteXml({ ...input, ted, tmstFirma: '2026-01-10T10:11:12' })
  return signDte((o.unsigned ?? ((x) => x))(unsigned), identity.signer)
}

function envio(dtes: readonly string[], rutReceptor = EMPRESA): Uint8Array {
  const caratula = { rutEmisor: EMISOR, rutEnvia: '7880442-4', rutReceptor, fchResol: '2026-01-01', nroResol: 0, tmstFirmaEnv: '2026-01-10T10:11:13' }
  return envelopeBytes(buildEnvioDte({ dtes, caratula, signer: identity.signer }))
}

function ctx(overrides: Partial<ReceptionContext> = {}): ReceptionContext {
  return { rutEmpresa: EMPRESA, authorityKeys: KEYS, isDuplicate: () => false, ...overrides }
}

/** Latin-1 text edits on bytes (the envelope's text is ISO-8859-1). */
function edit(bytes: Uint8Array, change: (text: string) => string): Uint8Array {
  return toLatin1Bytes(change(fromLatin1Bytes(bytes)))
}

const failed = (r: { checks: readonly { check: CheckName; ok: boolean }[] }): CheckName[] => r.checks.filter((c) => !c.ok).map((c) => c.check)

let fileCount = 0
function xmlsec1Standalone(bytes: Uint8Array): { ok: boolean; output: string } {
  const path = join(DIR, `dte-${++fileCount}.xml`)
  writeFileSync(path, bytes)
  const run = spawnSync('xmlsec1', ['--verify', '--id-attr:ID', 'http://www.sii.cl/SiiDte:Documento', path], { encoding: 'utf8' })
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` }
}

describe('a good envelope', () => {
  const dtes = [dte({ folio: 1 }), dte({ folio: 2 })]
  const bytes = envio(dtes)
  let received: ReceivedEnvio

  test('is conforme (0) with its three envelope checks passed, and names its SetDTE, RUTs and DigestValue', async () => {
    received = await checkReceivedEnvio(bytes, ctx())
    expect(received).toMatchObject({
      estadoRecepEnv: 0, glosa: 'Envio Recibido Conforme', envioDteId: 'SetDoc', rutEmisor: EMISOR, rutEnvia: '7880442-4', rutReceptor: EMPRESA,
    })
    expect(received.checks).toEqual([
      { check: 'schema', ok: true, detalle: '' }, { check: 'firma_envio', ok: true, detalle: '' }, { check: 'receptor_envio', ok: true, detalle: '' },
    ])
    const written = /<Reference URI="#SetDoc">.*?<DigestValue>([^<]+)<\/DigestValue>/s.exec(fromLatin1Bytes(bytes))?.[1]
    expect(received.digest).toBe(written!)
  })

  test('lists both DTEs, every one of the nine checks passed, estado 0, with the record\'s values', () => {
    expect(received.documentos).toHaveLength(2)
    for (const [i, d] of received.documentos.entries()) {
      expect(d.checks.map((c) => c.check)).toEqual([...CHECK_NAMES])
      expect(failed(d)).toEqual([])
      expect(d).toMatchObject({
        tipoDte: 33, folio: i + 1, fechaEmision: '2026-01-10', rutEmisor: EMISOR, razonSocialEmisor: 'Comercializadora Ñandú Limitada',
        rutReceptor: EMPRESA, montoNeto: 31950, montoExento: null, iva: 6071, montoTotal: 38021, estadoRecepDte: 0, glosa: 'DTE Recibido OK',
      })
    }
  })

  test('each DTE comes out standalone: the envelope\'s text behind an ISO-8859-1 declaration, valid, and xmlsec1 verifies it', () => {
    for (const [i, d] of received.documentos.entries()) {
      const text = fromLatin1Bytes(d.xml)
      expect(text).toBe(`<?xml version="1.0" encoding="ISO-8859-1"?>\n${dtes[i]!.replace(/^<\?xml[^>]*\?>\s*/, '').trimEnd()}`)
      expect(schemaErrors(d.xml, 33)).toEqual([])
      const verdict = xmlsec1Standalone(d.xml)
      expect(verdict.output).toContain('OK')
      expect(verdict.ok).toBe(true)
    }
  })

  test('the same envelope re-encoded as UTF-8 passes too, and its DTEs still come out as ISO-8859-1 that xmlsec1 verifies', async () => {
    const utf8 = new TextEncoder().encode(fromLatin1Bytes(bytes).replace('encoding="ISO-8859-1"', 'encoding="UTF-8"'))
    const again = await checkReceivedEnvio(utf8, ctx())
    expect(again.estadoRecepEnv).toBe(0)
    expect(again.documentos.map((d) => d.estadoRecepDte)).toEqual([0, 0])
    expect(again.documentos[0]!.razonSocialEmisor).toBe('Comercializadora Ñandú Limitada')
    expect(xmlsec1Standalone(again.documentos[0]!.xml).ok).toBe(true)
  })
})

/** The acuse de recibo of a reception, as the service will build it from the result. */
function acuse(r: ReceivedEnvio): Uint8Array {
  return buildRecepcionEnvio({
    rutResponde: EMPRESA, rutRecibe: r.rutEmisor ?? EMISOR, idRespuesta: 1, tmst: new Date('2026-01-12T13:00:00Z'),
    envio: {
      nmbEnvio: 'envio.xml', fchRecep: new Date('2026-01-12T12:59:00Z'), codEnvio: 1, envioDteId: r.envioDteId ?? '', digest: r.digest,
      rutEmisor: r.rutEmisor, rutReceptor: r.rutReceptor, estadoRecepEnv: r.estadoRecepEnv, glosa: r.glosa, documentos: r.documentos,
    },
  }, identity.signer)
}

describe('the acuse de recibo of a reception', () => {
  test('built from the result (a mixed envelope: one good, one duplicate, one for another receiver), valid and read back with the same codes', async () => {
    const r = await checkReceivedEnvio(envio([dte({ folio: 1 }), dte({ folio: 2 }), dte({ folio: 3, receptor: OTRA_EMPRESA })]), ctx({ isDuplicate: (_r, _t, f) => f === 2 }))
    const bytes = acuse(r)
    const path = join(DIR, `acuse-${++fileCount}.xml`)
    writeFileSync(path, bytes)
    expect(spawnSync('xmllint', ['--noout', '--nonet', '--schema', join(SCHEMAS, 'RespuestaEnvioDTE_v10.xsd'), path]).status).toBe(0)
    expect(readRespuestaDte(bytes)).toMatchObject({
      kind: 'recepcion', signatureOk: true,
      envios: [{ envioDteId: 'SetDoc', estadoRecepEnv: 0, documentos: [{ folio: 1, estadoRecepDte: 0 }, { folio: 2, estadoRecepDte: 4 }, { folio: 3, estadoRecepDte: 3 }] }],
    })
  })

  test('an unreadable file still gets a valid acuse (91)', async () => {
    const bytes = acuse(await checkReceivedEnvio(new TextEncoder().encode('no soy XML'), ctx()))
    const path = join(DIR, `acuse-${++fileCount}.xml`)
    writeFileSync(path, bytes)
    expect(spawnSync('xmllint', ['--noout', '--nonet', '--schema', join(SCHEMAS, 'RespuestaEnvioDTE_v10.xsd'), path]).status).toBe(0)
    expect(readRespuestaDte(bytes)).toMatchObject({ envios: [{ estadoRecepEnv: 91, documentos: [] }] })
  })
})

describe('envelope-level failures: the envelope\'s code, and every document fails with the matching one', () => {
  test('a forged envelope signature (SetDTE changed after signing): 2, documents 1 by firma_envio', async () => {
    const forged = edit(envio([dte({ folio: 1 })]), (t) => t.replace('<NroResol>0</NroResol>', '<NroResol>1</NroResol>'))
    const r = await checkReceivedEnvio(forged, ctx())
    expect(r.estadoRecepEnv).toBe(2)
    expect(r.glosa).toStartWith('Envio Rechazado - Error de Firma: el DigestValue no corresponde al SetDTE')
    expect(failed(r)).toEqual(['firma_envio'])
    expect(r.documentos.map((d) => [d.estadoRecepDte, failed(d)])).toEqual([[1, ['firma_envio']]])
    expect(r.documentos[0]!.glosa).toStartWith('DTE No Recibido - Error de Firma')
  })

  test('an envelope signed by a key other than its RSAKeyValue: 2', async () => {
    const other = makeCertificate({ rut: '07880442-4', keySlot: 3 })
    const signed = fromLatin1Bytes(envio([dte({ folio: 1 })]))
    const modulus = /<Modulus>([^<]+)<\/Modulus>/g
    const moduli = [...signed.matchAll(modulus)].map((m) => m[1])
    // The envelope's own Signature is the last one: put another key's modulus in it.
    const lastAt = signed.lastIndexOf(`<Modulus>${moduli.at(-1)}</Modulus>`)
    const swapped = `${signed.slice(0, lastAt)}<Modulus>${other.signer.modulusBase64}</Modulus>${signed.slice(lastAt + `<Modulus>${moduli.at(-1)}</Modulus>`.length)}`
    const r = await checkReceivedEnvio(toLatin1Bytes(swapped), ctx())
    expect(r.estadoRecepEnv).toBe(2)
    expect(r.checks.find((c) => c.check === 'firma_envio')?.detalle).toBe('la SignatureValue no verifica con la llave RSAKeyValue del firmante')
  })

  test('addressed to another company: 3, documents 3 by receptor_envio (their own receptor check fails as well)', async () => {
    const r = await checkReceivedEnvio(envio([dte({ folio: 1 })], OTRA_EMPRESA), ctx())
    expect(r.estadoRecepEnv).toBe(3)
    expect(r.glosa).toBe(`Envio Rechazado - RUT Receptor No Corresponde: la carátula dirige el envío a ${OTRA_EMPRESA}, no a ${EMPRESA}`)
    expect(r.rutReceptor).toBe(OTRA_EMPRESA)
    expect(r.documentos.map((d) => [d.estadoRecepDte, failed(d)])).toEqual([[3, ['receptor_envio']]])
  })

  test('a schema error: 1, documents 99 by schema, still every DTE listed', async () => {
    const invalid = edit(envio([dte({ folio: 1 }), dte({ folio: 2 })]), (t) => t.replace('<NroResol>0</NroResol>', '<NroResol>x</NroResol>'))
    const r = await checkReceivedEnvio(invalid, ctx())
    expect(r.estadoRecepEnv).toBe(1)
    expect(r.glosa).toMatch(/^Envio Rechazado - Error de Schema: .*NroResol/)
    expect(failed(r)).toEqual(['schema', 'firma_envio'])
    expect(r.documentos.map((d) => d.estadoRecepDte)).toEqual([99, 99])
    expect(failed(r.documentos[0]!)).toEqual(['schema', 'firma_envio'])
  })
})

describe('document failures inside a conforme envelope (0)', () => {
  test('a DTE whose own signature is broken: that document 1 by firma_dte, the other 0', async () => {
    const broken = dte({ folio: 1 }).replace('<GiroRecep>Ferretería</GiroRecep>', '<GiroRecep>Ferreteria</GiroRecep>')
    const r = await checkReceivedEnvio(envio([broken, dte({ folio: 2 })]), ctx())
    expect(r.estadoRecepEnv).toBe(0)
    expect(r.documentos.map((d) => [d.estadoRecepDte, failed(d)])).toEqual([[1, ['firma_dte']], [0, []]])
    expect(r.documentos[0]!.glosa).toBe('DTE No Recibido - Error de Firma: reference digest mismatch')
    expect(xmlsec1Standalone(r.documentos[0]!.xml).ok).toBe(false)
  })

  test('a TED that does not match its document (MNT): 99 by ted, though FRMT, the CAF and the signature are good', async () => {
    const r = await checkReceivedEnvio(envio([dte({ folio: 1, ted: { montoTotal: 1 } })]), ctx())
    const [d] = r.documentos
    expect([r.estadoRecepEnv, d!.estadoRecepDte, failed(d!)]).toEqual([0, 99, ['ted']])
    expect(d!.glosa).toBe('DTE No Recibido - Otros: MNT 1 en el TED, 38021 en el documento')
  })

  test('a TED stamped with another issuer\'s RE: 2 by emisor (the ted check records it too)', async () => {
    const caf = makeTestCaf({ tipoDte: 33, rut: '11111111-1' })
    const r = await checkReceivedEnvio(envio([dte({ folio: 1, caf, ted: { rutEmisor: '11111111-1' } })]), ctx())
    const [d] = r.documentos
    expect(d!.estadoRecepDte).toBe(2)
    expect(failed(d!)).toEqual(['ted', 'caf', 'emisor'])
    expect(d!.checks.find((c) => c.check === 'emisor')?.detalle).toBe(`RE 11111111-1 en el TED, ${EMISOR} en el documento`)
    expect(d!.glosa).toBe(`DTE No Recibido - Error en RUT Emisor: RE 11111111-1 en el TED, ${EMISOR} en el documento`)
  })

  test('a CAF not signed by the SII\'s authority (a fresh key under IDK 100): 99 by caf', async () => {
    const caf = makeTestCaf({ tipoDte: 33, authority: testCafAuthority() })
    const r = await checkReceivedEnvio(envio([dte({ folio: 1, caf })]), ctx())
    const [d] = r.documentos
    expect([d!.estadoRecepDte, failed(d!)]).toEqual([99, ['caf']])
    expect(d!.checks.find((c) => c.check === 'caf')?.detalle).toContain('FRMA del CAF no es válida')
  })

  test('a CAF under an IDK no authority uses, or the simulator\'s IDK 900 where simulated CAFs are not accepted: 99 by caf', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 })
    const unknown: CafAuthority = { idk: 555, privateKey, publicKey, keys: new Map([[555, publicKey]]) }
    const r = await checkReceivedEnvio(envio([dte({ folio: 1, caf: makeTestCaf({ tipoDte: 33, authority: unknown }) })]), ctx())
    expect(r.documentos[0]!.checks.find((c) => c.check === 'caf')).toMatchObject({ ok: false, detalle: expect.stringContaining('IDK 555') })
    const production = await checkReceivedEnvio(envio([dte({ folio: 1 })]), ctx({ authorityKeys: authorityKeys({ allowSimulator: false }) }))
    expect([production.documentos[0]!.estadoRecepDte, failed(production.documentos[0]!)]).toEqual([99, ['caf']])
  })

  test('a DTE for another receiver inside an envelope to the company: that document 3 by receptor', async () => {
    const r = await checkReceivedEnvio(envio([dte({ folio: 1, receptor: OTRA_EMPRESA }), dte({ folio: 2 })]), ctx())
    expect(r.estadoRecepEnv).toBe(0)
    expect(r.documentos.map((d) => [d.estadoRecepDte, failed(d)])).toEqual([[3, ['receptor']], [0, []]])
  })

  test('duplicates: a folio already received (isDuplicate) and the same folio twice in the envelope are 4', async () => {
    const twice = dte({ folio: 2, unsigned: (x) => x.replace('ID="F2T33"', 'ID="F2T33bis"') })
    const asked: unknown[] = []
    const isDuplicate = (rut: string, tipo: number, folio: number): boolean => {
      asked.push([rut, tipo, folio])
      return folio === 1
    }
    const r = await checkReceivedEnvio(envio([dte({ folio: 1 }), dte({ folio: 2 }), twice]), ctx({ isDuplicate }))
    expect(r.documentos.map((d) => [d.estadoRecepDte, failed(d)])).toEqual([[4, ['duplicado']], [0, []], [4, ['duplicado']]])
    expect(r.documentos[0]!.glosa).toBe(`DTE No Recibido - DTE Repetido: tipo 33 folio 1 de ${EMISOR} ya fue recibido`)
    expect(r.documentos[2]!.glosa).toBe(`DTE No Recibido - DTE Repetido: tipo 33 folio 2 de ${EMISOR} ya viene antes en este envío`)
    expect(asked).toEqual([[EMISOR, 33, 1], [EMISOR, 33, 2]])
  })

  test('what isDuplicate throws (the caller\'s database, say) is rethrown, not taken for an unreadable file', async () => {
    const isDuplicate = (): boolean => {
      throw new Error('database is locked')
    }
    expect(checkReceivedEnvio(envio([dte({ folio: 1 })]), ctx({ isDuplicate }))).rejects.toThrow('database is locked')
  })
})

describe('files that cannot be read: 91, no documents, never a throw', () => {
  const ENVIO_NS = 'xmlns="http://www.sii.cl/SiiDte"'
  test.each([
    ['garbage bytes', new Uint8Array([0x00, 0xff, 0x13, 0x37, 0x42])],
    ['an empty file', new Uint8Array()],
    ['a PDF', new TextEncoder().encode('%PDF-1.4\n%âãÏÓ\n1 0 obj\n')],
    ['XML that is no EnvioDTE', new TextEncoder().encode('<?xml version="1.0"?><RespuestaDTE xmlns="http://www.sii.cl/SiiDte"/>')],
    ['an EnvioDTE in another namespace', new TextEncoder().encode('<EnvioDTE xmlns="urn:otro"><SetDTE ID="S"/></EnvioDTE>')],
    ['an EnvioDTE that is not well-formed', new TextEncoder().encode(`<EnvioDTE ${ENVIO_NS}><SetDTE ID="S"><Caratula>`)],
    ['an EnvioDTE without SetDTE', new TextEncoder().encode(`<EnvioDTE ${ENVIO_NS} version="1.0"/>`)],
    ['more than 20 MB', new Uint8Array(20 * 1024 * 1024 + 1)],
    ['more than the XSD\'s 2000 DTEs', new TextEncoder().encode(`<EnvioDTE ${ENVIO_NS}><SetDTE ID="S">${'<DTE/>'.repeat(2001)}</SetDTE></EnvioDTE>`)],
  ])('%s', async (_name, bytes) => {
    const r = await checkReceivedEnvio(bytes, ctx())
    expect(r.estadoRecepEnv).toBe(91)
    expect(r.glosa).toStartWith('Envio Rechazado - Archivo Ilegible: ')
    expect(r.documentos).toEqual([])
    expect(r.checks).toEqual([{ check: 'schema', ok: false, detalle: expect.any(String) }])
  })
})

describe('hostile envelopes: every failure is a check result', () => {
  test('a bare EnvioDTE with an empty DTE: 1, its one document listed with failed checks and zeros', async () => {
    const bytes = new TextEncoder().encode('<EnvioDTE xmlns="http://www.sii.cl/SiiDte"><SetDTE ID="S"><DTE><Documento/></DTE></SetDTE></EnvioDTE>')
    const r = await checkReceivedEnvio(bytes, ctx())
    expect(r.estadoRecepEnv).toBe(1)
    expect(r.digest).toBeNull()
    const [d] = r.documentos
    expect(d).toMatchObject({ tipoDte: 0, folio: 0, montoTotal: 0, estadoRecepDte: 99 })
    expect(failed(d!)).toEqual(['schema', 'firma_envio', 'receptor_envio', 'firma_dte', 'ted', 'caf', 'receptor', 'emisor'])
  })

  test('huge numbers: a folio of 30 digits and an amount beyond 2^53 are recorded as 0 and fail the document\'s schema check', async () => {
    const bytes = edit(envio([dte({ folio: 1 })]), (t) =>
      t.replace('<Folio>1</Folio>', `<Folio>${'9'.repeat(30)}</Folio>`).replace('<MntTotal>38021</MntTotal>', '<MntTotal>999999999999999999</MntTotal>'))
    const r = await checkReceivedEnvio(bytes, ctx())
    const [d] = r.documentos
    expect([r.estadoRecepEnv, d!.folio, d!.montoTotal, d!.estadoRecepDte]).toEqual([1, 0, 0, 99])
    expect(d!.checks[0]!.ok).toBe(false)
  })

  test('60 000 nested elements inside a DTE: 91 (libxml2, and so the SII, reads no more than 256 levels), answered quickly', async () => {
    const deep = `${'<a>'.repeat(60_000)}${'</a>'.repeat(60_000)}`
    const bytes = edit(envio([dte({ folio: 1 })]), (t) => t.replace('<TmstFirma>', `${deep}<TmstFirma>`))
    const started = performance.now()
    const r = await checkReceivedEnvio(bytes, ctx())
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(r).toMatchObject({ estadoRecepEnv: 91, glosa: 'Envio Rechazado - Archivo Ilegible: el XML anida más de 256 niveles de elementos', documentos: [] })
  })

  test('240 nested elements inside a DTE are read: schema 1, the document listed and failing', async () => {
    const deep = `${'<a>'.repeat(240)}${'</a>'.repeat(240)}`
    const r = await checkReceivedEnvio(edit(envio([dte({ folio: 1 })]), (t) => t.replace('<TmstFirma>', `${deep}<TmstFirma>`)), ctx())
    expect(r.estadoRecepEnv).toBe(1)
    expect(r.documentos.map((d) => d.estadoRecepDte)).toEqual([99])
  })

  test('2000 self-closed DTEs after 2 MB of padding: linear, answered quickly', async () => {
    const bytes = new TextEncoder().encode(
      `<EnvioDTE xmlns="http://www.sii.cl/SiiDte"><SetDTE ID="S"><Caratula>${' '.repeat(2_000_000)}</Caratula>${'<DTE/>'.repeat(2000)}</SetDTE></EnvioDTE>`)
    const started = performance.now()
    const r = await checkReceivedEnvio(bytes, ctx())
    expect(performance.now() - started).toBeLessThan(15_000)
    expect(r.estadoRecepEnv).toBe(1)
    expect(r.documentos).toHaveLength(2000)
    expect(r.documentos.every((d) => d.checks.find((c) => c.check === 'firma_dte')?.detalle === 'no se pudo aislar el texto del DTE en el envío')).toBe(true)
  })

  test('a DTE whose Signature names a Reference other than its document: firma_dte fails', async () => {
    const other = dte({ folio: 1 }).replace('<Reference URI="#F1T33">', '<Reference URI="#otro">')
    const r = await checkReceivedEnvio(envio([other]), ctx())
    expect(r.documentos[0]!.checks.find((c) => c.check === 'firma_dte')).toEqual({ check: 'firma_dte', ok: false, detalle: 'la firma referencia "#otro", no "#F1T33"' })
  })
})
