// The SII's Registro de Compras y Ventas (RCV) as Timbre mirrors it (DESIGN §16, research/next-capabilities.md §2.1–2.2):
// the Registro de Compras by section and the Registro de Ventas, per-type summaries and details; reading the SII
// portal's data service (consdcvinternetui facadeService) answers into those records; writing both registers in the
// SII's own CSV layout; and the per-type summary of a list of details. Pure: the sii/ client posts the requests and
// hands the parsed JSON here, services/ store the mirror, the doors serve the CSV. Every fact used here, its source and
// what is still unconfirmed is in docs/decisions/rcv.md "El servicio de datos del RCV y sus archivos".
//
// Shared with domain/conciliacion.ts and domain/f29.ts (written beside this file): DetalleRcv, ResumenTipoRcv,
// RegistroCompras, RegistroVentas, SeccionCompras and claveDocumentoRcv.
import { normalizeRut } from './rut'

// ------------------------------------------------------------------------------------------------ records

/** The four sections of the Registro de Compras (SII FAQ RCV, research §2.1), in the spec's snake_case. */
export type SeccionCompras = 'registro' | 'pendiente' | 'no_incluir' | 'reclamado'
export const SECCIONES_COMPRAS: readonly SeccionCompras[] = ['registro', 'pendiente', 'no_incluir', 'reclamado']

/** `estadoContab` of the data service's request body for each section (research §2.2, "Request body"). */
export const ESTADO_CONTAB: Readonly<Record<SeccionCompras, string>> = {
  registro: 'REGISTRO', pendiente: 'PENDIENTE', no_incluir: 'NO_INCLUIR', reclamado: 'RECLAMADO',
}

/** `operacion` of the request body (research §2.2). */
export type OperacionRcv = 'COMPRA' | 'VENTA'

/**
 * An amount in pesos as the SII gives it. null is "the SII left it empty", kept apart from 0 because the SII's own
 * files tell them apart (cl-sii's fixtures: an empty "Monto IVA Recuperable" beside a "Monto Iva No Recuperable" in No
 * incluir, a 0 "Monto Exento" in Registro), so the CSV Timbre writes is the one the SII would.
 */
export type MontoRcv = number | null

/** One other tax of a detail: the SII's tax code, its amount and its rate in percent as the SII writes it. */
export interface OtroImpuestoRcv {
  readonly codigo: number
  readonly valor: number
  readonly tasa: number | null
}

/**
 * One document of the RCV, purchase or sale. Dates are ISO (`YYYY-MM-DD`, and `YYYY-MM-DDTHH:MM:SS` for the SII's
 * timestamps, Chilean local time with no offset as the SII writes them; cl-sii reads them in SII_OFFICIAL_TZ).
 */
export interface DetalleRcv {
  readonly tipoDoc: number
  /** The counterpart, canonical (`12345678-5`): the supplier in compras, the client in ventas. */
  readonly rut: string
  readonly razonSocial: string
  readonly folio: number
  readonly fechaEmision: string
  readonly fechaRecepcion: string | null
  /** The acuse de recibo (given or deemed given); always null in the pendiente section. */
  readonly fechaAcuse: string | null
  readonly fechaReclamo: string | null
  /** "Tipo Compra" / "Tipo Venta" as the SII words it ("Del Giro", "No Corresp. Incluir"); null when not given. */
  readonly tipoTransaccion: string | null
  readonly montoExento: MontoRcv
  readonly montoNeto: MontoRcv
  /** Compras: "Monto IVA Recuperable". Ventas: "Monto IVA". */
  readonly montoIva: MontoRcv
  readonly montoIvaNoRecuperable: MontoRcv
  /** "Codigo IVA No Rec." (LibroCV_v10.xsd CodIVANoRec: 1–4, 9). */
  readonly codigoIvaNoRecuperable: number | null
  readonly montoTotal: number
  readonly montoNetoActivoFijo: MontoRcv
  readonly ivaActivoFijo: MontoRcv
  readonly ivaUsoComun: MontoRcv
  readonly impuestoSinDerechoCredito: MontoRcv
  readonly ivaNoRetenido: MontoRcv
  readonly otrosImpuestos: readonly OtroImpuestoRcv[]
  /** Ventas only (null in compras): IVA retenido total and parcial, IVA propio and de terceros, IVA fuera de plazo. */
  readonly ivaRetenidoTotal: MontoRcv
  readonly ivaRetenidoParcial: MontoRcv
  readonly ivaPropio: MontoRcv
  readonly ivaTerceros: MontoRcv
  readonly ivaFueraPlazo: MontoRcv
  /** The document a note refers to ("Tipo/Folio Docto. Referencia", ventas). */
  readonly referencia: { readonly tipoDoc: number; readonly folio: number } | null
}

