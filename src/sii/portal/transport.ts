// One HTTP exchange with the SII portal, presenting the company's certificate on every https request (the login host
// asks for it: research §2.2, §4.2; the others ignore it). DESIGN §6's guarantees for every SII call: a timeout that
// covers the body too, and no throw (a network error, a TLS failure or a timeout is a `failure` with its reason).
// Redirects are never followed here: the login follows them by hand (session.ts), a data call must not.
// The namespace, read when a transport is made: a named import makes Bun build the root list when the module loads.
import * as nodeTls from 'node:tls'
import type { Signer } from '../../domain/signer'
import type { HostTarget } from '../client/hosts'
import { SII_USER_AGENT } from '../client/http'
import portalCaPem from '../simulator/portal-ca.cert.pem' with { type: 'text' }

export interface PortalRequest {
  readonly method: 'GET' | 'POST'
  readonly url: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
}

export type PortalReply =
  | { readonly kind: 'response'; readonly status: number; readonly headers: Headers; readonly bytes: Uint8Array }
  /** `tooLarge`: the server answered, with more than MAX_ANSWER_BYTES: not an outage, an answer Timbre will not read. */
  | { readonly kind: 'failure'; readonly reason: string; readonly tooLarge?: true }

export interface PortalTransport {
  send(req: PortalRequest): Promise<PortalReply>
}

export interface PortalTransportOptions {
  readonly target: HostTarget
  readonly signer: Signer
  readonly timeoutMs: number
  readonly fetch: typeof fetch
  /** Default MAX_ANSWER_BYTES; tests lower it. */
  readonly maxAnswerBytes?: number
}

/**
 * A transport bound to one company's certificate. The private key is exported to PEM here, in memory, for Bun's
 * `fetch` `tls` option (it takes PEM text, not a KeyObject), and lives as long as the transport: one portal session.
 */
export function createPortalTransport(opts: PortalTransportOptions): PortalTransport {
  const tls = {
    cert: certificatePem(opts.signer.certificateDerBase64),
    key: opts.signer.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    // The real SII: the system's roots only. An origin target is the simulator, whose portal speaks TLS with a
    // certificate of its own CA (src/sii/simulator/portal-ca.cert.pem); the public roots stay for an origin behind a
    // real certificate. `ca` replaces the default roots in Bun, so they are listed too.
    ...(opts.target.kind === 'origin' ? { ca: [portalCaPem, ...nodeTls.rootCertificates] } : {}),
  }
  return {
    async send(req) {
      const signal = AbortSignal.timeout(opts.timeoutMs)
      try {
        const res = await opts.fetch(req.url, {
          method: req.method,
          headers: { 'User-Agent': SII_USER_AGENT, ...req.headers },
          redirect: 'manual',
          signal,
          ...(req.body === undefined ? {} : { body: req.body }),
          ...(req.url.startsWith('https:') ? { tls } : {}),
        })
        // The body is read under the same signal: a server that sends its headers and then hangs also times out.
        const max = opts.maxAnswerBytes ?? MAX_ANSWER_BYTES
        const bytes = await readCapped(res, max)
        if (bytes === null) return { kind: 'failure', reason: `answer larger than ${max} bytes`, tooLarge: true }
        return { kind: 'response', status: res.status, headers: res.headers, bytes }
      } catch (err) {
        return { kind: 'failure', reason: failureReason(err, signal, opts.timeoutMs) }
      }
    },
  }
}

/**
 * No portal answer Timbre reads is near this: a month's JSON detail of a type is a few MB, a deferred CSV of a large
 * company tens. A changed page, a proxy's error or a hostile server is cut here rather than held whole in memory.
 */
export const MAX_ANSWER_BYTES = 128 * 1024 * 1024

/** The body, or null once it passes `max` bytes (the rest is not read). */
async function readCapped(res: Response, max: number): Promise<Uint8Array | null> {
  if (res.body === null) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of res.body) {
    total += chunk.byteLength
    if (total > max) {
      await res.body.cancel().catch(() => undefined)
      return null
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

function certificatePem(derBase64: string): string {
  const lines = derBase64.replace(/\s+/g, '').match(/.{1,64}/g) ?? []
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`
}

function failureReason(err: unknown, signal: AbortSignal, timeoutMs: number): string {
  const name = err instanceof Error ? err.name : ''
  if (signal.aborted || name === 'TimeoutError' || name === 'AbortError') return `timeout after ${timeoutMs} ms`
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : ''
  const message = err instanceof Error ? err.message : String(err)
  return `network error: ${code !== '' && !message.includes(code) ? `${code} ` : ''}${message}`.slice(0, 300)
}
