// `intercambio` (DESIGN §13): every TIMBRE_INBOX_EVERY, one pass of each part of the exchange with other companies.
// Each part keeps its state in the database and is run on its own: a mailbox that is down does not stop the mail
// queue, and a failing part is logged and retried on the next pass.
import type { Deps } from '../services/deps'
import { pollMailboxes } from '../services/inbox'
import { followReceiverEvents } from '../services/intercambio-dte'
import { deliverDueMail } from '../services/mail-outbox'
import { followRecibidos } from '../services/recibidos-sii'
import type { Job } from './scheduler'

const PARTS: ReadonlyArray<readonly [string, (deps: Deps) => Promise<number>]> = [
  ['buzones', pollMailboxes],
  ['correo', deliverDueMail],
  ['recibidos', followRecibidos],
  ['eventos_receptor', followReceiverEvents],
]

export function intercambioJob(everyMs: number): Job {
  return {
    name: 'intercambio',
    everyMs,
    async runOnce(deps: Deps) {
      let handled = 0
      for (const [part, run] of PARTS) {
        try {
          handled += await run(deps)
        } catch (err) {
          deps.log.error('intercambio.part_failed', { part, error: String(err), stack: (err as Error)?.stack })
        }
      }
      return handled
    },
  }
}
