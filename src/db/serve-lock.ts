// One `serve` per data dir (DESIGN §3). Two servers on one database would each run the submission and tracking jobs
// and each keep its own rate limits and token caches; leases keep them from uploading a DTE twice, but nothing else
// was built for it. The lock is SQLite's own file lock on `<data-dir>/serve.lock`, held by a transaction that is never
// committed: the operating system drops it when the process dies, even by SIGKILL, so no stale lock survives a crash
// (a pid file alone would). Node has no flock; this is the portable lock Bun already ships.
import { Database } from 'bun:sqlite'
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { StoreError } from './open'

const LOCK_FILE = 'serve.lock'
/** Only for the message a second server prints; the lock itself is the file lock. */
const PID_FILE = 'serve.pid'
/**
 * `timbre stop` asks the data dir's `serve` to drain by writing this file, which serve looks for every 500 ms (issue
 * 26, docs/decisions/platforms.md "Stop"): on Windows no process can send another a Ctrl-C or a SIGTERM.
 */
export const STOP_REQUEST_FILE = 'stop-request'

export interface ServeLock {
  release(): void
}

export function lockDataDir(dataDir: string): ServeLock {
  // 0600 like everything in the data dir (issue 18); SQLite would make it 0644 less the umask.
  closeSync(openSync(join(dataDir, LOCK_FILE), 'a', 0o600))
  const lock = new Database(join(dataDir, LOCK_FILE), { create: true })
  try {
    // A moment's patience: `timbre stop` probes the same lock (isDataDirServed) by taking and giving it back, and a
    // serve starting in that instant must not be refused as if another server held it (issue 26 review). A real second
    // server still holds it after this wait, and is refused.
    lock.run('PRAGMA busy_timeout = 1500')
    lock.run('PRAGMA locking_mode = EXCLUSIVE')
    lock.run('BEGIN EXCLUSIVE')
  } catch (err) {
    lock.close()
    const code = (err as { code?: string }).code ?? ''
    if (!code.startsWith('SQLITE_BUSY') && code !== 'SQLITE_LOCKED') throw err
    const pidPath = join(dataDir, PID_FILE)
    const pid = existsSync(pidPath) ? readFileSync(pidPath, 'utf8').trim() : '?'
    throw new StoreError(`otro proceso timbre serve (pid ${pid}) ya usa el directorio de datos ${resolve(dataDir)}; deténgalo o use otro --data-dir`)
  }
  writeFileSync(join(dataDir, PID_FILE), `${process.pid}\n`, { mode: 0o600 })
  // A request left by a `timbre stop` whose server had died meanwhile is not meant for this one.
  clearStopRequest(dataDir)
  return {
    release() {
      rmSync(join(dataDir, PID_FILE), { force: true })
      lock.close()
    },
  }
}

/**
 * Whether a `serve` holds the data dir, without disturbing it: the same lock taken and given back at once, the pid file
 * untouched. A data dir without serve.lock never had a server; one this account may not read throws (EACCES), never
 * answers "no server".
 */
export function isDataDirServed(dataDir: string): boolean {
  if (statSync(join(dataDir, LOCK_FILE), { throwIfNoEntry: false }) === undefined) return false
  const probe = new Database(join(dataDir, LOCK_FILE))
  try {
    probe.run('PRAGMA busy_timeout = 0')
    probe.run('BEGIN EXCLUSIVE')
    probe.run('ROLLBACK')
    return false
  } catch (err) {
    const code = (err as { code?: string }).code ?? ''
    if (code.startsWith('SQLITE_BUSY') || code === 'SQLITE_LOCKED') return true
    throw err
  } finally {
    probe.close()
  }
}

export function requestStop(dataDir: string): void {
  writeFileSync(join(dataDir, STOP_REQUEST_FILE), `${JSON.stringify({ pid: process.pid, at: new Date().toISOString() })}\n`, { mode: 0o600 })
}

export function hasStopRequest(dataDir: string): boolean {
  return existsSync(join(dataDir, STOP_REQUEST_FILE))
}

export function clearStopRequest(dataDir: string): void {
  rmSync(join(dataDir, STOP_REQUEST_FILE), { force: true })
}
