// The answers of the status queries, shared by SOAP and REST: envelope counters (getEstUp RESP_BODY, docs/sii-protocol.md §6.5;
// the boleta API's `estadistica`, §7.3) and one document's status (getEstDte, §6.6; the boleta consulta, §7.3 item 5).
import { detalleLine } from './checks'
import { envioState } from './states'
import type { DocumentoRow, SiiError, SimulatorStore } from './store'

export interface Counters {
  readonly tipo: number
  readonly informados: number
  /** Every accepted document, those with reparos included (REPAROS ⊂ ACEPTADOS; docs/decisions/simulator.md). */
  readonly aceptados: number
  readonly rechazados: number
  readonly reparos: number
}

/** One group per document type, ascending, as SubTotDTE orders them. */
export function countersOf(documentos: readonly DocumentoRow[]): Counters[] {
  const groups = new Map<number, { informados: number; aceptados: number; rechazados: number; reparos: number }>()
  for (const d of documentos) {
    const g = groups.get(d.tipo) ?? { informados: 0, aceptados: 0, rechazados: 0, reparos: 0 }
    g.informados += 1
    if (d.estado === 'RCH') g.rechazados += 1
    else g.aceptados += 1
    if (d.estado === 'RPR' || d.estado === 'RLV') g.reparos += 1
    groups.set(d.tipo, g)
  }
  return [...groups].sort(([a], [b]) => a - b).map(([tipo, g]) => ({ tipo, ...g }))
}

export interface DteQuery {
  readonly rutEmisor: string
  readonly tipo: number
  readonly folio: number
  /** Canonical RUT, or null when the query does not say. */
  readonly rutReceptor: string | null
  /** `YYYY-MM-DD`, or null. */
  readonly fechaEmision: string | null
  readonly monto: string | null
}

export interface DteStatus {
  readonly estado: 'DOK' | 'DNK' | 'FAU' | 'FNA'
  readonly glosaEstado: string
  /** ERR_CODE of docs/sii-protocol.md §6.6's table. */
  readonly errCode: number
  readonly glosaErr: string
}

/**
 * docs/sii-protocol.md §6.6: DOK when the SII holds the document accepted and the data given match; DNK when they do not
 * (receptor, date or amount); FNA when the only copies received were rejected for a folio outside its CAF; FAU
 * otherwise (never received, still in process, or rejected: "the service only answers for accepted documents").
 *
 * GLOSA_ERR carries the reasons of the copy it speaks of, one `(SECCION-NIVEL-CODIGO) descripcion` line each (the
 * REVISIONDTE/DETALLE form of the SII's result e-mail, which the simulator does not send): a rejected folio's
 * rejection, an accepted one's reparos (docs/decisions/simulator.md "Why the SII said no").
 */
export function dteStatus(store: SimulatorStore, query: DteQuery, now: Date): DteStatus {
  const received = store.documentsByFolio(query.rutEmisor, query.tipo, query.folio).filter((r) => envioState(r.envio, now).isFinal)
  const accepted = received.find((r) => r.documento.estado !== 'RCH')?.documento
  if (accepted === undefined) {
    const rejected = received.at(-1)?.documento
    if (rejected === undefined) return { estado: 'FAU', glosaEstado: 'Documento No Recibido por el SII', errCode: 3, glosaErr: 'Documento no recibido' }
    const outOfRange = received.find((r) => r.documento.errors.some((e) => e.seccion === 'CAF' && e.codigo === 1))?.documento
    return outOfRange !== undefined
      ? { estado: 'FNA', glosaEstado: 'Documento No Autorizado', errCode: 4, glosaErr: detalleLines(outOfRange.errors) }
      : { estado: 'FAU', glosaEstado: 'Documento No Recibido por el SII', errCode: 3, glosaErr: detalleLines(rejected.errors) }
  }
  const mismatches = [
    query.rutReceptor !== null && query.rutReceptor !== accepted.rut_receptor ? `RUT receptor (registrado ${accepted.rut_receptor})` : null,
    query.fechaEmision !== null && query.fechaEmision !== accepted.fecha_emision ? `fecha de emision (registrada ${accepted.fecha_emision})` : null,
    query.monto !== null && !sameAmount(query.monto, accepted.monto) ? `monto (registrado ${accepted.monto})` : null,
  ].filter((m): m is string => m !== null)
  if (mismatches.length > 0) {
    return { estado: 'DNK', glosaEstado: 'Documento Recibido por el SII. Datos No Coinciden con los Registrados', errCode: 1, glosaErr: `No coincide: ${mismatches.join(', ')}` }
  }
  return { estado: 'DOK', glosaEstado: 'Documento Recibido por el SII. Datos Coinciden con los Registrados', errCode: 0, glosaErr: detalleLines(accepted.errors) }
}

/**
 * MontoDte against the document's own MntTotal as received: in an export, the total in its currency with its decimals
 * (docs/sii-protocol.md §6.6), so a peso amount does not match it. Compared as exact decimals (`1687.50` is `1687.5`),
 * never through a float, which would take two totals of 17 digits that differ in the last one for the same.
 */
export function sameAmount(a: string, b: string): boolean {
  const x = canonicalDecimal(a)
  return x !== null && x === canonicalDecimal(b)
}

/** `-0012.50` → `-12.5`, `0.0` → `0`; null when the text is no plain decimal. */
function canonicalDecimal(text: string): string | null {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text.trim())
  if (m === null) return null
  const int = (m[2] ?? '').replace(/^0+(?=\d)/, '')
  const frac = (m[3] ?? '').replace(/0+$/, '')
  const digits = frac === '' ? int : `${int}.${frac}`
  return digits === '0' ? '0' : `${m[1]}${digits}`
}

/** A copy's reasons as GLOSA_ERR: one detail line each, `; ` between them; '' when it has none. */
function detalleLines(errors: readonly SiiError[]): string {
  return errors.map(detalleLine).join('; ')
}

/** getEstDte's `FechaEmisionDte` is DDMMAAAA (LibreDTE); DSPY sends DD-MM-AAAA; the boleta consulta DD-MM-AAAA (§6.6, §7.3). */
export function parseFechaConsulta(text: string): string | null {
  const m = /^(\d{2})-?(\d{2})-?(\d{4})$/.exec(text.trim())
  return m === null ? null : `${m[3]}-${m[2]}-${m[1]}`
}
