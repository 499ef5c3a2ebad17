// Where one delivery connects (DESIGN §7 "Where deliveries may go"): the URL's host is resolved once, every address it
// resolves to is checked, and the attempt connects to the checked address itself. A second lookup by the HTTP client
// could answer differently (DNS rebinding: public at the check, 169.254.169.254 at the connection), so the client is
// never given the name to resolve (docs/stack-notes.md "Webhook deliveries: a pre-resolved address with TLS").
import { lookup as dnsLookup } from 'node:dns/promises'
import { addressRange, isLocalhostName, isRangeAllowed, type AddressPolicy, type AddressRange } from '../domain/webhooks'

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** A resolver: the system's (getaddrinfo, so /etc/hosts counts) or, in tests, one that answers what they need. */
export type Lookup = (hostname: string) => Promise<readonly ResolvedAddress[]>

export const systemLookup: Lookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))

export type Destination =
  | {
      readonly ok: true
      /** The address to connect to, checked. */
      readonly address: string
      readonly family: 4 | 6
      /** The name for the Host header, SNI and the certificate check; null when the URL's host is an address. */
      readonly hostname: string | null
    }
  /** `dns`: the name did not resolve; `timeout`: not before the signal; `refused`: an address outside the policy. */
  | { readonly ok: false; readonly reason: 'dns' | 'timeout' }
  | { readonly ok: false; readonly reason: 'refused'; readonly range: Exclude<AddressRange, 'public'> }

class LookupTimeout extends Error {}

function withDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new LookupTimeout())
  // getaddrinfo cannot be cancelled: the attempt stops waiting for it, the lookup ends on its own.
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new LookupTimeout())
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/**
 * Resolves and checks the host of `url`. Every address must be allowed (a name answering one public and one loopback
 * address is refused); the first IPv4 address is preferred, as most receivers' networks route IPv4.
 */
export async function resolveDestination(url: URL, policy: AddressPolicy, lookup: Lookup, signal: AbortSignal): Promise<Destination> {
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1')
  const literalRange = addressRange(literal)
  if (literalRange !== null) {
    if (literalRange !== 'public' && !isRangeAllowed(literalRange, policy)) return { ok: false, reason: 'refused', range: literalRange }
    return { ok: true, address: literal, family: literal.includes(':') ? 6 : 4, hostname: null }
  }
  if (isLocalhostName(url.hostname) && !isRangeAllowed('loopback', policy)) return { ok: false, reason: 'refused', range: 'loopback' }
  let addresses: readonly ResolvedAddress[]
  try {
    addresses = await withDeadline(lookup(url.hostname), signal)
  } catch (err) {
    return { ok: false, reason: err instanceof LookupTimeout ? 'timeout' : 'dns' }
  }
  if (addresses.length === 0) return { ok: false, reason: 'dns' }
  for (const a of addresses) {
    // An answer that is not an address at all is treated as the worst case, never passed on to be resolved again.
    const range = addressRange(a.address) ?? 'unspecified'
    if (range !== 'public' && !isRangeAllowed(range, policy)) return { ok: false, reason: 'refused', range }
  }
  const chosen = addresses.find((a) => a.family === 4) ?? addresses[0]!
  return { ok: true, address: chosen.address.replace(/%.*$/, ''), family: chosen.family, hostname: url.hostname }
}
