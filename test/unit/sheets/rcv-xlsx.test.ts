// The RCV registers as .xlsx (sheets/rcv-xlsx.ts, DESIGN §16): each workbook is written, then read back with exceljs,
// and checked sheet by sheet and cell by cell: sheet names and order, the SII's CSV headers, every cell's value and type
// (an empty amount is an empty cell, 0 is 0; dates are Excel dates holding Santiago's wall clock as the SII wrote it,
// across both DST changes, with the process itself in Santiago's zone), the cells equal to the CSV writer's, and a
// Resumen whose figures equal sums this file computes from the details.
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from 'bun:test'
import { ValueType, Workbook, type Worksheet } from 'exceljs'
import JSZip from 'jszip'
import {
  COLUMNAS_COMPRAS, COLUMNAS_VENTAS, SECCIONES_COMPRAS, writeRegistroComprasCsv, writeRegistroVentasCsv,
  type DetalleRcv, type RegistroCompras, type RegistroVentas,
} from '../../../src/domain/rcv'
import { nombrePeriodo, registroComprasXlsx, registroVentasXlsx } from '../../../src/sheets/rcv-xlsx'

// The writer must not read the server's zone: run in Santiago's, where a shifted date would show.
const zone = process.env.TZ
beforeAll(() => { process.env.TZ = 'America/Santiago' })
afterAll(() => { if (zone === undefined) delete process.env.TZ; else process.env.TZ = zone })

const EMPRESA = { rut: '76354771-K', razonSocial: 'Ferretería "La Tuerca"; SpA' }
/** When the copy was read from the SII; an even second, as a zip entry's date keeps only those. */
const LEIDO_AT = new Date('2026-05-02T14:03:08Z')

function detalle(extra: Partial<DetalleRcv> = {}): DetalleRcv {
  return {
    tipoDoc: 33, rut: '12345678-5', razonSocial: 'Fake Company S.A.', folio: 1, fechaEmision: '2026-04-01',
    fechaRecepcion: '2026-04-01T09:55:53', fechaAcuse: null, fechaReclamo: null, tipoTransaccion: 'Del Giro',
    montoExento: 0, montoNeto: 1000, montoIva: 190, montoIvaNoRecuperable: null, codigoIvaNoRecuperable: null, montoTotal: 1190,
    montoNetoActivoFijo: null, ivaActivoFijo: null, ivaUsoComun: null, impuestoSinDerechoCredito: null, ivaNoRetenido: null,
    otrosImpuestos: [], ivaRetenidoTotal: null, ivaRetenidoParcial: null, ivaPropio: null, ivaTerceros: null, ivaFueraPlazo: null,
    referencia: null, ...extra,
  }
}

// Chile 2026: DST ends at 24:00 of Saturday 4 April (23:00–23:59 happens twice) and starts at 24:00 of Saturday
// 5 September (00:00–00:59 of Sunday 6 September never happens).
const COMPRAS: RegistroCompras = {
  periodo: '202604',
  secciones: {
    registro: { resumen: [], detalle: [
      detalle({
        folio: 23084, razonSocial: 'Comercial "El Sol"; Ltda.', fechaEmision: '2026-04-03', fechaRecepcion: '2026-04-04T23:30:00',
        fechaAcuse: '2026-04-05T00:10:05', montoExento: 0, montoNeto: 240169, montoIva: 45632, montoTotal: 289101, ivaNoRetenido: 0,
        otrosImpuestos: [{ codigo: 24, valor: 3300, tasa: 31.5 }],
      }),
      detalle({
        folio: 7, rut: '11111111-1', fechaEmision: '2026-04-10', fechaRecepcion: '2026-04-10T08:00:00', fechaAcuse: '2026-04-18T08:00:00',
        montoIva: null, montoIvaNoRecuperable: 1900, codigoIvaNoRecuperable: 1, montoNeto: 10000, montoExento: null, montoTotal: 11900,
      }),
      detalle({ tipoDoc: 61, folio: 12, montoNeto: 500, montoIva: 95, montoTotal: 595, montoExento: 20 }),
      detalle({ tipoDoc: 914, folio: 998877, tipoTransaccion: null, montoExento: 0, montoNeto: 3000000, montoIva: 570000, montoTotal: 3570000 }),
    ] },
    // A razón social that reads as a number stays text.
    pendiente: { resumen: [], detalle: [detalle({ folio: 55, razonSocial: '1234', fechaRecepcion: '2026-04-28T12:00:00' })] },
    no_incluir: { resumen: [], detalle: [] },
    reclamado: { resumen: [], detalle: [
      detalle({ folio: 89, fechaReclamo: '2026-04-09T17:45:12', montoIva: null, montoIvaNoRecuperable: 16663, codigoIvaNoRecuperable: 9 }),
    ] },
  },
}

