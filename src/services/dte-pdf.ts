// GET /dte/{id}/pdf (DESIGN §8, §12): the printed representation of a stored DTE, from its signed XML.
import { findDte } from '../db/dte-store'
import type { DteRow } from '../db/schema'
import { isTipoDte } from '../domain/emision'
import { TIPOS } from '../domain/tipos'
import { TimbreError, validationError, type FieldError } from '../errors'
import { FORMATOS, type Formato } from '../pdf/formatos'
import type { PrintContext } from '../pdf/sections'
import type { Deps } from './deps'
import { getEmpresa, type EmpresaRecord } from './empresas'

export interface DtePdfQuery {
  readonly formato?: string
  readonly cedible?: string
}

export interface DtePdf {
  readonly bytes: Uint8Array
  readonly tipoDte: number
  readonly folio: number
}

/** Checks the query's shape, before anything is read (DESIGN §12: a bad `formato` is 400). */
export function parseDtePdfQuery(query: DtePdfQuery): { formato: Formato; cedible: boolean } {
  const errors: FieldError[] = []
  const formato = query.formato ?? 'carta'
  if (!(FORMATOS as readonly string[]).includes(formato))
    errors.push({ field: 'formato', code: 'INVALID_VALUE', message: 'formato debe ser carta o termico.' })
  const cedible = query.cedible ?? 'false'
  if (cedible !== 'true' && cedible !== 'false') errors.push({ field: 'cedible', code: 'INVALID_TYPE', message: 'cedible debe ser true o false.' })
  if (errors.length > 0) throw validationError(errors)
  return { formato: formato as Formato, cedible: cedible === 'true' }
}

export async function getDtePdf(deps: Pick<Deps, 'store' | 'tasks'>, input: { empresaId: string; id: string; query: DtePdfQuery }): Promise<DtePdf> {
  const { empresaId } = input
  const { formato, cedible } = parseDtePdfQuery(input.query)
  const row = findDte(deps.store.db, empresaId, input.id)
  if (!row) throw new TimbreError('NOT_FOUND')
  // DESIGN §12: only 33, 34, 43, 46 and 52 have a cedible copy (docs/sii-protocol.md §9).
  if (cedible && !(isTipoDte(row.tipo_dte) && TIPOS[row.tipo_dte].isCedible))
    throw validationError([{ field: 'cedible', code: 'NOT_ALLOWED', message: `El tipo ${row.tipo_dte} no tiene copia cedible.` }])
  const empresa = getEmpresa(deps, { empresaId })
  // pdf-lib and the PDF417 take 50–70 ms of a core per page: drawn in a worker (issue 17).
  const bytes = await deps.tasks.run('render-pdf', { xml: row.xml, formato, cedible, ...printContextOf(empresa, row) })
  return { bytes, tipoDte: row.tipo_dte, folio: row.folio }
}

/** What a stored DTE prints with besides its XML; also the certification's muestras (services/certificacion-muestras.ts). */
export function printContextOf(empresa: Pick<EmpresaRecord, 'numero_resolucion' | 'fecha_resolucion'>, row: Pick<DteRow, 'estado'>): PrintContext {
  // The resolution is the company's, not the document's: the DTE does not carry it (docs/sii-protocol.md §9 prints it under the timbre).
  return { resolucion: { numero: empresa.numero_resolucion, fecha: empresa.fecha_resolucion }, isRechazado: row.estado === 'rechazado' }
}
