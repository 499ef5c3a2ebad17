// Token buckets (DESIGN §12): per credential, `rate` per second with a burst of twice that; and a fixed window
// for failed authentications per client address. In memory: limits are per process, like the process itself.

export interface Verdict {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Seconds until the bucket is full again (X-RateLimit-Reset). */
  readonly resetSeconds: number
  /** Seconds until one request fits (Retry-After), when refused. */
  readonly retryAfterSeconds: number
}

interface Bucket {
  tokens: number
  updatedMs: number
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>()
  private readonly capacity: number

  constructor(private readonly ratePerSecond: number) {
    this.capacity = ratePerSecond * 2
  }

  get isEnabled(): boolean {
    return this.ratePerSecond > 0
  }

  take(key: string, nowMs: number): Verdict {
    const b = this.buckets.get(key) ?? { tokens: this.capacity, updatedMs: nowMs }
    b.tokens = Math.min(this.capacity, b.tokens + ((nowMs - b.updatedMs) / 1000) * this.ratePerSecond)
    b.updatedMs = nowMs
    const allowed = b.tokens >= 1
    if (allowed) b.tokens -= 1
    this.buckets.set(key, b)
    if (this.buckets.size > 100_000) this.evictFull(nowMs)
    return {
      allowed,
      limit: this.capacity,
      remaining: Math.floor(b.tokens),
      resetSeconds: Math.ceil((this.capacity - b.tokens) / this.ratePerSecond),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / this.ratePerSecond)),
    }
  }

  private evictFull(nowMs: number): void {
    for (const [key, b] of this.buckets)
      if (b.tokens + ((nowMs - b.updatedMs) / 1000) * this.ratePerSecond >= this.capacity) this.buckets.delete(key)
  }
}

/** Failed authentications: at most `max` per window per client address (DESIGN §12: 20 per minute). */
export class FailureWindow {
  private readonly windows = new Map<string, { startMs: number; count: number }>()

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
  ) {}

  /** Seconds to wait when the address already used its failures, else 0. */
  blockedFor(address: string, nowMs: number): number {
    const w = this.windows.get(address)
    if (!w || nowMs - w.startMs >= this.windowMs || w.count < this.max) return 0
    return Math.ceil((w.startMs + this.windowMs - nowMs) / 1000)
  }

  record(address: string, nowMs: number): void {
    const w = this.windows.get(address)
    if (!w || nowMs - w.startMs >= this.windowMs) this.windows.set(address, { startMs: nowMs, count: 1 })
    else w.count += 1
    if (this.windows.size > 100_000) for (const [a, v] of this.windows) if (nowMs - v.startMs >= this.windowMs) this.windows.delete(a)
  }
}
