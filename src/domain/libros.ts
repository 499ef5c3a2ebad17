// The certification libros (DESIGN §15 "GET /certificacion/libros/…", research/next-capabilities.md §1.4): the lines
// (Detalle) and the totals per document type (ResumenPeriodo) of the Información Electrónica de Ventas and de Compras
// (LibroCompraVenta, LibroCV_v10.xsd) and of the Libro de Guías (LibroGuia_v10.xsd), from plain inputs. Pure: the
// service gathers the issued documents and the set's grid, xml/libro-cv.ts and xml/libro-guia.ts write and sign them,
// and the SII simulator checks a received libro's totals with the same functions. Every reading of the SII's
// instructions behind these rules is in docs/decisions/certificacion.md "Los libros".
import { normalizeRut } from './rut'
import type { CompraSet } from './set-pruebas'
import { roundDiv, TASA_IVA } from './totals'

/** One reason a libro cannot be built: which input (`documentos.2`, `compras.4`, `proveedor.rut`) and why, in Spanish. */
export interface LibroError {
  readonly campo: string
  readonly mensaje: string
}

export type LibroResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: readonly LibroError[] }

/**
 * FolioNotificacion of each certification libro. Ventas 1 and compras 2: the SII's "Instrucciones para la construcción
 * de documentos … con los datos del set de pruebas" §III and §IV ("Folio Notificación: Registrar 1" / "Registrar 2").
 * Guías 3: the instructions say nothing for the libro de guías (LibroGuia_v10.xsd requires the element); 3 continues
 * the SII's numbering and is what one 2026 certification used (docs/decisions/certificacion.md "Los libros").
 */
export const FOLIO_NOTIFICACION = { ventas: 1, compras: 2, guias: 3 } as const

// ------------------------------------------------------------------------------------------------ compras y ventas

/** CodIVANoRec of LibroCV_v10.xsd: 1 operaciones no gravadas o exentas, 2 fuera de plazo, 3 gastos rechazados, 4 entrega gratuita, 9 otros. */
export type CodigoIvaNoRecuperable = 1 | 2 | 3 | 4 | 9

/** One IVA no recuperable of a line (IVANoRec). */
export interface IvaNoRecuperable {
  readonly codigo: CodigoIvaNoRecuperable
  readonly monto: number
}

/** One other tax or retention of a line (OtrosImp): CodImp of the SII's table, its rate in percent, the amount. */
export interface OtroImpuesto {
  readonly codigo: number
  readonly tasa: number | null
  readonly monto: number
}

/** One Detalle of a LibroCompraVenta, in pesos. Zero means "not written" for the optional amounts. */
export interface DetalleCompraVenta {
  readonly tipoDoc: number
  readonly folio: number
  /** TasaImp in percent; null when the document carries no IVA rate. */
  readonly tasaImpuesto: number | null
  /** FchDoc, `YYYY-MM-DD`. */
  readonly fecha: string
  /** RUTDoc, canonical: the receptor (ventas) or the supplier (compras). */
  readonly rut: string
  readonly razonSocial: string
  /** TpoDocRef and FolioDocRef: the document a note modifies, when the caller names it. */
  readonly referencia: { readonly tipoDoc: number; readonly folio: number } | null
  readonly montoExento: number
  readonly montoNeto: number
  /** MntIVA: the IVA the libro's owner books with credit (compras) or charges (ventas). */
  readonly montoIva: number
  readonly ivaNoRecuperable: readonly IvaNoRecuperable[]
  readonly ivaUsoComun: number
  readonly otrosImpuestos: readonly OtroImpuesto[]
  readonly ivaRetenidoTotal: number
  readonly montoTotal: number
}

/** One TotalesPeriodo: the sums of one document type. */
export interface TotalesCompraVenta {
  readonly tipoDoc: number
  readonly cantidad: number
  readonly montoExento: number
  readonly montoNeto: number
  readonly montoIva: number
  readonly ivaNoRecuperable: ReadonlyArray<{ readonly codigo: CodigoIvaNoRecuperable; readonly operaciones: number; readonly monto: number }>
  readonly operacionesIvaUsoComun: number
  readonly ivaUsoComun: number
  /** FctProp in thousandths (0.60 → 600), written only beside IVA de uso común; null otherwise. */
  readonly factorMilesimas: number | null
  /** TotCredIVAUsoComun = round(TotIVAUsoComun × FctProp). */
  readonly creditoIvaUsoComun: number
  readonly otrosImpuestos: ReadonlyArray<{ readonly codigo: number; readonly monto: number }>
  readonly ivaRetenidoTotal: number
  readonly montoTotal: number
}

export type TipoOperacion = 'VENTA' | 'COMPRA'

