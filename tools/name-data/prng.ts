// Seeded randomness for the name data and training: mulberry32 plus helpers and a stable string hash.

/** A function returning uniform numbers in [0, 1). */
export type Rng = () => number

/** mulberry32: small, fast, good enough for shuffles and synthetic data. */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Integer in [0, n). */
export function int(rng: Rng, n: number): number {
  return Math.floor(rng() * n)
}

/** Uniform pick from a non-empty array. */
export function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[Math.floor(rng() * xs.length)] as T
}

/** Fisher–Yates shuffle in place. */
export function shuffle<T>(rng: Rng, xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1))
    const t = xs[i] as T
    xs[i] = xs[j] as T
    xs[j] = t
  }
  return xs
}

/** FNV-1a 32-bit hash of a string mixed with a seed, mapped to [0, 1). */
export function hashUnit(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b) >>> 0
  h ^= h >>> 13
  return (h >>> 0) / 4294967296
}

/** Runs `fn` with `Math.random` replaced by a seeded generator (brain.js draws its initial weights from it). */
export function withSeededMathRandom<T>(seed: number, fn: () => T): T {
  const original = Math.random
  Math.random = mulberry32(seed)
  try {
    return fn()
  } finally {
    Math.random = original
  }
}
