/**
 * Random number generators. Every sampler in dpfit takes an `Rng`; the default is
 * cryptographically secure (docs/design.md, "Randomness"). The seeded generator exists for tests and
 * reproducible experiments only, and says so in its `description`, which reports print.
 *
 * Browser-safe: the secure generator uses the Web Crypto API (`globalThis.crypto`), present in
 * Node >= 19 and in every current browser; no Node-only module is imported.
 */
import { DpfitError, InvalidParameterError } from '../errors.js';
import { requireInteger } from '../validate.js';
import { TWO_POW_21, TWO_POW_53, TWO_POW_MINUS_53, uniformBelow } from './bits.js';

/** A source of uniform random bits. */
export interface Rng {
  /** Uniform 32-bit unsigned integer. */
  nextUint32(): number;
  /** Uniform double in [0, 1) with 53 random bits (k * 2^-53, k uniform in [0, 2^53)). */
  nextDouble(): number;
  /** true only for the CSPRNG. */
  readonly secure: boolean;
  /** e.g. "secure (crypto.getRandomValues)" or "seeded xoshiro256** (seed 42) — NOT for privacy". */
  readonly description: string;
}

/** 16384 words = 64 KiB, the most `getRandomValues` fills in one call. */
const BUFFER_WORDS = 16384;

interface RandomValuesSource {
  getRandomValues(array: Uint32Array): unknown;
}

/**
 * Cryptographically secure generator: 32-bit words come from `crypto.getRandomValues`, fetched
 * 64 KiB at a time so that the cost of the call is shared by 16384 words.
 */
class SecureRng implements Rng {
  readonly secure = true;
  readonly description = 'secure (crypto.getRandomValues)';
  private readonly source: RandomValuesSource;
  private readonly buffer = new Uint32Array(BUFFER_WORDS);
  private index = BUFFER_WORDS;

  constructor(source: RandomValuesSource) {
    this.source = source;
  }

  nextUint32(): number {
    if (this.index === BUFFER_WORDS) this.refill();
    return this.buffer[this.index++];
  }

  nextDouble(): number {
    let i = this.index;
    if (i > BUFFER_WORDS - 2) {
      // Refill here rather than through nextUint32: at most one leftover word is dropped, which a
      // secure generator may do, and nextUint32's call profile stays that of its own callers (V8
      // would otherwise see its refill as hot, inline it, and then refuse to inline nextUint32).
      this.refill();
      i = 0;
    }
    this.index = i + 2;
    return (this.buffer[i] * TWO_POW_21 + (this.buffer[i + 1] >>> 11)) * TWO_POW_MINUS_53;
  }

  private refill(): void {
    this.source.getRandomValues(this.buffer);
    this.index = 0;
  }
}

/**
 * A new cryptographically secure generator backed by `crypto.getRandomValues` (Web Crypto).
 * Throws a `DpfitError` with code `NO_SECURE_RANDOM` where no Web Crypto API exists.
 */
export function secureRng(): Rng {
  const source = (globalThis as { crypto?: RandomValuesSource }).crypto;
  if (source === undefined || typeof source.getRandomValues !== 'function') {
    throw new DpfitError('NO_SECURE_RANDOM', 'no secure random source: globalThis.crypto.getRandomValues is unavailable');
  }
  return new SecureRng(source);
}

let sharedSecureRng: Rng | undefined;

/**
 * The default generator: a secure one (shared, created on first use).
 *
 * @example
 * const noise = sampleGaussian(defaultRng(), 0, 1.5);
 */
export function defaultRng(): Rng {
  sharedSecureRng ??= secureRng();
  return sharedSecureRng;
}

const MASK_64 = (1n << 64n) - 1n;

/**
 * SplitMix64 (G. Steele, D. Lea, C. Flood, "Fast Splittable Pseudorandom Number Generators",
 * OOPSLA 2014), used only to expand a seed into xoshiro's state as Blackman and Vigna recommend.
 * BigInt is fine here: it runs four times per seeded generator.
 */
function splitMix64(state: bigint): { state: bigint; output: bigint } {
  const next = (state + 0x9e3779b97f4a7c15n) & MASK_64;
  let z = next;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK_64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK_64;
  return { state: next, output: z ^ (z >> 31n) };
}

/**
 * xoshiro256** (D. Blackman, S. Vigna, "Scrambled Linear Pseudorandom Number Generators",
 * ACM TOMS 47(4), 2021): 256 bits of state, period 2^256 - 1, output `rotl(s1 * 5, 7) * 9`.
 * The 64-bit words are held as (high, low) pairs of 32-bit integers so that no BigInt is needed
 * per step. Each step yields 64 bits, returned as two words: the high word first.
 */
