// Where the console lives and how its links are made: what the server and the CLI need of the console without loading
// it (serve loads the screens at the console's first request, cli/serve.ts).

export const CONSOLE_PREFIX = '/console'

/**
 * The certification screen's paths get the API's long idle limit (http/server.ts), as /api/v1/billing/certificacion
 * does. Measured on Bun 1.4.5: a handler still working (issuing a set) is not cut, but a response stream silent for
 * 10 s is, and the muestras zip streams PDFs as they are drawn, which on a busy machine may pause that long.
 */
export const CONSOLE_LONG_OPERATIONS: readonly string[] = [`${CONSOLE_PREFIX}/certificacion/`]

/** The administrator's one-time link as `timbre console link` and the demo banner print it. */
export function consoleLinkUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/$/, '')}${CONSOLE_PREFIX}/enlace?token=${encodeURIComponent(token)}`
}
