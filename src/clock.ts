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

/**
 * The last second formatted, per formatter: a request reads the date and the timestamp several times, and Intl's
 * time-zone formatting costs microseconds each time (issue 17 profile). Santiago's wall clock is a function of the UTC
 * second, so one entry per formatter is exact.
 */
function lastSecond(format: (d: Date) => string): (d: Date) => string {
  let second = Number.NaN
  let text = ''
  return (d) => {
    const s = Math.floor(d.getTime() / 1000)
    if (s !== second) {
      text = format(d)
      second = s
    }
    return text
  }
}

/** Business date in Chile, `YYYY-MM-DD` (DESIGN §8: fecha_emision defaults, daily jobs). */
export const santiagoDate: (d: Date) => string = lastSecond((d) => SANTIAGO_DATE.format(d))

const SANTIAGO_TIME = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/Santiago',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
})

/** SII timestamps (TmstFirma, TSTED, TmstFirmaEnv): `YYYY-MM-DDTHH:MM:SS`, Santiago local time (DESIGN §12, docs/sii-protocol.md §1.3). */
export const santiagoTimestamp: (d: Date) => string = lastSecond((d) => {
  const p = Object.fromEntries(SANTIAGO_TIME.formatToParts(d).map((x) => [x.type, x.value]))
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`
})
