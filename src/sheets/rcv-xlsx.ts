// The Registro de Compras and the Registro de Ventas as .xlsx workbooks an accountant opens (DESIGN §16: "`.xlsx` of
// each"; issue 29). Each detail sheet carries the same columns, in the same order and with the same cells, as the CSV in
// the SII's layout (domain/rcv.ts COLUMNAS_COMPRAS / COLUMNAS_VENTAS, read through celdaRcv), typed: amounts as numbers,
// an empty cell where the SII left the value empty (never 0), dates as Excel dates. A first sheet "Resumen" sums each
// section per document type. Written by exceljs, loaded on the first call so a server at rest does not hold it.
//
// The same copy of the RCV gives the same bytes, at any hour it is asked for: the console's download and the API's are
// one file, and an accountant who downloads twice can compare checksums. exceljs stamps the workbook's properties and
// JSZip every zip entry with the time of writing, so both are set to the moment the copy was read from the SII.
import type { Cell, Workbook, Worksheet } from 'exceljs'
import {
  celdaRcv, COLUMNAS_COMPRAS, COLUMNAS_VENTAS, resumenDeDetalles, SECCIONES_COMPRAS,
  type CeldaRcv, type ColumnaCsv, type DetalleRcv, type RegistroCompras, type RegistroVentas, type ResumenTipoRcv,
  type SeccionCompras,
} from '../domain/rcv'
import { TIPOS, type ReglasTipo } from '../domain/tipos'

/** The company the register belongs to, as the title of "Resumen" names it. */
export interface EmpresaRegistro {
  readonly rut: string
  readonly razonSocial: string
}

/** The detail sheets of the Registro de Compras, in SECCIONES_COMPRAS order (the SII portal's tabs). */
export const HOJAS_COMPRAS: Readonly<Record<SeccionCompras, string>> = {
  registro: 'Registro', pendiente: 'Pendientes', no_incluir: 'No incluir', reclamado: 'Reclamados',
}

const MESES = ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre']

/** `202611` → `noviembre 2026`. */
export function nombrePeriodo(periodo: string): string {
  const mes = MESES[Number(periodo.slice(4, 6)) - 1]
  return mes === undefined ? periodo : `${mes} ${periodo.slice(0, 4)}`
}

/** The Registro de Compras: "Resumen", then one sheet per section, each present even when the section is empty. */
export async function registroComprasXlsx(registro: RegistroCompras, empresa: EmpresaRegistro, leidoAt: Date): Promise<Uint8Array> {
  const wb = await newWorkbook(leidoAt)
  const resumen = wb.addWorksheet('Resumen')
  writeTitulo(resumen, `Registro de Compras, ${nombrePeriodo(registro.periodo)}`, empresa)
  for (const seccion of SECCIONES_COMPRAS) {
    writeResumen(resumen, HOJAS_COMPRAS[seccion], registro.secciones[seccion].detalle, RESUMEN_COMPRAS)
  }
  fitResumen(resumen, RESUMEN_COMPRAS)
  for (const seccion of SECCIONES_COMPRAS) {
    writeDetalle(wb.addWorksheet(HOJAS_COMPRAS[seccion]), COLUMNAS_COMPRAS[seccion], registro.secciones[seccion].detalle)
  }
  return bytesOf(wb, leidoAt)
}

/** The Registro de Ventas: "Resumen" and "Ventas". */
export async function registroVentasXlsx(registro: RegistroVentas, empresa: EmpresaRegistro, leidoAt: Date): Promise<Uint8Array> {
  const wb = await newWorkbook(leidoAt)
  const resumen = wb.addWorksheet('Resumen')
  writeTitulo(resumen, `Registro de Ventas, ${nombrePeriodo(registro.periodo)}`, empresa)
  writeResumen(resumen, 'Ventas', registro.detalle, RESUMEN_VENTAS)
  fitResumen(resumen, RESUMEN_VENTAS)
  writeDetalle(wb.addWorksheet('Ventas'), COLUMNAS_VENTAS, registro.detalle)
  return bytesOf(wb, leidoAt)
}

