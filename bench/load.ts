// Issue 18, "Load": 100 000 mixed requests from 64 closed-loop clients over several companies against the compiled
// binary: zero 5xx, answers within their targets, memory flat. The mix (test/support/load-mix.ts) is shared with the
// short form in npm test (test/cli/load-short.test.ts), which checks the same answers without timings. Prints progress
// lines, then a summary table (what | measured | target | ok?) with the signature floor measured in the same run, and
// writes bench/results/load-last.json. bench/README.md, "Load", says what each target is and why.
//   bun bench/load.ts [--requests 100000] [--clients 64] [--companies 4] [--seed N] [--no-build] [--floor-seconds 3] [--keep]
//                     [--sii-apart]   (the SII simulator in its own process, its CPU and RSS apart from the server's)
// bench/run.ts runs it as its `load` row (`--only load`), on its own floor.
import { $ } from 'bun'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { checkStored, createLoadCompanies, equipLoadCompanies, foliosFor, runMix } from '../test/support/load-mix'
import { opensslFloor, threadedSigningRates } from './floor'
import { cpuSeconds, stopServer, threadCpuSeconds } from './issuance'
import { cpuPressure60s, describeMachine, fsyncLatency } from './machine'
import { BINARY, ROOT, rssMb, startServer, summarize, tempDir } from './support'

export type Verdict = { what: string; measured: string; target: string; ok: boolean | null }

export type LoadOptions = {
  requests: number
  clients: number
  companies: number
  seed: number
  keep: boolean
  /**
   * The SII simulator in its own process (`timbre sii-simulator`, the server on `--sii http://…`) instead of inside the
   * server (`--sii simulado`): its CPU and RSS are then printed apart from the server's.
   */
  siiApart?: boolean
  /** The floor the rows are read against, DTE/s (bench/floor.ts, measured by the caller in the same run). */
  floorDtePerSecond: number
  log?: (line: string) => void
}

/**
 * Latency targets per kind of request, p99 in ms. Reads and refusals: issue 17's list target (p99 ≤ 50 ms on a million
 * DTEs), which any read of these smaller tables must meet too. Issuance: issue 17's c=32 target, 1 000 DTE/s with 32
 * in flight, is 32 ms per issuance on average (Little's law); the p99 may be three times that. A PDF: issue 9's render
 * target is p50 ≤ 50 ms on one core; under load, ten times that. /health: issue 17 row 8, ≤ 5 ms under load.
 */
export const P99_TARGET_MS: Readonly<Record<string, number>> = {
  'dte.issue': 100,
  'dte.issue.auto_send': 100,
  'dte.replay': 50,
  'dte.retry': 100,
  'dte.list': 50,
  'dte.list.next': 50,
  'dte.get': 50,
  'dte.xml': 50,
  'dte.pdf': 500,
  'cliente.create': 50,
  'cliente.search': 50,
  'producto.create': 50,
  'producto.search': 50,
  'catalog.read': 50,
  health: 5,
  invalid: 50,
}
/** Issue 17: RSS under load. */
export const RSS_PEAK_TARGET_MB = 300
/** Flat: the median RSS of the last quarter of the run at most this much above the second quarter's (the first is warm-up). */
export const RSS_GROWTH_TARGET_MB = 10
const HEALTH_ROUND_MS = 3000

const f0 = (n: number) => n.toFixed(0)
const f1 = (n: number) => n.toFixed(1)
const f2 = (n: number) => n.toFixed(2)
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? Number.NaN : s[Math.floor(s.length / 2)]!
}

