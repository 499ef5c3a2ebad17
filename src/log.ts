// JSON-lines logger (DESIGN §12). Callers pass fields, never bodies, keys, tokens or passwords.
import type { LogLevel } from './config'

export type LogFields = Readonly<Record<string, unknown>>

export interface Logger {
  debug(event: string, fields?: LogFields): void
  info(event: string, fields?: LogFields): void
  warn(event: string, fields?: LogFields): void
  error(event: string, fields?: LogFields): void
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

/**
 * Standard output, one write per batch: a write is a system call, on this machine dearer than a prepared query (issue 17),
 * and a busy server logs a line per request and per document. The batch goes out in a microtask, so every line logged
 * before an `await` or a `.then` is written by the time that code goes on (serve logs server.stopped, then exits).
 */
function batchedStdout(): (line: string) => void {
  let pending: string[] = []
  const flush = () => {
    const chunk = pending.join('')
    pending = []
    process.stdout.write(chunk)
  }
  return (line) => {
    if (pending.push(line) === 1) queueMicrotask(flush)
  }
}

export function createLogger(level: LogLevel, write: (line: string) => void = batchedStdout()): Logger {
  const emit = (lvl: LogLevel) => (event: string, fields: LogFields = {}) => {
    if (RANK[lvl] < RANK[level]) return
    write(`${JSON.stringify({ ts: new Date().toISOString(), level: lvl, event, ...fields })}\n`)
  }
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
}

/** For admin commands: their stdout is the JSON answer, so their logs go to stderr. */
export function stderrLogger(level: LogLevel = 'warn'): Logger {
  return createLogger(level, (l) => process.stderr.write(l))
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }
