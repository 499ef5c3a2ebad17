// Uploads: SOAP-side `POST /cgi_dte/UPL/DTEUpload` (docs/sii-protocol.md §6.4) and the boleta REST envío (§7.3 item 3). Same
// multipart form on both; the answers differ (RECEPCIONDTE XML with a STATUS, or JSON with an estado). The mapping of
// every STATUS is the table in `codes.ts`; what it means for the DTE is DESIGN §6.
import type { MotivoSii, UploadOutcome } from '../../domain/sii-respuestas'
import { parseRut } from '../../domain/rut'
import { childElements, parseXml, textOf } from '../../xml/latin1'
import { ENVIO_ESTADOS, UPLOAD_STATUS } from './codes'
import { passingFault, snippet, type HttpResult } from './http'
import { jsonField, parseJsonObject, rawDigits } from './json'

/** An answer that says the token is no longer good: the client gets a new one and uploads once more. */
export interface TokenRejected {
  readonly kind: 'token_invalid'
  readonly status: string
  readonly raw: string
}

/**
 * The form, fields in the order every client sends (§6.4): rutSender, dvSender (the certificate holder), rutCompany,
 * dvCompany (the issuer, DV uppercase), archivo. The file is the envelope's ISO-8859-1 bytes as a Blob: a JS string
 * would go out as UTF-8 (§6.4). Bun's fetch keeps field order and sends Content-Length, not chunked (tested).
 */
export function uploadForm(rutFirmante: string, rutCompany: string, envelope: Uint8Array, fileName: string): FormData {
  const sender = rutParts(rutFirmante, 'rutFirmante')
  const company = rutParts(rutCompany, 'company.rut')
  const form = new FormData()
  form.append('rutSender', sender.body)
  form.append('dvSender', sender.dv)
  form.append('rutCompany', company.body)
  form.append('dvCompany', company.dv)
  // A copy typed on a plain ArrayBuffer (a Blob part cannot be a view of a SharedArrayBuffer).
  form.append('archivo', new Blob([new Uint8Array(envelope)], { type: 'text/xml' }), fileName)
  return form
}

/** Body and DV of a RUT, throwing on a malformed one: the caller stores canonical RUTs, so this is a bug, not an SII answer. */
export function rutParts(rut: string, what: string): { readonly body: string; readonly dv: string } {
  const parsed = parseRut(rut)
  if (parsed === null) throw new Error(`SII client: ${what} is not a valid RUT: ${rut}`)
  return parsed
}

/**
 * RECEPCIONDTE → outcome. HTTP 200 even on error (§6.4): the STATUS decides. `TRACKID` comes only with 0 (and, when
 * the SII sends one, with 99); kept as text, leading zeros included.
 */
export function uploadOutcome(res: HttpResult): UploadOutcome | TokenRejected {
  if (res.kind === 'failure') return { kind: 'retry', reason: res.reason }
  const recepcion = parseRecepcion(res.text)
  if (typeof recepcion === 'string') return { kind: 'retry', reason: passingFault(res) ?? recepcion, raw: res.text }
  const { status, trackId, errors } = recepcion
  const meaning = UPLOAD_STATUS[status]
  const glosa = [meaning?.glosa ?? 'Error interno del SII', ...errors].join('; ')
  // One reason: the STATUS with its meaning, the DETAIL/ERROR lines (schema messages, `LSX-…`) as its detail.
  const motivos: MotivoSii[] = [{ codigo: status, glosa: meaning?.glosa ?? 'Error interno del SII', detalle: errors.join('\n') || null, nivel: null, fuente: 'upload' }]
  const raw = res.text
  switch (meaning?.kind) {
    case 'received':
      return trackId === null ? { kind: 'retry', reason: 'STATUS 0 without TRACKID', status, raw } : { kind: 'received', trackId, raw }
    case 'already_received':
      return { kind: 'already_received', trackId, raw }
    case 'refused':
      return { kind: 'refused', status, glosa, motivos, raw }
    case 'not_authorized':
      return { kind: 'not_authorized', status, glosa, motivos, raw }
    case 'token_invalid':
      return { kind: 'token_invalid', status, raw }
    default:
      return { kind: 'retry', reason: `STATUS ${status}: ${glosa}`, status, raw }
  }
}

interface Recepcion {
  readonly status: string
  readonly trackId: string | null
  /** `DETAIL/ERROR` texts (schema messages, `LSX-…`). */
  readonly errors: readonly string[]
}

/** The RECEPCIONDTE fields, or why the text is not one. */
export function parseRecepcion(text: string): Recepcion | string {
  let root: Element
  try {
    root = parseXml(text.trim()).documentElement
  } catch (err) {
    return `upload answer is not XML: ${snippet(err instanceof Error ? err.message : String(err))}`
  }
  if (root.localName !== 'RECEPCIONDTE') return `upload answer is not RECEPCIONDTE: <${root.localName}>`
  const field = (name: string): string | null => {
    const el = childElements(root).find((e) => e.localName === name)
    return el === undefined ? null : textOf(el).trim()
  }
  const status = field('STATUS')
  if (status === null || status === '') return 'RECEPCIONDTE without STATUS'
  const detail = childElements(root).find((e) => e.localName === 'DETAIL')
  const errors = detail === undefined ? [] : childElements(detail).map((e) => textOf(e).trim()).filter((t) => t !== '')
  return { status, trackId: field('TRACKID') || null, errors }
}

/**
 * Boleta envío JSON → outcome (§7.3 item 3): `{"trackid": 1014, "estado": "REC", …}`. HTTP 401 is an invalid token.
 * An estado of a refused envelope (RSC, RFR, …) is `refused`; RPT (repeated) is `already_received`.
 */
export function boletaUploadOutcome(res: HttpResult): UploadOutcome | TokenRejected {
  if (res.kind === 'failure') return { kind: 'retry', reason: res.reason }
  const raw = res.text
  if (res.status === 401) return { kind: 'token_invalid', status: 'HTTP 401', raw }
  const fault = passingFault(res)
  if (fault !== null) return { kind: 'retry', reason: fault, raw }
  if (res.status < 200 || res.status > 299) return { kind: 'retry', reason: `HTTP ${res.status}: ${snippet(raw)}`, status: `HTTP ${res.status}`, raw }
  const json = parseJsonObject(raw)
  if (typeof json === 'string') return { kind: 'retry', reason: json, raw }
  const trackId = rawDigits(raw, 'trackid')
  const estado = String(jsonField(json, 'estado') ?? '')
  const known = ENVIO_ESTADOS[estado]
  if (estado === 'RPT') return { kind: 'already_received', trackId, raw }
  if (known?.kind === 'rejected') {
    return { kind: 'refused', status: estado, glosa: known.glosa, motivos: [{ codigo: estado, glosa: known.glosa, detalle: null, nivel: null, fuente: 'upload' }], raw }
  }
  if (trackId === null) return { kind: 'retry', reason: `boleta envío without trackid (estado ${estado || 'none'})`, raw }
  return { kind: 'received', trackId, raw }
}