const VENTAS: RegistroVentas = {
  periodo: '202609',
  resumen: [],
  detalle: [
    detalle({ rut: '76000000-0', razonSocial: '  "Cliente" ; con espacios', folio: 100, fechaEmision: '2026-09-05', fechaRecepcion: '2026-09-06T00:30:00', fechaAcuse: '2026-09-05T23:59:59' }),
    detalle({ tipoDoc: 61, folio: 101, fechaEmision: '2026-09-30', fechaRecepcion: null, referencia: { tipoDoc: 33, folio: 100 }, ivaRetenidoTotal: 0, ivaFueraPlazo: 0 }),
    detalle({ tipoDoc: 34, folio: 102, montoExento: 50000, montoNeto: null, montoIva: null, montoTotal: 50000 }),
  ],
}

async function read(bytes: Uint8Array): Promise<Workbook> {
  expect(bytes).toBeInstanceOf(Uint8Array)
  const wb = new Workbook()
  await wb.xlsx.load(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer)
  return wb
}

/** Every cell of a sheet's rows as [value, type], the row numbers as Excel's. */
function rowsOf(ws: Worksheet): { value: unknown; type: ValueType }[][] {
  const rows: { value: unknown; type: ValueType }[][] = []
  for (let r = 1; r <= ws.rowCount; r++) {
    const row = ws.getRow(r)
    const cells: { value: unknown; type: ValueType }[] = []
    for (let c = 1; c <= ws.columnCount; c++) cells.push({ value: row.getCell(c).value, type: row.getCell(c).type })
    rows.push(cells)
  }
  return rows
}

const utc = (iso: string) => new Date(`${iso}Z`)

describe('the zone the tests run in', () => {
  test('is Santiago\'s, with its DST gap (00:30 of 6 September 2026 reads as 01:30)', () => {
    expect(new Date(2026, 8, 6, 0, 30).getHours()).toBe(1)
  })
})

