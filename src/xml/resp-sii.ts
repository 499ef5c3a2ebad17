// The SII's result mail (DESIGN §13 "Receiving"): after processing an uploaded envelope the SII mails the sender an
// XML attachment whose schema is RespSII_v10.xsd. Its root is RESULTADO_ENVIO, in no namespace and unsigned:
//   IDENTIFICACION {RUTEMISOR, RUTENVIA, TRACKID, TMSTRECEPCION, ESTADO}
//   ESTADISTICA?   {SUBTOTAL{TIPODOC, INFORMADO, RECHAZO?, REPARO?, ACEPTA?} 1..5}
//   ERRORENVIO?    {DETERRENVIO 1..n}                      why the envelope as a whole was rejected
//   REVISIONENVIO? {REVISIONDTE{FOLIO, TIPODTE, ESTADO, DETALLE 1..n} 1..n}   each rejected or repaired document
// (The RESP_HDR/RESP_BODY shape belongs to the getEstUp SOAP answer, docs/sii-protocol.md §6.5, not to this mail.)
// Odoo's l10n_cl_edi reads IDENTIFICACION/ESTADO and REVISIONENVIO/REVISIONDTE/{ESTADO, DETALLE}, and tells the file
// apart by its bare `<RESULTADO_ENVIO>`; LibreDTE reads the same elements. Documents accepted cleanly have no
// REVISIONDTE: the mail lists only those with something to say, ESTADISTICA counts the rest.
import { normalizeRut } from '../domain/rut'
import { detalleMotivos, type MotivoSii } from '../domain/sii-respuestas'
import { parseXmlFile } from './decode-xml'
import { readInteger } from './exchange-values'
import { childElements, textOf } from './latin1'
import { childNamed, leafText } from './read-envio'

export interface RespSiiRead {
  /** TRACKID as written (digits; the SII may pad it with zeros to 10). */
  readonly trackId: string
  /** IDENTIFICACION/ESTADO: EPR, RCT, RFR, RSC, … (docs/sii-protocol.md §6.5). */
  readonly estado: string
  /** ERRORENVIO's DETERRENVIO lines joined by `; `, null when there are none. */
  readonly glosa: string | null
  /** RUTEMISOR, canonical; null when it is not a valid RUT. */
  readonly rutEmisor: string | null
  /** One per REVISIONDTE; documents accepted without remarks are not listed by the SII. */
  readonly documentos: ReadonlyArray<{
    readonly tipoDte: number
    readonly folio: number
    /** RCH, RPR, … as the SII wrote it. */
    readonly estado: string
    readonly motivos: MotivoSii[]
  }>
}

/**
 * Reads the SII's RESULTADO_ENVIO. IDENTIFICACION's fields are taken from under IDENTIFICACION, or from the root
 * when a producer left that level out. Null when the file is not a RESULTADO_ENVIO with a TRACKID and an ESTADO.
 * A REVISIONDTE whose folio or type cannot be read is left out. Never throws.
 */
export function readRespSii(bytes: Uint8Array): RespSiiRead | null {
  try {
    const doc = parseXmlFile(bytes)?.doc
    if (doc === undefined || doc.documentElement.localName !== 'RESULTADO_ENVIO') return null
    const root = doc.documentElement
    const identificacion = childNamed(root, 'IDENTIFICACION') ?? root
    const trackId = leafText(identificacion, 'TRACKID')
    const estado = leafText(identificacion, 'ESTADO')
    if (!/^\d{1,20}$/.test(trackId) || estado === '') return null
    const errores = childElements(childNamed(root, 'ERRORENVIO') ?? root).filter((e) => e.localName === 'DETERRENVIO')
    const lines = errores.map((e) => textOf(e).trim()).filter((l) => l !== '')
    const revisiones = childElements(childNamed(root, 'REVISIONENVIO') ?? root).filter((e) => e.localName === 'REVISIONDTE')
    return {
      trackId,
      estado,
      glosa: lines.length === 0 ? null : lines.join('; '),
      rutEmisor: normalizeRut(leafText(identificacion, 'RUTEMISOR')),
      documentos: revisiones.flatMap(readRevision),
    }
  } catch {
    return null  // a stack overflow on absurd nesting, say: not a result Timbre can read
  }
}

function readRevision(el: Element): RespSiiRead['documentos'] {
  const tipoDte = readInteger(leafText(el, 'TIPODTE'))
  const folio = readInteger(leafText(el, 'FOLIO'))
  if (tipoDte === null || folio === null) return []
  const estado = leafText(el, 'ESTADO')
  const detalles = childElements(el).filter((e) => e.localName === 'DETALLE').map((e) => textOf(e).trim()).filter((l) => l !== '')
  return [{ tipoDte, folio, estado, motivos: detalles.map((line) => motivoOf(line, estado)) }]
}

/** One DETALLE line as a reason: `(DTE-3-101) …` read as the SII client reads it, else kept whole under the document's ESTADO. */
function motivoOf(line: string, estado: string): MotivoSii {
  return detalleMotivos(line, 'estado_envio')[0] ?? { codigo: estado, glosa: line, detalle: null, nivel: null, fuente: 'estado_envio' }
}