async function newWorkbook(leidoAt: Date): Promise<Workbook> {
  // Loaded here, not at the top: exceljs and its zip stack cost memory that a server which never exports should not hold.
  const { Workbook } = await import('exceljs')
  const wb = new Workbook()
  wb.creator = 'Timbre'
  wb.created = leidoAt
  wb.modified = leidoAt
  return wb
}

/**
 * The workbook's zip with every entry dated `leidoAt`. exceljs gives JSZip no date, so JSZip takes the clock's; the
 * archive is read back and written again with the entries' compressed data as it is (JSZip reuses it when the
 * compression does not change), only their headers' dates rewritten.
 */
async function bytesOf(wb: Workbook, leidoAt: Date): Promise<Uint8Array> {
  const { default: JSZip } = await import('jszip')
  const zip = await JSZip.loadAsync(await wb.xlsx.writeBuffer())
  zip.forEach((_path, entry) => {
    entry.date = leidoAt
  })
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' })
}

// ------------------------------------------------------------------------------------------------ detail sheets

/** Excel formats: amounts with the reader's thousands separator, dates day first as the SII writes them. */
const FORMATO_MONTO = '#,##0'
const FORMATO_FECHA = 'dd/mm/yyyy'
const FORMATO_FECHA_HORA = 'dd/mm/yyyy hh:mm:ss'

/**
 * Number columns that hold pesos get a thousands separator; the others (Nro, Tipo Doc, Folio, codes, rates, indicators)
 * stay as typed, since "1.234" as a folio would read as an amount.
 */
const COLUMNA_MONTO = /^(Monto|IVA|Valor|Impto|Neto|Exento|Total|Credito|Garantia|Venta Pasajes|Tabacos)/

function writeDetalle(ws: Worksheet, columnas: readonly ColumnaCsv[], detalles: readonly DetalleRcv[]): void {
  ws.addRow(columnas.map(([header]) => header)).font = { bold: true }
  // Cells the same as the CSV's: Nro counts from 1 in each section, as writeCsv numbers its rows.
  const filas = detalles.map((d, i) => columnas.map((columna) => celdaRcv(columna, d, i + 1)))
  filas.forEach((celdas) => {
    const row = ws.addRow(celdas.map(valorExcel))
    celdas.forEach((celda, i) => {
      const format = numFmt(celda, columnas[i]![0])
      if (format !== undefined) row.getCell(i + 1).numFmt = format
    })
  })
  ws.views = [{ state: 'frozen', xSplit: 0, ySplit: 1 }]
  ws.autoFilter = { from: { row: 1, column: 1 }, to: { row: 1, column: columnas.length } }
  columnas.forEach(([header], i) => {
    ws.getColumn(i + 1).width = anchoColumna(header, filas.map((celdas) => celdas[i] ?? null))
  })
}

/**
 * An Excel date is a wall-clock reading with no zone: exceljs turns a Date into its serial from the Date's UTC fields,
 * so the SII's Santiago time goes in as UTC fields and comes out as written, whatever the server's zone and across DST
 * changes (an hour skipped in spring or repeated in autumn is still the time the SII wrote).
 */
function valorExcel(celda: CeldaRcv): string | number | Date | null {
  if (celda === null) return null
  if (celda.tipo === 'fecha') return new Date(`${celda.valor}T00:00:00Z`)
  if (celda.tipo === 'fecha_hora') return new Date(`${celda.valor}Z`)
  return celda.valor
}

function numFmt(celda: CeldaRcv, header: string): string | undefined {
  if (celda?.tipo === 'fecha') return FORMATO_FECHA
  if (celda?.tipo === 'fecha_hora') return FORMATO_FECHA_HORA
  if (celda?.tipo === 'numero' && COLUMNA_MONTO.test(header)) return FORMATO_MONTO
  return undefined
}

