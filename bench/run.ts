// `npm run bench`: every row of issue 17's table on the compiled binary, each printed beside the signature floor
// measured in the same run, then one summary table (what | measured | target | ok?) and bench/results/last.json.
// bench/README.md says what each row measures and how. About 10 minutes by default; flags lengthen or shorten it:
//   bun bench/run.ts [--quick] [--only startup,c1,c32,health,rss,envelope,list,load] [--no-build] [--keep] [--all]
//                    [--floor-seconds 3] [--c32-seconds 20] [--c1-requests 2000] [--health-seconds 20]
//                    [--issuances 50000] [--sample-every N] [--list-size 1000000] [--list-requests 200] [--list-xml real|stub]
//                    [--startup-runs 7] [--load-requests 100000] [--load-clients 64] [--load-companies 4] [--load-seed N]
// `--issuances 1000000` is the issue's "flat over 1 000 000 issuances" (about 20 minutes at 1 000 DTE/s).
// The load row is issue 18's mixed load (bench/load.ts, also runnable alone).
import { $ } from 'bun'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { santiagoDate } from '../src/clock'
import { opensslFloor, signingRates, threadedSigningRates, type SigningRates } from './floor'
import { fillDtes, FILL_DAYS, issueLoad, listLatency, pdfLoad, provision, RECEPTORES, stopServer, type LoadResult, type Server } from './issuance'
import { cpuPressure60s, describeMachine, fsyncLatency } from './machine'
import { runLoadBench } from './load'
import { measureStartup } from './startup'
import { ROOT, rssMb, startServer, summarize, tempDir } from './support'

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const flag = (name: string, normal: number, short: number): number => {
  const i = args.indexOf(name)
  return i >= 0 ? Number(args[i + 1]) : quick ? short : normal
}
const textFlag = (name: string, fallback: string): string => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1]! : fallback
}
const ROWS = ['startup', 'c1', 'c32', 'health', 'rss', 'envelope', 'list', 'load'] as const
const only = new Set(textFlag('--only', ROWS.join(',')).split(','))
const wants = (row: (typeof ROWS)[number]) => only.has(row)
const opt = {
  floorSeconds: flag('--floor-seconds', 3, 1),
  c32Seconds: flag('--c32-seconds', 20, 5),
  c1Requests: flag('--c1-requests', 2000, 200),
  healthSeconds: flag('--health-seconds', 20, 5),
  issuances: flag('--issuances', 50_000, 3000),
  listSize: flag('--list-size', 1_000_000, 50_000),
  listRequests: flag('--list-requests', 200, 30),
  startupRuns: flag('--startup-runs', 7, 3),
  listXml: textFlag('--list-xml', 'real'),
  loadRequests: flag('--load-requests', 100_000, 3000),
  loadClients: flag('--load-clients', 64, 64),
  loadCompanies: flag('--load-companies', 4, 2),
}
const sampleEvery = flag('--sample-every', Math.max(1, Math.round(opt.issuances / 40)), Math.max(1, Math.round(opt.issuances / 20)))
// The default long run stops after 3 minutes even if its 50 000 are not done (a slow server would take the whole
// budget); an explicit --issuances runs to the end unless --rss-minutes is also given.
const rssMinutes = flag('--rss-minutes', args.includes('--issuances') ? Number.POSITIVE_INFINITY : 3, Number.POSITIVE_INFINITY)

type Verdict = { what: string; measured: string; target: string; ok: boolean | null }
const summary: Verdict[] = []
const results: Record<string, unknown> = { startedAt: new Date().toISOString(), options: { ...opt, quick, sampleEvery, rssMinutes, only: [...only] } }
const f0 = (n: number) => n.toFixed(0)
const f1 = (n: number) => n.toFixed(1)
const f2 = (n: number) => n.toFixed(2)
const section = (title: string) => console.log(`\n=== ${title}`)
const tempDirs: string[] = []
const servers = new Set<Server>()
// Ctrl-C or a kill: stop the servers this run started and remove its data dirs (a million DTEs take gigabytes).
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    for (const s of servers) s.proc.kill('SIGKILL')
    if (!args.includes('--keep')) for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
    process.exit(130)
  })

