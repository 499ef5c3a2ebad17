import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { EmitirDte, Linea } from '../../../src/domain/emision'
import { checkEmision } from '../../../src/domain/emision-rules'
import {
  computeExentoExacto,
  computeLineAmounts,
  computeLineas,
  computeTotals,
  decimalPlaces,
  fromScaled,
  roundDiv,
  toScaled,
} from '../../../src/domain/totals'
import { dteFixtures } from '../../support/fixtures'

const receptor = { rut: '76555835-2', razon_social: 'Comercializadora Ñuñoa Ltda.' }
const doc = (tipo_dte: EmitirDte['tipo_dte'], detalle: Linea[], extra: Partial<EmitirDte> = {}): EmitirDte => ({ tipo_dte, receptor, detalle, ...extra })
const linea = (precio: number, cantidad = 1, extra: Partial<Linea> = {}): Linea => ({ nombre: 'Ítem', cantidad, precio, ...extra })

describe('roundDiv: half away from zero (docs/sii-protocol.md §2.4, DESIGN §12)', () => {
  test.each([
    [5n, 2n, 3n],
    [-5n, 2n, -3n],
    [25n, 10n, 3n],
    [-25n, 10n, -3n],
    [24n, 10n, 2n],
    [-24n, 10n, -2n],
    [26n, 10n, 3n],
    [0n, 7n, 0n],
  ])('%p / %p → %p', (n, d, expected) => expect(roundDiv(n, d)).toBe(expected))

  test('property: symmetric around zero and within half a unit', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), fc.bigInt({ min: 1n, max: 10n ** 6n }), (n, d) => {
        expect(roundDiv(-n, d)).toBe(-roundDiv(n, d))
        const diff = roundDiv(n, d) * d - n
        expect(2n * (diff < 0n ? -diff : diff)).toBeLessThanOrEqual(d)
      }),
    )
  })
})

describe('exact decimals', () => {
  test('decimalPlaces reads the number as written', () => {
    expect([decimalPlaces(3), decimalPlaces(12.5), decimalPlaces(0.000001), decimalPlaces(1.25e-4), decimalPlaces(950.37)]).toEqual([0, 1, 6, 6, 2])
  })

  test('toScaled is exact where binary floats are not (0.1 + 0.2, 1.005)', () => {
    expect(toScaled(0.29, 2)).toBe(29n)
    expect(toScaled(1.005, 2)).toBe(101n)
    expect(toScaled(2822.2906, 4)).toBe(28222906n)
    expect(toScaled(-2.5, 0)).toBe(-3n)
    expect(fromScaled(28222906n, 4)).toBe(2822.2906)
  })
})

