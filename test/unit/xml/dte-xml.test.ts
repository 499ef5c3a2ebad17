// The unsigned DTE of every fixture (12 types) validates with the real xmllint against the SII's official XSDs, once
// given a shape-valid TED and Signature (the XSD only checks shape; signing is xml/ted.ts and xml/signature.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import type { EmitirDte, Linea } from '../../../src/domain/emision'
import { checkEmision } from '../../../src/domain/emision-rules'
import { TIPOS } from '../../../src/domain/tipos'
import { buildDteXml, documentId, formatDecimal, tedDataFor, xmlText, type DteInput, type EmpresaEmisora, type TedInput } from '../../../src/xml/dte-xml'
import { signDte, verifyXmlSignatures } from '../../../src/xml/signature'
import { buildTed, verifyTed } from '../../../src/xml/ted'
import { dteFixtures } from '../../support/fixtures'
import { makeCertificate, makeTestCaf } from '../../support/pki'
import { SCHEMAS } from '../../support/xml-tools'

const DTE_XSD = join(SCHEMAS, 'DTE_v10.xsd')
const BOLETA_XSD = join(SCHEMAS, 'EnvioBOLETA_v11.xsd')
const TODAY = '2025-06-30'
const TMST = '2025-06-30T10:15:00'

const EMPRESA: EmpresaEmisora = {
  rut: '76.543.210-3',
  razon_social: 'Ferretería y Servicios Ñandú SpA',
  giro: 'Venta al por mayor de materiales de construcción y artículos de ferretería',
  acteco: [466302, 475201],
  direccion: 'Av. Libertador Bernardo O’Higgins 1449, piso 3',
  comuna: 'Santiago',
  ciudad: 'Santiago',
  fecha_resolucion: '2014-08-22',
  numero_resolucion: 80,
}

// ------------------------------------------------------------------------------------------------ helpers

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }
const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

/** A TED with the right shape (DTE_v10.xsd only checks shape); FRMA/FRMT are the SII example's bytes. */
function fakeTed(t: TedInput): string {
  return (
    `<TED version="1.0"><DD><RE>${t.rutEmisor}</RE><TD>${t.tipoDte}</TD><F>${t.folio}</F><FE>${t.fechaEmision}</FE>` +
    `<RR>${t.rutReceptor}</RR><RSR>${escape(t.razonSocialReceptor)}</RSR><MNT>${t.montoTotal}</MNT><IT1>${escape(t.item1)}</IT1>` +
    `<CAF version="1.0"><DA><RE>${t.rutEmisor}</RE><RS>FERRETERIA NANDU</RS><TD>${t.tipoDte}</TD><RNG><D>1</D><H>5000</H></RNG>` +
    '<FA>2025-01-02</FA><RSAPK><M>0a4O6Kbx8Qj3K4iWSP4w7KneZYeJ+g/prihYtIEolKt3cykSxl1zO8vSXu397QhTmsX7SBEudTUx++2zDXBhZw==</M><E>Aw==</E></RSAPK>' +
    '<IDK>100</IDK></DA><FRMA algoritmo="SHA1withRSA">g1AQX0sy8NJugX52k2hTJEZAE9Cuul6pqYBdFxj1N17umW7zG/hAavCALKByHzdYAfZ3LhGTXCai5zNxOo4lDQ==</FRMA></CAF>' +
    `<TSTED>${TMST}</TSTED></DD><FRMT algoritmo="SHA1withRSA">GbmDcS9e/jVC2LsLIe1iRV12Bf6lxsILtbQiCkh6mbjckFCJ7fj/kakFTS06Jo8iS4HXvJj3oYZuey53Krniew==</FRMT></TED>`
  )
}

/** A Signature of the SII profile's shape (xmldsignature_v10.xsd), for schema checks only. */
function dummySignature(id: string): string {
  return (
    '<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo>' +
    '<CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>' +
    '<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"/>' +
    `<Reference URI="#${id}"><Transforms><Transform Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/></Transforms>` +
    '<DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/><DigestValue>hlmQtu/AyjUjTDhM3852wvRCr8w=</DigestValue></Reference>' +
    '</SignedInfo><SignatureValue>AAAA</SignatureValue><KeyInfo><KeyValue><RSAKeyValue><Modulus>AAAA</Modulus><Exponent>AQAB</Exponent>' +
    '</RSAKeyValue></KeyValue><X509Data><X509Certificate>AAAA</X509Certificate></X509Data></KeyInfo></Signature>'
  )
}

