// DESIGN §12 rate limits as pure arithmetic over an injected clock.
import { describe, expect, test } from 'bun:test'
import { FailureWindow, RateLimiter } from '../../../src/contracts/rate-limit'

describe('RateLimiter', () => {
  test('burst of twice the rate, then one token per 1/rate seconds', () => {
    const l = new RateLimiter(10)
    const t0 = 1_000_000
    const allowed = Array.from({ length: 25 }, () => l.take('k', t0).allowed).filter(Boolean).length
    expect(allowed).toBe(20)
    const refused = l.take('k', t0)
    expect(refused).toMatchObject({ allowed: false, limit: 20, remaining: 0, retryAfterSeconds: 1 })
    expect(l.take('k', t0 + 100).allowed).toBe(true) // 0.1 s later: one token back
    expect(l.take('k', t0 + 100).allowed).toBe(false)
    expect(l.take('other', t0).allowed).toBe(true) // buckets are per credential
  })

  test('refills to the burst, never beyond', () => {
    const l = new RateLimiter(5)
    for (let i = 0; i < 10; i++) l.take('k', 0)
    const later = l.take('k', 60_000)
    expect(later.remaining).toBe(9)
    expect(later.resetSeconds).toBe(1)
  })

  test('rate 0 is off', () => {
    expect(new RateLimiter(0).isEnabled).toBe(false)
  })
})

describe('FailureWindow', () => {
  test('blocks an address after max failures until its window ends', () => {
    const w = new FailureWindow(3, 60_000)
    for (let i = 0; i < 3; i++) {
      expect(w.blockedFor('a', 1000)).toBe(0)
      w.record('a', 1000)
    }
    expect(w.blockedFor('a', 1000)).toBe(60)
    expect(w.blockedFor('a', 31_000)).toBe(30)
    expect(w.blockedFor('b', 31_000)).toBe(0)
    expect(w.blockedFor('a', 61_000)).toBe(0)
  })
})
