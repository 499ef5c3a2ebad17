// The F29 proposal (DESIGN §16, research/next-capabilities.md §2.4): the codes of the monthly VAT return that come from
// documents, each with the documents behind it, and the warnings that block a clean filing. Pure: the service maps the
// RCV mirror (or, while none is synced, Timbre's own documents) onto these plain lines and passes the reconciliation's
// findings. A code whose mapping the research does not confirm with an SII source carries `confirmado: false` and
// says why in `fuente`; it is shown, never silently trusted. Table and sources: docs/decisions/f29.md.
import { claveDocumento, type Hallazgo, type SeccionCompra } from './conciliacion'
import { creditoUsoComun } from './libros'

/** Where the lines came from: the SII's RCV mirror, or Timbre's documents while no mirror is synced (DESIGN §16). */
export type OrigenF29 = 'rcv' | 'timbre'

/**
 * One sale of the period. `cantidad` is 1 for a document and N for a Registro de Ventas summary row (boletas reach the
 * RV as daily totals). A 46 here is a factura de compra the company *received* as seller; its IVA was retained by the
 * buyer (`ivaRetenido`).
 */
export interface VentaF29 {
  readonly tipoDte: number
  readonly folio: number
  readonly rut: string
  readonly cantidad: number
  readonly montoExento: number
  readonly montoNeto: number
  readonly montoIva: number
  readonly ivaRetenido: number
  readonly montoTotal: number
}

/**
 * One purchase of the period and its Registro de Compras section. The IVA is split as the RC splits it: recuperable,
 * no recuperable and uso común. A 46 here is a factura de compra the company *issued* as buyer, retaining the IVA.
 */
export interface CompraF29 {
  readonly seccion: SeccionCompra
  readonly tipoDte: number
  readonly folio: number
  readonly rut: string
  readonly montoExento: number
  readonly montoNeto: number
  readonly ivaRecuperable: number
  readonly ivaNoRecuperable: number
  readonly ivaUsoComun: number
  readonly ivaRetenido: number
  readonly montoTotal: number
  /** The invoices a note modifies, so an NC over a claimed invoice leaves with it (FAQ RCV #34). */
  readonly referencias: ReadonlyArray<{ readonly tipoDte: number; readonly folio: number }>
}

export interface F29Input {
  /** `YYYYMM`. */
  readonly periodo: string
  readonly origen: OrigenF29
  readonly ventas: readonly VentaF29[]
  readonly compras: readonly CompraF29[]
  /** Factor de proporcionalidad of the IVA de uso común in thousandths (0.60 → 600); null when the company has none. */
  readonly factorUsoComunMilesimas: number | null
  /** The period's reconciliation (conciliacion.ts): every finding is a warning. */
  readonly hallazgos: readonly Hallazgo[]
}

export interface DocumentoF29 {
  readonly tipoDte: number
  readonly folio: number
  readonly rut: string
}

export interface CodigoF29 {
  readonly codigo: number
  /** Spanish, as the form names the line. */
  readonly glosa: string
  readonly valor: number
  readonly confirmado: boolean
  /** Where the mapping comes from, as the research cites it; when unconfirmed, why. */
  readonly fuente: string
  readonly documentos: readonly DocumentoF29[]
}

export const TIPOS_ADVERTENCIA = [
  'pendientes_aceptacion', 'hallazgos_conciliacion', 'uso_comun_sin_factor', 'retencion_parcial', 'tipo_sin_codigo',
  'codigo_sin_confirmar', 'iva_no_recuperable', 'origen_timbre',
] as const
export type TipoAdvertencia = (typeof TIPOS_ADVERTENCIA)[number]

export interface AdvertenciaF29 {
  readonly tipo: TipoAdvertencia
  /** True when the proposal should not be filed as is. */
  readonly bloquea: boolean
  readonly mensaje: string
  readonly documentos: readonly DocumentoF29[]
}

