// mulberry32: a small seedable generator, for the harnesses and tests that must draw the same sequence again from a
// printed seed (kill moments, receptors, request mixes, fuzzer streams). Not for anything secret.

/** A generator of floats in [0, 1), the same sequence for the same seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
