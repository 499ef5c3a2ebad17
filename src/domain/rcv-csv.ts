// The SII's RCV CSV files read back into details: what the portal's deferred download (obtenerArchivoBLOB, a gzip
// CSV, research/next-capabilities.md §2.2) hands over when a section has too many documents for the JSON detail. The
// exact inverse of writeRegistroComprasCsv / writeRegistroVentasCsv in rcv.ts: same column tables (COLUMNAS_*), same
// dialect (`;`, CRLF, RFC 4180 quotes), an empty cell read as null and never as 0. Pure: the sii/ portal client
// gunzips the bytes and hands the text here. Sources and open questions: docs/decisions/rcv.md.
import {
  COLUMNAS_COMPRAS, COLUMNAS_VENTAS, fechaHoraIso, fechaIso,
  type DetalleRcv, type MontoRcv, type OtroImpuestoRcv, type RcvError, type RcvResult, type SeccionCompras,
} from './rcv'
import { normalizeRut } from './rut'

/** One section of the Registro de Compras, from the SII's CSV of that section. */
export function readRegistroComprasCsv(seccion: SeccionCompras, text: string): RcvResult<DetalleRcv[]> {
  return readCsvRcv(COLUMNAS_COMPRAS[seccion].map(([header]) => header), NOMBRES_COMPRAS, text)
}

/** The Registro de Ventas, from the SII's CSV. */
export function readRegistroVentasCsv(text: string): RcvResult<DetalleRcv[]> {
  return readCsvRcv(COLUMNAS_VENTAS.map(([header]) => header), NOMBRES_VENTAS, text)
}

// ------------------------------------------------------------------------------------------------ columns

/** The header of each field that compras and ventas name differently; a field whose column a layout lacks is null. */
interface Nombres {
  readonly tipoTransaccion: string
  readonly rut: string
  readonly fechaAcuse: string
  readonly montoIva: string
  readonly montoTotal: string
  readonly ivaNoRetenido: string
  readonly codigoOtro: string
  readonly valorOtro: string
  readonly tasaOtro: string
}

const NOMBRES_COMPRAS: Nombres = {
  tipoTransaccion: 'Tipo Compra', rut: 'RUT Proveedor', fechaAcuse: 'Fecha Acuse', montoIva: 'Monto IVA Recuperable',
  montoTotal: 'Monto Total', ivaNoRetenido: 'IVA No Retenido',
  codigoOtro: 'Codigo Otro Impuesto', valorOtro: 'Valor Otro Impuesto', tasaOtro: 'Tasa Otro Impuesto',
}

const NOMBRES_VENTAS: Nombres = {
  tipoTransaccion: 'Tipo Venta', rut: 'Rut cliente', fechaAcuse: 'Fecha Acuse Recibo', montoIva: 'Monto IVA',
  montoTotal: 'Monto total', ivaNoRetenido: 'IVA no retenido',
  codigoOtro: 'Codigo Otro Imp.', valorOtro: 'Valor Otro Imp.', tasaOtro: 'Tasa Otro Imp.',
}

function readCsvRcv(esperado: readonly string[], nombres: Nombres, text: string): RcvResult<DetalleRcv[]> {
  const filas = splitCsv(text)
  if (!filas.ok) return filas
  const [encabezado, ...datos] = filas.value
  if (encabezado === undefined) return fail('encabezado', 'El archivo del SII está vacío: no trae ni el encabezado.')
  const distinto = checkEncabezado(esperado, encabezado)
  if (distinto !== null) return { ok: false, errors: [distinto] }
  const errors: RcvError[] = []
  const value: DetalleRcv[] = []
  datos.forEach((celdas, i) => {
    const nro = i + 1
    if (celdas.length !== esperado.length) {
      errors.push({ campo: `fila.${nro}`, mensaje: `La fila trae ${celdas.length} columnas y el encabezado ${esperado.length}.` })
      return
    }
    value.push(readFila(new Celdas(esperado, celdas, `fila.${nro}`, errors), nombres))
  })
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value }
}

/**
 * The SII's layout, column by column. A header that differs means the SII changed its file (a column added, renamed
 * or moved): reading it by position would put amounts in the wrong fields, so the first difference is an error that
 * names it. Surrounding spaces in a header are not a change.
 */