export interface PropuestaF29 {
  readonly periodo: string
  readonly origen: OrigenF29
  /** Ascending by code; codes with no document are left out, except the totals and the result, always present. */
  readonly codigos: readonly CodigoF29[]
  /** 89 IVA determinado a pagar, or 77 remanente de crédito fiscal. */
  readonly resultado: CodigoF29
  readonly advertencias: readonly AdvertenciaF29[]
  /** No blocking warning: nothing known stands between this sheet and the filing. */
  readonly limpia: boolean
  /** Every code's mapping confirmed by an SII source, as the research cites it. */
  readonly confirmada: boolean
}

// The research's wording of its sources (§2.4), cited per code. A-f29 is LibreDTE's PropuestaF29 helper.
const FUENTE_TABLA = 'research §2.4: LibreDTE PropuestaF29 (A-f29), contrastado con SII FAQ F29 "llenado de líneas"'
const FUENTE_538 = 'research §2.4: 538 = 502 + 717 + 111 + 759 + 513 − 510 − 709 − 734 + 517 + 501 + 154 + 518 + 713 + 741'
const FUENTE_RESULTADO = 'research §2.4: 89 = max(538 − 537, 0); 77 = max(537 − 538, 0)'
const SIN_FUENTE_46 = 'sin fuente SII: la 46 del comprador va en 519/520 solo según la agrupación de LibreDTE (research §2.4)'
const SIN_FUENTE_USO_COMUN = 'sin fuente SII: la research no cita el código del crédito proporcional del IVA de uso común; se suma a 520'
const SIN_FUENTE_537 = 'sin fuente SII: la research no da la fórmula de 537; aquí 520 + 532 − 528'
const SIN_FUENTE_39 = 'sin fuente SII: la research recuerda el código 39 para el IVA retenido por el comprador de una 46, sin fuente (L)'

/**
 * Sales mapped to their count and amount codes (research §2.4 "Débitos"). `monto` picks the amount the code carries.
 * The exempt part of a 33 also goes to 142 (same table), added separately.
 */
interface ReglaCodigos<L> {
  readonly tipos: readonly number[]
  readonly cantidad: number
  readonly monto: number
  readonly glosaCantidad: string
  readonly glosaMonto: string
  readonly valor: (line: L) => number
}

const REGLAS_VENTAS: ReadonlyArray<ReglaCodigos<VentaF29>> = [
  { tipos: [30, 33], cantidad: 503, monto: 502, glosaCantidad: 'Cantidad de facturas emitidas', glosaMonto: 'Débito facturas del giro', valor: (v) => v.montoIva },
  { tipos: [32, 34], cantidad: 586, monto: 142, glosaCantidad: 'Cantidad de facturas exentas emitidas', glosaMonto: 'Ventas exentas o no gravadas', valor: (v) => v.montoExento },
  { tipos: [110], cantidad: 585, monto: 20, glosaCantidad: 'Cantidad de facturas de exportación', glosaMonto: 'Exportaciones', valor: (v) => v.montoTotal },
  { tipos: [55, 56], cantidad: 512, monto: 513, glosaCantidad: 'Cantidad de notas de débito emitidas', glosaMonto: 'Débito notas de débito emitidas', valor: (v) => v.montoIva },
  { tipos: [60, 61], cantidad: 509, monto: 510, glosaCantidad: 'Cantidad de notas de crédito emitidas', glosaMonto: 'Débito notas de crédito emitidas (se resta)', valor: (v) => v.montoIva },
  { tipos: [39, 41], cantidad: 110, monto: 111, glosaCantidad: 'Cantidad de boletas', glosaMonto: 'Débito boletas', valor: (v) => v.montoIva },
  { tipos: [48], cantidad: 758, monto: 759, glosaCantidad: 'Cantidad de comprobantes de pago electrónico', glosaMonto: 'Débito comprobantes de pago electrónico', valor: (v) => v.montoIva },
]

