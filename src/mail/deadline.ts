// One bound for every network step of the mail adapter: the libraries' own timeouts cover connecting, the greeting and
// silence on the socket, but not a server that answers slowly forever. `within` races a step against the clock and, on
// expiry, calls `abort` (which closes the connection, so the step's own promise settles too and nothing is left running).

export class MailTimeout extends Error {
  constructor(readonly step: string, readonly timeoutMs: number) {
    super(`sin respuesta en ${timeoutMs} ms (${step})`)
  }
}

export async function within<T>(step: string, timeoutMs: number, abort: () => void, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort()
      reject(new MailTimeout(step, timeoutMs))
    }, timeoutMs)
  })
  try {
    return await Promise.race([work, expiry])
  } finally {
    clearTimeout(timer)
  }
}

/** A server's or library's text, short and without the password (no library should echo it, but nothing relies on that). */
export function cleanReason(text: string, password: string | null): string {
  const hidden = password ? text.split(password).join('***') : text
  const oneLine = hidden.replace(/\s+/g, ' ').trim()
  return oneLine.length > 200 ? `${oneLine.slice(0, 197)}...` : oneLine
}

/** The error's Node or library code (ECONNREFUSED, ETIMEDOUT, EAUTH…), if any. */
export function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** Reasons shared by IMAP and SMTP for failures below the protocol: DNS, TCP, TLS. Null when it is none of these. */
export function networkReason(err: unknown): string | null {
  const code = codeOf(err)
  const message = err instanceof Error ? err.message : String(err)
  if (code === 'ECONNREFUSED' || /ECONNREFUSED/.test(message)) return 'conexión rechazada (¿puerto o servidor equivocado?)'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EDNS' || /ENOTFOUND|EAI_AGAIN/.test(message)) return 'el nombre del servidor no existe (DNS)'
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'servidor inalcanzable'
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'el servidor cerró la conexión'
  if (/WRONG_VERSION_NUMBER|wrong version number/i.test(message)) return 'el servidor no habla TLS en este puerto (¿STARTTLS, o sin TLS?)'
  if (code === 'ETLS' || /certificate|SSL|TLS|self.signed/i.test(message)) return `error TLS: ${message}`
  return null
}
