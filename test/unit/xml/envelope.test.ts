import { afterAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  buildEnvioBoleta, buildEnvioDte, envelopeBytes, setDteDigest, SET_DTE_ID, SII_RUT, type Caratula, type EnvioInput,
} from '../../../src/xml/envelope'
import { fromLatin1Bytes } from '../../../src/xml/latin1'
import { signDte, verifyXmlSignatures } from '../../../src/xml/signature'
import { buildTed } from '../../../src/xml/ted'
import { makeCertificate, makeTestCaf, testCa, type TestCaf } from '../../support/pki'
import { OFFICIAL_EXAMPLE_FILE, SCHEMAS } from '../../support/xml-tools'

const OFFICIAL_EXAMPLE = fromLatin1Bytes(readFileSync(OFFICIAL_EXAMPLE_FILE))
const DIR = mkdtempSync(join(tmpdir(), 'timbre-envelope-'))
afterAll(() => rmSync(DIR, { recursive: true, force: true }))

const EMISOR = '76543210-3'
const identity = makeCertificate({ rut: '07880442-4', issuer: testCa() })
const CAFS: Readonly<Record<33 | 61 | 39 | 41, TestCaf>> = {
  33: makeTestCaf({ tipoDte: 33 }),
  61: makeTestCaf({ tipoDte: 61 }),
  39: makeTestCaf({ tipoDte: 39 }),
  41: makeTestCaf({ tipoDte: 41 }),
}
const CARATULA: Caratula = {
  rutEmisor: EMISOR, rutEnvia: '7880442-4', rutReceptor: SII_RUT, fchResol: '2026-01-01', nroResol: 0, tmstFirmaEnv: '2026-01-10T10:11:13',
}

// ---- Small signed DTEs, schema-valid, each with a real TED and signed by signDte (as test/unit/xml/signature.test.ts) ----

interface DteParts {
  readonly tipo: 33 | 61 | 39 | 41
  readonly folio: number
  readonly rutRecep: string
  readonly razonSocialRecep: string
  readonly montoTotal: number
  readonly item1: string
  /** Encabezado's children after IdDoc's TipoDTE/Folio/FchEmis group is closed, and the body up to the TED. */
  readonly idDocExtra: string
  readonly emisor: string
  readonly receptor: string
  readonly totales: string
  readonly body: string
}

/** Stamps the TED, closes Documento with TmstFirma, and signs; returned as stored: declaration, then the DTE. */
function signed(p: DteParts): string {
  const ted = buildTed({
    rutEmisor: EMISOR, tipoDte: p.tipo, folio: p.folio, fechaEmision: '2026-01-10', rutReceptor: p.rutRecep,
    razonSocialReceptor: p.razonSocialRecep, montoTotal: p.montoTotal, item1: p.item1, timestamp: '2026-01-10T10:11:12',
  }, CAFS[p.tipo].caf)
  const unsigned = `<?xml version="1.0" encoding="ISO-8859-1"?>
<DTE version="1.0"><Documento ID="F${p.folio}T${p.tipo}"><Encabezado><IdDoc><TipoDTE>${p.tipo}</TipoDTE><Folio>${p.folio}</Folio><FchEmis>2026-01-10</FchEmis>${p.idDocExtra}</IdDoc>` +
    `${p.emisor}${p.receptor}${p.totales}</Encabezado>\n${p.body}\n${ted}<TmstFirma>2026-01-10T10:11:12</TmstFirma></Documento></DTE>\n`
  return signDte(unsigned, identity.signer)
}

const EMISOR_DTE = `<Emisor><RUTEmisor>${EMISOR}</RUTEmisor><RznSoc>Comercializadora Ñandú Limitada</RznSoc><GiroEmis>Venta de café</GiroEmis><Acteco>620100</Acteco><DirOrigen>Av. Irarrázaval 1234</DirOrigen><CmnaOrigen>Ñuñoa</CmnaOrigen></Emisor>`
const RECEPTOR_DTE = '<Receptor><RUTRecep>77777777-7</RUTRecep><RznSocRecep>Ñandú &amp; &quot;Cía&quot; &lt;Ltda&gt;</RznSocRecep><GiroRecep>Comercio</GiroRecep><DirRecep>Calle 1</DirRecep><CmnaRecep>Santiago</CmnaRecep></Receptor>'
const ITEM = 'Café molido Ñuble & "Sur"'
const DETALLE = '<Detalle><NroLinDet>1</NroLinDet><NmbItem>Café molido Ñuble &amp; &quot;Sur&quot;</NmbItem><QtyItem>1</QtyItem><PrcItem>1000</PrcItem><MontoItem>1000</MontoItem></Detalle>'
const TOTALES_AFECTO = '<Totales><MntNeto>1000</MntNeto><TasaIVA>19</TasaIVA><IVA>190</IVA><MntTotal>1190</MntTotal></Totales>'

