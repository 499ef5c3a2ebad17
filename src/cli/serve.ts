// `timbre serve` (the default): the API, the jobs and, with --demo, the demo company (DESIGN §1, §2, §10).
import { buildDeps } from '../app'
import { loadConfig, SETTINGS, settingFlags, settingsHelp, type Config, type SiiTarget } from '../config'
import type { Clock } from '../clock'
import type { Logger } from '../log'
import { createLogger } from '../log'
import type { Deps } from '../services/deps'
import { startHttpServer } from '../http/server'
import type { ConsoleDoor } from '../console/door'
import { CONSOLE_LONG_OPERATIONS, CONSOLE_PREFIX, consoleLinkUrl } from '../console/paths'
import { createAdminLink } from '../services/console-sessions'
import { prepareLoginTiming } from '../services/console-accounts'
import { housekeepingJob } from '../jobs/housekeeping'
import { siiSubmitJob } from '../jobs/sii-submit'
import { siiTrackJob } from '../jobs/sii-track'
import { webhookDeliverJob } from '../jobs/webhook-deliver'
import { alertsJob } from '../jobs/alerts'
import { foliosJob } from '../jobs/folios'
import { rcvJob } from '../jobs/rcv'
import { intercambioJob } from '../jobs/intercambio'
import { backupJob } from '../jobs/backup'
import { backupSettingWarnings } from '../services/backup-status'
import { siiReadiness } from '../services/readiness'
import { startScheduler } from '../jobs/scheduler'
import { VERSION } from '../version'
import type { Command, FlagSpec } from './command'
import { DEMO_INVOICE, DEMO_INVOICE_FILE, demoCommands } from './demo-banner'
import { watchStopRequests } from '../services/serve-stop'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * SIGTERM to exit in at most 10 s (issue 18): systemd's and Docker's default stop timeouts are 90 s and 10 s, and a
 * stop that outlives Docker's is a SIGKILL. In-flight requests and job runs get DRAIN_MS together; closing the workers
 * and the store gets the rest; past EXIT_WITHIN_MS the process exits anyway, as a crash would, which it survives.
 */
const EXIT_WITHIN_MS = 10_000
const DRAIN_MS = 8_000

/**
 * Every way a platform asks a console program to end drains like SIGTERM (issue 26, DESIGN §18). SIGINT: Ctrl-C.
 * SIGHUP: the terminal closed (Linux, macOS); on Windows libuv's CTRL_CLOSE_EVENT, the console window closed (also at
 * logoff and shutdown), after which Windows waits about 10 s. SIGBREAK: Ctrl-Break, Windows only (Node and Bun know no
 * SIGBREAK elsewhere). docs/decisions/platforms.md says which of these the Wine test could deliver.
 */
export function stopSignals(platform: NodeJS.Platform, isSigHupIgnored = false): NodeJS.Signals[] {
  if (platform === 'win32') return ['SIGTERM', 'SIGINT', 'SIGBREAK', 'SIGHUP']
  // A listener would override the ignore `nohup timbre serve &` asked for, and closing the terminal would stop it.
  return isSigHupIgnored ? ['SIGTERM', 'SIGINT'] : ['SIGTERM', 'SIGINT', 'SIGHUP']
}

/** Whether this process started with SIGHUP ignored (nohup): bit 0 of SigIgn in Linux's /proc/self/status. */
export function isSigHupIgnoredIn(procStatus: string | null): boolean {
  const m = procStatus?.match(/^SigIgn:\s*([0-9a-fA-F]+)\s*$/m)
  return m ? (BigInt(`0x${m[1]}`) & 1n) === 1n : false
}

/** Linux only; elsewhere there is no way to ask, and SIGHUP drains (docs/decisions/platforms.md). */
function procStatus(): string | null {
  try {
    return readFileSync('/proc/self/status', 'utf8')
  } catch {
    return null
  }
}

function serveFlags(): Record<string, FlagSpec> {
  const flags: Record<string, FlagSpec> = {}
  for (const [flag, { key, isSwitch }] of settingFlags()) {
    const s = SETTINGS[key]
    flags[flag] = { takesValue: !isSwitch, help: `${s.help}${s.env ? ` (${s.env})` : ''}; por defecto ${s.default || '—'}` }
  }
  return flags
}

