// DESIGN §11, issue 17 row 7: start-up time of the compiled binary (process start → first 200 from /health, fresh data
// dir: migrations included) and its memory at rest. bench/run.ts calls it; alone: bun bench/startup.ts [runs]
import { BINARY, rssMb, summarize, tempDir } from './support'
import { rmSync } from 'node:fs'

export async function measureStartup(runs: number): Promise<{ p50: number; worst: number; times: number[]; rssMb: number }> {
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
      if (proc.exitCode !== null) throw new Error(`timbre serve exited with ${proc.exitCode} before answering /health`)
      await Bun.sleep(2)
    }
    times.push(performance.now() - started)
    await Bun.sleep(300)
    rss = rssMb(proc.pid)
    proc.kill('SIGTERM')
    await proc.exited
    rmSync(dataDir, { recursive: true, force: true })
  }
  const s = summarize(times)
  return { p50: s.p50, worst: Math.max(...times), times, rssMb: rss }
}

if (import.meta.main) {
  const runs = Number(process.argv[2] ?? 7)
  const r = await measureStartup(runs)
  console.log(`start-up to first /health 200 (fresh data dir, migrations, in-process simulator), ${runs} runs: p50 ${r.p50.toFixed(0)} ms, worst ${r.worst.toFixed(0)} ms`)
  console.log(`RSS at rest after start: ${r.rssMb.toFixed(0)} MB`)
}
