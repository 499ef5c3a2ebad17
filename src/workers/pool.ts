// The worker pool (issue 17): Bun Workers that run tasks.ts off the event loop, so the HTTP thread keeps answering while
// DTEs are signed, envelopes built, PDFs drawn and certificates opened on the other cores. FIFO within two lanes:
// issuance's signatures, short and waited on by a client holding a folio, and everything else; the lanes take turns so
// neither starves the other. A task past its time limit gets its worker terminated and replaced, and its caller a 503
// saying which task and why.
//
// Signatures are pipelined: a worker holds up to SIGN_DEPTH of them, so it keeps signing while the main thread is
// blocked in a COMMIT's fsync and cannot hand it the next one (with one task per worker, the bench showed the workers
// idle half the time at 32 clients). A signature is synchronous in the worker, so the ones queued behind a stuck one
// have not started: when the stuck one is killed they go back to the front of their lane, untouched. Every other kind
// runs alone on its worker (a PDF awaits inside the worker, and a killed worker must take no innocent task with it).
import { availableParallelism } from 'node:os'
import { TimbreError } from '../errors'
import type { TaskReply, TaskRequest } from './task-worker'
import { workerEntry } from '../worker-entry'
import { TASK_LIMITS_MS } from './limits'
import type { TaskInput, TaskKind, TaskOutput, TaskRunner } from './tasks'

export interface PoolOptions {
  /** Workers (default: the machine's cores, at least 1, at most 8). */
  readonly size?: number
  /** Time limits by task, replacing TASK_LIMITS_MS' (tests shorten them). */
  readonly limitsMs?: Partial<Record<TaskKind, number>>
  /** Told when a worker is killed or dies, for the log. */
  readonly onWorkerLost?: (event: { reason: 'timeout' | 'crash'; kind: TaskKind; message: string }) => void
}

interface Pending {
  readonly kind: TaskKind
  readonly input: unknown
  readonly resolve: (output: unknown) => void
  readonly reject: (err: unknown) => void
}

type Running = Pending & { readonly id: number; readonly timer: ReturnType<typeof setTimeout> }

interface Slot {
  worker: Worker
  /** In flight on this worker, in the order posted (the worker answers in that order). */
  tasks: Running[]
}

/** Signatures one worker holds at once (see above). */
export const SIGN_DEPTH = 4

export function defaultPoolSize(): number {
  return Math.max(1, Math.min(8, availableParallelism()))
}

export class WorkerPool implements TaskRunner {
  private readonly slots: Slot[] = []
  private readonly lanes: [Pending[], Pending[]] = [[], []]
  private turn = 0
  private nextId = 1
  private closed = false

  constructor(private readonly options: PoolOptions = {}) {
    const size = options.size ?? defaultPoolSize()
    for (let i = 0; i < size; i++) {
      const slot: Slot = { worker: null as unknown as Worker, tasks: [] }
      this.startWorker(slot)
      this.slots.push(slot)
    }
  }

  run<K extends TaskKind>(kind: K, input: TaskInput<K>): Promise<TaskOutput<K>> {
    if (this.closed) return Promise.reject(new TimbreError('SERVICE_UNAVAILABLE'))
    return new Promise<TaskOutput<K>>((resolve, reject) => {
      this.lanes[kind === 'sign-dte' ? 0 : 1].push({ kind, input, resolve: resolve as (o: unknown) => void, reject })
      this.dispatch()
    })
  }

  /** Tasks waiting for a worker plus tasks running (for /health-style reporting and tests). */
  get backlog(): number {
    return this.lanes[0].length + this.lanes[1].length + this.slots.reduce((n, s) => n + s.tasks.length, 0)
  }

  async close(): Promise<void> {
    this.closed = true
    for (const pending of this.lanes.flatMap((lane) => lane.splice(0))) pending.reject(new TimbreError('SERVICE_UNAVAILABLE'))
    for (const slot of this.slots) {
      for (const task of slot.tasks.splice(0)) {
        clearTimeout(task.timer)
        task.reject(new TimbreError('SERVICE_UNAVAILABLE'))
      }
      slot.worker.terminate()
    }
  }