describe('SII protocol vectors (docs/sii-protocol.md)', () => {
  test('§2.3 line discount (LibreDTE 033_006): 1 × 104090 with 10 % → DescuentoMonto 10409, MontoItem 93681', () => {
    const [l] = computeLineas(doc(33, [linea(104090, 1, { descuento_pct: 10 })]))
    expect(l).toMatchObject({ descuento_monto: 10409, monto_item: 93681 })
  })

  test('§2.4 global discount (LibreDTE 033_004): neto 104090, 10 % → neto 93681, IVA 17799, total 111480', () => {
    const t = computeTotals(doc(33, [linea(104090)], { descuentos_globales: [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 10 }] }))
    expect(t).toMatchObject({ monto_neto: 93681, tasa_iva: 19, iva: 17799, monto_total: 111480 })
  })

  test('§2.4 step 3 MntBruto: gross 680 → neto 571 + IVA 109', () => {
    const t = computeTotals(doc(33, [linea(680)], { montos_brutos: true }))
    expect(t).toMatchObject({ monto_neto: 571, iva: 109, monto_total: 680 })
  })

  test('§2.4 exempt invoice (LibreDTE 034_005): exempt 20000, not billable 35000 → MntExe 20000, total 20000, MontoNF 35000', () => {
    const t = computeTotals(doc(34, [linea(20000)], { descuentos_globales: [{ tpo_mov: 'R', tpo_valor: '$', valor_dr: 35000, ind_exe_dr: 2 }] }))
    expect(t).toMatchObject({ monto_neto: null, monto_exento: 20000, iva: null, tasa_iva: 0, monto_total: 20000, monto_no_facturable: 35000 })
  })

  test('§2.4 purchase invoice, total retention (LibreDTE 046_003): neto 100000, IVA 19000, retained 19000, total 100000', () => {
    const t = computeTotals(doc(46, [linea(100000, 1, { cod_imp_adic: 15 })]))
    expect(t).toMatchObject({ monto_neto: 100000, iva: 19000, monto_total: 100000, iva_no_retenido: null })
    expect(t.impuestos).toEqual([{ tipo_imp: 15, tasa_imp: 19, monto_imp: 19000, is_retencion: true }])
  })

  test('§2.4 purchase invoice, partial retention (LibreDTE 046_004): code 34 at 4 % → 400, IVANoRet 1500, total 11500', () => {
    const t = computeTotals(doc(46, [linea(10000)], { impuestos_retenciones: [{ tipo_imp: 34, tasa_imp: 4 }] }))
    expect(t).toMatchObject({ monto_neto: 10000, iva: 1900, iva_no_retenido: 1500, monto_total: 11500 })
    expect(t.impuestos).toEqual([{ tipo_imp: 34, tasa_imp: 4, monto_imp: 400, is_retencion: true }])
  })

  test('§7.2 boleta: 1190 with 10 % discount → total 1071, neto 900, IVA 171', () => {
    const t = computeTotals(doc(39, [linea(1190)], { descuentos_globales: [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 10 }] }))
    expect(t).toMatchObject({ monto_total: 1071, monto_neto: 900, iva: 171 })
  })

  test('§7.2 boleta: 2×1000 + 1500 + 3×500 → total 5000, neto 4202, IVA 798', () => {
    const t = computeTotals(doc(39, [linea(1000, 2), linea(1500), linea(500, 3)]))
    expect(t).toMatchObject({ monto_total: 5000, monto_neto: 4202, iva: 798 })
  })

  test('§7.2 boleta exenta (41): MntExe = MntTotal, no IVA', () => {
    const t = computeTotals(doc(41, [linea(4000, 2), linea(2000)]))
    expect(t).toMatchObject({ monto_exento: 10000, monto_total: 10000, monto_neto: null, iva: null, tasa_iva: 0 })
  })

  test('§2.6 / DESIGN §12 export line surcharge: 78 + 10 % = 86 (RecargoMonto is an integer)', () => {
    const request = doc(110, [linea(78, 1, { recargo_pct: 10 })], { export_data: { tpo_moneda: 'DOLAR USA', tpo_cambio: 932.1 } })
    expect(computeLineas(request)[0]).toMatchObject({ recargo_monto: 8, monto_item: 86 })
    expect(computeTotals(request)).toMatchObject({ monto_total: 80161, exportacion: { monto_total: 86, tpo_cambio: 932.1 } })
  })

  test('§2.6 / DESIGN §12 forma_pago_exp 21: foreign totals kept, pesos and monto_total 0', () => {
    const request = doc(110, [linea(12, 6)], { export_data: { tpo_moneda: 'DOLAR USA', tpo_cambio: 950.37, forma_pago_exp: 21 } })
    expect(computeTotals(request)).toMatchObject({ monto_total: 0, monto_exento: 0, exportacion: { monto_total: 72, monto_exento: 72 } })
  })

  test('§2.4 Liquidación-factura: MntTotal = MntNeto + MntExe + IVA − commissions, ValComIVA = 19 % of ValComNeto', () => {
    const t = computeTotals(
      doc(43, [linea(1000, 100, { tipo_doc_liq: '33' })], {
        comisiones: [{ tipo_movim: 'C', glosa: 'Comisión', val_com_neto: 8000, val_com_exe: 500 }],
      }),
    )
    expect(t).toMatchObject({ monto_neto: 100000, iva: 19000, comisiones: { val_com_neto: 8000, val_com_exe: 500, val_com_iva: 1520 }, monto_total: 108980 })
  })
})