function build(request: EmitirDte, folio = 1001): { xml: string; ted: string; input: DteInput } {
  const input: DteInput = { empresa: EMPRESA, folio, request, today: TODAY }
  const ted = fakeTed(tedDataFor(input))
  return { xml: buildDteXml({ ...input, ted, tmstFirma: TMST }), ted, input }
}

/** What the schema wants: a signed DTE (a dummy Signature if it has none), a boleta inside a minimal EnvioBOLETA. */
function forSchema(xml: string, request: EmitirDte, folio: number): string {
  const hasSignature = /<Signature[\s>]/.test(xml)
  const signed = hasSignature ? xml : xml.replace(/<\/DTE>$/, `${dummySignature(documentId(request.tipo_dte, folio))}</DTE>`)
  if (TIPOS[request.tipo_dte].envelope === 'EnvioDTE') return signed
  const caratula =
    '<Caratula version="1.0"><RutEmisor>76543210-3</RutEmisor><RutEnvia>12345678-5</RutEnvia><RutReceptor>60803000-K</RutReceptor>' +
    `<FchResol>2014-08-22</FchResol><NroResol>80</NroResol><TmstFirmaEnv>${TMST}</TmstFirmaEnv>` +
    `<SubTotDTE><TpoDTE>${request.tipo_dte}</TpoDTE><NroDTE>1</NroDTE></SubTotDTE></Caratula>`
  return (
    '<?xml version="1.0" encoding="ISO-8859-1"?><EnvioBOLETA xmlns="http://www.sii.cl/SiiDte" ' +
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0"><SetDTE ID="SetDoc">' +
    `${caratula}${signed.replace(/^<\?xml[^>]*\?>/, '')}</SetDTE>${dummySignature('SetDoc')}</EnvioBOLETA>`
  )
}

/** ISO-8859-1 bytes, refusing anything above U+00FF (Buffer's latin1 would silently keep the low byte). */
function latin1(xml: string): Buffer {
  if (/[^\u0000-\u00ff]/.test(xml)) throw new Error('not ISO-8859-1')
  return Buffer.from(xml, 'latin1')
}

const schemaOf = (request: EmitirDte) => (TIPOS[request.tipo_dte].envelope === 'EnvioBOLETA' ? BOLETA_XSD : DTE_XSD)

/** Runs xmllint once over many files; the schema errors of each file ([] when it validates). */
function xmllint(schema: string, files: readonly string[]): Map<string, string[]> {
  const result = new Map<string, string[]>(files.map((f) => [f, ['no verdict from xmllint']]))
  if (files.length === 0) return result
  const run = Bun.spawnSync(['xmllint', '--noout', '--nonet', '--schema', schema, ...files], { stderr: 'pipe', stdout: 'pipe' })
  const lines = run.stderr.toString('latin1').split('\n')
  for (const file of files) {
    if (lines.includes(`${file} validates`)) result.set(file, [])
    else if (lines.includes(`${file} fails to validate`)) result.set(file, lines.filter((l) => l.startsWith(`${file}:`)))
  }
  return result
}

class Batch {
  private readonly pending: Array<{ file: string; schema: string }> = []
  private verdicts = new Map<string, string[]>()
  constructor(private readonly dir: string) {}
  add(name: string, xml: string, request: EmitirDte, folio: number): string {
    const file = join(this.dir, `${name.replace(/[^\w.-]/g, '_')}.xml`)
    writeFileSync(file, latin1(forSchema(xml, request, folio)))
    this.pending.push({ file, schema: schemaOf(request) })
    return file
  }
  run(): void {
    for (const schema of [DTE_XSD, BOLETA_XSD]) {
      const files = this.pending.filter((p) => p.schema === schema).map((p) => p.file)
      for (const [file, errors] of xmllint(schema, files)) this.verdicts.set(file, errors)
    }
  }
  errorsOf(file: string): string[] {
    return this.verdicts.get(file) ?? ['not validated']
  }
}

const XMLLINT = Bun.which('xmllint')
const dir = mkdtempSync(join(tmpdir(), 'timbre-dte-xml-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const element = (xml: string, name: string): string | null => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? null
const elements = (xml: string, name: string): string[] => [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, 'g'))].map((m) => m[1]!)
const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&')