/** A libro de ventas or de compras: its period, its lines in input order and its totals per type, ascending. */
export interface LibroCompraVenta {
  readonly operacion: TipoOperacion
  /** PeriodoTributario, `YYYY-MM`. */
  readonly periodo: string
  readonly detalle: readonly DetalleCompraVenta[]
  readonly resumen: readonly TotalesCompraVenta[]
}

/** The sums of `detalle` per TpoDoc, ascending; `factorMilesimas` goes beside the types that carry IVA de uso común. */
export function totalesCompraVenta(detalle: readonly DetalleCompraVenta[], factorMilesimas: number | null): TotalesCompraVenta[] {
  const tipos = [...new Set(detalle.map((d) => d.tipoDoc))].sort((a, b) => a - b)
  return tipos.map((tipoDoc) => {
    const lines = detalle.filter((d) => d.tipoDoc === tipoDoc)
    const sum = (pick: (d: DetalleCompraVenta) => number): number => lines.reduce((acc, d) => acc + pick(d), 0)
    const ivaUsoComun = sum((d) => d.ivaUsoComun)
    const factor = ivaUsoComun > 0 ? factorMilesimas : null
    return {
      tipoDoc,
      cantidad: lines.length,
      montoExento: sum((d) => d.montoExento),
      montoNeto: sum((d) => d.montoNeto),
      montoIva: sum((d) => d.montoIva),
      ivaNoRecuperable: groupIvaNoRecuperable(lines),
      operacionesIvaUsoComun: lines.filter((d) => d.ivaUsoComun > 0).length,
      ivaUsoComun,
      factorMilesimas: factor,
      creditoIvaUsoComun: factor === null ? 0 : creditoUsoComun(ivaUsoComun, factor),
      otrosImpuestos: groupOtrosImpuestos(lines),
      ivaRetenidoTotal: sum((d) => d.ivaRetenidoTotal),
      montoTotal: sum((d) => d.montoTotal),
    }
  })
}

/** The formato IECV's "Factor proporcionalidad IVA * Total IVA Uso común", rounded half away from zero as every amount. */
export function creditoUsoComun(ivaUsoComun: number, factorMilesimas: number): number {
  return Number(roundDiv(BigInt(ivaUsoComun) * BigInt(factorMilesimas), 1000n))
}

function groupIvaNoRecuperable(lines: readonly DetalleCompraVenta[]): TotalesCompraVenta['ivaNoRecuperable'] {
  const codes = [...new Set(lines.flatMap((d) => d.ivaNoRecuperable.map((i) => i.codigo)))].sort((a, b) => a - b)
  return codes.map((codigo) => {
    const items = lines.flatMap((d) => d.ivaNoRecuperable.filter((i) => i.codigo === codigo))
    return { codigo, operaciones: lines.filter((d) => d.ivaNoRecuperable.some((i) => i.codigo === codigo)).length, monto: items.reduce((a, i) => a + i.monto, 0) }
  })
}

function groupOtrosImpuestos(lines: readonly DetalleCompraVenta[]): TotalesCompraVenta['otrosImpuestos'] {
  const codes = [...new Set(lines.flatMap((d) => d.otrosImpuestos.map((o) => o.codigo)))].sort((a, b) => a - b)
  return codes.map((codigo) => ({ codigo, monto: lines.flatMap((d) => d.otrosImpuestos.filter((o) => o.codigo === codigo)).reduce((a, o) => a + o.monto, 0) }))
}

/**
 * Where a libro's written ResumenPeriodo differs from the sums of its own Detalle (what the SII checks of a TOTAL
 * envío, formato IECV §1.5: "Suma por documento del RESUMEN … corresponda con DETALLE"), one Spanish line each; [] when
 * they agree. The counts of operations (TotOp…) are optional in the schema and not compared; TotCredIVAUsoComun is
 * compared with the written TotIVAUsoComun times the written FctProp.
 */
export function resumenCompraVentaMismatches(detalle: readonly DetalleCompraVenta[], resumen: readonly TotalesCompraVenta[]): string[] {
  const computed = totalesCompraVenta(detalle, null)
  const problems: string[] = []
  for (const tipo of new Set([...computed.map((t) => t.tipoDoc), ...resumen.map((t) => t.tipoDoc)])) {
    const expected = computed.find((t) => t.tipoDoc === tipo)
    const written = resumen.filter((t) => t.tipoDoc === tipo)
    if (written.length > 1) problems.push(`TpoDoc ${tipo}: ${written.length} TotalesPeriodo para el mismo tipo`)
    const first = written[0]
    if (first === undefined) problems.push(`TpoDoc ${tipo}: ${expected?.cantidad ?? 0} documentos en el detalle y ningún TotalesPeriodo`)
    else if (expected === undefined) problems.push(`TpoDoc ${tipo}: TotalesPeriodo con ${first.cantidad} documentos sin ninguno en el detalle`)
    else problems.push(...totalesMismatches(tipo, first, expected))
  }
  return problems
}