export async function runLoadBench(opt: LoadOptions): Promise<{ summary: Verdict[]; results: Record<string, unknown> }> {
  const log = opt.log ?? ((line: string) => console.log(line))
  const summary: Verdict[] = []
  const dataDir = tempDir('timbre-bench-load-')
  const results: Record<string, unknown> = { options: { ...opt, log: undefined }, dataDir }
  try {
    // Companies by the CLI, then the server, then each company's certificate and CAFs over HTTP.
    const folios = foliosFor(opt.requests, opt.companies)
    const made = createLoadCompanies(dataDir, opt.companies)
    const errorLines: string[] = []
    let errorCount = 0
    let pending = ''
    // The server's own time per request (its log: from the handler's first line to the answer), by route: what the
    // client saw beyond it waited in the event loop, the kernel or for a core.
    const handlerMs = new Map<string, number[]>()
    const simulator = opt.siiApart ? await startSimulator(join(dataDir, 'sii')) : null
    const server = await startServer(dataDir, simulator ? ['--sii', simulator.url] : [], (chunk) => {
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop()!
      for (const line of lines) {
        if (line.includes('"level":"error"')) {
          errorCount++
          if (errorLines.length < 5) errorLines.push(line.slice(0, 400))
        }
        if (line.includes('"event":"http.request"')) {
          const r = JSON.parse(line) as { method?: string; route?: string; duration_ms?: number }
          const key = `${r.method} ${r.route}`
          if (typeof r.duration_ms === 'number') (handlerMs.get(key) ?? handlerMs.set(key, []).get(key)!).push(r.duration_ms)
        }
      }
    })
    const pid = server.proc.pid
    try {
      const companies = await equipLoadCompanies(server.url, made, folios)
      log(`${opt.companies} companies (each its own API keys, certificate and a CAF of ${folios} folios for each of 7 tipos), server pid ${pid} at ${server.url}`)
      await Bun.sleep(1000)
      const atRest = rssMb(pid)

      // RSS every 500 ms, with how many answers were in at that moment; a progress line every 5 s.
      const samples: Array<[number, number]> = [[0, atRest]]
      let answered = 0
      let peak = atRest
      const sampler = setInterval(() => {
        const mb = rssMb(pid)
        peak = Math.max(peak, mb)
        samples.push([answered, mb])
      }, 500)
      let lastAnswered = 0
      let lastAt = performance.now()
      const startedAt = performance.now()
      const progress = setInterval(() => {
        const now = performance.now()
        const mb = rssMb(pid)
        peak = Math.max(peak, mb)
        const rate = (answered - lastAnswered) / ((now - lastAt) / 1000)
        lastAnswered = answered
        lastAt = now
        log(
          `  ${String(answered).padStart(7)} / ${opt.requests} answered, ${f0(rate)} req/s, ${f0((now - startedAt) / 1000)} s; RSS ${f0(mb)} MB (peak ${f0(peak)}); ` +
            `load average ${f2(loadavg()[0]!)}, CPU pressure ${cpuPressure60s() ?? '?'} %`,
        )
      }, 5000)

      // /health from its own process (bench/health-probe.ts, as issue 17 row 8), in rounds while the mix runs; the round
      // the mix ends in is dropped, so idle probes after the load do not dilute the figure.
      let mixRunning = true
      const probeLatencies: number[] = []
      let probeErrors = 0
      const probing = (async () => {
        while (mixRunning) {
          const probe = Bun.spawn([process.execPath, join(ROOT, 'bench/health-probe.ts'), server.url, String(HEALTH_ROUND_MS), '10'], { stdout: 'pipe', stderr: 'inherit' })
          const out = JSON.parse(await new Response(probe.stdout).text()) as { latencies: number[]; errors: number }
          if (!mixRunning) break
          probeLatencies.push(...out.latencies)
          probeErrors += out.errors
        }
      })()

      const sim0 = simulator ? cpuSeconds(simulator.proc.pid) : 0
      let simPeak = simulator ? rssMb(simulator.proc.pid) : 0
      const simSampler = simulator ? setInterval(() => (simPeak = Math.max(simPeak, rssMb(simulator.proc.pid))), 500) : null
      const cpu0 = cpuSeconds(pid)
      const threads0 = threadCpuSeconds(pid)
      const own0 = process.cpuUsage()
      log(`mix: ${opt.requests} requests, ${opt.clients} closed-loop clients, seed ${opt.seed}`)
      const mix = await runMix({ url: server.url, companies, clients: opt.clients, requests: opt.requests, seed: opt.seed, onAnswer: (n) => (answered = n) })
      mixRunning = false
      clearInterval(progress)
      clearInterval(sampler)
      samples.push([answered, rssMb(pid)])
      const seconds = mix.seconds
      const own = process.cpuUsage(own0)
      if (simSampler) clearInterval(simSampler)
      const simulatorCores = simulator ? (cpuSeconds(simulator.proc.pid) - sim0) / mix.seconds : null
      const t = threadCpuSeconds(pid)
      const cpu = {
        serverCores: (cpuSeconds(pid) - cpu0) / seconds,
        main: (t.main - threads0.main) / seconds,
        workers: (t.workers - threads0.workers) / seconds,
        other: (t.other - threads0.other) / seconds,
        generatorCores: (own.user + own.system) / 1e6 / seconds,
      }
      await probing
      const stored = checkStored(dataDir, mix.created)
      await Bun.sleep(5000)
      const idle = rssMb(pid)

      // Per kind: every invalid.* counted together in `invalid` (their statuses kept apart in the JSON).
      const byKind = new Map<string, { count: number; latencies: number[]; statuses: Record<string, number> }>()
      for (const [kind, s] of Object.entries(mix.kinds)) {
        const row = kind.startsWith('invalid.') ? 'invalid' : kind
        const acc = byKind.get(row) ?? { count: 0, latencies: [], statuses: {} }
        acc.count += s.count
        for (const ms of s.latenciesMs) acc.latencies.push(ms)
        for (const [status, n] of Object.entries(s.statuses)) acc.statuses[status] = (acc.statuses[status] ?? 0) + n
        byKind.set(row, acc)
      }
      const kinds: Record<string, unknown> = {}
      log(`\n${'kind'.padEnd(22)} ${'count'.padStart(7)} ${'p50'.padStart(8)} ${'p99'.padStart(8)} ${'max'.padStart(8)}  statuses`)
      for (const kind of Object.keys(P99_TARGET_MS)) {
        const k = byKind.get(kind)
        if (!k) continue
        const s = summarize(k.latencies)
        const max = Math.max(...k.latencies)
        kinds[kind] = { count: k.count, p50: s.p50, p99: s.p99, max, statuses: k.statuses }
        log(`${kind.padEnd(22)} ${String(k.count).padStart(7)} ${f1(s.p50).padStart(8)} ${f1(s.p99).padStart(8)} ${f1(max).padStart(8)}  ${Object.entries(k.statuses).map(([st, n]) => `${st}: ${n}`).join(', ')}`)
      }
      const invalidStatuses = Object.fromEntries(Object.entries(mix.kinds).filter(([k]) => k.startsWith('invalid.')).map(([k, s]) => [k.slice('invalid.'.length), s.statuses]))
      log(`invalid requests by sort: ${Object.entries(invalidStatuses).map(([k, st]) => `${k} ${Object.keys(st).join('/')}`).join(', ')}`)

      const issued = ((byKind.get('dte.issue')?.statuses['201'] ?? 0) + (byKind.get('dte.issue.auto_send')?.statuses['201'] ?? 0))
      const perSecond = mix.requests / seconds
      const dtePerSecond = issued / seconds
      log(
        `\n${mix.requests} requests in ${f1(seconds)} s: ${f0(perSecond)} req/s, ${issued} DTEs issued = ${f0(dtePerSecond)} DTE/s ` +
          `(${f1((dtePerSecond / opt.floorDtePerSecond) * 100)} % of the runtime floor, ${f0(opt.floorDtePerSecond)} DTE/s)`,
      )
      log(`CPU: server ${f2(cpu.serverCores)} cores (main thread ${f2(cpu.main)}, Workers ${f2(cpu.workers)}, JIT/GC/other ${f2(cpu.other)}), load generator ${f2(cpu.generatorCores)} cores`)
      if (simulatorCores !== null) log(`SII simulator in its own process: ${f2(simulatorCores)} cores, RSS peak ${f0(simPeak)} MB (not in the server's figures)`)
      const handler: Record<string, unknown> = {}
      log(`\nin the server (its log: handler's first line to the answer), by route:`)
      for (const [route, ms] of [...handlerMs].sort((a, b) => b[1].length - a[1].length).slice(0, 12)) {
        const q = summarize(ms)
        handler[route] = { n: q.n, p50: q.p50, p99: q.p99 }
        log(`  ${route.padEnd(48)} ${String(q.n).padStart(7)}  p50 ${f2(q.p50).padStart(7)}  p99 ${f2(q.p99).padStart(7)} ms`)
      }
      const h = summarize(probeLatencies)
      const hMax = probeLatencies.length > 0 ? Math.max(...probeLatencies) : Number.NaN
      log(`/health probe (own process, every 10 ms): ${h.n} probes, p50 ${f2(h.p50)} ms, p99 ${f2(h.p99)} ms, worst ${f2(hMax)} ms, errors ${probeErrors}`)
      log(`5xx: ${mix.serverErrors}; answers not as their kind must be: ${mix.violations}; no answer: ${mix.noAnswer}; error lines in the server's log: ${errorCount}`)
      for (const e of mix.examples) log(`  ! ${e}`)
      for (const e of errorLines) log(`  log: ${e}`)
      log(`stored: ${mix.created.dtes.length} DTEs, ${mix.created.clientes.length} clientes, ${mix.created.productos.length} productos answered 201; lost ${stored.lost.length}, stored without a 201 ${stored.extra}, folios twice ${stored.duplicateFolios}; DTEs per estado: ${Object.entries(stored.estados).map(([e, n]) => `${e} ${n}`).join(', ')}`)

      // Memory: quarters by answers; the first quarter is warm-up.
      const total = answered
      const quarter = (q: number) => samples.filter(([n]) => n >= (total * q) / 4 && n <= (total * (q + 1)) / 4).map(([, mb]) => mb)
      const second = median(quarter(1))
      const last = median(quarter(3))
      const growth = last - second
      log(`RSS: at rest ${f0(atRest)} MB, peak ${f0(peak)} MB, median of the second quarter ${f1(second)} MB, of the last ${f1(last)} MB (growth ${f1(growth)} MB), 5 s after the load ${f0(idle)} MB; ${samples.length} samples`)

      const within = (kind: string) => {
        const k = kinds[kind] as { p99: number } | undefined
        return k !== undefined && k.p99 <= P99_TARGET_MS[kind]!
      }
      summary.push({ what: `mixed requests answered (${opt.clients} clients, ${opt.companies} companies)`, measured: `${mix.requests} in ${f0(seconds)} s = ${f0(perSecond)} req/s; ${f0(dtePerSecond)} DTE/s = ${f1((dtePerSecond / opt.floorDtePerSecond) * 100)} % of the runtime floor`, target: `${opt.requests}, every one answered`, ok: mix.requests === opt.requests && mix.noAnswer === 0 })
      summary.push({ what: '5xx answers', measured: String(mix.serverErrors), target: '0', ok: mix.serverErrors === 0 })
      summary.push({ what: 'answers not as their kind must be (status, error envelope, document)', measured: String(mix.violations), target: '0', ok: mix.violations === 0 })
      summary.push({ what: 'every 201 stored, nothing else, no folio twice', measured: `lost ${stored.lost.length}, extra ${stored.extra}, folios twice ${stored.duplicateFolios}`, target: '0, 0, 0', ok: stored.lost.length === 0 && stored.extra === 0 && stored.duplicateFolios === 0 })
      summary.push({ what: "error lines in the server's log", measured: String(errorCount), target: '0', ok: errorCount === 0 })
      for (const kind of Object.keys(P99_TARGET_MS)) {
        const k = kinds[kind] as { count: number; p50: number; p99: number; max: number } | undefined
        if (!k) continue
        summary.push({ what: `${kind} (n=${k.count}) p50 / p99 / max`, measured: `${f1(k.p50)} / ${f1(k.p99)} / ${f1(k.max)} ms`, target: `p99 ≤ ${P99_TARGET_MS[kind]} ms`, ok: within(kind) })
      }
      summary.push({ what: '/health p99 from its own process, during the mix', measured: `${f2(h.p99)} ms (p50 ${f2(h.p50)}, worst ${f2(hMax)}, n=${h.n})`, target: '≤ 5 ms', ok: probeErrors === 0 && h.n > 0 && h.p99 <= 5 })
      summary.push({ what: 'server RSS under the mixed load (peak)', measured: `${f0(peak)} MB (at rest ${f0(atRest)})`, target: `≤ ${RSS_PEAK_TARGET_MB} MB`, ok: peak <= RSS_PEAK_TARGET_MB })
      summary.push({ what: 'server RSS flat (median, last quarter vs second)', measured: `${growth >= 0 ? '+' : '−'}${f1(Math.abs(growth))} MB (${f1(second)} → ${f1(last)})`, target: `≤ ${RSS_GROWTH_TARGET_MB} MB growth`, ok: growth <= RSS_GROWTH_TARGET_MB })
      Object.assign(results, {
        simulator: simulator ? { cores: simulatorCores, rssPeakMb: simPeak } : null, handlerMs: handler, seconds, requestsPerSecond: perSecond, dtePerSecond, shareOfFloor: dtePerSecond / opt.floorDtePerSecond, cpu, kinds, invalidStatuses,
        serverErrors: mix.serverErrors, violations: mix.violations, examples: mix.examples, noAnswer: mix.noAnswer,
        errorLogLines: errorCount, errorLogExamples: errorLines, stored: { ...stored, lost: stored.lost.slice(0, 50) },
        created: { dtes: mix.created.dtes.length, clientes: mix.created.clientes.length, productos: mix.created.productos.length },
        health: { ...h, worst: hMax, errors: probeErrors },
        rss: { atRestMb: atRest, peakMb: peak, secondQuarterMedianMb: second, lastQuarterMedianMb: last, growthMb: growth, idleAfterMb: idle, samples },
      })
    } finally {
      await stopServer(server)
      if (simulator) await stopServer(simulator)
    }
  } finally {
    if (!opt.keep) rmSync(dataDir, { recursive: true, force: true })
    else log(`kept: ${dataDir}`)
  }
  return { summary, results }
}

