// `folios` (DESIGN §17): automatic mode's check, then the CAF requests and annulments due at the SII's folio pages,
// within seconds of being asked. Each holds one portal session; croner's `protect` keeps two passes from overlapping.
import { runFoliosPass } from '../services/caf-solicitudes'
import type { Deps } from '../services/deps'
import type { Job } from './scheduler'

export const foliosJob: Job = {
  name: 'folios',
  everyMs: 5_000,
  runOnce: (deps: Deps) => runFoliosPass(deps),
}
