// The URL a webhook posts to (spec 4.4, DESIGN §7, §12), and where deliveries may go. Pure, so the door checks it with
// the body's shape (every failing field at once, DESIGN §5), the service checks it again for any other caller, and the
// delivery checks every address a name resolves to before connecting to it (src/webhooks/destination.ts).
import type { FieldError } from '../errors'

/** DESIGN §7: webhooks a company may have at once; each event writes one delivery per subscribed webhook. */
export const MAX_WEBHOOKS_PER_EMPRESA = 20

/** DESIGN §7 "Where deliveries may go": the two settings that move the line (TIMBRE_WEBHOOK_ALLOW_HTTP, TIMBRE_WEBHOOK_DENY_PRIVATE). */
export interface AddressPolicy {
  /** Development: plain http:// and every range below, loopback included, are accepted. */
  readonly allowHttp: boolean
  /** Hosting many companies: private ranges are refused too. */
  readonly denyPrivate: boolean
}

/**
 * Where an address lies. `reserved` is 240.0.0.0/4 (255.255.255.255 among them): nothing a receiver can listen on.
 * 100.64.0.0/10 (carrier-grade NAT, and the addresses of overlay VPNs such as Tailscale) counts as private: a LAN.
 */
export type AddressRange = 'public' | 'private' | 'loopback' | 'link_local' | 'unspecified' | 'multicast' | 'reserved'

/** The policy of a configuration (DESIGN §2): the config object is passed as it is by every door. */
export function webhookPolicy(config: { readonly webhookAllowHttp: boolean; readonly webhookDenyPrivate: boolean }): AddressPolicy {
  return { allowHttp: config.webhookAllowHttp, denyPrivate: config.webhookDenyPrivate }
}

export function isRangeAllowed(range: AddressRange, policy: AddressPolicy): boolean {
  if (range === 'public') return true
  if (range === 'private') return !policy.denyPrivate
  return policy.allowHttp
}

/** Whether any address can be refused under this policy: when none can, a name need not be resolved to be checked. */
export function refusesAnything(policy: AddressPolicy): boolean {
  return !policy.allowHttp || policy.denyPrivate
}

function ipv4Range(b: readonly number[]): AddressRange {
  const [a, c] = [b[0]!, b[1]!]
  if (a === 0) return 'unspecified' // 0.0.0.0/8 "this network": Linux connects 0.x to the local host
  if (a === 127) return 'loopback'
  if (a === 169 && c === 254) return 'link_local' // 169.254.169.254: the cloud metadata service
  if (a >= 224 && a <= 239) return 'multicast'
  if (a >= 240) return 'reserved'
  if (a === 10 || (a === 172 && c >= 16 && c <= 31) || (a === 192 && c === 168) || (a === 100 && c >= 64 && c <= 127)) return 'private'
  return 'public'
}

function parseIpv4(text: string): number[] | null {
  const parts = text.split('.')
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null
  return parts.map(Number)
}

/** The 8 groups of an IPv6 address (`::` expanded, a dotted IPv4 tail folded in), or null when it is not one. */
function parseIpv6(text: string): number[] | null {
  let head = text
  const tail: number[] = []
  const lastColon = text.lastIndexOf(':')
  if (text.includes('.')) {
    const v4 = parseIpv4(text.slice(lastColon + 1))
    if (v4 === null) return null
    tail.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!)
    head = text.slice(0, lastColon + 1)
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1)
  }
  const halves = head.split('::')
  if (halves.length > 2) return null
  const groups = (s: string): number[] | null => {
    if (s === '') return []
    const g = s.split(':')
    return g.every((x) => /^[0-9a-f]{1,4}$/i.test(x)) ? g.map((x) => parseInt(x, 16)) : null
  }
  const left = groups(halves[0]!)
  const right = halves.length === 2 ? groups(halves[1]!) : []
  if (left === null || right === null) return null
  const given = left.length + right.length + tail.length
  if (halves.length === 1 ? given !== 8 : given > 7) return null
  return [...left, ...Array<number>(8 - given).fill(0), ...right, ...tail]
}

function embeddedIpv4(hi: number, lo: number): number[] {
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]
}

