// One holder per key at a time in this process: the SII caps concurrent portal sessions per RUT (research §2.2
// "Limits"), so a second read for the same company waits for the first instead of opening a second session.

export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>()

  /** Runs `work` once every earlier holder of `key` has finished (fulfilled or not); holders of other keys run freely. */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve()
    let release = () => {}
    const mine = new Promise<void>((resolve) => (release = resolve))
    const tail = before.then(() => mine)
    this.tails.set(key, tail)
    await before
    try {
      return await work()
    } finally {
      release()
      // The last holder leaves no entry behind: the map holds only keys someone is using or waiting for.
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }
}

/**
 * The process's one lock per company, keyed by the RUT's canonical form (`formatRut`): the RCV reader (rcv-client.ts)
 * and the folio requests (folios.ts) both open portal sessions with the company's certificate, and the SII counts
 * them together.
 */
export const companyPortalSessions = new KeyedMutex()
