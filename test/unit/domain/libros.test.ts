// The certification libros' lines and totals (domain/libros.ts): each LIBRO DE COMPRAS observation booked as the SII's
// formato IECV says, against the SII's own set texts (test/fixtures/sii/sets) parsed by parseSetPruebas, with every
// amount below worked out by hand; the libro de ventas and de guías from plain inputs; and every input the libros
// cannot carry refused as an error naming it, never thrown. Readings: docs/decisions/certificacion.md "Los libros".
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  creditoUsoComun, libroCompras, libroGuias, libroVentas, resumenCompraVentaMismatches, resumenGuiasMismatches, totalesGuias,
  tratamientoDe, type DocumentoVenta, type GuiaEmitida, type LibroComprasInput, type LibroCompraVenta, type LibroError,
  type LibroGuias, type LibroResult, type TratamientoCompra,
} from '../../../src/domain/libros'
import { decodeSetText, parseSetPruebas, type CompraSet, type SetPruebas } from '../../../src/domain/set-pruebas'
import { generateSetPruebas } from '../../../src/sii/simulator/set-generator'

const DIR = join(import.meta.dir, '../../fixtures/sii/sets')
const PROVEEDOR = { rut: '76086428-5', razonSocial: 'Proveedora Ñandú Limitada' }

function setNamed(file: string, nombre: SetPruebas['nombre']): SetPruebas {
  const decoded = decodeSetText(new Uint8Array(readFileSync(join(DIR, file))))
  if (!decoded.ok) throw new Error(decoded.error.message)
  const parsed = parseSetPruebas(decoded.text)
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors))
  const set = parsed.value.sets.find((s) => s.nombre === nombre)
  if (set === undefined) throw new Error(`${file} has no ${nombre}`)
  return set
}

function ok<T>(result: LibroResult<T>): T {
  if (!result.ok) throw new Error(JSON.stringify(result.errors))
  return result.value
}

function errors<T>(result: LibroResult<T>): readonly LibroError[] {
  if (result.ok) throw new Error('expected errors')
  return result.errors
}

function compras(file: string, periodo = '2026-03'): LibroCompraVenta {
  const set = setNamed(file, 'LIBRO DE COMPRAS')
  return ok(libroCompras({ periodo, compras: set.compras ?? [], factorProporcionalidad: set.factorProporcionalidad ?? null, proveedor: PROVEEDOR }))
}

const line = (libro: LibroCompraVenta, tipo: number, folio: number) => {
  const found = libro.detalle.find((d) => d.tipoDoc === tipo && d.folio === folio)
  if (found === undefined) throw new Error(`no line ${tipo}/${folio}`)
  return found
}

