// `timbre stop` (issue 26): asks the `serve` of a data dir to drain, as SIGTERM does on Linux, and waits until its lock
// is free. A request file in the data dir rather than a signal, because on Windows one process cannot send another a
// Ctrl-C (GenerateConsoleCtrlEvent reaches only processes of the caller's own console) nor a SIGTERM (TerminateProcess
// is a hard kill); rather than a loopback admin endpoint, because a file needs no port, no token to keep and no new
// network surface, and whoever may write the data dir may read its master key anyway (docs/decisions/platforms.md).
import { clearStopRequest, hasStopRequest, isDataDirServed, requestStop } from '../db/serve-lock'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { assertDatabaseExists, DB_FILE } from '../db/open'
import { OperatorError } from '../errors'

/** How often `serve` looks for a request: a stop starts draining within half a second. */
export const STOP_POLL_MS = 500

export interface StopResult {
  readonly data_dir: string
  /** false: no serve held the data dir, nothing was asked. */
  readonly was_running: boolean
  readonly stopped: boolean
  readonly waited_ms: number
}

export class StopTimeoutError extends OperatorError {}

/**
 * The lock probe and the request need write access to the data dir: on Windows a `serve` run as SYSTEM (a scheduled
 * task) leaves it to SYSTEM and the Administrators (db/windows-acl.ts), so a plain account is told what to do.
 */
function asked<T>(dataDir: string, step: () => T): T {
  try {
    return step()
  } catch (err) {
    const code = String((err as { code?: unknown }).code ?? '')
    if (!['EACCES', 'EPERM', 'SQLITE_CANTOPEN', 'SQLITE_READONLY'].includes(code)) throw err
    throw new OperatorError(
      `no se puede escribir en el directorio de datos ${dataDir} (${code}): ejecute timbre stop con la cuenta que ejecuta serve, o como administrador`,
    )
  }
}

export async function stopServe(input: { dataDir: string; timeoutMs: number; pollMs?: number }): Promise<StopResult> {
  const { dataDir, timeoutMs } = input
  // A mistyped --data-dir must not read as "stopped" to a script that then replaces the executable (DESIGN §3: a
  // command pointed at a folder with no database exits non-zero naming the path it looked at).
  // Through `asked`: a data dir this account may not read is said as such, not as a folder without a database.
  if (asked(dataDir, () => statSync(join(dataDir, DB_FILE), { throwIfNoEntry: false })) === undefined) assertDatabaseExists(dataDir)
  if (!asked(dataDir, () => isDataDirServed(dataDir))) return { data_dir: dataDir, was_running: false, stopped: true, waited_ms: 0 }
  const started = performance.now()
  asked(dataDir, () => requestStop(dataDir))
  while (performance.now() - started < timeoutMs) {
    await Bun.sleep(input.pollMs ?? 100)
    if (!isDataDirServed(dataDir)) return { data_dir: dataDir, was_running: true, stopped: true, waited_ms: Math.round(performance.now() - started) }
  }
  throw new StopTimeoutError(
    `timbre serve de ${dataDir} no terminó en ${Math.round(timeoutMs / 1000)} s tras la solicitud de detención; ` +
      'sigue en pie o se está cerrando: vuelva a intentar con un --timeout mayor, o termínelo (Timbre resiste una terminación forzada)',
  )
}

/** For `serve`: calls `onRequest` once, when a stop request appears; returns the function that stops watching. */
export function watchStopRequests(dataDir: string, onRequest: () => void, everyMs = STOP_POLL_MS): () => void {
  const timer = setInterval(() => {
    if (!hasStopRequest(dataDir)) return
    clearInterval(timer)
    // The request file may be held a moment (an antivirus on Windows, `timbre stop` still writing it): the drain starts
    // anyway, and the next serve's lock clears a leftover (serve-lock.ts). A throw here would kill serve undrained.
    try {
      clearStopRequest(dataDir)
    } catch {
      // left for lockDataDir
    }
    onRequest()
  }, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}
