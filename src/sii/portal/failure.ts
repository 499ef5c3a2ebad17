// A read that cannot go on: why (MotivoFallaPortal, types.ts), the words for the accountant, and the technical detail
// for the log. Thrown inside the portal client to leave a sequence of a dozen requests at the first failure, and
// caught at its one door (leerRcv), which returns it as a value: callers never see a throw.
import type { MotivoFallaPortal } from './types'

export class PortalFailure extends Error {
  constructor(
    readonly motivo: MotivoFallaPortal,
    /** Spanish, for the accountant: what happened and, where it helps, what to do. */
    readonly mensaje: string,
    /** English, for the log: the request and the technical reason. Never a cookie, a token or a key. */
    readonly detail: string,
  ) {
    super(`${motivo}: ${detail}`)
  }
}

/** Network, TLS, timeout, 5xx: the SII did not answer. The next sync tries again. */
export function sinConexion(where: string, reason: string): PortalFailure {
  return new PortalFailure('sin_conexion', `No hubo respuesta del portal del SII (${where}): ${reason}. Timbre lo intentará de nuevo en la próxima sincronización.`, `${where}: ${reason}`)
}

/** An answer Timbre cannot read: the SII changed something, or sent an error page where data was expected. */
export function respuestaInvalida(where: string, reason: string): PortalFailure {
  return new PortalFailure('respuesta_invalida', `El portal del SII respondió algo que Timbre no sabe leer (${where}): ${reason}`, `${where}: ${reason}`)
}
