// Issue 26 (DESIGN §18): names of copies, when one is due, and retention as invariants over random histories.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import {
  backupName,
  copiesFromTheFuture,
  copiesToDelete,
  copiesToKeep,
  isBackupDue,
  parseBackupName,
  RETRY_AFTER_FAILURE_MS,
  santiagoDay,
  UNVERIFIED_GRACE_MS,
  type KeepPolicy,
  type StoredCopy,
} from '../../../src/domain/backups'

const HOUR = 60 * 60 * 1000
const DAY = 24 * HOUR
const T0 = Date.UTC(2026, 0, 1)

describe('names', () => {
  test('a name carries its UTC second and sorts by time', () => {
    expect(backupName(new Date('2026-11-27T03:04:05.678Z'))).toBe('timbre-20261127T030405Z.tar.gz')
    expect(parseBackupName('timbre-20261127T030405Z.tar.gz')).toEqual(new Date('2026-11-27T03:04:05Z'))
  })

  test.each(['timbre-20261127T030405Z.tar.gz.verified.json', 'respaldo.tar.gz', 'timbre-20261332T030405Z.tar.gz', '.timbre-20261127T030405Z.tar.gz.x.partial'])(
    '%s is not a copy',
    (name) => expect(parseBackupName(name)).toBeNull(),
  )

  test('property: parse(name(t)) is t to the second, and names sort as their instants do', () => {
    fc.assert(
      fc.property(fc.integer({ min: T0, max: T0 + 40 * 365 * DAY }), fc.integer({ min: T0, max: T0 + 40 * 365 * DAY }), (a, b) => {
        expect(parseBackupName(backupName(new Date(a)))?.getTime()).toBe(Math.floor(a / 1000) * 1000)
        if (Math.floor(a / 1000) < Math.floor(b / 1000)) expect(backupName(new Date(a)) < backupName(new Date(b))).toBe(true)
      }),
    )
  })
})

describe('isBackupDue', () => {
  const at = new Date(T0)
  test.each([
    [null, 0, true],
    [{ at, ok: true }, DAY - 1, false],
    [{ at, ok: true }, DAY, true],
    [{ at, ok: false }, RETRY_AFTER_FAILURE_MS - 1, false],
    [{ at, ok: false }, RETRY_AFTER_FAILURE_MS, true],
    [{ at, ok: true }, -1, true], // a clock set back: copy rather than wait for the old instant to come round again
  ])('last %p, %d ms later → %p (every 24 h)', (last, later, due) => {
    expect(isBackupDue(last, new Date(T0 + later), DAY)).toBe(due)
  })
})

/** Random histories: copies at random instants over two years, some unverified, and a `now` after them. */
const history = fc
  .tuple(
    fc.array(fc.record({ offsetMs: fc.integer({ min: 0, max: 730 * DAY }), verified: fc.boolean() }), { maxLength: 60 }),
    fc.integer({ min: 0, max: 60 * DAY }),
    fc.record({ days: fc.integer({ min: 0, max: 10 }), months: fc.integer({ min: 0, max: 14 }) }),
  )
  .map(([raw, after, keep]) => {
    const seen = new Set<string>()
    const copies: StoredCopy[] = []
    for (const r of raw) {
      const at = new Date(Math.floor((T0 + r.offsetMs) / 1000) * 1000)
      const name = backupName(at)
      if (seen.has(name)) continue
      seen.add(name)
      copies.push({ name, at, verified: r.verified })
    }
    const latest = Math.max(T0, ...copies.map((c) => c.at.getTime()))
    return { copies, now: new Date(latest + after), keep: keep as KeepPolicy }
  })

const newestVerified = (copies: readonly StoredCopy[]) => copies.filter((c) => c.verified).sort((a, b) => b.at.getTime() - a.at.getTime())[0]

