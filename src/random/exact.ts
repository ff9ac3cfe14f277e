/**
 * Exact samplers of C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential
 * Privacy" (NeurIPS 2020), Section 5: Bernoulli(exp(-gamma)) (Algorithm 1), the discrete Laplace
 * (Algorithm 2) and the discrete Gaussian (Algorithm 3).
 *
 * "Exact" means the output distribution is exactly the stated one given ideal uniform bits: only
 * integer randomness (uniform words and `uniformBelow`) and exact rational arithmetic decide, with
 * BigInt wherever numerators or denominators may exceed 2^53. The one place where floating point
 * is used, the discrete Gaussian's acceptance step above the plain-number range, computes an
 * interval proven to contain the exact rational and decides only when the random bits fall
 * outside it, so each decision (and each word drawn) is the one BigInt arithmetic would make; see
 * `acceptFast`. This is what protects against the floating-point attacks on textbook Laplace and
 * Gaussian noise (Mironov, CCS 2012).
 *
 * Parameters given as doubles (`scale`, `sigma`) are converted exactly: every finite double is
 * m * 2^e with integers m, e (`doubleToRational`).
 */
import { InvalidParameterError, NumericalError } from '../errors.js';
import { requireFinite, requirePositive } from '../validate.js';
import { randomBit, TWO_POW_32, uint53, uniformBelow } from './bits.js';
import type { Rng } from './rng.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MAX_SAFE_BIG = BigInt(Number.MAX_SAFE_INTEGER);
const MASK_53 = (1n << 53n) - 1n;
/**
 * Largest `scale` / `sigma` accepted. Below it a sample beyond 2^53 needs a deviation of more than
 * 128 scales (probability < e^-128), so the safe-integer results are never a practical limit.
 */
const MAX_SCALE = 2 ** 46;

// ---------------------------------------------------------------------------------------------
// Doubles as exact rationals
// ---------------------------------------------------------------------------------------------

const float64View = new DataView(new ArrayBuffer(8));

/** Number of trailing zero bits of a nonzero 32-bit word. */
function trailingZeros32(w: number): number {
  return 31 - Math.clz32(w & -w);
}

/**
 * x = mantissa * 2^exponent exactly, with an odd integer mantissa (|mantissa| < 2^53), or
 * mantissa = 0 for x = 0. Reads the IEEE 754 fields: a normal double is (2^52 + f) 2^(E - 1075),
 * a subnormal f 2^-1074.
 */
function decomposeDouble(x: number): { mantissa: number; exponent: number } {
  if (x === 0) return { mantissa: 0, exponent: 0 };
  float64View.setFloat64(0, Math.abs(x));
  const hi = float64View.getUint32(0);
  let lo = float64View.getUint32(4);
  const biased = hi >>> 20;
  let top = hi & 0xfffff;
  let exponent = biased === 0 ? -1074 : biased - 1075;
  if (biased !== 0) top += 0x100000;
  // Strip trailing zero bits so that the mantissa is odd (the fraction is then reduced).
  if (lo === 0) {
    lo = top;
    top = 0;
    exponent += 32;
  }
  const tz = trailingZeros32(lo);
  const mantissa = (top * TWO_POW_32 + lo) / 2 ** tz;
  exponent += tz;
  return { mantissa: x < 0 ? -mantissa : mantissa, exponent };
}

/**
 * The exact value of a finite double as a reduced fraction num/den (den > 0, a power of two):
 * every finite double is m * 2^e. Example: `doubleToRational(0.1)` is
 * `{num: 3602879701896397n, den: 36028797018963968n}` (= 0.1000000000000000055511151231257827...).
 */
export function doubleToRational(x: number): { num: bigint; den: bigint } {
  requireFinite('x', x);
  const { mantissa, exponent } = decomposeDouble(x);
  if (mantissa === 0) return { num: 0n, den: 1n };
  const m = BigInt(mantissa);
  return exponent >= 0 ? { num: m << BigInt(exponent), den: 1n } : { num: m, den: 1n << BigInt(-exponent) };
}

// ---------------------------------------------------------------------------------------------
// Bernoulli(exp(-gamma)), CKS 2020 Algorithm 1
// ---------------------------------------------------------------------------------------------
// For gamma in [0, 1]: K <- 1; while Bernoulli(gamma / K) succeeds, K <- K + 1; return [K odd].
// P(K > k) = gamma^k / k!, so P(K odd) = sum_k (-gamma)^k / k! = exp(-gamma).
// For gamma > 1: exp(-gamma) = exp(-1)^floor(gamma) * exp(-(gamma - floor(gamma))), a conjunction
// of independent Bernoullis, stopped at the first failure.
// We draw Bernoulli(gamma / K) as Bernoulli(1/K) AND Bernoulli(gamma) (independent, so the
// probability is the product), which keeps every comparison within the denominator of gamma.

