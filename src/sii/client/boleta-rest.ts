// The boleta REST API's status answers (docs/sii-protocol.md §7.3 items 4–5): the envelope's estado with estadistica and
// detalle_rep_rech, and one boleta's codigo. JSON; HTTP 401 is an invalid token; 404 an unknown track id.
import { uniqueMotivos, type DteStatusOutcome, type EnvioDocumento, type EnvioEstadistica, type EnvioOutcome, type MotivoSii } from '../../domain/sii-respuestas'
import { detalleMotivos } from '../../domain/sii-respuestas'
import { ENVIO_ESTADOS } from './codes'
import { passingFault, snippet, type HttpResult } from './http'
import { intField, isObject, jsonField, parseJsonObject, stringField, type JsonObject } from './json'
import { dteMotivos, envioMotivos, processed, type QueryTokenRejected } from './queries'

type Checked = { readonly kind: 'json'; readonly json: JsonObject; readonly raw: string } | { readonly kind: 'retry'; readonly reason: string; readonly raw?: string } | QueryTokenRejected

/** Status checks every REST answer goes through before its fields are read. */
function checkedJson(res: HttpResult, what: string): Checked {
  if (res.kind === 'failure') return { kind: 'retry', reason: res.reason }
  const raw = res.text
  if (res.status === 401) return { kind: 'token_invalid', estado: 'HTTP 401', raw }
  const fault = passingFault(res)
  if (fault !== null) return { kind: 'retry', reason: fault, raw }
  if (res.status === 404) return { kind: 'retry', reason: `HTTP 404: ${what} unknown to the SII`, raw }
  if (res.status < 200 || res.status > 299) return { kind: 'retry', reason: `HTTP ${res.status}: ${snippet(raw)}`, raw }
  const json = parseJsonObject(raw)
  return typeof json === 'string' ? { kind: 'retry', reason: json, raw } : { kind: 'json', json, raw }
}

/** `GET boleta.electronica.envio/{rut}-{dv}-{trackid}` → outcome (§7.3 item 4). */
export function boletaEnvioOutcome(res: HttpResult): EnvioOutcome | QueryTokenRejected {
  const checked = checkedJson(res, 'track id')
  if (checked.kind !== 'json') return checked
  const { json, raw } = checked
  const estado = stringField(json, 'estado') ?? ''
  if (estado === '') return { kind: 'retry', reason: 'boleta envío status without estado', raw }
  const glosa = stringField(json, 'glosa') ?? stringField(json, 'descripcion')
  const known = ENVIO_ESTADOS[estado]
  if (known?.kind === 'rejected') {
    // The SII's own example lists a carátula error inside detalle_rep_rech (§7.3): the envelope's reasons are there.
    const docs = detalle(json)
    const motivos = uniqueMotivos(docs.flatMap((d) => d.motivos))
    return { kind: 'rejected', estado, glosa, motivos: motivos.length > 0 ? motivos : envioMotivos(estado, glosa), detalle: docs, raw }
  }
  if (known?.kind === 'processed') return processed(estado, glosa, estadistica(json), raw, detalle(json))
  return { kind: 'pending', estado, glosa, raw }
}

function estadistica(json: JsonObject): EnvioEstadistica[] {
  return arrayField(json, 'estadistica').map((g) => ({
    tipo: intField(g, 'tipo'), informados: intField(g, 'informados'), aceptados: intField(g, 'aceptados'),
    rechazados: intField(g, 'rechazados'), reparos: intField(g, 'reparos'),
  }))
}

/** `detalle_rep_rech`: the boletas with reparos or rejected, each with its error lines; `null` until processed (§7.3). */
function detalle(json: JsonObject): EnvioDocumento[] {
  return arrayField(json, 'detalle_rep_rech').map((d) => {
    const motivos = arrayField(d, 'error').map(errorMotivo)
    return {
      tipo: intField(d, 'tipo'), folio: intField(d, 'folio'), estado: stringField(d, 'estado') ?? '',
      descripcion: stringField(d, 'descripcion') ?? (motivos.map((m) => m.glosa).join('; ') || null), motivos,
    }
  })
}

/**
 * One `error[]` line (`{"seccion": "CRT", "linea": 155, "nivel": 3, "codigo": 11, "descripcion": …, "detalle": …}`) as a
 * reason coded `CRT-3-11`, the SII's REVISIONDTE form.
 */
function errorMotivo(e: JsonObject): MotivoSii {
  const seccion = stringField(e, 'seccion') ?? '?'
  const nivel = jsonField(e, 'nivel') === undefined ? null : intField(e, 'nivel')
  const codigo = stringField(e, 'codigo') ?? '?'
  const linea = intField(e, 'linea')
  const detalle = [stringField(e, 'detalle'), linea > 0 ? `línea ${linea}` : null].filter((t) => t !== null && t !== '').join(' — ') || null
  return { codigo: `${seccion}-${nivel ?? '?'}-${codigo}`, glosa: stringField(e, 'descripcion') ?? '', detalle, nivel, fuente: 'estado_envio' }
}

function arrayField(obj: JsonObject, name: string): JsonObject[] {
  const v = jsonField(obj, name)
  return Array.isArray(v) ? v.filter(isObject) : []
}

/** `GET boleta.electronica/{rut}-{dv}-{tipo}-{folio}/estado` → `{"codigo": "DOK", "descripcion": "…"}` (§7.3 item 5). */
export function boletaDteStatusOutcome(res: HttpResult): DteStatusOutcome | QueryTokenRejected {
  const checked = checkedJson(res, 'boleta')
  if (checked.kind !== 'json') return checked
  const { json, raw } = checked
  const codigo = stringField(json, 'codigo') ?? stringField(json, 'estado') ?? ''
  if (codigo === '') return { kind: 'retry', reason: 'boleta status without codigo', raw }
  const descripcion = stringField(json, 'descripcion')
  // The consulta has no ERR_CODE/GLOSA_ERR: its descripcion may hold the detail lines (`(RCV-3-1) …`).
  const lines = detalleMotivos(descripcion, 'estado_dte')
  const motivos = lines.length > 0 ? lines : dteMotivos(codigo, descripcion, null, null)
  return { kind: 'status', estado: codigo, glosaEstado: descripcion, errCode: null, glosaErr: null, numAtencion: null, motivos, raw }
}