function checkEncabezado(esperado: readonly string[], encabezado: readonly string[]): RcvError | null {
  const largo = Math.max(esperado.length, encabezado.length)
  for (let i = 0; i < largo; i++) {
    const quiere = esperado[i]
    const vino = encabezado[i]?.trim()
    if (quiere === vino) continue
    const mensaje = quiere === undefined
      ? `El archivo del SII trae una columna más, «${vino}», después de las ${esperado.length} conocidas: el SII cambió el formato del archivo.`
      : vino === undefined
        ? `Al archivo del SII le falta la columna «${quiere}» (columna ${i + 1}): el SII cambió el formato del archivo.`
        : `La columna ${i + 1} del archivo del SII es «${vino}» y Timbre espera «${quiere}»: el SII cambió el formato del archivo.`
    return { campo: `encabezado.${i + 1}`, mensaje }
  }
  return null
}

function readFila(c: Celdas, n: Nombres): DetalleRcv {
  const tipoRef = c.monto('Tipo Docto. Referencia')
  const folioRef = c.monto('Folio Docto. Referencia')
  return {
    tipoDoc: c.entero('Tipo Doc'),
    rut: c.rut(n.rut),
    razonSocial: c.razonSocial('Razon Social'),
    folio: c.entero('Folio'),
    fechaEmision: c.fecha('Fecha Docto'),
    fechaRecepcion: c.fechaHora('Fecha Recepcion'),
    fechaAcuse: c.fechaHora(n.fechaAcuse),
    fechaReclamo: c.fechaHora('Fecha Reclamo'),
    tipoTransaccion: c.texto(n.tipoTransaccion),
    montoExento: c.monto('Monto Exento'),
    montoNeto: c.monto('Monto Neto'),
    montoIva: c.monto(n.montoIva),
    montoIvaNoRecuperable: c.monto('Monto Iva No Recuperable'),
    codigoIvaNoRecuperable: c.monto('Codigo IVA No Rec.'),
    montoTotal: c.requerido(n.montoTotal),
    montoNetoActivoFijo: c.monto('Monto Neto Activo Fijo'),
    ivaActivoFijo: c.monto('IVA Activo Fijo'),
    ivaUsoComun: c.monto('IVA uso Comun'),
    impuestoSinDerechoCredito: c.monto('Impto. Sin Derecho a Credito'),
    ivaNoRetenido: c.monto(n.ivaNoRetenido),
    otrosImpuestos: readOtroImpuesto(c, n),
    ivaRetenidoTotal: c.monto('IVA Retenido Total'),
    ivaRetenidoParcial: c.monto('IVA Retenido Parcial'),
    ivaPropio: c.monto('IVA propio'),
    ivaTerceros: c.monto('IVA Terceros'),
    ivaFueraPlazo: c.monto('IVA fuera de plazo'),
    // As readDetalleRcv: a reference needs both a type and a folio; the SII may write 0 for "none".
    referencia: tipoRef !== null && tipoRef > 0 && folioRef !== null && folioRef > 0 ? { tipoDoc: tipoRef, folio: folioRef } : null,
  }
}

/**
 * The file has one "other tax" per row (the writer keeps the first, docs/decisions/rcv.md). No code, or code 0 with
 * no amount, is no tax: cl-sii's fixtures show 0 in columns the SII had nothing for.
 */
function readOtroImpuesto(c: Celdas, n: Nombres): OtroImpuestoRcv[] {
  const codigo = c.monto(n.codigoOtro)
  const valor = c.monto(n.valorOtro)
  const tasa = c.tasa(n.tasaOtro)
  if (codigo === null || (codigo === 0 && (valor ?? 0) === 0)) return []
  if (valor === null) {
    c.error(n.valorOtro, 'Un otro impuesto con código debe traer su valor.')
    return []
  }
  return [{ codigo, valor, tasa }]
}

/** One row's cells by header, collecting every error instead of throwing: the file is hostile input. */
class Celdas {
  private readonly porNombre: ReadonlyMap<string, string>

  constructor(encabezado: readonly string[], celdas: readonly string[], private readonly ruta: string, private readonly errors: RcvError[]) {
    this.porNombre = new Map(encabezado.map((h, i) => [h, celdas[i] ?? '']))
  }

  error(nombre: string, mensaje: string): void {
    this.errors.push({ campo: `${this.ruta}.${nombre}`, mensaje })
  }

  /** The cell, or null when the layout has no such column (the field stays null, as the writer leaves it out). */
  private celda(nombre: string): string | null {
    return this.porNombre.get(nombre) ?? null
  }

  entero(nombre: string): number {
    const n = this.requerido(nombre)
    if (n < 0) this.error(nombre, 'Debe ser un número entero positivo.')
    return n
  }

  requerido(nombre: string): number {
    const celda = this.celda(nombre)
    if (celda === null || celda === '') {
      this.error(nombre, 'Falta este valor.')
      return 0
    }
    return this.monto(nombre) ?? 0
  }