/** 9! = 2 * 3 * ... * 9: the number of joint outcomes of Bernoulli(1/k) for k = 2..9 (see below). */
const FACTORIAL_9 = 362880;
/**
 * The number of w in [1, 9!) for which Algorithm 1 at gamma = 1 stops at an odd K:
 * sum over odd k in {3, 5, 7, 9} of (k - 1) 9!/k! = 120960 + 12096 + 432 + 8.
 */
const EXP_MINUS_ONE_ODD = 133496;

/**
 * Bernoulli(exp(-1)): Algorithm 1 with gamma = 1. Its first trial, Bernoulli(1), always succeeds;
 * then K stops at the first k >= 2 whose Bernoulli(1/k) fails, and the answer is [K odd].
 *
 * The trials k = 2..9 are drawn at once: w uniform in [0, 9!) is, in the mixed radix
 * w = d2 + 2! d3 + 3! d4 + ... + 8! d9 (d_k in [0, k)), eight independent uniform digits, and
 * Bernoulli(1/k) "succeeds" when d_k = 0. So K > 9 exactly when w = 0 (then the loop continues at
 * k = 10, as the plain algorithm would), and K = k <= 9 for exactly (k - 1) 9!/k! values of w.
 * Only the parity of K matters, so any relabelling of the w != 0 with the right counts gives the
 * same output distribution: w in [1, EXP_MINUS_ONE_ODD] means K odd. P(true) is then exactly
 * sum over odd k of P(K = k) = exp(-1), from one 32-bit word (Lemire's method, 9! < 2^21) except
 * for its rare rejections (probability < 9!/2^32 = 8.4e-5) and the continuation (1/9!).
 */
function bernoulliExpMinusOne(rng: Rng): boolean {
  const w = uniformBelow(rng, FACTORIAL_9);
  if (w !== 0) return w <= EXP_MINUS_ONE_ODD;
  return bernoulliExpMinusOneTail(rng);
}

/** Algorithm 1 at gamma = 1 given K > 9 (probability 1/9!): continue the loop at k = 10. */
function bernoulliExpMinusOneTail(rng: Rng): boolean {
  let k = 10;
  while (uniformBelow(rng, k) === 0) k++;
  return (k & 1) === 1;
}

/** Bernoulli(exp(-q)) for an integer q >= 0: q independent Bernoulli(exp(-1)), all must succeed. */
function bernoulliExpMinusInteger(rng: Rng, q: number | bigint): boolean {
  if (typeof q === 'bigint') {
    if (q <= MAX_SAFE_BIG) q = Number(q);
    else {
      for (let i = 0n; i < q; i++) if (!bernoulliExpMinusOne(rng)) return false;
      return true;
    }
  }
  for (let i = 0; i < q; i++) if (!bernoulliExpMinusOne(rng)) return false;
  return true;
}

/** Bernoulli(exp(-r/d)) for integers 0 <= r < d <= 2^53: Bernoulli(r/d) is uniformBelow(d) < r. */
function bernoulliExpFraction(rng: Rng, r: number, d: number): boolean {
  if (r === 0) return true;
  let k = 1;
  for (;;) {
    if (k > 1 && uniformBelow(rng, k) !== 0) break;
    if (uniformBelow(rng, d) >= r) break;
    k++;
  }
  return (k & 1) === 1;
}

/**
 * Bernoulli(r/d) for BigInts 0 <= r < d, comparing a uniform U in [0, 1) with r/d 53 bits at a
 * time. With r 2^53 = h d + rest (0 <= rest < d) and U = (x + V) 2^-53 (x the next 53 bits, V the
 * rest of U): x < h means U < r/d, x > h means U >= (h + 1) 2^-53 > r/d, and x = h leaves the
 * comparison of V with rest/d, i.e. the same problem with r <- rest.
 */
function bernoulliBigFraction(rng: Rng, r: bigint, d: bigint): boolean {
  for (;;) {
    if (r === 0n) return false;
    const scaled = r << 53n;
    const h = scaled / d;
    const x = uint53(rng);
    const hNumber = Number(h); // h < 2^53, exact
    if (x !== hNumber) return x < hNumber;
    r = scaled - h * d;
  }
}

/**
 * Bernoulli(exp(-f)) for the fractional part f in [0, 1) of a BigInt quotient num/d, given
 * head = floor(num 2^53 / d) and scaled = num 2^53: then h = head mod 2^53 is the first 53 bits of
 * f, and on a tie the rest of f is (scaled - head d) / d. Each Bernoulli(f) trial of Algorithm 1 is
 * one integer comparison of 53 fresh bits with h, except with probability 2^-53 (a tie), which
 * `bernoulliBigFraction` resolves exactly.
 */
function bernoulliExpBigFraction(rng: Rng, scaled: bigint, head: bigint, d: bigint): boolean {
  const h = Number(head & MASK_53);
  let k = 1;
  for (;;) {
    if (k > 1 && uniformBelow(rng, k) !== 0) break;
    const x = uint53(rng);
    if (x === h ? !bernoulliBigFraction(rng, scaled - head * d, d) : x > h) break;
    k++;
  }
  return (k & 1) === 1;
}

