// The SII's result mail (RESULTADO_ENVIO, RespSII_v10.xsd) that reaches the company's exchange mailbox (DESIGN §13
// "The SII's own mail"). Against the real SII's SOAP channel the reasons of a rejection or a reparo come only by this
// mail (docs/sii-protocol.md §6.5), so it fills what the status queries could not: each listed document's reasons go
// to its `historial_sii` and, once the DTE has its final `sii_status`, into `sii_status.motivos` and `glosa_sii`.
// A mail read before the tracking job reached the final state keeps its reasons in `historial_sii` only.
import { isoTimestamp } from '../clock'
import { findDtesByTrackId, updateDteIf } from '../db/dte-store'
import { insertTrackingEvent } from '../db/dte-tracking-store'
import { ESTADOS_FINALES } from '../domain/estados'
import { glosaDeMotivos, uniqueMotivos, type MotivoSii } from '../domain/sii-respuestas'
import type { RespSiiRead } from '../xml/resp-sii'
import type { Deps } from './deps'

export function applyRespSii(deps: Pick<Deps, 'store' | 'clock'>, input: { empresaId: string; read: RespSiiRead }): { matched: number } {
  const { read } = input
  const at = isoTimestamp(deps.clock.now())
  return deps.store.db.transaction((tx) => {
    let matched = 0
    for (const dte of findDtesByTrackId(tx, input.empresaId, read.trackId)) {
      const doc = read.documentos.find((d) => d.tipoDte === dte.tipo_dte && d.folio === dte.folio)
      // An envelope refused as a whole (ERRORENVIO) speaks for every DTE it held.
      const motivos: MotivoSii[] = doc?.motivos ?? (read.glosa ? [{ codigo: read.estado, glosa: read.glosa, detalle: null, nivel: null, fuente: 'estado_envio' }] : [])
      if (motivos.length === 0) continue
      insertTrackingEvent(tx, {
        empresa_id: dte.empresa_id, dte_id: dte.id, at, canal: 'soap', operacion: 'estado_envio', track_id: dte.track_id,
        estado: doc?.estado ?? read.estado, glosa: glosaDeMotivos(motivos), err_code: null, glosa_err: null, num_atencion: null, estadistica: null, motivos,
      })
      if (dte.sii_status !== null && (ESTADOS_FINALES as readonly string[]).includes(dte.estado)) {
        const before = (dte.sii_status.motivos as MotivoSii[] | undefined) ?? []
        const merged = uniqueMotivos([...before, ...motivos])
        updateDteIf(tx, dte.id, [dte.estado], {
          sii_status: { ...dte.sii_status, motivos: merged, glosa: dte.sii_status.glosa ?? glosaDeMotivos(merged) },
          glosa_sii: glosaDeMotivos(merged) ?? dte.glosa_sii,
          updated_at: at,
        })
      }
      matched++
    }
    return { matched }
  })
}
