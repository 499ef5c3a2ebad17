// The printed representation of a DTE (docs/sii-protocol.md §9, DESIGN §8/§12): pure, from the signed XML bytes to PDF bytes.
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { fromLatin1Bytes, toLatin1Bytes } from '../xml/latin1'
import type { Fonts } from './canvas'
import { CARTA_PDF417, drawCarta } from './carta'
import { readDteView } from './dte-view'
import { pdf417Matrix } from './pdf417'
import { nombreDocumento, type PrintContext } from './sections'
import { drawTermico, TERMICO_PDF417 } from './termico'
import type { Formato } from './formatos'

export type { Formato } from './formatos'

export interface RenderInput extends PrintContext {
  /** The stored signed DTE, ISO-8859-1 bytes. */
  readonly xml: Uint8Array
  readonly formato: Formato
  /** Adds the cedible copy after the original; the caller checks the type carries one (DESIGN §12). */
  readonly cedible: boolean
}

export async function renderDtePdf(input: RenderInput): Promise<Uint8Array> {
  const view = readDteView(fromLatin1Bytes(input.xml))
  const geometry = input.formato === 'carta' ? CARTA_PDF417 : TERMICO_PDF417
  // docs/sii-protocol.md §9: the TED element only, flat, without namespace declarations, as ISO-8859-1 bytes.
  const matrix = pdf417Matrix(toLatin1Bytes(view.ted), geometry.columns)
  const doc = await PDFDocument.create()
  // Standard fonts: nothing to embed, and their WinAnsi encoding covers the ISO-8859-1 text of a DTE (docs/stack-notes.md).
  const fonts: Fonts = { regular: await doc.embedFont(StandardFonts.Helvetica), bold: await doc.embedFont(StandardFonts.HelveticaBold) }
  const draw = input.formato === 'carta' ? drawCarta : drawTermico
  for (const cedible of input.cedible ? [false, true] : [false]) draw(doc, fonts, view, input, matrix, cedible)
  doc.setTitle(`${nombreDocumento(view)} Nº ${view.folio}`)
  doc.setAuthor(view.emisor.razonSocial)
  doc.setProducer('Timbre')
  doc.setCreator('Timbre')
  // Fixed dates: the same DTE prints to the same bytes (pdf-lib stamps "now" otherwise).
  const fecha = new Date(`${view.fechaEmision}T12:00:00Z`)
  if (!Number.isNaN(fecha.getTime())) {
    doc.setCreationDate(fecha)
    doc.setModificationDate(fecha)
  }
  return doc.save({ useObjectStreams: false })
}