/** Factura electrónica 33 (DTE_v10.xsd Documento). */
function factura33(folio: number): string {
  return signed({
    tipo: 33, folio, rutRecep: '77777777-7', razonSocialRecep: 'Ñandú & "Cía" <Ltda>', montoTotal: 1190, item1: ITEM,
    idDocExtra: '', emisor: EMISOR_DTE, receptor: RECEPTOR_DTE, totales: TOTALES_AFECTO, body: DETALLE,
  })
}

/** Nota de crédito 61 cancelling factura 33 folio `refFolio` (Referencia with CodRef 1, docs/sii-protocol.md §2.2). */
function notaCredito61(folio: number, refFolio: number): string {
  const referencia = `<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>33</TpoDocRef><FolioRef>${refFolio}</FolioRef><FchRef>2026-01-10</FchRef><CodRef>1</CodRef><RazonRef>Anula factura</RazonRef></Referencia>`
  return signed({
    tipo: 61, folio, rutRecep: '77777777-7', razonSocialRecep: 'Ñandú & "Cía" <Ltda>', montoTotal: 1190, item1: ITEM,
    idDocExtra: '', emisor: EMISOR_DTE, receptor: RECEPTOR_DTE, totales: TOTALES_AFECTO, body: `${DETALLE}\n${referencia}`,
  })
}

const EMISOR_BOLETA = `<Emisor><RUTEmisor>${EMISOR}</RUTEmisor><RznSocEmisor>Comercializadora Ñandú Limitada</RznSocEmisor><GiroEmisor>Venta de café</GiroEmisor><DirOrigen>Av. Irarrázaval 1234</DirOrigen><CmnaOrigen>Ñuñoa</CmnaOrigen></Emisor>`
const RECEPTOR_BOLETA = '<Receptor><RUTRecep>66666666-6</RUTRecep></Receptor>'

/** Boleta 39 in EnvioBOLETA_v11.xsd BOLETADefType: IndServicio mandatory, Emisor tags differ, gross amounts (docs/sii-protocol.md §7.2). */
function boleta39(folio: number): string {
  return signed({
    tipo: 39, folio, rutRecep: '66666666-6', razonSocialRecep: 'Consumidor final', montoTotal: 1190, item1: ITEM,
    idDocExtra: '<IndServicio>3</IndServicio>', emisor: EMISOR_BOLETA, receptor: RECEPTOR_BOLETA,
    totales: '<Totales><MntNeto>1000</MntNeto><IVA>190</IVA><MntTotal>1190</MntTotal></Totales>',
    body: '<Detalle><NroLinDet>1</NroLinDet><NmbItem>Café molido Ñuble &amp; &quot;Sur&quot;</NmbItem><QtyItem>1</QtyItem><PrcItem>1190</PrcItem><MontoItem>1190</MontoItem></Detalle>',
  })
}

/** Boleta exenta 41: MntExe = MntTotal, no IVA (docs/sii-protocol.md §7.2). */
function boleta41(folio: number): string {
  return signed({
    tipo: 41, folio, rutRecep: '66666666-6', razonSocialRecep: 'Consumidor final', montoTotal: 500, item1: 'Libro usado',
    idDocExtra: '<IndServicio>3</IndServicio>', emisor: EMISOR_BOLETA, receptor: RECEPTOR_BOLETA,
    totales: '<Totales><MntExe>500</MntExe><MntTotal>500</MntTotal></Totales>',
    body: '<Detalle><NroLinDet>1</NroLinDet><IndExe>1</IndExe><NmbItem>Libro usado</NmbItem><QtyItem>1</QtyItem><PrcItem>500</PrcItem><MontoItem>500</MontoItem></Detalle>',
  })
}

