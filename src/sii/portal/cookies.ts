// The portal session's cookies: what the login's Set-Cookie headers leave, sent back as one Cookie header on every
// later request. Pure. One jar for the whole session, whatever the host: the SII sets its session cookies for the
// whole of sii.cl (the login on herculesr serves www4 and zeusr), and an origin target is one host.

export class CookieJar {
  private readonly values = new Map<string, string>()

  /**
   * Takes a response's Set-Cookie lines (`headers.getSetCookie()`). A cookie set with `Max-Age=0` or an `Expires`
   * before `nowMs` is the server deleting it, as a browser reads it.
   */
  store(setCookies: readonly string[], nowMs: number): void {
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';')
      const eq = pair.indexOf('=')
      if (eq <= 0) continue
      const name = pair.slice(0, eq).trim()
      const value = pair.slice(eq + 1).trim()
      if (isExpired(attributes, nowMs)) this.values.delete(name)
      else this.values.set(name, value)
    }
  }

  get(name: string): string | undefined {
    const value = this.values.get(name)
    return value === '' ? undefined : value
  }

  /**
   * `text` with every session value blanked: an SII page or message that echoes a cookie must not carry it into the
   * accountant's message, the database or a webhook. Short values (a flag, a language) are not secrets and stay.
   */
  redact(text: string): string {
    let out = text
    for (const value of this.values.values()) if (value.length >= 6) out = out.replaceAll(value, '[sesión]')
    return out
  }

  /** The `Cookie` request header, or undefined before any cookie. */
  header(): string | undefined {
    if (this.values.size === 0) return undefined
    return [...this.values].map(([name, value]) => `${name}=${value}`).join('; ')
  }
}

function isExpired(attributes: readonly string[], nowMs: number): boolean {
  for (const attribute of attributes) {
    const eq = attribute.indexOf('=')
    const key = (eq < 0 ? attribute : attribute.slice(0, eq)).trim().toLowerCase()
    const value = eq < 0 ? '' : attribute.slice(eq + 1).trim()
    if (key === 'max-age' && /^-?\d+$/.test(value)) return Number(value) <= 0
    if (key === 'expires') {
      const at = Date.parse(value)
      if (!Number.isNaN(at) && at <= nowMs) return true
    }
  }
  return false
}