function totalesMismatches(tipo: number, written: TotalesCompraVenta, expected: TotalesCompraVenta): string[] {
  const pairs: Array<readonly [string, number, number]> = [
    ['TotDoc', written.cantidad, expected.cantidad],
    ['TotMntExe', written.montoExento, expected.montoExento],
    ['TotMntNeto', written.montoNeto, expected.montoNeto],
    ['TotMntIVA', written.montoIva, expected.montoIva],
    ['TotIVAUsoComun', written.ivaUsoComun, expected.ivaUsoComun],
    ['TotIVARetTotal', written.ivaRetenidoTotal, expected.ivaRetenidoTotal],
    ['TotMntTotal', written.montoTotal, expected.montoTotal],
    ...codeSums('TotIVANoRec', written.ivaNoRecuperable, expected.ivaNoRecuperable),
    ...codeSums('TotOtrosImp', written.otrosImpuestos, expected.otrosImpuestos),
  ]
  if (written.ivaUsoComun > 0 && written.factorMilesimas === null) pairs.push(['FctProp', 0, 1])
  if (written.factorMilesimas !== null) pairs.push(['TotCredIVAUsoComun', written.creditoIvaUsoComun, creditoUsoComun(written.ivaUsoComun, written.factorMilesimas)])
  return pairs
    .filter(([, a, b]) => a !== b)
    .map(([name, a, b]) => (name === 'FctProp' ? `TpoDoc ${tipo}: IVA de uso común sin FctProp` : `TpoDoc ${tipo}: ${name} ${a} en el resumen, ${b} según el detalle`))
}

function codeSums(
  name: string, written: ReadonlyArray<{ codigo: number; monto: number }>, expected: ReadonlyArray<{ codigo: number; monto: number }>,
): Array<readonly [string, number, number]> {
  const codes = [...new Set([...written, ...expected].map((x) => x.codigo))].sort((a, b) => a - b)
  const total = (list: ReadonlyArray<{ codigo: number; monto: number }>, codigo: number): number => list.filter((x) => x.codigo === codigo).reduce((a, x) => a + x.monto, 0)
  return codes.map((codigo) => [`${name} ${codigo}`, total(written, codigo), total(expected, codigo)] as const)
}

// ------------------------------------------------------------------------------------------------ ventas

/** One document issued for the BASICO set (or FACTURA EXENTA), as the issuing step stored it. */
export interface DocumentoVenta {
  readonly tipoDte: number
  readonly folio: number
  /** `YYYY-MM-DD`. */
  readonly fechaEmision: string
  readonly rutReceptor: string
  readonly razonSocialReceptor: string
  readonly montoExento: number
  readonly montoNeto: number
  /** TasaIVA of the document; null when it has none (an exempt invoice, a note that only corrects a text). */
  readonly tasaIva: number | null
  readonly iva: number
  readonly montoTotal: number
  /** The document a note modifies; written as TpoDocRef/FolioDocRef (optional in the formato IECV). */
  readonly referencia?: { readonly tipoDte: number; readonly folio: number }
}

export interface LibroVentasInput {
  readonly periodo: string
  readonly documentos: readonly DocumentoVenta[]
}

/**
 * The types a certification libro de ventas carries: the electronic invoices and notes of the BASICO and FACTURA EXENTA
 * sets (instructions §III: "se deben incluir Facturas, Notas de Crédito y Notas de Débito electrónicas"). A factura de
 * compra (46) would need the retention fields and is booked by the buyer's own rules; exports are in another currency.
 */
const TIPOS_VENTA: ReadonlySet<number> = new Set([33, 34, 56, 61])

/** The libro de ventas: one Detalle per document, in the order given, and TotalesPeriodo per type; or every problem. */
export function libroVentas(input: LibroVentasInput): LibroResult<LibroCompraVenta> {
  const errors: LibroError[] = []
  checkPeriodo(input.periodo, errors)
  if (input.documentos.length === 0) errors.push({ campo: 'documentos', mensaje: 'El libro de ventas necesita al menos un documento.' })
  const seen = new Set<string>()
  const detalle = input.documentos.flatMap((d, i) => {
    const line = detalleVenta(d, `documentos.${i}`, input.periodo, errors)
    const key = `${d.tipoDte}/${d.folio}`
    if (seen.has(key)) errors.push({ campo: `documentos.${i}`, mensaje: `El documento tipo ${d.tipoDte} folio ${d.folio} viene dos veces.` })
    seen.add(key)
    return line === null ? [] : [line]
  })
  if (errors.length > 0) return { ok: false, errors }
  return { ok: true, value: { operacion: 'VENTA', periodo: input.periodo, detalle, resumen: totalesCompraVenta(detalle, null) } }
}