describe('retention (properties)', () => {
  test('the newest verified copy is never deleted', () => {
    fc.assert(
      fc.property(history, ({ copies, now, keep }) => {
        const newest = newestVerified(copies)
        if (newest) expect(copiesToDelete(copies, now, keep)).not.toContain(newest.name)
      }),
    )
  })

  test('a copy is deleted only when a newer verified copy exists', () => {
    fc.assert(
      fc.property(history, ({ copies, now, keep }) => {
        for (const name of copiesToDelete(copies, now, keep)) {
          const doomed = copies.find((c) => c.name === name)!
          expect(copies.some((c) => c.verified && c.at.getTime() > doomed.at.getTime())).toBe(true)
        }
      }),
    )
  })

  test('unverified copies never keep anything: adding or removing them does not change which verified copies go', () => {
    fc.assert(
      fc.property(history, ({ copies, now, keep }) => {
        const verifiedOnly = copies.filter((c) => c.verified)
        const verifiedNames = new Set(verifiedOnly.map((c) => c.name))
        const withAll = copiesToDelete(copies, now, keep).filter((n) => verifiedNames.has(n))
        expect(withAll).toEqual(copiesToDelete(verifiedOnly, now, keep))
      }),
    )
  })

  test('unverified copies go only once a newer verified one exists and they are past the grace period', () => {
    fc.assert(
      fc.property(history, ({ copies, now, keep }) => {
        const newest = newestVerified(copies)
        const deleted = new Set(copiesToDelete(copies, now, keep))
        for (const c of copies.filter((x) => !x.verified)) {
          const expected = newest !== undefined && c.at < newest.at && now.getTime() - c.at.getTime() >= UNVERIFIED_GRACE_MS
          expect({ name: c.name, deleted: deleted.has(c.name) }).toEqual({ name: c.name, deleted: expected })
        }
      }),
    )
  })

  test('the newest verified copy of each of the N most recent days and M most recent months that have one (Santiago) is kept, nothing else but the newest', () => {
    fc.assert(
      fc.property(history, ({ copies, now, keep }) => {
        const kept = copiesToKeep(copies, keep)
        const deleted = new Set(copiesToDelete(copies, now, keep))
        const verified = copies.filter((x) => x.verified).sort((a, b) => b.at.getTime() - a.at.getTime())
        const recent = (key: (c: StoredCopy) => string, count: number) => new Set([...new Set(verified.map(key))].slice(0, count))
        const days = recent((c) => santiagoDay(c.at), keep.days)
        const months = recent((c) => santiagoDay(c.at).slice(0, 7), keep.months)
        for (const c of verified) {
          expect(kept.has(c.name)).toBe(!deleted.has(c.name))
          const day = santiagoDay(c.at)
          const newestOfDay = verified.every((x) => santiagoDay(x.at) !== day || x.at <= c.at)
          const newestOfMonth = verified.every((x) => santiagoDay(x.at).slice(0, 7) !== day.slice(0, 7) || x.at <= c.at)
          if ((newestOfDay && days.has(day)) || (newestOfMonth && months.has(day.slice(0, 7)))) expect({ name: c.name, kept: kept.has(c.name) }).toEqual({ name: c.name, kept: true })
          // And nothing else is kept but the newest verified copy overall.
          else if (c !== newestVerified(copies)) expect({ name: c.name, kept: kept.has(c.name) }).toEqual({ name: c.name, kept: false })
        }
      }),
    )
  })

  const dailyYear = (from: number): StoredCopy[] =>
    Array.from({ length: 365 }, (_, i) => {
      const at = new Date(from + i * DAY + 6 * HOUR)
      return { name: backupName(at), at, verified: true }
    })

  test('a clock that jumped years ahead does not make every older copy too old: the recent months that have copies stay', () => {
    const year = dailyYear(T0)
    const jumped = new Date(T0 + 10 * 365 * DAY)
    const copies = [...year, { name: backupName(jumped), at: jumped, verified: true }]
    const deleted = new Set(copiesToDelete(copies, jumped, { days: 7, months: 12 }))
    const left = copies.filter((c) => !deleted.has(c.name))
    // The jumped copy takes one of the 7 days and one of the 12 months; the real year keeps its newest 6 days and 11
    // months, the newest day being its newest month's copy too: 1 + 6 + 11 - 1. A calendar reading kept only the jumped one.
    expect(left.length).toBe(17)
    expect(left.filter((c) => c.at.getTime() < jumped.getTime()).length).toBe(16)
  })

  test('a clock behind a copy it made (set back to an old date) deletes nothing until it is right again', () => {
    const year = dailyYear(T0)
    const back = new Date(T0 - 6 * 365 * DAY)
    const copies = [...year, { name: backupName(back), at: back, verified: true }]
    expect(copiesFromTheFuture(copies, back).length).toBe(365)
    expect(copiesToDelete(copies, back, { days: 7, months: 12 })).toEqual([])
    // Once the clock is right, retention resumes.
    expect(copiesToDelete(copies, new Date(T0 + 366 * DAY), { days: 7, months: 12 }).length).toBeGreaterThan(300)
  })

  test('a month without copies (the PC was off) takes no place of a month that has them', () => {
    const before = dailyYear(T0).slice(0, 60) // two months of copies…
    const after = dailyYear(T0 + 200 * DAY).slice(0, 3) // …then nothing for about four months
    const copies = [...before, ...after]
    const now = new Date(after[2]!.at.getTime() + HOUR)
    const left = new Set(copies.map((c) => c.name))
    for (const name of copiesToDelete(copies, now, { days: 0, months: 3 })) left.delete(name)
    // Three months that have copies: the one after, and the two before the gap.
    expect(new Set([...left].map((n) => santiagoDay(parseBackupName(n)!).slice(0, 7))).size).toBe(3)
  })

  test('retention is stable: applied to what it keeps, it deletes nothing more', () => {
    fc.assert(
      fc.property(history, ({ copies, now, keep }) => {
        const deleted = new Set(copiesToDelete(copies, now, keep))
        const left = copies.filter((c) => !deleted.has(c.name))
        expect(copiesToDelete(left, now, keep)).toEqual([])
      }),
    )
  })
})

