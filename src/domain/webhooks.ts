// The URL a webhook posts to (spec 4.4, DESIGN §7, §12). Pure, so the door checks it with the body's shape (every
// failing field at once, DESIGN §5) and the service checks it again for any other caller.
import type { FieldError } from '../errors'

/** https only, unless TIMBRE_WEBHOOK_ALLOW_HTTP; no credentials or fragments in the URL. A non-string is the shape check's. */
export function checkWebhookUrl(url: unknown, allowHttp: boolean): FieldError[] {
  if (typeof url !== 'string') return []
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return [{ field: 'url', code: 'INVALID_FORMAT', message: 'URL inválida.' }]
  }
  if (parsed.protocol !== 'https:' && !(allowHttp && parsed.protocol === 'http:'))
    return [{ field: 'url', code: 'INVALID_VALUE', message: allowHttp ? 'La URL debe ser http:// o https://.' : 'La URL debe ser https:// (http:// solo con --webhook-allow-http).' }]
  if (parsed.username || parsed.password) return [{ field: 'url', code: 'NOT_ALLOWED', message: 'La URL no puede llevar credenciales.' }]
  if (parsed.hash) return [{ field: 'url', code: 'NOT_ALLOWED', message: 'La URL no puede llevar fragmento (#).' }]
  return []
}