const withoutDeclaration = (dte: string): string => dte.replace(/^<\?xml[^>]*\?>\s*/, '').trimEnd()

// ---- Real tools: files written as ISO-8859-1 bytes, xmllint for the schema, xmlsec1 for every signature ----

let fileCount = 0
function writeEnvelope(xml: string): string {
  const path = join(DIR, `envio-${++fileCount}.xml`)
  writeFileSync(path, envelopeBytes(xml))
  return path
}

function xmllint(path: string, xsd: string): { ok: boolean; output: string } {
  const run = spawnSync('xmllint', ['--noout', '--nonet', '--schema', join(SCHEMAS, xsd), path], { encoding: 'utf8' })
  return { ok: run.status === 0, output: run.stderr }
}

const ID_ATTRS = ['--id-attr:ID', 'http://www.sii.cl/SiiDte:Documento', '--id-attr:ID', 'http://www.sii.cl/SiiDte:SetDTE']

/** xmlsec1 on the `n`-th Signature (1-based, document order) of the file, in place; `n` omitted: the only one. */
function xmlsec1(path: string, n?: number): { ok: boolean; output: string } {
  const pick = n === undefined ? [] : ['--node-xpath', `(//*[local-name()='Signature'])[${n}]`]
  const run = spawnSync('xmlsec1', ['--verify', ...ID_ATTRS, ...pick, path], { encoding: 'utf8' })
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` }
}

/**
 * Which of the file's `count` signatures xmlsec1 accepts in place, in document order (the envelope's is the last).
 * One xmlsec1 process per signature, a few at a time: 101 of them one after another took 6 s.
 */
async function xmlsec1All(path: string, count: number): Promise<boolean[]> {
  const verdicts: boolean[] = []
  for (let first = 1; first <= count; first += 8) {
    const batch = Array.from({ length: Math.min(8, count - first + 1) }, (_, i) => {
      const pick = ['--node-xpath', `(//*[local-name()='Signature'])[${first + i}]`]
      return Bun.spawn(['xmlsec1', '--verify', ...ID_ATTRS, ...pick, path], { stdout: 'ignore', stderr: 'ignore' }).exited
    })
    verdicts.push(...(await Promise.all(batch)).map((code) => code === 0))
  }
  return verdicts
}

const countOf = (xml: string, needle: string): number => xml.split(needle).length - 1

// ---- Tests ----

