// The 80 mm roll: one column, one page per copy, its height fitted to the content (a roll has no page length).
import type { PDFDocument } from 'pdf-lib'
import { Canvas, GREY, LEADING, wrap, type Fonts } from './canvas'
import { acuseRecibo, EMPTY, fieldList, folioBox, paragraph, rechazadoBanner, section, stack, timbre, totals, type Block } from './blocks'
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
  type LineaCells,
  type PrintContext,
} from './sections'

/** 80 mm in points. */
export const TERMICO_WIDTH = (80 / 25.4) * 72
const MARGIN = 9
const CONTENT = TERMICO_WIDTH - 2 * MARGIN
/** 15 data columns at X = 0.6 pt: 194 pt wide, inside the 72 mm printable width of an 80 mm printer. */
export const TERMICO_PDF417 = { columns: 15, module: 0.6 } as const

/** Adds the page of one copy (the original, or the cedible copy) to `doc`. */
export function drawTermico(doc: PDFDocument, fonts: Fonts, view: DteView, ctx: PrintContext, matrix: Pdf417Matrix, cedible: boolean): void {
  const body = stack(
    [
      paragraph(fonts, view.emisor.razonSocial, CONTENT, { size: 9, bold: true, align: 'center' }),
      stack(emisorLines(view).map((l) => paragraph(fonts, l, CONTENT, { size: 7, align: 'center' }))),
      folioBox(fonts, [`R.U.T.: ${formatRut(view.emisor.rut)}`, nombreDocumento(view), `Nº ${view.folio}`], oficinaSii(view), CONTENT, 9),
      ctx.isRechazado ? rechazadoBanner(fonts, RECHAZADO, CONTENT, 10) : EMPTY,
      fieldList(fonts, [...documentoFields(view), ...receptorFields(view)], CONTENT, 7),
      rule(),
      stack(view.detalle.map((l) => lineaBlock(fonts, lineaCells(view, l))), 4),
      rule(),
      sectionOf(fonts, 'Descuentos y recargos globales', descuentoGlobalRows(view)),
      totals(fonts, totalRows(view), CONTENT, 8),
      sectionOf(
        fonts,
        'Referencias',
        referenciaCells(view).map((r) => `${r.tipo} Nº ${r.folio} del ${r.fecha}${r.razon ? `. ${r.razon}` : ''}`),
      ),
      sectionOf(fonts, 'Comisiones y otros cargos', comisionRows(view)),
      aduanaFields(view).length > 0 ? section(fonts, 'Datos de exportación (Aduana)', fieldList(fonts, aduanaFields(view), CONTENT, 7), CONTENT, 7.5) : EMPTY,
      timbre(fonts, matrix, TERMICO_PDF417.module, timbreLegends(ctx.resolucion), CONTENT, 7),
      cedible ? acuseRecibo(fonts, CONTENT, 7, 1) : EMPTY,
      cedible ? paragraph(fonts, cedibleLabel(view), CONTENT, { size: 12, bold: true, align: 'center' }) : EMPTY,
    ],
    7,
  )
  const c = new Canvas(doc.addPage([TERMICO_WIDTH, body.height + 2 * MARGIN]), fonts)
  body.draw(c, MARGIN, MARGIN)
}

function rule(): Block {
  return { height: 1, draw: (c, x, top) => c.hline(x, top + 0.5, CONTENT, { thickness: 0.5, color: GREY }) }
}

function sectionOf(fonts: Fonts, title: string, texts: readonly string[]): Block {
  if (texts.length === 0) return EMPTY
  return section(fonts, title, stack(texts.map((t) => paragraph(fonts, t, CONTENT, { size: 7 })), 1), CONTENT, 7.5)
}

/** An item: its name and notes, then "quantity unit × price" at the left and the amount at the right. */
function lineaBlock(fonts: Fonts, l: LineaCells): Block {
  const size = 7.5
  const noteSize = 6.5
  const nombre = wrap(l.codigo ? `${l.codigo} ${l.nombre}` : l.nombre, fonts.regular, size, CONTENT)
  const notas = l.notas.flatMap((n) => wrap(n, fonts.regular, noteSize, CONTENT))
  const cantidad = [l.cantidad, l.unidad].filter((s) => s !== '').join(' ')
  const detalle = [cantidad, l.precio ? `x ${l.precio}` : ''].filter((s) => s !== '').join(' ')
  const ajuste = l.ajuste ? `Dcto./Rec. ${l.ajuste}` : ''
  const lh = size * LEADING
  const height = nombre.length * lh + notas.length * noteSize * LEADING + lh + (ajuste ? lh : 0)
  return {
    height,
    draw(c, x, top) {
      let y = top
      for (const line of nombre) y += c.text(line, x, y, { size })
      for (const line of notas) y += c.text(line, x, y, { size: noteSize, color: GREY })
      if (ajuste) y += c.text(ajuste, x + 8, y, { size: noteSize + 0.5, color: GREY })
      c.text(detalle, x + 8, y, { size })
      c.text(l.monto, x + CONTENT, y, { size, bold: true, align: 'right' })
    },
  }
}