describe('libro de compras from the SII\'s set 003-compras.txt (número de atención 414177)', () => {
  const libro = compras('003-compras.txt')

  test('one line per document of the grid, in its order, with the supplier and the period\'s first day', () => {
    expect(libro.operacion).toBe('COMPRA')
    expect(libro.periodo).toBe('2026-03')
    expect(libro.detalle.map((d) => `${d.tipoDoc}/${d.folio}`)).toEqual(['30/234', '33/32', '30/781', '60/451', '33/67', '46/9', '60/211'])
    for (const d of libro.detalle) {
      expect(d).toMatchObject({ fecha: '2026-03-01', rut: '76086428-5', razonSocial: 'Proveedora Ñandú Limitada', tasaImpuesto: 19, referencia: null })
    }
  })

  test('FACTURA DEL GIRO CON DERECHO A CREDITO: IVA recoverable; the exempt amount of the electronic one kept', () => {
    // 53 253 × 19 % = 10 118.07 → 10 118; 11 473 × 19 % = 2 179.87 → 2 180.
    expect(line(libro, 30, 234)).toMatchObject({ montoExento: 0, montoNeto: 53253, montoIva: 10118, ivaUsoComun: 0, ivaNoRecuperable: [], montoTotal: 63371 })
    expect(line(libro, 33, 32)).toMatchObject({ montoExento: 10633, montoNeto: 11473, montoIva: 2180, montoTotal: 24286 })
  })

  test('FACTURA CON IVA USO COMUN: the IVA is IVAUsoComun, none recoverable, and counts in the total', () => {
    // 30 171 × 19 % = 5 732.49 → 5 732.
    expect(line(libro, 30, 781)).toMatchObject({ montoNeto: 30171, montoIva: 0, ivaUsoComun: 5732, montoTotal: 35903 })
  })

  test('ENTREGA GRATUITA DEL PROVEEDOR: IVA no recuperable code 4, MntIVA 0', () => {
    // 12 135 × 19 % = 2 305.65 → 2 306.
    expect(line(libro, 33, 67)).toMatchObject({ montoNeto: 12135, montoIva: 0, ivaNoRecuperable: [{ codigo: 4, monto: 2306 }], montoTotal: 14441 })
  })

  test('COMPRA CON RETENCION TOTAL DEL IVA (46): code 15 and IVARetTotal equal to the IVA, total = neto', () => {
    // 10 632 × 19 % = 2 020.08 → 2 020; MntTotal = neto + IVA − IVA retenido total.
    expect(line(libro, 46, 9)).toMatchObject({
      montoNeto: 10632, montoIva: 2020, otrosImpuestos: [{ codigo: 15, tasa: 19, monto: 2020 }], ivaRetenidoTotal: 2020, montoTotal: 10632,
    })
  })

  test('paper notes of credit (60) over a paper and an electronic invoice: booked with credit', () => {
    expect(line(libro, 60, 451)).toMatchObject({ montoNeto: 2928, montoIva: 556, montoTotal: 3484 })
    expect(line(libro, 60, 211)).toMatchObject({ montoNeto: 9053, montoIva: 1720, montoTotal: 10773 })
  })

  test('TotalesPeriodo per type, ascending; FctProp 0.60 and its credit only where there is IVA de uso común', () => {
    expect(libro.resumen).toEqual([
      {
        tipoDoc: 30, cantidad: 2, montoExento: 0, montoNeto: 83424, montoIva: 10118, ivaNoRecuperable: [], operacionesIvaUsoComun: 1, ivaUsoComun: 5732,
        // 5 732 × 0.60 = 3 439.2 → 3 439.
        factorMilesimas: 600, creditoIvaUsoComun: 3439, otrosImpuestos: [], ivaRetenidoTotal: 0, montoTotal: 99274,
      },
      {
        tipoDoc: 33, cantidad: 2, montoExento: 10633, montoNeto: 23608, montoIva: 2180, ivaNoRecuperable: [{ codigo: 4, operaciones: 1, monto: 2306 }],
        operacionesIvaUsoComun: 0, ivaUsoComun: 0, factorMilesimas: null, creditoIvaUsoComun: 0, otrosImpuestos: [], ivaRetenidoTotal: 0, montoTotal: 38727,
      },
      {
        tipoDoc: 46, cantidad: 1, montoExento: 0, montoNeto: 10632, montoIva: 2020, ivaNoRecuperable: [], operacionesIvaUsoComun: 0, ivaUsoComun: 0,
        factorMilesimas: null, creditoIvaUsoComun: 0, otrosImpuestos: [{ codigo: 15, monto: 2020 }], ivaRetenidoTotal: 2020, montoTotal: 10632,
      },
      {
        tipoDoc: 60, cantidad: 2, montoExento: 0, montoNeto: 11981, montoIva: 2276, ivaNoRecuperable: [], operacionesIvaUsoComun: 0, ivaUsoComun: 0,
        factorMilesimas: null, creditoIvaUsoComun: 0, otrosImpuestos: [], ivaRetenidoTotal: 0, montoTotal: 14257,
      },
    ])
    expect(resumenCompraVentaMismatches(libro.detalle, libro.resumen)).toEqual([])
  })
})

