// `timbre contribuyentes import FILE` (DESIGN §13 "Sending"): the SII's published list of electronic issuers and their
// exchange addresses, the last place Timbre looks for a receiver's mailbox (after the request's receptor.email and the
// company's cliente). The SII serves it as `ce_empresas_dwnld_<AAAAMMDD>.csv`: ISO-8859-1, `;`-separated, a title line
// `RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL`, dates as DD-MM-YYYY (often with a
// trailing space), most lines ending in a `;`. Hundreds of thousands of lines: read as a stream, written in
// transactions of a few thousand rows so a `serve` on the same data dir keeps writing between them.
import { isoTimestamp } from '../clock'
import { contribuyenteUpserter, findContribuyente, type UpsertOutcome } from '../db/contribuyente-store'
import type { Db } from '../db/open'
import { isValidEmail } from '../domain/catalogo'
import { normalizeRut } from '../domain/rut'
import { OperatorError } from '../errors'
import type { Deps } from './deps'

/** One issuer as a line of the SII's list gives it. */
export interface ContribuyenteLine {
  readonly rut: string
  readonly razon_social: string
  readonly numero_resolucion: number | null
  /** YYYY-MM-DD. */
  readonly fecha_resolucion: string | null
  /** Lower case; null when the SII lists none. */
  readonly email_intercambio: string | null
}

export type LineParse =
  | { readonly kind: 'row'; readonly contribuyente: ContribuyenteLine }
  | { readonly kind: 'header' }
  | { readonly kind: 'blank' }
  | { readonly kind: 'malformed'; readonly reason: string }

const DATE_DMY = /^(\d{2})[-/](\d{2})[-/](\d{4})$/
const DATE_YMD = /^(\d{4})-(\d{2})-(\d{2})$/
/** NroResol is at most 6 digits (SiiTypes_v10.xsd NroResolType); some lists pad it, so a few more are tolerated. */
const NUMERO = /^\d{1,9}$/

/** A real calendar date as YYYY-MM-DD, or null. */
function isoDate(text: string): string | null {
  const dmy = DATE_DMY.exec(text)
  const ymd = DATE_YMD.exec(text)
  const [y, m, d] = dmy ? [dmy[3]!, dmy[2]!, dmy[1]!] : ymd ? [ymd[1]!, ymd[2]!, ymd[3]!] : []
  if (y === undefined) return null
  const iso = `${y}-${m}-${d}`
  const parsed = new Date(`${iso}T00:00:00Z`)
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(iso) ? iso : null
}

function unquote(field: string): string {
  const t = field.trim()
  return t.length >= 2 && t.startsWith('"') && t.endsWith('"') ? t.slice(1, -1).replace(/""/g, '"').trim() : t
}

/**
 * Where the four columns after RAZON SOCIAL start. The usual line has six fields (seven with the trailing `;`); a
 * razón social holding a `;` has more, and then the resolution's number and date, the first integer followed by a
 * date, mark where the name ends.
 */
function resolucionIndex(fields: readonly string[]): number | null {
  if (fields.length <= 6) return 2
  for (let i = 2; i + 1 < fields.length; i++) if (NUMERO.test(fields[i]!) && isoDate(fields[i + 1]!) !== null) return i
  return null
}

/** One line of the SII's CSV, already decoded to text. Pure. */
export function parseContribuyenteLine(line: string): LineParse {
  if (line.trim() === '') return { kind: 'blank' }
  const fields = line.replace(/\r$/, '').split(';').map(unquote)
  if (fields[0]!.toUpperCase() === 'RUT') return { kind: 'header' }
  if (fields.length > 6 && fields[fields.length - 1] === '') fields.pop()
  if (fields.length < 5) return { kind: 'malformed', reason: 'faltan columnas (RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL)' }
  const rut = normalizeRut(fields[0]!)
  if (rut === null) return { kind: 'malformed', reason: 'RUT inválido' }
  const at = resolucionIndex(fields)
  if (at === null) return { kind: 'malformed', reason: 'no se encuentran el número y la fecha de resolución' }
  const razonSocial = fields.slice(1, at).join(';').trim()
  if (razonSocial === '') return { kind: 'malformed', reason: 'razón social vacía' }
  const [numero = '', fecha = '', mail = ''] = fields.slice(at, at + 3)
  if (numero !== '' && !NUMERO.test(numero)) return { kind: 'malformed', reason: 'número de resolución inválido' }
  const fechaIso = fecha === '' ? null : isoDate(fecha)
  if (fecha !== '' && fechaIso === null) return { kind: 'malformed', reason: 'fecha de resolución inválida' }
  const email = mail.toLowerCase()
  if (email !== '' && !isValidEmail(email)) return { kind: 'malformed', reason: 'correo de intercambio inválido' }
  return {
    kind: 'row',
    contribuyente: {
      rut,
      razon_social: razonSocial,
      numero_resolucion: numero === '' ? null : Number(numero),
      fecha_resolucion: fechaIso,
      email_intercambio: email === '' ? null : email,
    },
  }
}

// ------------------------------------------------------------------------------------------------ decoding the file

export type Encoding = 'ISO-8859-1' | 'UTF-8'