const factura = (extra: Partial<EmitirDte> = {}): EmitirDte => ({
  tipo_dte: 33,
  fecha_emision: '2025-06-10',
  receptor: { rut: '76.555.835-2', razon_social: 'Comercializadora Ñuñoa Ltda.', giro: 'Ferretería', direccion: 'Av. Irarrázaval 2345', comuna: 'Ñuñoa', ciudad: 'Santiago' },
  detalle: [{ nombre: 'Taladro percutor', cantidad: 2, precio: 45990 }],
  ...extra,
})

// ------------------------------------------------------------------------------------------------ schema

describe('xmllint against the official XSDs', () => {
  const fixtures = dteFixtures()
  const batch = new Batch(dir)
  const files = new Map<string, string>()
  const tampered = new Map<string, string>()

  beforeAll(() => {
    if (!XMLLINT) throw new Error('xmllint is required: apt-get install -y libxml2-utils')
    fixtures.forEach((f, i) => files.set(f.name, batch.add(f.name, build(f.request, 1000 + i).xml, f.request, 1000 + i)))
    // Negative controls: one misplaced element, one out-of-range amount, one text over its XSD length.
    const base = build(factura()).xml
    const controls: Record<string, string> = {
      'order': base.replace(/<TasaIVA>19<\/TasaIVA>(<IVA>\d+<\/IVA>)/, '$1<TasaIVA>19</TasaIVA>'),
      'negative-total': base.replace(/<MntTotal>\d+<\/MntTotal>/, '<MntTotal>-1</MntTotal>'),
      'long-name': base.replace(/<NmbItem>[^<]*<\/NmbItem>/, `<NmbItem>${'x'.repeat(81)}</NmbItem>`),
    }
    for (const [name, xml] of Object.entries(controls)) {
      expect(xml).not.toBe(base)
      tampered.set(name, batch.add(`control-${name}`, xml, factura(), 1001))
    }
    batch.run()
  })

  for (const f of fixtures)
    test(`${f.name} validates against ${TIPOS[f.request.tipo_dte].envelope === 'EnvioBOLETA' ? 'EnvioBOLETA_v11' : 'DTE_v10'}.xsd`, () => {
      expect(batch.errorsOf(files.get(f.name)!)).toEqual([])
    })

  test.each(['order', 'negative-total', 'long-name'])('negative control (%s) fails validation', (name) => {
    const errors = batch.errorsOf(tampered.get(name)!)
    expect(errors.length).toBeGreaterThan(0)
    expect(errors.every((e) => e.includes('Schemas validity error'))).toBe(true)
  })
})

// ------------------------------------------------------------------------------------------------ structure