function detalleVenta(d: DocumentoVenta, campo: string, periodo: string, errors: LibroError[]): DetalleCompraVenta | null {
  const before = errors.length
  if (!TIPOS_VENTA.has(d.tipoDte)) errors.push({ campo: `${campo}.tipo_dte`, mensaje: `El tipo ${d.tipoDte} no va en el libro de ventas de certificación (33, 34, 56, 61).` })
  checkFolio(d.folio, `${campo}.folio`, errors)
  checkFecha(d.fechaEmision, periodo, `${campo}.fecha_emision`, errors)
  const rut = checkRut(d.rutReceptor, `${campo}.rut_receptor`, errors)
  for (const [name, value] of [['monto_exento', d.montoExento], ['monto_neto', d.montoNeto], ['iva', d.iva], ['monto_total', d.montoTotal]] as const) {
    checkMonto(value, `${campo}.${name}`, errors)
  }
  if (d.montoTotal !== d.montoExento + d.montoNeto + d.iva) {
    errors.push({ campo: `${campo}.monto_total`, mensaje: `El total ${d.montoTotal} no es exento + neto + IVA (${d.montoExento + d.montoNeto + d.iva}): el libro no lleva otros impuestos.` })
  }
  if (d.montoNeto > 0 && d.tasaIva === null) errors.push({ campo: `${campo}.tasa_iva`, mensaje: 'Un documento con monto neto necesita su tasa de IVA.' })
  if (d.referencia !== undefined) checkFolio(d.referencia.folio, `${campo}.referencia.folio`, errors)
  if (errors.length > before || rut === null) return null
  return {
    tipoDoc: d.tipoDte, folio: d.folio, tasaImpuesto: d.tasaIva, fecha: d.fechaEmision, rut, razonSocial: d.razonSocialReceptor,
    referencia: d.referencia === undefined ? null : { tipoDoc: d.referencia.tipoDte, folio: d.referencia.folio },
    montoExento: d.montoExento, montoNeto: d.montoNeto, montoIva: d.iva, ivaNoRecuperable: [], ivaUsoComun: 0, otrosImpuestos: [],
    ivaRetenidoTotal: 0, montoTotal: d.montoTotal,
  }
}

// ------------------------------------------------------------------------------------------------ compras

/** How a line of the LIBRO DE COMPRAS grid is booked, read from its observation (research §1.4). */
export type TratamientoCompra = 'credito' | 'iva_uso_comun' | 'entrega_gratuita' | 'retencion_total'

const FACTURAS = [29, 30, 32, 33, 34]
const NOTAS = [55, 56, 60, 61]

/**
 * The observations of the SII's grid, normalized (upper case, no accents, single spaces), each with the document types
 * it may describe. Whole-text matches: an observation not in this table is an error, never a guess.
 * - FACTURA DEL GIRO CON DERECHO A CREDITO: IVA recuperable (MntIVA).
 * - FACTURA CON IVA USO COMUN: IVAUsoComun, credited in the resumen by the factor of proportionality.
 * - ENTREGA GRATUITA DEL PROVEEDOR: IVA no recuperable, CodIVANoRec 4 "Entregas gratuitas (premios, bonificaciones,
 *   etc.) recibidas" (formato IECV §3.4).
 * - COMPRA CON RETENCION TOTAL DEL IVA: the company's own factura de compra (45, 46), code 15 "IVA retenido total".
 * - NOTA DE CREDITO (DEBITO) POR …: a note from the supplier, booked with credit like the invoice it modifies.
 */
const TRATAMIENTOS: ReadonlyArray<{ readonly pattern: RegExp; readonly tratamiento: TratamientoCompra; readonly tipos: readonly number[] }> = [
  { pattern: /^FACTURA DEL GIRO CON DERECHO A CREDITO$/, tratamiento: 'credito', tipos: FACTURAS },
  { pattern: /^FACTURA CON IVA USO COMUN$/, tratamiento: 'iva_uso_comun', tipos: FACTURAS },
  { pattern: /^ENTREGA GRATUITA DEL PROVEEDOR$/, tratamiento: 'entrega_gratuita', tipos: FACTURAS },
  { pattern: /^COMPRA CON RETENCION TOTAL DEL IVA$/, tratamiento: 'retencion_total', tipos: [45, 46] },
  { pattern: /^NOTA DE (CREDITO|DEBITO) POR \S.*$/, tratamiento: 'credito', tipos: NOTAS },
]