  /** Whole pesos with no thousands separator (docs/decisions/rcv.md "Numbers"); an empty cell is null, not 0. */
  monto(nombre: string): MontoRcv {
    const celda = this.celda(nombre)
    if (celda === null || celda === '') return null
    const n = /^-?\d{1,18}$/.test(celda) ? Number(celda) : Number.NaN
    if (Number.isSafeInteger(n)) return n
    this.error(nombre, 'Debe ser un número entero (pesos, sin decimales ni separador de miles).')
    return null
  }

  /** A rate with a decimal point ("2.967999999" in cl-sii's reclamado fixture). */
  tasa(nombre: string): number | null {
    const celda = this.celda(nombre)
    if (celda === null || celda === '') return null
    const n = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(celda) ? Number(celda) : Number.NaN
    if (Number.isFinite(n)) return n
    this.error(nombre, 'Debe ser una tasa con punto decimal.')
    return null
  }

  /** Words as the SII writes them ("Del Giro"); an empty cell is null. */
  texto(nombre: string): string | null {
    const celda = this.celda(nombre)
    return celda === null || celda === '' ? null : celda
  }

  /** cl-sii's fixtures carry razones sociales with leading and trailing spaces; readDetalleRcv trims them too. */
  razonSocial(nombre: string): string {
    return (this.celda(nombre) ?? '').trim()
  }

  rut(nombre: string): string {
    const rut = normalizeRut(this.celda(nombre) ?? '')
    if (rut === null) this.error(nombre, 'El RUT no es válido.')
    return rut ?? ''
  }

  fecha(nombre: string): string {
    const iso = fechaIso(this.celda(nombre) ?? '')
    if (iso === null) this.error(nombre, 'La fecha debe venir como dd/mm/aaaa.')
    return iso ?? ''
  }

  fechaHora(nombre: string): string | null {
    const celda = this.celda(nombre)
    if (celda === null || celda === '') return null
    const iso = fechaHoraIso(celda)
    if (iso === null) this.error(nombre, 'La fecha debe venir como dd/mm/aaaa hh:mm:ss.')
    return iso
  }
}

// ------------------------------------------------------------------------------------------------ dialect

/**
 * Rows of cells: `;` separates, CRLF ends a row (cl-sii's _RcvCsvDialect), a lone LF too (a file passed through a
 * Unix tool); blank lines are skipped; a quoted cell may hold `;`, `"` doubled and line breaks (RFC 4180, as the writer quotes). A UTF-8 BOM
 * before the header is dropped: the SII's encoding is unconfirmed. The final line break, when present, opens no row.
 */
function splitCsv(text: string): RcvResult<string[][]> {
  const src = text.startsWith('\uFEFF') ? text.slice(1) : text
  const filas: string[][] = []
  let fila: string[] = []
  let celda = ''
  let i = 0
  const cerrarFila = () => {
    fila.push(celda)
    filas.push(fila)
    fila = []
    celda = ''
  }
  while (i < src.length) {
    const c = src[i]
    if (c === '"' && celda === '') {
      const cierre = readQuoted(src, i + 1)
      if (cierre === null) return fail(`fila.${filas.length}`, 'Una celda entre comillas no se cierra.')
      celda = cierre.celda
      i = cierre.siguiente
      const sigue = src[i]
      if (sigue !== undefined && sigue !== ';' && sigue !== '\r' && sigue !== '\n') {
        return fail(`fila.${filas.length}`, 'Después de una celda entre comillas viene texto sin separador.')
      }
      continue
    }
    if (c === ';') {
      fila.push(celda)
      celda = ''
    } else if (c === '\r' && src[i + 1] === '\n') {
      cerrarFila()
      i++
    } else if (c === '\n') cerrarFila()
    else celda += c
    i++
  }
  if (celda !== '' || fila.length > 0) cerrarFila()
  // A blank line (a file that ends with two line breaks) is no row; every real row has dozens of cells.
  return { ok: true, value: filas.filter((f) => !(f.length === 1 && f[0] === '')) }
}

/** From after an opening quote: the cell's text and where the text after the closing quote starts; null if unclosed. */
function readQuoted(src: string, desde: number): { readonly celda: string; readonly siguiente: number } | null {
  let celda = ''
  let i = desde
  while (i < src.length) {
    const c = src[i]
    if (c === '"' && src[i + 1] === '"') {
      celda += '"'
      i += 2
    } else if (c === '"') return { celda, siguiente: i + 1 }
    else {
      celda += c
      i++
    }
  }
  return null
}

function fail<T>(campo: string, mensaje: string): RcvResult<T> {
  return { ok: false, errors: [{ campo, mensaje }] }
}