/** One row of a summary: the count and sums of one document type in one section or register. */
export interface ResumenTipoRcv {
  readonly tipoDoc: number
  readonly cantidad: number
  readonly montoExento: number
  readonly montoNeto: number
  readonly montoIva: number
  readonly montoIvaNoRecuperable: number
  readonly ivaUsoComun: number
  readonly montoTotal: number
}

/** What the SII holds for one section or register of one period. */
export interface ResumenYDetalle {
  readonly resumen: readonly ResumenTipoRcv[]
  readonly detalle: readonly DetalleRcv[]
}

/** The Registro de Compras of a company and tax period (`YYYYMM`), by section. */
export interface RegistroCompras {
  readonly periodo: string
  readonly secciones: Readonly<Record<SeccionCompras, ResumenYDetalle>>
}

/** The Registro de Ventas of a company and tax period (`YYYYMM`). */
export interface RegistroVentas extends ResumenYDetalle {
  readonly periodo: string
}

/**
 * Types the Registro de Ventas carries only as totals, never one document each: boletas (35, 38, 39, 41) and
 * comprobantes de pago electrónico (48) (research §2.4: the SII's proposal counts boletas and vouchers from the RV's
 * summary; domain/conciliacion.ts TIPOS_POR_FOLIO leaves them out for the same reason). No detail is asked for them.
 */
export const TIPOS_SOLO_RESUMEN: readonly number[] = [35, 38, 39, 41, 48]

/** The key reconciliation matches on (research §2.3, "Match key: (TipoDoc, RUT, folio)"). */
export function claveDocumentoRcv(d: Pick<DetalleRcv, 'tipoDoc' | 'rut' | 'folio'>): string {
  return `${d.tipoDoc}:${d.rut}:${d.folio}`
}

/** A tax period `YYYYMM` (the data service's `ptributario`). */
export function isPeriodoRcv(periodo: string): boolean {
  const m = /^(\d{4})(\d{2})$/.exec(periodo)
  return m !== null && Number(m[2]) >= 1 && Number(m[2]) <= 12 && Number(m[1]) >= 2017  // the RCV exists since 08/2017
}

// ------------------------------------------------------------------------------------------------ answers

/** One reason an answer cannot be read: where (`data.3.detNroDoc`) and why, in Spanish. */
export interface RcvError {
  readonly campo: string
  readonly mensaje: string
}

export type RcvResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: readonly RcvError[] }

/**
 * `respEstado.codRespuesta` other than success (research §2.2, from LibreDTE's Contribuyente::getRCV): 1 business
 * error, 2 application error, 3 no data, 99 invalid. Success is 0: the research does not record it; it is the only
 * code the recorded list leaves out and what the open scrapers treat as success (unconfirmed, docs/decisions/rcv.md).
 */
export const RESPUESTAS_RCV: Readonly<Record<number, string>> = {
  1: 'El SII rechazó la consulta (error de negocio).',
  2: 'El servicio de datos del SII falló (error de aplicación).',
  3: 'El SII no tiene datos para este período.',
  99: 'El SII consideró inválida la consulta.',
}
const SIN_DATOS = 3
const EXITO = 0

/** How an answer's envelope ended: rows to read, no data (a legitimate empty period), or the SII's refusal. */
type Envoltura = { readonly kind: 'filas'; readonly filas: readonly unknown[] } | { readonly kind: 'sin_datos' }