describe('libro de compras from the 2026-layout set (sintetico-2026.txt): factor 0.55, electronic note, a half peso', () => {
  const libro = compras('sintetico-2026.txt', '2026-06')

  test('each line as its observation says; 38 950 × 19 % = 7 400.5 rounds half away from zero to 7 401', () => {
    expect(line(libro, 33, 118)).toMatchObject({ montoExento: 4200, montoNeto: 38950, montoIva: 7401, montoTotal: 50551 })
    expect(line(libro, 30, 520)).toMatchObject({ montoNeto: 27400, montoIva: 0, ivaUsoComun: 5206, montoTotal: 32606 })
    expect(line(libro, 46, 14)).toMatchObject({ montoNeto: 9800, montoIva: 1862, ivaRetenidoTotal: 1862, montoTotal: 9800 })
    expect(line(libro, 61, 77)).toMatchObject({ montoNeto: 3100, montoIva: 589, montoTotal: 3689 })
  })

  test('the credit of IVA de uso común uses the set\'s factor: 5 206 × 0.55 = 2 863.3 → 2 863', () => {
    expect(libro.resumen.find((t) => t.tipoDoc === 30)).toMatchObject({ factorMilesimas: 550, ivaUsoComun: 5206, creditoIvaUsoComun: 2863 })
    expect(libro.resumen.map((t) => t.tipoDoc)).toEqual([30, 33, 46, 61])
  })
})

describe('libro de compras from the simulator\'s generated sets (sii/simulator/set-generator.ts)', () => {
  test.each([1, 2, 3, 17, 4_294_967_295])('seed %d: the grid parses and every line is booked, its resumen summing its detalle', (seed) => {
    const file = generateSetPruebas({ seed, sets: ['basico', 'guia', 'libros'], numeroAtencion: 6_000_001 })
    const decoded = decodeSetText(file.bytes)
    if (!decoded.ok) throw new Error(decoded.error.message)
    const parsed = parseSetPruebas(decoded.text)
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors))
    const set = parsed.value.sets.find((s) => s.nombre === 'LIBRO DE COMPRAS')!
    const libro = ok(libroCompras({ periodo: '2026-03', compras: set.compras ?? [], factorProporcionalidad: set.factorProporcionalidad ?? null, proveedor: PROVEEDOR }))
    expect(libro.detalle).toHaveLength(7)
    expect(libro.resumen.map((t) => t.tipoDoc)).toEqual([30, 33, 46, 60])
    expect(resumenCompraVentaMismatches(libro.detalle, libro.resumen)).toEqual([])
  })
})