describe('buildDteXml', () => {
  test('one compact document: declaration, DTE with both namespaces, the container with its ID', () => {
    const { xml } = build(factura(), 60)
    expect(xml.startsWith('<?xml version="1.0" encoding="ISO-8859-1"?><DTE xmlns="http://www.sii.cl/SiiDte" version="1.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><Documento ID="F60T33">')).toBe(true)
    expect(xml).not.toMatch(/>\s+</)
    expect(xml.endsWith('</Documento></DTE>')).toBe(true)
  })

  test.each<[number, string]>([
    [43, '<Liquidacion ID="F7T43">'],
    [110, '<Exportaciones ID="F7T110">'],
    [39, '<Documento ID="F7T39">'],
  ])('tipo %d goes in %s', (tipo, opening) => {
    const fixture = dteFixtures().find((f) => f.request.tipo_dte === tipo)!
    expect(build(fixture.request, 7).xml).toContain(opening)
  })

  test('the TED goes in verbatim, right before TmstFirma', () => {
    const { xml, ted } = build(factura())
    expect(xml).toContain(`</Detalle>${ted}<TmstFirma>${TMST}</TmstFirma></Documento>`)
  })

  test('texts are cut to each element’s XSD length (DESIGN §8), by characters', () => {
    const request = factura({
      receptor: { rut: '76555835-2', razon_social: 'Ñ'.repeat(200), giro: 'g'.repeat(200), direccion: 'd'.repeat(300), comuna: 'c'.repeat(100), ciudad: 'á'.repeat(100) },
      detalle: [{ nombre: 'n'.repeat(200), dsc_item: 'i'.repeat(1000), cantidad: 1, precio: 1, unidad: 'UNID' }],
      referencias: [{ tipo_doc_ref: '801', folio_ref: 1, fecha_ref: '2025-06-01', razon_ref: 'r'.repeat(200) }],
      descuentos_globales: [{ tpo_mov: 'R', tpo_valor: '$', valor_dr: 10, glosa_dr: 'G'.repeat(45) }],
    })
    const { xml } = build(request)
    expect(element(xml, 'RznSocRecep')).toBe('Ñ'.repeat(100))
    expect(element(xml, 'GiroRecep')).toBe('g'.repeat(40))
    expect(element(xml, 'DirRecep')).toBe('d'.repeat(70))
    expect(element(xml, 'CmnaRecep')).toBe('c'.repeat(20))
    expect(element(xml, 'CiudadRecep')).toBe('á'.repeat(20))
    expect(element(xml, 'NmbItem')).toBe('n'.repeat(80))
    expect(element(xml, 'DscItem')).toBe('i'.repeat(1000))
    expect(element(xml, 'RazonRef')).toBe('r'.repeat(90))
    expect(element(xml, 'GlosaDR')).toBe('G'.repeat(45))
    expect(element(xml, 'GiroEmis')).toBe(EMPRESA.giro)
  })

  test('texts are transliterated, escaped, and CR becomes LF', () => {
    const request = factura({ detalle: [{ nombre: '“A&B” <x> — O’Higgins…', dsc_item: 'línea 1\r\nlínea 2\rlínea 3\u0007', cantidad: 1, precio: 1 }] })
    const { xml } = build(request)
    expect(unescape(element(xml, 'NmbItem')!)).toBe(`"A&B" <x> - O'Higgins...`)
    expect(xml).toContain('<NmbItem>"A&amp;B" &lt;x&gt; - O\'Higgins...</NmbItem>')
    expect(element(xml, 'DscItem')).toBe('línea 1\nlínea 2\nlínea 3 ')
    expect(element(xml, 'DirOrigen')).toBe("Av. Libertador Bernardo O'Higgins 1449, piso 3")
  })

  test('RUTs in canonical form (dots removed, uppercase K)', () => {
    const { xml } = build(factura({ receptor: { rut: '96.874.030-k', razon_social: 'X' } }))
    expect(element(xml, 'RUTEmisor')).toBe('76543210-3')
    expect(element(xml, 'RUTRecep')).toBe('96874030-K')
  })

  test('amounts and lines: discounts written with their amounts, decimals only when significant', () => {
    const { xml } = build(factura({ detalle: [{ nombre: 'a', cantidad: 2.5, precio: 1990, descuento_pct: 10, recargo_pct: 0.5 }] }))
    expect(xml).toContain('<QtyItem>2.5</QtyItem><PrcItem>1990</PrcItem><DescuentoPct>10</DescuentoPct><DescuentoMonto>498</DescuentoMonto><RecargoPct>0.5</RecargoPct><RecargoMonto>22</RecargoMonto><MontoItem>4499</MontoItem>')
    expect(xml).toContain('<Totales><MntNeto>4499</MntNeto><TasaIVA>19</TasaIVA><IVA>855</IVA><MntTotal>5354</MntTotal></Totales>')
  })

  test('montos_brutos writes MntBruto 1 (docs/sii-protocol.md §2.3)', () => {
    const { xml } = build(factura({ montos_brutos: true, detalle: [{ nombre: 'a', cantidad: 1, precio: 680 }] }))
    expect(xml).toContain('<FchEmis>2025-06-10</FchEmis><MntBruto>1</MntBruto></IdDoc>')
    expect(xml).toContain('<MntNeto>571</MntNeto><TasaIVA>19</TasaIVA><IVA>109</IVA><MntTotal>680</MntTotal>')
  })

  test('a text correction leaves quantity and price out (spec 2.4)', () => {
    const fixture = dteFixtures().find((f) => f.name === '061/002-corrige-texto.json')!
    const { xml } = build(fixture.request)
    expect(xml).toContain('<NmbItem>Corrige giro del receptor</NmbItem><DscItem>')
    expect(xml).not.toContain('<QtyItem>')
    expect(xml).not.toContain('<PrcItem>')
    expect(element(xml, 'MontoItem')).toBe('0')
  })

  test('SET references are written as given, FolioRef 0 (DESIGN §12)', () => {
    const { xml } = build(factura({ referencias: [{ tipo_doc_ref: 'SET', folio_ref: 0, fecha_ref: '2025-06-10', razon_ref: 'CASO 4267228-1' }] }))
    expect(xml).toContain('<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>SET</TpoDocRef><FolioRef>0</FolioRef><FchRef>2025-06-10</FchRef><RazonRef>CASO 4267228-1</RazonRef></Referencia>')
  })

  test('exempt documents infer IndExeDR 1 (spec 2.10)', () => {
    const { xml } = build(factura({ tipo_dte: 34, descuentos_globales: [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 15 }] }))
    expect(xml).toContain('<DscRcgGlobal><NroLinDR>1</NroLinDR><TpoMov>D</TpoMov><TpoValor>%</TpoValor><ValorDR>15</ValorDR><IndExeDR>1</IndExeDR></DscRcgGlobal>')
    expect(xml).toContain('<Totales><MntExe>78183</MntExe><MntTotal>78183</MntTotal></Totales>')
  })

  test('boleta: IndServicio 3 by default, the boleta’s own issuer tags, no Acteco, no TasaIVA, no FchRef', () => {
    const { xml } = build({
      tipo_dte: 39,
      fecha_emision: '2025-06-10',
      receptor: { rut: '66666666-6', razon_social: 'Consumidor final' },
      detalle: [{ nombre: 'Pan', cantidad: 1, precio: 1190 }],
      referencias: [{ tipo_doc_ref: 'SET', folio_ref: 0, fecha_ref: '2025-06-10', razon_ref: 'CASO-1 1' }],
    })
    expect(xml).toContain('<IdDoc><TipoDTE>39</TipoDTE><Folio>1001</Folio><FchEmis>2025-06-10</FchEmis><IndServicio>3</IndServicio></IdDoc>')
    expect(xml).toContain('<RznSocEmisor>Ferretería y Servicios Ñandú SpA</RznSocEmisor><GiroEmisor>')
    expect(xml).not.toContain('<Acteco>')
    expect(xml).toContain('<Totales><MntNeto>1000</MntNeto><IVA>190</IVA><MntTotal>1190</MntTotal></Totales>')
    // No FchRef in a boleta; its SET reference also carries CodRef SET, as the boleta set asks.
    expect(xml).toContain('<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>SET</TpoDocRef><FolioRef>0</FolioRef><CodRef>SET</CodRef><RazonRef>CASO-1 1</RazonRef></Referencia>')
  })

  test('export in USD: Totales in dollars, OtraMoneda in pesos, IndExe 1 on every line, Customs codes', () => {
    const fixture = dteFixtures().find((f) => f.name === '110/001-dolares.json')!
    const { xml } = build(fixture.request)
    expect(xml).toContain('<Totales><TpoMoneda>DOLAR USA</TpoMoneda><MntExe>6373</MntExe><MntTotal>6373</MntTotal></Totales>')
    expect(xml).toContain('<OtraMoneda><TpoMoneda>PESO CL</TpoMoneda><TpoCambio>950.37</TpoCambio><MntExeOtrMnda>6056708</MntExeOtrMnda><MntTotOtrMnda>6056708</MntTotOtrMnda></OtraMoneda>')
    expect(elements(xml, 'IndExe')).toEqual(['1', '1'])
    expect(xml).toContain('<MontoItem>487.5</MontoItem>')
    expect(xml).toContain('<CodClauVenta>5</CodClauVenta>')
    expect(xml).toContain('<CodPtoEmbarque>906</CodPtoEmbarque><IdAdicPtoDesemb>Port Everglades</IdAdicPtoDesemb>')
    expect(xml).toContain('<TipoBultos><CodTpoBultos>80</CodTpoBultos><CantBultos>4</CantBultos><Marcas>ANDES/MIA 1-4</Marcas></TipoBultos>')
    expect(xml).toContain('<CodPaisRecep>225</CodPaisRecep><CodPaisDestin>225</CodPaisDestin>')
    expect(xml).toContain('<Extranjero><Nacionalidad>225</Nacionalidad></Extranjero>')
    expect(xml).not.toContain('<CmnaRecep>')
  })

  test('export without payment (21): OtraMoneda peso amounts 0, foreign total kept', () => {
    const fixture = dteFixtures().find((f) => f.name === '110/003-sin-pago.json')!
    const { xml } = build(fixture.request)
    expect(xml).toContain('<FmaPagExp>21</FmaPagExp>')
    expect(xml).toContain('<MntTotal>72</MntTotal></Totales><OtraMoneda><TpoMoneda>PESO CL</TpoMoneda><TpoCambio>950.37</TpoCambio><MntExeOtrMnda>0</MntExeOtrMnda><MntTotOtrMnda>0</MntTotOtrMnda>')
  })

  test('export in PESO CL has no OtraMoneda', () => {
    const fixture = dteFixtures().find((f) => f.name === '110/004-pesos.json')!
    expect(build(fixture.request).xml).not.toContain('<OtraMoneda>')
  })

  test('liquidación: TpoDocLiq first, signed amounts, commissions after the references', () => {
    const fixture = dteFixtures().find((f) => f.name === '043/002-anticipo-negativo.json')!
    const { xml } = build(fixture.request)
    expect(xml).toContain('<Detalle><NroLinDet>2</NroLinDet><TpoDocLiq>99</TpoDocLiq><NmbItem>Anticipo entregado el 15 de mayo</NmbItem><MontoItem>-800000</MontoItem></Detalle>')
    expect(xml).toContain('<Comisiones><ValComNeto>187500</ValComNeto><ValComExe>0</ValComExe><ValComIVA>35625</ValComIVA></Comisiones><MntTotal>1844875</MntTotal>')
  })

  test('purchase invoice: ImptoReten and the line’s CodImpAdic', () => {
    const fixture = dteFixtures().find((f) => f.name === '046/001-retencion-total.json')!
    const { xml } = build(fixture.request)
    expect(xml).toContain('<CodImpAdic>15</CodImpAdic><MontoItem>100000</MontoItem>')
    expect(xml).toContain('<IVA>19000</IVA><ImptoReten><TipoImp>15</TipoImp><TasaImp>19</TasaImp><MontoImp>19000</MontoImp></ImptoReten><MntTotal>100000</MntTotal>')
  })

  test('guards: what checkEmision rejects never reaches the bytes', () => {
    const input = { empresa: EMPRESA, folio: 1, today: TODAY, ted: '<TED version="1.0"></TED>', tmstFirma: TMST }
    expect(() => buildDteXml({ ...input, request: factura({ detalle: [{ nombre: 'precio €', cantidad: 1, precio: 1 }] }) })).toThrow(/U\+20ac/i)
    expect(() => buildDteXml({ ...input, request: factura({ receptor: { rut: '1-2', razon_social: 'x' } }) })).toThrow(/RUT/)
    expect(() => buildDteXml({ ...input, request: factura(), ted: '<Other/>' })).toThrow(/TED/)
    expect(() => buildDteXml({ ...input, request: factura(), tmstFirma: '2025-06-30 10:15' })).toThrow(/TmstFirma/)
  })
})

