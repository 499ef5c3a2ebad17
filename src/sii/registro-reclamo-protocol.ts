// RegistroReclamoDTE as the SII defines it (docs/sii-protocol.md §6.7): the service's namespace, its answer codes with
// the texts of its manual, the events it lists, and its date-time text. Shared by the client (src/sii/client/
// registro-reclamo.ts), which reads them, and the simulator (src/sii/simulator/registro-reclamo-service.ts), which
// writes them, so both speak the one table.
import { santiagoTimestamp } from '../clock'

/** targetNamespace of the WSDL (ws1 and ws2 alike); the operation element of a request goes in it (§6.7). */
export const REGISTRO_RECLAMO_NS = 'http://ws.registroreclamodte.diii.sdi.sii.cl'

/**
 * The service's path names the ambiente (the manual's WSDL addresses): certificación on ws2, producción on ws1. The
 * simulator serves both on its one origin.
 */
export const REGISTRO_RECLAMO_PATH = {
  certificacion: '/WSREGISTRORECLAMODTECERT/registroreclamodteservice',
  produccion: '/WSREGISTRORECLAMODTE/registroreclamodteservice',
} as const

/** The three operations Timbre uses (the WSDL also has consultarDocDteCedible and getVersion). */
export const REGISTRO_RECLAMO_OPERATIONS = ['ingresarAceptacionReclamoDoc', 'listarEventosHistDoc', 'consultarFechaRecepcionSii'] as const
export type RegistroReclamoOperation = (typeof REGISTRO_RECLAMO_OPERATIONS)[number]

/**
 * `codResp` → `descResp`, as the SII's manual (SII-RCL v1.2, "Parámetros de salida") words them; `XXX` stands for the
 * claim already registered (RCD, RFP, RFT). 20–25 belong to consultarDocDteCedible; 27 is reported by LibreDTE
 * (`RegistroCompraVenta::$estados_ok`), not in the manual. -1 is the SII failing: "retry later".
 */
export const COD_RESP: Readonly<Record<number, string>> = {
  0: 'Acción Completada OK',
  1: 'Rut Emisor Erróneo',
  2: 'Número de Folio Erróneo',
  3: 'Tipo de documento no corresponde',
  4: 'Acción inválida',
  5: 'DTE ya está reclamado por XXX',
  6: 'No se puede acusar recibo de mercadería de DTE previamente reclamado por XXX',
  7: 'Evento registrado previamente',
  8: 'Pasados 8 días después de la recepción no es posible registrar reclamos o eventos',
  9: 'No existen registros de acuerdo a los parámetros ingresados',
  10: 'Documento no emitido y/o recibido en el SII desde el 14 de Enero de 2017 en adelante',
  11: 'No se puede reclamar DTE previamente aceptado',
  12: 'No se puede dar por aceptado DTE previamente rechazado por XXX',
  13: 'No se puede reclamar DTE previamente registrado como que acuso recibo mercadería',
  14: 'Acción autorizada sólo para empresa receptora o emisora',
  15: 'Listado de eventos del documento',
  16: 'Documento no presenta eventos de reclamos o acuse de recibo',
  17: 'Acción autorizada solo para empresa receptora',
  18: 'Documento no ha sido recibido',
  19: 'Reclamo de mercaderías ya realizado',
  20: 'Tipo de documento no es cedible',
  21: 'DTE No cedible, referenciado por nota de crédito de anulación del emisor dentro de los primeros 8 días',
  22: 'No existe registro de reclamo o de recepción de mercadería o servicios',
  23: 'DTE Cedible, sin reclamos',
  24: 'DTE No Cedible, DTE reclamado por el receptor',
  25: 'DTE Cedible, habiendo pasado 8 días se entiende dado acuse de recibo',
  27: 'No se puede registrar un evento (acuse de recibo, reclamo o aceptación de contenido) de un DTE pagado al contado o gratuito',
  [-1]: 'Error Interno. Rut Receptor del Documento debe reintentar enviar la transacción más tarde',
}

/** The manual's text for `codResp`, `XXX` replaced by the claim it names; '' for a code it does not list. */
export function descRespOf(codResp: number, reclamo?: string): string {
  const text = COD_RESP[codResp] ?? ''
  return reclamo === undefined ? text : text.replace('XXX', reclamo)
}

/**
 * `codEvento` → `descEvento`: the receiver's actions as `accionDoc` lists them (ACD's text is the manual's example
 * answer), and the events the SII adds itself from credit notes that reference the document (v1.2).
 */
export const EVENTO_GLOSA: Readonly<Record<string, string>> = {
  ACD: 'Acepta Contenido del Documento',
  RCD: 'Reclamo al Contenido del Documento',
  ERM: 'Otorga Recibo de Mercaderías o Servicios',
  RFP: 'Reclamo por Falta Parcial de Mercaderías',
  RFT: 'Reclamo por Falta Total de Mercaderías',
  NCA: 'Recepción de NC de anulación que referencia al documento',
  ENC: 'Recepción de NC, distinta de anulación, que referencia al documento',
}

/** `fechaEvento` and consultarFechaRecepcionSii's answer: `dd-mm-yyyy hh:mm:ss`, Chile local time (the manual's examples). */
export function formatFechaSii(instant: Date): string {
  const [date = '', time = ''] = santiagoTimestamp(instant).split('T')
  const [yyyy, mm, dd] = date.split('-')
  return `${dd}-${mm}-${yyyy} ${time}`
}

/**
 * The SII's `dd-mm-yyyy hh:mm[:ss]` (America/Santiago) as an RFC 3339 UTC instant with milliseconds (DESIGN §12);
 * null when the text is no such date. A wall time that occurs twice (the autumn change) is read as its first
 * occurrence; one that never occurs (the spring gap) as the instant an hour earlier on the clock.
 */
export function parseFechaSii(text: string): string | null {
  const m = /^(\d{2})-(\d{2})-(\d{4})\s+(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(text.trim())
  if (m === null) return null
  const [d, mo, y, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [number, number, number, number, number, number]
  const wall = Date.UTC(y, mo - 1, d, h, mi, s)
  const check = new Date(wall)
  if (check.getUTCDate() !== d || check.getUTCMonth() !== mo - 1 || h > 23 || mi > 59 || s > 59) return null
  // The offset at a guess, then at the instant it gives: two steps settle it, DST changes included.
  const first = wall - santiagoOffsetMs(wall)
  const instant = wall - santiagoOffsetMs(first)
  return new Date(instant).toISOString()
}

/** Santiago's wall clock minus UTC at `utcMs`, in ms (-3 h or -4 h). */
function santiagoOffsetMs(utcMs: number): number {
  const seconds = Math.floor(utcMs / 1000) * 1000
  const [date = '', time = ''] = santiagoTimestamp(new Date(seconds)).split('T')
  const [y, mo, d] = date.split('-').map(Number) as [number, number, number]
  const [h, mi, s] = time.split(':').map(Number) as [number, number, number]
  return Date.UTC(y, mo - 1, d, h, mi, s) - seconds
}