describe('retention (examples)', () => {
  const copy = (iso: string, verified = true): StoredCopy => ({ name: backupName(new Date(iso)), at: new Date(iso), verified })

  test('only failed or unverified copies: nothing is deleted', () => {
    const copies = [copy('2026-01-01T06:00:00Z', false), copy('2026-01-02T06:00:00Z', false)]
    expect(copiesToDelete(copies, new Date('2027-01-01T00:00:00Z'), { days: 0, months: 0 })).toEqual([])
  })

  test('keep 0d,0m keeps the newest verified copy, even years old, and a newer unverified one (no newer verified copy)', () => {
    const copies = [copy('2020-01-01T06:00:00Z', false), copy('2020-02-01T06:00:00Z'), copy('2020-03-01T06:00:00Z'), copy('2020-04-01T06:00:00Z', false)]
    expect(copiesToDelete(copies, new Date('2026-01-01T00:00:00Z'), { days: 0, months: 0 })).toEqual([copies[0]!.name, copies[1]!.name])
  })

  test('calendar days are Santiago days: 02:30 UTC on the 5th is the 4th in Chile', () => {
    // 2026-01-05T02:30Z is 2026-01-04 23:30 in Santiago (UTC-3 in summer): the same day as the copy at 04T12:00Z.
    const copies = [copy('2026-01-04T12:00:00Z'), copy('2026-01-05T02:30:00Z'), copy('2026-01-05T12:00:00Z')]
    expect(copiesToDelete(copies, new Date('2026-01-05T15:00:00Z'), { days: 7, months: 0 })).toEqual([copies[0]!.name])
  })
})