/** `timbre sii-simulator` on a free port, its state in `dir`; resolves once it prints its address. */
async function startSimulator(dir: string): Promise<{ url: string; proc: ReturnType<typeof Bun.spawn> }> {
  mkdirSync(dir, { recursive: true })
  const proc = Bun.spawn([BINARY, 'sii-simulator', '--port', '0', '--data-dir', dir], { stdout: 'pipe', stderr: 'inherit' })
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  let buffer = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`sii-simulator exited before starting: ${buffer}`)
    buffer += Buffer.from(value).toString()
    const m = /(https?:\/\/[^\s"]+:\d+)/.exec(buffer)
    if (m) {
      void (async () => {
        for (;;) if ((await reader.read()).done) return
      })()
      return { url: m[1]!, proc }
    }
  }
}

if (import.meta.main) {
  const startedAt = new Date().toISOString()
  const args = process.argv.slice(2)
  const flag = (name: string, fallback: number): number => {
    const i = args.indexOf(name)
    return i >= 0 ? Number(args[i + 1]) : fallback
  }
  if (!args.includes('--no-build')) {
    console.log('=== build dist/timbre (scripts/build.ts)')
    await $`${process.execPath} ${join(ROOT, 'scripts/build.ts')}`.cwd(ROOT)
  }
  const machine = describeMachine()
  const probeDir = tempDir('timbre-bench-fsync-')
  const fsync = fsyncLatency(probeDir)
  rmSync(probeDir, { recursive: true, force: true })
  console.log('=== machine')
  console.log(`${machine.cores} cores (${machine.cpuModel}), ${machine.memoryGb} GB, Linux ${machine.kernel}, bun ${machine.bun}; fsync of a 4 KB write p50 ${f2(fsync.p50)} ms, p99 ${f2(fsync.p99)} ms`)
  console.log(`commit ${machine.commit}${machine.srcChangesUncommitted > 0 ? ` plus ${machine.srcChangesUncommitted} uncommitted file(s) under src/, scripts/, drizzle/ (the binary is built from the work tree)` : ''}`)
  console.log(`before the run: load average ${f2(machine.loadAverage1m)}, CPU pressure ${machine.cpuPressure60s ?? '?'} % (other work on these cores moves every figure); the load generator shares the cores too`)
  const floorSeconds = flag('--floor-seconds', 3)
  console.log(`=== signature floor, ${machine.cores} cores (bench/floor.ts)`)
  // Issue 31: the floor is the runtime's (Bun on one Worker per core); OpenSSL's is context.
  const openssl = await opensslFloor(floorSeconds, machine.cores)
  const floor = (await threadedSigningRates(floorSeconds, machine.cores)).dtePerSecond
  console.log(`runtime floor: Bun on ${machine.cores} Workers → ${f0(floor)} DTE/s` + (openssl ? `; ${openssl.command} (context): ${f0(openssl.dtePerSecond)} DTE/s` : '; openssl not found'))
  const seed = flag('--seed', Math.floor(Math.random() * 2 ** 31))
  console.log('=== load')
  const { summary, results } = await runLoadBench({
    requests: flag('--requests', 100_000),
    clients: flag('--clients', 64),
    companies: flag('--companies', 4),
    siiApart: args.includes('--sii-apart'),
    seed,
    keep: args.includes('--keep'),
    floorDtePerSecond: floor,
  })
  const floorAtEnd = await threadedSigningRates(floorSeconds, machine.cores)
  summary.unshift({ what: `runtime floor, Bun on ${machine.cores} Workers, start / end of the run`, measured: `${f0(floor)} / ${f0(floorAtEnd.dtePerSecond)} DTE/s`, target: '(the reference; how noisy the run was)', ok: null })
  const atEnd = { loadAverage1m: loadavg()[0]!, cpuPressure60s: cpuPressure60s() }
  console.log(`\n=== summary — commit ${machine.commit}${machine.srcChangesUncommitted ? ' + work tree' : ''}, seed ${seed}, ${machine.cores} cores shared with the load generator, load average ${f2(machine.loadAverage1m)} → ${f2(atEnd.loadAverage1m)}, CPU pressure ${machine.cpuPressure60s ?? '?'} → ${atEnd.cpuPressure60s ?? '?'} %`)
  console.log(['| what | measured | target | ok? |', '| --- | --- | --- | --- |', ...summary.map((v) => `| ${v.what} | ${v.measured} | ${v.target} | ${v.ok === null ? '–' : v.ok ? 'yes' : 'NO'} |`)].join('\n'))
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true })
  const out = { startedAt, machine: { ...machine, fsyncMs: fsync }, floor: { openssl, floorDtePerSecond: floor, atEnd: floorAtEnd }, atEnd, ...results, summary, finishedAt: new Date().toISOString() }
  writeFileSync(join(ROOT, 'bench/results/load-last.json'), `${JSON.stringify(out, null, 2)}\n`)
  console.log('\nwritten: bench/results/load-last.json')
  process.exit(summary.some((v) => v.ok === false && (v.what.startsWith('5xx') || v.what.startsWith('answers not') || v.what.startsWith('every 201'))) ? 1 : 0)
}
