// Real readers for the PDFs under test: poppler-utils (pdftotext, pdftoppm, pdfinfo) and @zxing/library + pngjs for
// the PDF417 (zbarimg cannot read PDF417: docs/stack-notes.md). Shared by test/unit/pdf and test/http/dte-pdf.test.ts.
import { BarcodeFormat, BinaryBitmap, DecodeHintType, HybridBinarizer, PDF417Reader, RGBLuminanceSource } from '@zxing/library'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PNG } from 'pngjs'

function withPdfFile<T>(pdf: Uint8Array, fn: (path: string, dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'timbre-pdf-'))
  try {
    const path = join(dir, 'doc.pdf')
    writeFileSync(path, pdf)
    return fn(path, dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function run(cmd: string[]): string {
  const p = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' })
  if (p.exitCode !== 0) throw new Error(`${cmd[0]} failed (${p.exitCode}): ${p.stderr.toString()}`)
  return p.stdout.toString()
}

/**
 * pdftotext's reading of the document (or of one page): in physical layout by default (rows stay rows), or in reading
 * order (`layout: false`), where a wrapped value keeps its words together instead of sharing lines with its neighbours.
 */
export function pdfText(pdf: Uint8Array, page?: number, opts: { layout?: boolean } = {}): string {
  const range = page === undefined ? [] : ['-f', String(page), '-l', String(page)]
  const layout = opts.layout === false ? [] : ['-layout']
  return withPdfFile(pdf, (path) => run(['pdftotext', ...layout, '-enc', 'UTF-8', ...range, path, '-']))
}

/** Page sizes in points, as poppler reads them. */
export function pdfPageSizes(pdf: Uint8Array): Array<{ width: number; height: number }> {
  return withPdfFile(pdf, (path) => {
    const out = run(['pdfinfo', '-f', '1', '-l', '999', path])
    return [...out.matchAll(/Page\s+\d+ size:\s+([\d.]+) x ([\d.]+) pts/g)].map((m) => ({ width: Number(m[1]), height: Number(m[2]) }))
  })
}

export interface Word {
  readonly text: string
  readonly xMin: number
  readonly yMin: number
  readonly xMax: number
  readonly yMax: number
}

/** Every word poppler finds on `page`, with its box in points from the top-left corner (pdftotext -bbox). */
export function pdfWords(pdf: Uint8Array, page = 1): Word[] {
  const html = withPdfFile(pdf, (path) => run(['pdftotext', '-bbox', '-enc', 'UTF-8', '-f', String(page), '-l', String(page), path, '-']))
  return [...html.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((m) => ({
    xMin: Number(m[1]),
    yMin: Number(m[2]),
    xMax: Number(m[3]),
    yMax: Number(m[4]),
    text: m[5]!.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'"),
  }))
}

/** `page` rasterized by pdftoppm at `dpi`, as a PNG file's bytes. */
export function rasterize(pdf: Uint8Array, page: number, dpi = 300): Uint8Array {
  return withPdfFile(pdf, (path, dir) => {
    run(['pdftoppm', '-r', String(dpi), '-f', String(page), '-l', String(page), '-png', '-gray', path, join(dir, 'page')])
    const file = readdirSync(dir).find((f) => f.startsWith('page') && f.endsWith('.png'))
    if (file === undefined) throw new Error('pdftoppm wrote no image')
    return readFileSync(join(dir, file))
  })
}

/**
 * zxing turns the symbol's bytes into text with TextDecoder('iso-8859-1'), which WHATWG defines as windows-1252:
 * bytes 0x80–0x9F come back as €, ", … (docs/stack-notes.md). This table undoes that, so each character is one byte again.
 */
const WINDOWS_1252_BYTE = new Map<number, number>(
  Array.from({ length: 32 }, (_, i) => [new TextDecoder('windows-1252').decode(Uint8Array.of(0x80 + i)).charCodeAt(0), 0x80 + i] as [number, number]),
)

/** The bytes of the PDF417 symbol in a PNG, decoded by zxing. */
export function decodePdf417(png: Uint8Array): Uint8Array {
  const image = PNG.sync.read(Buffer.from(png))
  const luminance = new Uint8ClampedArray(image.width * image.height)
  for (let i = 0; i < luminance.length; i++) luminance[i] = image.data[i * 4]!  // grey: R = G = B
  const hints = new Map<DecodeHintType, unknown>([
    [DecodeHintType.POSSIBLE_FORMATS, [BarcodeFormat.PDF_417]],
    [DecodeHintType.TRY_HARDER, true],
  ])
  const result = new PDF417Reader().decode(new BinaryBitmap(new HybridBinarizer(new RGBLuminanceSource(luminance, image.width, image.height))), hints)
  const text = result.getText()
  const bytes = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) {
    const code = WINDOWS_1252_BYTE.get(text.charCodeAt(i)) ?? text.charCodeAt(i)
    if (code > 0xff) throw new Error(`decoded character U+${code.toString(16)} is not one byte`)
    bytes[i] = code
  }
  return bytes
}

/** The TED element exactly as the stored XML carries it (the signed bytes between `<TED` and `</TED>`). */
export function tedBytesOf(xml: Uint8Array): Uint8Array {
  const text = Buffer.from(xml).toString('latin1')
  const start = text.indexOf('<TED ')
  const end = text.indexOf('</TED>')
  if (start < 0 || end < 0) throw new Error('no TED in the XML')
  return Uint8Array.from(Buffer.from(text.slice(start, end + '</TED>'.length), 'latin1'))
}