/**
 * Bernoulli(exp(-num/den)) exactly, for BigInts num >= 0, den > 0 (CKS 2020, Algorithm 1 with
 * the integer part split off). Expected cost is O(1) for every gamma: the integer part stops at
 * its first failure.
 *
 * @example
 * sampleBernoulliExpRational(defaultRng(), 5n, 2n); // true with probability exp(-5/2)
 */
export function sampleBernoulliExpRational(rng: Rng, num: bigint, den: bigint): boolean {
  if (typeof num !== 'bigint' || num < 0n) throw new InvalidParameterError('num', num, 'a bigint >= 0');
  if (typeof den !== 'bigint' || den <= 0n) throw new InvalidParameterError('den', den, 'a bigint > 0');
  if (den <= MAX_SAFE_BIG) {
    const q = num / den;
    if (!bernoulliExpMinusInteger(rng, q)) return false;
    return bernoulliExpFraction(rng, Number(num - q * den), Number(den));
  }
  // One division gives both the integer part (head >> 53) and the first 53 bits of the fraction.
  const scaled = num << 53n;
  const head = scaled / den;
  return bernoulliExpMinusInteger(rng, head >> 53n) && bernoulliExpBigFraction(rng, scaled, head, den);
}

// ---------------------------------------------------------------------------------------------
// Discrete Laplace, CKS 2020 Algorithm 2
// ---------------------------------------------------------------------------------------------

/** Up to 2^52 a uniform draw below 2t gives U and the sign at once; beyond 2^31, 2t > 2^32. */
const TWO_POW_31 = 2 ** 31;
const TWO_POW_52 = 2 ** 52;
/** 2^53, as in bits.ts (kept local so that the hot loops read a module constant). */
const TWO_POW_53 = 2 ** 53;

/**
 * Discrete Laplace with scale t / 2^shift: P(y) proportional to exp(-|y| 2^shift / t), for an
 * integer 1 <= t < 2^53 and shift >= 0 (CKS Algorithm 2 with s = 2^shift).
 *   U uniform in {0..t-1}, kept with probability exp(-U/t); V ~ Geometric(1 - e^-1) by counting
 *   Bernoulli(exp(-1)) successes. Then X = U + t V has P(X = x) proportional to exp(-x/t), and
 *   Y = floor(X / s) has P(Y = y) proportional to exp(-y s / t). A random sign is attached and the
 *   pair (negative, 0) rejected so that 0 is not counted twice.
 * The sign is drawn with U, from one uniform r in [0, 2t) (U = r mod t and [r >= t] are independent
 * and uniform); a rejected U takes its sign with it, which leaves the accepted sign independent of
 * (U, V) and fair, since no decision depends on it but the final (negative, 0) rejection.
 */
function discreteLaplace(rng: Rng, t: number, shift: number): number {
  for (;;) {
    let u: number;
    let negative: boolean;
    if (t <= TWO_POW_31) {
      u = uniformBelow(rng, 2 * t);
      negative = u >= t;
      if (negative) u -= t;
    } else if (t <= TWO_POW_52) {
      if (t !== largeLimits.t) setLargeLimits(t);
      u = uniformBelowWithLimit(rng, 2 * t, largeLimits.twoT);
      negative = u >= t;
      if (negative) u -= t;
    } else {
      u = uniformBelow(rng, t);
      negative = randomBit(rng);
    }
    if (u !== 0 && !bernoulliExpRatio(rng, u, t)) continue;
    let v = 0;
    while (bernoulliExpMinusOne(rng)) v++;
    const y = floorUPlusTVOverPow2(u, t, v, shift);
    if (negative && y === 0) continue;
    return negative ? -y : y;
  }
}

/**
 * Bernoulli(exp(-u/t)) for integers 0 < u < t < 2^53: Algorithm 1 with gamma = u/t. Its trial k,
 * Bernoulli(gamma / k) = Bernoulli(u / (k t)), is one draw uniformBelow(k t) < u while k t < 2^53
 * (the product is then exact: had the true product been >= 2^53, the rounded one would be too);
 * beyond that (k > 2^53 / t, only for t > 2^46) it is Bernoulli(1/k) AND Bernoulli(u/t).
 */
function bernoulliExpRatio(rng: Rng, u: number, t: number): boolean {
  // Trial 1, Bernoulli(u/t), peeled off: it decides alone with probability 1 - u/t.
  if (t <= TWO_POW_32) {
    if (uniformBelow(rng, t) >= u) return true;
  } else {
    if (t !== largeLimits.t) setLargeLimits(t);
    if (uniformBelowWithLimit(rng, t, largeLimits.oneT) >= u) return true;
  }
  let k = 2;
  for (;;) {
    const kt = k * t;
    if (kt < TWO_POW_53) {
      if (uniformBelow(rng, kt) >= u) break;
    } else if (uniformBelow(rng, k) !== 0 || uniformBelow(rng, t) >= u) {
      break;
    }
    k++;
  }
  return (k & 1) === 1;
}

