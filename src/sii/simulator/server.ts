// The SII simulator: an HTTP server on the SII's real paths and message formats (DESIGN §9, docs/sii-protocol.md §6–§7), so a
// client cannot tell it from the SII except by its address. SOAP (DTEWS) and DTEUpload of maullin/palena and the
// boleta REST API of apicert/pangal are all served on one origin: the client's `--sii <origin>` target points every
// host at it. The wire contract is docs/decisions/simulator.md "Wire contract". This file starts the server, draws
// the faults and routes; each channel answers in its own module, cut as src/sii/client/ is: soap-service.ts (DTEWS),
// upload-service.ts (DTEUpload), boleta-service.ts (the boleta REST API), registro-reclamo-service.ts
// (RegistroReclamoDTE of ws1/ws2).
import { authorityKeys } from '../../xml/authority-keys'
import { MAX_ENVELOPE_BYTES, type Route, type SimulatorContext } from './channel'
import { DEFAULT_HANG_MS, drawFault, faultResponse, Hangs, type FaultOptions } from './faults'
import { textResponse } from './http-responses'
import { SimulatorStore } from './store'

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
  routes ??= Promise.all([import('./soap-service'), import('./upload-service'), import('./boleta-service'), import('./registro-reclamo-service')])
    .then(([soap, upload, boleta, registro]) => [...soap.SOAP_ROUTES, ...upload.UPLOAD_ROUTES, ...boleta.BOLETA_ROUTES, ...registro.REGISTRO_RECLAMO_ROUTES])
  return routes
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<RunningSimulator> {
  const store = new SimulatorStore(opts.dataDir ?? null)
  const ctx: SimulatorContext = {
    store,
    clock: opts.clock ?? (() => new Date()),
    authorityKeys: authorityKeys({ allowSimulator: true }),
    processingDelayMs: opts.processingDelayMs ?? DEFAULT_PROCESSING_DELAY_MS,
    log: (event, fields) => opts.log?.(event, fields),
  }
  const hangs = new Hangs()
  const handle = requestHandler(ctx, opts, hangs)
  const server = Bun.serve({
    hostname: opts.hostname ?? '127.0.0.1',
    port: opts.port ?? 0,
    maxRequestBodySize: MAX_ENVELOPE_BYTES + 1024 * 1024,
    fetch: (req, srv) => handle(req, (seconds) => srv.timeout(req, seconds)),
  })
  const port = server.port ?? 0
  const url = `http://${server.hostname === '::1' ? '[::1]' : server.hostname}:${port}`
  ctx.log('sii_simulator.started', { url })
  let stopping: Promise<void> | null = null
  return {
    url,
    port,
    stop() {
      stopping ??= (async () => {
        hangs.releaseAll()
        await server.stop(true)
        store.close()
        ctx.log('sii_simulator.stopped', { url })
      })()
      return stopping
    },
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