const REGLAS_COMPRAS: ReadonlyArray<ReglaCodigos<CompraF29>> = [
  { tipos: [32, 34], cantidad: 584, monto: 562, glosaCantidad: 'Cantidad de facturas exentas recibidas', glosaMonto: 'Compras exentas o no gravadas', valor: (c) => c.montoExento },
  { tipos: [60, 61], cantidad: 527, monto: 528, glosaCantidad: 'Cantidad de notas de crédito recibidas', glosaMonto: 'Crédito notas de crédito recibidas (se resta)', valor: (c) => c.ivaRecuperable },
  { tipos: [55, 56], cantidad: 531, monto: 532, glosaCantidad: 'Cantidad de notas de débito recibidas', glosaMonto: 'Crédito notas de débito recibidas', valor: (c) => c.ivaRecuperable },
]
const FACTURAS_COMPRA = [30, 33] as const
const FACTURA_COMPRA_46 = 46

function ref(line: { readonly tipoDte: number; readonly folio: number; readonly rut: string }): DocumentoF29 {
  return { tipoDte: line.tipoDte, folio: line.folio, rut: line.rut }
}

function codigo(codigoF29: number, glosa: string, valor: number, documentos: readonly DocumentoF29[], confirmado = true, fuente = FUENTE_TABLA): CodigoF29 {
  return { codigo: codigoF29, glosa, valor, confirmado, fuente, documentos }
}

function aplicarRegla<L extends { readonly tipoDte: number; readonly folio: number; readonly rut: string }>(
  regla: ReglaCodigos<L>, lines: readonly L[], contar: (line: L) => number,
): CodigoF29[] {
  const mine = lines.filter((l) => regla.tipos.includes(l.tipoDte))
  if (mine.length === 0) return []
  const docs = mine.map(ref)
  return [
    codigo(regla.cantidad, regla.glosaCantidad, mine.reduce((a, l) => a + contar(l), 0), docs),
    codigo(regla.monto, regla.glosaMonto, mine.reduce((a, l) => a + regla.valor(l), 0), docs),
  ]
}

/**
 * The purchases that enter the proposal: the REGISTRO section only (pendientes are not yet the company's, no incluir
 * are outside the business), and without the NCs of claimed invoices, which leave together with them (FAQ RCV #34).
 */
export function comprasDeLaPropuesta(compras: readonly CompraF29[]): CompraF29[] {
  const reclamadas = new Set(compras.filter((c) => c.seccion === 'reclamado').map((c) => claveDocumento(c)))
  const sobreReclamada = (c: CompraF29): boolean => c.referencias.some((r) => reclamadas.has(claveDocumento({ tipoDte: r.tipoDte, rut: c.rut, folio: r.folio })))
  return compras.filter((c) => c.seccion === 'registro' && !sobreReclamada(c))
}

function debitos(ventas: readonly VentaF29[]): CodigoF29[] {
  const retenidas = ventas.filter((v) => v.tipoDte === FACTURA_COMPRA_46 && v.ivaRetenido >= v.montoIva)
  const exentoDe33 = ventas.filter((v) => v.tipoDte === 33 && v.montoExento > 0)
  const codes = REGLAS_VENTAS.flatMap((r) => aplicarRegla(r, ventas, (v) => v.cantidad))
  if (retenidas.length > 0)
    codes.push(
      codigo(515, 'Cantidad de facturas de compra recibidas con retención total', retenidas.reduce((a, v) => a + v.cantidad, 0), retenidas.map(ref)),
      codigo(587, 'Monto neto de facturas de compra recibidas con retención total', retenidas.reduce((a, v) => a + v.montoNeto, 0), retenidas.map(ref)),
    )
  return mergeExento142(codes, exentoDe33)
}

/** The exempt part of a 33 goes to 142 beside the 34s (research §2.4: "Exempt part in 142"). */
function mergeExento142(codes: CodigoF29[], exentoDe33: readonly VentaF29[]): CodigoF29[] {
  if (exentoDe33.length === 0) return codes
  const monto = exentoDe33.reduce((a, v) => a + v.montoExento, 0)
  const previo = codes.find((c) => c.codigo === 142)
  const merged = previo === undefined
    ? codigo(142, 'Ventas exentas o no gravadas', monto, exentoDe33.map(ref))
    : { ...previo, valor: previo.valor + monto, documentos: [...previo.documentos, ...exentoDe33.map(ref)] }
  return [...codes.filter((c) => c.codigo !== 142), merged]
}

