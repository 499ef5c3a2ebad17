// Issue 17 row 8: GET /health every `intervalMs` for `durationMs`, in its own process so the load generator's busy event
// loop in bench/run.ts does not delay the probe's own timers and reads; prints the latencies as one JSON line.
//   bun bench/health-probe.ts <url> <durationMs> <intervalMs>
const [url, durationMs, intervalMs] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])]
const latencies: number[] = []
let errors = 0
const end = performance.now() + durationMs
while (performance.now() < end) {
  const t0 = performance.now()
  const res = await fetch(`${url}/health`)
  await res.arrayBuffer()
  latencies.push(performance.now() - t0)
  if (res.status !== 200) errors++
  await Bun.sleep(Math.max(0, intervalMs - (performance.now() - t0)))
}
console.log(JSON.stringify({ latencies, errors }))
export {}
