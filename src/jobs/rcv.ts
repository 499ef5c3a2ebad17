// `rcv` (DESIGN §16): the RCV mirror's syncs, those asked for on demand (POST /rcv/{periodo}/sincronizar, `timbre rcv
// sincronizar`) within seconds, and the daily read of the current and the previous period of the companies in
// producción. A sync holds one SII portal session; croner's `protect` keeps two passes from overlapping.
import type { Deps } from '../services/deps'
import { runRcvPass } from '../services/rcv'
import type { Job } from './scheduler'

export const rcvJob: Job = {
  name: 'rcv',
  everyMs: 5_000,
  runOnce(deps: Deps): Promise<number> {
    return runRcvPass(deps)
  },
}