// 0. The binary, and the machine it runs on.
if (!args.includes('--no-build')) {
  section('build dist/timbre (scripts/build.ts)')
  await $`${process.execPath} ${join(ROOT, 'scripts/build.ts')}`.cwd(ROOT)
}
const machine = describeMachine()
const dataRoot = tempDir('timbre-bench-')
tempDirs.push(dataRoot)
const fsync = fsyncLatency(dataRoot)
results.machine = { ...machine, fsyncMs: fsync }
section('machine')
console.log(`${machine.cores} cores (${machine.cpuModel}), ${machine.memoryGb} GB, Linux ${machine.kernel}, bun ${machine.bun}`)
console.log(`disk: 4 KB write + fsync on the data dir's filesystem (${dataRoot}): p50 ${f2(fsync.p50)} ms, p99 ${f2(fsync.p99)} ms`)
console.log(`commit ${machine.commit}` + (machine.srcChangesUncommitted > 0 ? ` plus ${machine.srcChangesUncommitted} uncommitted file(s) under src/, scripts/, drizzle/ (the binary is built from the work tree)` : ''))
console.log(
  `before the run: load average ${f2(machine.loadAverage1m)}, CPU pressure ${machine.cpuPressure60s ?? '?'} % over the last minute ` +
    '(time some task waited for a core: anything above 0 is other work sharing these cores)',
)
console.log(`the load generator (this process) runs on the same ${machine.cores} cores as the server: every HTTP figure pays for it`)

// 1. The floor: every other row is read against it.
let floor = Number.NaN
let bunOne: SigningRates | null = null
{
  // Always measured, whatever --only says: every row is printed beside it.
  section(`row 1: signature floor, ${machine.cores} cores (one RSA-2048 + one CAF-key RSA-512 signature per DTE)`)
  const openssl = await opensslFloor(opt.floorSeconds, machine.cores)
  bunOne = signingRates(opt.floorSeconds)
  const bunTwo = await threadedSigningRates(opt.floorSeconds, machine.cores)
  if (openssl === null) console.log('openssl not found or unreadable: no context figure (the floor is Bun\'s, below)')
  else
    console.log(
      `${openssl.command} (OpenSSL ${openssl.version}): RSA-2048 ${f0(openssl.rsa2048PerSecond)} sign/s, RSA-512 ${f0(openssl.rsa512PerSecond)} sign/s → floor ${f0(openssl.dtePerSecond)} DTE/s`,
    )
  const rates = (r: SigningRates) => `RSA-2048 ${f0(r.rsa2048PerSecond)} sign/s, RSA-512 ${f0(r.rsa512PerSecond)} sign/s → ${f0(r.dtePerSecond)} DTE/s`
  console.log(`Bun node:crypto (BoringSSL), 1 thread:  ${rates(bunOne)}`)
  console.log(`Bun node:crypto (BoringSSL), ${machine.cores} threads (Workers): ${rates(bunTwo)}`)
  // Issue 31: the floor is what the shipped runtime can sign (Bun's node:crypto on one Worker per core), measured here;
  // OpenSSL's figure is context only (it swings between runs, and the binary does not sign with it).
  floor = bunTwo.dtePerSecond
  if (openssl !== null) console.log(`Bun signs at ${f0((bunTwo.dtePerSecond / openssl.dtePerSecond) * 100)} % of OpenSSL's rate on the same cores; the floor is Bun's (what the server signs with), OpenSSL's is context`)
  console.log(`one DTE's two signatures on one Bun thread: ${f2(1000 / bunOne.dtePerSecond)} ms`)
  results.floor = { openssl, bunOneThread: bunOne, bunThreads: bunTwo, floorDtePerSecond: floor }
  summary.push({ what: `runtime floor: Bun on ${machine.cores} Workers (1 thread: ${f0(bunOne.dtePerSecond)})`, measured: `${f0(floor)} DTE/s`, target: '(the reference)', ok: null })
  summary.push({ what: `OpenSSL floor (openssl speed -multi ${machine.cores})`, measured: openssl === null ? 'not measured' : `${f0(openssl.dtePerSecond)} DTE/s`, target: '(context only)', ok: null })
}
/** A rate or latency measured over failed answers is no figure: the summary says so beside it. */
const errorsOf = (errors: number) => (errors > 0 ? `; ${errors} ERRORS` : '')
const ofFloor = (perSecond: number) => (Number.isNaN(floor) ? 'floor not measured' : `${f1((perSecond / floor) * 100)} % of the runtime floor (${f0(floor)} DTE/s)`)

