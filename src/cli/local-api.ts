// The commands that act through the running server (`timbre certificacion …`, `timbre rcv …`): they need its folio
// reservations, worker pool, jobs and SII sessions, so they do not open a second writer on the data dir. Each mints a
// short token for the company with the instance key (as `timbre token issue` does) and calls the local `timbre serve`
// over loopback, which answers exactly as the API does.
import { loadKeyring } from '../app'
import { dataDirFrom, jwtPublicKeysFromEnv } from '../config'
import { OperatorError } from '../errors'
import { resolveEmpresa } from '../services/empresas'
import { issueToken } from '../services/tokens'
import { withAdminStore } from './admin-store'
import { requireFlag, type ParsedArgs } from './command'
import { serveOrigin } from './serve-origin'

/** The company a command names (`--empresa RUT|ID`), resolved in the data dir. */
export async function empresaIdOf(args: ParsedArgs): Promise<string> {
  const ref = requireFlag(args, '--empresa')
  return withAdminStore(args, async (deps) => resolveEmpresa(deps, { ref }).id)
}

/** A token for the company, valid five minutes: enough for one command, useless if it leaks into a log. */
async function bearerFor(args: ParsedArgs, empresaId: string, sub: string): Promise<string> {
  return withAdminStore(args, async (deps) => {
    const keyring = await loadKeyring(dataDirFrom(args.flags), jwtPublicKeysFromEnv())
    return (await issueToken({ ...deps, keyring }, { empresaId, sub, ttlSeconds: 300 })).token
  })
}

export interface LocalApiAnswer {
  readonly status: number
  readonly body: unknown
  readonly bytes: Uint8Array
  readonly contentType: string
}

export interface LocalApiCall {
  /** From the API prefix on: `/api/v1/billing/…`. */
  readonly path: string
  /** The token's `sub`, so the server's log says which command called. */
  readonly sub: string
  readonly timeoutMs: number
  /** The stderr JSON line's `msg` for this call (progress on a long command). */
  readonly log: string
  /** The company; by default the one `--empresa` names. */
  readonly empresaId?: string
}

/** One call of the local server's API as the company; an HTTP error is an OperatorError with the envelope's words. */
export async function callLocalApi(args: ParsedArgs, call: LocalApiCall, method: 'GET' | 'POST' | 'PUT', body?: unknown): Promise<LocalApiAnswer> {
  const token = await bearerFor(args, call.empresaId ?? (await empresaIdOf(args)), call.sub)
  const local = serveOrigin()
  const origin = (args.flags['--url'] ?? local.origin).replace(/\/+$/, '')
  const tls = args.flags['--url'] === undefined && local.isTls ? { rejectUnauthorized: false } : undefined
  process.stderr.write(`${JSON.stringify({ msg: call.log, method, path: call.path })}\n`)
  let res: Response
  try {
    // A file goes as multipart with its name (the intercambio's RecepcionEnvio names it); everything else as JSON.
    const isForm = body instanceof FormData
    res = await fetch(`${origin}${call.path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && !isForm ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: isForm ? body : JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(call.timeoutMs),
      tls,
    })
  } catch {
    throw new OperatorError(`no se pudo conectar con ${origin}: inicie el servidor (timbre serve) o indique --url`)
  }
  const bytes = new Uint8Array(await res.arrayBuffer())
  const contentType = res.headers.get('content-type') ?? ''
  const parsed = contentType.includes('json') ? (JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown) : null
  if (res.status >= 400) {
    const e = (parsed ?? {}) as { code?: string; message?: string; details?: Array<{ field: string; message: string }>; context?: Record<string, unknown> | null }
    const details = (e.details ?? []).map((d) => `\n  ${d.field}: ${d.message}`).join('')
    // The envelope's context names what the error is about (the open request's id, the CAF that overlaps).
    const context = Object.entries(e.context ?? {}).map(([k, v]) => `\n  ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join('')
    throw new OperatorError(`HTTP ${res.status} ${e.code ?? ''}: ${e.message ?? ''}${details}${context}`)
  }
  return { status: res.status, body: parsed, bytes, contentType }
}
