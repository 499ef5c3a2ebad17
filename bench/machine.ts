// What the figures were measured on: cores, CPU model, memory, the disk's fsync time on the data dir's filesystem,
// versions, the commit, and how busy the machine already was (other work on the same 2 cores moves every figure).
import { closeSync, fsyncSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { availableParallelism, loadavg, release, totalmem } from 'node:os'
import { join } from 'node:path'
import { ROOT, summarize } from './support'

export type Machine = {
  cores: number
  cpuModel: string
  memoryGb: number
  kernel: string
  bun: string
  loadAverage1m: number
  /** PSI: % of the last 60 s in which some runnable task waited for a CPU (other work on these cores), null without PSI. */
  cpuPressure60s: number | null
  commit: string
  /** Files under src/ that differ from the commit: the binary was built from the work tree, so say so. */
  srcChangesUncommitted: number
}

export function describeMachine(): Machine {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8')
  const git = (...args: string[]) => Bun.spawnSync(['git', ...args], { cwd: ROOT }).stdout.toString().trim()
  return {
    cores: availableParallelism(),
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    bun: Bun.version,
    loadAverage1m: loadavg()[0]!,
    cpuPressure60s: cpuPressure60s(),
    commit: git('rev-parse', '--short', 'HEAD'),
    srcChangesUncommitted: git('status', '--porcelain', '--', 'src', 'scripts', 'drizzle').split('\n').filter(Boolean).length,
  }
}

export function cpuPressure60s(): number | null {
  try {
    return Number(/^some .*avg60=([\d.]+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1] ?? Number.NaN)
  } catch {
    return null
  }
}

/** p50/p99 of one 4 KB append + fsync, as SQLite's commit does in WAL mode, on the filesystem of `dir`. */
export function fsyncLatency(dir: string, runs = 300): { p50: number; p99: number; n: number } {
  const file = join(dir, 'fsync-probe')
  const fd = openSync(file, 'w')
  const page = Buffer.alloc(4096, 1)
  const times: number[] = []
  try {
    for (let i = 0; i < runs + 10; i++) {
      writeSync(fd, page)
      const t0 = performance.now()
      fsyncSync(fd)
      if (i >= 10) times.push(performance.now() - t0)
    }
  } finally {
    closeSync(fd)
    rmSync(file, { force: true })
  }
  return summarize(times)
}
