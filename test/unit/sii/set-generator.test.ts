// The simulator's set-of-tests generator (src/sii/simulator/set-generator.ts): whatever it writes, for any seed and any
// choice of sets, the parser Timbre reads the SII's files with (src/domain/set-pruebas.ts) reads back as exactly the
// generated cases; the layout is the SII's 2026 one; each set has the shape of the SII's real texts
// (test/fixtures/sii/sets/). Decisions: docs/decisions/simulator.md "The set of tests".
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeSetText, parseSetPruebas, type ArchivoSet, type NombreSet } from '../../../src/domain/set-pruebas'
import {
  generateSetPruebas, setsOf, SETS_GENERABLES, type ArchivoGenerado, type SetGenerable,
} from '../../../src/sii/simulator/set-generator'

const FIXTURES = join(import.meta.dir, '../../fixtures/sii/sets')
const ALL = [...SETS_GENERABLES]

function parsed(bytes: Uint8Array): ArchivoSet {
  const decoded = decodeSetText(bytes)
  if (!decoded.ok) throw new Error(`decode: ${JSON.stringify(decoded.error)}`)
  const result = parseSetPruebas(decoded.text)
  if (!result.ok) throw new Error(`parse: ${JSON.stringify(result.errors.slice(0, 5))}`)
  return result.value
}

const text = (bytes: Uint8Array): string => new TextDecoder('latin1').decode(bytes)

/** Everything the generator says it wrote, checked against what the parser read. */
function expectReadBack(generated: ArchivoGenerado, archivo: ArchivoSet): void {
  expect(archivo.sets.map((s) => [s.nombre, s.numeroAtencion])).toEqual(generated.sets.map((s) => [s.nombre, s.numeroAtencion]))
  generated.sets.forEach((g, i) => {
    const set = archivo.sets[i]!
    expect(set.casos.map((c) => [c.caso, c.tipoDte])).toEqual(g.casos.map((c) => [c.caso, c.tipoDte]))
    g.casos.forEach((gc, j) => {
      const c = set.casos[j]!
      expect(c.referenciaCaso === undefined ? undefined : { caso: c.referenciaCaso.caso, razon: c.referenciaCaso.razon }).toEqual(gc.referencia)
      if (gc.items.length > 0) {
        expect(c.documento.detalle.map((l) => l.nombre)).toEqual(gc.items.map((item) => item.nombre))
        gc.items.forEach((item, n) => expect(c.documento.detalle[n]).toMatchObject(item))
      }
      const global = c.documento.descuentos_globales?.find((d) => d.tpo_mov === 'D' && d.glosa_dr === 'DESCUENTO GLOBAL ITEMES AFECTOS')
      expect(global?.valor_dr).toEqual(gc.descuentoGlobalPct)
    })
    expect(set.compras?.map((c) => ({ tipoDocumento: c.tipoDocumento, folio: c.folio, observacion: c.observacion, montoExento: c.montoExento, montoAfecto: c.montoAfecto }))).toEqual(g.compras === undefined ? undefined : [...g.compras])
    expect(set.factorProporcionalidad).toEqual(g.factorProporcionalidad)
    expect(set.guiaFacturada).toEqual(g.guiaFacturada)
    expect(set.guiaAnulada).toEqual(g.guiaAnulada)
  })
}

describe('read back by the parser', () => {
  test('property: any seed, any choice of sets, any first número de atención → the parser reads exactly the generated cases', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.subarray(ALL, { minLength: 1 }),
        fc.integer({ min: 1, max: 99_999_000 }),
        (seed, sets, numeroAtencion) => {
          const generated = generateSetPruebas({ seed, sets, numeroAtencion })
          const archivo = parsed(generated.bytes)
          expectReadBack(generated, archivo)
          expect(archivo.sets.map((s) => s.numeroAtencion)).toEqual(archivo.sets.map((_, i) => numeroAtencion + i))
        },
      ),
      { seed: 2026, numRuns: 300 },
    )
  })

  test('every set, one seed, looked at by hand: cases, references, exempt lines, discounts, customs, the compras grid', () => {
    const generated = generateSetPruebas({ seed: 7, sets: ALL, numeroAtencion: 4_907_369 })
    const archivo = parsed(generated.bytes)
    expectReadBack(generated, archivo)
    const basico = archivo.sets[0]!
    expect(basico.casos.map((c) => c.caso)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8'].map((k) => `4907369-${k}`))
    expect(basico.casos[2]!.documento.detalle.filter((l) => l.ind_exe === 1)).toHaveLength(1)
    expect(basico.casos[1]!.documento.detalle.every((l) => (l.descuento_pct ?? 0) > 0)).toBe(true)
    expect(basico.casos[3]!.documento.descuentos_globales).toHaveLength(1)
    const export1 = archivo.sets.find((s) => s.nombre === 'EXPORTACION 1')!
    expect(export1.casos[0]!.documento.export_data?.tpo_moneda).toMatch(/^(DOLAR USA|EURO|LIBRA EST)$/)
    expect(export1.casos[0]!.documento.export_data?.puerto_desembarque).toMatch(/^\d+$/)
    const compras = archivo.sets.find((s) => s.nombre === 'LIBRO DE COMPRAS')!
    expect(compras.compras?.map((c) => c.tipo)).toEqual([30, 33, 30, 60, 33, 46, 60])
    expect(compras.factorProporcionalidad).toBeGreaterThan(0)
    expect(archivo.sets.map((s) => s.numeroAtencion)).toEqual([4907369, 4907370, 4907371, 4907372, 4907373, 4907374, 4907375, 4907376, 4907377])
  })
})

