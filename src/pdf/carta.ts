// The letter page (8.5 × 11 in, the Chilean "carta"): header with the issuer and the red folio box on every page,
// receptor and document data on the first, the lines flowing over as many pages as they need with their column titles
// repeated, and the totals with the timbre (and the receipt block of a cedible copy) at the foot of the last page.
import type { PDFDocument } from 'pdf-lib'
import { Canvas, GREY, type Fonts } from './canvas'
import {
  acuseRecibo,
  EMPTY,
  fieldList,
  folioBox,
  paragraph,
  rechazadoBanner,
  section,
  stack,
  tableHeader,
  tableRow,
  timbre,
  totals,
  type Block,
  type Column,
} from './blocks'
import type { DteView } from './dte-view'
import { formatRut } from './format'
import type { Pdf417Matrix } from './pdf417'
import {
  aduanaFields,
  cedibleLabel,
  comisionRows,
  descuentoGlobalRows,
  documentoFields,
  emisorLines,
  lineaCells,
  nombreDocumento,
  oficinaSii,
  RECHAZADO,
  receptorFields,
  referenciaCells,
  timbreLegends,
  totalRows,
  type PrintContext,
} from './sections'

export const CARTA = { width: 612, height: 792 } as const
const MARGIN = 36
const CONTENT = CARTA.width - 2 * MARGIN
const FOOTER = 14
const BOX_WIDTH = 196
/** PDF417 geometry of the letter page: 18 data columns at X = 0.6 pt (0.21 mm ≥ the SII's 0.17 mm): 225 pt wide, under 3 cm tall for a usual TED. */
export const CARTA_PDF417 = { columns: 18, module: 0.6 } as const

interface FlowItem {
  readonly block: Block
  /** A table row: its table's header goes first when it opens the table or a page. */
  readonly header?: Block
  readonly opensTable?: boolean
  readonly gapAfter: number
}

/** Adds the pages of one copy (the original, or the cedible copy) to `doc`. */
export function drawCarta(doc: PDFDocument, fonts: Fonts, view: DteView, ctx: PrintContext, matrix: Pdf417Matrix, cedible: boolean): void {
  const header = stack([headerBlock(fonts, view), ctx.isRechazado ? rechazadoBanner(fonts, RECHAZADO, CONTENT, 14) : EMPTY], 8)
  const items = flowItems(fonts, view)
  const foot = footBlock(fonts, view, ctx, matrix, cedible)
  const contentTop = MARGIN + header.height + 10
  const contentBottom = CARTA.height - MARGIN - FOOTER

  const pages: Array<Array<{ block: Block; top: number }>> = [[]]
  let y = contentTop
  for (const item of items) {
    const freshPage = y === contentTop
    const needed = item.block.height + (item.header && (item.opensTable || freshPage) ? item.header.height : 0)
    if (!freshPage && y + needed > contentBottom) {
      pages.push([])
      y = contentTop
    }
    const page = pages[pages.length - 1]!
    if (item.header && (item.opensTable || y === contentTop)) {
      page.push({ block: item.header, top: y })
      y += item.header.height
    }
    page.push({ block: item.block, top: y })
    y += item.block.height + item.gapAfter
  }
  // Totals and timbre sit at the foot of the last page; if the lines reached it, they get a page of their own.
  if (y + foot.height > contentBottom) pages.push([])
  pages[pages.length - 1]!.push({ block: foot, top: contentBottom - foot.height })

  pages.forEach((placed, i) => {
    const c = new Canvas(doc.addPage([CARTA.width, CARTA.height]), fonts)
    header.draw(c, MARGIN, MARGIN)
    for (const p of placed) p.block.draw(c, MARGIN, p.top)
    const copia = cedible ? `${cedibleLabel(view)} · ` : ''
    c.text(`${copia}Página ${i + 1} de ${pages.length}`, CARTA.width / 2, CARTA.height - MARGIN - 8, { size: 7, color: GREY, align: 'center' })
  })
}

function headerBlock(fonts: Fonts, view: DteView): Block {
  const leftWidth = CONTENT - BOX_WIDTH - 20
  const emisor = stack(
    [
      paragraph(fonts, view.emisor.razonSocial, leftWidth, { size: 13, bold: true }),
      stack(emisorLines(view).map((l) => paragraph(fonts, l, leftWidth, { size: 8.5 }))),
    ],
    3,
  )
  const box = folioBox(fonts, [`R.U.T.: ${formatRut(view.emisor.rut)}`, nombreDocumento(view), `Nº ${view.folio}`], oficinaSii(view), BOX_WIDTH, 12)
  return {
    height: Math.max(emisor.height, box.height),
    draw(c, x, top) {
      emisor.draw(c, x, top)
      box.draw(c, x + CONTENT - BOX_WIDTH, top)
    },
  }
}

/** Receptor and document data side by side, in a thin frame. */
function receptorBlock(fonts: Fonts, view: DteView): Block {
  const pad = 6
  const gap = 14
  const leftWidth = (CONTENT - 2 * pad - gap) * 0.58
  const rightWidth = CONTENT - 2 * pad - gap - leftWidth
  const left = fieldList(fonts, receptorFields(view), leftWidth, 8.5)
  const right = fieldList(fonts, documentoFields(view), rightWidth, 8.5)
  const height = Math.max(left.height, right.height) + 2 * pad
  return {
    height,
    draw(c, x, top) {
      c.box(x, top, CONTENT, height, { border: GREY, borderWidth: 0.6 })
      left.draw(c, x + pad, top + pad)
      right.draw(c, x + pad + leftWidth + gap, top + pad)
    },
  }
}

