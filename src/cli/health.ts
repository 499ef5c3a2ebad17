// `timbre health`: asks a running serve whether it answers (GET /health) or is ready for traffic (GET /ready), exit 0
// or 1. For container HEALTHCHECKs and monitoring scripts on the host, where no curl may be installed (the Docker
// runtime image has none): the same binary that serves is the probe (docs/decisions/operations.md "Health probe").
import { OperatorError } from '../errors'
import { intFlag, type Command } from './command'
import { serveOrigin } from './serve-origin'

const DEFAULT_TIMEOUT_MS = 5000

export const health: Command = {
  name: 'health',
  summary: 'Consulta a un servidor en marcha si responde (/health) o está listo (/ready, con --ready); sale con 0 o 1.',
  usage: 'timbre health [--ready] [--url http://127.0.0.1:8080] [--host H] [--port N] [--timeout-ms 5000]',
  flags: {
    '--ready': { takesValue: false, help: 'consulta /ready (base de datos, migraciones y jobs) en vez de /health' },
    '--url': { takesValue: true, help: 'origen del servidor; por defecto http://TIMBRE_HOST:TIMBRE_PORT, https con TIMBRE_TLS_CERT (0.0.0.0 se consulta en 127.0.0.1)' },
    '--host': { takesValue: true, help: 'dirección del servidor (o TIMBRE_HOST); por defecto 127.0.0.1' },
    '--port': { takesValue: true, help: 'puerto del servidor (o TIMBRE_PORT); por defecto 8080' },
    '--timeout-ms': { takesValue: true, help: `espera máxima de la respuesta; por defecto ${DEFAULT_TIMEOUT_MS}` },
  },
  async run(args) {
    const path = args.flags['--ready'] === 'true' ? '/ready' : '/health'
    const local = serveOrigin({ host: args.flags['--host'], port: args.flags['--port'] })
    const origin = args.flags['--url'] ?? local.origin
    const url = `${origin.replace(/\/+$/, '')}${path}`
    const timeoutMs = intFlag(args, '--timeout-ms') ?? DEFAULT_TIMEOUT_MS
    // The local server's own certificate names the host clients use, not the loopback address probed: for this probe
    // only, it is not checked. An --url is checked as any client would.
    const tls = args.flags['--url'] === undefined && local.isTls ? { rejectUnauthorized: false } : undefined
    let res: Response
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), tls })
    } catch (err) {
      const timedOut = (err as Error)?.name === 'TimeoutError'
      throw new OperatorError(timedOut ? `${url} no respondió en ${timeoutMs} ms` : `no se pudo conectar con ${url}`)
    }
    const body = await res.json().catch(() => null)
    if (res.status !== 200) throw new OperatorError(`${url} respondió HTTP ${res.status}${body ? `: ${JSON.stringify(body)}` : ''}`)
    return { url, http_status: res.status, ...(body ?? {}) }
  },
}