describe('the SII\'s 2026 layout', () => {
  const bytes = generateSetPruebas({ seed: 11, sets: ALL, numeroAtencion: 5_000_001 }).bytes
  const lines = text(bytes).split('\r\n')

  test('CRLF line ends only, ending in one; ISO-8859-1 with the SII\'s accents as single bytes (ó, ñ), no UTF-8', () => {
    expect(text(bytes).replace(/\r\n/g, '')).not.toMatch(/[\r\n]/)
    expect(text(bytes).endsWith('\r\n')).toBe(true)
    expect(bytes.some((b) => b === 0xf1 || b === 0xd1 || b === 0xf3)).toBe(true)
    expect(decodeSetText(bytes).ok).toBe(true)
    expect([...bytes].some((b) => b === 0xc3)).toBe(false)
  })

  test('the INDICACIONES GENERALES header, then each SET line after a rule of 80 «-», with consecutive números de atención', () => {
    expect(lines[0]).toBe('INDICACIONES GENERALES:')
    expect(parsed(bytes).indicaciones[0]).toBe('INDICACIONES GENERALES:')
    const setLines = lines.flatMap((l, i) => (l.startsWith('SET ') ? [i] : []))
    expect(setLines).toHaveLength(9)
    for (const i of setLines) expect(lines[i - 1]).toBe('-'.repeat(80))
    expect(setLines.map((i) => lines[i])).toEqual([
      'BASICO', 'FACTURA EXENTA', 'GUIA DE DESPACHO', 'FACTURA DE COMPRA', 'EXPORTACION 1', 'EXPORTACION 2', 'LIBRO DE VENTAS', 'LIBRO DE COMPRAS', 'LIBRO DE GUIAS',
    ].map((nombre, n) => `SET ${nombre} - NUMERO DE ATENCION: ${5_000_001 + n}`))
  })

  test('each case is `CASO n-k` over a rule of 14 «=»; columns are tab-separated, the item header first', () => {
    const casos = lines.flatMap((l, i) => (/^CASO \d+-\d+$/.test(l) ? [i] : []))
    expect(casos.length).toBe(8 + 8 + 3 + 3 + 3 + 3)
    for (const i of casos) expect(lines[i + 1]).toBe('='.repeat(14))
    for (const i of casos) expect(lines[i + 2]).toMatch(/^DOCUMENTO\t+[A-Z ]+$/)
    const headers = lines.filter((l) => l.startsWith('ITEM\t'))
    expect(headers.length).toBeGreaterThan(20)
    for (const h of headers) expect(h).toMatch(/^ITEM(\t+(CANTIDAD|PRECIO UNITARIO|VALOR UNITARIO|VALOR LINEA|UNIDAD MEDIDA|DESCUENTO ITEM))+$/)
    expect(lines).toContain('DOCUMENTO\t\tNOTA DE CREDITO ELECTRONICA')
    expect(lines.some((l) => /^RAZON REFERENCIA\tCORRIGE GIRO/.test(l))).toBe(true)
  })

  test('the compras grid between rules of «=», three lines per purchase, and the factor of proportionality after OBSERVACIONES GENERALES', () => {
    const start = lines.indexOf('SET LIBRO DE COMPRAS - NUMERO DE ATENCION: 5000008')
    const block = lines.slice(start, lines.indexOf('-'.repeat(80), start))
    expect(block.filter((l) => /^={74}$/.test(l))).toHaveLength(3)
    expect(block).toContain('OBSERVACIONES GENERALES')
    expect(block.join('\n')).toMatch(/FACTOR DE PROPORCIONALIDAD \nDEL IVA ES DE 0\.\d\d$/m)
  })
})