/**
 * Rejection limits 2^53 - (2^53 mod n) of `uniformBelow(n)` for n = t and n = 2t, kept for the last
 * t > 2^31 seen (bits.ts recomputes them, a floating-point remainder, on every call). `twoT` is
 * used only while 2t <= 2^53, `oneT` only for t > 2^32.
 */
const largeLimits = { t: 0, oneT: 0, twoT: 0 };

function setLargeLimits(t: number): void {
  largeLimits.t = t;
  largeLimits.oneT = TWO_POW_53 - (TWO_POW_53 % t);
  largeLimits.twoT = TWO_POW_53 - (TWO_POW_53 % (2 * t));
}

/**
 * `uniformBelow(rng, n)` for 2^32 < n <= 2^53 given limit = 2^53 - (2^53 mod n): the same words and
 * the same result as bits.ts (53-bit words at or above the limit, the incomplete last block of n
 * values, are rejected; what remains reduced mod n is uniform).
 */
function uniformBelowWithLimit(rng: Rng, n: number, limit: number): number {
  let x = uint53(rng);
  while (x >= limit) x = uint53(rng);
  return x % n;
}

/** floor((u + t v) / 2^shift) exactly, BigInt only when u + t v exceeds 2^53. */
function floorUPlusTVOverPow2(u: number, t: number, v: number, shift: number): number {
  const tv = t * v; // exact whenever it is <= MAX_SAFE - u (otherwise it rounds to >= 2^53)
  if (tv <= MAX_SAFE - u) {
    const x = u + tv;
    if (shift === 0) return x;
    return shift >= 53 ? 0 : Math.floor(x / 2 ** shift);
  }
  const y = (BigInt(u) + BigInt(t) * BigInt(v)) >> BigInt(shift);
  if (y > MAX_SAFE_BIG) {
    throw new NumericalError(`integer noise sample ${y} exceeds 2^53 - 1 and cannot be returned as a safe integer`);
  }
  return Number(y);
}

let laplaceCache: { scale: number; t: number; shift: number } | undefined;

/**
 * An exact discrete Laplace sample: P(x) = (1 - e^{-1/scale}) / (1 + e^{-1/scale}) e^{-|x|/scale}
 * on the integers (CKS 2020, Algorithm 2). `scale` is taken as the exact rational num/den its
 * double denotes; 0 < scale <= 2^46. Expected cost O(1) uniform draws for every scale.
 *
 * Throws `NumericalError` if a sample would exceed 2^53 - 1 (probability about e^-128 at the
 * largest accepted parameter, far smaller below it).
 */
export function sampleDiscreteLaplace(rng: Rng, scale: number): number {
  requirePositive('scale', scale);
  if (scale > MAX_SCALE) throw new InvalidParameterError('scale', scale, 'in (0, 2^46]');
  if (laplaceCache?.scale !== scale) {
    // scale = m 2^e with m odd: as t/s either (m 2^e)/1 (e >= 0, an integer <= 2^46) or m / 2^-e.
    const { mantissa, exponent } = decomposeDouble(scale);
    laplaceCache =
      exponent >= 0 ? { scale, t: mantissa * 2 ** exponent, shift: 0 } : { scale, t: mantissa, shift: -exponent };
  }
  return discreteLaplace(rng, laplaceCache.t, laplaceCache.shift);
}

// ---------------------------------------------------------------------------------------------
// Discrete Gaussian, CKS 2020 Algorithm 3
// ---------------------------------------------------------------------------------------------
// Proposal Y ~ discrete Laplace with integer scale t = floor(sigma) + 1, accepted with probability
// exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)). Then P(Y = y and accepted) is proportional to
// exp(-|y|/t - (y^2 - 2|y| sigma^2/t + sigma^4/t^2) / (2 sigma^2)) = exp(-y^2/(2 sigma^2)) * const,
// the discrete Gaussian. With sigma^2 = sn/sd exactly and c = |y| t sd - sn (an integer):
//   gamma = (|y| - sn/(sd t))^2 / (2 sn/sd) = c^2 / D,   D = 2 sn sd t^2.
//
// Three arithmetics decide Bernoulli(exp(-gamma)), all exact:
// - plain: when sn, t sd and D are safe integers (integer sigma <= 8191, short dyadic fractions),
//   c^2 mod D on doubles (`bernoulliExpFraction`), as before;
// - BigInt (`acceptBig`, the reference): floor(c^2 2^53 / D) gives the integer part of gamma and the
//   first 53 bits h of its fraction f; each Bernoulli(f) trial of Algorithm 1 compares 53 fresh bits
//   x with h, and only a tie (x = h) draws further bits (`bernoulliBigFraction`);
// - fast (`acceptFast`): the same decisions from gamma computed in doubles with a rigorous error
//   bound; the BigInt quotient is computed only when the bound cannot decide (probability ~1e-14
//   per proposal). It draws exactly the words `acceptBig` draws and returns what it returns.