// 7. Start-up, on fresh data dirs, before the heavy phases fill the page cache.
if (wants('startup')) {
  section('row 7: start to first 200 on /health (fresh data dir each run: migrations included)')
  const s = await measureStartup(opt.startupRuns)
  console.log(`${opt.startupRuns} runs: ${s.times.map(f0).join(', ')} ms → p50 ${f0(s.p50)} ms, worst ${f0(s.worst)} ms; RSS 300 ms after start ${f0(s.rssMb)} MB  [floor ${f0(floor)} DTE/s]`)
  results.startup = s
  summary.push({ what: 'start to first 200 on /health (p50 / worst)', measured: `${f0(s.p50)} / ${f0(s.worst)} ms`, target: '≤ 200 ms (p50)', ok: s.p50 <= 200 })
}

// Rows 2, 3, 6, 8 share one server with one company.
let rssPeak = 0
let apiKey = ''
if (['c1', 'c32', 'health', 'rss'].some((r) => only.has(r))) {
  const dataDir = join(dataRoot, 'issuance')
  mkdirSync(dataDir)
  const server = await provision(dataDir)
  servers.add(server)
  apiKey = server.key
  const pid = server.proc.pid
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(pid))), 200)
  await Bun.sleep(2000)
  const atRest = rssMb(pid)
  section('row 6a: server RSS at rest (started, certificate and CAF loaded, nothing issued yet)')
  console.log(`${f0(atRest)} MB  [floor ${f0(floor)} DTE/s]`)
  summary.push({ what: 'server RSS at rest', measured: `${f0(atRest)} MB`, target: '≤ 80 MB', ok: atRest <= 80 })
  const warm = await issueLoad(server, { concurrency: 32, total: quick ? 100 : 300 })
  console.log(`(warm-up: ${warm.requests} issuances at c=32, not counted; errors ${warm.errors}${warm.firstError ? `, first: ${warm.firstError}` : ''})`)
  results.rss = { atRestMb: atRest }
  const loadLine = (r: LoadResult) =>
    `${r.requests} DTEs in ${f1(r.seconds)} s: ${f0(r.perSecond)} DTE/s, p50 ${f2(r.p50)} ms, p99 ${f2(r.p99)} ms, errors ${r.errors}` +
    `${r.firstError ? ` (first: ${r.firstError})` : ''}; CPU: server ${f2(r.serverCores)} cores (main thread ${f2(r.serverThreadCores.main)}, ` +
    `Workers ${f2(r.serverThreadCores.workers)}, JIT/GC/other ${f2(r.serverThreadCores.other)}), load generator ${f2(r.generatorCores)} cores`

  if (wants('c1')) {
    section('row 3: POST /dte, concurrency 1')
    const r = await issueLoad(server, { concurrency: 1, total: opt.c1Requests, stop: deadline(20) })
    console.log(loadLine(r))
    console.log(`beside the floor: one DTE's signatures take ${bunOne ? f2(1000 / bunOne.dtePerSecond) : '?'} ms on one Bun thread; ${ofFloor(r.perSecond)}`)
    results.c1 = { ...r, ids: undefined }
    summary.push({ what: 'POST /dte c=1 (p50 / p99)', measured: `${f2(r.p50)} / ${f2(r.p99)} ms${errorsOf(r.errors)}`, target: 'p50 ≤ 2 ms, p99 ≤ 5 ms', ok: r.errors === 0 && r.p50 <= 2 && r.p99 <= 5 })
  }

  let ids: string[] = []
  if (wants('c32')) {
    section(`row 2: POST /dte, concurrency 32, for ${opt.c32Seconds} s`)
    const r = await issueLoad(server, { concurrency: 32, total: Number.POSITIVE_INFINITY, stop: deadline(opt.c32Seconds) })
    ids = r.ids
    console.log(loadLine(r))
    console.log(`${ofFloor(r.perSecond)}; server RSS now ${f0(rssMb(pid))} MB`)
    const share = r.perSecond / floor
    results.c32 = { ...r, ids: undefined, shareOfFloor: share }
    summary.push({
      what: 'POST /dte c=32',
      measured: `${f0(r.perSecond)} DTE/s = ${f1(share * 100)} % of the runtime floor; p50 ${f1(r.p50)}, p99 ${f1(r.p99)} ms${errorsOf(r.errors)}`,
      target: '≥ 1 000 DTE/s and ≥ 40 % of the runtime floor',
      ok: r.errors === 0 && r.perSecond >= 1000 && share >= 0.4,
    })
  }

  if (wants('health')) {
    section(`row 8: /health while 32 clients issue and 4 render PDFs, for ${opt.healthSeconds} s (probe: its own process, every 10 ms)`)
    if (ids.length === 0) ids = (await issueLoad(server, { concurrency: 8, total: 100 })).ids
    const probe = Bun.spawn([process.execPath, join(ROOT, 'bench/health-probe.ts'), server.url, String(opt.healthSeconds * 1000), '10'], { stdout: 'pipe', stderr: 'inherit' })
    let probing = true
    const probeOut = new Response(probe.stdout).text().finally(() => (probing = false))
    const [issued, pdfs] = await Promise.all([
      issueLoad(server, { concurrency: 32, total: Number.POSITIVE_INFINITY, stop: () => !probing }),
      pdfLoad(server, ids, 4, () => !probing),
    ])
    const probed = JSON.parse(await probeOut) as { latencies: number[]; errors: number }
    const h = summarize(probed.latencies)
    console.log(`/health: ${h.n} probes, p50 ${f2(h.p50)} ms, p99 ${f2(h.p99)} ms, worst ${f2(Math.max(...probed.latencies))} ms, errors ${probed.errors}`)
    console.log(`meanwhile: ${loadLine(issued)}`)
    console.log(`meanwhile: ${pdfs.renders} PDFs (${f1(pdfs.renders / opt.healthSeconds)}/s), p50 ${f1(pdfs.p50)} ms, p99 ${f1(pdfs.p99)} ms, errors ${pdfs.errors}; issuance at ${ofFloor(issued.perSecond)}`)
    results.health = { probe: h, worstMs: Math.max(...probed.latencies), errors: probed.errors, issuance: { ...issued, ids: undefined }, pdfs }
    summary.push({
      what: '/health p99 while 32 issue + 4 render PDFs',
      measured: `${f2(h.p99)} ms (p50 ${f2(h.p50)}; ${f0(issued.perSecond)} DTE/s, ${f1(pdfs.renders / opt.healthSeconds)} PDF/s)${errorsOf(probed.errors + issued.errors + pdfs.errors)}`,
      target: '≤ 5 ms',
      ok: probed.errors === 0 && issued.errors === 0 && pdfs.errors === 0 && h.p99 <= 5,
    })
  }

  if (wants('rss')) {
    const cap = Number.isFinite(rssMinutes) ? ` or ${rssMinutes} minutes, whichever comes first` : ''
    section(`row 6b: server RSS over ${opt.issuances} issuances at c=32${cap}, sampled every ${sampleEvery}`)
    const samples: Array<[number, number]> = [[0, rssMb(pid)]]
    const r = await issueLoad(server, {
      concurrency: 32,
      total: opt.issuances,
      stop: deadline(rssMinutes * 60),
      onAnswer: (answered) => {
        if (answered % sampleEvery === 0) samples.push([answered, rssMb(pid)])
      },
    })
    if (samples[samples.length - 1]![0] !== r.requests) samples.push([r.requests, rssMb(pid)])
    console.log(loadLine(r))
    console.log(`samples (issuances: MB): ${samples.map(([n, mb]) => `${n}: ${f0(mb)}`).join(', ')}`)
    const flat = flatness(samples)
    console.log(
      `slope ${f1(flat.mbPer100k)} MB per 100 000 issuances (least squares after the first 10 %); mean of the last quarter ` +
        `${f1(flat.lastQuarterMb)} MB vs the second ${f1(flat.secondQuarterMb)} MB: growth ${f1(flat.growthMb)} MB. ` +
        `Run: ${r.requests} issuances${r.requests < 1_000_000 ? ' (the issue says 1 000 000: --issuances 1000000)' : ''}`,
    )
    await Bun.sleep(5000)
    const idle = rssMb(pid)
    console.log(`peak RSS during all load phases ${f0(rssPeak)} MB; 5 s after the load ${f0(idle)} MB  [floor ${f0(floor)} DTE/s; ${ofFloor(r.perSecond)}]`)
    results.rss = { atRestMb: atRest, peakMb: rssPeak, idleAfterLoadMb: idle, samples, ...flat, issuances: r.requests, load: { ...r, ids: undefined } }
    summary.push({ what: 'server RSS under load (peak)', measured: `${f0(rssPeak)} MB`, target: '≤ 300 MB', ok: rssPeak <= 300 })
    summary.push({
      what: `server RSS flat over ${r.requests} issuances`,
      measured: `${flat.growthMb >= 0 ? '+' : '−'}${f1(Math.abs(flat.growthMb))} MB (slope ${f1(flat.mbPer100k)} MB/100k)${samples.length < 8 ? `; only ${samples.length} samples, too few to say` : ''}`,
      target: 'flat: ≤ 10 MB growth, last vs second quarter',
      ok: samples.length < 8 ? null : r.errors === 0 && flat.growthMb <= 10,  // too few samples to say
    })
  } else results.rss = { atRestMb: atRest, peakMb: rssPeak }
  clearInterval(sampler)
  await stopServer(server)
}

