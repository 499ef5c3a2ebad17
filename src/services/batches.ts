// Runs `work` over `items` with at most `atOnce` in flight. One item's failure does not stop the others (the caller
// logs the rejected results), so a poisoned row never blocks the queue.

export async function inBatches<T>(items: readonly T[], atOnce: number, work: (item: T) => Promise<unknown>): Promise<PromiseSettledResult<unknown>[]> {
  const results: PromiseSettledResult<unknown>[] = []
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!
      try {
        results.push({ status: 'fulfilled', value: await work(item) })
      } catch (reason) {
        results.push({ status: 'rejected', reason })
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, worker))
  return results
}