describe('the observations of the grid', () => {
  const OBSERVACIONES: ReadonlyArray<readonly [string, TratamientoCompra | null]> = [
    ['FACTURA DEL GIRO CON DERECHO A CREDITO', 'credito'],
    ['  factura del  giro con derecho a crédito ', 'credito'],
    ['FACTURA CON IVA USO COMUN', 'iva_uso_comun'],
    ['ENTREGA GRATUITA DEL PROVEEDOR', 'entrega_gratuita'],
    ['COMPRA CON RETENCION TOTAL DEL IVA', 'retencion_total'],
    ['NOTA DE CREDITO POR DESCUENTO A FACTURA 234', 'credito'],
    ['NOTA DE CREDITO POR DESCUENTO FACTURA ELECTRONICA 32', 'credito'],
    ['FACTURA CON IVA NO RECUPERABLE', null],
    ['DEL GIRO', null],
    ['', null],
  ]
  test.each(OBSERVACIONES.map(([observacion, expected]) => [observacion, String(expected), expected] as const))('«%s» → %s', (observacion, _shown, expected) => {
    expect(tratamientoDe(observacion)).toBe(expected)
  })

  const compra = (over: Partial<CompraSet>): CompraSet => ({
    tipo: 33, tipoDocumento: 'FACTURA ELECTRONICA', folio: 5, observacion: 'FACTURA DEL GIRO CON DERECHO A CREDITO', montoExento: 0, montoAfecto: 1000, lineNumber: 12, ...over,
  })
  const input = (list: readonly CompraSet[], over: Partial<LibroComprasInput> = {}): LibroComprasInput =>
    ({ periodo: '2026-03', compras: list, factorProporcionalidad: 0.6, proveedor: PROVEEDOR, ...over })

  test('an observation the table does not know is an error naming its line, and no libro comes out', () => {
    const found = errors(libroCompras(input([compra({}), compra({ folio: 6, observacion: 'FACTURA CON IVA NO RECUPERABLE', lineNumber: 17 })])))
    expect(found).toEqual([{ campo: 'compras.1.observacion', mensaje: 'Observación no reconocida en la línea 17 (FACTURA ELECTRONICA 6): «FACTURA CON IVA NO RECUPERABLE».' }])
  })

  test('an observation on a document type it cannot describe is an error (a retention on a 33, a note text on an invoice)', () => {
    expect(errors(libroCompras(input([compra({ observacion: 'COMPRA CON RETENCION TOTAL DEL IVA' })])))[0]?.campo).toBe('compras.0.tipo')
    expect(errors(libroCompras(input([compra({ observacion: 'NOTA DE CREDITO POR DESCUENTO A FACTURA 1' })])))[0]?.campo).toBe('compras.0.tipo')
  })

  test('IVA de uso común without a factor, and a factor outside (0, 1] or with 4 decimals, are errors', () => {
    const usoComun = [compra({ observacion: 'FACTURA CON IVA USO COMUN' })]
    expect(errors(libroCompras(input(usoComun, { factorProporcionalidad: null })))[0]?.campo).toBe('factor_proporcionalidad')
    for (const factor of [0, 1.2, 0.6001, Number.NaN]) {
      expect(errors(libroCompras(input(usoComun, { factorProporcionalidad: factor })))[0]?.campo).toBe('factor_proporcionalidad')
    }
    expect(ok(libroCompras(input(usoComun, { factorProporcionalidad: 1 }))).resumen[0]?.creditoIvaUsoComun).toBe(190)
  })

  test('the supplier needs a valid RUT and a name; the date must fall in the period', () => {
    expect(errors(libroCompras(input([compra({})], { proveedor: { rut: '11111111-2', razonSocial: 'X' } })))).toContainEqual({ campo: 'proveedor.rut', mensaje: 'RUT «11111111-2» inválido.' })
    expect(errors(libroCompras(input([compra({})], { proveedor: { rut: PROVEEDOR.rut, razonSocial: ' ' } })))[0]?.campo).toBe('proveedor.razon_social')
    expect(errors(libroCompras(input([compra({})], { fecha: '2026-04-01' })))[0]).toEqual({ campo: 'fecha', mensaje: 'La fecha 2026-04-01 no es del período 2026-03.' })
    expect(errors(libroCompras(input([compra({})], { periodo: '2026-13' })))[0]?.campo).toBe('periodo')
  })

  test('an empty grid is an error, not an empty libro', () => {
    expect(errors(libroCompras(input([])))[0]?.campo).toBe('compras')
  })
})