function describeSii(target: SiiTarget): string {
  if (target.kind === 'simulado') return 'simulado (simulador del SII en proceso, sin red)'
  if (target.kind === 'origin') return `origen ${target.origin} (rutas reales del SII)`
  return 'SII real (maullin.sii.cl / palena.sii.cl según el ambiente de cada empresa)'
}

/** DESIGN §10: the demo company never talks to the real SII, whatever --sii says; the banner says where it goes. */
function demoSiiLine(target: SiiTarget): string {
  if (target.kind === 'simulado') return 'SII: simulador del SII en proceso (--sii simulado), sin red.'
  return `SII: la empresa demo usa siempre el simulador del SII en proceso, nunca el SII real; las demás empresas van a ${describeSii(target)}.`
}

async function printDemo(deps: Deps, baseUrl: string): Promise<void> {
  // Loaded with --demo only: the demo's certificate, CAFs and supplier envelopes need forge and the XML signers, which
  // a server without the demo keeps out of the main thread's memory (issue 17).
  const [{ ensureDemo }, { ensureDemoRecibidos }] = await Promise.all([import('../services/demo'), import('../services/demo-recibidos')])
  const outcome = await ensureDemo(deps)
  if (outcome.kind === 'skipped') {
    deps.log.warn('demo.skipped', { reason: outcome.reason })
    return
  }
  deps.log.info('demo.ready', { empresa_id: outcome.empresa.id, rut: outcome.empresa.rut, created: outcome.created, sii: 'simulado' })
  // The supplier's two invoices go through the simulator first: in the background, so the banner does not wait for it.
  void ensureDemoRecibidos(deps, { empresaId: outcome.empresa.id }).then(
    (r) => deps.log.info('demo.recibidos', r),
    (err: unknown) => deps.log.error('demo.recibidos_failed', { error: String(err), stack: (err as Error)?.stack }),
  )
  const invoicePath = join(deps.config.dataDir, DEMO_INVOICE_FILE)
  if (process.platform === 'win32') writeFileSync(invoicePath, `${JSON.stringify(DEMO_INVOICE, null, 2)}\n`)
  const curl = demoCommands({ platform: process.platform, baseUrl, apiKey: outcome.apiKey, idempotencyKey: outcome.invoiceIdempotencyKey, invoicePath })
  // For the person at the terminal, on stderr so stdout stays JSON lines.
  process.stderr.write(
    [
      '',
      `Timbre ${VERSION} en modo demo: empresa ${outcome.empresa.razon_social} (${outcome.empresa.rut}).`,
      demoSiiLine(deps.config.sii),
      `API key de escritura de la demo: ${outcome.apiKey}`,
      'Pruebe:',
      `  ${curl.empresa}`,
      'Emita una primera factura (repetir el mismo comando en las 24 h siguientes no duplica, tampoco tras reiniciar: la Idempotency-Key es la misma):',
      `  ${curl.issue}`,
      `  ${curl.list}`,
      `Documentación de la API: ${baseUrl}/docs`,
      `Consola en el navegador (enlace de administrador, un solo uso, vence en 15 min; otro con \`timbre console link\`):`,
      `  ${consoleLinkUrl(baseUrl, createAdminLink(deps).token)}`,
      `  o entre en ${baseUrl}${CONSOLE_PREFIX}/entrar con la API key de arriba.`,
      '',
    ].join('\n'),
  )
}


export interface RunningServer {
  readonly url: string
  readonly deps: Deps
  stop(): Promise<void>
}