// ------------------------------------------------------------------------------------------------ TED data

describe('tedDataFor', () => {
  test('RE, TD, F, FE, RR, RSR, MNT, IT1 are what the document says (docs/sii-protocol.md §3.1)', () => {
    for (const f of dteFixtures()) {
      const { xml, input } = build(f.request, 42)
      const t = tedDataFor(input)
      const xmlMnt = TIPOS[f.request.tipo_dte].isExport ? /<Totales><TpoMoneda>[^<]*<\/TpoMoneda><MntExe>[^<]*<\/MntExe><MntTotal>([^<]*)</.exec(xml)![1] : /<MntTotal>([^<]*)</.exec(xml)![1]
      expect([t.rutEmisor, t.tipoDte, t.folio, t.fechaEmision, t.rutReceptor, String(t.montoTotal)]).toEqual([
        element(xml, 'RUTEmisor')!,
        f.request.tipo_dte,
        42,
        element(xml, 'FchEmis')!,
        element(xml, 'RUTRecep')!,
        xmlMnt!,
      ])
      expect(t.razonSocialReceptor).toBe(Array.from(unescape(element(xml, 'RznSocRecep')!)).slice(0, 40).join(''))
      expect(t.item1).toBe(Array.from(unescape(element(xml, 'NmbItem')!)).slice(0, 40).join(''))
    }
  })

  test('RSR and IT1 are cut to 40 characters; FE defaults to today; MNT is decimal text in a foreign export', () => {
    const request = factura({ receptor: { rut: '76555835-2', razon_social: 'Ñ'.repeat(60) }, detalle: [{ nombre: '“item” '.repeat(10), cantidad: 1, precio: 1 }] })
    delete request.fecha_emision
    const t = tedDataFor({ empresa: EMPRESA, folio: 1, request, today: TODAY })
    expect(t.razonSocialReceptor).toBe('Ñ'.repeat(40))
    expect(t.item1).toBe('"item" '.repeat(6).slice(0, 40))
    expect(t.fechaEmision).toBe(TODAY)
    const euro = dteFixtures().find((f) => f.name === '110/005-euros-descuento.json')!
    expect(tedDataFor({ empresa: EMPRESA, folio: 1, request: euro.request, today: TODAY }).montoTotal).toBe('2822.2906')
  })

  test('a negative liquidación total is a negative MNT', () => {
    const request: EmitirDte = {
      tipo_dte: 43,
      receptor: { rut: '96874030-K', razon_social: 'Mandante', giro: 'g', direccion: 'd', comuna: 'c' },
      detalle: [{ nombre: 'Anticipo', tipo_doc_liq: '99', monto_item: -1000 }],
      comisiones: [{ tipo_movim: 'C', glosa: 'c', val_com_neto: 0, val_com_exe: 0 }],
    }
    expect(tedDataFor({ empresa: EMPRESA, folio: 1, request, today: TODAY }).montoTotal).toBe(-1190)
  })
})