// 4. The envelope: bench/envelope.ts, forwarded line by line (its owner keeps changing it; its table is parsed).
if (wants('envelope')) {
  section('row 4: one EnvioDTE built and signed, by size (bench/envelope.ts, in-process, one core)')
  const proc = Bun.spawn([process.execPath, join(ROOT, 'bench/envelope.ts')], { cwd: ROOT, stdout: 'pipe', stderr: 'inherit' })
  const text = await new Response(proc.stdout).text()
  for (const line of text.trimEnd().split('\n')) console.log(`  | ${line}`)
  const sizes = new Map<number, number>()
  for (const m of text.matchAll(/^\s*(\d+)\s*\|\s*([\d.]+)\s*\|/gm)) sizes.set(Number(m[1]), Number(m[2]))
  const at = (n: number) => sizes.get(n)
  const largest = Math.max(...sizes.keys())
  // Linear: the cost per added DTE from the second-largest size to the largest is within 30 % of the one below it.
  const ns = [...sizes.keys()].sort((a, b) => a - b)
  const marginal = ns.slice(1).map((n, i) => (at(n)! - at(ns[i]!)!) / (n - ns[i]!))
  const isLinear = marginal.length >= 2 && marginal[marginal.length - 1]! <= 1.3 * Math.max(...marginal.slice(0, -1))
  console.log(
    `${(await proc.exited) === 0 ? '' : 'bench/envelope.ts FAILED; '}sizes ${ns.map((n) => `${n}: ${at(n)} ms`).join(', ')}; ` +
      `ms per added DTE between sizes: ${marginal.map((m) => m.toFixed(3)).join(', ')}  [floor ${f0(floor)} DTE/s]`,
  )
  results.envelope = { sizes: Object.fromEntries(sizes), marginalMsPerDte: marginal, isLinear, output: text }
  const missing = [1, 50, 500, 2000].filter((n) => !sizes.has(n))
  summary.push({
    what: `EnvioDTE of ${largest} DTEs built + signed`,
    measured: `${at(largest) ?? '?'} ms (${ns.map((n) => `${n}: ${at(n)}`).join(', ')})${missing.length ? `; sizes ${missing.join(', ')} not reported` : ''}`,
    target: '≤ 1 000 ms for 2 000',
    ok: at(2000) !== undefined && at(2000)! <= 1000,
  })
  summary.push({
    what: 'EnvioDTE linear in its DTEs',
    measured: `ms per added DTE ${marginal.map((m) => m.toFixed(3)).join(' → ')}`,
    target: 'last step within 30 % of the steps below',
    ok: isLinear,
  })
}