/** The treatment an observation names, or null when the table has none for it. */
export function tratamientoDe(observacion: string): TratamientoCompra | null {
  const text = normalizeText(observacion)
  return TRATAMIENTOS.find((t) => t.pattern.test(text))?.tratamiento ?? null
}

export interface Proveedor {
  /** A valid RUT: the set names no supplier, and the SII asks for "Rut válidos" (instructions §IV.3). */
  readonly rut: string
  /** RznSoc, required for paper documents (formato IECV §3.4 field 12). */
  readonly razonSocial: string
}

export interface LibroComprasInput {
  /** PeriodoTributario `YYYY-MM`: "se asume que el período tributario es el mismo del Libro de Ventas" (instructions §IV.1). */
  readonly periodo: string
  readonly compras: readonly CompraSet[]
  /** The set's factor of proportionality (0.60); needed only when a line has IVA de uso común. */
  readonly factorProporcionalidad: number | null
  /** The supplier written on every line. */
  readonly proveedor: Proveedor
  /** FchDoc of every line, in the period; default its first day (the set gives no dates). */
  readonly fecha?: string
}

/** The libro de compras from the set's grid: each line booked as its observation says; or every problem. */
export function libroCompras(input: LibroComprasInput): LibroResult<LibroCompraVenta> {
  const errors: LibroError[] = []
  checkPeriodo(input.periodo, errors)
  const fecha = input.fecha ?? `${input.periodo}-01`
  checkFecha(fecha, input.periodo, 'fecha', errors)
  const rut = checkRut(input.proveedor.rut, 'proveedor.rut', errors)
  if (input.proveedor.razonSocial.trim() === '') errors.push({ campo: 'proveedor.razon_social', mensaje: 'Falta la razón social del proveedor.' })
  if (input.compras.length === 0) errors.push({ campo: 'compras', mensaje: 'El set no trae compras.' })
  const factor = factorMilesimasOf(input.factorProporcionalidad, input.compras, errors)
  const lines = input.compras.map((c, i) => detalleCompra(c, `compras.${i}`, errors))
  if (errors.length > 0 || rut === null) return { ok: false, errors }
  const proveedor = { rut, razonSocial: input.proveedor.razonSocial.trim() }
  const detalle = lines.flatMap((l) => (l === null ? [] : [{ ...l, fecha, ...proveedor }]))
  return { ok: true, value: { operacion: 'COMPRA', periodo: input.periodo, detalle, resumen: totalesCompraVenta(detalle, factor) } }
}

type LineaCompra = Omit<DetalleCompraVenta, 'fecha' | 'rut' | 'razonSocial'>

function detalleCompra(c: CompraSet, campo: string, errors: LibroError[]): LineaCompra | null {
  const where = `línea ${c.lineNumber} (${c.tipoDocumento} ${c.folio})`
  const entry = TRATAMIENTOS.find((t) => t.pattern.test(normalizeText(c.observacion)))
  if (entry === undefined) {
    errors.push({ campo: `${campo}.observacion`, mensaje: `Observación no reconocida en la ${where}: «${c.observacion}».` })
    return null
  }
  if (!entry.tipos.includes(c.tipo)) {
    errors.push({ campo: `${campo}.tipo`, mensaje: `La observación «${c.observacion}» no corresponde a un documento tipo ${c.tipo} (${where}).` })
    return null
  }
  const before = errors.length
  checkFolio(c.folio, `${campo}.folio`, errors)
  checkMonto(c.montoExento, `${campo}.monto_exento`, errors)
  checkMonto(c.montoAfecto, `${campo}.monto_afecto`, errors)
  if (errors.length > before) return null
  return bookCompra(c, entry.tratamiento)
}

/**
 * One line's amounts. The IVA is the neto at TASA_IVA, rounded as every document's (formato IECV §3.4 field 15: "Tasa
 * IVA * Monto neto = Monto IVA Recuperable + IVA no recuperable + IVA uso común"); MntTotal is field 25's sum: neto +
 * exento + IVA recuperable + IVA uso común + IVA no recuperable − IVA retenido total.
 */
