// Receiving an envelope, what DTEUpload (upload-service.ts) and the boleta envío (boleta-service.ts) share: the multipart
// form (docs/sii-protocol.md §6.4), the same-bytes check, and storing the envelope with its documents decided under a new
// track id. What each channel refuses at once, and how it answers, stays in its own module.
import { createHash } from 'node:crypto'
import { normalizeRut, parseRut } from '../../domain/rut'
import type { SimulatorContext } from './channel'
import { documentoRcvOf } from './rcv-registers'
import { decideDocuments, type DocumentVerdict, type ReadEnvelope } from './checks'
import type { Channel, DocumentoRow, EnvioRow, StoredRejection } from './store'

export type UploadForm =
  | { readonly kind: 'form'; readonly data: FormData; readonly bytes: Uint8Array; readonly fileName: string }
  | { readonly kind: 'cut'; readonly reason: string; readonly data: FormData | null }

/**
 * The multipart form of DTEUpload and the REST envío (docs/sii-protocol.md §6.4): a body that does not parse is a cut file
 * (STATUS 3). `archivo` may come gzip-compressed (LibreDTE sends `application/gzip`, §6.4): inflated here.
 */
export async function readUploadForm(req: Request): Promise<UploadForm> {
  let data: FormData
  try {
    data = await req.formData()
  } catch (err) {
    return { kind: 'cut', reason: `multipart ilegible: ${err instanceof Error ? err.message : String(err)}`, data: null }
  }
  const archivo = data.get('archivo')
  if (archivo === null || typeof archivo === 'string') return { kind: 'form', data, bytes: new Uint8Array(), fileName: '' }
  let bytes = new Uint8Array(await archivo.arrayBuffer())
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = new Uint8Array(Bun.gunzipSync(bytes))
    } catch {
      return { kind: 'cut', reason: 'archivo gzip truncado', data }
    }
  }
  return { kind: 'form', data, bytes, fileName: archivo.name }
}

export interface UploadRuts {
  /** rutSender-dvSender, canonical; null when not a valid RUT or the file was cut. */
  readonly rutSender: string | null
  readonly rutCompany: string | null
  /** What the answer repeats: the canonical RUT, else the fields as sent (`body-dv`, '' when both are empty). */
  readonly echoedSender: string
  readonly echoedCompany: string
}

export function uploadRuts(form: UploadForm): UploadRuts {
  const rutSender = form.kind === 'form' ? rutOf(form.data, 'rutSender', 'dvSender') : null
  const rutCompany = form.kind === 'form' ? rutOf(form.data, 'rutCompany', 'dvCompany') : null
  return {
    rutSender,
    rutCompany,
    echoedSender: rutSender ?? formText(form, 'rutSender', 'dvSender'),
    echoedCompany: rutCompany ?? formText(form, 'rutCompany', 'dvCompany'),
  }
}

function rutOf(data: FormData, body: string, dv: string): string | null {
  const rut = parseRut(`${String(data.get(body) ?? '')}-${String(data.get(dv) ?? '')}`)
  return rut === null ? null : `${rut.body}-${rut.dv}`
}

function formText(form: UploadForm, body: string, dv: string): string {
  if (form.data === null) return ''
  const b = String(form.data.get(body) ?? '')
  const d = String(form.data.get(dv) ?? '')
  return b === '' && d === '' ? '' : `${b}-${d}`
}

/** "The same bytes" is the SHA-256 of `archivo` after gzip inflation (docs/decisions/simulator.md, STATUS 99). */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

/** The track id of the envelope first received with these bytes on this channel, or null. */
export function earlierTrackId(ctx: SimulatorContext, channel: Channel, sha256: string): string | null {
  return ctx.store.findEnvioByBytes(channel, sha256)?.track_id ?? null
}

/** DTEUpload's TRACKID has 10 digits with leading zeros (docs/sii-protocol.md §6.4); the boleta API's is a number (§7.3). */
const NEW_TRACK_ID: Readonly<Record<Channel, (ctx: SimulatorContext) => string>> = {
  soap: (ctx) => String(ctx.store.next('soap_track_id')).padStart(10, '0'),
  rest: (ctx) => String(ctx.store.next('rest_track_id')),
}

export interface ReceivedEnvelope {
  readonly sha256: string
  readonly rutEmisor: string
  readonly rutEnvia: string
  readonly fileName: string
  readonly now: Date
  /** Null when the envelope could not be read: it is stored with its rejection and no documents. */
  readonly read: ReadEnvelope | null
  readonly rejection: StoredRejection | null
}

/**
 * Stores the envelope under a new track id and decides its documents in one synchronous stretch (no await between the
 * duplicate checks and the insert, so two envelopes carrying one folio cannot both be accepted). A twin with the same
 * bytes that landed while the caller awaited the XSD wins: its track id comes back with `isRepeat`, nothing is stored.
 */
export function recordEnvelope(ctx: SimulatorContext, channel: Channel, envelope: ReceivedEnvelope): { readonly trackId: string; readonly isRepeat: boolean } {
  const twin = earlierTrackId(ctx, channel, envelope.sha256)
  if (twin !== null) return { trackId: twin, isRepeat: true }
  const trackId = NEW_TRACK_ID[channel](ctx)
  const { read, rejection } = envelope
  const verdicts: readonly DocumentVerdict[] = read === null
    ? []
    : rejection !== null
      ? read.dtes.map((dte) => ({ fields: dte.fields, estado: 'RCH', errors: rejection.errors }))
      : decideDocuments(read, {
        authorityKeys: ctx.authorityKeys,
        acceptedCopy: (r, t, f) => ctx.store.acceptedCopy(r, t, f),
        findSetCaso: (r, caso) => ctx.store.findSetCaso(r, caso),
      })
  const envio: EnvioRow = {
    track_id: trackId, channel, sha256: envelope.sha256, rut_emisor: envelope.rutEmisor, rut_envia: envelope.rutEnvia,
    file_name: envelope.fileName, received_at: envelope.now.getTime(), delay_ms: ctx.processingDelayMs, rejection,
  }
  const documentos: DocumentoRow[] = verdicts.map((v, position) => ({
    track_id: trackId, position, rut_emisor: normalizeRut(v.fields.rutEmisor) ?? v.fields.rutEmisor, tipo: v.fields.tipo, folio: v.fields.folio,
    rut_receptor: normalizeRut(v.fields.rutReceptor) ?? v.fields.rutReceptor, fecha_emision: v.fields.fechaEmision, monto: v.fields.montoTotal,
    estado: v.estado, errors: v.errors,
  }))
  // The registers' amounts, of the documents the SII took (verdicts follow read.dtes one for one; rcv-registers.ts).
  const rcv = new Map(documentos.flatMap((d, i) => {
    const element = read?.dtes[i]?.element
    return d.estado !== 'RCH' && element !== undefined ? [[d.position, documentoRcvOf(element)] as const] : []
  }))
  ctx.store.insertEnvio(envio, documentos, rcv)
  ctx.log('sii_simulator.envio', { channel, track_id: trackId, rejection: rejection?.estado ?? null, documentos: documentos.map((d) => `${d.tipo}/${d.folio}:${d.estado}`) })
  return { trackId, isRepeat: false }
}