describe('Registro de Compras', () => {
  test('sheets in order, each with the section\'s CSV headers in row 1, bold, frozen and filtered', async () => {
    const wb = await read(await registroComprasXlsx(COMPRAS, EMPRESA, LEIDO_AT))
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Resumen', 'Registro', 'Pendientes', 'No incluir', 'Reclamados'])
    const hojas = { registro: 'Registro', pendiente: 'Pendientes', no_incluir: 'No incluir', reclamado: 'Reclamados' } as const
    for (const seccion of SECCIONES_COMPRAS) {
      const ws = wb.getWorksheet(hojas[seccion])!
      const headers = COLUMNAS_COMPRAS[seccion].map(([h]) => h)
      expect(ws.getRow(1).values).toEqual([undefined, ...headers])  // exceljs rows are 1-based: index 0 is empty
      expect(ws.getRow(1).getCell(1).font?.bold).toBe(true)
      expect(ws.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 })
      expect(ws.autoFilter).toBeDefined()
      expect(ws.rowCount).toBe(1 + COMPRAS.secciones[seccion].detalle.length)
      for (let c = 1; c <= headers.length; c++) expect(ws.getColumn(c).width).toBeGreaterThanOrEqual(8)
    }
    expect(wb.getWorksheet('Registro')!.getColumn(5).width).toBe('Comercial "El Sol"; Ltda.'.length + 2)  // Razon Social fits
  })

  test('Registro: every cell of the first detail, by header, with its type (empty stays empty, 0 stays 0)', async () => {
    const wb = await read(await registroComprasXlsx(COMPRAS, EMPRESA, LEIDO_AT))
    const ws = wb.getWorksheet('Registro')!
    const headers = COLUMNAS_COMPRAS.registro.map(([h]) => h)
    const row = ws.getRow(2)
    const cell = (h: string) => row.getCell(headers.indexOf(h) + 1)
    const expected: Record<string, string | number | Date | null> = {
      'Nro': 1, 'Tipo Doc': 33, 'Tipo Compra': 'Del Giro', 'RUT Proveedor': '12345678-5', 'Razon Social': 'Comercial "El Sol"; Ltda.',
      'Folio': 23084, 'Fecha Docto': utc('2026-04-03T00:00:00'), 'Fecha Recepcion': utc('2026-04-04T23:30:00'),
      'Fecha Acuse': utc('2026-04-05T00:10:05'), 'Monto Exento': 0, 'Monto Neto': 240169, 'Monto IVA Recuperable': 45632,
      'Monto Iva No Recuperable': null, 'Codigo IVA No Rec.': null, 'Monto Total': 289101, 'Monto Neto Activo Fijo': null,
      'IVA Activo Fijo': null, 'IVA uso Comun': null, 'Impto. Sin Derecho a Credito': null, 'IVA No Retenido': 0,
      'Tabacos Puros': null, 'Tabacos Cigarrillos': null, 'Tabacos Elaborados': null, 'NCE o NDE sobre Fact. de Compra': null,
      'Codigo Otro Impuesto': 24, 'Valor Otro Impuesto': 3300, 'Tasa Otro Impuesto': 31.5,
    }
    expect(Object.keys(expected)).toEqual(headers)
    for (const h of headers) {
      const value = expected[h]
      expect({ h, value: cell(h).value }).toEqual({ h, value })
      const type = value === null ? ValueType.Null : value instanceof Date ? ValueType.Date : typeof value === 'number' ? ValueType.Number : ValueType.String
      expect({ h, type: cell(h).type }).toEqual({ h, type })
    }
    expect(cell('Fecha Docto').numFmt).toBe('dd/mm/yyyy')
    expect(cell('Fecha Recepcion').numFmt).toBe('dd/mm/yyyy hh:mm:ss')
    expect(cell('Monto Neto').numFmt).toBe('#,##0')
    expect(cell('Folio').numFmt).not.toBe('#,##0')  // 23084 is a folio, not 23.084 pesos
    // The other purchase's null IVA and 0-free exento: the empty cells are where the SII left them.
    const otra = ws.getRow(3)
    expect([otra.getCell(headers.indexOf('Monto IVA Recuperable') + 1).value, otra.getCell(headers.indexOf('Monto Iva No Recuperable') + 1).value,
      otra.getCell(headers.indexOf('Codigo IVA No Rec.') + 1).value, otra.getCell(headers.indexOf('Monto Exento') + 1).value]).toEqual([null, 1900, 1, null])
  })

  test('every section\'s cells are the CSV writer\'s cells, typed', async () => {
    const wb = await read(await registroComprasXlsx(COMPRAS, EMPRESA, LEIDO_AT))
    const hojas = { registro: 'Registro', pendiente: 'Pendientes', no_incluir: 'No incluir', reclamado: 'Reclamados' } as const
    for (const seccion of SECCIONES_COMPRAS) {
      const csv = readCsv(writeRegistroComprasCsv(seccion, COMPRAS.secciones[seccion].detalle))
      expect(rowsOf(wb.getWorksheet(hojas[seccion])!)).toEqual(csv.map((fila, r) => fila.map((text, c) => expectedCell(csv[0]![c]!, text, r))))
    }
  })

  test('Resumen: title with the company and the month, then per section each tipo and a total, as sums of the details', async () => {
    const wb = await read(await registroComprasXlsx(COMPRAS, EMPRESA, LEIDO_AT))
    const ws = wb.getWorksheet('Resumen')!
    expect(ws.getCell('A1').value).toBe('Registro de Compras, abril 2026')
    expect(ws.getCell('A2').value).toBe('Ferretería "La Tuerca"; SpA, RUT 76354771-K')
    const rows = rowsOf(ws).map((r) => r.map((c) => c.value))
    const header = [
      'Tipo Doc', 'Documento', 'Cantidad', 'Monto Exento', 'Monto Neto', 'Monto IVA Recuperable', 'Monto Iva No Recuperable', 'Monto Total',
    ]
    const expected: unknown[][] = [['Registro de Compras, abril 2026'], ['Ferretería "La Tuerca"; SpA, RUT 76354771-K']]
    for (const [seccion, nombre] of [['registro', 'Registro'], ['pendiente', 'Pendientes'], ['no_incluir', 'No incluir'], ['reclamado', 'Reclamados']] as const) {
      const detalles = COMPRAS.secciones[seccion].detalle
      expected.push([], [nombre], header)
      const tipos = [...new Set(detalles.map((d) => d.tipoDoc))].sort((a, b) => a - b)
      for (const tipo of tipos) expected.push([tipo, NOMBRES[tipo], ...sums(detalles.filter((d) => d.tipoDoc === tipo), 'compras')])
      expected.push(['Total', '', ...sums(detalles, 'compras')])
    }
    expect(rows.map((r) => trimEnd(r))).toEqual(expected.map((r) => trimEnd(r)))
    // The registro's total, written out: four documents.
    expect(expected[8]).toEqual(['Total', '', 4, 20, 3250669, 615727, 1900, 3871596])
  })

  test('an empty register gives a valid workbook: every sheet, headers only, a Resumen of zeros', async () => {
    const vacio = { resumen: [], detalle: [] }
    const bytes = await registroComprasXlsx({ periodo: '202611', secciones: { registro: vacio, pendiente: vacio, no_incluir: vacio, reclamado: vacio } }, EMPRESA, LEIDO_AT)
    const wb = await read(bytes)
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Resumen', 'Registro', 'Pendientes', 'No incluir', 'Reclamados'])
    expect(wb.getWorksheet('No incluir')!.rowCount).toBe(1)
    expect(wb.getWorksheet('No incluir')!.getRow(1).values).toEqual([undefined, ...COLUMNAS_COMPRAS.no_incluir.map(([h]) => h)])
    const resumen = wb.getWorksheet('Resumen')!
    expect(resumen.getCell('A1').value).toBe('Registro de Compras, noviembre 2026')
    const totales = rowsOf(resumen).map((r) => trimEnd(r.map((c) => c.value))).filter((r) => r[0] === 'Total')
    expect(totales).toEqual(Array(4).fill(['Total', '', 0, 0, 0, 0, 0, 0]))
  })
})