  private startWorker(slot: Slot): void {
    const worker = new Worker(workerEntry('workers/task-worker'))
    worker.onmessage = (event: MessageEvent<TaskReply>) => {
      if (slot.worker === worker) this.settle(slot, event.data)
    }
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault()
      if (slot.worker === worker) this.replace(slot, 'crash', event.message)
    }
    // Not unref'd: Bun delivers an unref'd worker's messages late (measured: 2–4× the latency per task); the pool's
    // owner closes it on shutdown instead.
    slot.worker = worker
  }

  private take(): Pending | undefined {
    // Everything but signatures keeps at least one worker free for them (with 2 workers, PDFs in a loop otherwise took
    // both and issuance fell to a tenth, bench row 8); on a pool of one, the lanes just take turns.
    const bulkAllowed = this.bulkAllowed()
    for (let i = 0; i < 2; i++) {
      const index = (this.turn + i) % 2
      const lane = this.lanes[index]!
      if (lane.length > 0 && (index === 0 || bulkAllowed)) {
        this.turn = (index + 1) % 2
        return lane.shift()
      }
    }
    return undefined
  }

  private bulkAllowed(): boolean {
    const bulkBusy = this.slots.filter((slot) => slot.tasks.some((t) => t.kind !== 'sign-dte')).length
    return bulkBusy < Math.max(1, this.slots.length - 1)
  }

  private dispatch(): void {
    // Idle workers first, whatever the lane; then signatures onto workers that are only signing.
    for (const slot of this.slots) {
      if (slot.tasks.length > 0) continue
      const pending = this.take()
      if (pending === undefined) return
      this.post(slot, pending)
    }
    // While other work waits for a worker it may have, no worker is kept busy with a queue of signatures: each drains
    // to idle and the lanes take turns there (pipelining past it starved PDFs outright under steady issuance).
    if (this.lanes[1].length > 0 && this.bulkAllowed()) return
    for (let depth = 1; depth < SIGN_DEPTH && this.lanes[0].length > 0; depth++)
      for (const slot of this.slots) {
        if (slot.tasks.length !== depth || slot.tasks.some((t) => t.kind !== 'sign-dte')) continue
        const pending = this.lanes[0].shift()
        if (pending === undefined) return
        this.post(slot, pending)
      }
  }

  private post(slot: Slot, pending: Pending): void {
    const id = this.nextId++
    const limitMs = this.options.limitsMs?.[pending.kind] ?? TASK_LIMITS_MS[pending.kind]
    const timer = setTimeout(() => this.expire(slot, id, limitMs), limitMs)
    slot.tasks.push({ ...pending, id, timer })
    slot.worker.postMessage({ id, kind: pending.kind, input: pending.input } satisfies TaskRequest)
  }

  private settle(slot: Slot, reply: TaskReply): void {
    const at = slot.tasks.findIndex((t) => t.id === reply.id)
    if (at < 0) return
    const [task] = slot.tasks.splice(at, 1)
    clearTimeout(task!.timer)
    if (reply.ok) task!.resolve(reply.output)
    else task!.reject(reply.timbre ? new TimbreError(reply.timbre.code, reply.timbre.extra) : new Error(`task ${task!.kind}: ${reply.message}`))
    this.dispatch()
  }

  private expire(slot: Slot, id: number, limitMs: number): void {
    if (slot.tasks[0]?.id !== id) return
    const seconds = limitMs / 1000
    this.replace(slot, 'timeout', `excedió su tiempo límite de ${seconds} s`)
  }

  /**
   * Kills the slot's worker and starts a fresh one. The oldest task in flight, the one running, fails (never retried:
   * it may be what kills workers); the signatures queued behind it never started and go back to the front of their lane.
   */
  private replace(slot: Slot, reason: 'timeout' | 'crash', message: string): void {
    const [task, ...waiting] = slot.tasks.splice(0)
    slot.worker.terminate()
    for (const queued of waiting.reverse()) {
      clearTimeout(queued.timer)
      this.lanes[0].unshift({ kind: queued.kind, input: queued.input, resolve: queued.resolve, reject: queued.reject })
    }
    if (task) {
      clearTimeout(task.timer)
      this.options.onWorkerLost?.({ reason, kind: task.kind, message })
      task.reject(
        new TimbreError('SERVICE_UNAVAILABLE', {
          message: `La tarea ${TASK_NAMES[task.kind]} ${reason === 'timeout' ? message : 'terminó inesperadamente'} y fue detenida; no se guardó nada. Reintente.`,
          context: { tarea: task.kind, motivo: reason === 'timeout' ? 'tiempo_limite' : 'falla_del_proceso' },
        }),
      )
    }
    if (this.closed) return
    this.startWorker(slot)
    this.dispatch()
  }
}

/** What a task is called in the messages integrators read (Spanish, DESIGN §5). */
const TASK_NAMES: Readonly<Record<TaskKind, string>> = {
  'sign-dte': 'de firma del DTE',
  'build-envelope': 'de armado y firma del sobre',
  'render-pdf': 'de generación del PDF',
  'open-pfx': 'de apertura del certificado',
  'read-caf': 'de lectura del CAF',
}