function bookCompra(c: CompraSet, tratamiento: TratamientoCompra): LineaCompra {
  const iva = Number(roundDiv(BigInt(c.montoAfecto) * BigInt(TASA_IVA), 100n))
  const base = {
    tipoDoc: c.tipo, folio: c.folio, tasaImpuesto: TASA_IVA, referencia: null, montoExento: c.montoExento, montoNeto: c.montoAfecto,
    montoIva: iva, ivaNoRecuperable: [], ivaUsoComun: 0, otrosImpuestos: [], ivaRetenidoTotal: 0, montoTotal: c.montoExento + c.montoAfecto + iva,
  } satisfies LineaCompra
  switch (tratamiento) {
    case 'credito':
      return base
    case 'iva_uso_comun':
      return { ...base, montoIva: 0, ivaUsoComun: iva }
    case 'entrega_gratuita':
      return { ...base, montoIva: 0, ivaNoRecuperable: [{ codigo: 4, monto: iva }] }
    case 'retencion_total':
      // The company issued the 46 and retained its whole IVA (code 15, table 7 of the formato IECV): it keeps the
      // credit (MntIVA) and the retention leaves the total at the neto.
      return { ...base, otrosImpuestos: [{ codigo: 15, tasa: TASA_IVA, monto: iva }], ivaRetenidoTotal: iva, montoTotal: c.montoExento + c.montoAfecto }
  }
}

/** FctProp has 3 decimals (LibroCV_v10.xsd); a factor of proportionality lies in (0, 1]. */
function factorMilesimasOf(factor: number | null, compras: readonly CompraSet[], errors: LibroError[]): number | null {
  const needed = compras.some((c) => tratamientoDe(c.observacion) === 'iva_uso_comun')
  if (factor === null) {
    if (needed) errors.push({ campo: 'factor_proporcionalidad', mensaje: 'Hay compras con IVA de uso común y falta el factor de proporcionalidad.' })
    return null
  }
  const milesimas = Math.round(factor * 1000)
  if (!Number.isFinite(factor) || Math.abs(milesimas - factor * 1000) > 1e-6 || milesimas <= 0 || milesimas > 1000) {
    errors.push({ campo: 'factor_proporcionalidad', mensaje: `El factor de proporcionalidad ${factor} debe estar entre 0,001 y 1, con a lo más 3 decimales.` })
    return null
  }
  return milesimas
}

// ------------------------------------------------------------------------------------------------ guías

/** TpoOper of LibroGuia_v10.xsd: 1 venta, 2 ventas por efectuar, 3 consignaciones, 4 demostración, 5 traslado interno, 6 otros, 7 devolución. */
export type TipoOperacionGuia = 1 | 2 | 3 | 4 | 5 | 6 | 7

/** One Detalle of a LibroGuia, in pesos. */
export interface DetalleGuia {
  readonly folio: number
  /** 2: annulled after it was sent to the SII (the set's "GUIA ANULADA"); 1 (before) is never produced here. */
  readonly anulado: 1 | 2 | null
  readonly tipoOperacion: TipoOperacionGuia
  readonly fecha: string
  readonly rut: string
  readonly razonSocial: string
  readonly montoNeto: number
  readonly tasaImpuesto: number | null
  readonly iva: number
  readonly montoTotal: number
  /** The invoice that billed the guía (TpoDocRef, FolioDocRef, FchDocRef). */
  readonly referencia: { readonly tipoDoc: number; readonly folio: number; readonly fecha: string } | null
}

/** ResumenPeriodo of a LibroGuia. */
export interface ResumenGuias {
  /** TotFolAnulado: guías with Anulado 1. */
  readonly foliosAnulados: number
  /** TotGuiaAnulada: guías with Anulado 2. */
  readonly guiasAnuladas: number
  /** TotGuiaVenta and TotMntGuiaVta: guías not annulled whose operation is a sale (TpoOper 1). */
  readonly guiasVenta: number
  readonly montoGuiasVenta: number
  /** TotTraslado: the guías not annulled of every other operation, per type. */
  readonly traslados: ReadonlyArray<{ readonly tipo: number; readonly cantidad: number; readonly monto: number }>
}

export interface LibroGuias {
  readonly periodo: string
  readonly detalle: readonly DetalleGuia[]
  readonly resumen: ResumenGuias
}

/** One guía issued for the GUIA DE DESPACHO set, as the issuing step stored it. */
export interface GuiaEmitida {
  readonly folio: number
  readonly fechaEmision: string
  /** IndTraslado of the guía (DTE_v10.xsd): 1 venta … 7 devolución; 8 and 9 (exportación) have no TpoOper in LibroGuia_v10.xsd. */
  readonly indTraslado: number
  readonly rutReceptor: string
  readonly razonSocialReceptor: string
  readonly montoNeto: number
  readonly tasaIva: number | null
  readonly iva: number
  readonly montoTotal: number
}

export interface LibroGuiasInput {
  readonly periodo: string
  readonly guias: readonly GuiaEmitida[]
  /** The set's "GUIA QUE SE FACTURO EN EL PERIODO" and the invoice that billed it. */
  readonly facturada: { readonly folioGuia: number; readonly factura: { readonly tipoDte: number; readonly folio: number; readonly fechaEmision: string } } | null
  /** The set's "GUIA ANULADA". */
  readonly folioAnulada: number | null
}

