// Group commit (issue 17): writes that arrive while the thread is busy share one transaction and so one fsync. Each
// write runs in its own savepoint, so one that fails rolls back alone; each caller's promise settles only after the
// COMMIT returned (synchronous = FULL: on disk), so "201 means committed" holds for every member of a group. No delay
// is added to wait for company: a group is whatever queued while the previous commit (or other work) held the thread,
// so at low load every write commits at once, and under load groups grow by themselves.
import type { Db } from './open'

interface Queued {
  readonly work: (tx: Db) => unknown
  readonly resolve: (value: unknown) => void
  readonly reject: (err: unknown) => void
}

/** Most writes in one transaction: bounds how long one commit holds the thread. */
export const MAX_GROUP = 256

/** Crash tests only (config faultGroupCommit): `act` runs at that point of a group of at least `minGroup` writes. */
export interface CommitFault {
  readonly phase: 'before' | 'after'
  readonly minGroup: number
  readonly act: () => void
}

export class GroupCommitter {
  fault: CommitFault | null = null
  private queue: Queued[] = []
  private scheduled = false
  /** Sizes of the last groups, for the benchmark and tests (how often a group held more than one write). */
  readonly stats = { groups: 0, writes: 0, largest: 0 }

  constructor(private readonly db: Db) {}

  /** Runs `work` in the next group's transaction; resolves with its value once that transaction is committed. */
  submit<T>(work: (tx: Db) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject })
      if (!this.scheduled) {
        this.scheduled = true
        setImmediate(() => this.flush())
      }
    })
  }

  private flush(): void {
    this.scheduled = false
    const group = this.queue.splice(0, MAX_GROUP)
    if (this.queue.length > 0) {
      this.scheduled = true
      setImmediate(() => this.flush())
    }
    if (group.length === 0) return
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; err: unknown }> = []
    try {
      this.db.transaction(
        (tx) => {
          for (const item of group) {
            try {
              outcomes.push({ ok: true, value: tx.transaction((sp) => item.work(sp as unknown as Db)) })
            } catch (err) {
              outcomes.push({ ok: false, err })
            }
          }
          if (this.fault?.phase === 'before' && group.length >= this.fault.minGroup) this.fault.act()
        },
        { behavior: 'immediate' },
      )
    } catch (err) {
      // BEGIN or COMMIT failed (the disk, a lock held past the busy timeout): nothing of the group is stored.
      for (const item of group) item.reject(err)
      return
    }
    if (this.fault?.phase === 'after' && group.length >= this.fault.minGroup) this.fault.act()
    this.stats.groups++
    this.stats.writes += group.length
    this.stats.largest = Math.max(this.stats.largest, group.length)
    group.forEach((item, i) => {
      const outcome = outcomes[i]!
      if (outcome.ok) item.resolve(outcome.value)
      else item.reject(outcome.err)
    })
  }
}

const committers = new WeakMap<Db, GroupCommitter>()

export function groupCommitterOf(db: Db): GroupCommitter {
  let committer = committers.get(db)
  if (!committer) committers.set(db, (committer = new GroupCommitter(db)))
  return committer
}
