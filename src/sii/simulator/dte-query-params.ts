// getEstDte's parameters (docs/sii-protocol.md §6.6) and the boleta consulta's path and query string (§7.3 item 5) name a
// document the same way; both are read here into the DteQuery that queries.ts answers.
import { normalizeRut } from '../../domain/rut'
import { parseFechaConsulta, type DteQuery } from './queries'

/** The parameters as sent: RUTs as `body-dv`, a receptor of `-` when none was given. */
export interface DteQueryParams {
  readonly company: string
  readonly receptor: string
  readonly tipo: string
  readonly folio: string
  readonly fecha: string
  readonly monto: string
}

/** Null when a given parameter is malformed; the receptor, fecha and monto may be left empty. */
export function parseDteQuery(raw: DteQueryParams): DteQuery | null {
  const rutEmisor = normalizeRut(raw.company)
  const tipo = Number(raw.tipo)
  const folio = Number(raw.folio)
  if (rutEmisor === null || !Number.isSafeInteger(tipo) || !Number.isSafeInteger(folio) || raw.tipo === '' || raw.folio === '') return null
  const receptorGiven = raw.receptor.replace(/-/g, '').trim() !== ''
  const rutReceptor = receptorGiven ? normalizeRut(raw.receptor) : null
  if (receptorGiven && rutReceptor === null) return null
  const fechaEmision = raw.fecha.trim() === '' ? null : parseFechaConsulta(raw.fecha)
  if (raw.fecha.trim() !== '' && fechaEmision === null) return null
  if (raw.monto.trim() !== '' && !/^-?\d+(\.\d+)?$/.test(raw.monto.trim())) return null
  return { rutEmisor, tipo, folio, rutReceptor, fechaEmision, monto: raw.monto.trim() === '' ? null : raw.monto.trim() }
}
