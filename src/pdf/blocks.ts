// Blocks: a measured height and a draw function, so a layout can decide where things go (and whether they fit on this
// page) before anything is drawn. Each block is laid out for a width fixed when it is built.
import { BLACK, Canvas, GREY, LEADING, LIGHT, RED, wrap, type Fonts, type TextStyle } from './canvas'
import type { Pdf417Matrix } from './pdf417'
import { ACUSE_CAMPOS, ACUSE_LEYENDA, type Field, type TotalRow } from './sections'

export interface Block {
  readonly height: number
  draw(c: Canvas, x: number, top: number): void
}

export const EMPTY: Block = { height: 0, draw: () => {} }

/** Blocks one under the other, `gap` points apart. */
export function stack(blocks: readonly Block[], gap = 0): Block {
  const shown = blocks.filter((b) => b.height > 0)
  return {
    height: shown.reduce((h, b) => h + b.height, 0) + gap * Math.max(0, shown.length - 1),
    draw(c, x, top) {
      let y = top
      for (const b of shown) {
        b.draw(c, x, y)
        y += b.height + gap
      }
    },
  }
}

/** Wrapped text. */
export function paragraph(fonts: Fonts, text: string, width: number, style: TextStyle): Block {
  const lines = wrap(text, style.bold ? fonts.bold : fonts.regular, style.size, width)
  const lineHeight = style.size * LEADING
  return {
    height: lines.length * lineHeight,
    draw(c, x, top) {
      const anchor = style.align === 'center' ? x + width / 2 : style.align === 'right' ? x + width : x
      lines.forEach((line, i) => c.text(line, anchor, top + i * lineHeight, style))
    },
  }
}

/** `Label: value` rows, labels in bold in a column of their own, values wrapped beside them. */
export function fieldList(fonts: Fonts, fields: readonly Field[], width: number, size: number): Block {
  const labelWidth = Math.max(0, ...fields.map(([l]) => fonts.bold.widthOfTextAtSize(`${l}:`, size))) + 4
  const rows = fields.map(([label, value]) => ({ label: `${label}:`, lines: wrap(value, fonts.regular, size, Math.max(20, width - labelWidth)) }))
  const lineHeight = size * LEADING
  return {
    height: rows.reduce((h, r) => h + r.lines.length * lineHeight, 0),
    draw(c, x, top) {
      let y = top
      for (const r of rows) {
        c.text(r.label, x, y, { size, bold: true })
        r.lines.forEach((line, i) => c.text(line, x + labelWidth, y + i * lineHeight, { size }))
        y += r.lines.length * lineHeight
      }
    },
  }
}

/** A titled section: bold title, a rule, the content. */
export function section(fonts: Fonts, title: string, content: Block, width: number, size: number): Block {
  const titleHeight = size * LEADING + 3
  return {
    height: titleHeight + content.height,
    draw(c, x, top) {
      c.text(title, x, top, { size, bold: true })
      c.hline(x, top + size * LEADING + 1, width, { thickness: 0.4 })
      content.draw(c, x, top + titleHeight)
    },
  }
}

/** Label left, amount right; the total in bold over a rule. */
export function totals(fonts: Fonts, rows: readonly TotalRow[], width: number, size: number): Block {
  const lineHeight = size * LEADING + 1.5
  const laid = rows.map((r) => {
    const style = { size: r.isTotal ? size + 1 : size, bold: r.isTotal === true }
    const valueWidth = (r.isTotal ? fonts.bold : fonts.regular).widthOfTextAtSize(r.value, style.size)
    return { ...r, style, labelLines: wrap(r.label, r.isTotal ? fonts.bold : fonts.regular, style.size, width - valueWidth - 8) }
  })
  const rowHeight = (r: (typeof laid)[number]) => r.labelLines.length * lineHeight + (r.isTotal ? 3 : 0)
  return {
    height: laid.reduce((h, r) => h + rowHeight(r), 0),
    draw(c, x, top) {
      let y = top
      for (const r of laid) {
        if (r.isTotal) {
          c.hline(x, y + 0.5, width, { thickness: 0.8, color: BLACK })
          y += 3
        }
        r.labelLines.forEach((line, i) => c.text(line, x, y + i * lineHeight, r.style))
        c.text(r.value, x + width, y, { ...r.style, align: 'right' })
        y += r.labelLines.length * lineHeight
      }
    },
  }
}

/** The folio box (docs/sii-protocol.md §9): RUT, document name and Nº folio inside a red border; the SII office under it. */
export function folioBox(fonts: Fonts, lines: readonly string[], oficina: string, width: number, size: number): Block {
  const pad = size * 0.7
  const inner = stack(lines.map((l) => paragraph(fonts, l, width - 2 * pad, { size, bold: true, color: RED, align: 'center' })), size * 0.35)
  const office = paragraph(fonts, oficina, width, { size: size * 0.75, bold: true, align: 'center' })
  const boxHeight = inner.height + 2 * pad
  return {
    height: boxHeight + 4 + office.height,
    draw(c, x, top) {
      c.box(x, top, width, boxHeight, { border: RED, borderWidth: 1.8 })
      inner.draw(c, x + pad, top + pad)
      office.draw(c, x, top + boxHeight + 4)
    },
  }
}

/** "RECHAZADO POR EL SII" (DESIGN §12): red, boxed, across the page. */
export function rechazadoBanner(fonts: Fonts, text: string, width: number, size: number): Block {
  const label = paragraph(fonts, text, width - 8, { size, bold: true, color: RED, align: 'center' })
  return {
    height: label.height + 8,
    draw(c, x, top) {
      c.box(x, top, width, label.height + 8, { border: RED, borderWidth: 1.5 })
      label.draw(c, x + 4, top + 4)
    },
  }
}

