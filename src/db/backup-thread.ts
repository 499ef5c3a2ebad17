// Runs one scheduled backup's heavy steps on db/backup-worker.ts (issue 26, the 2-core rule): this thread only posts a
// request and awaits the answer, so serving requests goes on while SQLite, gzip and integrity_check work elsewhere.
import { Database } from 'bun:sqlite'
import type { BackupWorkerAnswer, BackupWorkerRequest, S3Access, SnapshotAnswer, SnapshotRequest, VerifyAnswer, VerifyRequest } from './backup-worker'
import { workerEntry } from '../worker-entry'

export interface BackupThread {
  snapshot(req: Omit<SnapshotRequest, 'kind'>): Promise<SnapshotAnswer>
  verify(req: Omit<VerifyRequest, 'kind'>): Promise<VerifyAnswer>
  /** Uploads (`put`) or downloads (`get`) one S3 object between `path` and `key`, off this thread. */
  s3(direction: 'put' | 'get', s3: S3Access, key: string, path: string, timeoutMs: number): Promise<void>
  close(): void
}

/** A worker for one run: started at its beginning, terminated at its end, so a server at rest holds no backup thread. */
export function startBackupThread(): BackupThread {
  const worker = new Worker(workerEntry('db/backup-worker'))
  let queue: Promise<unknown> = Promise.resolve()
  const ask = <A extends BackupWorkerAnswer>(request: BackupWorkerRequest): Promise<A> => {
    const next = queue.then(
      () =>
        new Promise<A>((resolve, reject) => {
          worker.onmessage = (event: MessageEvent<BackupWorkerAnswer>) =>
            event.data.kind === 'error' ? reject(new Error(event.data.message)) : resolve(event.data as A)
          worker.onerror = (event) => reject(new Error(`el hilo de respaldo falló: ${event.message}`))
          worker.postMessage(request)
        }),
    )
    queue = next.catch(() => undefined)
    return next
  }
  return {
    snapshot: (req) => ask<SnapshotAnswer>({ kind: 'snapshot', ...req }),
    verify: (req) => ask<VerifyAnswer>({ kind: 'verify', ...req }),
    s3: async (direction, s3, key, path, timeoutMs) => {
      await ask({ kind: direction === 'put' ? 's3-put' : 's3-get', s3, key, path, timeoutMs })
    },
    close: () => worker.terminate(),
  }
}

/** DTE rows in a snapshot file (`timbre backup --out`'s manifest, issue 26): a CLI process, not serve's thread. */
export function countSnapshotDtes(path: string): number {
  const db = new Database(path, { readonly: true })
  try {
    return (db.query('SELECT count(*) AS n FROM dtes').get() as { n: number }).n
  } finally {
    db.close()
  }
}