describe('rounding details', () => {
  test('line: discount on the value, surcharge on what is left, each rounded', () => {
    // 3 × 3333 = 9999; 12.5 % → 1249.875 → 1250; 8749 × 2.5 % = 218.725 → 219; 8749 + 219 = 8968
    expect(computeLineas(doc(33, [linea(3333, 3, { descuento_pct: 12.5, recargo_pct: 2.5 })]))[0]).toMatchObject({
      descuento_monto: 1250,
      recargo_monto: 219,
      monto_item: 8968,
    })
  })

  test('line: decimal quantity rounds the line once, half away from zero (0.5 × 2999 = 1499.5 → 1500)', () => {
    expect(computeLineas(doc(33, [linea(2999, 0.5)]))[0]!.monto_item).toBe(1500)
  })

  test('a discount that rounds to 0 is not reported (DescuentoMonto must be positive in the XSD)', () => {
    expect(computeLineas(doc(33, [linea(10, 1, { descuento_pct: 1 })]))[0]).toMatchObject({ descuento_monto: null, monto_item: 10 })
  })

  test('IVA rounds half away from zero: neto 12350 → 2346.5 → 2347', () => {
    expect(computeTotals(doc(33, [linea(12350)])).iva).toBe(2347)
  })

  test('liquidación: negative neto rounds its IVA away from zero (−2.5 → −3, not Math.round’s −2)', () => {
    const t = computeTotals(
      doc(43, [{ nombre: 'Ajuste de anticipo', tipo_doc_liq: '99', monto_item: -50 }], {
        comisiones: [{ tipo_movim: 'C', glosa: 'c', val_com_neto: 0, val_com_exe: 0 }],
      }),
    )
    // −50 × 19 % = −9.5 → −10
    expect(t).toMatchObject({ monto_neto: -50, iva: -10, monto_total: -60 })
  })

  test('global % discount moves each additional-tax base with its own rounding', () => {
    const t = computeTotals(
      doc(33, [linea(9990, 12, { cod_imp_adic: 27 }), linea(5490, 24, { cod_imp_adic: 24 }), linea(1290, 10)], {
        descuentos_globales: [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 5 }],
      }),
    )
    expect(t.impuestos.map((i) => [i.tipo_imp, i.monto_imp])).toEqual([
      [27, 11389],
      [24, 39429],
    ])
    expect(t.monto_total).toBe(251313 + 47749 + 11389 + 39429)
  })

  test('export in EURO: the % step rounds to 4 decimals, pesos = round(total × tpo_cambio)', () => {
    const t = computeTotals(
      doc(110, [linea(7, 333), linea(5, 120.25)], {
        descuentos_globales: [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 3.75 }],
        export_data: { tpo_moneda: 'EURO', tpo_cambio: 1085.2317 },
      }),
    )
    // 2331 + 601.25 = 2932.25; 3.75 % = 109.959375 → 109.9594; 2822.2906 × 1085.2317 = 3062839.23
    expect(t).toMatchObject({ monto_total: 3062839, exportacion: { monto_total: 2822.2906 } })
  })

  test('explicit monto_imp and monto_item are taken as given', () => {
    const t = computeTotals(doc(33, [linea(0, 1, { monto_item: 50000, precio: undefined, cantidad: undefined, cod_imp_adic: 28 })], { impuestos_retenciones: [{ tipo_imp: 28, monto_imp: 3210 }] }))
    expect(t).toMatchObject({ monto_neto: 50000, iva: 9500, monto_total: 62710 })
  })
})

// A new case is a new JSON file (STYLE §5): test/fixtures/dte/<tipo>/<nnn>-<case>.json.
describe('fixtures (test/fixtures/dte): every case is a valid request with the expected totales', () => {
  const fixtures = dteFixtures()

  test('there are several documents for each of the 12 types', () => {
    const perTipo = new Map<number, number>()
    for (const f of fixtures) perTipo.set(f.request.tipo_dte, (perTipo.get(f.request.tipo_dte) ?? 0) + 1)
    expect([...perTipo.keys()].sort((a, b) => a - b)).toEqual([33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112])
  })

  for (const f of fixtures) {
    test(`${f.name}: passes checkEmision`, () => expect(checkEmision(f.request, f.today)).toEqual([]))
    test(`${f.name}: totales`, () => expect(computeTotals(f.request)).toEqual(f.expected.totales))
  }
})

// ------------------------------------------------------------------------------------------------ properties

