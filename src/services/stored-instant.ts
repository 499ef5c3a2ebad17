// The instant a document is stored, and its id from that same instant (issue 27). GET /dte pages newest first by the
// UUIDv7 id, and the record shows created_at: both come from one instant taken when the row is written, inside the
// group commit, so they agree in commit order. The instant never goes back, even when the wall clock steps back (NTP)
// or a test's clock stands still: ids stay strictly increasing in this process, and created_at never decreases down a
// page. Within one millisecond a 12-bit counter in UUIDv7's rand_a orders the ids (RFC 9562 §6.2, method 1); past 4096
// in one millisecond the instant moves on by a millisecond, a drift nobody can see. One sequence per database (the
// serve lock keeps one process per data dir), so tests that run several servers with their own clocks do not mix; it
// resumes after the newest stored id, so a clock that stepped back across a restart does not take the order back.
import { getRandomValues } from 'node:crypto'
import { newestDteId } from '../db/dte-store'
import type { Store } from '../db/open'

export interface StoredInstant {
  readonly id: string
  readonly at: Date
}

export class StoredInstants {
  private lastMs = 0
  private counter = 0

  /** `after`: an id this sequence must stay above (the newest stored one). */
  constructor(after: string | null = null) {
    if (after === null) return
    const hex = after.replaceAll('-', '')
    this.lastMs = parseInt(hex.slice(0, 12), 16)
    this.counter = parseInt(hex.slice(13, 16), 16)
  }

  next(nowMs: number): StoredInstant {
    if (nowMs > this.lastMs) {
      this.lastMs = nowMs
      this.counter = 0
    } else if (++this.counter > 0xfff) {
      this.lastMs += 1
      this.counter = 0
    }
    return { id: uuidV7(this.lastMs, this.counter), at: new Date(this.lastMs) }
  }
}

const perStore = new WeakMap<Store, StoredInstants>()

export function storedInstantsOf(store: Store): StoredInstants {
  let instants = perStore.get(store)
  if (!instants) perStore.set(store, (instants = new StoredInstants(newestDteId(store.db))))
  return instants
}

function uuidV7(ms: number, seq: number): string {
  const bytes = new Uint8Array(16)
  getRandomValues(bytes.subarray(8))
  for (let i = 5, rest = ms; i >= 0; i--, rest = Math.floor(rest / 256)) bytes[i] = rest % 256
  bytes[6] = 0x70 | (seq >> 8)
  bytes[7] = seq & 0xff
  bytes[8] = 0x80 | (bytes[8]! & 0x3f)
  const hex = Buffer.from(bytes).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
