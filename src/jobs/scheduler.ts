// The only croner user: runs each registered job on its period, never overlapping itself (protect), never dying
// on a throw (catch), stopped on shutdown (DESIGN §1). Jobs keep their state in the database, so a restart resumes.
import { Cron } from 'croner'
import type { Deps } from '../services/deps'

export interface Job {
  readonly name: string
  readonly everyMs: number
  /** One pass over the work that is due at `deps.clock.now()`; returns how many items it handled, for the log. */
  runOnce(deps: Deps): Promise<number> | number
}

export interface Scheduler {
  isRunning(): boolean
  /**
   * Waits for runs in progress (up to graceMs), then stops every job. Resolves with how many runs were still going at
   * the deadline: their work is leased or idempotent in the database, so a restart finishes it (DESIGN §1).
   */
  stop(graceMs: number): Promise<number>
}

export function startScheduler(deps: Deps, jobs: readonly Job[]): Scheduler {
  let running = 0
  let stopped = false
  const crons = jobs.map(
    (job) =>
      new Cron(
        '* * * * * *',
        {
          // Every second, then at least `interval` seconds apart: periods of DESIGN §2 (5s, 30s, 1h) in one form.
          interval: Math.max(1, Math.round(job.everyMs / 1000)),
          // The first run comes one period after start, like every later one: a restart does not fire every job at once.
          startAt: new Date(Date.now() + job.everyMs),
          protect: true,
          catch: (err: unknown) => deps.log.error('job.failed', { job: job.name, error: String(err), stack: (err as Error)?.stack }),
        },
        async () => {
          if (stopped) return
          running++
          const started = performance.now()
          try {
            const handled = await job.runOnce(deps)
            if (handled > 0) deps.log.info('job.run', { job: job.name, handled, duration_ms: Math.round(performance.now() - started) })
          } finally {
            running--
          }
        },
      ),
  )
  return {
    isRunning: () => !stopped && crons.every((c) => c.isRunning()),
    async stop(graceMs) {
      stopped = true
      for (const c of crons) c.pause()
      const deadline = Date.now() + graceMs
      while (running > 0 && Date.now() < deadline) await Bun.sleep(25)
      for (const c of crons) c.stop()
      return running
    },
  }
}
