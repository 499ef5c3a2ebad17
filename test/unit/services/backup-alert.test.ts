// backup.failed is announced when a target starts failing, then at most daily while it keeps failing (review of issue
// 26): a NAS off for a weekend, retried hourly, must not send every subscribed company a webhook per retry.
import { expect, test } from 'bun:test'
import type { TargetStatus } from '../../../src/services/backup-status'
import { isAlertDue, REALERT_MS } from '../../../src/services/scheduled-backup'

const at = (h: number) => new Date(Date.UTC(2026, 10, 27, 3) + h * 3_600_000)
const iso = (h: number) => at(h).toISOString()
const base: TargetStatus = { kind: 'folder', location: '/mnt/nas', last_good: { name: 'timbre-x.tar.gz', at: iso(0) }, last_failure: null }

test.each([
  ['first run ever', undefined, 1, true],
  ['the target was fine: a new failure is announced at once', base, 1, true],
  ['failing, announced an hour ago: the hourly retry stays quiet', { ...base, last_failure: { at: iso(1), reason: 'x' }, last_alert_at: iso(1) }, 2, false],
  ['failing, announced 23 h ago: still quiet', { ...base, last_failure: { at: iso(23), reason: 'x' }, last_alert_at: iso(1) }, 24, false],
  ['failing, announced a day ago: repeated', { ...base, last_failure: { at: iso(24), reason: 'x' }, last_alert_at: iso(1) }, 1 + REALERT_MS / 3_600_000, true],
  ['failing from before this rule (no alert time kept): announced', { ...base, last_failure: { at: iso(1), reason: 'x' } }, 2, true],
  ['recovered, then failing again: announced at once', { ...base, last_good: { name: 'y', at: iso(5) }, last_failure: { at: iso(1), reason: 'x' }, last_alert_at: iso(1) }, 6, true],
] as const)('%s', (_case, prior, hour, due) => {
  expect(isAlertDue(prior as TargetStatus | undefined, at(hour))).toBe(due)
})
