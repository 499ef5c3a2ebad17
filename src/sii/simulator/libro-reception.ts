// The certification libros on DTEUpload (docs/sii-protocol.md §6.9, docs/decisions/simulator.md "Libros"): a
// LibroCompraVenta or LibroGuia uploaded like an envelope gets a track id, then getEstUp reports it through the
// upload pipeline's states (REC, SOK, CRT, FOK, PRD) to LOK (accepted) or a rejection: RSC for the schema, RFR for the
// signature, LRH for its content, here its ResumenPeriodo against its own Detalle (the SII's check of a TOTAL envío,
// formato IECV §1.5). What it refuses at once, by STATUS, is what the envelopes' DTEUpload refuses for the same
// reasons: the sender (1) and the company (6). Reuses the envelopes' states and error shapes; its rows live in the
// store's `libro` table.
import { resumenCompraVentaMismatches, resumenGuiasMismatches } from '../../domain/libros'
import { normalizeRut } from '../../domain/rut'
import { verifyBlockSignature } from '../../xml/block-signature'
import { parseXmlFile } from '../../xml/decode-xml'
import { SII_NS } from '../../xml/dsig-profile'
import { fromLatin1Bytes } from '../../xml/latin1'
import { envioLibroOf, readCaratulaLibro, readLibroCompraVenta, type CaratulaLibroRead } from '../../xml/libro-cv'
import { readLibroGuia } from '../../xml/libro-guia'
import { childNamed, leafText } from '../../xml/read-envio'
import { validateSchema, type LibroRoot } from '../../xml/xsd'
import type { SimulatorContext } from './channel'
import { detalleLine, siiError } from './checks'
import { envioState, type EnvioState } from './states'
import type { SiiError, StoredLibroRejection } from './store'
import { certificateOf } from './xmldsig'

/** The simulator's glosas of a libro's final states; the SII's own wording for LOK and LRH was not found (docs/sii-protocol.md §6.9). */
export const LIBRO_GLOSA = {
  LOK: 'Libro Aceptado',
  LRH: 'Libro Rechazado',
} as const

const STAGE_GLOSA: Readonly<Record<StoredLibroRejection['estado'], string>> = {
  RSC: 'Rechazado por Error en Schema',
  RFR: 'Rechazado por Error en Firma',
  LRH: LIBRO_GLOSA.LRH,
}

/** At most this many reasons go into an LRH GLOSA (each is also one motive for the client, sii/client/queries.ts). */
const MAX_LRH_REASONS = 10

export interface LibroUpload {
  readonly bytes: Uint8Array
  readonly sha256: string
  readonly fileName: string
  /** rutSender-dvSender and rutCompany-dvCompany, canonical; null when not a RUT. */
  readonly rutSender: string | null
  readonly rutCompany: string | null
  /** The holder of the token the upload came with. */
  readonly tokenRut: string
  readonly now: Date
}

/** What DTEUpload answers: RECEPCIONDTE's STATUS, TRACKID when 0 or 99, DETAIL errors. */
export interface LibroReceipt {
  readonly status: number
  readonly trackId: string | null
  readonly errors: readonly string[]
}

/**
 * Receives `upload` when it is a libro (root LibroCompraVenta or LibroGuia); null otherwise, for the envelope path to
 * answer. Its checks run before the answer, as the envelopes' do; only the sender and the company refuse at once.
 */
export async function receiveLibro(ctx: SimulatorContext, upload: LibroUpload): Promise<LibroReceipt | null> {
  const root = sniffLibroRoot(upload.bytes)
  if (root === null) return null
  const earlier = ctx.store.findLibroByBytes(upload.sha256)
  if (earlier !== null) return { status: 99, trackId: earlier.track_id, errors: [] }
  const file = parseXmlFile(upload.bytes)
  const caratula = file === null || file.doc.documentElement.localName !== root ? null : readCaratulaLibro(file.doc)
  if (file === null || caratula === null) return refused(7, `el archivo no es un ${root} legible con EnvioLibro y Caratula`)
  const refusal = partiesRefusal(caratula, upload)
  if (refusal !== null) return refusal
  const rejection = await libroRejection(root, file.doc, upload.bytes, caratula)
  return recordLibro(ctx, upload, root, caratula, rejection)
}