describe('modelled on the SII\'s real texts', () => {
  const real = (file: string) => parsed(new Uint8Array(readFileSync(join(FIXTURES, file)))).sets[0]!
  const shape = (set: ReturnType<typeof real>) => set.casos.map((c) => [c.tipoDte, c.referenciaCaso?.codigoRef ?? null, c.referenciaCaso?.caso.split('-')[1] ?? null])

  test.each([
    ['basico', 'BASICO', '001-basico.txt'],
    ['exenta', 'FACTURA EXENTA', '004-factura_exenta.txt'],
    ['guia', 'GUIA DE DESPACHO', '005-guia_despacho.txt'],
    ['compra', 'FACTURA DE COMPRA', '008-factura_compra.txt'],
    ['exportacion1', 'EXPORTACION 1', '009-set_exportacion_1.txt'],
    ['exportacion2', 'EXPORTACION 2', '010-set_exportacion_2.txt'],
  ] as const)('%s: the same cases, types and references as the SII\'s %s (%s)', (flag, nombre, file) => {
    for (const seed of [1, 2, 3]) {
      const set = parsed(generateSetPruebas({ seed, sets: [flag], numeroAtencion: 100 }).bytes).sets[0]!
      expect(set.nombre).toBe(nombre as NombreSet)
      expect(shape(set)).toEqual(shape(real(file)))
    }
  })

  test('guías keep the real motivos and traslados; the libro de guías names cases 2 and 3 as 006-libro_guias.txt', () => {
    const archivo = parsed(generateSetPruebas({ seed: 5, sets: ['guia', 'libros'], numeroAtencion: 100 }).bytes)
    const guia = archivo.sets.find((s) => s.nombre === 'GUIA DE DESPACHO')!
    expect(guia.casos.map((c) => [c.documento.ind_traslado, c.documento.tipo_despacho])).toEqual(
      real('005-guia_despacho.txt').casos.map((c) => [c.documento.ind_traslado, c.documento.tipo_despacho]))
    const libro = archivo.sets.find((s) => s.nombre === 'LIBRO DE GUIAS')!
    expect([libro.guiaFacturada, libro.guiaAnulada]).toEqual([2, 3])
  })

  test('the compras grid books the same kinds of purchase as 003-compras.txt, in its order', () => {
    const compras = parsed(generateSetPruebas({ seed: 9, sets: ['libros'], numeroAtencion: 100 }).bytes).sets[0]!
    const kinds = (s: ReturnType<typeof real>) => s.compras?.map((c) => [c.tipo, c.observacion.replace(/\d+$/, 'N'), c.montoExento > 0])
    expect(kinds(compras)).toEqual(kinds(real('003-compras.txt')))
  })
})

describe('seed and choice', () => {
  test('the same seed gives the same bytes; other seeds give other items and amounts', () => {
    const of = (seed: number) => text(generateSetPruebas({ seed, sets: ALL, numeroAtencion: 1 }).bytes)
    expect(of(42)).toBe(of(42))
    const texts = new Set([1, 2, 3, 4, 5].map(of))
    expect(texts.size).toBe(5)
  })

  test.each<[SetGenerable[], NombreSet[]]>([
    [['libros'], ['LIBRO DE COMPRAS']],
    [['libros', 'exenta'], ['FACTURA EXENTA', 'LIBRO DE VENTAS', 'LIBRO DE COMPRAS']],
    [['guia', 'libros'], ['GUIA DE DESPACHO', 'LIBRO DE COMPRAS', 'LIBRO DE GUIAS']],
    [['exportacion2', 'basico'], ['BASICO', 'EXPORTACION 2']],
  ])('%j → %j, in the SII\'s order', (chosen, expected) => {
    expect(setsOf(chosen)).toEqual(expected)
    expect(parsed(generateSetPruebas({ seed: 1, sets: chosen, numeroAtencion: 10 }).bytes).sets.map((s) => s.nombre)).toEqual(expected)
  })

  test('no set chosen is refused', () => {
    expect(() => generateSetPruebas({ seed: 1, sets: [], numeroAtencion: 1 })).toThrow(RangeError)
  })
})