/** The libro de guías: one Detalle per guía, the invoiced one with its invoice, the annulled one with Anulado 2. */
export function libroGuias(input: LibroGuiasInput): LibroResult<LibroGuias> {
  const errors: LibroError[] = []
  checkPeriodo(input.periodo, errors)
  if (input.guias.length === 0) errors.push({ campo: 'guias', mensaje: 'El libro de guías necesita al menos una guía.' })
  const folios = input.guias.map((g) => g.folio)
  folios.forEach((f, i) => {
    if (folios.indexOf(f) !== i) errors.push({ campo: `guias.${i}`, mensaje: `La guía folio ${f} viene dos veces.` })
  })
  checkMarcas(input, folios, errors)
  const detalle = input.guias.flatMap((g, i) => {
    const line = detalleGuia(g, `guias.${i}`, input, errors)
    return line === null ? [] : [line]
  })
  if (errors.length > 0) return { ok: false, errors }
  return { ok: true, value: { periodo: input.periodo, detalle, resumen: totalesGuias(detalle) } }
}

function checkMarcas(input: LibroGuiasInput, folios: readonly number[], errors: LibroError[]): void {
  const { facturada, folioAnulada } = input
  if (facturada !== null) {
    if (!folios.includes(facturada.folioGuia)) errors.push({ campo: 'facturada.folio_guia', mensaje: `La guía facturada ${facturada.folioGuia} no está entre las guías.` })
    if (![33, 34].includes(facturada.factura.tipoDte)) errors.push({ campo: 'facturada.factura.tipo_dte', mensaje: 'La guía se factura con una factura electrónica (33 o 34).' })
    checkFolio(facturada.factura.folio, 'facturada.factura.folio', errors)
    if (dateOrNull(facturada.factura.fechaEmision) === null) errors.push({ campo: 'facturada.factura.fecha_emision', mensaje: 'Fecha de la factura inválida (AAAA-MM-DD).' })
  }
  if (folioAnulada !== null && !folios.includes(folioAnulada)) errors.push({ campo: 'folio_anulada', mensaje: `La guía anulada ${folioAnulada} no está entre las guías.` })
  if (facturada !== null && facturada.folioGuia === folioAnulada) errors.push({ campo: 'folio_anulada', mensaje: 'Una misma guía no puede estar facturada y anulada.' })
}

function detalleGuia(g: GuiaEmitida, campo: string, input: LibroGuiasInput, errors: LibroError[]): DetalleGuia | null {
  const before = errors.length
  checkFolio(g.folio, `${campo}.folio`, errors)
  checkFecha(g.fechaEmision, input.periodo, `${campo}.fecha_emision`, errors)
  const rut = checkRut(g.rutReceptor, `${campo}.rut_receptor`, errors)
  if (!Number.isInteger(g.indTraslado) || g.indTraslado < 1 || g.indTraslado > 7) {
    errors.push({ campo: `${campo}.ind_traslado`, mensaje: `El tipo de traslado ${g.indTraslado} no tiene tipo de operación en el libro de guías (1 a 7).` })
  }
  for (const [name, value] of [['monto_neto', g.montoNeto], ['iva', g.iva], ['monto_total', g.montoTotal]] as const) checkMonto(value, `${campo}.${name}`, errors)
  if (g.montoTotal !== g.montoNeto + g.iva) errors.push({ campo: `${campo}.monto_total`, mensaje: `El total ${g.montoTotal} no es neto + IVA (${g.montoNeto + g.iva}).` })
  if (errors.length > before || rut === null) return null
  const facturada = input.facturada?.folioGuia === g.folio ? input.facturada.factura : null
  return {
    folio: g.folio, anulado: input.folioAnulada === g.folio ? 2 : null, tipoOperacion: g.indTraslado as TipoOperacionGuia, fecha: g.fechaEmision,
    rut, razonSocial: g.razonSocialReceptor, montoNeto: g.montoNeto, tasaImpuesto: g.tasaIva, iva: g.iva, montoTotal: g.montoTotal,
    referencia: facturada === null ? null : { tipoDoc: facturada.tipoDte, folio: facturada.folio, fecha: facturada.fechaEmision },
  }
}

/**
 * The formato del libro de guías' resumen: "Total Guías venta: cantidad de guías en que el campo ANULADO/MODIFICADO
 * [es] distinto de 1 y 2 y el campo TIPO DE OPERACIÓN=1", their MntTotal summed; the other operations per type
 * (TotTraslado), also without the annulled ones; the annulled counted apart.
 */
