// The words and figures of each part of the printed DTE, shared by the letter and the thermal layouts: what to print
// is decided once here, where to put it in carta.ts and termico.ts. Sources: docs/sii-protocol.md §9, SII-FMT's print column.
import { CLAUSULAS_VENTA, PAISES, reglaImpuesto, TIPOS, TIPOS_BULTO } from '../domain/tipos'
import { isTipoDte } from '../domain/emision'
import type { DteView, LineaView } from './dte-view'
import {
  ADUANA_LABELS,
  codeWithName,
  COD_REF,
  FORMA_PAGO,
  formatFecha,
  formatFechaLarga,
  formatMonto,
  formatNumber,
  formatRut,
  IND_TRASLADO,
  nombreTipoDocumento,
  TIPO_DESPACHO,
} from './format'

export type Field = readonly [label: string, value: string]

export interface Resolucion {
  readonly numero: number
  /** `YYYY-MM-DD`: only the year is printed. */
  readonly fecha: string
}

/** What the page needs besides the XML: the company's SII resolution (not part of a DTE) and the DTE's state. */
export interface PrintContext {
  readonly resolucion: Resolucion
  readonly isRechazado: boolean
}

export const RECHAZADO = 'RECHAZADO POR EL SII'

export function nombreDocumento(view: DteView): string {
  return isTipoDte(view.tipoDte) ? TIPOS[view.tipoDte].nombre : `DOCUMENTO TIPO ${view.tipoDte}`
}

/** The issuer's block under its name: giro, address, activity codes, contact. */
export function emisorLines(view: DteView): string[] {
  const e = view.emisor
  const address = [e.direccion, e.comuna, e.ciudad].filter((s) => s !== undefined && s !== '').join(', ')
  const contact = [...e.telefonos.map((t) => `Tel.: ${t}`), ...(e.correo ? [e.correo] : [])].join(' · ')
  return [
    e.giro,
    address,
    e.sucursal ? `Sucursal: ${e.sucursal}` : '',
    e.acteco.length > 0 ? `Actividad económica: ${e.acteco.join(', ')}` : '',
    contact,
  ].filter((s) => s !== '')
}

/**
 * "S.I.I. - <office>" under the folio box (docs/sii-protocol.md §9). The SII office is the one with jurisdiction over the issuer's
 * address; without the SII's comuna → office table, the issuer's comuna stands in (docs/decisions/pdf.md).
 */
export function oficinaSii(view: DteView): string {
  const lugar = view.emisor.comuna ?? view.emisor.ciudad
  return lugar ? `S.I.I. - ${lugar.toUpperCase()}` : 'S.I.I.'
}

export function receptorFields(view: DteView): Field[] {
  const r = view.receptor
  const fields: Array<Field | null> = [
    ['Señor(es)', r.razonSocial],
    ['R.U.T.', formatRut(r.rut)],
    r.giro ? ['Giro', r.giro] : null,
    r.direccion ? ['Dirección', r.direccion] : null,
    r.comuna ? ['Comuna', r.comuna] : null,
    r.ciudad ? ['Ciudad', r.ciudad] : null,
    r.nacionalidad ? ['Nacionalidad', codeWithName(r.nacionalidad, PAISES)] : null,
    r.numId ? ['Documento', r.numId] : null,
    r.contacto ? ['Contacto', r.contacto] : null,
    r.correo ? ['Correo', r.correo] : null,
  ]
  return fields.filter((f): f is Field => f !== null)
}

export function documentoFields(view: DteView): Field[] {
  const code = (table: Readonly<Record<string, string>>, value: string | undefined) => (value === undefined ? undefined : (table[value] ?? value))
  const brutos = view.montosBrutos || (isTipoDte(view.tipoDte) && TIPOS[view.tipoDte].hasGrossPrices)
  const fields: Array<Field | null> = [
    ['Fecha de emisión', formatFechaLarga(view.fechaEmision)],
    view.fechaVencimiento ? ['Vencimiento', formatFecha(view.fechaVencimiento)] : null,
    view.formaPago ? ['Forma de pago', code(FORMA_PAGO, view.formaPago)!] : null,
    view.formaPagoExportacion ? ['Forma de pago exportación', view.formaPagoExportacion] : null,
    view.indTraslado ? ['Tipo de traslado', code(IND_TRASLADO, view.indTraslado)!] : null,
    view.tipoDespacho ? ['Tipo de despacho', code(TIPO_DESPACHO, view.tipoDespacho)!] : null,
    view.totales.moneda ? ['Moneda', view.totales.moneda] : null,
    brutos ? ['Precios', 'IVA incluido'] : null,
  ]
  return fields.filter((f): f is Field => f !== null)
}