/** floor(sqrt(2^53 - 1)): |c| up to this keeps c^2 a safe integer. */
const MAX_SAFE_SQRT = 94906265;
/** 2^53 as a BigInt. */
const TWO_POW_53_BIG = 1n << 53n;
/** Largest sigma^2 accepted (sigma <= 2^46), as for the double `sigma`. */
const MAX_VARIANCE_BITS = 92n;
/** The fast path needs sigma^2 >= 2^-398 (so that every double it uses is normal and finite). */
const FAST_MIN_LOG2_VARIANCE = -398;

interface GaussianParams {
  /** t = floor(sigma) + 1, exactly (sigma^2 = sn/sd). */
  t: number;
  snBig: bigint;
  tsdBig: bigint;
  denBig: bigint;
  /** Whether sn, t*sd and D are safe integers (then `plain` arithmetic may be used per proposal). */
  plain: boolean;
  sn: number;
  tsd: number;
  den: number;
  /** For a plain den > 2^32: 2^53 - (2^53 mod den), the rejection limit of `uniformBelow(den)`. */
  denLimit: number;
  /** Whether the fast path's doubles are normal and finite (sigma^2 >= 2^-398). */
  fast: boolean;
  /** q ~ sigma^2 / t = sn / (sd t) and w ~ 1 / (2 sigma^2) = sd / (2 sn), relative error <= 1.001 u. */
  q: number;
  w: number;
  /** 1 / t rounded to nearest (relative error <= u). */
  invT: number;
}

/** Number of bits of a BigInt n > 0. */
function bitLength(n: bigint): number {
  return n.toString(2).length;
}

/**
 * n/d (BigInts > 0) as a double with relative error <= 1.001 u (u = 2^-53), assuming the result is
 * a normal double: Q = floor(n 2^s / d) with s chosen so that Q in [2^63, 2^65) (n in
 * [2^(bn-1), 2^bn), d in [2^(bd-1), 2^bd), s = bd - bn + 64), so the floor loses a relative
 * 2^-63 = u/1024 at most; Number(Q) rounds to nearest (relative u); the scaling by 2^-s is exact.
 */
function ratioToDouble(n: bigint, d: bigint): number {
  const s = bitLength(d) - bitLength(n) + 64;
  const q = s >= 0 ? (n << BigInt(s)) / d : n / (d << BigInt(-s));
  return Number(q) * 2 ** -s;
}

/** Integer square root floor(sqrt(n)) of a BigInt n >= 0. */
function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  // A double's square root is within a few units of the answer for n < 2^1000; Newton's iteration
  // (from above) then the two correcting loops make the result exact whatever the start.
  let x = n < 1n << 1000n ? BigInt(Math.ceil(Math.sqrt(Number(n)))) + 1n : 1n << BigInt(Math.ceil(bitLength(n) / 2));
  for (;;) {
    const next = (x + n / x) >> 1n;
    if (next >= x) break;
    x = next;
  }
  while (x * x > n) x--;
  while ((x + 1n) * (x + 1n) <= n) x++;
  return x;
}

/** Parameters of Algorithm 3 for sigma^2 = sn/sd (a reduced fraction, sn, sd > 0) and t = floor(sigma) + 1. */
function gaussianParams(snBig: bigint, sdBig: bigint, t: number): GaussianParams {
  const tBig = BigInt(t);
  const tsdBig = tBig * sdBig;
  const denBig = 2n * snBig * sdBig * tBig * tBig;
  const plain = snBig <= MAX_SAFE_BIG && tsdBig <= MAX_SAFE_BIG && denBig <= MAX_SAFE_BIG;
  // sigma^2 >= 2^(bn - 1 - bd): the fast path's q, w, 1/t are then normal, finite doubles.
  const fast = bitLength(snBig) - 1 - bitLength(sdBig) >= FAST_MIN_LOG2_VARIANCE;
  return {
    t,
    snBig,
    tsdBig,
    denBig,
    plain,
    sn: plain ? Number(snBig) : NaN,
    tsd: plain ? Number(tsdBig) : NaN,
    den: plain ? Number(denBig) : NaN,
    denLimit: plain && denBig > 1n << 32n ? Number(TWO_POW_53_BIG - (TWO_POW_53_BIG % denBig)) : NaN,
    fast,
    q: fast ? ratioToDouble(snBig, tsdBig) : NaN,
    w: fast ? ratioToDouble(sdBig, 2n * snBig) : NaN,
    invT: 1 / t,
  };
}

/** sigma^2 of a double sigma > 0 as the exact reduced fraction sn/sd (sigma = m 2^e, m odd). */
function gaussianParamsOfSigma(sigma: number): GaussianParams {
  const { mantissa, exponent } = decomposeDouble(sigma);
  const m2 = BigInt(mantissa) * BigInt(mantissa);
  const snBig = exponent >= 0 ? m2 << BigInt(2 * exponent) : m2;
  const sdBig = exponent >= 0 ? 1n : 1n << BigInt(-2 * exponent);
  return gaussianParams(snBig, sdBig, Math.floor(sigma) + 1);
}

/** Counts the times the fast path had to compute the BigInt quotient (read by the tests). */
let exactFallbacks = 0;

