/**
 * Discrete samplers: Bernoulli, Poisson, binomial, permutations and Poisson subsampling.
 *
 * Poisson and binomial are exact algorithms (no normal approximation, no truncation) evaluated in
 * floating point: their acceptance tests use log-pmfs accurate to ~1e-15 (see `log-pmf.ts`).
 */
import { InvalidParameterError } from '../errors.js';
import { requireInteger, requireNonNegative, requireProbability } from '../validate.js';
import { uniformBelow } from './bits.js';
import type { Rng } from './rng.js';
import { btrs, ptrs, sampleTransformedRejection, type TransformedRejection } from './transformed-rejection.js';

/** true with probability p (to within 2^-53: the test is u < p for u = k 2^-53). */
export function sampleBernoulli(rng: Rng, p: number): boolean {
  requireProbability('p', p);
  return rng.nextDouble() < p;
}

// ---------------------------------------------------------------------------------------------
// Poisson
// ---------------------------------------------------------------------------------------------

/** Largest lambda accepted: samples stay far below 2^53. */
const MAX_POISSON_LAMBDA = 2 ** 52;
/** Below this mean, inversion (expected lambda + 1 steps) beats rejection. */
const POISSON_INVERSION_BELOW = 10;

/**
 * A Poisson(lambda) sample, for 0 <= lambda <= 2^52. lambda < 10: inversion by sequential search;
 * lambda >= 10: PTRS, the transformed rejection with squeeze of W. Hörmann ("The transformed
 * rejection method for generating Poisson random variables", Insurance: Mathematics and
 * Economics 12, 1993), about 1.2 pairs of uniforms per sample for every lambda. Hörmann's hat is
 * widened by 2% to make it exact (proof note in `transformed-rejection.ts`).
 */
export function samplePoisson(rng: Rng, lambda: number): number {
  requireNonNegative('lambda', lambda);
  if (lambda > MAX_POISSON_LAMBDA) throw new InvalidParameterError('lambda', lambda, `<= 2^52`);
  if (lambda === 0) return 0;
  return lambda < POISSON_INVERSION_BELOW ? poissonInversion(rng, lambda) : poissonPtrs(rng, lambda);
}

/**
 * Inversion: subtract P(0), P(1), ... from one uniform until it falls inside a mass. If rounding
 * leaves the uniform above the total mass (probability ~1e-16), the draw is rejected and redone.
 */
function poissonInversion(rng: Rng, lambda: number): number {
  const p0 = Math.exp(-lambda);
  for (;;) {
    let u = rng.nextDouble();
    let p = p0;
    let k = 0;
    while (u >= p && k < 1000) {
      u -= p;
      k++;
      p *= lambda / k;
    }
    if (k < 1000) return k;
  }
}

let ptrsCache: { lambda: number; setup: TransformedRejection } | undefined;

/** PTRS (Hörmann 1993), for lambda >= 10, with the widened hat of `transformed-rejection.ts`. */
function poissonPtrs(rng: Rng, lambda: number): number {
  if (ptrsCache?.lambda !== lambda) ptrsCache = { lambda, setup: ptrs(lambda) };
  return sampleTransformedRejection(rng, ptrsCache.setup);
}

// ---------------------------------------------------------------------------------------------
// Binomial
// ---------------------------------------------------------------------------------------------

/**
 * A Binomial(n, p) sample for integers 0 <= n <= 2^53 - 1. With p <= 1/2 (else n - Binomial(n, 1-p)):
 * n p < 10: inversion by sequential search; n p >= 10: BTRS, the transformed rejection with squeeze
 * of W. Hörmann ("The generation of binomial random variates", J. Statist. Comput. Simul. 46,
 * 1993), whose expected cost is bounded uniformly in n and p (n = 1e9 costs as much as n = 100);
 * its hat is widened by 2% for a safe margin (proof note in `transformed-rejection.ts`).
 */
export function sampleBinomial(rng: Rng, n: number, p: number): number {
  requireInteger('n', n);
  requireProbability('p', p);
  if (n === 0 || p === 0) return 0;
  if (p === 1) return n;
  if (p > 0.5) return n - binomialHalf(rng, n, 1 - p);
  return binomialHalf(rng, n, p);
}

function binomialHalf(rng: Rng, n: number, p: number): number {
  return n * p < 10 ? binomialInversion(rng, n, p) : binomialBtrs(rng, n, p);
}

/** Inversion for n p < 10, p <= 1/2: P(0) = (1-p)^n, P(k+1) = P(k) (n-k)/(k+1) p/(1-p). */
function binomialInversion(rng: Rng, n: number, p: number): number {
  const p0 = Math.exp(n * Math.log1p(-p));
  const ratio = p / (1 - p);
  for (;;) {
    let u = rng.nextDouble();
    let f = p0;
    let k = 0;
    while (u >= f && k < n && k < 1000) {
      u -= f;
      f *= (ratio * (n - k)) / (k + 1);
      k++;
    }
    if (u < f) return k; // otherwise rounding left u above the total mass: redo the draw
  }
}

let btrsCache: { n: number; p: number; setup: TransformedRejection } | undefined;