describe('Registro de Ventas', () => {
  test('"Resumen" and "Ventas" with the 43 CSV columns; every cell the CSV writer\'s, typed; the DST gap kept as written', async () => {
    const wb = await read(await registroVentasXlsx(VENTAS, EMPRESA, LEIDO_AT))
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Resumen', 'Ventas'])
    const ws = wb.getWorksheet('Ventas')!
    expect(ws.getRow(1).values).toEqual([undefined, ...COLUMNAS_VENTAS.map(([h]) => h)])
    const csv = readCsv(writeRegistroVentasCsv(VENTAS.detalle))
    expect(rowsOf(ws)).toEqual(csv.map((fila, r) => fila.map((text, c) => expectedCell(csv[0]![c]!, text, r))))
    const headers = COLUMNAS_VENTAS.map(([h]) => h)
    const cell = (r: number, h: string) => ws.getRow(r).getCell(headers.indexOf(h) + 1).value
    // Written out, not through the CSV: the hour Santiago skips, the razón social with quotes and `;`, a reference.
    expect(cell(2, 'Fecha Recepcion')).toEqual(utc('2026-09-06T00:30:00'))
    expect(cell(2, 'Fecha Acuse Recibo')).toEqual(utc('2026-09-05T23:59:59'))
    expect(cell(2, 'Razon Social')).toBe('  "Cliente" ; con espacios')
    expect([cell(3, 'Fecha Recepcion'), cell(3, 'Tipo Docto. Referencia'), cell(3, 'Folio Docto. Referencia'), cell(3, 'IVA Retenido Total')]).toEqual([null, 33, 100, 0])
    expect([cell(4, 'Monto Exento'), cell(4, 'Monto Neto'), cell(4, 'Monto IVA'), cell(4, 'Monto total')]).toEqual([50000, null, null, 50000])
  })

  test('Resumen: per tipo and total, with the RV\'s one IVA', async () => {
    const wb = await read(await registroVentasXlsx(VENTAS, EMPRESA, LEIDO_AT))
    const ws = wb.getWorksheet('Resumen')!
    const rows = rowsOf(ws).map((r) => trimEnd(r.map((c) => c.value)))
    const expected: unknown[][] = [
      ['Registro de Ventas, septiembre 2026'], ['Ferretería "La Tuerca"; SpA, RUT 76354771-K'], [], ['Ventas'],
      ['Tipo Doc', 'Documento', 'Cantidad', 'Monto Exento', 'Monto Neto', 'Monto IVA', 'Monto total'],
      ...[33, 34, 61].map((tipo) => [tipo, NOMBRES[tipo], ...sums(VENTAS.detalle.filter((d) => d.tipoDoc === tipo), 'ventas')]),
      ['Total', '', ...sums(VENTAS.detalle, 'ventas')],
    ]
    expect(rows).toEqual(expected.map((r) => trimEnd(r)))
    expect(rows.at(-1)).toEqual(['Total', '', 3, 50000, 2000, 380, 52380])
    expect(ws.getRow(rows.length).getCell(4).numFmt).toBe('#,##0')
  })

  test('an empty register gives a valid workbook', async () => {
    const wb = await read(await registroVentasXlsx({ periodo: '202612', resumen: [], detalle: [] }, EMPRESA, LEIDO_AT))
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Resumen', 'Ventas'])
    expect(wb.getWorksheet('Ventas')!.rowCount).toBe(1)
    expect(wb.getWorksheet('Resumen')!.getCell('A1').value).toBe('Registro de Ventas, diciembre 2026')
    expect(trimEnd(wb.getWorksheet('Resumen')!.getRow(6).values as unknown[]).slice(1)).toEqual(['Total', '', 0, 0, 0, 0, 0])
  })
})

