// Admin commands open the data dir directly (also while serve runs: WAL + busy timeout) and close it when done.
import { openAdminStore } from '../app'
import { systemClock } from '../clock'
import { dataDirFrom } from '../config'
import { stderrLogger } from '../log'
import type { Deps } from '../services/deps'
import type { ParsedArgs } from './command'

/** What a command hands its services: the data dir's store and the system clock, so it calls them as routes and jobs do. */
export type AdminDeps = Pick<Deps, 'store' | 'clock'>

/** `create` only for the commands DESIGN §3 lets create a database (`empresa create`); the rest need an existing one. */
export async function withAdminStore<T>(args: ParsedArgs, fn: (deps: AdminDeps) => T | Promise<T>, opts: { create?: boolean } = {}): Promise<T> {
  const store = openAdminStore(dataDirFrom(args.flags), stderrLogger(), opts)
  try {
    return await fn({ store, clock: systemClock })
  } finally {
    store.close()
  }
}