// 5. Lists on a million DTEs: the issuance data dir, filled in SQL, served by a fresh server.
if (wants('list')) {
  section(`row 5: GET /dte on ${opt.listSize} DTEs (one client, ${opt.listRequests} requests per filter, first page of 20 with total_count)`)
  const dataDir = join(dataRoot, 'issuance')
  if (apiKey === '') {
    mkdirSync(dataDir)
    const s = await provision(dataDir)
    await issueLoad(s, { concurrency: 8, total: 20 })
    apiKey = s.key
    await stopServer(s)
  }
  const fillSeconds = fillDtes(dataDir, opt.listSize, opt.listXml === 'stub')
  console.log(`filled to ${opt.listSize} rows in ${f1(fillSeconds)} s (copies of an issued DTE, ${opt.listXml === 'stub' ? 'XML stubbed' : 'its XML at full size'}, spread over ${FILL_DAYS} days, ${RECEPTORES.length} receptors)`)
  const started = await startServer(dataDir)
  const server: Server = { ...started, key: apiKey }
  servers.add(server)
  const day = (daysAgo: number) => santiagoDate(new Date(Date.now() - daysAgo * 86_400_000))
  const filters: Array<[string, string]> = [
    ['no filter', ''],
    ['tipo_dte=33', '?tipo_dte=33'],
    ['estado=aceptado (70 %)', '?estado=aceptado'],
    ['estado=rechazado (5 %)', '?estado=rechazado'],
    ['date range (100 days)', `?fecha_desde=${day(250)}&fecha_hasta=${day(150)}`],
    ['rut_receptor (2 %)', `?rut_receptor=${RECEPTORES[7]}`],
  ]
  const list: Record<string, unknown> = {}
  for (const [label, query] of filters) {
    const r = await listLatency(server, query, opt.listRequests, 30)
    console.log(`${label.padEnd(24)} total_count ${String(r.totalCount).padStart(8)}  p50 ${f2(r.p50).padStart(7)} ms  p99 ${f2(r.p99).padStart(7)} ms  (n=${r.n})  [floor ${f0(floor)} DTE/s]`)
    list[label] = r
    summary.push({ what: `GET /dte on ${opt.listSize}: ${label} (p50 / p99)`, measured: `${f1(r.p50)} / ${f1(r.p99)} ms`, target: 'p50 ≤ 25, p99 ≤ 50 ms', ok: r.p50 <= 25 && r.p99 <= 50 })
  }
  console.log(`server RSS after the list load: ${f0(rssMb(server.proc.pid))} MB`)
  results.list = { size: opt.listSize, fillSeconds, xml: opt.listXml, filters: list }
  await stopServer(server)
}

