/**
 * Exact samplers of C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential
 * Privacy" (NeurIPS 2020), Section 5: Bernoulli(exp(-gamma)) (Algorithm 1), the discrete Laplace
 * (Algorithm 2) and the discrete Gaussian (Algorithm 3).
 *
 * "Exact" means the output distribution is exactly the stated one given ideal uniform bits: only
 * integer randomness (uniform words and `uniformBelow`) and exact rational arithmetic are used,
 * with BigInt wherever numerators or denominators may exceed 2^53. No floating-point value enters a
 * decision. This is what protects against the floating-point attacks on textbook Laplace and
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

/** Bernoulli(exp(-1)): Algorithm 1 with gamma = 1 (its first trial, Bernoulli(1), always succeeds). */
function bernoulliExpMinusOne(rng: Rng): boolean {
  let k = 2;
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

/**
 * Discrete Laplace with scale t / 2^shift: P(y) proportional to exp(-|y| 2^shift / t), for an
 * integer 1 <= t < 2^53 and shift >= 0 (CKS Algorithm 2 with s = 2^shift).
 *   U uniform in {0..t-1}, kept with probability exp(-U/t); V ~ Geometric(1 - e^-1) by counting
 *   Bernoulli(exp(-1)) successes. Then X = U + t V has P(X = x) proportional to exp(-x/t), and
 *   Y = floor(X / s) has P(Y = y) proportional to exp(-y s / t). A random sign is attached and the
 *   pair (negative, 0) rejected so that 0 is not counted twice.
 */
function discreteLaplace(rng: Rng, t: number, shift: number): number {
  for (;;) {
    const u = uniformBelow(rng, t);
    if (!bernoulliExpFraction(rng, u, t)) continue;
    let v = 0;
    while (bernoulliExpMinusOne(rng)) v++;
    const y = floorUPlusTVOverPow2(u, t, v, shift);
    const negative = randomBit(rng);
    if (negative && y === 0) continue;
    return negative ? -y : y;
  }
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

/** floor(sqrt(2^53 - 1)): |c| up to this keeps c^2 a safe integer. */
const MAX_SAFE_SQRT = 94906265;

interface GaussianParams {
  sigma: number;
  /** t = floor(sigma) + 1. */
  t: number;
  snBig: bigint;
  tsdBig: bigint;
  denBig: bigint;
  /** Whether sn, t*sd and D are safe integers (then `plain` arithmetic may be used per proposal). */
  plain: boolean;
  sn: number;
  tsd: number;
  den: number;
}

let gaussianCache: GaussianParams | undefined;

function gaussianParams(sigma: number): GaussianParams {
  const { mantissa, exponent } = decomposeDouble(sigma);
  const m2 = BigInt(mantissa) * BigInt(mantissa);
  // sigma^2 = m^2 2^(2e) = sn / sd
  const snBig = exponent >= 0 ? m2 << BigInt(2 * exponent) : m2;
  const sdBig = exponent >= 0 ? 1n : 1n << BigInt(-2 * exponent);
  const t = Math.floor(sigma) + 1;
  const tBig = BigInt(t);
  const tsdBig = tBig * sdBig;
  const denBig = 2n * snBig * sdBig * tBig * tBig;
  const plain = snBig <= MAX_SAFE_BIG && tsdBig <= MAX_SAFE_BIG && denBig <= MAX_SAFE_BIG;
  return {
    sigma,
    t,
    snBig,
    tsdBig,
    denBig,
    plain,
    sn: plain ? Number(snBig) : NaN,
    tsd: plain ? Number(tsdBig) : NaN,
    den: plain ? Number(denBig) : NaN,
  };
}

/**
 * An exact discrete Gaussian sample: P(x) proportional to exp(-x^2 / (2 sigma^2)) on the integers
 * (CKS 2020, Algorithm 3), with sigma^2 the exact square of the rational that the double `sigma`
 * denotes; 0 < sigma <= 2^46. On average 1.3 proposals per sample for sigma >= 3 (1.85 at sigma = 1,
 * 1.93 at sigma = 0.5: the acceptance probability summed over the proposal's pmf).
 *
 * Arithmetic is on plain numbers when every integer involved is below 2^53 (sigma an integer or a
 * short dyadic fraction, up to about 5000) and on BigInt otherwise (any other double, e.g. 3.7,
 * has a 53-bit mantissa whose square needs ~106 bits; large sigma needs c^2 ~ sigma^4).
 *
 * Throws `NumericalError` if a sample would exceed 2^53 - 1 (probability about e^-128 at the
 * largest accepted parameter, far smaller below it).
 *
 * @example
 * const noisyCount = count + sampleDiscreteGaussian(defaultRng(), 3.7);
 */
export function sampleDiscreteGaussian(rng: Rng, sigma: number): number {
  requirePositive('sigma', sigma);
  if (sigma > MAX_SCALE) throw new InvalidParameterError('sigma', sigma, 'in (0, 2^46]');
  if (gaussianCache?.sigma !== sigma) gaussianCache = gaussianParams(sigma);
  const g = gaussianCache;
  for (;;) {
    const y = discreteLaplace(rng, g.t, 0);
    const absY = Math.abs(y);
    if (g.plain) {
      const yts = absY * g.tsd; // exact when <= MAX_SAFE (otherwise it rounds to >= 2^53)
      if (yts <= MAX_SAFE) {
        const c = yts - g.sn;
        if (Math.abs(c) <= MAX_SAFE_SQRT) {
          const c2 = c * c;
          const r = c2 % g.den; // exact: % on doubles is exact, and c2, den are safe integers
          const q = (c2 - r) / g.den; // an exact integer quotient
          if (bernoulliExpMinusInteger(rng, q) && bernoulliExpFraction(rng, r, g.den)) return y;
          continue;
        }
      }
    }
    const c = BigInt(absY) * g.tsdBig - g.snBig;
    const scaled = (c * c) << 53n;
    const head = scaled / g.denBig; // floor(gamma 2^53): integer part and first 53 fraction bits
    if (bernoulliExpMinusInteger(rng, head >> 53n) && bernoulliExpBigFraction(rng, scaled, head, g.denBig)) return y;
  }
}
