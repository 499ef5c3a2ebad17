// The per-type table and the code tables agree with the SII's own schemas (test/fixtures/sii/schemas, ISO-8859-1).
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { MONEDAS, TIPOS_DTE, type TipoDte } from '../../../src/domain/emision'
import {
  CLAUSULAS_VENTA,
  IMPUESTOS,
  PAISES,
  TIPOS,
  TIPOS_BULTO,
  aduanaCode,
  allowsRetenciones,
  isLineaExenta,
  type Container,
  type ReceptorRequerido,
} from '../../../src/domain/tipos'
import { SCHEMAS } from '../../support/xml-tools'

const xsd = (file: string) => Buffer.from(readFileSync(join(SCHEMAS, file))).toString('latin1')

/** Enumeration values of a named simpleType (or of the first restriction after `anchor`). */
function enumeration(source: string, anchor: string): string[] {
  const start = source.indexOf(anchor)
  if (start < 0) throw new Error(`${anchor} not found`)
  const end = source.indexOf('</xs:simpleType>', start)
  return [...source.slice(start, end).matchAll(/<xs:enumeration value="([^"]*)"/g)].map((m) => m[1]!)
}

const tiposWhere = (pred: (t: TipoDte) => boolean) => TIPOS_DTE.filter(pred)

describe('TIPOS', () => {
  test('has one entry per TipoDTE of spec 2.1', () => {
    expect(Object.keys(TIPOS).map(Number).sort((a, b) => a - b)).toEqual([...TIPOS_DTE])
  })

  test('containers match the XSD: DTEType in Documento, LIQType in Liquidacion, EXPType in Exportaciones', () => {
    const types = xsd('SiiTypes_v10.xsd')
    const documento = enumeration(types, '<xs:simpleType name="DTEType">').map(Number)
    expect(tiposWhere((t) => TIPOS[t].container === 'Documento' && TIPOS[t].envelope === 'EnvioDTE')).toEqual(documento as TipoDte[])
    expect(tiposWhere((t) => TIPOS[t].container === 'Liquidacion')).toEqual(enumeration(types, '<xs:simpleType name="LIQType">').map(Number) as TipoDte[])
    expect(tiposWhere((t) => TIPOS[t].container === 'Exportaciones')).toEqual(enumeration(types, '<xs:simpleType name="EXPType">').map(Number) as TipoDte[])
  })

  test('boletas go to EnvioBOLETA (its DTEType), everything else to EnvioDTE (docs/sii-protocol.md §1.1)', () => {
    const boleta = enumeration(xsd('EnvioBOLETA_v11.xsd'), '<xs:simpleType name="DTEType">').map(Number)
    expect(tiposWhere((t) => TIPOS[t].envelope === 'EnvioBOLETA')).toEqual(boleta as TipoDte[])
  })

  test('IndServicio values are those the schema of each container accepts', () => {
    const dte = xsd('DTE_v10.xsd')
    const documento = enumeration(dte, '<xs:element name="IndServicio"').map(Number)
    const exportaciones = enumeration(dte.slice(dte.indexOf('<xs:element name="Exportaciones">')), '<xs:element name="IndServicio"').map(Number)
    const boleta = enumeration(xsd('EnvioBOLETA_v11.xsd'), '<xs:element name="IndServicio"').map(Number)
    expect(TIPOS[33].indServicio).toEqual(documento)
    expect(TIPOS[110].indServicio).toEqual(exportaciones)
    expect(TIPOS[39].indServicio).toEqual(boleta)
  })

  test.each<[string, (t: TipoDte) => boolean, TipoDte[]]>([
    ['notes require references (spec 2.3)', (t) => TIPOS[t].requiresReferencias, [56, 61, 111, 112]],
    ['exempt by nature', (t) => TIPOS[t].isExemptOnly, [34, 41, 110, 111, 112]],
    ['carry IVA', (t) => TIPOS[t].carriesIva, [33, 39, 43, 46, 52, 56, 61]],
    ['gross prices (docs/sii-protocol.md §7.2)', (t) => TIPOS[t].hasGrossPrices, [39]],
    ['montos_brutos allowed (DESIGN §12)', (t) => TIPOS[t].allowsMontosBrutos, [33, 56, 61]],
    ['commissions required', (t) => TIPOS[t].comisiones === 'required', [43]],
    ['commissions allowed', (t) => TIPOS[t].comisiones === 'allowed', [46, 56, 61]],
    ['ind_traslado required', (t) => TIPOS[t].requiresIndTraslado, [52]],
    ['tipo_despacho allowed (docs/sii-protocol.md §2.2)', (t) => TIPOS[t].allowsTipoDespacho, [33, 34, 46, 52, 110]],
    ['folios expire after 180 days (DESIGN §8)', (t) => TIPOS[t].foliosExpire, [33, 43, 46, 56, 61]],
    ['no cedible copy (DESIGN §12)', (t) => !TIPOS[t].isCedible, [39, 41, 56, 61, 110, 111, 112]],
    ['no DscRcgGlobal in the schema', (t) => !TIPOS[t].allowsDescuentosGlobales, [43]],
    ['no ImptoReten in the schema', (t) => !TIPOS[t].allowsImpuestos, [34, 39, 41, 110, 111, 112]],
    // SII-FMT v2.2 zone A, fields 57, 60, 61, 62: graded 1 on these types (docs/sii-protocol.md §2.2).
    ['receptor giro required (GiroRecep)', (t) => TIPOS[t].requiredReceptor.includes('giro'), [33, 34, 43, 46, 52]],
    ['receptor direccion required (DirRecep)', (t) => TIPOS[t].requiredReceptor.includes('direccion'), [33, 34, 43, 46, 52, 110]],
    ['receptor comuna required (CmnaRecep)', (t) => TIPOS[t].requiredReceptor.includes('comuna'), [33, 34, 43, 46, 52]],
    ['receptor ciudad required (CiudadRecep)', (t) => TIPOS[t].requiredReceptor.includes('ciudad'), [110]],
  ])('%s', (_, pred, expected) => expect(tiposWhere(pred)).toEqual(expected))

  test('what the XSD makes mandatory in a Receptor is a floor of requiredReceptor (Liquidacion: giro, direccion, comuna)', () => {
    const dte = xsd('DTE_v10.xsd')
    const at = (name: string) => dte.indexOf(`<xs:element name="${name}">`)
    const bounds: Record<Container, [number, number]> = {
      Documento: [at('Documento'), at('Liquidacion')],
      Liquidacion: [at('Liquidacion'), at('Exportaciones')],
      Exportaciones: [at('Exportaciones'), dte.length],
    }
    const tags: Record<ReceptorRequerido, string> = { giro: 'GiroRecep', direccion: 'DirRecep', comuna: 'CmnaRecep', ciudad: 'CiudadRecep' }
    const mandatoryIn = (section: string) =>
      (Object.keys(tags) as ReceptorRequerido[]).filter((field) => {
        const tag = new RegExp(`<xs:element name="${tags[field]}"[^>]*>`).exec(section)![0]
        return !tag.includes('minOccurs="0"')
      })
    for (const [container, [from, to]] of Object.entries(bounds) as Array<[Container, [number, number]]>) {
      const mandatory = mandatoryIn(dte.slice(from, to))
      expect(mandatory).toEqual(container === 'Liquidacion' ? ['giro', 'direccion', 'comuna'] : [])
      for (const t of tiposWhere((t) => TIPOS[t].container === container && TIPOS[t].envelope === 'EnvioDTE'))
        expect(TIPOS[t].requiredReceptor).toEqual(expect.arrayContaining(mandatory))
    }
  })

  test('boletas require no receptor field but the RUT: EnvioBOLETA_v11.xsd has every other one optional, and no GiroRecep', () => {
    const receptor = xsd('EnvioBOLETA_v11.xsd').split('<xs:element name="Receptor">')[1]!.split('</xs:sequence>')[0]!
    const elements = [...receptor.matchAll(/<xs:element name="([A-Za-z]+)"([^>]*)>/g)].map((m) => [m[1], !m[2]!.includes('minOccurs="0"')])
    expect(elements.filter(([, mandatory]) => mandatory).map(([name]) => name)).toEqual(['RUTRecep'])
    expect(elements.map(([name]) => name)).not.toContain('GiroRecep')
    expect(TIPOS[39].requiredReceptor).toEqual([])
    expect(TIPOS[41].requiredReceptor).toEqual([])
  })

  test('a line is exempt when marked, or when the type is exempt by nature', () => {
    expect(isLineaExenta(33, {})).toBe(false)
    expect(isLineaExenta(33, { ind_exe: 1 })).toBe(true)
    expect(isLineaExenta(34, {})).toBe(true)
    expect(isLineaExenta(110, {})).toBe(true)
  })
})