export function totalesGuias(detalle: readonly DetalleGuia[]): ResumenGuias {
  const vigentes = detalle.filter((d) => d.anulado === null)
  const ventas = vigentes.filter((d) => d.tipoOperacion === 1)
  const tipos = [...new Set(vigentes.filter((d) => d.tipoOperacion !== 1).map((d) => d.tipoOperacion))].sort((a, b) => a - b)
  return {
    foliosAnulados: detalle.filter((d) => d.anulado === 1).length,
    guiasAnuladas: detalle.filter((d) => d.anulado === 2).length,
    guiasVenta: ventas.length,
    montoGuiasVenta: ventas.reduce((a, d) => a + d.montoTotal, 0),
    traslados: tipos.map((tipo) => {
      const of = vigentes.filter((d) => d.tipoOperacion === tipo)
      return { tipo, cantidad: of.length, monto: of.reduce((a, d) => a + d.montoTotal, 0) }
    }),
  }
}

/** Where a LibroGuia's written ResumenPeriodo differs from its Detalle, one Spanish line each; [] when they agree. */
export function resumenGuiasMismatches(detalle: readonly DetalleGuia[], resumen: ResumenGuias): string[] {
  const expected = totalesGuias(detalle)
  const tipos = [...new Set([...expected.traslados, ...resumen.traslados].map((t) => t.tipo))].sort((a, b) => a - b)
  const traslado = (r: ResumenGuias, tipo: number) => r.traslados.find((t) => t.tipo === tipo) ?? { cantidad: 0, monto: 0 }
  const pairs: Array<readonly [string, number, number]> = [
    ['TotFolAnulado', resumen.foliosAnulados, expected.foliosAnulados],
    ['TotGuiaAnulada', resumen.guiasAnuladas, expected.guiasAnuladas],
    ['TotGuiaVenta', resumen.guiasVenta, expected.guiasVenta],
    ['TotMntGuiaVta', resumen.montoGuiasVenta, expected.montoGuiasVenta],
    ...tipos.flatMap((tipo) => [
      [`TotTraslado ${tipo} CantGuia`, traslado(resumen, tipo).cantidad, traslado(expected, tipo).cantidad] as const,
      [`TotTraslado ${tipo} MntGuia`, traslado(resumen, tipo).monto, traslado(expected, tipo).monto] as const,
    ]),
  ]
  return pairs.filter(([, a, b]) => a !== b).map(([name, a, b]) => `${name} ${a} en el resumen, ${b} según el detalle`)
}

// ------------------------------------------------------------------------------------------------ checks

function checkPeriodo(periodo: string, errors: LibroError[]): void {
  const m = /^(\d{4})-(\d{2})$/.exec(periodo)
  if (m === null || Number(m[2]) < 1 || Number(m[2]) > 12) errors.push({ campo: 'periodo', mensaje: `Período tributario «${periodo}» inválido (AAAA-MM).` })
}

/** "Los documentos del SET de prueba deben ser emitidos de forma que sean todos del mismo período tributario" (instructions §III.1). */
function checkFecha(fecha: string, periodo: string, campo: string, errors: LibroError[]): void {
  if (dateOrNull(fecha) === null) errors.push({ campo, mensaje: `Fecha «${fecha}» inválida (AAAA-MM-DD).` })
  else if (!fecha.startsWith(`${periodo}-`)) errors.push({ campo, mensaje: `La fecha ${fecha} no es del período ${periodo}.` })
}

function checkRut(rut: string, campo: string, errors: LibroError[]): string | null {
  const canonical = normalizeRut(rut)
  if (canonical === null) errors.push({ campo, mensaje: `RUT «${rut}» inválido.` })
  return canonical
}

/** Folios are positiveInteger, totalDigits 10. */
function checkFolio(folio: number, campo: string, errors: LibroError[]): void {
  if (!Number.isSafeInteger(folio) || folio < 1 || folio > 9_999_999_999) errors.push({ campo, mensaje: `Folio ${folio} inválido.` })
}

/** Amounts are whole pesos, never negative in these libros (formato IECV §1.4: "los datos deberán ser positivos"). */
function checkMonto(monto: number, campo: string, errors: LibroError[]): void {
  if (!Number.isSafeInteger(monto) || monto < 0) errors.push({ campo, mensaje: `Monto ${monto} inválido: pesos enteros, no negativos.` })
}

function dateOrNull(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return null
  const parsed = new Date(`${value}T00:00:00Z`)
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === value ? value : null
}

/** Upper case, accents dropped, runs of whitespace as one space: how the set's observations are compared. */
function normalizeText(text: string): string {
  return text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toUpperCase().replace(/\s+/g, ' ').trim()
}
