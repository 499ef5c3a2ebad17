// DESIGN §11: start-up time of the compiled binary (process start → first 200 from /health) and its memory at rest.
//   bun scripts/build.ts && bun bench/startup.ts [runs]
import { BINARY, rssMb, summarize, tempDir } from './support'

const runs = Number(process.argv[2] ?? 7)
const times: number[] = []
let rss = 0
for (let i = 0; i < runs; i++) {
  const dataDir = tempDir('timbre-bench-start-')
  const port = 20000 + Math.floor(Math.random() * 20000)
  const started = performance.now()
  const proc = Bun.spawn([BINARY, 'serve', '--port', String(port), '--data-dir', dataDir, '--sii', 'simulado'], { stdout: 'ignore', stderr: 'ignore' })
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).status === 200) break
    } catch {
      // not listening yet
    }
    await Bun.sleep(5)
  }
  times.push(performance.now() - started)
  await Bun.sleep(300)
  rss = rssMb(proc.pid)
  proc.kill('SIGTERM')
  await proc.exited
}
const s = summarize(times)
console.log(`start-up to first /health 200 (fresh data dir, migrations, in-process simulator), ${runs} runs: p50 ${s.p50.toFixed(0)} ms, worst ${Math.max(...times).toFixed(0)} ms`)
console.log(`RSS at rest after start: ${rss.toFixed(0)} MB`)