describe('libro de ventas', () => {
  const doc = (over: Partial<DocumentoVenta>): DocumentoVenta => ({
    tipoDte: 33, folio: 1, fechaEmision: '2026-03-02', rutReceptor: '76.086.428-5', razonSocialReceptor: 'Cliente Ñandú', montoExento: 0, montoNeto: 1000,
    tasaIva: 19, iva: 190, montoTotal: 1190, ...over,
  })
  const basico = [
    doc({}),
    doc({ folio: 2, montoExento: 500, montoNeto: 2000, iva: 380, montoTotal: 2880 }),
    doc({ tipoDte: 61, folio: 1, montoNeto: 0, tasaIva: null, iva: 0, montoTotal: 0, referencia: { tipoDte: 33, folio: 1 } }),
    doc({ tipoDte: 61, folio: 2, montoNeto: 400, iva: 76, montoTotal: 476, referencia: { tipoDte: 33, folio: 2 } }),
    doc({ tipoDte: 56, folio: 1, montoNeto: 0, tasaIva: null, iva: 0, montoTotal: 0, referencia: { tipoDte: 61, folio: 1 } }),
  ]

  test('one Detalle per document in its order, RUT canonical, the note\'s reference kept', () => {
    const libro = ok(libroVentas({ periodo: '2026-03', documentos: basico }))
    expect(libro.operacion).toBe('VENTA')
    expect(libro.detalle.map((d) => `${d.tipoDoc}/${d.folio}`)).toEqual(['33/1', '33/2', '61/1', '61/2', '56/1'])
    expect(libro.detalle[0]).toMatchObject({ rut: '76086428-5', razonSocial: 'Cliente Ñandú', tasaImpuesto: 19, montoIva: 190, montoTotal: 1190, referencia: null })
    expect(libro.detalle[3]).toMatchObject({ referencia: { tipoDoc: 33, folio: 2 }, montoNeto: 400, montoIva: 76 })
    expect(libro.detalle[2]?.tasaImpuesto).toBeNull()
  })

  test('TotalesPeriodo per type, ascending, the zero-amount notes counted', () => {
    const { resumen } = ok(libroVentas({ periodo: '2026-03', documentos: basico }))
    expect(resumen.map((t) => [t.tipoDoc, t.cantidad, t.montoExento, t.montoNeto, t.montoIva, t.montoTotal])).toEqual([
      [33, 2, 500, 3000, 570, 4070],
      [56, 1, 0, 0, 0, 0],
      [61, 2, 0, 400, 76, 476],
    ])
    expect(resumen.every((t) => t.factorMilesimas === null && t.ivaUsoComun === 0)).toBe(true)
  })

  test.each([
    ['documentos.0.tipo_dte', doc({ tipoDte: 39 })],
    ['documentos.0.fecha_emision', doc({ fechaEmision: '2026-04-01' })],
    ['documentos.0.fecha_emision', doc({ fechaEmision: '2026-02-30' })],
    ['documentos.0.rut_receptor', doc({ rutReceptor: '12345678-0' })],
    ['documentos.0.monto_total', doc({ montoTotal: 1200 })],
    ['documentos.0.monto_neto', doc({ montoNeto: -1000, montoTotal: -810 })],
    ['documentos.0.tasa_iva', doc({ tasaIva: null })],
    ['documentos.0.folio', doc({ folio: 0 })],
  ] as const)('%s: refused, with the field named', (campo, bad) => {
    expect(errors(libroVentas({ periodo: '2026-03', documentos: [bad] })).map((e) => e.campo)).toContain(campo)
  })

  test('the same document twice, and no document at all, are errors', () => {
    expect(errors(libroVentas({ periodo: '2026-03', documentos: [doc({}), doc({})] }))).toContainEqual({ campo: 'documentos.1', mensaje: 'El documento tipo 33 folio 1 viene dos veces.' })
    expect(errors(libroVentas({ periodo: '2026-03', documentos: [] }))[0]?.campo).toBe('documentos')
  })
})

