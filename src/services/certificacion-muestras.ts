// GET /certificacion/muestras (DESIGN §15): the certification's muestras de impresión, one zip with the PDF of every
// document of the set and the simulation for the SII's "Sistema de Validación Archivos PDF de DTE". Each document's
// tributario copy as `<tipo>-<folio>.pdf`, and for the types the SII's instructions name, `<tipo>-<folio>-cedible.pdf`.
// Drawn by the same worker task as GET /dte/{id}/pdf (carta, the same resolution line), so a muestra is what the company
// will print. The choices (which types, what the cedible file holds, why a stream, sizes and times) are in
// docs/decisions/certificacion.md, «Muestras de impresión y consumo de folios».
import type { Zip } from 'fflate'
import type { DteRow } from '../db/schema'
import type { Deps } from './deps'
import { printContextOf } from './dte-pdf'
import { getEmpresa } from './empresas'

/**
 * The types whose cedible copy the SII's 2025/26 set instructions ask for (research §1.2, stage 4). 43 has a cedible
 * copy in Timbre (domain/tipos.ts) but no set asks for it, and the SII reviews what it asked for: it gets none here.
 */
export const TIPOS_MUESTRA_CEDIBLE: readonly number[] = [33, 34, 46, 52]

/**
 * PDFs in the worker pool at once. One takes ~50 ms of a core (dte-pdf.ts): queueing a whole certification (~120
 * documents, ~230 PDFs) at once would hold every XML and PDF in memory and put a GET /dte/{id}/pdf behind all of
 * them; four keep the workers busy and leave the queue to others between them.
 */
const RENDERS_AT_ONCE = 4

/** PDF streams are deflated already: level 6 still takes ~8 % off, at ~2 ms per file on the main thread. */
const ZIP_LEVEL = 6

type MuestrasDeps = Pick<Deps, 'store' | 'tasks'>

export interface MuestrasInput {
  readonly empresaId: string
  /** The set's and the simulation's DTEs, any order; the same row twice is one document. */
  readonly dtes: readonly DteRow[]
}

/** One file of the zip: which document, and whether it is the cedible file. */
export interface MuestraPlanned {
  readonly name: string
  readonly dte: DteRow
  readonly isCedible: boolean
}

/**
 * The zip's files in their order: by tipo, then folio, each document's tributario file followed by its cedible one.
 * Throws on a row of another company or two rows with one name (bugs of the caller).
 */
export function planMuestras(empresaId: string, dtes: readonly DteRow[]): MuestraPlanned[] {
  const byId = new Map<string, DteRow>()
  for (const dte of dtes) {
    if (dte.empresa_id !== empresaId) throw new Error(`muestras: DTE ${dte.id} belongs to another company`)
    byId.set(dte.id, dte)
  }
  const sorted = [...byId.values()].sort((a, b) => a.tipo_dte - b.tipo_dte || a.folio - b.folio)
  const names = new Set<string>()
  return sorted.flatMap((dte) => {
    const base = `${dte.tipo_dte}-${dte.folio}`
    if (names.has(base)) throw new Error(`muestras: two DTEs are ${base}`)
    names.add(base)
    const tributario = { name: `${base}.pdf`, dte, isCedible: false }
    return TIPOS_MUESTRA_CEDIBLE.includes(dte.tipo_dte) ? [tributario, { name: `${base}-cedible.pdf`, dte, isCedible: true }] : [tributario]
  })
}

/**
 * The zip as a stream, for GET /certificacion/muestras: a certification's PDFs take longer to draw than Bun.serve lets
 * a request sit silent (10 s, its default idleTimeout), so each file goes out as soon as it and those before it are
 * drawn, and the connection never goes quiet. Pulled by the reader: a slow client holds at most RENDERS_AT_ONCE PDFs.
 * Each cedible file is what GET /dte/{id}/pdf?cedible=true gives, the tributario copy and then the cedible one, the
 * pair the instructions ask for. Entries carry the document's date, so the same documents give the same bytes.
 * A PDF that fails (a worker past its time limit: the pool's 503) errors the stream, and nothing more is drawn; the
 * plan's checks throw here, before any byte. Cancelling the stream stops the drawing too.
 */
export function streamMuestrasZip(deps: MuestrasDeps, input: MuestrasInput): ReadableStream<Uint8Array> {
  const plan = planMuestras(input.empresaId, input.dtes)
  const empresa = getEmpresa(deps, { empresaId: input.empresaId })
  const drawing: Array<Promise<Uint8Array> | undefined> = []
  const draw = (p: MuestraPlanned): Promise<Uint8Array> => {
    const pdf = deps.tasks.run('render-pdf', { xml: p.dte.xml, formato: 'carta', cedible: p.isCedible, ...printContextOf(empresa, p.dte) })
    pdf.catch(() => {})  // drawn ahead: its failure is reported when its turn comes, or not at all once the stream is gone
    return pdf
  }
  let next = 0
  let zip: Zip | null = null
  let cancelled = false
  // fflate is loaded by the first zip asked for, not at start-up (docs/decisions/performance.md «Issue 31, session 14»).
  let fflate: typeof import('fflate') | null = null
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const loaded = await import('fflate')
      if (cancelled) return  // the reader went away while fflate loaded
      fflate = loaded
      zip = new fflate.Zip((err, chunk, final) => {
        if (err) return controller.error(err)
        controller.enqueue(chunk)
        if (final) controller.close()
      })
      if (plan.length === 0) zip.end()
    },
    async pull() {
      if (zip === null || fflate === null || next >= plan.length) return
      while (drawing.length < Math.min(next + RENDERS_AT_ONCE, plan.length)) drawing.push(draw(plan[drawing.length] as MuestraPlanned))
      const p = plan[next] as MuestraPlanned
      const pdf = await (drawing[next] as Promise<Uint8Array>)  // a rejection errors the stream
      drawing[next] = undefined
      next++
      const entry = new fflate.ZipDeflate(p.name, { level: ZIP_LEVEL })
      entry.mtime = new Date(`${p.dte.fecha_emision}T12:00:00`)
      zip.add(entry)
      entry.push(pdf, true)
      if (next === plan.length) zip.end()
    },
    cancel() {
      cancelled = true
      next = plan.length  // no more pulls draw anything
      zip = null
    },
  })
}

/** The same zip's bytes, whole, for a caller that wants them at once (tests). Rejects with the first PDF's failure. */
export async function buildMuestrasZip(deps: MuestrasDeps, input: MuestrasInput): Promise<Uint8Array> {
  const reader = streamMuestrasZip(deps, input).getReader()
  const chunks: Uint8Array[] = []
  for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value)
  return Buffer.concat(chunks)
}