describe('value formatting', () => {
  test.each<[number, number, string]>([
    [3, 2, '3'],
    [12.5, 2, '12.5'],
    [0.000001, 6, '0.000001'],
    [1e-6, 6, '0.000001'],
    [2822.2906, 4, '2822.2906'],
    [-800000, 0, '-800000'],
    [950.37, 4, '950.37'],
  ])('formatDecimal(%p, %p) = %s', (value, decimals, expected) => expect(formatDecimal(value, decimals)).toBe(expected))

  test('xmlText cleans, normalizes line breaks and cuts', () => {
    expect(xmlText('a\r\nb\u0001c…', 6)).toBe('a\nb c.')
  })
})

// ------------------------------------------------------------------------------------------------ properties

const arbText = fc.string({ unit: fc.constantFrom(...'abcñÑáé &<>"\'“”—…’\u00A0°º0123456789'.split('')), minLength: 1, maxLength: 220 })
const arbLinea: fc.Arbitrary<Linea> = fc.record({
  nombre: arbText.map((s) => s.slice(0, 200)),
  cantidad: fc.integer({ min: 1, max: 10_000_000 }).map((n) => n / 1000),
  precio: fc.integer({ min: 0, max: 2_000_000 }),
  descuento_pct: fc.integer({ min: 0, max: 10000 }).map((n) => n / 100),
})

