// `webhook-deliver` (DESIGN §1, §7): sends the outbox's due deliveries.
import type { Deps } from '../services/deps'
import { deliverDue } from '../services/deliver-webhooks'
import type { Job } from './scheduler'

export function webhookDeliverJob(everyMs: number): Job {
  return { name: 'webhook-deliver', everyMs, runOnce: (deps: Deps) => deliverDue(deps) }
}
