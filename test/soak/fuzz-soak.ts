// Issue 18, "Hostile input", the long form: the raw HTTP fuzzer of test/security/fuzz/ against the compiled server
// (dist/timbre serve on 127.0.0.1, its own data dir). Company A gets one of every resource (test/security/company.ts);
// then every request is a hostile one over a bare socket, aimed at every operation of the served /docs/json, while
// slow clients send a byte a second and a probe asks /health twice a second. It counts the 5xx (answered, or only
// logged because the client had gone), the error answers outside the envelope, the hostile requests accepted, the
// /health misses, and compares every table of timbre.db before, every 1000 requests, and after.
//
//   bun scripts/build.ts
//   bun test/soak/fuzz-soak.ts [--requests 20000] [--seed N] [--concurrency 4] [--slow-clients 4] [--keep]
//   bun test/soak/fuzz-soak.ts --seed N --only 123,456      # replay findings
//   bun test/soak/fuzz-soak.ts --seed N --from 3000 --requests 1000   # replay the window a state change was found in
//   bun test/soak/fuzz-soak.ts --seed N --only-slow 7       # replay slow client 7, a byte a second
//
// The short form runs in `npm test` (test/security/fuzz.test.ts). Exit code 1 on any finding.
import { rmSync } from 'node:fs'
import { createCompanyWithKey, ensureBinary, runBinary, startServe, type ServeProcess } from '../support/binary'
import { startReceiver } from '../support/receiver'
import { tempDir, testRut, type Tenant } from '../support/server'
import { MARKER } from '../security/company'
import { runFuzz, summaryLine, findingsOf, type FuzzSummary } from '../security/fuzz/http-fuzzer'
import { API } from '../security/route-table'
import { buildWorld, dbPathOf, FUZZ_SERVER_FLAGS, httpClient } from '../security/fuzz/world'

export interface FuzzSoakOptions {
  readonly requests: number
  readonly seed: number
  readonly from?: number
  readonly only?: readonly number[]
  readonly onlySlow?: number
  readonly concurrency?: number
  readonly slowClients?: number
  readonly keep?: boolean
  readonly log?: (line: string) => void
}

/** `timbre serve` flags from FUZZ_SERVER_FLAGS (`'--webhook-allow-http': 'true'` is the bare flag). */
function serveArgs(dir: string): string[] {
  const args = ['--data-dir', dir, '--sii', 'simulado']
  for (const [flag, value] of Object.entries(FUZZ_SERVER_FLAGS)) args.push(...(value === 'true' ? [flag] : [flag, value]))
  return args
}

export async function runFuzzSoak(o: FuzzSoakOptions): Promise<FuzzSummary & { dataDir: string }> {
  const log = o.log ?? ((line: string) => console.log(line))
  await ensureBinary()
  const dir = tempDir('timbre-fuzz-')
  const razonA = `Empresa ${MARKER} SpA`
  const rutA = testRut()
  const writeA = createCompanyWithKey(dir, rutA, razonA)
  const readA = runBinary(['apikey', 'create', '--empresa', rutA, '--data-dir', dir]).json().key as string
  const writeB = createCompanyWithKey(dir, testRut(), 'Empresa B SpA')
  const rx = startReceiver()
  let serve: ServeProcess | null = null
  try {
    serve = await startServe(serveArgs(dir))
    const server = httpClient(serve.url)
    const a = { empresa: { rut: rutA, razon_social: razonA } as Tenant['empresa'], writeKey: writeA, readKey: readA }
    const { world } = await buildWorld({ server, a, writeKeyB: writeB, receiverUrl: rx.url, api: API })
    // The webhook test delivery of the provisioning goes out at once: let it land before the first snapshot.
    await Bun.sleep(1500)
    log(`fuzz-soak: dist/timbre at ${serve.url}, data dir ${dir}, ${world.ops.length} operations, seed ${o.seed}`)
    const lines = serve.lines
    const summary = await runFuzz({
      world,
      seed: o.seed,
      requests: o.requests,
      from: o.from,
      only: o.only,
      onlySlow: o.onlySlow,
      concurrency: o.concurrency ?? 4,
      slowClients: o.slowClients ?? 4,
      dbPath: dbPathOf(dir),
      stateEvery: 1000,
      serverLog: () => lines,
      progress: log,
      progressEvery: 1000,
    })
    const stopped = await serve.terminate()
    serve = null
    if (stopped !== 0) {
      summary.findings.push({ kind: '5xx', message: `timbre serve exited ${stopped} on SIGTERM` })
      summary.fiveXx++
    }
    return { ...summary, dataDir: dir }
  } finally {
    if (serve) await serve.terminate()
    await rx.stop()
  }
}

function flag(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}

if (import.meta.main) {
  const argv = process.argv.slice(2)
  const requests = Number(flag(argv, '--requests') ?? 20_000)
  const seed = Number(flag(argv, '--seed') ?? Math.floor(Math.random() * 2 ** 31))
  const from = flag(argv, '--from') === undefined ? undefined : Number(flag(argv, '--from'))
  const only = flag(argv, '--only')?.split(',').map(Number)
  const onlySlow = flag(argv, '--only-slow') === undefined ? undefined : Number(flag(argv, '--only-slow'))
  const concurrency = Number(flag(argv, '--concurrency') ?? 4)
  const slowClients = Number(flag(argv, '--slow-clients') ?? 4)
  const numbers = [requests, seed, concurrency, slowClients, ...(from === undefined ? [] : [from]), ...(only ?? []), ...(onlySlow === undefined ? [] : [onlySlow])]
  if (!numbers.every(Number.isInteger) || requests < 1 || concurrency < 1 || slowClients < 0) {
    console.error('usage: bun test/soak/fuzz-soak.ts [--requests 20000] [--seed N] [--from I] [--only I,J] [--only-slow K] [--concurrency 4] [--slow-clients 4] [--keep]')
    process.exit(2)
  }
  console.log(`fuzz-soak: ${only ? `requests ${only.join(',')}` : onlySlow !== undefined ? `slow client ${onlySlow}` : `${requests} requests from ${from ?? 0}`}, seed ${seed} (repeat with --seed ${seed})`)
  const summary = await runFuzzSoak({ requests, seed, from, only, onlySlow, concurrency, slowClients, keep: argv.includes('--keep') })
  console.log(`statuses: ${JSON.stringify(summary.statuses)}`)
  console.log(summaryLine(summary))
  const failed = findingsOf(summary) > 0
  if (failed || argv.includes('--keep')) console.log(`data dir kept: ${summary.dataDir}`)
  else rmSync(summary.dataDir, { recursive: true, force: true })
  if (failed) {
    console.log(`${summary.findings.length} finding(s); each is printed above with its reproducer (seed ${seed})`)
    process.exit(1)
  }
}
