// SII tokens held per (certificate, channel, origin) until the SII itself says one is invalid: never on a guessed
// lifetime (DESIGN §6; the manual states none, docs/sii-protocol.md §6.3). Concurrent callers share one request in flight; a
// failed request is not kept, so the next call asks again.

export interface TokenFailure {
  readonly kind: 'failed'
  /** English, for logs and `retry` reasons; never the seed signature or a token. */
  readonly reason: string
  /** getSeed/getToken `ESTADO` when the SII answered one (docs/sii-protocol.md §6.3). */
  readonly estado?: string
  readonly glosa?: string
}

export type TokenResult = { readonly kind: 'token'; readonly token: string } | TokenFailure

/** A handle on the cache slot a token came from, so only that token is dropped when the SII refuses it. */
export interface TokenLease {
  readonly promise: Promise<TokenResult>
}

export class TokenCache {
  private readonly entries = new Map<string, TokenLease>()

  /** The cached token, or the one being fetched, or a new fetch shared with every caller until it settles. */
  async acquire(key: string, fetchToken: () => Promise<TokenResult>): Promise<{ readonly result: TokenResult; readonly lease: TokenLease }> {
    let lease = this.entries.get(key)
    if (lease === undefined) {
      const promise = fetchToken().catch((err: unknown): TokenResult => ({
        kind: 'failed',
        reason: `token request failed: ${err instanceof Error ? err.message : String(err)}`,
      }))
      const created: TokenLease = { promise }
      this.entries.set(key, created)
      void promise.then((r) => {
        if (r.kind === 'failed') this.release(key, created)
      })
      lease = created
    }
    return { result: await lease.promise, lease }
  }

  /**
   * Forgets the token of `lease`, unless the slot already holds another one: of N callers refused with the same token,
   * the first drops it and the rest reuse the fresh one instead of each fetching its own.
   */
  release(key: string, lease: TokenLease): void {
    if (this.entries.get(key) === lease) this.entries.delete(key)
  }
}
