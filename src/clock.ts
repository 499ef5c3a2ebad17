// Time as a dependency: services and jobs take a Clock so tests can say "30 minutes later" as an argument (STYLE §5).

export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** RFC 3339 UTC with milliseconds (DESIGN §12). */
export function isoTimestamp(d: Date): string {
  return d.toISOString()
}

const SANTIAGO_DATE = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Santiago', year: 'numeric', month: '2-digit', day: '2-digit' })

/** Business date in Chile, `YYYY-MM-DD` (DESIGN §8: fecha_emision defaults, daily jobs). */
export function santiagoDate(d: Date): string {
  return SANTIAGO_DATE.format(d)
}