/**
 * The reference acceptance step: Bernoulli(exp(-c^2/D)) for c = a t sd - sn, all in BigInt.
 * One division gives both the integer part of gamma (head >> 53) and the first 53 bits of its
 * fraction (head mod 2^53).
 */
function acceptBig(rng: Rng, g: GaussianParams, a: number): boolean {
  const c = BigInt(a) * g.tsdBig - g.snBig;
  const scaled = (c * c) << 53n;
  const head = scaled / g.denBig;
  return bernoulliExpMinusInteger(rng, head >> 53n) && bernoulliExpBigFraction(rng, scaled, head, g.denBig);
}

/**
 * The acceptance step Bernoulli(exp(-gamma)), gamma = (a - q)^2 w, decided in doubles with a
 * rigorous error bound; identical, word for word, to `acceptBig`.
 *
 * Error bound. u = 2^-53. Let q = sn/(sd t), w = sd/(2 sn) exactly, d = a - q, gamma = d^2 w, and
 * q~ = q (1 + e_q), w~ = w (1 + e_w) the precomputed doubles, |e_q|, |e_w| <= 1.001 u
 * (`ratioToDouble`). Each double operation below is exact up to a factor (1 + delta), |delta| <= u,
 * for normal results; a result below 2^-1022 errs by at most 2^-1075 absolutely, which the 2^-100
 * term absorbs many times over.
 *  (1) d~ = fl(a - q~) = (d - q e_q)(1 + delta1), so |d~ - d| <= 1.001 u q + u |d~| / (1 - u)
 *      <= Delta := 1.001 u (q + |d~|).
 *  (2) |d~^2 - d^2| = |d~ - d| |d~ + d| <= Delta (2 |d~| + Delta).
 *  (3) gamma~ = fl(fl(d~ d~) w~) = w d~^2 (1 + e_w)(1 + delta2)(1 + delta3), so
 *      |gamma~ - w d~^2| <= 3.002 u w d~^2 and w d~^2 <= gamma~ / ((1 - u)^2 (1 - 1.001 u)); hence
 *      |gamma~ - w d~^2| <= 3.003 u gamma~.
 *  (4) w |d~^2 - d^2| <= 2 w Delta |d~| + w Delta^2, where, with w q = 1/(2t),
 *      2 w Delta |d~| = 2.002 u (w q |d~| + w d~^2) <= 1.001 u |d~| / t + 2.003 u gamma~, and
 *      w Delta^2 <= 2 (1.001 u)^2 (w q^2 + w d~^2) <= 1.003 u^2 q/t + 2.01 u^2 gamma~, with
 *      q/t = sigma^2/t^2 < 1.
 *  So |gamma~ - gamma| <= E := 5.01 u gamma~ + 1.001 u |d~| / t + 1.01 u^2.
 * The code takes err = gamma~ 2^-49 + |d~| invT 2^-50 + 2^-100, i.e. 16 u gamma~ + 8 u |d~| / t +
 * 64 u^2 with each term computed within a factor (1 - u)^4 (invT, one product, two sums; the
 * scalings by powers of two are exact), and lo = fl(gamma~ - err), hi = fl(gamma~ + err). Those two
 * roundings move lo and hi by at most u (gamma~ + err) (lo only matters when gamma~ >= err), and
 * err - u (gamma~ + err) >= 15.9 u gamma~ - u gamma~ + 7.9 u |d~| / t + 63 u^2 > E, so
 * lo <= gamma <= hi. As gamma >= 0, lo may be raised to 0.
 *
 * Decisions. If floor(lo) = floor(hi) = n, then floor(gamma) = n (and hi < n + 1), which is the
 * integer part `acceptBig` uses: the same Bernoulli(exp(-1)) draws. The fraction f = gamma - n lies
 * in [lo - n, hi - n]; both differences are exact (Sterbenz: lo, hi in [n, n + 1] within a factor
 * 2 of n >= 1, or n = 0), and so are their products by 2^53. `acceptBig` compares x (53 fresh bits)
 * with h = floor(f 2^53) in [L, H], L = floor((lo - n) 2^53), H = ceil((hi - n) 2^53):
 * - x < L <= h: U < f, the trial succeeds, as in `acceptBig`;
 * - x >= H: if x > h the trial fails; if x = h then h >= H >= f 2^53 >= h, i.e. f 2^53 = h has no
 *   further bits, and `acceptBig`'s tie fails without drawing (`bernoulliBigFraction` with r = 0);
 * - L <= x < H (a window of about 2^53 * 2 err values; 2 err < 1e-14 for gamma < 1, and larger
 *   gammas reach this point with probability exp(-floor(gamma))): compute h exactly and continue
 *   the comparison as `acceptBig` does (`fractionTrialExact`).
 * If floor(lo) != floor(hi), the integer part is uncertain: the whole step goes to `acceptBig`.
 */
