// The signature floor of issue 17: one RSA-2048 signature (the DTE, by the company's certificate) plus one CAF-key
// signature (RSA-512, e=3: the TED's FRMT) per DTE, on every core at once. The reference is `openssl speed -multi`;
// Bun's own signing (node:crypto on BoringSSL), on one core and on two threads, is printed beside it for context, since
// that is what the server actually calls.
import { createSign, generateKeyPairSync } from 'node:crypto'
import { join } from 'node:path'

export type SigningRates = { rsa2048PerSecond: number; rsa512PerSecond: number; dtePerSecond: number }

/** DTE/s when each DTE needs one signature of each kind: the two costs add up. */
export const dteFloor = (rsa2048PerSecond: number, rsa512PerSecond: number): number => 1 / (1 / rsa2048PerSecond + 1 / rsa512PerSecond)

/**
 * `openssl speed -multi <cores> -seconds <s> rsa2048 rsa512`, parsed. With -multi the sign/s column is already the sum
 * over the forked processes. OpenSSL 3.0 also times verification (another `seconds` per key size), so this takes about
 * 4 × seconds. Returns null when openssl is missing or its output cannot be read.
 */
export async function opensslFloor(seconds: number, cores: number): Promise<(SigningRates & { version: string; command: string }) | null> {
  const command = ['openssl', 'speed', '-multi', String(cores), '-seconds', String(seconds), 'rsa2048', 'rsa512']
  let out: string
  try {
    const proc = Bun.spawn(command, { stdout: 'pipe', stderr: 'pipe' })
    out = (await new Response(proc.stdout).text()) + (await new Response(proc.stderr).text())
    if ((await proc.exited) !== 0) return null
  } catch {
    return null  // not installed
  }
  const rates = parseOpensslSpeed(out)
  if (rates.get(2048) === undefined || rates.get(512) === undefined) return null
  const version = /^version: (\S+)/m.exec(out)?.[1] ?? 'unknown'
  return { rsa2048PerSecond: rates.get(2048)!, rsa512PerSecond: rates.get(512)!, dtePerSecond: dteFloor(rates.get(2048)!, rates.get(512)!), version, command: command.join(' ') }
}

/** RSA key size → sign/s from the summary table; finds the column by its header, which differs between OpenSSL 3.0 and 3.2+. */
export function parseOpensslSpeed(out: string): Map<number, number> {
  const rates = new Map<number, number>()
  const lines = out.split('\n')
  const header = lines.findLast((l) => /\bsign\/s\b/.test(l))
  if (header === undefined) return rates
  const column = header.trim().split(/\s+/).indexOf('sign/s')
  for (const line of lines) {
    const m = /^rsa\s+(\d+)\s+bits\s+(.*)$/.exec(line.trim())
    if (!m) continue
    const value = Number(m[2]!.trim().split(/\s+/)[column])
    if (Number.isFinite(value)) rates.set(Number(m[1]), value)
  }
  return rates
}

/** Sign/s of each key kind on this thread, half the time each, after a warm-up; the payload is SignedInfo-sized. */
export function signingRates(seconds: number): SigningRates {
  const doc = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
  const caf = generateKeyPairSync('rsa', { modulusLength: 512, publicExponent: 3 }).privateKey
  const data = Buffer.alloc(700, 7)
  const perSecond = (key: typeof doc, forMs: number) => {
    for (let i = 0; i < 50; i++) createSign('RSA-SHA1').update(data).sign(key)
    let n = 0
    const start = performance.now()
    while (performance.now() - start < forMs) {
      createSign('RSA-SHA1').update(data).sign(key)
      n++
    }
    return n / ((performance.now() - start) / 1000)
  }
  const rsa2048PerSecond = perSecond(doc, (seconds * 1000) / 2)
  const rsa512PerSecond = perSecond(caf, (seconds * 1000) / 2)
  return { rsa2048PerSecond, rsa512PerSecond, dtePerSecond: dteFloor(rsa2048PerSecond, rsa512PerSecond) }
}

/** The same rates on `threads` Bun Workers at once, summed: what a pool of that size could sign at best. */
export async function threadedSigningRates(seconds: number, threads: number): Promise<SigningRates> {
  const results = await Promise.all(
    Array.from({ length: threads }, () => {
      const worker = new Worker(join(import.meta.dir, 'floor-worker.ts'))
      return new Promise<SigningRates>((resolve, reject) => {
        worker.onmessage = (event: MessageEvent<SigningRates>) => {
          resolve(event.data)
          worker.terminate()
        }
        worker.onerror = (event) => reject(new Error(event.message))
        worker.postMessage({ seconds })
      })
    }),
  )
  const rsa2048PerSecond = results.reduce((s, r) => s + r.rsa2048PerSecond, 0)
  const rsa512PerSecond = results.reduce((s, r) => s + r.rsa512PerSecond, 0)
  return { rsa2048PerSecond, rsa512PerSecond, dtePerSecond: dteFloor(rsa2048PerSecond, rsa512PerSecond) }
}