function ipv6Range(g: readonly number[]): AddressRange {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
  if (zeros(0, 8)) return 'unspecified'
  if (zeros(0, 7) && g[7] === 1) return 'loopback'
  // Forms that carry an IPv4 address the packet ends up at: mapped (::ffff:a.b.c.d), the deprecated compatible
  // (::a.b.c.d), NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48) and 6to4 (2002:AABB:CCDD::/48). Each is judged
  // by its IPv4 address, so ::ffff:127.0.0.1 is loopback and 64:ff9b::169.254.169.254 is link-local.
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return ipv4Range(embeddedIpv4(g[6]!, g[7]!))
  if (g[0] === 0x64 && g[1] === 0xff9b && (zeros(2, 6) || g[2] === 1)) return ipv4Range(embeddedIpv4(g[6]!, g[7]!))
  if (g[0] === 0x2002) return ipv4Range(embeddedIpv4(g[1]!, g[2]!))
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link_local'
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast'
  if ((g[0]! & 0xfe00) === 0xfc00 || (g[0]! & 0xffc0) === 0xfec0) return 'private' // unique local; deprecated site-local
  return 'public'
}

/**
 * The range of an IP address written as the URL parser or the resolver gives it (`127.0.0.1`, `::ffff:7f00:1`,
 * `[::1]`, `fe80::1%eth0`), or null when the text is not an IP address (a host name).
 */
export function addressRange(address: string): AddressRange | null {
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '')
  const v4 = parseIpv4(bare)
  if (v4 !== null) return ipv4Range(v4)
  if (!bare.includes(':')) return null
  const v6 = parseIpv6(bare)
  return v6 === null ? null : ipv6Range(v6)
}

/** RFC 6761: `localhost` and every name under it are the local host, whatever a resolver says. */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '')
  return name === 'localhost' || name.endsWith('.localhost')
}

const RANGE_WORDS: Readonly<Record<Exclude<AddressRange, 'public'>, string>> = {
  private: 'una red privada (TIMBRE_WEBHOOK_DENY_PRIVATE)',
  loopback: 'este mismo equipo (loopback)',
  link_local: 'una dirección link-local (169.254.0.0/16, fe80::/10, entre ellas la de metadatos de la nube)',
  unspecified: 'una dirección no especificada (0.0.0.0, ::)',
  multicast: 'una dirección multicast',
  reserved: 'una dirección reservada',
}

/** The 400 detail of a URL whose host is, or resolves to, a refused address (DESIGN §7). */
export function refusedUrlError(range: Exclude<AddressRange, 'public'>, resolved: boolean): FieldError {
  return {
    field: 'url',
    code: 'NOT_ALLOWED',
    message: `La URL ${resolved ? 'resuelve a' : 'apunta a'} ${RANGE_WORDS[range]}: no se entregan webhooks ahí.`,
  }
}

/**
 * https only, unless TIMBRE_WEBHOOK_ALLOW_HTTP; no credentials or fragments in the URL; a host written as an address
 * (in any spelling the URL parser reads: 2130706433, 0x7f.1, [::ffff:127.0.0.1]) or named localhost must lie in an
 * allowed range. A name's resolved addresses are the service's to check. A non-string is the shape check's.
 */
export function checkWebhookUrl(url: unknown, policy: AddressPolicy): FieldError[] {
  if (typeof url !== 'string') return []
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return [{ field: 'url', code: 'INVALID_FORMAT', message: 'URL inválida.' }]
  }
  const { allowHttp } = policy
  if (parsed.protocol !== 'https:' && !(allowHttp && parsed.protocol === 'http:'))
    return [{ field: 'url', code: 'INVALID_VALUE', message: allowHttp ? 'La URL debe ser http:// o https://.' : 'La URL debe ser https:// (http:// solo con --webhook-allow-http).' }]
  if (parsed.username || parsed.password) return [{ field: 'url', code: 'NOT_ALLOWED', message: 'La URL no puede llevar credenciales.' }]
  if (parsed.hash) return [{ field: 'url', code: 'NOT_ALLOWED', message: 'La URL no puede llevar fragmento (#).' }]
  const range = isLocalhostName(parsed.hostname) ? 'loopback' : addressRange(parsed.hostname)
  if (range !== null && range !== 'public' && !isRangeAllowed(range, policy)) return [refusedUrlError(range, false)]
  return []
}