const arbLinea = (withExempt: boolean): fc.Arbitrary<Linea> =>
  fc.record({
    nombre: fc.constant('Ítem'),
    cantidad: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 10_000_000 }).map((n) => n / 1000)),
    precio: fc.integer({ min: 0, max: 5_000_000 }),
    descuento_pct: fc.option(fc.integer({ min: 0, max: 10000 }).map((n) => n / 100), { nil: undefined }),
    recargo_pct: fc.option(fc.integer({ min: 0, max: 10000 }).map((n) => n / 100), { nil: undefined }),
    ind_exe: withExempt ? fc.option(fc.constant(1 as const), { nil: undefined }) : fc.constant(undefined),
  }).map((l) => Object.fromEntries(Object.entries(l).filter(([, v]) => v !== undefined)) as unknown as Linea)

const arbPctDescuento = fc.record({
  tpo_mov: fc.constantFrom('D' as const, 'R' as const),
  tpo_valor: fc.constant('%' as const),
  valor_dr: fc.integer({ min: 1, max: 10000 }).map((n) => n / 100),
})

describe('properties', () => {
  test('33: totals are non-negative and MntTotal = MntNeto + MntExe + IVA', () => {
    fc.assert(
      fc.property(fc.array(arbLinea(true), { minLength: 1, maxLength: 60 }), fc.array(arbPctDescuento, { maxLength: 3 }), (detalle, descuentos) => {
        const request = doc(33, [linea(100), ...detalle], { descuentos_globales: descuentos })
        const t = computeTotals(request)
        expect(t.monto_neto!).toBeGreaterThanOrEqual(0)
        expect(t.iva!).toBeGreaterThanOrEqual(0)
        expect(t.monto_total).toBe(t.monto_neto! + (t.monto_exento ?? 0) + t.iva!)
        expect(t.iva).toBe(Math.round((t.monto_neto! * 19) / 100))
      }),
      { numRuns: 300 },
    )
  })

  test('39 and montos_brutos: neto + IVA always equals the gross affected amount', () => {
    fc.assert(
      fc.property(fc.array(arbLinea(true), { minLength: 1, maxLength: 20 }), fc.constantFrom(39 as const, 33 as const, 61 as const), (detalle, tipo) => {
        const request = doc(tipo, [linea(1990), ...detalle], tipo === 39 ? {} : { montos_brutos: true })
        const lineas = computeLineas(request)
        const grossAfecto = lineas.filter((l) => !l.is_exenta).reduce((s, l) => s + l.monto_item, 0)
        const t = computeTotals(request)
        expect(t.monto_neto! + t.iva!).toBe(grossAfecto)
        expect(t.monto_total).toBe(grossAfecto + (t.monto_exento ?? 0))
        expect(Math.abs(t.monto_neto! * 1.19 - grossAfecto)).toBeLessThanOrEqual(0.6)
      }),
      { numRuns: 300 },
    )
  })

  test('every line: MontoItem = value − DescuentoMonto + RecargoMonto, never negative', () => {
    fc.assert(
      fc.property(arbLinea(false), (l) => {
        const [calc] = computeLineas(doc(33, [l]))
        const value = Math.round(l.cantidad! * l.precio! * 1e6) / 1e6
        expect(calc!.monto_item).toBeGreaterThanOrEqual(0)
        // The oracle is floating point (5239.98 × 4516725 comes out 0.000004 under its exact .5): half a peso plus that.
        expect(Math.abs(calc!.monto_item - (value - (calc!.descuento_monto ?? 0) + (calc!.recargo_monto ?? 0)))).toBeLessThanOrEqual(0.5 + 1e-3)
      }),
      { numRuns: 500 },
    )
  })

  test('exports: a whole-unit discount never passes a line value with decimals (USD 914.5 at 100 % → 914, MontoItem 0.5)', () => {
    const [calc] = computeLineas(doc(110, [linea(914_500, 0.001, { descuento_pct: 100 })], { export_data: { tpo_moneda: 'DOLAR USA', tpo_cambio: 950 } }))
    expect(calc).toMatchObject({ descuento_monto: 914, monto_item: 0.5 })
    const [exact] = computeLineas(doc(110, [linea(914_000, 0.001, { descuento_pct: 100 })], { export_data: { tpo_moneda: 'DOLAR USA', tpo_cambio: 950 } }))
    expect(exact).toMatchObject({ descuento_monto: 914, monto_item: 0 })
  })

  test('exports: monto_total = round(foreign total × tpo_cambio) and foreign amounts keep at most 4 decimals', () => {
    fc.assert(
      fc.property(
        fc.array(arbLinea(false), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 1, max: 99_999_999 }).map((n) => n / 10000),
        (detalle, tpo_cambio) => {
          const t = computeTotals(doc(110, detalle, { export_data: { tpo_moneda: 'DOLAR USA', tpo_cambio } }))
          const foreign = t.exportacion!.monto_total
          expect(decimalPlaces(foreign)).toBeLessThanOrEqual(4)
          expect(t.monto_total).toBe(Number(roundDiv(toScaled(foreign, 4) * toScaled(tpo_cambio, 4), 10n ** 8n)))
          expect(t.monto_total).toBeGreaterThanOrEqual(0)
        },
      ),
      { numRuns: 200 },
    )
  })
})