function readEnvoltura(answer: unknown): RcvResult<Envoltura> {
  if (!isRecord(answer)) return fail('respuesta', 'La respuesta del SII no es un objeto JSON.')
  const estado = own(answer, 'respEstado')
  const codigo = isRecord(estado) ? own(estado, 'codRespuesta') : undefined
  if (typeof codigo !== 'number' || !Number.isInteger(codigo)) {
    return fail('respEstado.codRespuesta', 'La respuesta del SII no trae un código de respuesta.')
  }
  if (codigo === SIN_DATOS) return { ok: true, value: { kind: 'sin_datos' } }
  if (codigo !== EXITO) {
    const texto = isRecord(estado) ? own(estado, 'msgeRespuesta') : undefined
    const detalle = typeof texto === 'string' && texto !== '' ? ` ${texto.slice(0, 200)}` : ''
    return fail('respEstado.codRespuesta', `${RESPUESTAS_RCV[codigo] ?? `Código de respuesta desconocido: ${codigo}.`}${detalle}`)
  }
  // `data` holds the rows in every open implementation; the research records only the request's `data` (unconfirmed).
  const data = own(answer, 'data')
  if (data === null || data === undefined) return { ok: true, value: { kind: 'sin_datos' } }
  if (!Array.isArray(data)) return fail('data', 'Las filas de la respuesta del SII no son una lista.')
  return { ok: true, value: { kind: 'filas', filas: data } }
}

/** Reads a getResumen answer into one row per document type. A "no data" answer (codRespuesta 3) is an empty list. */
export function readResumenRcv(answer: unknown): RcvResult<ResumenTipoRcv[]> {
  const envoltura = readEnvoltura(answer)
  if (!envoltura.ok) return envoltura
  if (envoltura.value.kind === 'sin_datos') return { ok: true, value: [] }
  const errors: RcvError[] = []
  const value: ResumenTipoRcv[] = []
  envoltura.value.filas.forEach((fila, i) => {
    const campos = new Campos(fila, `data.${i}`, errors)
    if (!campos.isObject) return
    value.push({
      tipoDoc: campos.entero('rsmnTipoDocInteger'),
      cantidad: campos.entero('rsmnTotDoc'),
      montoExento: campos.monto('rsmnMntExe') ?? 0,
      montoNeto: campos.monto('rsmnMntNeto') ?? 0,
      montoIva: campos.monto('rsmnMntIVA') ?? 0,
      montoIvaNoRecuperable: campos.monto('rsmnMntIVANoRec') ?? 0,
      ivaUsoComun: campos.monto('rsmnIVAUsoComun') ?? 0,
      montoTotal: campos.monto('rsmnMntTotal') ?? 0,
    })
  })
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value }
}

/**
 * Reads a getDetalleCompra or getDetalleVenta answer into details. Field names: detRutDoc, detNroDoc, detFecRecepcion,
 * detFecAcuse and detFecReclamado are the research's (§2.2); the others are those the open scrapers the research cites
 * read (X-rcv1…4), unconfirmed against an SII answer (docs/decisions/rcv.md). Other taxes per code are not read: no
 * source names their fields, so `otrosImpuestos` stays empty (montoTotal still includes them).
 */
export function readDetalleRcv(answer: unknown): RcvResult<DetalleRcv[]> {
  const envoltura = readEnvoltura(answer)
  if (!envoltura.ok) return envoltura
  if (envoltura.value.kind === 'sin_datos') return { ok: true, value: [] }
  const errors: RcvError[] = []
  const value: DetalleRcv[] = []
  envoltura.value.filas.forEach((fila, i) => {
    const campos = new Campos(fila, `data.${i}`, errors)
    if (campos.isObject) value.push(readDetalleFila(campos))
  })
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value }
}

