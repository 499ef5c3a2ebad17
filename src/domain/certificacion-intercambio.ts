// Certification's intercambio stage (DESIGN §15 `POST /certificacion/intercambio`, research/next-capabilities.md §1.2
// stage 3): the SII's test EnvioDTE, from its test issuer 88888888-8, holds one DTE for the company and one for another
// RUT; the company answers with three signed files. Pure: which envelope is the SII's test, which code each DTE gets,
// which DTEs get a receipt, and the files' names. Every reading is in docs/decisions/certificacion.md «Intercambio».
import type { FieldError } from '../errors'
import {
  ESTADO_RECEP_DTE,
  ESTADO_RESULTADO_DTE,
  GLOSA_RECEP_DTE,
  type CheckName,
  type CheckResult,
  type EstadoRecepDte,
  type EstadoResultadoDte,
} from './intercambio'

/** The SII's test issuer: every set de intercambio comes from it (research §1.2 stage 3; the 2026 file, X-msi). */
export const RUT_EMISOR_INTERCAMBIO = '88888888-8'

/** The RUT the SII's 2026 set addresses its second DTE to ("RUT DE PRUEBA PORTAL"), a RUT it keeps for tests. */
export const OTRO_RUT_INTERCAMBIO = '69507000-4'

/** The three files the SII takes on its site, in the order it asks for them (LibreDTE's zip has these names, research §1.5). */
export const ARCHIVOS_INTERCAMBIO = {
  recepcion: '1_RecepcionDTE.xml',
  recibos: '2_EnvioRecibos.xml',
  resultado: '3_ResultadoDTE.xml',
} as const

/**
 * The checks that decide a DTE's codes, in DESIGN §13's order of precedence (the envelope's first, then the specific
 * codes). `ted`, `caf` and `duplicado` run and are reported but decide nothing here: the SII's own 2026 test envelope
 * carries a CAF under IDK 1, a key the SII never published, with a folio range that does not hold its folios, and one
 * FRMT copied onto both DTEs, so its TEDs never verify; yet the DTE for the company is to be accepted (EstadoRecepDTE 0,
 * EstadoDTE 0, as the 2026 answers published with that envelope say). LibreDTE's answer looks at these same checks.
 */
const DECIDING: ReadonlyArray<readonly [CheckName, EstadoRecepDte]> = [
  ['schema', ESTADO_RECEP_DTE.otros],
  ['firma_envio', ESTADO_RECEP_DTE.errorFirma],
  ['receptor_envio', ESTADO_RECEP_DTE.errorRutReceptor],
  ['firma_dte', ESTADO_RECEP_DTE.errorFirma],
  ['emisor', ESTADO_RECEP_DTE.errorRutEmisor],
  ['receptor', ESTADO_RECEP_DTE.errorRutReceptor],
]

/** ResultadoDTE/EstadoDTEGlosa by the check that rejected the DTE (research §1.2: "DTE Rechazado - RUT Receptor no corresponde"). */
const GLOSA_RECHAZO: Readonly<Partial<Record<CheckName, string>>> = {
  schema: 'DTE Rechazado - Error de Schema',
  firma_envio: 'DTE Rechazado - Error de Firma',
  receptor_envio: 'DTE Rechazado - RUT Receptor no corresponde',
  firma_dte: 'DTE Rechazado - Error de Firma',
  emisor: 'DTE Rechazado - RUT Emisor no corresponde',
  receptor: 'DTE Rechazado - RUT Receptor no corresponde',
}
const GLOSA_ACEPTADO = 'DTE Aceptado - Mercadería Conforme'

