// Webhook signatures (DESIGN §7): `Timbre-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`,
// the scheme Stripe made familiar: the timestamp is signed with the body, so a captured request cannot be replayed
// later than the receiver's tolerance.
import { createHmac, timingSafeEqual } from 'node:crypto'

export const SIGNATURE_HEADER = 'Timbre-Signature'
/** What receivers should accept by default (README "Webhooks"). */
export const DEFAULT_TOLERANCE_SECONDS = 300

export function signPayload(secret: string, timestampSeconds: number, rawBody: string): string {
  const v1 = createHmac('sha256', secret).update(`${timestampSeconds}.${rawBody}`, 'utf8').digest('hex')
  return `t=${timestampSeconds},v1=${v1}`
}

/** Receiver side, used by tests and shown in the README: true when one v1 matches and t is within the tolerance. */
export function verifySignature(secret: string, header: string, rawBody: string, nowSeconds: number, toleranceSeconds = DEFAULT_TOLERANCE_SECONDS): boolean {
  const parts = header.split(',').map((p) => p.trim().split('=', 2) as [string, string | undefined])
  const t = Number(parts.find(([k]) => k === 't')?.[1])
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false
  const expected = Buffer.from(signPayload(secret, t, rawBody).split('v1=')[1]!, 'hex')
  return parts
    .filter(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]{64}$/.test(v))
    .some(([, v]) => timingSafeEqual(Buffer.from(v!, 'hex'), expected))
}
