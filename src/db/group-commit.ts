// Group commit (issue 17): writes that arrive while the thread is busy share one transaction and so one fsync. Each
// write runs in its own savepoint, so one that fails rolls back alone; each caller's promise settles only after the
// COMMIT returned (synchronous = FULL: on disk), so "201 means committed" holds for every member of a group. No delay
// is added to wait for company: a group is whatever queued while the previous commit (or other work) held the thread,
// so at low load every write commits at once, and under load groups grow by themselves.
import type { Database, Statement } from 'bun:sqlite'
import type { Db, Store } from './open'

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

  // The transaction's own statements, prepared once: Drizzle's tx.transaction() renders and prepares SAVEPOINT and
  // RELEASE again for every write (~2 % of the main thread under load). The writes themselves go through `db`, on the
  // same connection, so they run inside whatever this has open.
  private readonly sql: Readonly<Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', Statement>>

  constructor(
    private readonly db: Db,
    private readonly sqlite: Database,
  ) {
    this.sql = {
      begin: sqlite.prepare('BEGIN IMMEDIATE'),
      commit: sqlite.prepare('COMMIT'),
      rollback: sqlite.prepare('ROLLBACK'),
      savepoint: sqlite.prepare('SAVEPOINT issuance'),
      release: sqlite.prepare('RELEASE issuance'),
      rollbackTo: sqlite.prepare('ROLLBACK TO issuance'),
    }
  }

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
    const { sql } = this
    try {
      sql.begin.run()
      try {
        for (const item of group) {
          sql.savepoint.run()
          try {
            outcomes.push({ ok: true, value: item.work(this.db) })
            sql.release.run()
          } catch (err) {
            // SQLite may roll the whole transaction back by itself on an I/O error or a full disk: then the group
            // fails with that cause, not with the "no such savepoint" that rolling back to the savepoint would raise.
            if (!this.sqlite.inTransaction) throw err
            sql.rollbackTo.run()
            sql.release.run()
            outcomes.push({ ok: false, err })
          }
        }
        if (this.fault?.phase === 'before' && group.length >= this.fault.minGroup) this.fault.act()
        sql.commit.run()
      } catch (err) {
        // COMMIT failed (a deferred constraint, the disk) or a savepoint could not be rolled back: nothing is stored.
        if (this.sqlite.inTransaction) sql.rollback.run()
        throw err
      }
    } catch (err) {
      // BEGIN, the writes' savepoints or COMMIT failed (the disk, a lock held past the busy timeout): nothing of the
      // group is stored.
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

const committers = new WeakMap<Database, GroupCommitter>()

/** The one committer of this store's connection. */
export function groupCommitterOf(store: Pick<Store, 'db' | 'sqlite'>): GroupCommitter {
  let committer = committers.get(store.sqlite)
  if (!committer) committers.set(store.sqlite, (committer = new GroupCommitter(store.db, store.sqlite)))
  return committer
}