/** Wide enough for the header and the longest cell as shown, within bounds a screen holds. */
function anchoColumna(header: string, celdas: readonly CeldaRcv[]): number {
  const largos = celdas.map((c) => {
    if (c === null) return 0
    if (c.tipo === 'fecha') return 10
    if (c.tipo === 'fecha_hora') return 19
    // A thousands separator every three digits.
    return c.tipo === 'numero' ? String(c.valor).length + Math.floor(String(Math.abs(Math.trunc(c.valor))).length / 3) : c.valor.length
  })
  return Math.min(50, Math.max(8, header.length, ...largos) + 2)
}

// ------------------------------------------------------------------------------------------------ Resumen

/** One column of "Resumen": its header and the value of one document type's summary. */
type ColumnaResumen = readonly [header: string, value: (r: ResumenTipoRcv) => number | string]

const RESUMEN_INICIO: readonly ColumnaResumen[] = [
  ['Tipo Doc', (r) => r.tipoDoc],
  ['Documento', (r) => nombreTipo(r.tipoDoc)],
  ['Cantidad', (r) => r.cantidad],
  ['Monto Exento', (r) => r.montoExento],
  ['Monto Neto', (r) => r.montoNeto],
]
/** The IVA columns under the CSV's own headers: compras split recuperable and not; the RV has one IVA. */
const RESUMEN_COMPRAS: readonly ColumnaResumen[] = [
  ...RESUMEN_INICIO,
  ['Monto IVA Recuperable', (r) => r.montoIva],
  ['Monto Iva No Recuperable', (r) => r.montoIvaNoRecuperable],
  ['Monto Total', (r) => r.montoTotal],
]
const RESUMEN_VENTAS: readonly ColumnaResumen[] = [...RESUMEN_INICIO, ['Monto IVA', (r) => r.montoIva], ['Monto total', (r) => r.montoTotal]]

/** The RCV also lists documents Timbre does not issue (paper, DIN): those keep their code and no name. */
function nombreTipo(tipoDoc: number): string {
  const porCodigo: Readonly<Record<number, ReglasTipo | undefined>> = TIPOS
  return Object.hasOwn(porCodigo, tipoDoc) ? (porCodigo[tipoDoc]?.nombre ?? '') : ''
}

function writeTitulo(ws: Worksheet, titulo: string, empresa: EmpresaRegistro): void {
  ws.addRow([titulo]).font = { bold: true, size: 14 }
  ws.addRow([`${empresa.razonSocial}, RUT ${empresa.rut}`]).font = { bold: true }
}

/**
 * One section's summary per document type and its total row. Summed from the details the workbook lists (domain/rcv.ts
 * resumenDeDetalles, an empty amount counting as 0), not copied from the SII's getResumen, so every figure here is the
 * sum of rows the reader can see in the section's sheet.
 */
function writeResumen(ws: Worksheet, seccion: string, detalles: readonly DetalleRcv[], columnas: readonly ColumnaResumen[]): void {
  ws.addRow([])
  ws.addRow([seccion]).font = { bold: true }
  ws.addRow(columnas.map(([header]) => header)).font = { bold: true }
  const porTipo = resumenDeDetalles(detalles)
  for (const r of porTipo) {
    const row = ws.addRow(columnas.map(([, value]) => value(r)))
    formatMontos((n) => row.getCell(n), columnas)
  }
  const sumas = columnas.map(([, value], i) => (i === 0 ? 'Total' : i === 1 ? '' : porTipo.reduce((sum, r) => sum + Number(value(r)), 0)))
  const total = ws.addRow(sumas)
  total.font = { bold: true }
  formatMontos((n) => total.getCell(n), columnas)
}

function formatMontos(cell: (n: number) => Cell, columnas: readonly ColumnaResumen[]): void {
  columnas.forEach(([header], i) => {
    if (header.startsWith('Monto')) cell(i + 1).numFmt = FORMATO_MONTO
  })
}

function fitResumen(ws: Worksheet, columnas: readonly ColumnaResumen[]): void {
  ws.getColumn(1).width = 12
  ws.getColumn(2).width = 42
  columnas.slice(2).forEach(([header], i) => {
    ws.getColumn(i + 3).width = Math.max(14, header.length + 2)
  })
}