function isAscii(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b >= 0x80) return false
  return true
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Decodes lines of a file whose encoding is told by its first non-ASCII line: valid UTF-8 there means a UTF-8 file
 * (a spreadsheet re-saved it), anything else the SII's ISO-8859-1. Latin-1 text with accents is almost never valid
 * UTF-8 (an accented letter followed by a plain one is an invalid sequence), so the guess is safe. A later line that
 * is not valid UTF-8 in a UTF-8 file is read as ISO-8859-1 rather than lost.
 */
export function lineDecoder(): { decode(bytes: Uint8Array): string; readonly encoding: Encoding } {
  let encoding: Encoding | null = null
  const latin1 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
  return {
    decode(bytes) {
      if (isAscii(bytes)) return latin1(bytes)
      if (encoding === null) {
        try {
          const text = utf8.decode(bytes)
          encoding = 'UTF-8'
          return text
        } catch {
          encoding = 'ISO-8859-1'
        }
      }
      if (encoding === 'ISO-8859-1') return latin1(bytes)
      try {
        return utf8.decode(bytes)
      } catch {
        return latin1(bytes)
      }
    },
    get encoding() {
      return encoding ?? 'ISO-8859-1'
    },
  }
}

/** The file's lines as bytes (without the `\n`), read as a stream: memory stays flat whatever its size. */
async function* byteLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  let rest: Uint8Array = new Uint8Array(0)
  let first = true
  for await (const chunk of stream) {
    let data = rest.length === 0 ? chunk : concat(rest, chunk)
    if (first && data.length >= 3) {
      // A UTF-8 byte order mark (spreadsheets write one) is not part of the first line.
      if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) data = data.subarray(3)
      first = false
    }
    let start = 0
    for (let i = data.indexOf(0x0a); i !== -1; i = data.indexOf(0x0a, start)) {
      yield data.subarray(start, i)
      start = i + 1
    }
    rest = data.slice(start)
  }
  if (rest.length > 0) yield rest
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

// ------------------------------------------------------------------------------------------------ the import

/** Rows per transaction: a few milliseconds of write lock each, so a running `serve` is never held long. */
export const IMPORT_BATCH = 2000
export const PROGRESS_EVERY = 10_000
/** Line numbers kept per reason in the summary: enough to find the lines, not a copy of a bad file. */
const FIRST_LINES = 5

export interface ImportProgress {
  readonly lines: number
  readonly imported: number
  readonly updated: number
  readonly unchanged: number
  readonly skipped: number
}

export interface ImportSummary extends ImportProgress {
  readonly file: string
  readonly encoding: Encoding
  /** Why lines were skipped: each reason, how many lines, the first line numbers (1-based). */
  readonly skipped_reasons: Array<{ reason: string; count: number; first_lines: number[] }>
}

export async function importContribuyentes(
  deps: Pick<Deps, 'store' | 'clock'>,
  input: { readonly path: string; readonly batchSize?: number; readonly progressEvery?: number; readonly onProgress?: (p: ImportProgress) => void },
): Promise<ImportSummary> {
  const file = Bun.file(input.path)
  if (!(await file.exists())) throw new OperatorError(`no existe el archivo ${input.path}`)
  const batchSize = input.batchSize ?? IMPORT_BATCH
  const progressEvery = input.progressEvery ?? PROGRESS_EVERY
  const counts = { lines: 0, imported: 0, updated: 0, unchanged: 0, skipped: 0 }
  const reasons = new Map<string, { count: number; first_lines: number[] }>()
  const decoder = lineDecoder()
  const upsert = contribuyenteUpserter(deps.store.db)
  let batch: ContribuyenteLine[] = []
  const flush = () => {
    const outcomes = writeBatch(deps.store.db, upsert, batch, isoTimestamp(deps.clock.now()))
    for (const o of outcomes) counts[o]++
    batch = []
  }
  for await (const bytes of byteLines(file.stream())) {
    counts.lines++
    const parsed = parseContribuyenteLine(decoder.decode(bytes))
    if (parsed.kind === 'row') batch.push(parsed.contribuyente)
    if (parsed.kind === 'malformed') {
      counts.skipped++
      const r = reasons.get(parsed.reason) ?? { count: 0, first_lines: [] }
      r.count++
      if (r.first_lines.length < FIRST_LINES) r.first_lines.push(counts.lines)
      reasons.set(parsed.reason, r)
    }
    if (batch.length >= batchSize) flush()
    if (counts.lines % progressEvery === 0) input.onProgress?.({ ...counts })
  }
  flush()
  return {
    file: input.path,
    encoding: decoder.encoding,
    ...counts,
    skipped_reasons: [...reasons].map(([reason, r]) => ({ reason, ...r })).sort((a, b) => b.count - a.count),
  }
}

function writeBatch(db: Db, upsert: ReturnType<typeof contribuyenteUpserter>, rows: readonly ContribuyenteLine[], at: string): UpsertOutcome[] {
  if (rows.length === 0) return []
  return db.transaction(() => rows.map((row) => upsert({ ...row, updated_at: at })), { behavior: 'immediate' })
}

/** The exchange address the SII lists for a RUT (canonical form), or null. A step of the callers' transactions. */
export function emailIntercambioOf(db: Db, rut: string): string | null {
  return findContribuyente(db, rut)?.email_intercambio ?? null
}
