// `sii-submit` (DESIGN §6): takes due DTEs to the SII; croner's `protect` keeps runs from overlapping.
import type { Deps } from '../services/deps'
import { submitDue } from '../services/sii-queue'
import type { Job } from './scheduler'

export function siiSubmitJob(everyMs: number): Job {
  return { name: 'sii-submit', everyMs, runOnce: (deps: Deps) => submitDue(deps) }
}
