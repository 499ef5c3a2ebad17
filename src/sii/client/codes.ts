// The SII's answer codes as data: what each means (Spanish, as the SII words them, for `tracking.glosa_sii`) and what
// the client does with it. Sources are docs/sii-protocol.md §6.3–§6.6 and §7.3; callers look codes up here instead of switching.

/** DTEUpload `STATUS` (docs/sii-protocol.md §6.4) → how the outcome is classified and the meaning when the SII sends no glosa. */
export const UPLOAD_STATUS: Readonly<Record<string, { readonly kind: 'received' | 'already_received' | 'refused' | 'not_authorized' | 'token_invalid' | 'retry'; readonly glosa: string }>> = {
  '0': { kind: 'received', glosa: 'Upload OK' },
  '1': { kind: 'not_authorized', glosa: 'El Sender no tiene permiso para enviar' },
  '2': { kind: 'refused', glosa: 'Error en tamaño del archivo (muy grande o muy chico)' },
  '3': { kind: 'retry', glosa: 'Archivo cortado (tamaño distinto al parámetro size)' },
  '5': { kind: 'token_invalid', glosa: 'No está autenticado' },
  '6': { kind: 'not_authorized', glosa: 'Empresa no autorizada a enviar archivos' },
  '7': { kind: 'refused', glosa: 'Esquema inválido' },
  '8': { kind: 'refused', glosa: 'Firma del documento' },
  '9': { kind: 'retry', glosa: 'Sistema bloqueado' },
  '99': { kind: 'already_received', glosa: 'Envío ya recibido' },
}

/** Envelope `ESTADO` of getEstUp and of the boleta REST status (docs/sii-protocol.md §6.5, §7.3 item 4). */
export type EnvioEstadoKind = 'pending' | 'rejected' | 'processed'

export const ENVIO_ESTADOS: Readonly<Record<string, { readonly kind: EnvioEstadoKind; readonly glosa: string }>> = {
  REC: { kind: 'pending', glosa: 'Envío recibido' },
  SOK: { kind: 'pending', glosa: 'Esquema validado' },
  CRT: { kind: 'pending', glosa: 'Carátula OK' },
  FOK: { kind: 'pending', glosa: 'Firma de envío validada' },
  PDR: { kind: 'pending', glosa: 'Envío en proceso' },
  PRD: { kind: 'pending', glosa: 'Envío en proceso' },
  EPR: { kind: 'processed', glosa: 'Envío procesado' },
  // ODOO's list for the boleta REST status (§7.3 item 4) has RPR at envelope level: accepted with reparos, counters follow.
  RPR: { kind: 'processed', glosa: 'Aceptado con reparos' },
  RSC: { kind: 'rejected', glosa: 'Rechazado por error en esquema' },
  RCT: { kind: 'rejected', glosa: 'Rechazado por error en carátula' },
  RFR: { kind: 'rejected', glosa: 'Rechazado por error en firma' },
  RCH: { kind: 'rejected', glosa: 'Rechazado por error en información' },
  RPT: { kind: 'rejected', glosa: 'Rechazado: envío repetido' },
  RCO: { kind: 'rejected', glosa: 'Rechazado por inconsistencia' },
  VOF: { kind: 'rejected', glosa: 'No se encontró el archivo .xml' },
  // A certification libro's final states (docs/sii-protocol.md §6.9): LOK accepted (no counters), LRH rejected.
  LOK: { kind: 'processed', glosa: 'Libro aceptado' },
  LRH: { kind: 'rejected', glosa: 'Libro rechazado' },
}

/**
 * Query `ESTADO`s that mean the token is no longer good (docs/sii-protocol.md §6.5: 001 cookie/token inactive, 002 token inactive,
 * 003 token does not exist): get a new token and ask once more (DESIGN §6).
 */
export const TOKEN_INVALID_ESTADOS: ReadonlySet<string> = new Set(['001', '002', '003'])

/** SOAP fault text of a rejected token (ODOO: "Error de Autenticacion: TOKEN invalido", docs/sii-protocol.md §6.3, §6.7). */
export const TOKEN_INVALID_FAULT = /token\s+inv[aá]lido/i

/** getToken `ESTADO`s (docs/sii-protocol.md §6.3 item 3), for the reason of a failed token request. */
export const GET_TOKEN_ESTADOS: Readonly<Record<string, string>> = {
  '00': 'Token creado',
  '01': 'XML inválido (IOException)',
  '02': 'XML inválido (SAXException)',
  '03': 'ParserConfigurationException',
  '04': 'Falta el elemento Signature',
  '05': 'Firma inválida',
  '06': 'Falta el elemento Semilla',
  '07': 'MessageException',
  '08': 'Error en parámetros, semilla vencida o inexistente',
  '09': 'MessageException',
  '10': 'Error al retornar datos',
  '11': 'Falta el elemento Certificate',
  '12': 'MessageException',
  '21': 'Firma inválida: la clave pública no es la del certificado',
  '-3': 'Error en la autenticación',
  '-07': 'Error de validación del RUT: el titular del certificado no está registrado en el SII',
}

/**
 * getToken `ESTADO`s that no retry can fix until someone acts at the SII: the certificate holder is not registered
 * for certificate authentication (docs/sii-protocol.md §6.3). The upload maps them to `not_authorized`, like STATUS 1.
 */
export const TOKEN_NOT_AUTHORIZED_ESTADOS: ReadonlySet<string> = new Set(['-07', '-7'])

/** getSeed `ESTADO` 00 is a seed; -1 and -2 are the SII failing to make one (docs/sii-protocol.md §6.3 item 1). */
export const SEED_OK = '00'

