// One HTTP exchange with the SII, with the guarantees DESIGN §6 asks of every call: a timeout (AbortSignal), and no
// throw: a network error, a timeout or an unreadable body comes back as a `failure` with a reason the jobs log and
// keep. Classifying the body (HTML, empty, "Error 500", 5xx) is `passingFault`, shared by SOAP, upload and REST.
import { fromLatin1Bytes } from '../../xml/latin1'

/**
 * The SII manual's User-Agent, which ODOO and DSPY copy (docs/sii-protocol.md §6.4); ODOO reports the boleta gateway answering
 * "token not valid" to other agents (§7.3 item 3), so every request sends it.
 */
export const SII_USER_AGENT = 'Mozilla/4.0 (compatible; PROG 1.0; Windows NT 5.0; YComp 5.0.2.4)'

export type HttpResult =
  | { readonly kind: 'response'; readonly status: number; readonly contentType: string; readonly text: string }
  | { readonly kind: 'failure'; readonly reason: string }

export interface HttpRequest {
  readonly method: 'GET' | 'POST'
  readonly url: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string | FormData
}

/** Sends one request; resolves with the decoded body or a failure reason, never rejects. */
export async function exchange(fetchFn: typeof fetch, req: HttpRequest, timeoutMs: number): Promise<HttpResult> {
  const signal = AbortSignal.timeout(timeoutMs)
  try {
    const init: RequestInit = { method: req.method, headers: { 'User-Agent': SII_USER_AGENT, ...req.headers }, signal }
    if (req.body !== undefined) init.body = req.body
    const res = await fetchFn(req.url, init)
    // The body is read under the same signal: a server that sends headers and then hangs also times out.
    const bytes = new Uint8Array(await res.arrayBuffer())
    const contentType = res.headers.get('content-type') ?? ''
    return { kind: 'response', status: res.status, contentType, text: decodeBody(bytes, contentType) }
  } catch (err) {
    return { kind: 'failure', reason: failureReason(err, signal, timeoutMs) }
  }
}

function failureReason(err: unknown, signal: AbortSignal, timeoutMs: number): string {
  const name = err instanceof Error ? err.name : ''
  if (signal.aborted || name === 'TimeoutError' || name === 'AbortError') return `timeout after ${timeoutMs} ms`
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : ''
  const message = err instanceof Error ? err.message : String(err)
  return `network error: ${code !== '' && !message.includes(code) ? `${code} ` : ''}${message}`.slice(0, 300)
}

/**
 * Bytes → text by the declared charset: the Content-Type's, else the XML declaration's, else UTF-8. The upload
 * answer and EnvioDTE-side texts may be ISO-8859-1 (docs/sii-protocol.md §1.2); `TextDecoder('iso-8859-1')` would be
 * windows-1252 (docs/stack-notes.md), so Latin-1 is decoded byte for byte.
 */
export function decodeBody(bytes: Uint8Array, contentType: string): string {
  const head = fromLatin1Bytes(bytes.subarray(0, 200))
  const charset = /charset\s*=\s*"?([\w-]+)/i.exec(contentType)?.[1] ?? /^\s*<\?xml[^>]*encoding\s*=\s*["']([\w-]+)["']/i.exec(head)?.[1] ?? 'utf-8'
  if (/^(iso-8859-1|latin-?1|iso8859-1|us-ascii)$/i.test(charset)) return fromLatin1Bytes(bytes)
  return new TextDecoder('utf-8').decode(bytes)
}

/**
 * Why a response cannot carry an SII answer, or null when it may: HTML pages during maintenance, an empty body or the
 * literal `Error 500` during outages (docs/sii-protocol.md §6.4 "Failure modes", §6.8), any 5xx. Callers that know a meaningful
 * 5xx (a SOAP fault arrives with HTTP 500) look at the body first.
 */
export function passingFault(res: Extract<HttpResult, { kind: 'response' }>): string | null {
  const text = res.text.trim()
  // The body decides, not the Content-Type: a CGI may label its XML answer text/html.
  if (/^(<!doctype\s+html|<html)/i.test(text)) return `HTML page instead of an answer (HTTP ${res.status})`
  if (text === '') return `empty body (HTTP ${res.status})`
  if (/^error\s*500\b/i.test(text)) return `SII answered "${text.slice(0, 40)}" (HTTP ${res.status})`
  if (res.status >= 500) return `HTTP ${res.status}: ${snippet(text)}`
  return null
}

/** A short, single-line excerpt of a body for a reason. */
export function snippet(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}