function lineColumns(view: DteView): Column[] {
  const cells = view.detalle.map((l) => lineaCells(view, l))
  const optional = (title: string, width: number, present: boolean, align?: 'right'): Column[] => (present ? [{ title, width, align }] : [])
  const columns: Column[] = [
    ...optional('Código', 58, cells.some((c) => c.codigo !== '')),
    { title: 'Descripción', width: 0 },
    ...optional('Cantidad', 52, cells.some((c) => c.cantidad !== ''), 'right'),
    ...optional('Unidad', 38, cells.some((c) => c.unidad !== '')),
    ...optional('Precio unitario', 66, cells.some((c) => c.precio !== ''), 'right'),
    ...optional('Dcto. / Recargo', 76, cells.some((c) => c.ajuste !== ''), 'right'),
    { title: 'Monto', width: 72, align: 'right' },
  ]
  // The description takes whatever width the other columns leave.
  const used = columns.reduce((w, c) => w + c.width, 0)
  return columns.map((c) => (c.title === 'Descripción' ? { ...c, width: CONTENT - used } : c))
}

function flowItems(fonts: Fonts, view: DteView): FlowItem[] {
  const columns = lineColumns(view)
  const header = tableHeader(fonts, columns, 7.5)
  const rows: FlowItem[] = view.detalle.map((l, i) => {
    const cells = lineaCells(view, l)
    const byTitle: Record<string, { text: string; notes?: readonly string[] }> = {
      Código: { text: cells.codigo },
      Descripción: { text: cells.nombre, notes: cells.notas },
      Cantidad: { text: cells.cantidad },
      Unidad: { text: cells.unidad },
      'Precio unitario': { text: cells.precio },
      'Dcto. / Recargo': { text: cells.ajuste },
      Monto: { text: cells.monto },
    }
    return {
      block: tableRow(fonts, columns, columns.map((c) => byTitle[c.title] ?? { text: '' }), 8),
      header,
      opensTable: i === 0,
      gapAfter: i === view.detalle.length - 1 ? 10 : 0,
    }
  })
  return [{ block: receptorBlock(fonts, view), gapAfter: 10 }, ...rows, ...sections(fonts, view).map((block) => ({ block, gapAfter: 8 }))]
}

function sections(fonts: Fonts, view: DteView): Block[] {
  const lines = (texts: readonly string[]) => stack(texts.map((t) => paragraph(fonts, t, CONTENT, { size: 8.5 })), 1)
  const out: Block[] = []
  const descuentos = descuentoGlobalRows(view)
  if (descuentos.length > 0) out.push(section(fonts, 'Descuentos y recargos globales', lines(descuentos), CONTENT, 8.5))
  const refs = referenciaCells(view)
  if (refs.length > 0) {
    const columns: Column[] = [
      { title: 'Tipo de documento', width: 190 },
      { title: 'Folio', width: 70 },
      { title: 'Fecha', width: 62 },
      { title: 'Razón de la referencia', width: CONTENT - 322 },
    ]
    const table = stack([tableHeader(fonts, columns, 7.5), ...refs.map((r) => tableRow(fonts, columns, [{ text: r.tipo }, { text: r.folio }, { text: r.fecha }, { text: r.razon }], 8))])
    out.push(section(fonts, 'Referencias', table, CONTENT, 8.5))
  }
  const comisiones = comisionRows(view)
  if (comisiones.length > 0) out.push(section(fonts, 'Comisiones y otros cargos', lines(comisiones), CONTENT, 8.5))
  const aduana = aduanaFields(view)
  if (aduana.length > 0) {
    const colWidth = (CONTENT - 24) / 3
    const perColumn = Math.ceil(aduana.length / 3)
    const cols = [0, 1, 2].map((k) => fieldList(fonts, aduana.slice(k * perColumn, (k + 1) * perColumn), colWidth, 8))
    const grid: Block = {
      height: Math.max(...cols.map((b) => b.height)),
      draw: (c, x, top) => cols.forEach((b, k) => b.draw(c, x + k * (colWidth + 12), top)),
    }
    out.push(section(fonts, 'Datos de exportación (Aduana)', grid, CONTENT, 8.5))
  }
  return out
}

/** The foot of the last page: [receipt block of the cedible copy], then timbre at the left and totals at the right. */
function footBlock(fonts: Fonts, view: DteView, ctx: PrintContext, matrix: Pdf417Matrix, cedible: boolean): Block {
  const timbreWidth = Math.max(250, matrix.width * CARTA_PDF417.module + 10)
  const totalsWidth = 230
  const ted = timbre(fonts, matrix, CARTA_PDF417.module, timbreLegends(ctx.resolucion), timbreWidth, 8)
  const sums = stack(
    [totals(fonts, totalRows(view), totalsWidth, 9), cedible ? paragraph(fonts, cedibleLabel(view), totalsWidth, { size: 16, bold: true, align: 'right' }) : EMPTY],
    12,
  )
  const bottom: Block = {
    height: Math.max(ted.height, sums.height),
    draw(c, x, top) {
      ted.draw(c, x, top)
      sums.draw(c, x + CONTENT - totalsWidth, top)
    },
  }
  return stack([cedible ? acuseRecibo(fonts, CONTENT, 8.5, 2) : EMPTY, bottom], 10)
}