export interface LineaCells {
  readonly codigo: string
  /** The item name first, then its description and notes (exempt, liquidated document, additional tax). */
  readonly nombre: string
  readonly notas: readonly string[]
  readonly cantidad: string
  readonly unidad: string
  readonly precio: string
  /** Discount and surcharge, signed, with their percentage. */
  readonly ajuste: string
  readonly monto: string
}

const IND_EXE: Readonly<Record<string, string>> = {
  '1': 'Exento',
  '2': 'No facturable',
  '3': 'Garantía de depósito por envases',
  '4': 'Ítem no venta',
  '5': 'Ítem a rebajar',
  '6': 'No facturable negativo',
}

export function lineaCells(view: DteView, l: LineaView): LineaCells {
  const exemptByNature = isTipoDte(view.tipoDte) && TIPOS[view.tipoDte].isExemptOnly
  const notas = [
    ...(l.descripcion ? [l.descripcion] : []),
    ...(l.indExe && !(exemptByNature && l.indExe === '1') ? [IND_EXE[l.indExe] ?? `Indicador ${l.indExe}`] : []),
    ...(l.tpoDocLiq ? [`Documento liquidado: ${nombreTipoDocumento(l.tpoDocLiq)}`] : []),
    ...l.codImpAdic.map((c) => `Impuesto adicional: ${reglaImpuesto(Number(c))?.glosa ?? `código ${c}`}`),
  ]
  const ajuste = [
    l.descuentoMonto ? `-${formatNumber(l.descuentoMonto)}${l.descuentoPct ? ` (${formatNumber(l.descuentoPct)} %)` : ''}` : '',
    l.recargoMonto ? `+${formatNumber(l.recargoMonto)}${l.recargoPct ? ` (${formatNumber(l.recargoPct)} %)` : ''}` : '',
  ]
    .filter((s) => s !== '')
    .join(' ')
  return {
    codigo: l.codigos.join(', '),
    nombre: l.nombre,
    notas,
    cantidad: l.cantidad ? formatNumber(l.cantidad) : '',
    unidad: l.unidad ?? '',
    precio: l.precio ? formatNumber(l.precio) : '',
    ajuste,
    monto: formatNumber(l.monto),
  }
}

export interface TotalRow {
  readonly label: string
  readonly value: string
  readonly isTotal?: boolean
}

/** Neto, exento, IVA, other taxes, commissions, total; exports add the peso equivalent (DESIGN §12 "Exports"). */
export function totalRows(view: DteView): TotalRow[] {
  const t = view.totales
  const m = (v: string) => formatMonto(v, t.moneda)
  const rows: TotalRow[] = []
  if (t.neto !== undefined) rows.push({ label: 'Monto neto', value: m(t.neto) })
  if (t.exento !== undefined) rows.push({ label: 'Monto exento', value: m(t.exento) })
  if (t.iva !== undefined) rows.push({ label: `IVA ${t.tasaIva ? `${formatNumber(t.tasaIva)} %` : ''}`.trim(), value: m(t.iva) })
  for (const i of t.impuestos) {
    const regla = reglaImpuesto(Number(i.tipo))
    const label = `${regla?.glosa ?? `Impuesto código ${i.tipo}`}${i.tasa ? ` ${formatNumber(i.tasa)} %` : ''}`
    // Retentions (class R) are subtracted from the total (docs/sii-protocol.md §2.4 step 5): the sign says so on paper.
    rows.push({ label, value: `${regla?.clase === 'R' ? '- ' : ''}${m(i.monto)}` })
  }
  if (t.ivaNoRetenido !== undefined) rows.push({ label: 'IVA no retenido', value: m(t.ivaNoRetenido) })
  if (t.comisionNeto !== undefined) rows.push({ label: 'Comisiones neto', value: `- ${m(t.comisionNeto)}` })
  if (t.comisionExento !== undefined) rows.push({ label: 'Comisiones exento', value: `- ${m(t.comisionExento)}` })
  if (t.comisionIva !== undefined) rows.push({ label: 'IVA comisiones', value: `- ${m(t.comisionIva)}` })
  rows.push({ label: t.moneda && t.moneda !== 'PESO CL' ? `TOTAL ${t.moneda}` : 'TOTAL', value: m(t.total), isTotal: true })
  if (t.montoNoFacturable !== undefined) rows.push({ label: 'Monto no facturable', value: m(t.montoNoFacturable) })
  const o = view.otraMoneda
  if (o !== undefined) {
    if (o.tipoCambio !== undefined) rows.push({ label: 'Tipo de cambio', value: formatNumber(o.tipoCambio) })
    rows.push({ label: o.moneda === 'PESO CL' ? 'Total en pesos' : `Total ${o.moneda}`, value: formatMonto(o.total, o.moneda) })
  }
  return rows
}

