// The exchange between companies (DESIGN §13): the SII's receipt codes, the states of a received document, the
// receiver's actions at the SII (RegistroReclamoDTE, docs/sii-protocol.md §6.7) and the rules about their order and
// their 8-day limit. Pure: the services apply these to the store, the xml/ builders write these codes.

/** Types whose acceptance or claim is registered at the SII (Ley 19.983): the others cannot be acted on. */
export const TIPOS_CON_ACCION = [33, 34, 43] as const

/** Types mailed to the receiver: every type but the boletas (DESIGN §13). */
export function isMailedToReceiver(tipoDte: number): boolean {
  return tipoDte !== 39 && tipoDte !== 41
}

/** RespuestaDTE RecepcionEnvio/EstadoRecepEnv (RespuestaEnvioDTE_v10.xsd): the envelope as a whole. */
export const ESTADO_RECEP_ENV = {
  conforme: 0,
  errorSchema: 1,
  errorFirma: 2,
  rutReceptorNoCorresponde: 3,
  archivoRepetido: 90,
  archivoIlegible: 91,
  otros: 99,
} as const
export type EstadoRecepEnv = (typeof ESTADO_RECEP_ENV)[keyof typeof ESTADO_RECEP_ENV]

/** The XSD's own documentation of each EstadoRecepEnv, the glosa written beside it. */
export const GLOSA_RECEP_ENV: Readonly<Record<EstadoRecepEnv, string>> = {
  0: 'Envio Recibido Conforme',
  1: 'Envio Rechazado - Error de Schema',
  2: 'Envio Rechazado - Error de Firma',
  3: 'Envio Rechazado - RUT Receptor No Corresponde',
  90: 'Envio Rechazado - Archivo Repetido',
  91: 'Envio Rechazado - Archivo Ilegible',
  99: 'Envio Rechazado - Otros',
}

/** RecepcionDTE/EstadoRecepDTE: each document of the envelope. */
export const ESTADO_RECEP_DTE = {
  ok: 0,
  errorFirma: 1,
  errorRutEmisor: 2,
  errorRutReceptor: 3,
  repetido: 4,
  otros: 99,
} as const
export type EstadoRecepDte = (typeof ESTADO_RECEP_DTE)[keyof typeof ESTADO_RECEP_DTE]

export const GLOSA_RECEP_DTE: Readonly<Record<EstadoRecepDte, string>> = {
  0: 'DTE Recibido OK',
  1: 'DTE No Recibido - Error de Firma',
  2: 'DTE No Recibido - Error en RUT Emisor',
  3: 'DTE No Recibido - Error en RUT Receptor',
  4: 'DTE No Recibido - DTE Repetido',
  99: 'DTE No Recibido - Otros',
}

/** ResultadoDTE/EstadoDTE: the commercial answer (0 accepted, 1 accepted with discrepancies, 2 rejected). */
export const ESTADO_RESULTADO_DTE = { aceptado: 0, aceptadoConDiscrepancias: 1, rechazado: 2 } as const
export type EstadoResultadoDte = (typeof ESTADO_RESULTADO_DTE)[keyof typeof ESTADO_RESULTADO_DTE]

/** States of a received document (DESIGN §13). */
export const ESTADOS_RECIBIDO = ['recibido', 'rechazado_tecnico', 'aceptado', 'reclamado', 'aceptado_tacito'] as const
export type EstadoRecibido = (typeof ESTADOS_RECIBIDO)[number]

export function isEstadoRecibido(value: string): value is EstadoRecibido {
  return (ESTADOS_RECIBIDO as readonly string[]).includes(value)
}

/**
 * The receiver's actions (docs/sii-protocol.md §6.7): ACD accept the content, RCD claim the content, ERM receipt of
 * goods or services (Ley 19.983), RFP / RFT claim for partial / total lack of goods.
 */
export const ACCIONES = ['ACD', 'RCD', 'ERM', 'RFP', 'RFT'] as const
export type Accion = (typeof ACCIONES)[number]

export function isAccion(value: unknown): value is Accion {
  return typeof value === 'string' && (ACCIONES as readonly string[]).includes(value)
}

/** An action accepts (ACD, ERM) or claims (RCD, RFP, RFT) the document. */
export function isClaim(accion: Accion): boolean {
  return accion === 'RCD' || accion === 'RFP' || accion === 'RFT'
}

/** The estado a received document takes once the SII registered `accion`. */
export function estadoAfterAccion(accion: Accion): EstadoRecibido {
  return isClaim(accion) ? 'reclamado' : 'aceptado'
}

