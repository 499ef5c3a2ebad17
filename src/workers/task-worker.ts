// The worker entry point (a second entry of dist/timbre, scripts/build.ts): runs one task per message and answers with
// its output or its error. A TimbreError crosses as its code, message, details and context, so the caller rethrows the
// same error the inline path would; any other error crosses as a message only (a bug, answered 500 by the door).
import { getPriority, setPriority } from 'node:os'
import { TimbreError } from '../errors'
import { WORKER_NICE } from './limits'
import type { TaskKind } from './tasks'

declare const self: Worker

// The worker's thread yields to the request thread (./limits.ts WORKER_NICE): WORKER_NICE below the priority it was
// started with (a server started under `nice` keeps the gap). Linux gives each thread its own nice value, so this
// lowers this thread and the threads it starts later; elsewhere the same call would lower the whole process
// (Windows' priority class, macOS), so it is not made there.
if (process.platform === 'linux') {
  try {
    setPriority(0, Math.min(19, getPriority(0) + WORKER_NICE))
  } catch {
    // A sandbox that forbids it: the worker runs at the process's priority, as before.
  }
}

export interface TaskRequest {
  readonly id: number
  readonly kind: TaskKind
  readonly input: unknown
}

export type TaskReply =
  | { readonly id: number; readonly ok: true; readonly output: unknown }
  | { readonly id: number; readonly ok: false; readonly timbre: { code: TimbreError['code']; extra: TimbreError['extra'] } | null; readonly message: string }

// Loaded at the first task, not at start: an idle worker holds ~5 MB instead of ~8.5 MB (issue 17), for ~30 ms once.
let tasks: Promise<typeof import('./tasks')> | undefined

self.onmessage = async (event: MessageEvent<TaskRequest>) => {
  const { id, kind, input } = event.data
  try {
    const { TASKS } = await (tasks ??= import('./tasks'))
    const output = await (TASKS[kind] as (i: unknown) => unknown)(input)
    const transfer = output instanceof Uint8Array && output.byteOffset === 0 && output.byteLength === output.buffer.byteLength ? [output.buffer as ArrayBuffer] : []
    self.postMessage({ id, ok: true, output } satisfies TaskReply, transfer)
  } catch (err) {
    const timbre = err instanceof TimbreError ? { code: err.code, extra: err.extra } : null
    self.postMessage({ id, ok: false, timbre, message: err instanceof Error ? err.message : String(err) } satisfies TaskReply)
  }
}
