import { santiagoDate } from '../clock'
// Scheduled backups (DESIGN §18, issue 26): how copies are named, when one is due, and which copies retention deletes.
// Pure: the caller lists the copies a target holds and passes `now` (docs/decisions/backups.md).

/** `timbre-20261127T030000Z.tar.gz`: UTC, so a plain sort of the names is a sort by time, in every target. */
const NAME = /^timbre-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.tar\.gz$/
/** Beside each copy that passed verification; its absence means "never verified", whatever the archive looks like. */
export const VERIFIED_SUFFIX = '.verified.json'

export function backupName(at: Date): string {
  const iso = at.toISOString() // 2026-11-27T03:00:00.000Z
  return `timbre-${iso.slice(0, 10).replaceAll('-', '')}T${iso.slice(11, 19).replaceAll(':', '')}Z.tar.gz`
}

/** The snapshot instant a copy's name carries; null for any other file (what an operator put there is not ours). */
export function parseBackupName(name: string): Date | null {
  const m = NAME.exec(name)
  if (!m) return null
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number]
  const at = new Date(Date.UTC(y, mo - 1, d, h, mi, s))
  return backupName(at) === name ? at : null
}

export interface KeepPolicy {
  /** The newest verified copy of each of the `days` most recent calendar days that have one is kept. */
  readonly days: number
  /** And of each of the `months` most recent calendar months that have one. */
  readonly months: number
}

export interface StoredCopy {
  readonly name: string
  readonly at: Date
  /** Passed verification (its record exists). Unverified copies never keep anything nor count as "newer". */
  readonly verified: boolean
}

/** An unverified copy younger than this may be a run still verifying it (serve's job beside a `backup run`). */
export const UNVERIFIED_GRACE_MS = 24 * 60 * 60 * 1000

// Calendar days and months in Chile (DESIGN §18 keeps daily and monthly copies; the business day is Santiago's): clock.ts's
// formatter, made at its first use rather than when this module loads.
export function santiagoDay(at: Date): string {
  return santiagoDate(at)
}

/**
 * The `count` most recent distinct periods among the copies (newest first), not the last `count` calendar periods
 * before now: a month the PC was off takes no place of one that has copies, and a clock that jumped years ahead
 * (a dead RTC battery, a bad NTP answer) cannot make every older copy "too old" at once (review of issue 26: a jump
 * to 2036 deleted 18 of 19 copies). With a copy every day, both readings keep the same copies.
 */
function recentPeriods(newestFirstCopies: readonly StoredCopy[], key: (c: StoredCopy) => string, count: number): Set<string> {
  const out = new Set<string>()
  for (const copy of newestFirstCopies) {
    if (out.size >= count) break
    out.add(key(copy))
  }
  return out
}

/** A copy dated this far after `now` means the clock is wrong now, or was when the copy was made. */
export const CLOCK_SKEW_MS = 60 * 60 * 1000

/** Verified copies dated after `now` (beyond the skew): while any exists, retention deletes nothing. */
export function copiesFromTheFuture(copies: readonly StoredCopy[], now: Date): StoredCopy[] {
  return copies.filter((c) => c.verified && c.at.getTime() > now.getTime() + CLOCK_SKEW_MS)
}

const newestFirst = (a: StoredCopy, b: StoredCopy) => b.at.getTime() - a.at.getTime() || (a.name < b.name ? 1 : -1)

/** The verified copies the policy keeps: the newest one always, then the newest of each recent day and month. */
export function copiesToKeep(copies: readonly StoredCopy[], keep: KeepPolicy): Set<string> {
  const verified = copies.filter((c) => c.verified).sort(newestFirst)
  const kept = new Set<string>()
  if (verified.length === 0) return kept
  kept.add(verified[0]!.name)
  const day = (c: StoredCopy) => santiagoDay(c.at)
  const month = (c: StoredCopy) => santiagoDay(c.at).slice(0, 7)
  const buckets: Array<{ open: Set<string>; key: (c: StoredCopy) => string }> = [
    { open: recentPeriods(verified, day, keep.days), key: day },
    { open: recentPeriods(verified, month, keep.months), key: month },
  ]
  for (const { open, key } of buckets)
    for (const copy of verified) {
      const bucket = key(copy)
      if (!open.has(bucket)) continue
      open.delete(bucket) // newest first: the first copy seen in a bucket is its newest
      kept.add(copy.name)
    }
  return kept
}

/**
 * Which copies to delete. A copy is deleted only when a newer verified copy exists, so the newest verified copy never
 * is, and a target holding only failed or unverified copies loses nothing. Verified copies go when the policy does not
 * keep them; unverified ones (a run that died between upload and verification) once a newer verified copy exists
 * and they are past UNVERIFIED_GRACE_MS.
 */
export function copiesToDelete(copies: readonly StoredCopy[], now: Date, keep: KeepPolicy): string[] {
  const verified = copies.filter((c) => c.verified).sort(newestFirst)
  const newest = verified[0]
  if (newest === undefined) return []
  // Which copies are old is a question for a clock that can be trusted: one behind a copy it made cannot be.
  if (copiesFromTheFuture(copies, now).length > 0) return []
  const kept = copiesToKeep(copies, keep)
  return copies
    .filter((c) => (c.verified ? !kept.has(c.name) : c.at.getTime() < newest.at.getTime() && now.getTime() - c.at.getTime() >= UNVERIFIED_GRACE_MS))
    .map((c) => c.name)
    .sort()
}

export interface RunRecord {
  readonly at: Date
  readonly ok: boolean
}

/** After a failed run the next try comes this soon (or at the period, if shorter), not a whole day later. */
export const RETRY_AFTER_FAILURE_MS = 60 * 60 * 1000

/**
 * Whether a scheduled copy is due. From the last attempt, not from the process start: a server restarted every night
 * would otherwise never reach a 24 h period (the scheduler's first tick comes one period after start).
 */
export function isBackupDue(last: RunRecord | null, now: Date, everyMs: number): boolean {
  if (last === null) return true
  const since = now.getTime() - last.at.getTime()
  return since >= (last.ok ? everyMs : Math.min(everyMs, RETRY_AFTER_FAILURE_MS)) || since < 0
}
