/**
 * Internal bit-level helpers shared by the samplers (not part of the public API: the public
 * entry points validate their parameters, these do not, so that hot loops pay nothing).
 *
 * They draw 32-bit words and nothing else, so they take a `WordSource`, which every `Rng` of
 * `rng.ts` is; `rng.ts` builds its generators' doubles and `uniformInt` on these helpers.
 */

/** A source of uniform 32-bit words: what the helpers below draw from (every `Rng` is one). */
export interface WordSource {
  /** Uniform 32-bit unsigned integer. */
  nextUint32(): number;
}

/** 2^32. */
export const TWO_POW_32 = 4294967296;
/** 2^21: shifts a 32-bit word left so that 21 more bits fit below it in a 53-bit integer. */
export const TWO_POW_21 = 2097152;
/** 2^53: one past the largest integer below which every integer is a double. */
export const TWO_POW_53 = 9007199254740992;
/** 2^-53: the spacing of the doubles returned by `Rng.nextDouble`. */
export const TWO_POW_MINUS_53 = 1 / TWO_POW_53;

/**
 * A uniform integer in [0, 2^53), built from two 32-bit words: all 32 bits of the first and the
 * top 21 bits of the second. `Rng.nextDouble()` of dpfit's generators equals `uint53(rng) * 2^-53`.
 */
export function uint53(rng: WordSource): number {
  const hi = rng.nextUint32();
  const lo = rng.nextUint32();
  return hi * TWO_POW_21 + (lo >>> 11);
}

/**
 * A uniform integer in [0, n) for an integer 1 <= n <= 2^53, without modulo bias. Unchecked.
 *
 * - n <= 2^21: Lemire's multiply-and-reject method (D. Lemire, "Fast Random Integer Generation in
 *   an Interval", ACM TOMACS 29(1), 2019, Algorithm 5): x * n < 2^53 is exact in a double, its
 *   high word is the result and its low word decides the (rare) rejection.
 * - n <= 2^32: classic rejection of the incomplete last block of 32-bit words, then x mod n.
 * - n <= 2^53: the same on 53-bit integers.
 */
export function uniformBelow(rng: WordSource, n: number): number {
  // Kept small so that V8 inlines it into the samplers' loops; the rare cases live below.
  if (n <= TWO_POW_21) {
    const m = rng.nextUint32() * n;
    const low = m >>> 0; // m mod 2^32 (ToUint32 is exact on integers below 2^53)
    if (low >= n) return (m - low) / TWO_POW_32;
    return lemireRetry(rng, n, m, low);
  }
  return uniformBelowLarge(rng, n);
}

/** Lemire's rejection step: the low word is below n; reject it if below 2^32 mod n. */
function lemireRetry(rng: WordSource, n: number, m: number, low: number): number {
  // Rejecting low words below 2^32 mod n leaves exactly floor(2^32 / n) words per result.
  const threshold = TWO_POW_32 % n;
  while (low < threshold) {
    m = rng.nextUint32() * n;
    low = m >>> 0;
  }
  return (m - low) / TWO_POW_32;
}

/**
 * n > 2^21: reject the incomplete last block of 32-bit (n <= 2^32) or 53-bit words, then reduce.
 * A word below 2^32 - n is never in the incomplete block, so the block's start (which costs a
 * division) is computed only for the few words above it.
 */
function uniformBelowLarge(rng: WordSource, n: number): number {
  if (n <= TWO_POW_32) {
    for (;;) {
      const x = rng.nextUint32();
      // x / n <= 2^11, so the rounded quotient is never within 2^-43 of the next integer while the
      // true one is at least 1/n >= 2^-32 below it: the floor is exact, and so is x - q n.
      const q = Math.floor(x / n);
      if (x < TWO_POW_32 - n || x < TWO_POW_32 - (TWO_POW_32 % n)) return x - q * n;
    }
  }
  const limit = TWO_POW_53 - (TWO_POW_53 % n);
  let x = uint53(rng);
  while (x >= limit) x = uint53(rng);
  return x % n;
}

/** One fair random bit as a boolean. */
export function randomBit(rng: WordSource): boolean {
  return (rng.nextUint32() & 1) === 1;
}