describe('buildEnvioDte', () => {
  const dtes = [factura33(1), notaCredito61(1, 1), factura33(2)]
  const envelope = buildEnvioDte({ dtes, caratula: CARATULA, signer: identity.signer })
  const path = writeEnvelope(envelope)

  test('a 33, a 61 and another 33 validate against EnvioDTE_v10.xsd, with SubTotDTE counted per tipo', () => {
    const schema = xmllint(path, 'EnvioDTE_v10.xsd')
    expect(schema.output).toContain('validates')
    expect(schema.ok).toBe(true)
    expect(envelope).toContain(
      '<Caratula version="1.0"><RutEmisor>76543210-3</RutEmisor><RutEnvia>7880442-4</RutEnvia><RutReceptor>60803000-K</RutReceptor>' +
        '<FchResol>2026-01-01</FchResol><NroResol>0</NroResol><TmstFirmaEnv>2026-01-10T10:11:13</TmstFirmaEnv>' +
        '<SubTotDTE><TpoDTE>33</TpoDTE><NroDTE>2</NroDTE></SubTotDTE><SubTotDTE><TpoDTE>61</TpoDTE><NroDTE>1</NroDTE></SubTotDTE></Caratula>',
    )
  })

  test('root, SetDTE ID and the envelope Signature follow docs/sii-protocol.md §5 and §4.2 (Reference to #SetDoc, last child)', () => {
    expect(envelope).toStartWith(
      '<?xml version="1.0" encoding="ISO-8859-1"?>\n<EnvioDTE xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ' +
        'xsi:schemaLocation="http://www.sii.cl/SiiDte EnvioDTE_v10.xsd" version="1.0">\n<SetDTE ID="SetDoc">\n<Caratula version="1.0">',
    )
    expect(SET_DTE_ID).toBe('SetDoc')
    expect(envelope).toMatch(/<\/SetDTE><Signature xmlns="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#"><SignedInfo>.*<Reference URI="#SetDoc">.*<\/Signature><\/EnvioDTE>\n$/s)
    expect(envelope).not.toMatch(/\r|\sId=/)
  })

  test('xmlsec1 verifies all four signatures in place: three DTEs and the envelope', async () => {
    expect(countOf(envelope, '<Signature ')).toBe(4)
    expect(xmlsec1(path, 4).output).toContain('OK')
    expect(await xmlsec1All(path, 4)).toEqual([true, true, true, true])
    expect(verifyXmlSignatures(envelope).map((c) => [c.uri, c.isValid])).toEqual([['#F1T33', true], ['#F1T61', true], ['#F2T33', true], ['#SetDoc', true]])
  })

  test('each DTE is embedded verbatim, in order, without its XML declaration', () => {
    let from = 0
    for (const dte of dtes) {
      const at = envelope.indexOf(withoutDeclaration(dte), from)
      expect(at).toBeGreaterThan(from)
      from = at + withoutDeclaration(dte).length
    }
    expect(countOf(envelope, '<?xml')).toBe(1)
  })

  test('a DTE cut back out of the envelope verifies standalone too (docs/sii-protocol.md §4.3 item 6: both forms)', () => {
    const second = withoutDeclaration(dtes[1] ?? '')
    const start = envelope.indexOf('<DTE ', envelope.indexOf('</DTE>'))
    const cut = envelope.slice(start, envelope.indexOf('</DTE>', start) + '</DTE>'.length)
    expect(cut).toBe(second)
    const standalone = writeEnvelope(`<?xml version="1.0" encoding="ISO-8859-1"?>\n${cut}\n`)
    expect(xmlsec1(standalone).ok).toBe(true)
    expect(xmllint(standalone, 'DTE_v10.xsd').ok).toBe(true)
  })

  test('the XML declaration and surrounding whitespace make no difference: same envelope, byte for byte', () => {
    const bare = dtes.map((d) => `\n  ${withoutDeclaration(d)}  \n`)
    expect(buildEnvioDte({ dtes: bare, caratula: CARATULA, signer: identity.signer })).toBe(envelope)
  })

  test('the DigestValue written is setDteDigest of the envelope itself', () => {
    const written = /<Reference URI="#SetDoc">.*?<DigestValue>([^<]+)<\/DigestValue>/s.exec(envelope)?.[1]
    expect(written).toBe(setDteDigest(envelope))
  })

  test.each([1, 10, 100])('%i DTEs: schema-valid, and xmlsec1 verifies the envelope and every DTE signature in place', async (n) => {
    const many = Array.from({ length: n }, (_, i) => (i % 3 === 2 ? notaCredito61(i + 1, i) : factura33(i + 1)))
    const built = buildEnvioDte({ dtes: many, caratula: CARATULA, signer: identity.signer })
    const file = writeEnvelope(built)
    expect(xmllint(file, 'EnvioDTE_v10.xsd').ok).toBe(true)
    const n61 = Math.floor(n / 3)
    expect(built).toContain(`<SubTotDTE><TpoDTE>33</TpoDTE><NroDTE>${n - n61}</NroDTE></SubTotDTE>`)
    expect(built.includes('<TpoDTE>61</TpoDTE>')).toBe(n61 > 0)
    expect(await xmlsec1All(file, n + 1)).toEqual(Array<boolean>(n + 1).fill(true))
  }, 60_000)
})

