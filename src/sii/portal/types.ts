// What the rest of Timbre sees of the SII portal client (src/sii/portal/): the RCV of one company and period, read in
// one session opened by certificate over mutual TLS and always closed (DESIGN §16). Every outcome is a value: a portal
// that refuses, changes or never finishes is a `failed` with a reason the accountant can act on, never a throw.
import type { RegistroCompras, RegistroVentas } from '../../domain/rcv'
import type { SiiCompany, SiiCredentials } from '../client/client'

/** Why a read of the RCV failed; the words for each are the client's `mensaje`. */
export type MotivoFallaPortal =
  /** The portal refused the certificate, or the login ended without a session cookie. */
  | 'login_rechazado'
  /** The SII caps concurrent sessions per RUT (research §2.2 "Limits"). */
  | 'tope_sesiones'
  /** The session ended before the read did ("El token no es valido"). */
  | 'sesion_expirada'
  /** A deferred download stayed CREADO or EN PROCESO past the client's limit. */
  | 'descarga_diferida_sin_terminar'
  /** The SII answered codRespuesta 1, 2 or 99 (not a session problem), or an unknown code. */
  | 'sii_rechazo'
  /** An answer Timbre cannot read: not JSON, fields of the wrong kind, a CSV whose header is not the SII's. */
  | 'respuesta_invalida'
  /** No answer: connection refused or reset, TLS failure, timeout, HTTP 5xx. */
  | 'sin_conexion'

export type RcvReadOutcome =
  | {
      readonly kind: 'ok'
      readonly compras: RegistroCompras
      readonly ventas: RegistroVentas
      /** How many (section, type) details came through the deferred download. */
      readonly diferidas: number
    }
  | { readonly kind: 'failed'; readonly motivo: MotivoFallaPortal; readonly mensaje: string }

export interface RcvPortalClient {
  /**
   * The whole RCV of `periodo` (`YYYYMM`) for `company`: the summary and details of the four sections of the Registro
   * de Compras and of the Registro de Ventas. One session per company at a time (a second call for the same RUT waits
   * for the first), opened with `creds`' certificate and closed (autTermino) whatever happens.
   */
  leerRcv(company: SiiCompany, creds: SiiCredentials, periodo: string): Promise<RcvReadOutcome>
}