/** What the company answers about one DTE of the test envelope. */
export interface RespuestaDocumento {
  /** RecepcionDTE/EstadoRecepDTE (1_RecepcionDTE.xml). */
  readonly estadoRecepDte: EstadoRecepDte
  readonly glosaRecepcion: string
  /** ResultadoDTE/EstadoDTE (3_ResultadoDTE.xml): 0 accepted, 2 rejected; never 1 (the SII's test has no discrepancies). */
  readonly estadoDte: EstadoResultadoDte
  readonly glosaResultado: string
  /** The check that refused it; null when accepted. */
  readonly decide: CheckName | null
  /** It gets a Recibo in 2_EnvioRecibos.xml (Ley 19.983): only what is accepted is declared received. */
  readonly recibo: boolean
}

/** The codes of one DTE from its checks (as xml/received-envio.ts lists them: the envelope's three, then its own). */
export function respuestaDocumento(checks: readonly CheckResult[]): RespuestaDocumento {
  for (const [name, code] of DECIDING) {
    const failed = checks.find((c) => c.check === name && !c.ok)
    if (failed === undefined) continue
    return {
      estadoRecepDte: code,
      glosaRecepcion: withDetalle(GLOSA_RECEP_DTE[code], failed.detalle),
      estadoDte: ESTADO_RESULTADO_DTE.rechazado,
      glosaResultado: GLOSA_RECHAZO[name] ?? 'DTE Rechazado',
      decide: name,
      recibo: false,
    }
  }
  return {
    estadoRecepDte: ESTADO_RECEP_DTE.ok,
    glosaRecepcion: GLOSA_RECEP_DTE[ESTADO_RECEP_DTE.ok],
    estadoDte: ESTADO_RESULTADO_DTE.aceptado,
    glosaResultado: GLOSA_ACEPTADO,
    decide: null,
    recibo: true,
  }
}

/** What the refusals below read of a checked envelope (xml/received-envio.ts ReceivedEnvio has these fields). */
export interface EnvioIntercambio {
  /** Caratula RutEmisor and RutReceptor, canonical; null when absent or not RUTs. */
  readonly rutEmisor: string | null
  readonly rutReceptor: string | null
  /** RUTRecep of each DTE that can be named in an answer, canonical when valid. */
  readonly receptores: readonly string[]
}

/**
 * Why the file is not the company's set de intercambio (a 400 at `field`, DESIGN §15), or null. Not the SII's: its
 * Caratula names another issuer. Not this company's: its Caratula is addressed to another RUT (the SII addresses the
 * envelope to the company whose set it is), or no DTE in it is addressed to the company. Answers built for such a file
 * would only fail at the SII's site.
 */
export function problemaIntercambio(envio: EnvioIntercambio, rutEmpresa: string, field: string): FieldError | null {
  if (envio.rutEmisor !== RUT_EMISOR_INTERCAMBIO)
    return {
      field, code: 'INVALID_VALUE',
      message: `El envío es de ${envio.rutEmisor ?? '(sin RutEmisor válido)'}, no del SII: el set de intercambio lo emite ${RUT_EMISOR_INTERCAMBIO}. Descárguelo del sitio del SII.`,
    }
  if (envio.rutReceptor !== rutEmpresa)
    return {
      field, code: 'INVALID_VALUE',
      message: `El envío está dirigido a ${envio.rutReceptor ?? '(sin RutReceptor válido)'}, no a ${rutEmpresa}: es el set de intercambio de otra empresa.`,
    }
  if (!envio.receptores.includes(rutEmpresa)) {
    const otros = [...new Set(envio.receptores)].join(', ') || 'ninguno identificable'
    return { field, code: 'INVALID_VALUE', message: `Ningún DTE del envío está dirigido a ${rutEmpresa} (receptores: ${otros}).` }
  }
  return null
}

/** Where the goods were received (Recibo/Recinto, 80 characters): the company's address, as the ERM receipts say. */
export function recintoDe(empresa: { readonly direccion: string; readonly comuna: string }): string {
  return `${empresa.direccion}, ${empresa.comuna}`.slice(0, 80)
}

function withDetalle(glosa: string, detalle: string): string {
  return detalle === '' ? glosa : `${glosa}: ${detalle}`
}
