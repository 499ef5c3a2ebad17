// The SII jobs' work (DESIGN §6): the DTEs due for an upload or a status query now, each taken through its use case
// with a few in flight, so one slow answer (the SII's 30 s timeout) does not hold the rest.
import { isoTimestamp } from '../clock'
import { findDueForSubmission, findDueForTracking } from '../db/dte-store'
import type { DteRow } from '../db/schema'
import { inBatches } from './batches'
import type { Deps } from './deps'
import { submitCertificacionDue } from './certificacion-emitir'
import { libroPass } from './certificacion-libros'
import { submitDte } from './submit-dte'
import { trackDte } from './track-dte'

const AT_ONCE = 4
const SUBMISSIONS_PER_PASS = 50
const QUERIES_PER_PASS = 100

/** One pass: `work` on every due DTE; a DTE whose work throws is logged and the rest go on (a poisoned row never blocks the queue). */
async function pass(deps: Deps, job: string, due: readonly DteRow[], work: (dte: DteRow) => Promise<unknown>): Promise<number> {
  const results = await inBatches(due, AT_ONCE, work)
  for (const r of results)
    if (r.status === 'rejected') deps.log.error('job.item_failed', { job, error: String(r.reason), stack: (r.reason as Error)?.stack })
  return due.length
}

/**
 * `sii-submit`: firmado (auto_send) and enviando DTEs whose next attempt is due, to the SII; then the certification
 * envelopes the SII has not taken yet (DESIGN §15), which carry a whole set each.
 */
export async function submitDue(deps: Deps): Promise<number> {
  const due = findDueForSubmission(deps.store.db, isoTimestamp(deps.clock.now()), SUBMISSIONS_PER_PASS)
  const dtes = await pass(deps, 'sii-submit', due, (dte) => submitDte(deps, { dteId: dte.id, empresaId: dte.empresa_id }))
  return dtes + (await submitCertificacionDue(deps)) + (await libroPass(deps, 'subir'))
}

/** `sii-track`: procesando DTEs whose next status query is due; then the certification libros the SII holds. */
export async function trackDue(deps: Deps): Promise<number> {
  const due = findDueForTracking(deps.store.db, isoTimestamp(deps.clock.now()), QUERIES_PER_PASS)
  const dtes = await pass(deps, 'sii-track', due, (dte) => trackDte(deps, { dteId: dte.id, empresaId: dte.empresa_id }))
  return dtes + (await libroPass(deps, 'consultar'))
}
