// One delivery attempt (DESIGN §7, §12): POST the JSON with the signature headers; a 2xx within the timeout is
// delivered, anything else (other statuses, redirects, timeouts, network errors) is a failure to retry.
import { signPayload, SIGNATURE_HEADER } from './signature'

export const DELIVERY_TIMEOUT_MS = 10_000

export interface AttemptResult {
  readonly ok: boolean
  readonly statusCode: number | null
  readonly durationMs: number
  readonly error: string | null
}

export async function postEvent(input: {
  readonly url: string
  readonly secret: string
  readonly eventId: string
  readonly eventType: string
  readonly body: string
  readonly userAgent: string
  readonly nowSeconds: number
  readonly timeoutMs?: number
  readonly fetch?: typeof fetch
}): Promise<AttemptResult> {
  const started = performance.now()
  const doFetch = input.fetch ?? fetch
  try {
    const res = await doFetch(input.url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(input.timeoutMs ?? DELIVERY_TIMEOUT_MS),
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': input.userAgent,
        'Timbre-Event-Id': input.eventId,
        'Timbre-Event-Type': input.eventType,
        [SIGNATURE_HEADER]: signPayload(input.secret, input.nowSeconds, input.body),
      },
      body: input.body,
    })
    // The receiver's body is not needed; reading it frees the connection.
    await res.arrayBuffer().catch(() => undefined)
    const durationMs = Math.round(performance.now() - started)
    const ok = res.status >= 200 && res.status < 300
    return { ok, statusCode: res.status, durationMs, error: ok ? null : res.status >= 300 && res.status < 400 ? 'redirect (no se siguen)' : `HTTP ${res.status}` }
  } catch (err) {
    const durationMs = Math.round(performance.now() - started)
    const name = (err as Error)?.name
    return { ok: false, statusCode: null, durationMs, error: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : String((err as Error)?.message ?? err) }
  }
}