function total538(codes: readonly CodigoF29[]): CodigoF29 {
  const v = (n: number): number => codes.find((c) => c.codigo === n)?.valor ?? 0
  // Of the formula's terms only these come from documents Timbre sees; the others (717, 709, 734, 517, 501, 154, 518,
  // 713, 741) are left at 0 and a partial retention is a warning instead (retencion_parcial).
  const valor = v(502) + v(111) + v(759) + v(513) - v(510)
  const docs = codes.filter((c) => [502, 111, 759, 513, 510].includes(c.codigo)).flatMap((c) => c.documentos)
  return codigo(538, 'Total débitos', valor, docs, true, FUENTE_538)
}

/** 519/520: facturas del giro 30, 33 and the buyer's 46, plus the proportional credit of the IVA de uso común. */
function creditoFacturas(compras: readonly CompraF29[], factorMilesimas: number | null): CodigoF29[] {
  const facturas = compras.filter((c) => (FACTURAS_COMPRA as readonly number[]).includes(c.tipoDte) || c.tipoDte === FACTURA_COMPRA_46)
  if (facturas.length === 0) return []
  const usoComun = facturas.reduce((a, c) => a + c.ivaUsoComun, 0)
  const credito = facturas.reduce((a, c) => a + c.ivaRecuperable, 0) + (factorMilesimas === null || usoComun === 0 ? 0 : creditoUsoComun(usoComun, factorMilesimas))
  const tiene46 = facturas.some((c) => c.tipoDte === FACTURA_COMPRA_46)
  const dudas = [...(tiene46 ? [SIN_FUENTE_46] : []), ...(usoComun > 0 ? [SIN_FUENTE_USO_COMUN] : [])]
  const confirmado = dudas.length === 0
  const fuente = confirmado ? FUENTE_TABLA : `${FUENTE_TABLA}; ${dudas.join('; ')}`
  const docs = facturas.map(ref)
  return [
    codigo(519, 'Cantidad de facturas recibidas del giro', facturas.length, docs, confirmado, fuente),
    codigo(520, 'Crédito facturas recibidas del giro', credito, docs, confirmado, fuente),
  ]
}

function creditos(compras: readonly CompraF29[], factorMilesimas: number | null): CodigoF29[] {
  return [...creditoFacturas(compras, factorMilesimas), ...REGLAS_COMPRAS.flatMap((r) => aplicarRegla(r, compras, () => 1))]
}

function total537(codes: readonly CodigoF29[]): CodigoF29 {
  const v = (n: number): number => codes.find((c) => c.codigo === n)?.valor ?? 0
  const parts = codes.filter((c) => [520, 532, 528].includes(c.codigo))
  return codigo(537, 'Total créditos', v(520) + v(532) - v(528), parts.flatMap((c) => c.documentos), false, SIN_FUENTE_537)
}

/** The buyer's retention on the 46 it issued: shown, but its code is unconfirmed (research §2.4, L). */
function retencionComprador(compras: readonly CompraF29[]): CodigoF29[] {
  const emitidas = compras.filter((c) => c.tipoDte === FACTURA_COMPRA_46 && c.ivaRetenido > 0)
  if (emitidas.length === 0) return []
  return [codigo(39, 'IVA total retenido a terceros', emitidas.reduce((a, c) => a + c.ivaRetenido, 0), emitidas.map(ref), false, SIN_FUENTE_39)]
}

function resultado(d538: CodigoF29, c537: CodigoF29): CodigoF29 {
  const confirmado = d538.confirmado && c537.confirmado
  const fuente = confirmado ? FUENTE_RESULTADO : `${FUENTE_RESULTADO}; sin confirmar mientras 538 o 537 no lo estén`
  const docs = [...d538.documentos, ...c537.documentos]
  return d538.valor >= c537.valor
    ? codigo(89, 'IVA determinado a pagar', d538.valor - c537.valor, docs, confirmado, fuente)
    : codigo(77, 'Remanente de crédito fiscal', c537.valor - d538.valor, docs, confirmado, fuente)
}

