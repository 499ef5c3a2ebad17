// A store that cannot take a write (issue 18, "Operations"): the disk is full, the data dir went read-only, or the
// device fails. SQLite rolls the statement back and says so with these codes; the doors answer 503 and change nothing.

/** SQLITE_FULL, SQLITE_READONLY*, SQLITE_IOERR*, SQLITE_CANTOPEN: the code, when `err` is one of them; else null. */
export function storageUnwritableCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code !== 'string') return null
  return code === 'SQLITE_FULL' || /^SQLITE_(READONLY|IOERR|CANTOPEN)(_|$)/.test(code) ? code : null
}
