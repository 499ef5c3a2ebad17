// `timbre console link` (DESIGN §14): a one-time administrator link, like Jupyter's token. It works against a running
// serve (WAL) or before one starts; only the token's SHA-256 is stored.
import { consoleLinkUrl } from '../console/page'
import { createAdminLink, CONSOLE_LINK_TTL_MS } from '../services/console-sessions'
import { withAdminStore } from './admin-store'
import { DATA_DIR_FLAG, UsageError, type Command } from './command'

/** Where serve listens as the same environment would start it; --url when a proxy or another host stands in front. */
function baseUrl(flag: string | undefined): string {
  if (flag !== undefined) {
    if (!/^https?:\/\/[^/\s]+\/?$/.test(flag)) throw new UsageError(`--url: se espera http(s)://host[:puerto], se recibió "${flag}"`)
    return flag.replace(/\/$/, '')
  }
  const host = process.env.TIMBRE_HOST ?? '127.0.0.1'
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host
  return `${process.env.TIMBRE_TLS_CERT ? 'https' : 'http'}://${shown}:${process.env.TIMBRE_PORT ?? '8080'}`
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