class Xoshiro256StarStar implements Rng {
  readonly secure = false;
  readonly description: string;
  /** State words s0..s3 as (high, low) 32-bit halves: [s0h, s0l, s1h, s1l, s2h, s2l, s3h, s3l]. */
  private readonly s = new Int32Array(8);
  /** Output of the last step as (high, low); the low word is pending when `hasPending`. */
  private readonly out = new Uint32Array(2);
  private hasPending = false;

  constructor(words: readonly bigint[], description: string) {
    for (let i = 0; i < 4; i++) {
      this.s[2 * i] = Number((words[i] >> 32n) & 0xffffffffn) | 0;
      this.s[2 * i + 1] = Number(words[i] & 0xffffffffn) | 0;
    }
    this.description = description;
  }

  /** One xoshiro256** step; leaves the 64-bit output in `out`. */
  private step(): void {
    const s = this.s;
    const s0h = s[0];
    const s0l = s[1];
    const s1h = s[2];
    const s1l = s[3];
    // r = s1 * 5 (mod 2^64): the low word's product is exact in a double, its carry goes up.
    let lo = (s1l >>> 0) * 5;
    let rl = lo >>> 0;
    let rh = (Math.imul(s1h, 5) + (lo - rl) / 4294967296) | 0;
    // r = rotl(r, 7)
    const th = (rh << 7) | (rl >>> 25);
    const tl = (rl << 7) | (rh >>> 25);
    // r = r * 9 (mod 2^64)
    lo = (tl >>> 0) * 9;
    rl = lo >>> 0;
    rh = Math.imul(th, 9) + (lo - rl) / 4294967296;
    this.out[0] = rh; // Uint32Array stores reduce modulo 2^32
    this.out[1] = rl;

    // t = s1 << 17
    const uh = (s1h << 17) | (s1l >>> 15);
    const ul = s1l << 17;
    // s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 45)
    const s2h = s[4] ^ s0h;
    const s2l = s[5] ^ s0l;
    const s3h = s[6] ^ s1h;
    const s3l = s[7] ^ s1l;
    s[2] = s1h ^ s2h;
    s[3] = s1l ^ s2l;
    s[0] = s0h ^ s3h;
    s[1] = s0l ^ s3l;
    s[4] = s2h ^ uh;
    s[5] = s2l ^ ul;
    // rotl by 45 = swap the halves (rotl 32), then rotl by 13.
    s[6] = (s3l << 13) | (s3h >>> 19);
    s[7] = (s3h << 13) | (s3l >>> 19);
  }

  nextUint32(): number {
    if (this.hasPending) {
      this.hasPending = false;
      return this.out[1];
    }
    this.step();
    this.hasPending = true;
    return this.out[0];
  }

  nextDouble(): number {
    if (!this.hasPending) {
      // The top 53 bits of one 64-bit output, the conversion Blackman and Vigna recommend.
      this.step();
      return (this.out[0] * TWO_POW_21 + (this.out[1] >>> 11)) * TWO_POW_MINUS_53;
    }
    const hi = this.nextUint32();
    return (hi * TWO_POW_21 + (this.nextUint32() >>> 11)) * TWO_POW_MINUS_53;
  }
}

/**
 * A seeded, reproducible generator: xoshiro256** whose state is four SplitMix64 outputs of the
 * seed (taken modulo 2^64, so `42` and `42n` give the same stream). The same seed always gives
 * the identical stream of words and doubles.
 *
 * FOR TESTS AND REPRODUCIBLE EXPERIMENTS ONLY, NOT FOR PRIVACY: its output is predictable from
 * the seed (and from a few outputs), so noise drawn from it protects nothing. Its `secure` is
 * false and its `description` says so; reports that use it must print that description.
 *
 * @example
 * const rng = seededRng(42); // tests and reproducible experiments only
 * const x = rng.nextDouble(); // the same value on every run
 */
export function seededRng(seed: number | bigint): Rng {
  if (typeof seed === 'number') requireInteger('seed', seed, Number.MIN_SAFE_INTEGER);
  else if (typeof seed !== 'bigint') throw new InvalidParameterError('seed', seed, 'an integer (number or bigint)');
  let state = BigInt.asUintN(64, BigInt(seed));
  const words: bigint[] = [];
  for (let i = 0; i < 4; i++) {
    const next = splitMix64(state);
    state = next.state;
    words.push(next.output);
  }
  return new Xoshiro256StarStar(words, `seeded xoshiro256** (seed ${String(seed)}) — NOT for privacy`);
}

/**
 * A uniform integer in [0, n) for an integer 1 <= n <= 2^53, without modulo bias (rejection
 * sampling: Lemire 2019 for small n, otherwise rejection of the incomplete last block).
 */
export function uniformInt(rng: Rng, n: number): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > TWO_POW_53) {
    throw new InvalidParameterError('n', n, 'an integer in [1, 2^53]');
  }
  return uniformBelow(rng, n);
}
