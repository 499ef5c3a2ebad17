// `webhook-deliver` (DESIGN §1, §7): sends the outbox's due deliveries. A pass waits at most one period for its attempts
// (the scheduler never overlaps a job with itself): attempts to receivers that hang go on while the next pass serves
// the other companies.
import type { Deps } from '../services/deps'
import { deliverDue } from '../services/deliver-webhooks'
import type { Job } from './scheduler'

export function webhookDeliverJob(everyMs: number): Job {
  return { name: 'webhook-deliver', everyMs, runOnce: (deps: Deps) => deliverDue(deps, { waitMs: everyMs }) }
}
