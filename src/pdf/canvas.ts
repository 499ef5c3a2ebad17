// A thin layer over pdf-lib: coordinates from the top of the page (layouts flow downwards), text that always encodes,
// wrapping by measured width, and the PDF417 matrix drawn as vector rectangles.
import { fill, popGraphicsState, pushGraphicsState, rectangle, rgb, setFillingGrayscaleColor, type PDFFont, type PDFPage, type RGB } from 'pdf-lib'
import type { Pdf417Matrix } from './pdf417'

export interface Fonts {
  readonly regular: PDFFont
  readonly bold: PDFFont
}

export interface TextStyle {
  readonly size: number
  readonly bold?: boolean
  readonly color?: RGB
  /** Where `x` is: the left edge (default), the centre, or the right edge of the text. */
  readonly align?: 'left' | 'center' | 'right'
}

export const BLACK = rgb(0, 0, 0)
export const GREY = rgb(0.35, 0.35, 0.35)
export const LIGHT = rgb(0.9, 0.9, 0.9)
/** The folio box and the RECHAZADO mark (docs/sii-protocol.md §9: LibreDTE draws the box red). */
export const RED = rgb(0.8, 0.05, 0.05)

/** Line height as a multiple of the font size. */
export const LEADING = 1.22

const charsets = new WeakMap<PDFFont, Set<number>>()

/**
 * Text the font can encode. The XML is ISO-8859-1 (DESIGN §12) and the standard fonts' WinAnsi covers all of its
 * printable range (ñ, á, º, ½); tabs print as spaces and anything else unencodable as '?', instead of pdf-lib throwing.
 */
export function printable(text: string, font: PDFFont): string {
  let set = charsets.get(font)
  if (set === undefined) {
    set = new Set(font.getCharacterSet())
    charsets.set(font, set)
  }
  const known = set
  return text.replace(/\t/g, ' ').replace(/[^]/g, (c) => (known.has(c.charCodeAt(0)) ? c : '?'))
}

/** Lines of `text` no wider than `width`: breaks at spaces, cuts words longer than a line, keeps explicit line breaks. */
export function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = []
  for (const paragraph of printable(text.replace(/\r\n?/g, '\n'), font).split('\n')) {
    let line = ''
    for (const word of paragraph.split(' ')) {
      const candidate = line === '' ? word : `${line} ${word}`
      if (font.widthOfTextAtSize(candidate, size) <= width) {
        line = candidate
        continue
      }
      if (line !== '') lines.push(line)
      line = word
      while (font.widthOfTextAtSize(line, size) > width && line.length > 1) {
        let cut = line.length - 1
        while (cut > 1 && font.widthOfTextAtSize(line.slice(0, cut), size) > width) cut--
        lines.push(line.slice(0, cut))
        line = line.slice(cut)
      }
    }
    lines.push(line)
  }
  return lines
}

export class Canvas {
  constructor(
    readonly page: PDFPage,
    readonly fonts: Fonts,
  ) {}

  get width(): number {
    return this.page.getWidth()
  }

  get height(): number {
    return this.page.getHeight()
  }

  font(style: TextStyle): PDFFont {
    return style.bold ? this.fonts.bold : this.fonts.regular
  }

  /** One line of text whose top is `top`; returns the line height used. */
  text(text: string, x: number, top: number, style: TextStyle): number {
    const font = this.font(style)
    const line = printable(text, font)
    const w = font.widthOfTextAtSize(line, style.size)
    const left = style.align === 'center' ? x - w / 2 : style.align === 'right' ? x - w : x
    // Baseline a cap height below the top: Helvetica's ascender is 0.718 em; leave the rest of the leading below.
    this.page.drawText(line, { x: left, y: this.height - top - style.size * 0.8, size: style.size, font, color: style.color ?? BLACK })
    return style.size * LEADING
  }

  /** Wrapped text in `width`; returns the height used. */
  paragraph(text: string, x: number, top: number, width: number, style: TextStyle): number {
    const lines = wrap(text, this.font(style), style.size, width)
    const anchor = style.align === 'center' ? x + width / 2 : style.align === 'right' ? x + width : x
    lines.forEach((line, i) => this.text(line, anchor, top + i * style.size * LEADING, style))
    return lines.length * style.size * LEADING
  }

  box(x: number, top: number, width: number, height: number, opts: { border?: RGB; borderWidth?: number; fill?: RGB } = {}): void {
    this.page.drawRectangle({
      x,
      y: this.height - top - height,
      width,
      height,
      borderColor: opts.border,
      borderWidth: opts.border === undefined ? 0 : (opts.borderWidth ?? 0.6),
      color: opts.fill,
    })
  }

  hline(x: number, top: number, width: number, opts: { thickness?: number; color?: RGB } = {}): void {
    const y = this.height - top
    this.page.drawLine({ start: { x, y }, end: { x: x + width, y }, thickness: opts.thickness ?? 0.5, color: opts.color ?? GREY })
  }

  /**
   * The symbol at (x, top), `module` points per module. One `re` per run of dark modules and a single fill: thousands
   * of drawRectangle calls would each push a graphics state and cost several milliseconds.
   */
  pdf417(matrix: Pdf417Matrix, x: number, top: number, module: number): void {
    const ops = [pushGraphicsState(), setFillingGrayscaleColor(0)]
    const rowHeight = matrix.rowHeight * module
    const baseY = this.height - top
    for (let row = 0; row < matrix.rows; row++) {
      const offset = row * matrix.width
      const y = baseY - (row + 1) * rowHeight
      for (let col = 0; col < matrix.width; col++) {
        if (matrix.modules[offset + col] !== 1) continue
        const start = col
        while (col + 1 < matrix.width && matrix.modules[offset + col + 1] === 1) col++
        ops.push(rectangle(x + start * module, y, (col + 1 - start) * module, rowHeight))
      }
    }
    ops.push(fill(), popGraphicsState())
    this.page.pushOperators(...ops)
  }
}