/** BTRS (Hörmann 1993), for p <= 1/2 and n p >= 10, with the widened hat of `transformed-rejection.ts`. */
function binomialBtrs(rng: Rng, n: number, p: number): number {
  if (btrsCache?.n !== n || btrsCache.p !== p) btrsCache = { n, p, setup: btrs(n, p) };
  return sampleTransformedRejection(rng, btrsCache.setup);
}

// ---------------------------------------------------------------------------------------------
// Permutations
// ---------------------------------------------------------------------------------------------

/**
 * Shuffles `array` in place and returns it: Fisher–Yates (Durstenfeld's "Algorithm 235", CACM
 * 1964), with unbiased indices from `uniformInt`, so all n! orders are equally likely (as far as
 * the generator's state allows).
 */
export function shuffleInPlace<A extends { readonly length: number; [index: number]: unknown }>(rng: Rng, array: A): A {
  if (array === null || typeof array !== 'object' || !Number.isSafeInteger(array.length)) {
    throw new InvalidParameterError('array', array, 'an array or typed array');
  }
  for (let i = array.length - 1; i > 0; i--) {
    const j = uniformBelow(rng, i + 1);
    const tmp = array[i];
    array[i] = array[j];
    array[j] = tmp;
  }
  return array;
}

/**
 * Shuffles only the first m entries of `array` in place (the first m steps of Fisher–Yates drawn
 * from the front, Durstenfeld 1964): whatever order `array` held, its first m entries are then a
 * uniformly random ordered sample of m of its entries without replacement, drawn with m calls to
 * `uniformInt` (O(m), not O(n)). Returns `array`.
 */
export function shufflePrefixInPlace<A extends { readonly length: number; [index: number]: unknown }>(rng: Rng, array: A, m: number): A {
  if (array === null || typeof array !== 'object' || !Number.isSafeInteger(array.length)) {
    throw new InvalidParameterError('array', array, 'an array or typed array');
  }
  requireInteger('m', m, 0, array.length);
  const n = array.length;
  for (let i = 0; i < m && i < n - 1; i++) {
    const j = i + uniformBelow(rng, n - i);
    const tmp = array[i];
    array[i] = array[j];
    array[j] = tmp;
  }
  return array;
}

/** A uniformly random permutation of 0, 1, ..., n-1 (n < 2^32). */
export function randomPermutation(rng: Rng, n: number): Uint32Array {
  requireInteger('n', n, 0, 2 ** 32 - 1);
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return shuffleInPlace(rng, out);
}

// ---------------------------------------------------------------------------------------------
// Poisson subsampling
// ---------------------------------------------------------------------------------------------

/** At or below this q, geometric skips (one logarithm per selected index) beat one draw per index. */
const SKIP_BELOW = 0.25;

/**
 * Calls `visit(i)` for each selected index of 0..n-1 in increasing order, each selected
 * independently with probability q (0 < q < 1). The gap before the next selected index is
 * geometric: G = floor(log(1 - u) / log(1 - q)) has P(G >= g) = (1 - q)^g.
 */
function forEachSelected(rng: Rng, n: number, q: number, visit: (i: number) => void): void {
  if (q > SKIP_BELOW) {
    for (let i = 0; i < n; i++) if (rng.nextDouble() < q) visit(i);
    return;
  }
  const logQc = Math.log1p(-q);
  let i = -1;
  for (;;) {
    const gap = Math.floor(Math.log1p(-rng.nextDouble()) / logQc);
    i += gap + 1;
    if (!(i < n)) return;
    visit(i);
  }
}

/**
 * Poisson subsampling as a mask: mask[i] = 1 independently with probability q (the sampling of
 * DP-SGD with amplification by subsampling). n < 2^32.
 */
export function poissonSubsampleMask(rng: Rng, n: number, q: number): Uint8Array {
  requireInteger('n', n, 0, 2 ** 32 - 1);
  requireProbability('q', q);
  const mask = new Uint8Array(n);
  if (q === 1) mask.fill(1);
  else if (q > 0) forEachSelected(rng, n, q, (i) => (mask[i] = 1));
  return mask;
}

/**
 * Poisson subsampling as the increasing list of selected indices (see `poissonSubsampleMask`).
 *
 * @example
 * const batch = poissonSubsampleIndices(defaultRng(), datasetSize, samplingProbability);
 */
export function poissonSubsampleIndices(rng: Rng, n: number, q: number): Uint32Array {
  requireInteger('n', n, 0, 2 ** 32 - 1);
  requireProbability('q', q);
  if (q === 1) return identityIndices(n);
  if (q === 0) return new Uint32Array(0);
  let out = new Uint32Array(Math.min(n, Math.ceil(n * q + 6 * Math.sqrt(n * q) + 16)));
  let count = 0;
  forEachSelected(rng, n, q, (i) => {
    if (count === out.length) {
      const grown = new Uint32Array(Math.min(n, out.length * 2));
      grown.set(out);
      out = grown;
    }
    out[count++] = i;
  });
  return out.slice(0, count);
}

function identityIndices(n: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}