function acceptFast(rng: Rng, g: GaussianParams, a: number): boolean {
  const d = a - g.q;
  const gamma = d * d * g.w;
  const err = gamma * 2 ** -49 + Math.abs(d) * g.invT * 2 ** -50 + 2 ** -100;
  const lo = Math.max(gamma - err, 0);
  const hi = gamma + err;
  const n = Math.floor(lo);
  if (n !== Math.floor(hi)) {
    exactFallbacks++;
    return acceptBig(rng, g, a);
  }
  if (n !== 0 && !bernoulliExpMinusInteger(rng, n)) return false;
  const low53 = Math.floor((lo - n) * TWO_POW_53);
  const high53 = Math.ceil((hi - n) * TWO_POW_53);
  // Algorithm 1 on f, as in `bernoulliExpBigFraction`: trial k is Bernoulli(1/k) AND Bernoulli(f).
  let k = 1;
  for (;;) {
    if (k > 1 && uniformBelow(rng, k) !== 0) break;
    const x = uint53(rng);
    if (x >= low53 && (x >= high53 || !fractionTrialExact(rng, g, a, n, x))) break;
    k++;
  }
  return (k & 1) === 1;
}

/**
 * One Bernoulli(f) trial of `acceptBig` given its first 53 bits x, with the BigInt quotient:
 * x < h succeeds, x > h fails, a tie continues exactly (`bernoulliBigFraction`).
 */
function fractionTrialExact(rng: Rng, g: GaussianParams, a: number, n: number, x: number): boolean {
  exactFallbacks++;
  const c = BigInt(a) * g.tsdBig - g.snBig;
  const scaled = (c * c) << 53n;
  const head = scaled / g.denBig;
  if (head >> 53n !== BigInt(n)) {
    // Unreachable by the error bound above; checked because a wrong integer part would be silent.
    throw new NumericalError(`discrete Gaussian: integer part ${head >> 53n} outside the proven bracket of ${n}`);
  }
  const h = Number(head & MASK_53);
  if (x !== h) return x < h;
  return bernoulliBigFraction(rng, scaled - head * g.denBig, g.denBig);
}

/** Acceptance with plain numbers when c^2 is a safe integer (`g.plain`); undefined when it is not. */
function acceptPlain(rng: Rng, g: GaussianParams, a: number): boolean | undefined {
  const yts = a * g.tsd; // exact when <= MAX_SAFE (otherwise it rounds to >= 2^53)
  if (yts > MAX_SAFE) return undefined;
  const c = yts - g.sn;
  if (Math.abs(c) > MAX_SAFE_SQRT) return undefined;
  const c2 = c * c;
  const r = c2 % g.den; // exact: % on doubles is exact, and c2, den are safe integers
  const q = (c2 - r) / g.den; // an exact integer quotient
  if (!bernoulliExpMinusInteger(rng, q)) return false;
  return g.den <= TWO_POW_32 ? bernoulliExpFraction(rng, r, g.den) : bernoulliExpFractionLarge(rng, r, g.den, g.denLimit);
}

/**
 * `bernoulliExpFraction(rng, r, d)` for 2^32 < d <= 2^53 with the rejection limit of
 * `uniformBelow(d)` precomputed: the same words and decisions, without a remainder 2^53 mod d per trial.
 */
function bernoulliExpFractionLarge(rng: Rng, r: number, d: number, limit: number): boolean {
  if (r === 0) return true;
  let k = 1;
  for (;;) {
    if (k > 1 && uniformBelow(rng, k) !== 0) break;
    if (uniformBelowWithLimit(rng, d, limit) >= r) break;
    k++;
  }
  return (k & 1) === 1;
}

/** One exact discrete Gaussian sample (Algorithm 3) with the arithmetic chosen per proposal. */
function discreteGaussian(rng: Rng, g: GaussianParams): number {
  const t = g.t;
  for (;;) {
    const y = discreteLaplace(rng, t, 0);
    const a = y < 0 ? -y : y;
    if (g.plain) {
      const accepted = acceptPlain(rng, g, a);
      if (accepted !== undefined) {
        if (accepted) return y;
        continue;
      }
    }
    if (g.fast ? acceptFast(rng, g, a) : acceptBig(rng, g, a)) return y;
  }
}

let gaussianCache: { sigma: number; params: GaussianParams } | undefined;

function validatedSigmaParams(sigma: number): GaussianParams {
  requirePositive('sigma', sigma);
  if (sigma > MAX_SCALE) throw new InvalidParameterError('sigma', sigma, 'in (0, 2^46]');
  if (gaussianCache?.sigma !== sigma) gaussianCache = { sigma, params: gaussianParamsOfSigma(sigma) };
  return gaussianCache.params;
}

