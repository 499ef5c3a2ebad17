// `timbre health`: asks a running serve whether it answers (GET /health) or is ready for traffic (GET /ready), exit 0
// or 1. For container HEALTHCHECKs and monitoring scripts on the host, where no curl may be installed (the Docker
// runtime image has none): the same binary that serves is the probe (docs/decisions/operations.md "Health probe").
import { OperatorError } from '../errors'
import { SETTINGS } from '../config'
import { intFlag, type Command } from './command'

const DEFAULT_TIMEOUT_MS = 5000

/** The address a local client reaches a server listening on `host`: a wildcard listen is reached on loopback. */
export function probeHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1'
  if (host === '::' || host === '[::]') return '[::1]'
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
}

export const health: Command = {
  name: 'health',
  summary: 'Consulta a un servidor en marcha si responde (/health) o está listo (/ready, con --ready); sale con 0 o 1.',
  usage: 'timbre health [--ready] [--url http://127.0.0.1:8080] [--host H] [--port N] [--timeout-ms 5000]',
  flags: {
    '--ready': { takesValue: false, help: 'consulta /ready (base de datos, migraciones y jobs) en vez de /health' },
    '--url': { takesValue: true, help: 'origen del servidor; por defecto http://TIMBRE_HOST:TIMBRE_PORT (0.0.0.0 se consulta en 127.0.0.1)' },
    '--host': { takesValue: true, help: 'dirección del servidor (o TIMBRE_HOST); por defecto 127.0.0.1' },
    '--port': { takesValue: true, help: 'puerto del servidor (o TIMBRE_PORT); por defecto 8080' },
    '--timeout-ms': { takesValue: true, help: `espera máxima de la respuesta; por defecto ${DEFAULT_TIMEOUT_MS}` },
  },
  async run(args) {
    const path = args.flags['--ready'] === 'true' ? '/ready' : '/health'
    const origin = args.flags['--url'] ?? serveOrigin(args.flags)
    const url = `${origin.replace(/\/+$/, '')}${path}`
    const timeoutMs = intFlag(args, '--timeout-ms') ?? DEFAULT_TIMEOUT_MS
    let res: Response
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })
    } catch (err) {
      const timedOut = (err as Error)?.name === 'TimeoutError'
      throw new OperatorError(timedOut ? `${url} no respondió en ${timeoutMs} ms` : `no se pudo conectar con ${url}`)
    }
    const body = await res.json().catch(() => null)
    if (res.status !== 200) throw new OperatorError(`${url} respondió HTTP ${res.status}${body ? `: ${JSON.stringify(body)}` : ''}`)
    return { url, status: res.status, ...(body ?? {}) }
  },
}

/**
 * Where `timbre serve` listens with the same settings: flag, then TIMBRE_HOST / TIMBRE_PORT, then default. Only these two
 * are read, so a setting the probe does not use (a bad TIMBRE_TRUST_PROXY, say) cannot make a healthy server look sick.
 */
function serveOrigin(flags: Readonly<Record<string, string>>): string {
  const host = SETTINGS.host.parse(flags['--host'] ?? process.env.TIMBRE_HOST ?? SETTINGS.host.default, '--host')
  const port = SETTINGS.port.parse(flags['--port'] ?? process.env.TIMBRE_PORT ?? SETTINGS.port.default, '--port')
  return `http://${probeHost(host)}:${port}`
}