function readDetalleFila(c: Campos): DetalleRcv {
  const tipoRef = c.montoOpcional('detTipoDocRef')
  const folioRef = c.montoOpcional('detFolioDocRef')
  return {
    tipoDoc: c.entero('detTipoDoc'),
    rut: c.rut('detRutDoc', 'detDvDoc'),
    razonSocial: c.texto('detRznSoc'),
    folio: c.entero('detNroDoc'),
    fechaEmision: c.fecha('detFchDoc'),
    fechaRecepcion: c.fechaHora('detFecRecepcion'),
    fechaAcuse: c.fechaHora('detFecAcuse'),
    fechaReclamo: c.fechaHora('detFecReclamado'),
    tipoTransaccion: c.textoOpcional('descTipoTransaccion'),
    montoExento: c.monto('detMntExe'),
    montoNeto: c.monto('detMntNeto'),
    montoIva: c.monto('detMntIVA'),
    montoIvaNoRecuperable: c.monto('detMntIVANoRec'),
    // The scrapers disagree on this name (detCodIVANoRec, detMntCodNoRec): both are read, the first one present wins.
    codigoIvaNoRecuperable: c.montoOpcional('detCodIVANoRec') ?? c.montoOpcional('detMntCodNoRec'),
    montoTotal: c.requerido('detMntTotal'),
    montoNetoActivoFijo: c.monto('detMntActFijo'),
    ivaActivoFijo: c.monto('detMntIVAActFijo'),
    ivaUsoComun: c.monto('detIVAUsoComun'),
    impuestoSinDerechoCredito: c.monto('detMntSinCredito'),
    ivaNoRetenido: c.monto('detIVANoRetenido'),
    otrosImpuestos: [],
    ivaRetenidoTotal: c.monto('detIVARetTotal'),
    ivaRetenidoParcial: c.monto('detIVARetParcial'),
    ivaPropio: c.monto('detIVAPropio'),
    ivaTerceros: c.monto('detIVATerceros'),
    ivaFueraPlazo: c.monto('detIVAFueraPlazo'),
    referencia: tipoRef !== null && tipoRef > 0 && folioRef !== null && folioRef > 0 ? { tipoDoc: tipoRef, folio: folioRef } : null,
  }
}

/** Reads one row's fields, collecting every error instead of throwing: the answer is hostile input. */
class Campos {
  readonly isObject: boolean
  private readonly fila: Readonly<Record<string, unknown>>

  constructor(fila: unknown, private readonly ruta: string, private readonly errors: RcvError[]) {
    this.isObject = isRecord(fila)
    this.fila = isRecord(fila) ? fila : {}
    if (!this.isObject) errors.push({ campo: ruta, mensaje: 'La fila no es un objeto JSON.' })
  }

  private error(nombre: string, mensaje: string): void {
    this.errors.push({ campo: `${this.ruta}.${nombre}`, mensaje })
  }

  falta(nombre: string): number {
    this.error(nombre, 'Falta este valor.')
    return 0
  }

  /** A whole number the row must carry (tipo, folio, count). */
  entero(nombre: string): number {
    const n = this.requerido(nombre)
    if (n < 0) this.error(nombre, 'Debe ser un número entero positivo.')
    return n
  }

  /** An amount the row must carry; one error when it is absent or not a whole number. */
  requerido(nombre: string): number {
    const raw = own(this.fila, nombre)
    const n = this.montoOpcional(nombre)
    if (n !== null) return n
    return raw === null || raw === undefined || raw === '' ? this.falta(nombre) : 0
  }

  /** An amount in whole pesos, or null when the SII left it empty. Numbers may come as JSON numbers or digit strings. */
  monto(nombre: string): MontoRcv {
    return this.montoOpcional(nombre)
  }

  montoOpcional(nombre: string): number | null {
    const raw = own(this.fila, nombre)
    if (raw === null || raw === undefined || raw === '') return null
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d{1,18}$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN
    if (!Number.isSafeInteger(n)) {
      this.error(nombre, 'Debe ser un número entero (pesos, sin decimales).')
      return null
    }
    return n
  }

  texto(nombre: string): string {
    const t = this.textoOpcional(nombre)
    if (t === null) this.error(nombre, 'Falta este texto.')
    return t ?? ''
  }