describe('a one-byte change fails the check that covers it', () => {
  const dtes = [factura33(11), factura33(12), notaCredito61(13, 11)]
  const envelope = buildEnvioDte({ dtes, caratula: CARATULA, signer: identity.signer })

  /** Replaces the first `from` after `anchor` with `to` (same length: one byte changes). */
  const spoil = (anchor: string, from: string, to: string) => (xml: string): string => {
    const at = xml.indexOf(from, xml.indexOf(anchor))
    return xml.slice(0, at) + to + xml.slice(at + from.length)
  }

  test.each([
    // A DTE byte: that DTE's own signature fails, and so does the envelope's (its digest covers the DTEs, §4.3 item 5).
    ['a letter in the second DTE', spoil('<Documento ID="F12T33">', 'Irarrázaval', 'Irarrazaval'), [true, false, true, false]],
    ['MntTotal of the third DTE', spoil('<Documento ID="F13T61">', '<MntTotal>1190', '<MntTotal>1191'), [true, true, false, false]],
    // A Caratula byte: only the envelope signature covers it; every DTE signature still verifies.
    ['NroResol in the Caratula', spoil('<Caratula', '<NroResol>0', '<NroResol>1'), [true, true, true, false]],
    ['TmstFirmaEnv in the Caratula', spoil('<Caratula', 'T10:11:13', 'T10:11:14'), [true, true, true, false]],
  ])('%s', async (_, change, expected) => {
    const tampered = change(envelope)
    expect(tampered.length).toBe(envelope.length)
    expect(tampered).not.toBe(envelope)
    expect(await xmlsec1All(writeEnvelope(tampered), 4)).toEqual(expected)
    expect(verifyXmlSignatures(tampered).map((c) => c.isValid)).toEqual(expected)
  })

  test('the untouched envelope passes all four (the control)', async () => {
    expect(await xmlsec1All(writeEnvelope(envelope), 4)).toEqual([true, true, true, true])
  })
})

describe('buildEnvioBoleta', () => {
  const dtes = [boleta39(1), boleta41(1), boleta39(2)]
  const envelope = buildEnvioBoleta({ dtes, caratula: CARATULA, signer: identity.signer })
  const path = writeEnvelope(envelope)

  test('two 39 and a 41 validate against EnvioBOLETA_v11.xsd, with SubTotDTE 39: 2 and 41: 1', () => {
    const schema = xmllint(path, 'EnvioBOLETA_v11.xsd')
    expect(schema.output).toContain('validates')
    expect(schema.ok).toBe(true)
    expect(envelope).toStartWith(
      '<?xml version="1.0" encoding="ISO-8859-1"?>\n<EnvioBOLETA xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ' +
        'xsi:schemaLocation="http://www.sii.cl/SiiDte EnvioBOLETA_v11.xsd" version="1.0">\n<SetDTE ID="SetDoc">',
    )
    expect(envelope).toContain('<SubTotDTE><TpoDTE>39</TpoDTE><NroDTE>2</NroDTE></SubTotDTE><SubTotDTE><TpoDTE>41</TpoDTE><NroDTE>1</NroDTE></SubTotDTE></Caratula>')
    expect(envelope).toEndWith('</Signature></EnvioBOLETA>\n')
  })

  test('xmlsec1 verifies the three boleta signatures and the envelope one in place', async () => {
    expect(await xmlsec1All(path, 4)).toEqual([true, true, true, true])
  })

  test('a one-byte change in a boleta fails it and the envelope; one in the Caratula fails only the envelope', async () => {
    const inBoleta = envelope.replace('Libro usado</NmbItem>', 'Libro usadO</NmbItem>')
    expect(await xmlsec1All(writeEnvelope(inBoleta), 4)).toEqual([true, false, true, false])
    const inCaratula = envelope.replace('<FchResol>2026-01-01', '<FchResol>2026-01-02')
    expect(await xmlsec1All(writeEnvelope(inCaratula), 4)).toEqual([true, true, true, false])
  })

  test('100 boletas: schema-valid and the envelope signature verifies', () => {
    const many = Array.from({ length: 100 }, (_, i) => boleta39(i + 1))
    const file = writeEnvelope(buildEnvioBoleta({ dtes: many, caratula: CARATULA, signer: identity.signer }))
    expect(xmllint(file, 'EnvioBOLETA_v11.xsd').ok).toBe(true)
    expect(xmlsec1(file, 101).ok).toBe(true)
  }, 30_000)
})

describe('the SII official example (docs/sii-protocol.md §4.3 vectors, test/fixtures/sii/README.md)', () => {
  test('setDteDigest reproduces its SetDTE DigestValue 4OTWXyRl… (inclusive C14N in the envelope context)', () => {
    expect(OFFICIAL_EXAMPLE).toContain('<DigestValue>4OTWXyRl5fw3htjTyZXQtYEsC3E=</DigestValue>')
    expect(setDteDigest(OFFICIAL_EXAMPLE)).toBe('4OTWXyRl5fw3htjTyZXQtYEsC3E=')
  })
})

