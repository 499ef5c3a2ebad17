// Line amounts and document totals, exactly as docs/sii-protocol.md §2.3–2.6 and §7.2 compute them and DESIGN §12 decides
// (rounding half away from zero, per line then per total). Pure and exact: every amount is a BigInt count of the
// smallest unit (pesos; 1/10 000 of the export currency), so no binary-float rounding ever decides a peso.
import {
  FORMA_PAGO_EXP_SIN_PAGO,
  PESO_CL,
  type DescuentoGlobal,
  type EmitirDte,
  type Linea,
  type Moneda,
} from './emision'
import { TIPOS, isLineaExenta, reglaImpuesto } from './tipos'

/** IVA rate in percent, written as TasaIVA 19 (DESIGN §12). */
export const TASA_IVA = 19

/** Decimals the export amounts keep: Totales/MntTotal and MontoItem of Exportaciones are xs:decimal with 4. */
export const EXPORT_DECIMALS = 4

// ------------------------------------------------------------------------------------------------ exact decimals

/** num / den rounded half away from zero (PHP `round()`, what LibreDTE uses; docs/sii-protocol.md §2.4). `den` > 0. */
export function roundDiv(num: bigint, den: bigint): bigint {
  const q = num / den
  const r = num % den
  if (2n * (r < 0n ? -r : r) < den) return q
  return num < 0n ? q - 1n : q + 1n
}

/** The decimal a JSON number was written as (its shortest representation): digits and power of ten. */
function decimalOf(value: number): { digits: bigint; exp10: number } {
  const [mantissa = '0', exponent = '0'] = String(value).toLowerCase().split('e')
  const negative = mantissa.startsWith('-')
  const [int = '0', frac = ''] = (negative ? mantissa.slice(1) : mantissa).split('.')
  const digits = BigInt(int + frac)
  return { digits: negative ? -digits : digits, exp10: Number(exponent) - frac.length }
}

/** How many decimals a number has as written: 12.5 → 1, 3 → 0, 1e-6 → 6. */
export function decimalPlaces(value: number): number {
  return Math.max(0, -decimalOf(value).exp10)
}

/** `value` × 10^decimals as an exact integer, rounded half away from zero beyond those decimals. */
export function toScaled(value: number, decimals: number): bigint {
  const { digits, exp10 } = decimalOf(value)
  const shift = exp10 + decimals
  return shift >= 0 ? digits * 10n ** BigInt(shift) : roundDiv(digits, 10n ** BigInt(-shift))
}

/** The number an exact scaled integer stands for (the nearest double, which prints as the decimal). */
export function fromScaled(value: bigint, decimals: number): number {
  return Number(value) / 10 ** decimals
}

// ------------------------------------------------------------------------------------------------ lines

export interface LineaCalculada {
  readonly nro_lin_det: number
  readonly is_exenta: boolean
  /** DescuentoMonto in whole units (XSD integer even in exports, DESIGN §12); null when none or zero. */
  readonly descuento_monto: number | null
  readonly recargo_monto: number | null
  /** MontoItem: pesos, or the export currency with up to 4 decimals. Gross on 39 and with montos_brutos. */
  readonly monto_item: number
}

/** Decimals of the document's amounts: 4 for exports in a foreign currency, else 0 (integer pesos). */
export function amountDecimals(request: Pick<EmitirDte, 'tipo_dte' | 'export_data'>): number {
  const moneda = request.export_data?.tpo_moneda
  return TIPOS[request.tipo_dte].isExport && moneda !== undefined && moneda !== PESO_CL ? EXPORT_DECIMALS : 0
}

/** Percent of an amount in whole units: round(amount × pct / 100) (docs/sii-protocol.md §2.3), scaled back to `unit`. */
function percentWhole(amount: bigint, pct: number, unit: bigint): bigint {
  return roundDiv(amount * toScaled(pct, 2), 10_000n * unit) * unit
}

const minBig = (a: bigint, b: bigint): bigint => (a < b ? a : b)

/** A line's amounts as exact integers of the smallest unit (pesos; 1/10 000 of the export currency). */
export interface LineAmounts {
  /** DescuentoMonto; whole units (a multiple of the unit) in exports. */
  readonly descuento: bigint
  readonly recargo: bigint
  readonly montoItem: bigint
}