  textoOpcional(nombre: string): string | null {
    const raw = own(this.fila, nombre)
    if (raw === null || raw === undefined) return null
    if (typeof raw !== 'string') {
      this.error(nombre, 'Debe ser un texto.')
      return null
    }
    // cl-sii's fixtures carry razones sociales with leading and trailing spaces ("rz_leading_trailing_whitespace").
    return raw.trim().slice(0, 200)
  }

  /** The RUT as body (detRutDoc, number or string) and check digit (detDvDoc), canonical. */
  rut(cuerpo: string, dv: string): string {
    const rawCuerpo = own(this.fila, cuerpo)
    const rawDv = own(this.fila, dv)
    const texto = (typeof rawCuerpo === 'number' || typeof rawCuerpo === 'string') && typeof rawDv === 'string'
      ? `${rawCuerpo}-${rawDv.trim()}` : null
    const rut = texto === null ? null : normalizeRut(texto)
    if (rut === null) this.error(cuerpo, 'El RUT (detRutDoc y detDvDoc) no es válido.')
    return rut ?? ''
  }

  /** `dd/mm/yyyy` → `YYYY-MM-DD`; required. */
  fecha(nombre: string): string {
    const raw = own(this.fila, nombre)
    const iso = typeof raw === 'string' ? fechaIso(raw.trim()) : null
    if (iso === null) this.error(nombre, 'La fecha debe venir como dd/mm/aaaa.')
    return iso ?? ''
  }

  /** `dd/mm/yyyy HH:MM:SS` → `YYYY-MM-DDTHH:MM:SS`, or null when empty. */
  fechaHora(nombre: string): string | null {
    const raw = own(this.fila, nombre)
    if (raw === null || raw === undefined || raw === '') return null
    const iso = typeof raw === 'string' ? fechaHoraIso(raw.trim()) : null
    if (iso === null) this.error(nombre, 'La fecha debe venir como dd/mm/aaaa hh:mm:ss.')
    return iso
  }
}

export function fechaIso(text: string): string | null {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(text)
  if (m === null) return null
  const iso = `${m[3]}-${m[2]}-${m[1]}`
  return isRealDate(iso) ? iso : null
}

export function fechaHoraIso(text: string): string | null {
  const m = /^(\d{2}\/\d{2}\/\d{4}) (\d{2}):(\d{2}):(\d{2})$/.exec(text)
  const fecha = m === null ? null : fechaIso(m[1] ?? '')
  if (m === null || fecha === null) return null
  if (Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4]) > 59) return null
  return `${fecha}T${m[2]}:${m[3]}:${m[4]}`
}

