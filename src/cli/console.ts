// `timbre console link` (DESIGN §14): a one-time administrator link, like Jupyter's token. It works against a running
// serve (WAL) or before one starts; only the token's SHA-256 is stored.
import { consoleLinkUrl } from '../console/paths'
import { createAdminLink, CONSOLE_LINK_TTL_MS } from '../services/console-sessions'
import { withAdminStore } from './admin-store'
import { DATA_DIR_FLAG, UsageError, type Command } from './command'
import { serveOrigin } from './serve-origin'

/** Where serve listens as the same environment would start it; --url when a proxy or another host stands in front. */
function baseUrl(flag: string | undefined): string {
  if (flag !== undefined) {
    if (!/^https?:\/\/[^/\s]+\/?$/.test(flag)) throw new UsageError(`--url: se espera http(s)://host[:puerto], se recibió "${flag}"`)
    return flag.replace(/\/$/, '')
  }
  return serveOrigin().origin
}

export const consoleLink: Command = {
  name: 'console link',
  summary: `Imprime un enlace de un solo uso (vence en ${CONSOLE_LINK_TTL_MS / 60_000} min) para entrar a la consola como administrador.`,
  usage: 'timbre console link [--url http://host:puerto]',
  flags: {
    '--url': { takesValue: true, help: 'dirección con que el navegador llega a Timbre (por defecto la de TIMBRE_HOST/TIMBRE_PORT)' },
    ...DATA_DIR_FLAG,
  },
  async run(args) {
    const base = baseUrl(args.flags['--url'])
    return withAdminStore(args, (deps) => {
      const link = createAdminLink(deps)
      return { url: consoleLinkUrl(base, link.token), expires_at: link.expiresAt }
    })
  },
}
