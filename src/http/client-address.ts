// Who the client is, for the failed-authentication limit (DESIGN §4): the socket's peer, unless that peer is one of
// TIMBRE_TRUST_PROXY's proxies; then X-Forwarded-For says, read from the right, since each proxy appends the address
// it saw and only what our own proxies appended can be believed.
import { BlockList, isIP } from 'node:net'

/** `peer` is the socket's address; `forwardedFor` the X-Forwarded-For header (several lines arrive joined by commas). */
export type ClientAddressOf = (peer: string, forwardedFor: string | null) => string

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i

/** One spelling per address: an IPv4 client reached over a dual-stack socket (`::ffff:1.2.3.4`) is `1.2.3.4`. */
function canonical(address: string): string {
  const lower = address.toLowerCase()
  return MAPPED_V4.exec(lower)?.[1] ?? lower
}

/**
 * One X-Forwarded-For entry as an address, or null. Proxies that add ports (`1.2.3.4:5678`, `[2001:db8::1]:443`) or
 * brackets are read too; anything else is not an address.
 */
function hopAddress(entry: string): string | null {
  let a = entry.trim()
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a)
  if (bracketed) a = bracketed[1]!
  else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(':'))
  return isIP(a) === 0 ? null : canonical(a)
}

function familyOf(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 4 ? 'ipv4' : 'ipv6'
}

/** `trusted`: TIMBRE_TRUST_PROXY's entries, addresses or CIDR ranges (validated by config.ts). */
export function clientAddressResolver(trusted: readonly string[]): ClientAddressOf {
  if (trusted.length === 0) return (peer) => canonical(peer)
  const proxies = new BlockList()
  for (const entry of trusted) {
    const [address, prefix] = entry.split('/')
    if (prefix === undefined) proxies.addAddress(address!, familyOf(address!))
    else proxies.addSubnet(address!, Number(prefix), familyOf(address!))
  }
  const isProxy = (address: string) => isIP(address) !== 0 && proxies.check(address, familyOf(address))
  return (peer, forwardedFor) => {
    let client = canonical(peer)
    if (!isProxy(client) || forwardedFor === null) return client
    const hops = forwardedFor.split(',')
    for (let i = hops.length - 1; i >= 0; i--) {
      if (hops[i]!.trim() === '') continue
      const hop = hopAddress(hops[i]!)
      // Not an address where a trusted proxy should have written one: stay with the last address a proxy vouched for.
      if (hop === null) return client
      client = hop
      if (!isProxy(hop)) return hop
    }
    // Every hop is one of our proxies: the left-most is as far as the chain goes.
    return client
  }
}