/** The PDF417 symbol with a quiet zone, its three legends centred under it (docs/sii-protocol.md §9). */
export function timbre(fonts: Fonts, matrix: Pdf417Matrix, module: number, legends: readonly string[], width: number, size: number): Block {
  const symbolWidth = matrix.width * module
  const symbolHeight = matrix.rows * matrix.rowHeight * module
  const quiet = 2 * module  // ISO/IEC 15438: 2X quiet zone on every side
  const text = stack(legends.map((l, i) => paragraph(fonts, l, width, { size, bold: i === 0, align: 'center' })))
  return {
    height: quiet + symbolHeight + quiet + 2 + text.height,
    draw(c, x, top) {
      c.pdf417(matrix, x + (width - symbolWidth) / 2, top + quiet, module)
      text.draw(c, x, top + quiet + symbolHeight + quiet + 2)
    },
  }
}

/** The receipt block of the cedible copy: lines to fill in and the Ley 19.983 legend (docs/sii-protocol.md §9). */
export function acuseRecibo(fonts: Fonts, width: number, size: number, columns: 1 | 2): Block {
  const pad = 5
  const title = paragraph(fonts, 'ACUSE DE RECIBO', width - 2 * pad, { size, bold: true })
  const legend = paragraph(fonts, ACUSE_LEYENDA, width - 2 * pad, { size: size * 0.85, color: GREY })
  const fieldHeight = size * 2.2
  const rows = Math.ceil(ACUSE_CAMPOS.length / columns)
  const colWidth = (width - 2 * pad - (columns - 1) * 12) / columns
  const height = pad + title.height + 2 + rows * fieldHeight + 4 + legend.height + pad
  return {
    height,
    draw(c, x, top) {
      c.box(x, top, width, height, { border: BLACK, borderWidth: 0.8 })
      title.draw(c, x + pad, top + pad)
      const fieldsTop = top + pad + title.height + 2
      ACUSE_CAMPOS.forEach((campo, i) => {
        // Firma gets a whole row of its own: it needs the room.
        const isFirma = campo === 'Firma'
        const col = isFirma ? 0 : i % columns
        const row = isFirma ? rows - 1 : Math.floor(i / columns)
        const left = x + pad + col * (colWidth + 12)
        const w = isFirma ? width - 2 * pad : colWidth
        const y = fieldsTop + row * fieldHeight
        const label = `${campo}:`
        c.text(label, left, y + fieldHeight - size * 1.5, { size, bold: true })
        const lw = fonts.bold.widthOfTextAtSize(label, size) + 3
        c.hline(left + lw, y + fieldHeight - size * 0.45, w - lw, { thickness: 0.5, color: BLACK })
      })
      legend.draw(c, x + pad, fieldsTop + rows * fieldHeight + 4)
    },
  }
}

export interface Column {
  readonly title: string
  readonly width: number
  readonly align?: 'left' | 'right'
}

/** A table's header row: titles in bold on a grey band. */
export function tableHeader(fonts: Fonts, columns: readonly Column[], size: number): Block {
  const pad = 3
  const titles = columns.map((col) => wrap(col.title, fonts.bold, size, col.width - 2 * pad))
  const lines = Math.max(...titles.map((t) => t.length))
  const height = lines * size * LEADING + 2 * pad
  const width = columns.reduce((w, col) => w + col.width, 0)
  return {
    height,
    draw(c, x, top) {
      c.box(x, top, width, height, { fill: LIGHT })
      let left = x
      columns.forEach((col, i) => {
        titles[i]!.forEach((line, k) =>
          c.text(line, col.align === 'right' ? left + col.width - pad : left + pad, top + pad + k * size * LEADING, { size, bold: true, align: col.align ?? 'left' }),
        )
        left += col.width
      })
    },
  }
}

export interface Cell {
  readonly text: string
  /** Smaller grey lines under the text (descriptions, notes). */
  readonly notes?: readonly string[]
  readonly bold?: boolean
}

/** One table row: every cell wrapped in its column; the row is as tall as its tallest cell, with a hairline under it. */
export function tableRow(fonts: Fonts, columns: readonly Column[], cells: readonly Cell[], size: number): Block {
  const pad = 2.5
  const noteSize = size * 0.88
  const laid = columns.map((col, i) => {
    const cell = cells[i] ?? { text: '' }
    const w = col.width - 2 * pad
    return {
      main: cell.text === '' ? [] : wrap(cell.text, cell.bold ? fonts.bold : fonts.regular, size, w),
      notes: (cell.notes ?? []).flatMap((n) => wrap(n, fonts.regular, noteSize, w)),
      bold: cell.bold,
    }
  })
  const cellHeight = (l: (typeof laid)[number]) => l.main.length * size * LEADING + l.notes.length * noteSize * LEADING
  const height = Math.max(size * LEADING, ...laid.map(cellHeight)) + 2 * pad
  const width = columns.reduce((w, col) => w + col.width, 0)
  return {
    height,
    draw(c, x, top) {
      let left = x
      columns.forEach((col, i) => {
        const l = laid[i]!
        const anchor = col.align === 'right' ? left + col.width - pad : left + pad
        let y = top + pad
        for (const line of l.main) y += c.text(line, anchor, y, { size, bold: l.bold, align: col.align ?? 'left' })
        for (const line of l.notes) y += c.text(line, anchor, y, { size: noteSize, color: GREY, align: col.align ?? 'left' })
        left += col.width
      })
      c.hline(x, top + height, width, { thickness: 0.3, color: LIGHT })
    },
  }
}
