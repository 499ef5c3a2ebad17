// Re-sending an issued DTE to its receiver (issue 27, DESIGN §13 "Sending"): the mail that ended in `error` (refused
// by the server, or the schedule ran out) or was never sent for want of an address (`sin_destinatario`) is queued
// again, as a new row of the outbox, which the `intercambio` job sends on its next pass. The failed row is kept, so
// its last_error still says what happened. docs/decisions/intercambio.md "Re-sending a DTE's mail".
import { isoTimestamp } from '../clock'
import { findDteIntercambio, updateDteIntercambio } from '../db/dte-intercambio-store'
import { findDte } from '../db/dte-store'
import { findEmpresaById } from '../db/empresa-store'
import { enqueueMail, findMailOfDte } from '../db/mail-outbox-store'
import { TimbreError } from '../errors'
import type { Deps } from './deps'
import { toIntercambioRecord, type IntercambioRecord } from './dtes'
import { envioDteSubject, resendAddress } from './intercambio-dte'

/** The exchange estados a person may re-send from: every other one is still on its way or already delivered. */
export const ESTADOS_REENVIABLES = ['error', 'sin_destinatario'] as const

export function canResendIntercambio(estado: string | null | undefined): boolean {
  return (ESTADOS_REENVIABLES as readonly string[]).includes(estado ?? '')
}

/** The refusal says why in its message too, so a person reads the reason and not only the code. */
const notAllowed = (dteId: string, estado: string | null, motivo: string) =>
  new TimbreError('ACCION_NO_PERMITIDA', { message: `No se puede reenviar el correo: ${motivo.charAt(0).toLowerCase()}${motivo.slice(1)}`, context: { dte_id: dteId, intercambio_estado: estado, motivo } })

/** Where a re-send of the DTE's mail would go now (the console shows it beside the button), or null. */
export function resendTarget(deps: Pick<Deps, 'store'>, input: { readonly empresaId: string; readonly id: string }): string | null {
  const dte = findDte(deps.store.db, input.empresaId, input.id)
  if (!dte) throw new TimbreError('NOT_FOUND')
  return resendAddress(deps.store.db, dte)
}

/**
 * POST /dte/{id}/intercambio/reenviar: queues the DTE's mail again and answers its `intercambio` record, now
 * `pendiente`. The address is looked up again, the cliente's current email first (intercambio-dte.ts resendAddress),
 * so a cliente whose email was added or corrected since is the one mailed. `expectedEmail` is the address the person
 * was shown: if it changed meanwhile, nothing is sent and the refusal names the new one. 409 ACCION_NO_PERMITIDA, with
 * `context.motivo` in words, when the exchange is not in `error` or `sin_destinatario`, or when no address is known.
 */
export function resendIntercambio(
  deps: Pick<Deps, 'store' | 'clock' | 'log'>,
  input: { readonly empresaId: string; readonly id: string; readonly expectedEmail?: string | null },
): IntercambioRecord {
  const at = isoTimestamp(deps.clock.now())
  const { empresaId, id } = input
  // IMMEDIATE: two presses of the button at once see one `error`; the second finds `pendiente` and is refused.
  const record = deps.store.db.transaction(
    (tx) => {
      const dte = findDte(tx, empresaId, id)
      if (!dte) throw new TimbreError('NOT_FOUND')
      const row = findDteIntercambio(tx, empresaId, id)
      if (!row) throw notAllowed(id, null, 'El documento aún no se envía al receptor: se envía cuando el SII lo acepta, y las boletas no se envían.')
      if (!canResendIntercambio(row.estado))
        throw notAllowed(id, row.estado, row.estado === 'enviado' ? 'El correo ya fue enviado al receptor.' : 'El correo está en cola y se envía solo; se reenvía solo cuando terminó en error.')
      const email = resendAddress(tx, dte)
      if (email === null) throw notAllowed(id, row.estado, 'Aún no se conoce el correo de intercambio del receptor: agréguelo al cliente con ese RUT.')
      if (input.expectedEmail != null && input.expectedEmail !== email)
        throw notAllowed(id, row.estado, `El correo del receptor cambió mientras tanto: ahora es ${email}. Revíselo y vuelva a reenviar.`)
      const empresa = findEmpresaById(tx, empresaId)
      if (!empresa) throw new Error(`empresa ${empresaId} of DTE ${id} is missing`)
      // The envelope signed for the first attempt is sent again when there is one: the same file the receiver may
      // already hold, still valid whatever happened to the certificate since.
      const previous = findMailOfDte(tx, empresaId, id).filter((m) => m.kind === 'envio_dte' && m.attachment !== null).at(-1)
      enqueueMail(tx, {
        empresaId,
        kind: 'envio_dte',
        dteId: id,
        to: email,
        subject: envioDteSubject(dte, empresa.razon_social),
        attachment: previous?.attachment ?? null,
        attachmentName: previous?.attachment_name ?? null,
        at,
      })
      return toIntercambioRecord(updateDteIntercambio(tx, id, { estado: 'pendiente', email, updated_at: at })!)
    },
    { behavior: 'immediate' },
  )
  deps.log.info('intercambio.resend', { empresa_id: empresaId, dte_id: id })
  return record
}
