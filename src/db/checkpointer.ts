// WAL checkpoints off the event loop (issue 17). With SQLite's default, the connection that commits the transaction
// which crosses 1 000 WAL pages copies them into the database file and fsyncs it, inside that COMMIT, on the thread
// that serves every request: a stall of tens of milliseconds every few dozen issuances. Here a worker with its own
// connection checkpoints every few hundred milliseconds, and the request thread's autocheckpoint is raised to a
// backstop that only acts if the worker falls far behind or dies.
import type { Store } from './open'
import type { CheckpointRequest, CheckpointStats } from './checkpoint-worker'
import { workerEntry } from '../worker-entry'

/** Pages of WAL past which the request thread checkpoints anyway (~80 MB): only when the worker cannot keep up. */
export const BACKSTOP_PAGES = 20_000

export interface Checkpointer {
  /** What the worker has done so far (tests, diagnostics). */
  stats(): CheckpointStats
  stop(): Promise<void>
}

export function startCheckpointer(store: Pick<Store, 'sqlite' | 'path'>, opts: { everyMs?: number } = {}): Checkpointer {
  store.sqlite.run(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`)
  const worker = new Worker(workerEntry('db/checkpoint-worker'))
  let last: CheckpointStats = { checkpoints: 0, framesCopied: 0, failures: 0 }
  let stopped: (() => void) | null = null
  worker.onmessage = (event: MessageEvent<CheckpointStats & { stopped?: true }>) => {
    last = event.data
    if (event.data.stopped) stopped?.()
  }
  worker.postMessage({ start: { path: store.path, everyMs: opts.everyMs ?? 250 } } satisfies CheckpointRequest)
  return {
    stats: () => last,
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          worker.terminate()
          resolve()
        }
        stopped = done
        worker.postMessage({ stop: true } satisfies CheckpointRequest)
        setTimeout(done, 2000)
      }),
  }
}
