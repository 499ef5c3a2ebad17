// The issuer and the receiver as a DTE names them (issue 27: "the detail page shows the receptor as issued"): read
// from its signed XML, as the PDF prints them (DESIGN §12 "the PDF prints the signed XML's text"), not from today's
// empresa or cliente records, which may have changed since.
import { findDte } from '../db/dte-store'
import { TimbreError } from '../errors'
import type { Deps } from './deps'
import { readDteView, type EmisorView, type ReceptorView } from '../pdf/dte-view'

export interface PartesEmitidas {
  readonly emisor: EmisorView
  readonly receptor: ReceptorView
  /**
   * The receiver's mailbox of the request (receptor.email): the XML's CorreoRecep when it was written, else the
   * request's own (an address over the XSD's 80 characters, or a DTE issued before CorreoRecep was written).
   */
  readonly emailReceptor: string | null
}

export function getPartesEmitidas(deps: Pick<Deps, 'store'>, input: { readonly empresaId: string; readonly id: string }): PartesEmitidas {
  const row = findDte(deps.store.db, input.empresaId, input.id)
  if (!row) throw new TimbreError('NOT_FOUND')
  const view = readDteView(Buffer.from(row.xml).toString('latin1'))
  const requested = (row.request as { receptor?: { email?: unknown } }).receptor?.email
  return { emisor: view.emisor, receptor: view.receptor, emailReceptor: view.receptor.correo ?? (typeof requested === 'string' ? requested : null) }
}