describe('the same copy gives the same bytes at any hour', () => {
  afterAll(() => { setSystemTime() })

  test('written an hour and a day apart: byte for byte; the workbook and every zip entry dated when the copy was read', async () => {
    const at = async (now: string, write: () => Promise<Uint8Array>) => {
      setSystemTime(new Date(now))
      try { return Buffer.from(await write()) } finally { setSystemTime() }
    }
    for (const write of [() => registroComprasXlsx(COMPRAS, EMPRESA, LEIDO_AT), () => registroVentasXlsx(VENTAS, EMPRESA, LEIDO_AT)]) {
      const first = await at('2026-11-28T15:00:01Z', write)
      expect(first.equals(await at('2026-11-28T16:00:00Z', write))).toBe(true)
      expect(first.equals(await at('2026-11-29T09:31:17Z', write))).toBe(true)
      const zip = await JSZip.loadAsync(first)
      const dates = Object.values(zip.files).map((entry) => entry.date.toISOString())
      expect(dates.length).toBeGreaterThan(5)
      expect(new Set(dates)).toEqual(new Set([LEIDO_AT.toISOString()]))
      const core = await zip.file('docProps/core.xml')!.async('string')
      expect(core).toContain('<dcterms:created xsi:type="dcterms:W3CDTF">2026-05-02T14:03:08Z</dcterms:created>')
      expect(core).toContain('<dcterms:modified xsi:type="dcterms:W3CDTF">2026-05-02T14:03:08Z</dcterms:modified>')
    }
  })

  test('another copy of the same period (read later) is another file', async () => {
    const other = await registroVentasXlsx(VENTAS, EMPRESA, new Date('2026-05-03T08:00:00Z'))
    expect(Buffer.from(other).equals(Buffer.from(await registroVentasXlsx(VENTAS, EMPRESA, LEIDO_AT)))).toBe(false)
  })
})

