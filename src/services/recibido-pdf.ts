// GET /recibidos/{id}/pdf (DESIGN §13: "the same renderer as issued DTEs"). The renderer reads everything it prints
// from the signed DTE; what it needs besides — the issuer's SII resolution, printed under the timbre — is not in a
// DTE but in the Caratula of the envelope it came in (FchResol, NroResol: the issuer's own resolution), so it is read
// from the stored envelope. Nothing of the renderer changes.
import { findRecibido, findRecibidoEnvio } from '../db/recibido-store'
import { isTipoDte } from '../domain/emision'
import { TIPOS } from '../domain/tipos'
import { TimbreError, validationError } from '../errors'
import { findElement, fromLatin1Bytes, parseXml, textOf } from '../xml/latin1'
import type { Deps } from './deps'
import { parseDtePdfQuery, type DtePdf, type DtePdfQuery } from './dte-pdf'

export interface Resolucion {
  readonly numero: number
  readonly fecha: string
}

/**
 * The issuer's resolution from an EnvioDTE's Caratula; null when the envelope cannot be read or lacks it (then the
 * timbre's legend falls back to resolution 0 of the document's year, as a certificación document would print).
 */
export function resolucionOfEnvelope(envelope: Uint8Array): Resolucion | null {
  try {
    const caratula = findElement(parseXml(fromLatin1Bytes(envelope)).documentElement, 'Caratula')
    if (caratula === null) return null
    const fecha = findElement(caratula, 'FchResol')
    const numero = findElement(caratula, 'NroResol')
    if (fecha === null || numero === null) return null
    const n = Number(textOf(numero).trim())
    const f = textOf(fecha).trim()
    return Number.isInteger(n) && /^\d{4}-\d{2}-\d{2}$/.test(f) ? { numero: n, fecha: f } : null
  } catch {
    return null
  }
}

export async function getRecibidoPdf(deps: Pick<Deps, 'store' | 'tasks'>, input: { empresaId: string; id: string; query: DtePdfQuery }): Promise<DtePdf> {
  const { empresaId } = input
  const { formato, cedible } = parseDtePdfQuery(input.query)
  const row = findRecibido(deps.store.db, empresaId, input.id)
  if (!row) throw new TimbreError('NOT_FOUND')
  // The same rule as an issued DTE's PDF (DESIGN §12): only 33, 34, 43, 46 and 52 have a cedible copy.
  if (cedible && !(isTipoDte(row.tipo_dte) && TIPOS[row.tipo_dte].isCedible))
    throw validationError([{ field: 'cedible', code: 'NOT_ALLOWED', message: `El tipo ${row.tipo_dte} no tiene copia cedible.` }])
  const envio = findRecibidoEnvio(deps.store.db, empresaId, row.envio_id)
  if (!envio) throw new Error(`recibido ${row.id}: its envelope ${row.envio_id} is missing`)
  const resolucion = resolucionOfEnvelope(envio.xml) ?? { numero: 0, fecha: row.fecha_emision }
  const bytes = await deps.tasks.run('render-pdf', { xml: row.xml, formato, cedible, resolucion, isRechazado: false })
  return { bytes, tipoDte: row.tipo_dte, folio: row.folio }
}
