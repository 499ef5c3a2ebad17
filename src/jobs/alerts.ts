// `alerts` (DESIGN §1, §7): certificate expiry and CAF stock lost to expiry. Hourly: each threshold fires once, so
// the period only bounds how late in the day an alert may come.
import { checkCafExpiry, checkCertificateExpiry } from '../services/alerts'
import type { Deps } from '../services/deps'
import type { Job } from './scheduler'

export const alertsJob: Job = {
  name: 'alerts',
  everyMs: 60 * 60 * 1000,
  runOnce(deps: Deps): number {
    return checkCertificateExpiry(deps) + checkCafExpiry(deps)
  },
}
