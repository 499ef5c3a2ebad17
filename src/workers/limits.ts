// Time limits of the pool's tasks (workers/pool.ts), apart from the tasks themselves so the main thread reads them without
// loading what the tasks use (xml-crypto, xmlbuilder2, node-forge, pdf-lib: ~4 MB of memory at rest, issue 17).
import type { TaskKind } from './tasks'

/** Past its limit a task's worker is killed and replaced, and its caller gets a 503 naming the task. */
export const TASK_LIMITS_MS: Readonly<Record<TaskKind, number>> = {
  'sign-dte': 10_000,
  'build-envelope': 60_000,
  'render-pdf': 20_000,
  // Exporters use up to 600 000 PBKDF iterations: forge takes ~10 s on this class of machine (crypto/pfx.ts bounds them).
  'open-pfx': 60_000,
  'read-caf': 10_000,
}

/**
 * The nice value of each worker's thread (issue 31). On 2 cores the two signing threads, the request thread and the
 * runtime's own threads take turns; at equal priority the request thread waited behind a signature for a core, and
 * every `/health` and every answer with it. 10 below the process's priority, the request thread gets a core as soon as
 * it has work; the workers still get every core the request thread leaves. Other busy processes at normal priority
 * also come first, and a runtime thread a worker starts inherits its value (docs/decisions/performance.md "The price").
 */
export const WORKER_NICE = 10
