// The one table of estado words the console shows (issue 27 "Consistency"): issued and received documents share their
// estados (`aceptado` reads the same on both), and every badge, filter and detail takes its label and colour from here,
// so the same word is never capitalised two ways. Sentence case, as the rest of the console's labels.
import type { EstadoDte } from '../domain/estados'
import type { EstadoRecibido } from '../domain/intercambio'

type Estado = EstadoDte | EstadoRecibido

export const ESTADO_LABEL: Readonly<Record<Estado, string>> = {
  borrador: 'Borrador',
  generado: 'Generado',
  firmado: 'Firmado',
  enviando: 'Enviando al SII',
  procesando: 'Procesando en el SII',
  aceptado: 'Aceptado',
  rechazado: 'Rechazado',
  // The SII's own words ("Aceptado con Reparos"): the document is valid, with observations.
  con_reparos: 'Aceptado con reparos',
  recibido: 'Recibido',
  rechazado_tecnico: 'Rechazado técnico',
  reclamado: 'Reclamado',
  aceptado_tacito: 'Aceptado tácito',
}

export const ESTADO_BADGE: Readonly<Record<Estado, string>> = {
  borrador: 'badge-neutral',
  generado: 'badge-neutral',
  firmado: 'badge-neutral',
  enviando: 'badge-info',
  procesando: 'badge-info',
  aceptado: 'badge-ok',
  rechazado: 'badge-bad',
  con_reparos: 'badge-warn',
  recibido: 'badge-info',
  rechazado_tecnico: 'badge-bad',
  reclamado: 'badge-warn',
  aceptado_tacito: 'badge-ok',
}

/** A stored estado the table does not know (a newer value, DESIGN §12 "Compatibility") shows as it came. */
export const estadoLabel = (estado: string): string => ESTADO_LABEL[estado as Estado] ?? estado
export const estadoBadge = (estado: string): string => ESTADO_BADGE[estado as Estado] ?? 'badge-neutral'

/** A received document's action at the SII (DESIGN §13 "Acting on a received DTE"). */
export const ACCION_ESTADO_LABEL = { registrada: 'Registrada', pendiente: 'Pendiente', rechazada: 'Rechazada' } as const
export const ACCION_ESTADO_BADGE = { registrada: 'badge-ok', pendiente: 'badge-warn', rechazada: 'badge-bad' } as const

/** The exchange with the receiver of an issued DTE (DESIGN §13 `intercambio.estado`). */
export const INTERCAMBIO_LABEL: Readonly<Record<string, string>> = {
  pendiente: 'Pendiente de envío',
  enviado: 'Enviado',
  sin_destinatario: 'Sin destinatario: no se conoce el correo de intercambio del receptor',
  error: 'Error al enviar',
}

/** The SII certification's stages and their estados (DESIGN §15 "Stages"), in the words of the SII's own site. */
export const ETAPA_LABEL: Readonly<Record<string, string>> = {
  set_pruebas: 'Set de pruebas',
  simulacion: 'Simulación',
  intercambio: 'Intercambio de información',
  muestras: 'Muestras de impresión',
  declaracion: 'Declaración de cumplimiento',
}

export const ESTADO_ETAPA_LABEL: Readonly<Record<string, string>> = {
  pendiente: 'Pendiente',
  en_curso: 'En curso',
  // The SII holds the envíos; the person declares the progress on its site (DESIGN §15).
  enviado: 'Enviado: falta declarar el avance',
  con_errores: 'Con errores',
  aprobado: 'Aprobado',
}

export const ESTADO_ETAPA_BADGE: Readonly<Record<string, string>> = {
  pendiente: 'badge-neutral',
  en_curso: 'badge-info',
  enviado: 'badge-warn',
  con_errores: 'badge-bad',
  aprobado: 'badge-ok',
}

/** A certification envío's or case's estado: the DTE estados above, plus what only certification has. */
export function certificacionEstadoLabel(estado: string): string {
  if (estado === 'sin_emitir') return 'Sin emitir'
  if (estado === 'por_enviar') return 'Por enviar al SII'
  return estadoLabel(estado)
}

export function certificacionEstadoBadge(estado: string): string {
  if (estado === 'por_enviar') return 'badge-info'
  return estadoBadge(estado)
}

/** The RCV mirror's sync state (services/rcv.ts EstadoSincronizacion), in words and colour. */
export const ESTADO_RCV_LABEL: Readonly<Record<string, string>> = {
  sin_sincronizar: 'Sin leer del SII',
  pendiente: 'Lectura pedida',
  sincronizando: 'Leyendo del SII',
  sincronizado: 'Copia al día',
  // The last good copy, if any, stays: the words say the attempt failed, not that nothing is there.
  fallido: 'Falló la última lectura',
}

export const ESTADO_RCV_BADGE: Readonly<Record<string, string>> = {
  sin_sincronizar: 'badge-neutral',
  pendiente: 'badge-info',
  sincronizando: 'badge-info',
  sincronizado: 'badge-ok',
  fallido: 'badge-bad',
}

/** The Registro de Compras' four sections, as the SII's portal names them. */
export const SECCION_COMPRAS_LABEL: Readonly<Record<string, string>> = {
  registro: 'Registro',
  pendiente: 'Pendientes',
  no_incluir: 'No incluir',
  reclamado: 'Reclamados',
}

/** The reconciliation's kinds of finding (domain/conciliacion.ts TIPOS_HALLAZGO), each as a heading. */
export const HALLAZGO_LABEL: Readonly<Record<string, string>> = {
  recibido_sin_registro: 'Recibidos que no están en el Registro de Compras',
  compra_sin_documento: 'Compras del RCV sin documento en Timbre',
  montos_distintos: 'Montos distintos entre Timbre y el RCV',
  emitido_sin_registro: 'Emitidos que no están en el Registro de Ventas',
  venta_sin_documento: 'Ventas del RCV no emitidas por Timbre',
  pendiente_aceptacion: 'Compras pendientes de aceptación',
  nota_sobre_reclamada: 'Notas sobre facturas reclamadas',
  boleta_duplicada: 'Boletas duplicadas en el Registro de Ventas',
}

export const rcvEstadoLabel = (estado: string): string => ESTADO_RCV_LABEL[estado] ?? estado
export const rcvEstadoBadge = (estado: string): string => ESTADO_RCV_BADGE[estado] ?? 'badge-neutral'
