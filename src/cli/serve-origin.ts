// Where a local `timbre serve` listens, as the admin commands that talk to it (console link, health) reach it: the same
// settings serve reads (flag, then TIMBRE_HOST / TIMBRE_PORT / TIMBRE_TLS_CERT, then default), a wildcard listen reached
// on loopback. Only these settings are read, so a setting these commands do not use (a bad TIMBRE_TRUST_PROXY, say)
// cannot break them.
import { SETTINGS } from '../config'

export interface ServeOrigin {
  /** `http(s)://host:port`, no trailing slash. */
  readonly origin: string
  readonly isTls: boolean
}

/** The address a local client reaches a server listening on `host`: a wildcard listen is reached on loopback. */
export function probeHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1'
  if (host === '::' || host === '[::]') return '[::1]'
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
}

export function serveOrigin(flags: { readonly host?: string; readonly port?: string } = {}, env: Readonly<Record<string, string | undefined>> = process.env): ServeOrigin {
  const host = SETTINGS.host.parse(flags.host ?? env.TIMBRE_HOST ?? SETTINGS.host.default, '--host')
  const port = SETTINGS.port.parse(flags.port ?? env.TIMBRE_PORT ?? SETTINGS.port.default, '--port')
  const isTls = (env.TIMBRE_TLS_CERT ?? '') !== ''
  return { origin: `${isTls ? 'https' : 'http'}://${probeHost(host)}:${port}`, isTls }
}