/** Tests pass their own logger and clock; `serve` uses stdout JSON lines and the system clock. */
export async function runServer(config: Config, overrides: { log?: Logger; clock?: Clock } = {}): Promise<RunningServer> {
  const log = overrides.log ?? createLogger(config.log)
  const runtime = await buildDeps(config, log, overrides.clock)
  const deps = runtime.deps
  let shuttingDown = false
  const scheduler = startScheduler(deps, [
    housekeepingJob,
    siiSubmitJob(config.submitEveryMs),
    siiTrackJob(config.trackEveryMs),
    webhookDeliverJob(config.deliverEveryMs),
    alertsJob,
    intercambioJob(config.inboxEveryMs),
    rcvJob,
    foliosJob(config.foliosEveryMs),
    // Issue 26: only with a backup folder or bucket configured.
    ...[backupJob(config)].filter((job) => job !== null),
  ])
  // Issue 26: S3 copies without the master key, a backup folder on the data dir's own disk.
  void backupSettingWarnings(config, config.dataDir).then((warnings) => {
    for (const w of warnings) log.warn(w.event, { message: w.message })
  })
  // The console (its screens, preact, htmx) is loaded by its first request, not at start-up: a server
  // only the API talks to never holds it (docs/decisions/performance.md «Issue 31, session 14»). A failed load is tried
  // again by the next request.
  let door: Promise<ConsoleDoor> | undefined
  const consoleDoor: ConsoleDoor = {
    handle: async (request, clientIp) => {
      door ??= import('../console/door')
        .then((m) => m.createConsoleDoor(deps))
        .catch((err: unknown) => {
          door = undefined
          throw err
        })
      return (await door).handle(request, clientIp)
    },
  }
  // At start, not with the console: the first login after a restart must not be the one that pays the dummy hash
  // (an unknown address answered slower than a known one).
  prepareLoginTiming()
  const http = startHttpServer(deps, {
    jobsRunning: () => scheduler.isRunning(),
    isShuttingDown: () => shuttingDown,
    markShuttingDown: () => {
      shuttingDown = true
    },
    sii: () => siiReadiness(deps),
  }, [{ prefix: CONSOLE_PREFIX, longOperationPrefixes: CONSOLE_LONG_OPERATIONS, handle: consoleDoor.handle }])
  log.info('server.started', {
    version: VERSION,
    listen: http.url,
    data_dir: config.dataDir,
    sii: describeSii(config.sii),
    ...(runtime.simulatorUrl ? { sii_simulator: runtime.simulatorUrl } : {}),
    tls: config.tlsCert !== null,
    rate_limit: config.rateLimit,
  })
  const loopback = ['127.0.0.1', 'localhost', '::1'].includes(config.host)
  if (!loopback && config.tlsCert === null)
    log.warn('server.plain_http_beyond_loopback', { message: 'escuchando más allá de loopback sin TLS: use --tls-cert/--tls-key o un proxy HTTPS' })
  if (config.demo) await printDemo(deps, http.url)
  let stopping: Promise<void> | null = null
  return {
    url: http.url,
    deps,
    stop() {
      stopping ??= (async () => {
        log.info('server.stopping', { drain_ms: DRAIN_MS })
        // Requests and jobs drain side by side under one deadline: one slow receiver cannot add its 10 s to theirs.
        const [requestsCut, jobsCut] = await Promise.all([http.stop(DRAIN_MS), scheduler.stop(DRAIN_MS)])
        await runtime.close()
        log.info('server.stopped', { requests_cut: requestsCut, jobs_cut: jobsCut })
      })()
      return stopping
    },
  }
}

export const serve: Command = {
  name: 'serve',
  summary: 'Inicia la API, los jobs de envío y seguimiento, y el simulador si --sii simulado.',
  usage: `timbre serve [opciones]\n\nCada opción también es una variable de entorno (la opción gana). Variables sin opción:\n${settingsHelp(true)}`,
  flags: serveFlags(),
  isLongRunning: true,
  async run(args) {
    const config = loadConfig(args.flags)
    // Handlers go in before anything starts: a SIGTERM that arrives while starting stops the server once it is up.
    let server: RunningServer | null = null
    let received: string | null = null
    let stopWatching: (() => void) | null = null
    const stopFor = (signal: string, running: RunningServer) => {
      stopWatching?.()
      running.deps.log.info('server.signal', { signal })
      // The last word on the deadline: a close that hangs (a worker that will not end) exits non-zero, with a log line.
      setTimeout(() => {
        running.deps.log.error('server.stop_timeout', { exit_within_ms: EXIT_WITHIN_MS })
        // After the logger's flush (one write per microtask turn), so the line is on stdout before the exit.
        setImmediate(() => process.exit(1))
      }, EXIT_WITHIN_MS).unref()
      void running.stop().then(() => process.exit(0))
    }
    const onSignal = (signal: string) => {
      if (server) stopFor(signal, server)
      else received ??= signal
    }
    const isSigHupIgnored = process.platform === 'linux' && isSigHupIgnoredIn(procStatus())
    for (const signal of stopSignals(process.platform, isSigHupIgnored)) process.once(signal, () => onSignal(signal))
    server = await runServer(config)
    if (received) stopFor(received, server)
    // `timbre stop`: the graceful stop that also works on Windows, where no process can signal another (issue 26).
    if (!received) stopWatching = watchStopRequests(config.dataDir, () => onSignal('stop-request'))
    return undefined
  },
}