// Issue 18's mixed load: its own server and companies (bench/load.ts), read against the floor at the start of this run.
if (wants('load')) {
  section(`load: ${opt.loadRequests} mixed requests from ${opt.loadClients} clients over ${opt.loadCompanies} companies (bench/load.ts)`)
  const seed = flag('--load-seed', Math.floor(Math.random() * 2 ** 31), Math.floor(Math.random() * 2 ** 31))
  const load = await runLoadBench({ requests: opt.loadRequests, clients: opt.loadClients, companies: opt.loadCompanies, seed, keep: args.includes('--keep'), floorDtePerSecond: floor })
  results.load = load.results
  summary.push(...load.summary.map((v) => ({ ...v, what: `load: ${v.what}` })))
}

// The older per-issue benchmarks, when asked for.
if (args.includes('--all'))
  for (const bench of ['documents.ts 3', 'pdf.ts 200', 'catalogs.ts']) {
    const [file, ...rest] = bench.split(' ')
    section(`bench/${bench}`)
    await $`${process.execPath} ${join(ROOT, 'bench', file!)} ${rest}`.cwd(ROOT).nothrow()
  }

// The floor again: how far it moved during the run says how much other work shared the cores meanwhile.
const floorAtEnd = await threadedSigningRates(opt.floorSeconds, machine.cores)
console.log(`\nruntime floor at the end of the run: ${f0(floorAtEnd.dtePerSecond)} DTE/s (at the start ${f0(floor)}): the rows are read against the one at the start`)
summary.splice(1, 0, { what: 'runtime floor again, at the end of the run', measured: `${f0(floorAtEnd.dtePerSecond)} DTE/s`, target: '(how noisy the run was)', ok: null })
results.floorAtEnd = floorAtEnd
console.log(`at the end: load average ${f2(loadavg()[0]!)}, CPU pressure ${cpuPressure60s() ?? '?'} % (at the start: ${f2(machine.loadAverage1m)}, ${machine.cpuPressure60s ?? '?'} %)`)
results.atEnd = { loadAverage1m: loadavg()[0], cpuPressure60s: cpuPressure60s() }
section(`summary — commit ${machine.commit}${machine.srcChangesUncommitted ? ' + work tree' : ''}, ${machine.cores} cores, load generator on the same cores, load average ${f2(machine.loadAverage1m)} → ${f2(loadavg()[0]!)}${quick ? ', QUICK MODE (short runs: not the figures)' : ''}`)
const table = ['| what | measured | target | ok? |', '| --- | --- | --- | --- |', ...summary.map((v) => `| ${v.what} | ${v.measured} | ${v.target} | ${v.ok === null ? '–' : v.ok ? 'yes' : 'NO'} |`)]
console.log(table.join('\n'))
results.summary = summary
results.finishedAt = new Date().toISOString()
mkdirSync(join(ROOT, 'bench/results'), { recursive: true })
writeFileSync(join(ROOT, 'bench/results/last.json'), `${JSON.stringify(results, null, 2)}\n`)
console.log(`\nwritten: bench/results/last.json`)
if (!args.includes('--keep')) for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
else console.log(`kept: ${tempDirs.join(', ')}`)

function deadline(seconds: number): () => boolean {
  const end = performance.now() + seconds * 1000
  return () => performance.now() >= end
}

/** How flat RSS stayed: least-squares slope after the first 10 % of the run, and the last quarter against the second. */
function flatness(samples: ReadonlyArray<readonly [number, number]>): { mbPer100k: number; growthMb: number; lastQuarterMb: number; secondQuarterMb: number } {
  const total = samples[samples.length - 1]![0]
  const tail = samples.filter(([n]) => n >= total * 0.1)
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length
  const mx = mean(tail.map(([n]) => n))
  const my = mean(tail.map(([, mb]) => mb))
  const slope = tail.reduce((s, [n, mb]) => s + (n - mx) * (mb - my), 0) / tail.reduce((s, [n]) => s + (n - mx) ** 2, 0)
  const quarter = (q: number) => mean(samples.filter(([n]) => n >= (total * q) / 4 && n <= (total * (q + 1)) / 4).map(([, mb]) => mb))
  const secondQuarterMb = quarter(1)
  const lastQuarterMb = quarter(3)
  return { mbPer100k: slope * 100_000, growthMb: lastQuarterMb - secondQuarterMb, lastQuarterMb, secondQuarterMb }
}