// MontoItem = round(QtyItem × PrcItem) − DescuentoMonto + RecargoMonto, the discount on the line value and the
// surcharge on what is left, each rounded (docs/sii-protocol.md §2.3, LibreDTE vector 033_006). An explicit monto_item is the
// line total as given (spec 2.4: "when the line value must not be computed as quantity times price"). In a foreign
// currency `precio` and `monto_item` carry up to 4 decimals (DESIGN §12), exactly the smallest unit: emision-rules
// refuses more, and decimals at all in pesos, so `toScaled` never rounds them here.
function lineAmounts(linea: Linea, decimals: number): LineAmounts {
  const unit = 10n ** BigInt(decimals)
  if (linea.monto_item !== undefined) return { descuento: 0n, recargo: 0n, montoItem: toScaled(linea.monto_item, decimals) }
  if (linea.precio === undefined) return { descuento: 0n, recargo: 0n, montoItem: 0n }
  const value = roundDiv(toScaled(linea.cantidad ?? 1, 6) * toScaled(linea.precio, decimals), 1_000_000n)
  // DescuentoMonto is whole units even in exports (DESIGN §12), so a discount rounded up could pass a line value with
  // decimals (USD 914.5 at 100 % → 915) and leave MontoItem negative, which the XSD refuses: it stops at the line's
  // whole units instead (914, MontoItem 0.5).
  const descuento = linea.descuento_pct ? minBig(percentWhole(value, linea.descuento_pct, unit), value - (value % unit)) : 0n
  const recargo = linea.recargo_pct ? percentWhole(value - descuento, linea.recargo_pct, unit) : 0n
  return { descuento, recargo, montoItem: value - descuento + recargo }
}

function toLineaCalculada(request: EmitirDte, linea: Linea, index: number, decimals: number): LineaCalculada {
  const { descuento, recargo, montoItem } = lineAmounts(linea, decimals)
  const unit = 10n ** BigInt(decimals)
  return {
    nro_lin_det: index + 1,
    is_exenta: isLineaExenta(request.tipo_dte, linea),
    descuento_monto: descuento > 0n ? Number(descuento / unit) : null,
    recargo_monto: recargo > 0n ? Number(recargo / unit) : null,
    monto_item: fromScaled(montoItem, decimals),
  }
}

/**
 * Every line's amounts, exact, in the smallest unit of `amountDecimals(request)`: what emision-rules checks against the
 * XSD's digits before any of them becomes a JavaScript number (a number past 2^53 is no longer exact, and past 10^21
 * it prints in exponent form, which no XSD amount type accepts).
 */
export function computeLineAmounts(request: EmitirDte): LineAmounts[] {
  const decimals = amountDecimals(request)
  return request.detalle.map((linea) => lineAmounts(linea, decimals))
}

/** Every line's computed amounts, in request order (NroLinDet 1…). */
export function computeLineas(request: EmitirDte): LineaCalculada[] {
  const decimals = amountDecimals(request)
  return request.detalle.map((linea, i) => toLineaCalculada(request, linea, i, decimals))
}

// ------------------------------------------------------------------------------------------------ global D/R

interface Bases {
  afecto: bigint
  exento: bigint
  noFacturable: bigint
  /** Affected amount per additional-tax code, the base of that tax (docs/sii-protocol.md §2.4 step 4). */
  readonly porCodigo: Map<number, bigint>
}

function lineBases(request: EmitirDte, decimals: number): { bases: Bases; hasAfecto: boolean; hasExento: boolean } {
  const bases: Bases = { afecto: 0n, exento: 0n, noFacturable: 0n, porCodigo: new Map() }
  let hasAfecto = false
  let hasExento = false
  for (const linea of request.detalle) {
    const { montoItem } = lineAmounts(linea, decimals)
    if (isLineaExenta(request.tipo_dte, linea)) {
      bases.exento += montoItem
      hasExento = true
      continue
    }
    bases.afecto += montoItem
    hasAfecto = true
    if (linea.cod_imp_adic !== undefined)
      bases.porCodigo.set(linea.cod_imp_adic, (bases.porCodigo.get(linea.cod_imp_adic) ?? 0n) + montoItem)
  }
  return { bases, hasAfecto, hasExento }
}

/** Which amount a global discount or surcharge moves: exempt and export documents infer 1 (spec 2.10). */
export function grupoDescuento(request: Pick<EmitirDte, 'tipo_dte'>, dr: DescuentoGlobal): 'afecto' | 'exento' | 'noFacturable' {
  const ind = dr.ind_exe_dr ?? (TIPOS[request.tipo_dte].isExemptOnly ? 1 : undefined)
  return ind === 1 ? 'exento' : ind === 2 ? 'noFacturable' : 'afecto'
}

