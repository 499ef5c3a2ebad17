// `sii-track` (DESIGN §6): asks the SII about DTEs it holds until each reaches a final state.
import type { Deps } from '../services/deps'
import { trackDue } from '../services/sii-queue'
import type { Job } from './scheduler'

export function siiTrackJob(everyMs: number): Job {
  return { name: 'sii-track', everyMs, runOnce: (deps: Deps) => trackDue(deps) }
}