export function descuentoGlobalRows(view: DteView): string[] {
  const moneda = view.totales.moneda
  const exemptByNature = isTipoDte(view.tipoDte) && TIPOS[view.tipoDte].isExemptOnly
  return view.descuentosGlobales.map((d) => {
    const tipo = d.tpoMov === 'R' ? 'Recargo' : 'Descuento'
    // An amount in a foreign currency says which one: the lines and totals of an export are in it (DESIGN §12).
    const enMoneda = moneda !== undefined && moneda !== 'PESO CL' ? ` ${moneda}` : ''
    const valor = d.tpoValor === '%' ? `${formatNumber(d.valor)} %` : `${formatMonto(d.valor, moneda)}${enMoneda}`
    // On 34, 41 and exports everything is exempt: saying so on each discount would be noise.
    const sobre = d.indExe === '1' && !exemptByNature ? ' (sobre monto exento)' : d.indExe === '2' ? ' (sobre monto no facturable)' : ''
    return `${tipo} ${valor}${sobre}${d.glosa ? `: ${d.glosa}` : ''}`
  })
}

export interface ReferenciaCells {
  readonly tipo: string
  readonly folio: string
  readonly fecha: string
  readonly razon: string
}

export function referenciaCells(view: DteView): ReferenciaCells[] {
  return view.referencias.map((r) => ({
    tipo: nombreTipoDocumento(r.tpoDocRef),
    folio: r.folioRef,
    fecha: formatFecha(r.fchRef),
    razon: [r.codRef ? (COD_REF[r.codRef] ?? `Código ${r.codRef}`) : '', r.razonRef ?? ''].filter((s) => s !== '').join(': '),
  }))
}

export function comisionRows(view: DteView): string[] {
  return view.comisiones.map((c) => {
    const tipo = c.tipoMovim === 'C' ? 'Comisión' : 'Otros cargos'
    const tasa = c.tasa ? ` ${formatNumber(c.tasa)} %` : ''
    const iva = c.iva ? `, IVA ${formatMonto(c.iva)}` : ''
    return `${tipo}${tasa}: ${c.glosa}. Neto ${formatMonto(c.neto)}, exento ${formatMonto(c.exento)}${iva}`
  })
}

const ADUANA_TABLES: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  CodClauVenta: CLAUSULAS_VENTA,
  CodTpoBultos: TIPOS_BULTO,
  CodPaisRecep: PAISES,
  CodPaisDestin: PAISES,
}

const ADUANA_DECIMALS = new Set(['TotClauVenta', 'Tara', 'PesoBruto', 'PesoNeto', 'MntFlete', 'MntSeguro'])

export function aduanaFields(view: DteView): Field[] {
  return view.aduana.map(([name, value]) => {
    const table = ADUANA_TABLES[name]
    const shown = table ? codeWithName(value, table) : ADUANA_DECIMALS.has(name) ? formatNumber(value) : value
    return [ADUANA_LABELS[name] ?? name, shown] as const
  })
}

/** The three lines under the barcode (docs/sii-protocol.md §9). */
export function timbreLegends(resolucion: Resolucion): string[] {
  return ['Timbre Electrónico SII', `Res. ${resolucion.numero} de ${resolucion.fecha.slice(0, 4)}`, 'Verifique documento: www.sii.cl']
}

/** docs/sii-protocol.md §9: guías are "cedible con su factura". */
export function cedibleLabel(view: DteView): string {
  return view.tipoDte === 52 ? 'CEDIBLE CON SU FACTURA' : 'CEDIBLE'
}

export const ACUSE_CAMPOS = ['Nombre', 'R.U.T.', 'Fecha', 'Recinto', 'Firma'] as const

/** The receipt declaration of Ley 19.983 (docs/sii-protocol.md §9; Res. Ex. SII N° 51/2005). */
export const ACUSE_LEYENDA =
  'El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4°, y la letra c) ' +
  'del Art. 5° de la Ley 19.983, acredita que la entrega de mercaderías o servicio(s) prestado(s) ha(n) sido recibido(s).'
