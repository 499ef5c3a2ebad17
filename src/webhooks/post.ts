// One delivery attempt (DESIGN §7, §12): POST the JSON with the signature headers to the address the destination check
// allowed; a 2xx within the timeout is delivered, anything else (other statuses, redirects, timeouts, network errors) is
// a failure to retry. What the attempt keeps is a coarse class, never the socket's words: the delivery log is read by
// the company, and raw errors (ECONNREFUSED here, a TLS alert there) would let it map the host's network.
import type { AddressPolicy } from '../domain/webhooks'
import { resolveDestination, systemLookup, type Destination, type Lookup } from './destination'
import { signPayload, SIGNATURE_HEADER } from './signature'

export const DELIVERY_TIMEOUT_MS = 10_000
/** DESIGN §7: what is read of a receiver's answer, as it came over the wire (never decompressed). */
export const MAX_ANSWER_BYTES = 64 * 1024

/**
 * DESIGN §7's classes, plus `address_refused`: the URL's host is, or now resolves to, an address the policy refuses
 * (docs/decisions/webhooks.md).
 */
export type AttemptErrorClass = 'timeout' | 'connection_refused' | 'tls' | 'dns' | 'http_status' | 'too_large' | 'address_refused'

export interface AttemptResult {
  readonly ok: boolean
  readonly statusCode: number | null
  readonly durationMs: number
  readonly error: AttemptErrorClass | null
  /** The underlying error's code (ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT…), for the operator's log only. */
  readonly cause: string | null
}

const TLS_CODE = /CERT|SSL|TLS|EPROTO|HANDSHAKE|SIGNATURE|ISSUER|ALTNAME/i

/** Bun's fetch errors carry a `code` (docs/stack-notes.md): each maps to one class. */
function classOf(err: unknown, signal: AbortSignal): AttemptErrorClass {
  const e = err as { name?: string; code?: string } | null
  if (signal.aborted || e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timeout'
  const code = String(e?.code ?? '')
  if (code === 'ResponseHeadersTooLarge') return 'too_large'
  if (code === 'Malformed_HTTP_Response' || code === 'InvalidHTTPResponse') return 'http_status' // answered, but not HTTP
  if (code === 'ENOTFOUND' || code.startsWith('EAI_')) return 'dns'
  if (TLS_CODE.test(code)) return 'tls'
  return 'connection_refused' // ECONNREFUSED, ECONNRESET, EHOSTUNREACH, ENETUNREACH and any other failure to connect
}

/**
 * Reads at most `limit` bytes of the body, then lets the connection go. The status alone decides the outcome, so a
 * body that is longer, fails half-way or never ends (the attempt's signal cuts it) changes nothing.
 */
async function readAtMost(res: Response, limit: number): Promise<void> {
  const reader = res.body?.getReader()
  if (reader === undefined) return
  try {
    for (let read = 0; read < limit; ) {
      const { done, value } = await reader.read()
      if (done) return
      read += value.byteLength
    }
  } catch {
    return
  }
  await reader.cancel().catch(() => undefined)
}

/** The URL with the checked address in place of the name: the client connects there and resolves nothing. */
function addressedUrl(url: URL, dest: Extract<Destination, { ok: true }>): string {
  const host = dest.family === 6 ? `[${dest.address}]` : dest.address
  return `${url.protocol}//${host}${url.port ? `:${url.port}` : ''}${url.pathname}${url.search}`
}

export async function postEvent(input: {
  readonly url: string
  readonly secret: string
  readonly eventId: string
  readonly eventType: string
  readonly body: string
  readonly userAgent: string
  readonly nowSeconds: number
  readonly policy: AddressPolicy
  readonly lookup?: Lookup
  readonly timeoutMs?: number
  /** Extra trusted roots (PEM), for tests with their own CA; deliveries use the system's. */
  readonly ca?: string
}): Promise<AttemptResult> {
  const started = performance.now()
  const signal = AbortSignal.timeout(input.timeoutMs ?? DELIVERY_TIMEOUT_MS)
  const done = (statusCode: number | null, error: AttemptErrorClass | null, cause: string | null = null): AttemptResult => ({
    ok: error === null,
    statusCode,
    durationMs: Math.round(performance.now() - started),
    error,
    cause,
  })
  let url: URL
  try {
    url = new URL(input.url)
  } catch {
    return done(null, 'dns', 'invalid url') // registration checks the URL: a stored one always parses
  }
  const dest = await resolveDestination(url, input.policy, input.lookup ?? systemLookup, signal)
  if (!dest.ok) return done(null, dest.reason === 'refused' ? 'address_refused' : dest.reason, dest.reason === 'refused' ? dest.range : null)
  try {
    const res = await fetch(addressedUrl(url, dest), {
      method: 'POST',
      redirect: 'manual',
      signal,
      // One connection per attempt, to this address: nothing pooled under another name's check is reused.
      keepalive: false,
      // Bun inflates ahead of the reader: 100 KB of gzip became 100 MB before the first 64 KB was read
      // (docs/stack-notes.md). Undecoded, the body is bytes off the wire, and receivers are asked not to compress.
      decompress: false,
      headers: {
        Host: url.host,
        'Accept-Encoding': 'identity',
        'Content-Type': 'application/json',
        'User-Agent': input.userAgent,
        'Timbre-Event-Id': input.eventId,
        'Timbre-Event-Type': input.eventType,
        [SIGNATURE_HEADER]: signPayload(input.secret, input.nowSeconds, input.body),
      },
      // serverName is both the SNI and the name the certificate is verified against (Bun 1.4.5, docs/stack-notes.md).
      tls: { ...(dest.hostname !== null ? { serverName: dest.hostname } : {}), ...(input.ca !== undefined ? { ca: input.ca } : {}) },
      body: input.body,
    })
    await readAtMost(res, MAX_ANSWER_BYTES)
    const ok = res.status >= 200 && res.status < 300
    return done(res.status, ok ? null : 'http_status', ok ? null : `HTTP ${res.status}`)
  } catch (err) {
    return done(null, classOf(err, signal), String((err as { code?: string; name?: string })?.code ?? (err as Error)?.name ?? 'error'))
  }
}