describe('libro de guías', () => {
  const set = setNamed('sintetico-2026.txt', 'LIBRO DE GUIAS')
  const guia = (over: Partial<GuiaEmitida>): GuiaEmitida => ({
    folio: 1, fechaEmision: '2026-06-10', indTraslado: 1, rutReceptor: '76086428-5', razonSocialReceptor: 'Cliente Ñandú', montoNeto: 0, tasaIva: null,
    iva: 0, montoTotal: 0, ...over,
  })
  // The GUIA DE DESPACHO set's three cases got folios 11, 12, 13: case 1 a transfer between the company's warehouses
  // (IndTraslado 5, no prices), cases 2 and 3 sales; the LIBRO DE GUIAS text names case 2 invoiced and case 3 annulled.
  const guias = [
    guia({ folio: 11, indTraslado: 5, rutReceptor: '76543210-3', razonSocialReceptor: 'La misma empresa' }),
    guia({ folio: 12, montoNeto: 1_616_004, tasaIva: 19, iva: 307_041, montoTotal: 1_923_045 }),
    guia({ folio: 13, montoNeto: 1_231_523, tasaIva: 19, iva: 233_989, montoTotal: 1_465_512 }),
  ]
  const folioOfCase = (k: number | undefined): number => 10 + (k ?? 0)
  const libro = (): LibroGuias => ok(libroGuias({
    periodo: '2026-06', guias,
    facturada: { folioGuia: folioOfCase(set.guiaFacturada), factura: { tipoDte: 33, folio: 40, fechaEmision: '2026-06-12' } },
    folioAnulada: folioOfCase(set.guiaAnulada),
  }))

  test('the set names case 2 invoiced and case 3 annulled', () => {
    expect([set.guiaFacturada, set.guiaAnulada]).toEqual([2, 3])
  })

  test('the invoiced guía carries its invoice; the annulled one Anulado 2 and keeps its data', () => {
    const { detalle } = libro()
    expect(detalle.map((d) => [d.folio, d.tipoOperacion, d.anulado])).toEqual([[11, 5, null], [12, 1, null], [13, 1, 2]])
    expect(detalle[1]?.referencia).toEqual({ tipoDoc: 33, folio: 40, fecha: '2026-06-12' })
    expect(detalle[2]).toMatchObject({ referencia: null, montoNeto: 1_231_523, montoTotal: 1_465_512 })
  })

  test('resumen: the sale not annulled counts as guía de venta, the transfer under TotTraslado 5, the annulled apart', () => {
    expect(libro().resumen).toEqual({
      foliosAnulados: 0, guiasAnuladas: 1, guiasVenta: 1, montoGuiasVenta: 1_923_045, traslados: [{ tipo: 5, cantidad: 1, monto: 0 }],
    })
  })

  test('every other non-sale operation gets its own TotTraslado, ascending', () => {
    const detalle = ok(libroGuias({ periodo: '2026-06', guias: [guia({ folio: 1, indTraslado: 6, montoNeto: 100, tasaIva: 19, iva: 19, montoTotal: 119 }), guia({ folio: 2, indTraslado: 2 }), guia({ folio: 3, indTraslado: 6 })], facturada: null, folioAnulada: null })).detalle
    expect(totalesGuias(detalle).traslados).toEqual([{ tipo: 2, cantidad: 1, monto: 0 }, { tipo: 6, cantidad: 2, monto: 119 }])
  })

  test.each([
    ['facturada.folio_guia', { facturada: { folioGuia: 99, factura: { tipoDte: 33, folio: 1, fechaEmision: '2026-06-12' } } }],
    ['facturada.factura.tipo_dte', { facturada: { folioGuia: 12, factura: { tipoDte: 52, folio: 1, fechaEmision: '2026-06-12' } } }],
    ['folio_anulada', { folioAnulada: 99 }],
    ['folio_anulada', { facturada: { folioGuia: 12, factura: { tipoDte: 33, folio: 1, fechaEmision: '2026-06-12' } }, folioAnulada: 12 }],
    ['guias.0.ind_traslado', { guias: [guia({ indTraslado: 8 })] }],
    ['guias.0.monto_total', { guias: [guia({ montoNeto: 100, iva: 19, montoTotal: 100 })] }],
    ['guias.1', { guias: [guia({}), guia({})] }],
  ] as const)('%s: refused', (campo, over) => {
    const result = libroGuias({ periodo: '2026-06', guias, facturada: null, folioAnulada: null, ...over })
    expect(errors(result).map((e) => e.campo)).toContain(campo)
  })
})