describe('codes', () => {
  test('every supported tax code is in ImpAdicDTEType', () => {
    const xsdCodes = enumeration(xsd('SiiTypes_v10.xsd'), '<xs:simpleType name="ImpAdicDTEType">').map(Number)
    for (const code of Object.keys(IMPUESTOS).map(Number)) expect(xsdCodes).toContain(code)
  })

  test('rates of docs/sii-protocol.md §2.5: 15 total retention 19 %, 27 soft drinks 10 %, 24 liquors 31.5 %, 34 wheat 4 %', () => {
    expect([IMPUESTOS[15], IMPUESTOS[27], IMPUESTOS[24], IMPUESTOS[34]].map((r) => [r!.clase, r!.tasa])).toEqual([
      ['R', 19],
      ['A', 10],
      ['A', 31.5],
      ['R', 4],
    ])
  })

  test('retentions belong to 46 and the notes that reference one', () => {
    expect(allowsRetenciones(46, [])).toBe(true)
    expect(allowsRetenciones(61, [46])).toBe(true)
    expect(allowsRetenciones(61, [33])).toBe(false)
    expect(allowsRetenciones(33, [46])).toBe(false)
  })

  test('MONEDAS is TipMonType', () => {
    expect<string[]>([...MONEDAS]).toEqual(enumeration(xsd('SiiTypes_v10.xsd'), '<xs:simpleType name="TipMonType">'))
  })

  test('Customs codes: digits, or a known label in any case and accent', () => {
    expect(aduanaCode('FOB', CLAUSULAS_VENTA, 2)).toBe(5)
    expect(aduanaCode(' cif ', CLAUSULAS_VENTA, 2)).toBe(1)
    expect(aduanaCode('17', CLAUSULAS_VENTA, 2)).toBe(17)
    expect(aduanaCode('123', CLAUSULAS_VENTA, 2)).toBeNull()
    expect(aduanaCode('Japón', PAISES, 3)).toBe(331)
    expect(aduanaCode('España', PAISES, 3)).toBe(517)
    expect(aduanaCode('0', PAISES, 3)).toBeNull()
    expect(aduanaCode('pallets', TIPOS_BULTO, 3)).toBe(80)
    expect(aduanaCode('Narnia', PAISES, 3)).toBeNull()
  })
})
