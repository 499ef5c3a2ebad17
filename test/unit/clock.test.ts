// clock.ts keeps the last formatted second (issue 17): the cached answers must equal Intl's for any sequence of instants,
// across Chile's daylight-saving changes and when calls alternate between instants.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { santiagoDate, santiagoInstant, santiagoTimestamp } from '../../src/clock'

const direct = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Santiago', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
function expected(d: Date): { date: string; timestamp: string } {
  const p = Object.fromEntries(direct.formatToParts(d).map((x) => [x.type, x.value]))
  return { date: `${p.year}-${p.month}-${p.day}`, timestamp: `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}` }
}

test('cached Santiago date and timestamp equal Intl for every instant, in any order, across DST changes', () => {
  // Around the 2026 changes (April 5 and September 6, 03:00/04:00 UTC) and midnights, plus random instants.
  const anchors = [Date.UTC(2026, 3, 5, 2, 59, 59), Date.UTC(2026, 3, 5, 3, 0, 0), Date.UTC(2026, 8, 6, 3, 59, 59), Date.UTC(2026, 8, 6, 4, 0, 0), Date.UTC(2026, 10, 24, 2, 59, 59, 999), Date.UTC(2026, 10, 24, 3, 0, 0)]
  let seed = 17
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647
  const instants = [...anchors, ...Array.from({ length: 2000 }, () => Date.UTC(2020, 0, 1) + Math.floor(random() * 10 * 365 * 86_400_000))]
  for (const ms of [...instants, ...instants.reverse(), ...anchors, ...anchors]) {
    for (const d of [new Date(ms), new Date(ms + 1), new Date(ms)]) {
      expect({ date: santiagoDate(d), timestamp: santiagoTimestamp(d) }).toEqual(expected(d))
    }
  }
})

describe('santiagoInstant: a Santiago wall-clock time as the SII writes it, back to its instant', () => {
  test.each([
    ['2026-01-15T10:00:00', '2026-01-15T13:00:00.000Z'], // summer, UTC-3
    ['2026-07-15T10:00:00', '2026-07-15T14:00:00.000Z'], // winter, UTC-4
    ['2026-11-28', '2026-11-28T03:00:00.000Z'], // a bare date is its midnight
    ['2026-04-04T23:30:00', '2026-04-05T02:30:00.000Z'], // happens twice (clocks back at 24:00): the first
    ['2026-09-06T00:30:00', '2026-09-06T04:30:00.000Z'], // never happens (clocks forward at 24:00): after the jump
  ])('%s → %s', (local, iso) => {
    expect(santiagoInstant(local)?.toISOString()).toBe(iso)
  })

  test('what is no such time is null', () => {
    for (const bad of ['2026-02-30', '2026-13-01T00:00:00', '28-11-2026', '', '2026-11-28T25:00:00']) expect(santiagoInstant(bad)).toBeNull()
  })

  test('property: any instant, written as Santiago\'s wall clock, reads back to itself or (the repeated autumn hour) one hour earlier', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2017, 0, 1), max: Date.UTC(2035, 0, 1) }), (ms) => {
        const t = Math.floor(ms / 1000) * 1000
        const back = santiagoInstant(santiagoTimestamp(new Date(t)))!.getTime()
        expect([t, t - 3_600_000]).toContain(back)
      }),
      { numRuns: 500 },
    )
  })
})