describe('what the builders refuse', () => {
  const input = (dtes: readonly string[], caratula: Partial<Caratula> = {}): EnvioInput => ({ dtes, caratula: { ...CARATULA, ...caratula }, signer: identity.signer })
  const f33 = factura33(21)
  const b39 = boleta39(21)

  test('a boleta in an EnvioDTE, and anything but a boleta in an EnvioBOLETA (docs/sii-protocol.md §1.1)', () => {
    expect(() => buildEnvioDte(input([f33, b39]))).toThrow('buildEnvioDte: dtes[1] is a DTE 39, which belongs in EnvioBOLETA, not EnvioDTE')
    expect(() => buildEnvioBoleta(input([b39, f33]))).toThrow('buildEnvioBoleta: dtes[1] is a DTE 33, which belongs in EnvioDTE, not EnvioBOLETA')
    expect(() => buildEnvioBoleta(input([notaCredito61(22, 21)]))).toThrow(/DTE 61, which belongs in EnvioDTE/)
  })

  test.each([
    ['no DTE', () => buildEnvioDte(input([])), /at least one DTE/],
    ['501 boletas (EnvioBOLETA_v11.xsd allows 500)', () => buildEnvioBoleta(input(Array<string>(501).fill(b39))), /501 DTEs; EnvioBOLETA_v11.xsd allows at most 500/],
    ['an envelope instead of a DTE', () => buildEnvioDte(input([buildEnvioDte(input([f33]))])), /must be one <DTE> element/],
    ['text after the DTE', () => buildEnvioDte(input([`${f33}<!-- -->`])), /must be one <DTE> element/],
    ['two DTEs in one string', () => buildEnvioDte(input([`${withoutDeclaration(f33)}${withoutDeclaration(factura33(22))}`])), /2 DTE elements/],
    ['an unsigned DTE', () => buildEnvioDte(input([withoutDeclaration(f33).replace(/<Signature .*<\/Signature>/s, '')])), /not signed/],
    ['the same DTE twice (duplicate xs:ID)', () => buildEnvioDte(input([f33, f33])), /dtes\[1\] has the ID "F21T33", already used/],
    ['a DTE of another issuer', () => buildEnvioDte(input([f33], { rutEmisor: '11111111-1' })), /not issued by the Caratula's RutEmisor 11111111-1/],
    ['a RUT with dots', () => buildEnvioDte(input([f33], { rutEnvia: '7.880.442-4' })), /caratula.rutEnvia/],
    ['a wrong check digit', () => buildEnvioDte(input([f33], { rutReceptor: '60803000-1' })), /caratula.rutReceptor/],
    ['a leading zero', () => buildEnvioDte(input([f33], { rutEnvia: '07880442-4' })), /caratula.rutEnvia/],
    ['an impossible FchResol', () => buildEnvioDte(input([f33], { fchResol: '2026-02-30' })), /caratula.fchResol/],
    ['a FchResol past FechaType', () => buildEnvioDte(input([f33], { fchResol: '2051-01-01' })), /caratula.fchResol/],
    ['a 7-digit NroResol', () => buildEnvioDte(input([f33], { nroResol: 1_000_000 })), /caratula.nroResol/],
    ['a fractional NroResol', () => buildEnvioDte(input([f33], { nroResol: 1.5 })), /caratula.nroResol/],
    ['a TmstFirmaEnv with a zone', () => buildEnvioDte(input([f33], { tmstFirmaEnv: '2026-01-10T10:11:13Z' })), /caratula.tmstFirmaEnv/],
    ['a TmstFirmaEnv without seconds', () => buildEnvioDte(input([f33], { tmstFirmaEnv: '2026-01-10T10:11' })), /caratula.tmstFirmaEnv/],
  ])('%s', (_, build, message) => {
    expect(build).toThrow(message)
  })
})

describe('envelopeBytes', () => {
  test('ISO-8859-1, one byte per character, as the declaration says; characters outside Latin-1 throw', () => {
    const envelope = buildEnvioDte({ dtes: [factura33(31)], caratula: CARATULA, signer: identity.signer })
    const bytes = envelopeBytes(envelope)
    expect(bytes.length).toBe(envelope.length)
    expect(fromLatin1Bytes(bytes)).toBe(envelope)
    expect(bytes[envelope.indexOf('Ñuñoa')]).toBe(0xd1)
    expect(() => envelopeBytes(envelope.replace('Ñuñoa', 'Ñuñoa €'))).toThrow(RangeError)
  })
})