describe('exact amounts, for the range checks of emision-rules', () => {
  test('computeLineAmounts keeps every digit of a line far past 2^53 (the issue: 12-digit cantidad and precio, 100 % off)', () => {
    const request = doc(33, [linea(999_999_999_999, 999_999_999_999, { descuento_pct: 100 }), linea(8990, 3)])
    expect(computeLineAmounts(request)).toEqual([
      { descuento: 999_999_999_998_000_000_000_001n, recargo: 0n, montoItem: 0n },
      { descuento: 0n, recargo: 0n, montoItem: 26970n },
    ])
  })

  test('the largest line accepted: 1271 × 786 782 061 369 = 999 999 999 999 999, and with a surcharge', () => {
    expect(computeLineAmounts(doc(34, [linea(786_782_061_369, 1271)]))).toEqual([{ descuento: 0n, recargo: 0n, montoItem: 999_999_999_999_999n }])
    expect(computeLineAmounts(doc(34, [linea(786_782_061_369, 1271, { recargo_pct: 0.01 })]))[0]!.montoItem).toBe(1_000_099_999_999_999n)
  })

  test('exports count in 1/10 000 of the currency; line discounts stay whole units', () => {
    const request = doc(110, [linea(3, 1.5, { descuento_pct: 10 })], { export_data: { tpo_moneda: 'DOLAR USA', tpo_cambio: 950 } })
    expect(computeLineAmounts(request)).toEqual([{ descuento: 0n, recargo: 0n, montoItem: 45_000n }])
    expect(computeExentoExacto(request)).toBe(45_000n)
    const pesos = doc(110, [linea(10_000, 7)], { export_data: { tpo_moneda: 'PESO CL' }, descuentos_globales: [{ tpo_mov: 'R', tpo_valor: '%', valor_dr: 10 }] })
    expect(computeExentoExacto(pesos)).toBe(77_000n)
  })
})

// ------------------------------------------------------------------------------------------------ decimal prices