/**
 * The libro roots in the SII namespace, read from the file's first bytes: an envelope upload (up to ~10 MB) is not
 * parsed an extra time just to learn it is not a libro. A root this misses (a prefix on it, a long comment first)
 * goes the envelope way and is refused as "not an EnvioDTE" (STATUS 7), as before libros were received.
 */
function sniffLibroRoot(bytes: Uint8Array): LibroRoot | null {
  const head = fromLatin1Bytes(bytes.subarray(0, 4096)).replace(/^\uFEFF|^\u00EF\u00BB\u00BF/, '')
  const m = /^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*<(LibroCompraVenta|LibroGuia)\s[^>]*\bxmlns\s*=\s*["']([^"']*)["']/.exec(head)
  return m !== null && m[2] === SII_NS ? (m[1] as LibroRoot) : null
}

/** STATUS 1 and 6 of docs/sii-protocol.md §6.4, by the envelopes' rules (checks.ts checkSender) on the libro's carátula. */
function partiesRefusal(caratula: CaratulaLibroRead, upload: LibroUpload): LibroReceipt | null {
  const sender = upload.rutSender
  if (sender === null) return refused(1, 'rutSender/dvSender no es un RUT válido')
  if (sender !== upload.tokenRut) return refused(1, `el usuario autenticado (${upload.tokenRut}) no es rutSender ${sender}`)
  if (normalizeRut(caratula.rutEnvia) !== sender) return refused(1, `RUT envia diferente al Upload: RutEnvia ${caratula.rutEnvia}, rutSender ${sender}`)
  if (upload.rutCompany === null) return refused(6, 'rutCompany/dvCompany no es un RUT válido')
  if (normalizeRut(caratula.rutEmisorLibro) !== upload.rutCompany) {
    return refused(6, `la empresa ${upload.rutCompany} no es el RutEmisorLibro ${caratula.rutEmisorLibro} del libro`)
  }
  return null
}

/** Schema (RSC), then the signature over EnvioLibro by RutEnvia's certificate (RFR), then the totals (LRH); null when all pass. */
async function libroRejection(root: LibroRoot, doc: Document, bytes: Uint8Array, caratula: CaratulaLibroRead): Promise<StoredLibroRejection | null> {
  const schema = await validateSchema(bytes, root)
  if (!schema.isValid) return rejection('RSC', schema.errors.slice(0, 20).map((e) => siiError('SCH', 1, 'Error de schema', e, lineOf(e))))
  const signature = verifyBlockSignature(doc, doc.documentElement, 'EnvioLibro', 'el libro')
  if (!signature.isValid) return rejection('RFR', [siiError('FRM', 1, 'Firma del libro inválida', signature.reason)])
  const signerRut = signature.signature === null ? null : certificateOf(signature.signature)?.rut ?? null
  if (signerRut !== normalizeRut(caratula.rutEnvia)) {
    return rejection('RFR', [siiError('FRM', 2, 'El firmante del libro no es RutEnvia', `certificado de ${signerRut ?? 'sin RUT'}, RutEnvia ${caratula.rutEnvia}`)])
  }
  const content = contentErrors(root, doc)
  return content.length === 0 ? null : rejection('LRH', content)
}

/** formato IECV §1.5 b) and formato LGD §1 e): a TOTAL envío carries ResumenPeriodo, and it must sum its Detalle. */
function contentErrors(root: LibroRoot, doc: Document): SiiError[] {
  const envio = envioLibroOf(doc)
  const tipoEnvio = leafText(childNamed(envio, 'Caratula'), 'TipoEnvio') || 'TOTAL'
  if (tipoEnvio !== 'TOTAL') return []  // segmented libros (PARCIAL, FINAL, AJUSTE) are not simulated
  if (childNamed(envio, 'ResumenPeriodo') === undefined) return [siiError('LBR', 2, 'Envío TOTAL sin ResumenPeriodo', 'el libro no trae ResumenPeriodo')]
  return totalsMismatches(root, doc).map((m) => siiError('LBR', 1, 'Resumen del período no cuadra con el detalle', m))
}