function isRealDate(iso: string): boolean {
  const d = new Date(`${iso}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === iso
}

function isRecord(x: unknown): x is Readonly<Record<string, unknown>> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}

/** Own properties only: a hostile `__proto__` or `constructor` key never reaches a prototype's. */
function own(o: Readonly<Record<string, unknown>>, key: string): unknown {
  return Object.hasOwn(o, key) ? o[key] : undefined
}

function fail<T>(campo: string, mensaje: string): RcvResult<T> {
  return { ok: false, errors: [{ campo, mensaje }] }
}

// ------------------------------------------------------------------------------------------------ summary

/** The per-type summary of a list of details, in tipoDoc order; empty amounts count as 0. */
export function resumenDeDetalles(detalles: readonly DetalleRcv[]): ResumenTipoRcv[] {
  const porTipo = new Map<number, ResumenTipoRcv>()
  for (const d of detalles) {
    const r = porTipo.get(d.tipoDoc) ?? {
      tipoDoc: d.tipoDoc, cantidad: 0, montoExento: 0, montoNeto: 0, montoIva: 0, montoIvaNoRecuperable: 0, ivaUsoComun: 0, montoTotal: 0,
    }
    porTipo.set(d.tipoDoc, {
      tipoDoc: d.tipoDoc,
      cantidad: r.cantidad + 1,
      montoExento: r.montoExento + (d.montoExento ?? 0),
      montoNeto: r.montoNeto + (d.montoNeto ?? 0),
      montoIva: r.montoIva + (d.montoIva ?? 0),
      montoIvaNoRecuperable: r.montoIvaNoRecuperable + (d.montoIvaNoRecuperable ?? 0),
      ivaUsoComun: r.ivaUsoComun + (d.ivaUsoComun ?? 0),
      montoTotal: r.montoTotal + d.montoTotal,
    })
  }
  return [...porTipo.values()].sort((a, b) => a.tipoDoc - b.tipoDoc)
}

// ------------------------------------------------------------------------------------------------ CSV

/** A column of one of the SII's CSV layouts: its header exactly as the SII writes it, and its cell. */
export type ColumnaCsv = readonly [header: string, cell: (d: DetalleRcv, nro: number) => string]

const monto = (m: MontoRcv): string => (m === null ? '' : String(m))
const fecha = (iso: string | null): string => (iso === null ? '' : `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}`)
const fechaHora = (iso: string | null): string => (iso === null ? '' : `${fecha(iso.slice(0, 10))} ${iso.slice(11, 19)}`)
const primerImpuesto = (d: DetalleRcv): OtroImpuestoRcv | undefined => d.otrosImpuestos[0]
/** A column Timbre does not hold: written empty, as the SII leaves an absent value. */
const vacia = (): string => ''

const INICIO_COMPRAS: readonly ColumnaCsv[] = [
  ['Nro', (_d, nro) => String(nro)],
  ['Tipo Doc', (d) => String(d.tipoDoc)],
  ['Tipo Compra', (d) => d.tipoTransaccion ?? ''],
  ['RUT Proveedor', (d) => d.rut],
  ['Razon Social', (d) => d.razonSocial],
  ['Folio', (d) => String(d.folio)],
  ['Fecha Docto', (d) => fecha(d.fechaEmision)],
  ['Fecha Recepcion', (d) => fechaHora(d.fechaRecepcion)],
]
const MONTOS_COMPRAS: readonly ColumnaCsv[] = [
  ['Monto Exento', (d) => monto(d.montoExento)],
  ['Monto Neto', (d) => monto(d.montoNeto)],
  ['Monto IVA Recuperable', (d) => monto(d.montoIva)],
  ['Monto Iva No Recuperable', (d) => monto(d.montoIvaNoRecuperable)],
  ['Codigo IVA No Rec.', (d) => monto(d.codigoIvaNoRecuperable)],
  ['Monto Total', (d) => String(d.montoTotal)],
  ['Monto Neto Activo Fijo', (d) => monto(d.montoNetoActivoFijo)],
  ['IVA Activo Fijo', (d) => monto(d.ivaActivoFijo)],
  ['IVA uso Comun', (d) => monto(d.ivaUsoComun)],
  ['Impto. Sin Derecho a Credito', (d) => monto(d.impuestoSinDerechoCredito)],
  ['IVA No Retenido', (d) => monto(d.ivaNoRetenido)],
]
const TABACOS: readonly ColumnaCsv[] = [['Tabacos Puros', vacia], ['Tabacos Cigarrillos', vacia], ['Tabacos Elaborados', vacia]]
const FIN_COMPRAS: readonly ColumnaCsv[] = [
  ['NCE o NDE sobre Fact. de Compra', vacia],
  ['Codigo Otro Impuesto', (d) => monto(primerImpuesto(d)?.codigo ?? null)],
  ['Valor Otro Impuesto', (d) => monto(primerImpuesto(d)?.valor ?? null)],
  ['Tasa Otro Impuesto', (d) => tasa(primerImpuesto(d)?.tasa ?? null)],
]

/**
 * The Registro de Compras' CSV layouts, one per section, as cl-sii's parse_csv.py expects them and its fixtures of
 * SII downloads show (research §2.2 "CSV export"): Pendiente has no "Fecha Acuse", Reclamado has "Fecha Reclamo" in its
 * place, and only Registro carries the three "Tabacos" columns (the research's "No incluir is like Registro" is true
 * but for those three: cl-sii's No incluir schema and fixture lack them).
 */
export const COLUMNAS_COMPRAS: Readonly<Record<SeccionCompras, readonly ColumnaCsv[]>> = {
  registro: [...INICIO_COMPRAS, ['Fecha Acuse', (d) => fechaHora(d.fechaAcuse)], ...MONTOS_COMPRAS, ...TABACOS, ...FIN_COMPRAS],
  no_incluir: [...INICIO_COMPRAS, ['Fecha Acuse', (d) => fechaHora(d.fechaAcuse)], ...MONTOS_COMPRAS, ...FIN_COMPRAS],
  pendiente: [...INICIO_COMPRAS, ...MONTOS_COMPRAS, ...FIN_COMPRAS],
  reclamado: [...INICIO_COMPRAS, ['Fecha Reclamo', (d) => fechaHora(d.fechaReclamo)], ...MONTOS_COMPRAS, ...FIN_COMPRAS],
}

/** The Registro de Ventas' CSV layout: the 43 columns of cl-sii's venta schema and fixture header, in their order (the research's "45 columns" is not what they show; docs/decisions/rcv.md). */
export const COLUMNAS_VENTAS: readonly ColumnaCsv[] = [
  ['Nro', (_d, nro) => String(nro)],
  ['Tipo Doc', (d) => String(d.tipoDoc)],
  ['Tipo Venta', (d) => d.tipoTransaccion ?? ''],
  ['Rut cliente', (d) => d.rut],
  ['Razon Social', (d) => d.razonSocial],
  ['Folio', (d) => String(d.folio)],
  ['Fecha Docto', (d) => fecha(d.fechaEmision)],
  ['Fecha Recepcion', (d) => fechaHora(d.fechaRecepcion)],
  ['Fecha Acuse Recibo', (d) => fechaHora(d.fechaAcuse)],
  ['Fecha Reclamo', (d) => fechaHora(d.fechaReclamo)],
  ['Monto Exento', (d) => monto(d.montoExento)],
  ['Monto Neto', (d) => monto(d.montoNeto)],
  ['Monto IVA', (d) => monto(d.montoIva)],
  ['Monto total', (d) => String(d.montoTotal)],
  ['IVA Retenido Total', (d) => monto(d.ivaRetenidoTotal)],
  ['IVA Retenido Parcial', (d) => monto(d.ivaRetenidoParcial)],
  ['IVA no retenido', (d) => monto(d.ivaNoRetenido)],
  ['IVA propio', (d) => monto(d.ivaPropio)],
  ['IVA Terceros', (d) => monto(d.ivaTerceros)],
  ['RUT Emisor Liquid. Factura', vacia],
  ['Neto Comision Liquid. Factura', vacia],
  ['Exento Comision Liquid. Factura', vacia],
  ['IVA Comision Liquid. Factura', vacia],
  ['IVA fuera de plazo', (d) => monto(d.ivaFueraPlazo)],
  ['Tipo Docto. Referencia', (d) => (d.referencia === null ? '' : String(d.referencia.tipoDoc))],
  ['Folio Docto. Referencia', (d) => (d.referencia === null ? '' : String(d.referencia.folio))],
  ['Num. Ident. Receptor Extranjero', vacia],
  ['Nacionalidad Receptor Extranjero', vacia],
  ['Credito empresa constructora', vacia],
  ['Impto. Zona Franca (Ley 18211)', vacia],
  ['Garantia Dep. Envases', vacia],
  ['Indicador Venta sin Costo', vacia],
  ['Indicador Servicio Periodico', vacia],
  ['Monto No facturable', vacia],
  ['Total Monto Periodo', vacia],
  ['Venta Pasajes Transporte Nacional', vacia],
  ['Venta Pasajes Transporte Internacional', vacia],
  ['Numero Interno', vacia],
  ['Codigo Sucursal', vacia],
  ['NCE o NDE sobre Fact. de Compra', vacia],
  ['Codigo Otro Imp.', (d) => monto(primerImpuesto(d)?.codigo ?? null)],
  ['Valor Otro Imp.', (d) => monto(primerImpuesto(d)?.valor ?? null)],
  ['Tasa Otro Imp.', (d) => tasa(primerImpuesto(d)?.tasa ?? null)],
]

/** A rate as the SII writes it: decimal point, no thousands separator ("2.967999999" in cl-sii's reclamado fixture). */
function tasa(t: number | null): string {
  return t === null ? '' : String(t)
}

/**
 * `;` separates, CRLF ends each row (cl-sii's _RcvCsvDialect, sniffed from SII downloads). A cell holding `;`, a quote
 * or a line break is quoted with its quotes doubled (RFC 4180): the SII's files show no such cell, and cutting the
 * character would change a razón social, so Timbre quotes rather than guesses.
 */
function celdaCsv(text: string): string {
  return /[;"\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

function writeCsv(columnas: readonly ColumnaCsv[], detalles: readonly DetalleRcv[]): string {
  const filas = [columnas.map(([header]) => header).join(';')]
  detalles.forEach((d, i) => filas.push(columnas.map(([, cell]) => celdaCsv(cell(d, i + 1))).join(';')))
  return filas.map((f) => `${f}\r\n`).join('')
}

/**
 * One section of the Registro de Compras in the SII's CSV layout. Returned as text: the door writes it UTF-8 without
 * a BOM, the encoding cl-sii reads the SII's downloads in (unconfirmed against a download, docs/decisions/rcv.md).
 * A detail with more than one other tax shows only the first: how the SII lays out several is not known.
 */
export function writeRegistroComprasCsv(seccion: SeccionCompras, detalles: readonly DetalleRcv[]): string {
  return writeCsv(COLUMNAS_COMPRAS[seccion], detalles)
}

/** The Registro de Ventas in the SII's CSV layout; same encoding and other-tax caveats as the compras. */
export function writeRegistroVentasCsv(detalles: readonly DetalleRcv[]): string {
  return writeCsv(COLUMNAS_VENTAS, detalles)
}

// ------------------------------------------------------------------------------------------------ typed cells

/**
 * A cell of the SII's layouts with its type, for writers that keep types (the .xlsx of sheets/rcv-xlsx.ts): null for an
 * empty cell (the SII's "no value", not 0), a number, text, a date (`YYYY-MM-DD`) or a Santiago wall-clock time
 * (`YYYY-MM-DDTHH:MM:SS`, no offset, as the SII writes it).
 */
export type CeldaRcv =
  | { readonly tipo: 'numero'; readonly valor: number }
  | { readonly tipo: 'texto'; readonly valor: string }
  | { readonly tipo: 'fecha'; readonly valor: string }
  | { readonly tipo: 'fecha_hora'; readonly valor: string }
  | null

/** Columns whose cells stay text even when they read as a number: names, RUTs, the SII's words, foreign ids. */
const COLUMNAS_TEXTO: ReadonlySet<string> = new Set([
  'Tipo Compra', 'Tipo Venta', 'RUT Proveedor', 'Rut cliente', 'Razon Social', 'RUT Emisor Liquid. Factura',
  'Num. Ident. Receptor Extranjero', 'Nacionalidad Receptor Extranjero',
])

/**
 * The cell `columna` writes for a detail, typed. Read back from the very text the CSV writer writes (numbers in the
 * form String() gives them, dates as `fecha`/`fechaHora` format them, both lossless), so a typed copy of a register
 * cannot disagree with its CSV. "Fecha Docto" is a date; every other "Fecha …" column is one of the SII's timestamps.
 */
export function celdaRcv(columna: ColumnaCsv, d: DetalleRcv, nro: number): CeldaRcv {
  const [header, cell] = columna
  const text = cell(d, nro)
  if (text === '') return null
  if (COLUMNAS_TEXTO.has(header)) return { tipo: 'texto', valor: text }
  if (header === 'Fecha Docto') return tipada('fecha', fechaIso(text), text)
  if (header.startsWith('Fecha ')) return tipada('fecha_hora', fechaHoraIso(text), text)
  return /^-?\d+(\.\d+)?$/.test(text) ? { tipo: 'numero', valor: Number(text) } : { tipo: 'texto', valor: text }
}

function tipada(tipo: 'fecha' | 'fecha_hora', iso: string | null, text: string): CeldaRcv {
  return iso === null ? { tipo: 'texto', valor: text } : { tipo, valor: iso }
}
