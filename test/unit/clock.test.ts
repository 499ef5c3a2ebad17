// clock.ts keeps the last formatted second (issue 17): the cached answers must equal Intl's for any sequence of instants,
// across Chile's daylight-saving changes and when calls alternate between instants.
import { expect, test } from 'bun:test'
import { santiagoDate, santiagoTimestamp } from '../../src/clock'

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
