// The checkpointer's thread (db/checkpointer.ts): its own connection to the data dir's database, copying committed WAL
// frames into the database file every few hundred milliseconds, so the request thread never does it inside a COMMIT.
// PASSIVE: it never waits for or blocks a writer or a reader; what it cannot copy now it copies next time.
import { Database } from 'bun:sqlite'

declare const self: Worker

export type CheckpointRequest = { readonly start: { readonly path: string; readonly everyMs: number } } | { readonly stop: true }
export interface CheckpointStats {
  readonly checkpoints: number
  readonly framesCopied: number
  readonly failures: number
}

let db: Database | null = null
let timer: ReturnType<typeof setInterval> | null = null
const stats = { checkpoints: 0, framesCopied: 0, failures: 0 }

function checkpoint(): void {
  try {
    const row = db!.query('PRAGMA wal_checkpoint(PASSIVE)').get() as { busy: number; log: number; checkpointed: number }
    stats.checkpoints++
    stats.framesCopied += Math.max(0, row.checkpointed)
  } catch {
    // A busy database or a full disk: the request thread's own autocheckpoint is the backstop.
    stats.failures++
  }
  self.postMessage({ ...stats } satisfies CheckpointStats)
}

self.onmessage = (event: MessageEvent<CheckpointRequest>) => {
  const request = event.data
  if ('start' in request) {
    db = new Database(request.start.path)
    db.run('PRAGMA busy_timeout = 1000')
    // The checkpoint's fsync of the database file is what makes copied frames safe to reuse (synchronous = FULL).
    db.run('PRAGMA synchronous = FULL')
    timer = setInterval(checkpoint, request.start.everyMs)
  } else {
    if (timer) clearInterval(timer)
    db?.close()
    db = null
    self.postMessage({ ...stats, stopped: true })
  }
}
