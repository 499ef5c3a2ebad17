// `folios` (DESIGN §17): automatic mode's check, then the CAF requests and annulments due at the SII's folio pages,
// within seconds of being asked (every 5 s by default, `--folios-every`). Each holds one portal session; croner's
// `protect` keeps two passes from overlapping.
import { runFoliosPass } from '../services/caf-solicitudes'
import type { Deps } from '../services/deps'
import type { Job } from './scheduler'

export function foliosJob(everyMs: number): Job {
  return { name: 'folios', everyMs, runOnce: (deps: Deps) => runFoliosPass(deps) }
}
