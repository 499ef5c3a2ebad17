// Time as a dependency: services and jobs take a Clock so tests can say "30 minutes later" as an argument (STYLE §5).

export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** RFC 3339 UTC with milliseconds (DESIGN §12). */
export function isoTimestamp(d: Date): string {
  return d.toISOString()
}

/**
 * A formatter made at its first use, not when the module loads: the first Intl formatter with a time zone loads ICU's
 * zone data (13–20 ms on the reference machine), which start-up would otherwise pay before `/health` answers
 * (docs/decisions/performance.md «Issue 31, session 14»).
 */
function onFirstUse(options: Intl.DateTimeFormatOptions): () => Intl.DateTimeFormat {
  let formatter: Intl.DateTimeFormat | undefined
  return () => (formatter ??= new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Santiago', ...options }))
}

const SANTIAGO_DATE = onFirstUse({ year: 'numeric', month: '2-digit', day: '2-digit' })

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
export const santiagoDate: (d: Date) => string = lastSecond((d) => SANTIAGO_DATE().format(d))

const SANTIAGO_TIME = onFirstUse({
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
  const p = Object.fromEntries(SANTIAGO_TIME().formatToParts(d).map((x) => [x.type, x.value]))
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`
})

/**
 * The instant of a Santiago wall-clock time as the SII writes it (`YYYY-MM-DDTHH:MM:SS`, or a bare date at 00:00): the
 * RCV's Fecha Recepcion, which starts a purchase's 8 days. Null when the text is no such time. Found by correcting a
 * UTC guess by the zone's offset at it, twice (the offset may change between guess and answer near a DST change); a
 * time that does not exist (the hour skipped in spring) falls after the jump, one that happens twice (autumn) is the first.
 */
export function santiagoInstant(local: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(local)
  if (!m) return null
  const [, y, mo, d, h = '00', mi = '00', s = '00'] = m
  const wall = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s))
  if (Number.isNaN(wall) || new Date(wall).toISOString().slice(0, 19) !== `${y}-${mo}-${d}T${h}:${mi}:${s}`) return null
  const target = `${y}-${mo}-${d}T${h}:${mi}:${s}`
  const offsetAt = (t: number) => Date.parse(`${santiagoTimestamp(new Date(t))}Z`) - t
  let guess = wall - offsetAt(wall)
  guess = wall - offsetAt(guess)
  // The autumn hour that happens twice: the earlier instant, one hour before, reads the same wall time.
  const earlier = guess - 3_600_000
  if (santiagoTimestamp(new Date(earlier)) === target) return new Date(earlier)
  // The spring hour that never happens: read as the same time after the jump (00:30 skipped → 01:30).
  return new Date(santiagoTimestamp(new Date(guess)) === target ? guess : guess + 3_600_000)
}
