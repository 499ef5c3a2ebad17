// The instant a DTE is stored (services/stored-instant.ts): ids in the order they were taken, created_at never back.
import { describe, expect, test } from 'bun:test'
import { StoredInstants } from '../../../src/services/stored-instant'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const msOf = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16)

describe('StoredInstants', () => {
  const instants = new StoredInstants()
  const nextStoredInstant = (ms: number) => instants.next(ms)
  test('an RFC 9562 version 7 id whose timestamp is the instant it returns', () => {
    const now = Date.now() + 10_000
    const { id, at } = nextStoredInstant(now)
    expect(id).toMatch(UUID_V7)
    expect(at.getTime()).toBe(now)
    expect(msOf(id)).toBe(now)
  })

  test('a clock that stands still still gives strictly increasing ids, past 4096 in one millisecond', () => {
    const frozen = Date.now() + 20_000
    const taken = Array.from({ length: 10_000 }, () => nextStoredInstant(frozen))
    const ids = taken.map((t) => t.id)
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
    // 10 000 in one millisecond spill over into the next two, and the instant says so.
    expect(taken.at(-1)!.at.getTime()).toBe(frozen + 2)
    for (const t of taken) expect(msOf(t.id)).toBe(t.at.getTime())
  })

  test('a clock that steps back does not take created_at or the id back', () => {
    const ahead = Date.now() + 60_000
    const first = nextStoredInstant(ahead)
    const back = nextStoredInstant(ahead - 5_000)
    expect(back.id > first.id).toBe(true)
    expect(back.at.getTime()).toBeGreaterThanOrEqual(first.at.getTime())
    // Once the clock passes the instant again, it is followed.
    const later = nextStoredInstant(ahead + 1_000)
    expect(later.at.getTime()).toBe(ahead + 1_000)
    expect(later.id > back.id).toBe(true)
  })

  test('a sequence resumed after a stored id stays above it, even when the clock is behind it', () => {
    const stored = new StoredInstants().next(Date.now() + 90_000)
    const resumed = new StoredInstants(stored.id)
    const next = resumed.next(Date.now())
    expect(next.id > stored.id).toBe(true)
    expect(next.at.getTime()).toBe(stored.at.getTime())
  })
})