describe('property: random valid documents validate against the XSD', () => {
  test('33, 39, 61 and 110 with random texts, quantities, prices and discounts', () => {
    if (!XMLLINT) throw new Error('xmllint is required')
    const batch = new Batch(dir)
    const files: Array<[string, EmitirDte]> = []
    fc.assert(
      fc.property(
        fc.constantFrom<EmitirDte['tipo_dte']>(33, 39, 61, 110),
        fc.array(arbLinea, { minLength: 1, maxLength: 8 }),
        arbText,
        fc.option(fc.integer({ min: 1, max: 5000 }).map((n) => n / 100), { nil: undefined }),
        (tipo, detalle, razon, pct) => {
          const request: EmitirDte = {
            tipo_dte: tipo,
            fecha_emision: '2025-06-10',
            // Giro, dirección, comuna (and ciudad on a 110), never blank: what the SII requires of the receptor (docs/decisions/receptor-rules.md).
            receptor: { rut: tipo === 110 ? '55555555-5' : '76555835-2', razon_social: razon.slice(0, 200), giro: `Giro ${razon}`.slice(0, 200), direccion: `Calle ${razon}`.slice(0, 300), comuna: 'Ñuñoa', ciudad: 'Santiago' },
            detalle,
            ...(pct === undefined ? {} : { descuentos_globales: [{ tpo_mov: 'D' as const, tpo_valor: '%' as const, valor_dr: pct, glosa_dr: razon.slice(0, 45) }] }),
            ...(tipo === 61 ? { referencias: [{ tipo_doc_ref: 33, folio_ref: 9, fecha_ref: '2025-06-01', codigo_ref: 3 as const, razon_ref: razon.slice(0, 200) }] } : {}),
            ...(tipo === 110 ? { export_data: { tpo_moneda: 'DOLAR USA' as const, tpo_cambio: 950.37 } } : {}),
          }
          expect(checkEmision(request, TODAY)).toEqual([])
          files.push([batch.add(`prop-${files.length}`, build(request, files.length + 1).xml, request, files.length + 1), request])
        },
      ),
      { numRuns: 60 },
    )
    batch.run()
    for (const [file] of files) expect(batch.errorsOf(file)).toEqual([])
  }, 60_000)
})