describe('decimal prices in a foreign currency (issue 13 item 2, DESIGN §12 "Exports")', () => {
  const usd = (detalle: Linea[], extra: Partial<EmitirDte> = {}) =>
    doc(110, detalle, { export_data: { tpo_moneda: 'DOLAR USA', tpo_cambio: 950.25 }, ...extra })

  test('USD 12.50 × 100 = 1250 exactly; pesos = round(1250 × 950.25) = round(1 187 812.5) = 1 187 813', () => {
    const request = usd([linea(12.5, 100)])
    expect(computeLineAmounts(request)).toEqual([{ descuento: 0n, recargo: 0n, montoItem: 12_500_000n }])
    expect(computeLineas(request)[0]).toMatchObject({ monto_item: 1250, descuento_monto: null })
    expect(computeTotals(request)).toMatchObject({ monto_total: 1_187_813, monto_exento: 1_187_813, exportacion: { monto_total: 1250, monto_exento: 1250 } })
  })

  test('a 4-decimal price counts in 1/10 000 of the currency; the line rounds once to 4 decimals, half away from zero', () => {
    // 3 × 1234.5678 = 3703.7034 exactly; 2.5 × 0.0003 = 0.00075 → 0.0008; 0.333333 × 0.0001 = 0.0000333 → 0.
    expect(computeLineAmounts(usd([linea(1234.5678, 3), linea(0.0003, 2.5), linea(0.0001, 0.333333)])).map((a) => a.montoItem)).toEqual([
      37_037_034n, 8n, 0n,
    ])
    expect(computeTotals(usd([linea(1234.5678, 3), linea(0.0003, 2.5)])).exportacion).toMatchObject({ monto_total: 3703.7042 })
  })

  test('line discounts and surcharges stay whole units over a decimal price: 3 × 12.5 = 37.5, 10 % → 4, MontoItem 33.5', () => {
    expect(computeLineas(usd([linea(12.5, 3, { descuento_pct: 10 })]))[0]).toMatchObject({ descuento_monto: 4, monto_item: 33.5 })
    // 78.25 + 10 % = 7.825 → 8 whole units: 86.25.
    expect(computeLineas(usd([linea(78.25, 1, { recargo_pct: 10 })]))[0]).toMatchObject({ recargo_monto: 8, monto_item: 86.25 })
  })

  test('monto_item takes its decimals as given; a % global step rounds to 4 decimals', () => {
    const request = usd([linea(12.5, 3, { descuento_pct: 10 }), linea(0.1234, 7), { nombre: 'Embalaje', monto_item: 10.05 }], {
      descuentos_globales: [{ tpo_mov: 'R', tpo_valor: '%', valor_dr: 5 }],
      export_data: { tpo_moneda: 'DOLAR USA', tpo_cambio: 1000 },
    })
    // 33.5 + 0.8638 + 10.05 = 44.4138; + 5 % = 2.22069 → 2.2207: 46.6345, in pesos 46 634.5 → 46 635.
    expect(computeLineas(request).map((l) => l.monto_item)).toEqual([33.5, 0.8638, 10.05])
    expect(computeTotals(request)).toMatchObject({ monto_total: 46_635, exportacion: { monto_total: 46.6345 } })
  })

  test('in PESO CL and in pesos a whole price keeps the integer arithmetic (same totals as before decimals)', () => {
    const clp = doc(110, [linea(12, 100), linea(13, 37.5)], { export_data: { tpo_moneda: 'PESO CL' } })
    expect(computeTotals(clp)).toMatchObject({ monto_total: 1688, exportacion: { monto_total: 1688, tpo_cambio: null } })
    expect(computeTotals(doc(33, [linea(8990, 3)])).monto_total).toBe(32_094)
  })

  test('property: with prices of up to 4 decimals, MntTotal = Σ MontoItem, each within half a ten-thousandth of cantidad × precio', () => {
    const arbPrecio = fc.integer({ min: 1, max: 100_000_000 }).map((n) => n / 10_000)
    const arbCantidad = fc.integer({ min: 1, max: 10_000_000 }).map((n) => n / 1000)
    fc.assert(
      fc.property(fc.array(fc.tuple(arbPrecio, arbCantidad), { minLength: 1, maxLength: 20 }), (pares) => {
        const request = usd(pares.map(([precio, cantidad]) => linea(precio, cantidad)))
        const amounts = computeLineAmounts(request)
        pares.forEach(([precio, cantidad], i) => {
          // Exact: cantidad × 10^6 × precio × 10^4 is the line in 10^-10; MontoItem in 10^-4 is within half a unit of it.
          const exact = toScaled(cantidad, 6) * toScaled(precio, 4)
          const diff = amounts[i]!.montoItem * 1_000_000n - exact
          expect(2n * (diff < 0n ? -diff : diff)).toBeLessThanOrEqual(1_000_000n)
        })
        const total = amounts.reduce((s, a) => s + a.montoItem, 0n)
        const t = computeTotals(request)
        expect(toScaled(t.exportacion!.monto_total, 4)).toBe(total)
        expect(decimalPlaces(t.exportacion!.monto_total)).toBeLessThanOrEqual(4)
        expect(t.monto_total).toBe(Number(roundDiv(total * toScaled(950.25, 4), 10n ** 8n)))
      }),
      { numRuns: 300 },
    )
  })
})
