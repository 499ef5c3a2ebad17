// What every use case may need, built once by app.ts (the composition root) and handed to the three doors.
import type { Clock } from '../clock'
import type { Config } from '../config'
import type { Store } from '../db/open'
import type { Vault } from '../crypto/vault'
import type { SiiTiming } from '../domain/estados'
import type { SiiClient } from '../sii/client/client'
import type { FoliosPortalClient } from '../sii/portal/folios'
import type { RcvPortalClient } from '../sii/portal/types'
import type { Logger } from '../log'
import type { JwtKeyring } from './tokens'
import type { TaskRunner } from '../workers/tasks'

export interface Deps {
  readonly store: Store
  readonly clock: Clock
  readonly log: Logger
  readonly config: Config
  readonly keyring: JwtKeyring
  /** Seals and opens private keys at rest (certificates, CAFs). */
  readonly vault: Vault
  /** The SII (real hosts, an origin, or the in-process simulator: DESIGN §2 TIMBRE_SII). */
  readonly sii: SiiClient
  /** Back-off policies of the SII jobs (DESIGN §6; shortened for the simulator). */
  readonly siiTiming: SiiTiming
  /** When the SII last answered something other than a passing fault (GET /ready). */
  readonly siiHealth: { lastOkAt(): string | null }
  /** The SII portal's RCV, read with the company's certificate (DESIGN §16); the demo company's goes to the simulator. */
  readonly rcvPortal: RcvPortalClient
  /** The SII's folio pages, driven with the company's certificate (DESIGN §17); the demo company's go to the simulator. */
  readonly foliosPortal: FoliosPortalClient
  /** CPU-bound tasks (signing, envelopes, PDFs, opening certificates and CAFs): the worker pool in `serve` (issue 17). */
  readonly tasks: TaskRunner
}