/**
 * An exact discrete Gaussian sample: P(x) proportional to exp(-x^2 / (2 sigma^2)) on the integers
 * (CKS 2020, Algorithm 3), with sigma^2 the exact square of the rational that the double `sigma`
 * denotes; 0 < sigma <= 2^46. On average 1.3 proposals per sample for sigma >= 3 (1.85 at sigma = 1,
 * 1.93 at sigma = 0.5: the acceptance probability summed over the proposal's pmf).
 *
 * The proposal (a discrete Laplace of integer scale floor(sigma) + 1 <= 2^46 + 1) runs on plain
 * numbers. The acceptance step uses plain numbers when every integer involved is below 2^53
 * (integer sigma up to 8191, short dyadic fractions), and otherwise doubles with a proven error
 * bound, falling back to BigInt only when that bound cannot decide (about once in 1e14 proposals):
 * the output is exactly the one of all-BigInt arithmetic on the same random words.
 *
 * Throws `NumericalError` if a sample would exceed 2^53 - 1 (probability about e^-128 at the
 * largest accepted parameter, far smaller below it).
 *
 * @example
 * const noisyCount = count + sampleDiscreteGaussian(defaultRng(), 3.7);
 */
export function sampleDiscreteGaussian(rng: Rng, sigma: number): number {
  return discreteGaussian(rng, validatedSigmaParams(sigma));
}

/**
 * Fills `out` with independent exact discrete Gaussian samples of parameter `sigma` (as
 * `sampleDiscreteGaussian`, validating `sigma` once) and returns it: the learners' hot loop.
 *
 * @example
 * const noise = fillDiscreteGaussian(defaultRng(), new Float64Array(d), 200_000);
 */
export function fillDiscreteGaussian(rng: Rng, out: Float64Array, sigma: number): Float64Array {
  const g = validatedSigmaParams(sigma);
  for (let i = 0; i < out.length; i++) out[i] = discreteGaussian(rng, g);
  return out;
}

let varianceCache: { num: bigint; den: bigint; params: GaussianParams } | undefined;

function greatestCommonDivisor(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function validatedVarianceParams(num: bigint, den: bigint): GaussianParams {
  if (typeof num !== 'bigint' || num <= 0n) throw new InvalidParameterError('num', num, 'a bigint > 0');
  if (typeof den !== 'bigint' || den <= 0n) throw new InvalidParameterError('den', den, 'a bigint > 0');
  if (num > den << MAX_VARIANCE_BITS) {
    throw new InvalidParameterError('num', num, `at most 2^92 den (sigma^2 = num/den <= 2^92)`, `den = ${den}`);
  }
  if (varianceCache === undefined || varianceCache.num !== num || varianceCache.den !== den) {
    const divisor = greatestCommonDivisor(num, den);
    const sn = num / divisor;
    const sd = den / divisor;
    // t = floor(sqrt(sn/sd)) + 1 = isqrt(floor(sn/sd)) + 1, since floor(sqrt(x)) = floor(sqrt(floor(x))).
    const t = Number(isqrt(sn / sd)) + 1;
    varianceCache = { num, den, params: gaussianParams(sn, sd, t) };
  }
  return varianceCache.params;
}

/**
 * An exact discrete Gaussian sample whose variance parameter sigma^2 is exactly the rational
 * num/den: P(x) proportional to exp(-x^2 den / (2 num)) on the integers (CKS 2020, Algorithm 3 with
 * t = floor(sqrt(num/den)) + 1 computed by an integer square root). num, den > 0 are BigInts, any
 * common factor is removed, and num/den <= 2^92 (sigma <= 2^46). For the variance gamma ||k||^2 +
 * s_b^2 of the Relative Gaussian Mechanism, which is a data-dependent rational.
 *
 * Same arithmetic as `sampleDiscreteGaussian` (the outputs are identical on the same random words
 * when num/den is the square of the double sigma); each new num/den costs a few BigInt divisions
 * once.
 *
 * @example
 * sampleDiscreteGaussianVariance(defaultRng(), 7n, 3n); // sigma^2 = 7/3
 */
export function sampleDiscreteGaussianVariance(rng: Rng, num: bigint, den: bigint): number {
  return discreteGaussian(rng, validatedVarianceParams(num, den));
}

/**
 * Internal, for tests only (not exported from the index): a discrete Gaussian of variance num/den
 * with the acceptance step forced onto one arithmetic: `fast` (doubles with the error bound, BigInt
 * only where it cannot decide; throws if sigma^2 < 2^-398), `bigint` (the reference), or `auto`
 * (what the public samplers do).
 */
export function sampleDiscreteGaussianUsing(
  rng: Rng,
  num: bigint,
  den: bigint,
  arithmetic: 'auto' | 'fast' | 'bigint',
): number {
  const g = validatedVarianceParams(num, den);
  if (arithmetic === 'auto') return discreteGaussian(rng, g);
  if (arithmetic === 'fast' && !g.fast) throw new InvalidParameterError('num', num, 'with num/den >= 2^-398 for the fast path');
  for (;;) {
    const y = discreteLaplace(rng, g.t, 0);
    const a = y < 0 ? -y : y;
    if (arithmetic === 'fast' ? acceptFast(rng, g, a) : acceptBig(rng, g, a)) return y;
  }
}

/** Internal, for tests: the number of times the fast path has computed the BigInt quotient. */
export function exactFallbackCount(): number {
  return exactFallbacks;
}