test('periods read as months in Spanish', () => {
  expect(['202611', '202601', '201708'].map(nombrePeriodo)).toEqual(['noviembre 2026', 'enero 2026', 'agosto 2017'])
})

// ------------------------------------------------------------------------------------------------ the test's own arithmetic

const NOMBRES: Record<number, string> = {
  33: 'FACTURA ELECTRÓNICA', 34: 'FACTURA NO AFECTA O EXENTA ELECTRÓNICA', 61: 'NOTA DE CRÉDITO ELECTRÓNICA', 914: '',
}

/** Cantidad and the amounts of the Resumen's columns, summed here from the details (an empty amount adds nothing). */
function sums(detalles: readonly DetalleRcv[], registro: 'compras' | 'ventas'): number[] {
  const sum = (f: (d: DetalleRcv) => number | null) => detalles.reduce((n, d) => n + (f(d) ?? 0), 0)
  const base = [detalles.length, sum((d) => d.montoExento), sum((d) => d.montoNeto), sum((d) => d.montoIva)]
  return registro === 'compras' ? [...base, sum((d) => d.montoIvaNoRecuperable), sum((d) => d.montoTotal)] : [...base, sum((d) => d.montoTotal)]
}

function trimEnd(row: readonly unknown[]): unknown[] {
  const out = [...row]
  while (out.length > 0 && (out.at(-1) === null || out.at(-1) === undefined)) out.pop()
  return out
}

const TEXT_COLUMNS = new Set(['Tipo Compra', 'Tipo Venta', 'RUT Proveedor', 'Rut cliente', 'Razon Social'])

/** What the sheet must hold where the CSV holds `text`: the header row as text, then typed cells. */
function expectedCell(header: string, text: string, row: number): { value: unknown; type: ValueType } {
  if (row === 0) return { value: text, type: ValueType.String }
  if (text === '') return { value: null, type: ValueType.Null }
  if (TEXT_COLUMNS.has(header)) return { value: text, type: ValueType.String }
  const date = /^(\d{2})\/(\d{2})\/(\d{4})(?: (\d{2}:\d{2}:\d{2}))?$/.exec(text)
  if (date) return { value: utc(`${date[3]}-${date[2]}-${date[1]}T${date[4] ?? '00:00:00'}`), type: ValueType.Date }
  expect(Number.isFinite(Number(text))).toBe(true)
  return { value: Number(text), type: ValueType.Number }
}

/** A plain `;` CSV reader with RFC 4180 quotes, as a spreadsheet would read the SII's layout. */
function readCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++ } else if (c === '"') quoted = false
      else cell += c
    } else if (c === '"') quoted = true
    else if (c === ';') { row.push(cell); cell = '' }
    else if (c === '\r' && text[i + 1] === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; i++ }
    else cell += c
  }
  return rows
}