// `%` applies to the current base and each step is rounded: base ← base ∓ round(base × pct / 100); `$` moves it by
// the amount as given (docs/sii-protocol.md §2.4, LibreDTE). In exports the step rounds to the currency's 4 decimals.
function drDelta(base: bigint, dr: DescuentoGlobal, decimals: number): bigint {
  const magnitude = dr.tpo_valor === '%' ? roundDiv(base * toScaled(dr.valor_dr, 2), 10_000n) : toScaled(dr.valor_dr, decimals)
  return dr.tpo_mov === 'D' ? -magnitude : magnitude
}

/** Applies the global D/R in order; `firstNegative` is the index of the first one that drives its base below 0. */
function applyDescuentosGlobales(request: EmitirDte, bases: Bases, decimals: number): number | null {
  let firstNegative: number | null = null
  const codesCoveringAll = codesCoveringAllAffected(request)
  ;(request.descuentos_globales ?? []).forEach((dr, i) => {
    const grupo = grupoDescuento(request, dr)
    const delta = drDelta(bases[grupo], dr, decimals)
    bases[grupo] += delta
    if (grupo === 'afecto') adjustTaxBases(bases, dr, delta, codesCoveringAll)
    if (bases[grupo] < 0n && firstNegative === null) firstNegative = i
  })
  return firstNegative
}

// A `%` discount moves every tax base by its own rounded share; a `$` one can only be applied when one code covers
// every affected line (emision-rules rejects it otherwise: docs/sii-protocol.md §2.4, "a global discount must be in %").
function adjustTaxBases(bases: Bases, dr: DescuentoGlobal, afectoDelta: bigint, codesCoveringAll: ReadonlySet<number>): void {
  for (const [code, base] of bases.porCodigo) {
    if (dr.tpo_valor === '%') bases.porCodigo.set(code, base + drDelta(base, dr, 0))
    else if (codesCoveringAll.has(code)) bases.porCodigo.set(code, base + afectoDelta)
  }
}

/** Additional-tax codes carried by every affected line (at most one). */
export function codesCoveringAllAffected(request: EmitirDte): ReadonlySet<number> {
  const afectas = request.detalle.filter((l) => !isLineaExenta(request.tipo_dte, l))
  const first = afectas[0]?.cod_imp_adic
  return first !== undefined && afectas.every((l) => l.cod_imp_adic === first) ? new Set([first]) : new Set()
}

/** The exempt total after global discounts and surcharges, exact, in the smallest unit (an export's MntExe and MntTotal). */
export function computeExentoExacto(request: EmitirDte): bigint {
  const decimals = amountDecimals(request)
  const { bases } = lineBases(request, decimals)
  applyDescuentosGlobales(request, bases, decimals)
  return bases.exento
}

/** Index of the first global discount that makes a total negative, or null (MontoType is non-negative). */
export function findNegativeDescuento(request: EmitirDte): number | null {
  const decimals = amountDecimals(request)
  return applyDescuentosGlobales(request, lineBases(request, decimals).bases, decimals)
}

// ------------------------------------------------------------------------------------------------ taxes

export interface ImpuestoCalculado {
  readonly tipo_imp: number
  /** TasaImp in percent; null when unknown or 0 (PctType starts at 0.01). */
  readonly tasa_imp: number | null
  readonly monto_imp: number
  /** R: VAT retained by the buyer, subtracted from the total (docs/sii-protocol.md §2.5). */
  readonly is_retencion: boolean
}

/** Codes in the order they first appear: lines first, then `impuestos_retenciones`. */
function taxCodes(request: EmitirDte): number[] {
  const codes: number[] = []
  for (const l of request.detalle) if (l.cod_imp_adic !== undefined && !codes.includes(l.cod_imp_adic)) codes.push(l.cod_imp_adic)
  for (const t of request.impuestos_retenciones ?? []) if (!codes.includes(t.tipo_imp)) codes.push(t.tipo_imp)
  return codes
}