/** Days the receiver has, counted from the SII's reception of the document (Ley 19.983 art. 3). */
export const PLAZO_DIAS = 8
/** `recibido.plazo_por_vencer` fires this long before the limit when no action was taken (DESIGN §13). */
export const PLAZO_AVISO_DIAS = 2
const DAY_MS = 24 * 60 * 60_000

/** The instant the 8 days end, from the SII's reception instant. */
export function plazoFrom(recepcionSii: Date): Date {
  return new Date(recepcionSii.getTime() + PLAZO_DIAS * DAY_MS)
}

/** True once `now` is within PLAZO_AVISO_DIAS of the limit (and the limit has not passed). */
export function isPlazoPorVencer(plazo: Date, now: Date): boolean {
  const left = plazo.getTime() - now.getTime()
  return left > 0 && left <= PLAZO_AVISO_DIAS * DAY_MS
}

/** An action already registered for a document, as the SII lists them. */
export interface AccionRegistrada {
  readonly accion: Accion
}

export type AccionVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: 'ACCION_NO_PERMITIDA' | 'PLAZO_VENCIDO'; readonly reason: string }

/**
 * Whether `accion` may be registered now (DESIGN §13: only 33, 34, 43; only within the 8 days; only in the SII's
 * order). The SII's order: a document is accepted or claimed once — after ACD or any claim no second ACD or claim —
 * and the receipt of goods (ERM) goes with acceptance: not after a claim, and once. ERM after ACD is allowed (the
 * receipt comes when the goods arrive), and ACD after ERM is pointless but harmless: ERM already accepts, so it is
 * refused as already accepted.
 */
export function checkAccion(input: {
  readonly tipoDte: number
  readonly estado: EstadoRecibido
  readonly plazo: Date | null
  readonly now: Date
  readonly previas: readonly AccionRegistrada[]
  readonly accion: Accion
}): AccionVerdict {
  const { accion, previas } = input
  if (!(TIPOS_CON_ACCION as readonly number[]).includes(input.tipoDte))
    return { ok: false, code: 'ACCION_NO_PERMITIDA', reason: `el tipo ${input.tipoDte} no admite aceptación ni reclamo en el SII (solo 33, 34 y 43)` }
  if (input.estado === 'rechazado_tecnico')
    return { ok: false, code: 'ACCION_NO_PERMITIDA', reason: 'el documento no pasó las validaciones de recepción' }
  if (input.estado === 'aceptado_tacito')
    return { ok: false, code: 'PLAZO_VENCIDO', reason: 'pasaron los 8 días: el documento quedó aceptado tácitamente' }
  if (input.plazo !== null && input.now.getTime() > input.plazo.getTime())
    return { ok: false, code: 'PLAZO_VENCIDO', reason: `el plazo de 8 días venció el ${input.plazo.toISOString()}` }
  const hecho = new Set(previas.map((p) => p.accion))
  const claimed = [...hecho].some(isClaim)
  if (claimed) return { ok: false, code: 'ACCION_NO_PERMITIDA', reason: 'el documento ya fue reclamado' }
  if (accion === 'ERM' && hecho.has('ERM')) return { ok: false, code: 'ACCION_NO_PERMITIDA', reason: 'el acuse de recibo de mercaderías ya fue registrado' }
  if (accion !== 'ERM' && (hecho.has('ACD') || hecho.has('ERM')))
    return { ok: false, code: 'ACCION_NO_PERMITIDA', reason: 'el documento ya fue aceptado' }
  return { ok: true }
}

/** One check of a received document or envelope, as recorded and shown (DESIGN §13 `checks`). */
export interface CheckResult {
  /** schema | firma_envio | firma_dte | ted | caf | receptor | emisor | duplicado */
  readonly check: CheckName
  readonly ok: boolean
  /** Spanish, for a person: what was found; empty text when ok. */
  readonly detalle: string
}

export const CHECK_NAMES = ['schema', 'firma_envio', 'receptor_envio', 'firma_dte', 'ted', 'caf', 'receptor', 'emisor', 'duplicado'] as const
export type CheckName = (typeof CHECK_NAMES)[number]

/** `intercambio.estado` of an issued DTE (DESIGN §13). */
export const ESTADOS_INTERCAMBIO = ['pendiente', 'enviado', 'sin_destinatario', 'error'] as const
export type EstadoIntercambio = (typeof ESTADOS_INTERCAMBIO)[number]

/** `inbound_status` of the company record (DESIGN §13). */
export const INBOUND_STATUSES = ['sin_configurar', 'activo', 'error'] as const
export type InboundStatus = (typeof INBOUND_STATUSES)[number]
