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

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stdout.write(l)): Logger {
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