// MontoImp = round(base × TasaImp / 100), the base being the lines that carry the code, or the net when none does
// (spec 2.9: "computed on the net"); an explicit monto_imp wins (docs/sii-protocol.md §2.4 step 4).
function computeImpuestos(request: EmitirDte, bases: Bases): ImpuestoCalculado[] {
  return taxCodes(request).map((code) => {
    const informed = request.impuestos_retenciones?.find((t) => t.tipo_imp === code)
    const regla = reglaImpuesto(code)
    const tasa = informed?.tasa_imp ?? regla?.tasa ?? null
    const base = bases.porCodigo.get(code) ?? bases.afecto
    const monto = informed?.monto_imp ?? (tasa === null ? 0 : Number(roundDiv(base * toScaled(tasa, 2), 10_000n)))
    return { tipo_imp: code, tasa_imp: tasa === 0 ? null : tasa, monto_imp: monto, is_retencion: regla?.clase === 'R' }
  })
}

// ------------------------------------------------------------------------------------------------ totals

export interface ComisionesTotales {
  readonly val_com_neto: number
  readonly val_com_exe: number
  readonly val_com_iva: number
}

/** Totales of an export: in its currency, as the XML's Totales carry them (DESIGN §12 "Exports"). */
export interface TotalesExportacion {
  readonly tpo_moneda: Moneda
  /** Null for PESO CL. */
  readonly tpo_cambio: number | null
  readonly monto_exento: number
  readonly monto_total: number
}

/** Totales of a document. The spec's record fields (2.2) keep their names; amounts are integer pesos. */
export interface Totales {
  readonly monto_neto: number | null
  readonly monto_exento: number | null
  /** 19 when the document carries IVA, else 0 (DESIGN §12). */
  readonly tasa_iva: number
  readonly iva: number | null
  readonly impuestos: readonly ImpuestoCalculado[]
  /** IVANoRet: IVA − retained VAT on 46 and its notes, when positive (docs/sii-protocol.md §2.4). */
  readonly iva_no_retenido: number | null
  readonly comisiones: ComisionesTotales | null
  /** MontoNF: discounts and surcharges marked not billable (`ind_exe_dr` 2). */
  readonly monto_no_facturable: number | null
  /** Pesos. Exports: round(total × tpo_cambio), 0 with forma_pago_exp 21 (DESIGN §12). */
  readonly monto_total: number
  readonly exportacion: TotalesExportacion | null
}

/** Net and IVA: from net prices IVA = round(neto × 19 %); from gross ones neto = round(gross / 1.19) (docs/sii-protocol.md §2.4, §7.2). */
function netoEIva(afecto: bigint, isGross: boolean): { neto: bigint; iva: bigint } {
  if (!isGross) return { neto: afecto, iva: roundDiv(afecto * BigInt(TASA_IVA), 100n) }
  const neto = roundDiv(afecto * 100n, BigInt(100 + TASA_IVA))
  return { neto, iva: afecto - neto }
}

// ValComIVA = ValComNeto × tasa IVA when not given (docs/sii-protocol.md §2.4 "Liquidación-factura").
function computeComisiones(request: EmitirDte): ComisionesTotales | null {
  const comisiones = request.comisiones ?? []
  if (comisiones.length === 0) return null
  const sum = (value: (c: (typeof comisiones)[number]) => number) => Number(comisiones.reduce((s, c) => s + BigInt(value(c)), 0n))
  return { val_com_neto: sum((c) => c.val_com_neto), val_com_exe: sum((c) => c.val_com_exe), val_com_iva: sum(comisionIva) }
}

export function comisionIva(c: { readonly val_com_neto: number; readonly val_com_iva?: number }): number {
  return c.val_com_iva ?? Number(roundDiv(BigInt(c.val_com_neto) * BigInt(TASA_IVA), 100n))
}