// ------------------------------------------------------------------------------------------------ end to end

/** xmlsec1, the referee of docs/sii-protocol.md §4.3: verifies a standalone DTE's signature by its document element's ID. */
function xmlsec1Verifies(file: string, container: string, certificatePem: string): boolean {
  const pem = `${file}.cert.pem`
  writeFileSync(pem, certificatePem)
  const run = Bun.spawnSync(['xmlsec1', '--verify', '--pubkey-cert-pem', pem, '--id-attr:ID', `http://www.sii.cl/SiiDte:${container}`, file], { stderr: 'pipe', stdout: 'pipe' })
  return run.exitCode === 0
}

// The whole chain of issue 4 on one document of each type: tedDataFor → buildTed (real CAF key) → buildDteXml →
// signDte (real certificate). The signed DTE is schema-valid with its real Signature, its TED and its signature verify
// (ours and xmlsec1), and one changed byte breaks each (docs/sii-protocol.md §11).
describe('stamped and signed: one document of each of the 12 types', () => {
  const FOLIO = 17
  const firstOfEach = [...new Map(dteFixtures().map((f) => [f.request.tipo_dte, f] as const)).values()]
  const identity = makeCertificate({ rut: '12345678-5' })
  const signedOf = new Map<string, string>()
  const schemaFiles = new Map<string, string>()
  const batch = new Batch(dir)

  beforeAll(() => {
    for (const f of firstOfEach) {
      const caf = makeTestCaf({ tipoDte: f.request.tipo_dte, folioDesde: 1, folioHasta: 100 }).caf
      const input: DteInput = { empresa: EMPRESA, folio: FOLIO, request: f.request, today: TODAY }
      const ted = buildTed({ ...tedDataFor(input), timestamp: TMST }, caf)
      const signed = signDte(buildDteXml({ ...input, ted, tmstFirma: TMST }), identity.signer)
      signedOf.set(f.name, signed)
      schemaFiles.set(f.name, batch.add(`signed-${f.name}`, signed, f.request, FOLIO))
    }
    batch.run()
  })

  test('covers the 12 types', () => expect(firstOfEach.map((f) => f.request.tipo_dte).sort((a, b) => a - b)).toEqual([33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112]))

  for (const f of firstOfEach) {
    test(`${f.name}: schema-valid with its real Signature; TED and signature verify`, () => {
      const signed = signedOf.get(f.name)!
      expect(batch.errorsOf(schemaFiles.get(f.name)!)).toEqual([])
      expect(verifyTed(signed)).toBe(true)
      expect(verifyXmlSignatures(signed)).toEqual([{ uri: `#${documentId(f.request.tipo_dte, FOLIO)}`, isValid: true }])
    })

    test(`${f.name}: xmlsec1 verifies the standalone DTE, and rejects it with one byte changed`, () => {
      if (!Bun.which('xmlsec1')) throw new Error('xmlsec1 is required: apt-get install -y xmlsec1')
      const signed = signedOf.get(f.name)!
      const container = TIPOS[f.request.tipo_dte].container
      const good = join(dir, `xmlsec-${f.name.replace(/[^\w.-]/g, '_')}.xml`)
      writeFileSync(good, latin1(signed))
      expect(xmlsec1Verifies(good, container, identity.certificatePem)).toBe(true)
      const bad = `${good}.tampered.xml`
      writeFileSync(bad, latin1(signed.replace(/<FchEmis>(\d{4})/, (_, y: string) => `<FchEmis>${Number(y) - 1}`)))
      expect(xmlsec1Verifies(bad, container, identity.certificatePem)).toBe(false)
    })

    test(`${f.name}: one changed byte fails the signature, one changed DD byte fails the TED`, () => {
      const signed = signedOf.get(f.name)!
      const inDocument = signed.replace(/<FchEmis>(\d{4})/, (_, y: string) => `<FchEmis>${Number(y) - 1}`)
      expect(inDocument).not.toBe(signed)
      expect(verifyXmlSignatures(inDocument)[0]!.isValid).toBe(false)
      const inDd = signed.replace(`<F>${FOLIO}</F>`, `<F>${FOLIO + 1}</F>`)
      expect(inDd).not.toBe(signed)
      expect(verifyTed(inDd)).toBe(false)
    })
  }
})