describe('the totals check the simulator runs on a received libro', () => {
  const libro = compras('003-compras.txt')

  test('a resumen that no longer sums its detalle is named field by field', () => {
    const resumen = libro.resumen.map((t) => (t.tipoDoc === 33 ? { ...t, montoNeto: t.montoNeto + 1, ivaNoRecuperable: [] } : t))
    expect(resumenCompraVentaMismatches(libro.detalle, resumen)).toEqual([
      'TpoDoc 33: TotMntNeto 23609 en el resumen, 23608 según el detalle',
      'TpoDoc 33: TotIVANoRec 4 0 en el resumen, 2306 según el detalle',
    ])
  })

  test('a type missing on either side, a wrong credit and a missing FctProp are named', () => {
    expect(resumenCompraVentaMismatches(libro.detalle.filter((d) => d.tipoDoc !== 46), libro.resumen)).toContain('TpoDoc 46: TotalesPeriodo con 1 documentos sin ninguno en el detalle')
    expect(resumenCompraVentaMismatches(libro.detalle, libro.resumen.filter((t) => t.tipoDoc !== 60))).toContain('TpoDoc 60: 2 documentos en el detalle y ningún TotalesPeriodo')
    const wrongCredit = libro.resumen.map((t) => (t.tipoDoc === 30 ? { ...t, creditoIvaUsoComun: 3440 } : t))
    expect(resumenCompraVentaMismatches(libro.detalle, wrongCredit)).toEqual(['TpoDoc 30: TotCredIVAUsoComun 3440 en el resumen, 3439 según el detalle'])
    const noFactor = libro.resumen.map((t) => (t.tipoDoc === 30 ? { ...t, factorMilesimas: null } : t))
    expect(resumenCompraVentaMismatches(libro.detalle, noFactor)).toEqual(['TpoDoc 30: IVA de uso común sin FctProp'])
  })

  test('guías: an annulled guía counted as a sale is named', () => {
    const detalle = [
      { folio: 1, anulado: null, tipoOperacion: 1, fecha: '2026-06-10', rut: '76086428-5', razonSocial: '', montoNeto: 100, tasaImpuesto: 19, iva: 19, montoTotal: 119, referencia: null },
      { folio: 2, anulado: 2, tipoOperacion: 1, fecha: '2026-06-10', rut: '76086428-5', razonSocial: '', montoNeto: 100, tasaImpuesto: 19, iva: 19, montoTotal: 119, referencia: null },
    ] as const
    expect(resumenGuiasMismatches(detalle, { foliosAnulados: 0, guiasAnuladas: 0, guiasVenta: 2, montoGuiasVenta: 238, traslados: [] })).toEqual([
      'TotGuiaAnulada 0 en el resumen, 1 según el detalle', 'TotGuiaVenta 2 en el resumen, 1 según el detalle', 'TotMntGuiaVta 238 en el resumen, 119 según el detalle',
    ])
  })

  test('property: any grid of known observations gives a libro whose resumen sums its detalle, each line\'s total by the formato\'s formula', () => {
    const observaciones = [
      [33, 'FACTURA DEL GIRO CON DERECHO A CREDITO'], [30, 'FACTURA CON IVA USO COMUN'], [33, 'ENTREGA GRATUITA DEL PROVEEDOR'],
      [46, 'COMPRA CON RETENCION TOTAL DEL IVA'], [61, 'NOTA DE CREDITO POR DESCUENTO FACTURA ELECTRONICA 1'],
    ] as const
    const compraArb = fc.record({ which: fc.nat(observaciones.length - 1), folio: fc.integer({ min: 1, max: 1e6 }), exento: fc.nat(1e7), afecto: fc.nat(1e9) })
    fc.assert(fc.property(fc.array(compraArb, { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 1000 }), (rows, milesimas) => {
      const list = rows.map((r, i): CompraSet => {
        const [tipo, observacion] = observaciones[r.which]!
        return { tipo, tipoDocumento: String(tipo), folio: r.folio, observacion, montoExento: r.exento, montoAfecto: r.afecto, lineNumber: i + 1 }
      })
      const result = ok(libroCompras({ periodo: '2026-03', compras: list, factorProporcionalidad: milesimas / 1000, proveedor: PROVEEDOR }))
      expect(resumenCompraVentaMismatches(result.detalle, result.resumen)).toEqual([])
      for (const d of result.detalle) {
        const noRec = d.ivaNoRecuperable.reduce((a, i) => a + i.monto, 0)
        expect(d.montoTotal).toBe(d.montoExento + d.montoNeto + d.montoIva + d.ivaUsoComun + noRec - d.ivaRetenidoTotal)
        expect(d.montoIva + d.ivaUsoComun + noRec).toBe(Math.round((d.montoNeto * 19) / 100))
      }
      for (const t of result.resumen) if (t.ivaUsoComun > 0) expect(t.creditoIvaUsoComun).toBe(creditoUsoComun(t.ivaUsoComun, milesimas))
    }))
  })
})
