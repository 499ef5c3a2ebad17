// The SII simulator: an HTTP server on the SII's real paths and message formats (DESIGN §9, docs/sii-protocol.md §6–§7), so a
// client cannot tell it from the SII except by its address. SOAP (DTEWS) and DTEUpload of maullin/palena and the
// boleta REST API of apicert/pangal are all served on one origin: the client's `--sii <origin>` target points every
// host at it. The wire contract is docs/decisions/simulator.md "Wire contract". This file starts the server, draws
// the faults and routes; each channel answers in its own module, cut as src/sii/client/ is: soap-service.ts (DTEWS),
// upload-service.ts (DTEUpload), boleta-service.ts (the boleta REST API), registro-reclamo-service.ts
// (RegistroReclamoDTE of ws1/ws2), rcv-service.ts (the portal's login, logout and RCV data service; its TLS listener
// for the certificate is portal-login.ts), folios-service.ts (the timbraje pages, on the portal's session).
import { authorityKeys } from '../../xml/authority-keys'
import { MAX_ENVELOPE_BYTES, type PortalAccess, type Route, type SimulatorContext } from './channel'
import { DEFAULT_HANG_MS, drawFault, faultResponse, Hangs, type FaultOptions } from './faults'
import { textResponse } from './http-responses'
import type { PortalListener } from './portal-login'
import { SimulatorStore } from './store'

/** portal-login.ts DEFAULT_SESSION_CAP, repeated so starting the server does not load the portal (forge, TLS). */
const DEFAULT_SESSION_CAP = 3

export interface SimulatorOptions {
  /** 0 (default) picks a free port. */
  readonly port?: number
  /** Default 127.0.0.1. */
  readonly hostname?: string
  /** `<dataDir>/sii-simulator.db` keeps state across restarts; null or absent: in memory. */
  readonly dataDir?: string | null
  readonly faults?: FaultOptions
  /** Time from upload to the final state, split into REC, SOK, CRT, FOK, PRD steps. Default 3000. */
  readonly processingDelayMs?: number
  readonly clock?: () => Date
  /** Draws for faults only (one per request when any rate is above 0), so tests can seed them. */
  readonly random?: () => number
  readonly log?: (event: string, fields: object) => void
  /** Open portal sessions per certificate holder's RUT before a login gets the cap page. Default 3 (portal-login.ts). */
  readonly portalSessionCap?: number
}

export interface RunningSimulator {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string
  readonly port: number
  stop(): Promise<void>
}

const DEFAULT_PROCESSING_DELAY_MS = 3000

let routes: Promise<readonly Route[]> | undefined

/**
 * Every endpoint of every channel. No two match the same request, so their order does not matter. Loaded at the first
 * request, not at start: the channels bring the signature checks, the XSD validator and forge, which a server whose
 * simulator is never called (most of the time at rest) should not hold in memory (issue 17).
 */