/** Totales of the request (docs/sii-protocol.md §2.4–2.6, §7.2; DESIGN §12). Assumes `checkEmision` found no error. */
export function computeTotals(request: EmitirDte): Totales {
  const reglas = TIPOS[request.tipo_dte]
  const decimals = amountDecimals(request)
  const { bases, hasAfecto, hasExento } = lineBases(request, decimals)
  applyDescuentosGlobales(request, bases, decimals)
  if (reglas.isExport) return exportTotals(request, bases.exento, decimals)
  const carriesIva = reglas.carriesIva && hasAfecto
  const isGross = reglas.hasGrossPrices || request.montos_brutos === true
  const { neto, iva } = carriesIva ? netoEIva(bases.afecto, isGross) : { neto: 0n, iva: 0n }
  const impuestos = reglas.allowsImpuestos ? computeImpuestos(request, bases) : []
  const comisiones = computeComisiones(request)
  const adicionales = sumImpuestos(impuestos, false)
  const retenidos = sumImpuestos(impuestos, true)
  const comisionesTotal = comisiones ? BigInt(comisiones.val_com_neto) + BigInt(comisiones.val_com_exe) + BigInt(comisiones.val_com_iva) : 0n
  // MntTotal = MntNeto + MntExe + IVA + additional taxes − retained VAT − commissions (docs/sii-protocol.md §2.4 step 5),
  // summed exactly: emision-rules refuses a total the XSD cannot take, which needs the true one.
  const total = Number(neto + bases.exento + iva + adicionales - retenidos - comisionesTotal)
  const hasRetenciones = impuestos.some((t) => t.is_retencion)
  const ivaNoRetenido = Number(iva - retenidos)
  const hasNoFacturable = (request.descuentos_globales ?? []).some((dr) => grupoDescuento(request, dr) === 'noFacturable')
  return {
    monto_neto: carriesIva ? Number(neto) : null,
    monto_exento: hasExento || hasExentoDescuento(request) ? Number(bases.exento) : null,
    tasa_iva: carriesIva ? TASA_IVA : 0,
    iva: carriesIva ? Number(iva) : null,
    impuestos,
    iva_no_retenido: hasRetenciones && ivaNoRetenido > 0 ? ivaNoRetenido : null,
    comisiones,
    monto_no_facturable: hasNoFacturable ? Number(bases.noFacturable) : null,
    monto_total: total,
    exportacion: null,
  }
}

function sumImpuestos(impuestos: readonly ImpuestoCalculado[], retencion: boolean): bigint {
  return impuestos.filter((t) => t.is_retencion === retencion).reduce((sum, t) => sum + BigInt(t.monto_imp), 0n)
}

function hasExentoDescuento(request: EmitirDte): boolean {
  return (request.descuentos_globales ?? []).some((dr) => grupoDescuento(request, dr) === 'exento')
}

// Exports are exempt: Totales carry TpoMoneda, MntExe = MntTotal in that currency; the pesos are
// round(amount × tpo_cambio), or 0 when forma_pago_exp is 21 "sin pago" (docs/sii-protocol.md §2.6, DESIGN §12).
function exportTotals(request: EmitirDte, exento: bigint, decimals: number): Totales {
  const data = request.export_data!
  const isForeign = data.tpo_moneda !== PESO_CL
  const sinPago = data.forma_pago_exp === FORMA_PAGO_EXP_SIN_PAGO
  const toPesos = (amount: bigint): number =>
    sinPago ? 0 : isForeign ? Number(roundDiv(amount * toScaled(data.tpo_cambio ?? 0, 4), 10n ** BigInt(decimals + 4))) : Number(amount)
  return {
    monto_neto: null,
    monto_exento: toPesos(exento),
    tasa_iva: 0,
    iva: null,
    impuestos: [],
    iva_no_retenido: null,
    comisiones: null,
    monto_no_facturable: null,
    monto_total: toPesos(exento),
    exportacion: {
      tpo_moneda: data.tpo_moneda,
      tpo_cambio: isForeign ? (data.tpo_cambio ?? null) : null,
      monto_exento: fromScaled(exento, decimals),
      monto_total: fromScaled(exento, decimals),
    },
  }
}

/** A decimal without exponent nor trailing zeros (SII-FMT: decimals only when significant, docs/sii-protocol.md §1.3). */
export function formatDecimal(value: number, maxDecimals: number): string {
  const scaled = toScaled(value, maxDecimals)
  const negative = scaled < 0n
  const digits = (negative ? -scaled : scaled).toString().padStart(maxDecimals + 1, '0')
  const int = digits.slice(0, digits.length - maxDecimals)
  const frac = digits.slice(digits.length - maxDecimals).replace(/0+$/, '')
  return `${negative ? '-' : ''}${int}${frac ? `.${frac}` : ''}`
}

/**
 * An export's currency and its MntTotal exactly as Totales writes it (the same text, from the same totals), for the
 * DTE record and the SII status query, which must send the document's own total (DESIGN §12 "Exports",
 * docs/sii-protocol.md §6.6); null for a domestic document.
 */
export function montoTotalMoneda(request: EmitirDte, totales: Totales = computeTotals(request)): { readonly moneda: string; readonly monto: string } | null {
  const exportacion = totales.exportacion
  return exportacion === null ? null : { moneda: exportacion.tpo_moneda, monto: formatDecimal(exportacion.monto_total, amountDecimals(request)) }
}