/** The proposal for one company and period. */
export function proponerF29(input: F29Input): PropuestaF29 {
  const compras = comprasDeLaPropuesta(input.compras)
  const deb = debitos(input.ventas)
  const cred = creditos(compras, input.factorUsoComunMilesimas)
  const d538 = total538(deb)
  const c537 = total537(cred)
  const res = resultado(d538, c537)
  const codigos = [...deb, d538, ...cred, c537, ...retencionComprador(compras), res].sort((a, b) => a.codigo - b.codigo)
  const advertencias = advertenciasF29(input, compras, codigos)
  return {
    periodo: input.periodo, origen: input.origen, codigos, resultado: res, advertencias,
    limpia: advertencias.every((a) => !a.bloquea),
    confirmada: codigos.every((c) => c.confirmado),
  }
}

const TIPOS_VENTA_CON_CODIGO = new Set([...REGLAS_VENTAS.flatMap((r) => r.tipos), FACTURA_COMPRA_46])
const TIPOS_COMPRA_CON_CODIGO = new Set([...REGLAS_COMPRAS.flatMap((r) => r.tipos), ...FACTURAS_COMPRA, FACTURA_COMPRA_46])

function advertenciasF29(input: F29Input, compras: readonly CompraF29[], codigos: readonly CodigoF29[]): AdvertenciaF29[] {
  const out: AdvertenciaF29[] = []
  const add = (tipo: TipoAdvertencia, bloquea: boolean, mensaje: string, docs: readonly DocumentoF29[]): void => {
    out.push({ tipo, bloquea, mensaje, documentos: docs })
  }
  const pendientes = input.compras.filter((c) => c.seccion === 'pendiente')
  if (pendientes.length > 0)
    add('pendientes_aceptacion', true, `${pendientes.length} compras esperan aceptación: su crédito no entra hasta que se acepten o pasen los 8 días.`, pendientes.map(ref))
  if (input.hallazgos.length > 0)
    add('hallazgos_conciliacion', true, `La conciliación con el RCV tiene ${input.hallazgos.length} hallazgos sin resolver.`, input.hallazgos.flatMap((h) => h.documentos.map(ref)))
  const usoComun = compras.filter((c) => c.ivaUsoComun > 0)
  if (usoComun.length > 0 && input.factorUsoComunMilesimas === null)
    add('uso_comun_sin_factor', true, 'Hay IVA de uso común y la empresa no tiene factor de proporcionalidad: su crédito no se calculó.', usoComun.map(ref))
  const parciales = input.ventas.filter((v) => v.tipoDte === FACTURA_COMPRA_46 && v.ivaRetenido < v.montoIva)
  if (parciales.length > 0)
    add('retencion_parcial', true, 'Facturas de compra recibidas con retención parcial: los códigos 516 y 517 no se calculan.', parciales.map(ref))
  const sinCodigo = [...input.ventas.filter((v) => !TIPOS_VENTA_CON_CODIGO.has(v.tipoDte)), ...compras.filter((c) => !TIPOS_COMPRA_CON_CODIGO.has(c.tipoDte))]
  if (sinCodigo.length > 0)
    add('tipo_sin_codigo', true, `Documentos de tipos sin código en esta propuesta (${[...new Set(sinCodigo.map((d) => d.tipoDte))].join(', ')}): declárelos a mano.`, sinCodigo.map(ref))
  const dudosos = codigos.filter((c) => !c.confirmado)
  if (dudosos.length > 0)
    add('codigo_sin_confirmar', false, `Códigos sin fuente del SII que los confirme: ${dudosos.map((c) => c.codigo).join(', ')}. Revíselos antes de declarar.`, [])
  const noRecuperable = compras.filter((c) => c.ivaNoRecuperable > 0)
  if (noRecuperable.length > 0)
    add('iva_no_recuperable', false, 'IVA no recuperable: no da crédito y no entra en ningún código de esta propuesta.', noRecuperable.map(ref))
  if (input.origen === 'timbre')
    add('origen_timbre', false, 'Calculada con los documentos de Timbre, sin el RCV: faltan los documentos en papel, los recibidos no importados y las recaracterizaciones del RCV.', [])
  return out
}
