// Admin commands open the data dir directly (also while serve runs: WAL + busy timeout) and close it when done.
import { openAdminStore } from '../app'
import { dataDirFrom } from '../config'
import { stderrLogger } from '../log'
import type { ParsedArgs } from './command'

/** `create` only for the commands DESIGN §3 lets create a database (`empresa create`); the rest need an existing one. */
export async function withAdminStore<T>(args: ParsedArgs, fn: (store: ReturnType<typeof openAdminStore>) => T | Promise<T>, opts: { create?: boolean } = {}): Promise<T> {
  const store = openAdminStore(dataDirFrom(args.flags), stderrLogger(), opts)
  try {
    return await fn(store)
  } finally {
    store.close()
  }
}