function channelRoutes(): Promise<readonly Route[]> {
  routes ??= Promise.all([import('./soap-service'), import('./upload-service'), import('./boleta-service'), import('./registro-reclamo-service'), import('./rcv-service'), import('./folios-service')])
    .then(([soap, upload, boleta, registro, rcv, folios]) => [...soap.SOAP_ROUTES, ...upload.UPLOAD_ROUTES, ...boleta.BOLETA_ROUTES, ...registro.REGISTRO_RECLAMO_ROUTES, ...rcv.RCV_ROUTES, ...folios.FOLIOS_ROUTES])
  return routes
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<RunningSimulator> {
  const store = new SimulatorStore(opts.dataDir ?? null)
  const hostname = opts.hostname ?? '127.0.0.1'
  const portal = new LazyPortal(hostname, opts.portalSessionCap ?? DEFAULT_SESSION_CAP)
  const ctx: SimulatorContext = {
    store,
    clock: shiftedClock(opts.clock ?? (() => new Date()), store),
    authorityKeys: authorityKeys({ allowSimulator: true }),
    processingDelayMs: opts.processingDelayMs ?? DEFAULT_PROCESSING_DELAY_MS,
    log: (event, fields) => opts.log?.(event, fields),
    portal,
  }
  const hangs = new Hangs()
  const handle = requestHandler(ctx, opts, hangs)
  const server = Bun.serve({
    hostname,
    port: opts.port ?? 0,
    maxRequestBodySize: MAX_ENVELOPE_BYTES + 1024 * 1024,
    fetch: (req, srv) => handle(req, (seconds) => srv.timeout(req, seconds)),
  })
  const port = server.port ?? 0
  portal.bind(ctx, port)
  const url = `http://${server.hostname === '::1' ? '[::1]' : server.hostname}:${port}`
  ctx.log('sii_simulator.started', { url })
  let stopping: Promise<void> | null = null
  return {
    url,
    port,
    stop() {
      stopping ??= (async () => {
        hangs.releaseAll()
        await Promise.all([server.stop(true), portal.stop()])
        store.close()
        ctx.log('sii_simulator.stopped', { url })
      })()
      return stopping
    },
  }
}

/**
 * The simulator's clock: the base clock (the system's, Timbre's in `serve`, a test's) plus the offset
 * `sii-simulator reloj` keeps in the store, read at every reading (one indexed SELECT) so a running simulator follows
 * the CLI at once. Everything the simulator decides by time follows it: states, tokens, the 8 days, sessions, downloads.
 */
function shiftedClock(base: () => Date, store: SimulatorStore): () => Date {
  return () => {
    const offsetMs = store.clockOffsetMs()
    const now = base()
    return offsetMs === 0 ? now : new Date(now.getTime() + offsetMs)
  }
}

/** The portal's TLS listener, started at the first login (most simulators never see one) and stopped with the server. */
class LazyPortal implements PortalAccess {
  private listener: Promise<PortalListener> | null = null
  private target: { ctx: SimulatorContext; plainPort: number } | null = null

  constructor(private readonly hostname: string, private readonly sessionCap: number) {}

  bind(ctx: SimulatorContext, plainPort: number): void {
    this.target = { ctx, plainPort }
  }

  tlsPort(): Promise<number> {
    const target = this.target
    if (target === null) throw new Error('portal used before the server started')
    if (this.listener === null) {
      const starting = import('./portal-login').then((m) => m.startPortalListener(target.ctx, { hostname: this.hostname, plainPort: target.plainPort, sessionCap: this.sessionCap }))
      // A start that failed (a port, a key) is tried again by the next login, not remembered for ever.
      starting.catch(() => {
        if (this.listener === starting) this.listener = null
      })
      this.listener = starting
    }
    return this.listener.then((l) => l.port)
  }

  async stop(): Promise<void> {
    const listener = this.listener
    this.listener = null
    const started = listener === null ? null : await listener.catch(() => null)
    await started?.stop()
  }
}

type RequestHandler = (req: Request, setTimeoutSeconds: (seconds: number) => void) => Promise<Response>

/** A fault, or the channel's answer (late when the fault is a hang); every request is logged with both. */
function requestHandler(ctx: SimulatorContext, opts: SimulatorOptions, hangs: Hangs): RequestHandler {
  const random = opts.random ?? Math.random
  return async (req, setTimeoutSeconds) => {
    const url = new URL(req.url)
    const started = Date.now()
    const fault = drawFault(opts.faults ?? {}, random)
    const res = faultResponse(fault) ?? (await route(ctx, req, url))
    if (fault === 'hang') {
      setTimeoutSeconds(0)  // Bun would otherwise close the idle connection after 10 s, a different fault
      await hangs.wait(opts.faults?.hangMs ?? DEFAULT_HANG_MS)
    }
    ctx.log('sii_simulator.request', { method: req.method, path: url.pathname, status: res.status, fault, ms: Date.now() - started })
    return res
  }
}

/** Unknown paths get the 404 page of the SII's web server; a bug in a channel is its bare `Error 500`, and logged. */
async function route(ctx: SimulatorContext, req: Request, url: URL): Promise<Response> {
  try {
    const found = (await channelRoutes()).find((r) => r.method === req.method && r.matches(url))
    if (found !== undefined) return await found.answer(ctx, req, url)
    return textResponse('<html><body><h1>404 Not Found</h1></body></html>', 'text/html', 404)
  } catch (err) {
    ctx.log('sii_simulator.internal_error', { path: url.pathname, error: err instanceof Error ? err.stack ?? err.message : String(err) })
    return textResponse('Error 500', 'text/plain', 500)
  }
}
