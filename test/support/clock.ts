// The tests' one clock (STYLE §5: no sleeps, "later" is an argument): a `Clock` (src/clock.ts) the test moves.
//
// - `testClock()` follows real time, plus what the test has moved it: for a server whose timers need time to go on.
// - `testClock({ at: new Date('2026-03-02T15:00:00Z') })` stands still at `at` until the test moves it: exact instants
//   (the simulator's token lifetime and processing delay).
// - `strictlyIncreasing: true`, with either: every reading at least 1 ms after the one before, so two writes never
//   share a timestamp (an update's updated_at moves without waiting).
//
// `clock.advance(ms)` is "ms later"; `clock.offsetMs` is how far the test has moved it, and setting it jumps back or
// on (`clock.offsetMs = 0`: back to the start). `now` is bound: `startTestServer({ clock })` takes the clock,
// `startSimulator({ clock: clock.now })` its function.
import type { Clock } from '../../src/clock'

export interface TestClock extends Clock {
  readonly now: () => Date
  /** `ms` later, without waiting. */
  advance(ms: number): void
  /** How far the test has moved the clock from real time (or from `at`); 0 at the start. */
  offsetMs: number
}

export interface TestClockOptions {
  /** Frozen at this instant: it moves only when the test moves it. Without it the clock follows real time. */
  readonly at?: Date
  /** Every reading at least 1 ms after the previous one (until offsetMs is set), so an update's updated_at moves. */
  readonly strictlyIncreasing?: boolean
}

export function testClock(opts: TestClockOptions = {}): TestClock {
  const frozenAt = opts.at?.getTime()
  let offsetMs = 0
  let last = Number.NEGATIVE_INFINITY
  const now = (): Date => {
    let ms = (frozenAt ?? Date.now()) + offsetMs
    if (opts.strictlyIncreasing) ms = last = Math.max(ms, last + 1)
    return new Date(ms)
  }
  return {
    now,
    advance: (ms: number) => {
      offsetMs += ms
    },
    get offsetMs() {
      return offsetMs
    },
    set offsetMs(ms: number) {
      offsetMs = ms
      last = Number.NEGATIVE_INFINITY
    },
  }
}