function totalsMismatches(root: LibroRoot, doc: Document): string[] {
  if (root === 'LibroGuia') {
    const guias = readLibroGuia(doc)
    return resumenGuiasMismatches(guias.detalle, guias.resumen)
  }
  const libro = readLibroCompraVenta(doc)
  return resumenCompraVentaMismatches(libro.detalle, libro.resumen)
}

function rejection(estado: StoredLibroRejection['estado'], errors: readonly SiiError[]): StoredLibroRejection {
  const shown = estado === 'LRH' ? errors.slice(0, MAX_LRH_REASONS) : errors.slice(0, 1)
  return { estado, glosa: `${STAGE_GLOSA[estado]}: ${shown.map(detalleLine).join('; ')}`, errors }
}

/** Stores the libro under a new SOAP track id; a twin with the same bytes that landed during the XSD wins (STATUS 99). */
function recordLibro(
  ctx: SimulatorContext, upload: LibroUpload, root: LibroRoot, caratula: CaratulaLibroRead, rejectionFound: StoredLibroRejection | null,
): LibroReceipt {
  const twin = ctx.store.findLibroByBytes(upload.sha256)
  if (twin !== null) return { status: 99, trackId: twin.track_id, errors: [] }
  // The envelopes' counter: a libro's track id is 10 digits like theirs and never names an envelope (docs/sii-protocol.md §6.4).
  const trackId = String(ctx.store.next('soap_track_id')).padStart(10, '0')
  const tipo = root === 'LibroGuia' ? 'GUIA' : caratula.tipoOperacion
  ctx.store.insertLibro({
    track_id: trackId, sha256: upload.sha256, rut_emisor: upload.rutCompany ?? '', rut_envia: upload.rutSender ?? '', file_name: upload.fileName,
    tipo, periodo: caratula.periodo, received_at: upload.now.getTime(), delay_ms: ctx.processingDelayMs, rejection: rejectionFound,
  })
  ctx.log('sii_simulator.libro', { track_id: trackId, libro: root, tipo, periodo: caratula.periodo, rejection: rejectionFound?.estado ?? null })
  return { status: 0, trackId, errors: [] }
}

/**
 * getEstUp for a libro's track id (soap-service.ts): its state at `now`, or null when no libro of `company` has that
 * track id (the query then answers as for an unknown envelope). The pipeline's stages as for an envelope
 * (states.ts envioState), then LOK instead of EPR, or the rejection at its stage: RSC, RFR, LRH at the end.
 */
export function libroEstUp(ctx: SimulatorContext, trackId: string, company: string, now: Date): (EnvioState & { readonly trackId: string }) | null {
  const libro = ctx.store.findLibro(trackId)
  if (libro === null || libro.rut_emisor !== company) return null
  const rejected = libro.rejection
  const stage = rejected === null || rejected.estado === 'LRH' ? null : { ...rejected, estado: rejected.estado }
  const state = envioState({ received_at: libro.received_at, delay_ms: libro.delay_ms, rejection: stage }, now)
  if (state.estado !== 'EPR') return { trackId: libro.track_id, ...state }
  return rejected === null
    ? { trackId: libro.track_id, estado: 'LOK', glosa: LIBRO_GLOSA.LOK, isFinal: true }
    : { trackId: libro.track_id, estado: 'LRH', glosa: rejected.glosa, isFinal: true }
}

function refused(status: number, message: string): LibroReceipt {
  return { status, trackId: null, errors: [message] }
}

/** xmllint's `libro.xml:46: Schemas validity error : …` → 46. */
function lineOf(message: string): number {
  return Number(/^[^:]*:(\d+):/.exec(message)?.[1] ?? 0)
}
