/**
 * DP-SGD's audit statistic in the accountant's threat model ('subsampledGaussian'), the analogue of
 * DP-GD's Gaussian shift (`gaussian-dp-bound.ts`): the model is the mechanism's definition, only
 * its parameters are measured. Each step's canary coordinate (`gradient-canary.ts`) is
 * N(0, s^2) without the canary and c B + N(0, s^2) with it, B ~ Bernoulli(q), independent across
 * steps and runs (fresh noise and a fresh Poisson draw at each step). So the R T values of each
 * world are R T independent samples of the one-step pair, and the T-step run is the T-fold
 * composition of the Poisson-subsampled Gaussian pair (Mironov, Talwar & Zhang 2019, "Renyi
 * differential privacy of the sampled Gaussian mechanism": the add/remove dominating pair
 * (1 - q) N(0, s^2) + q N(c, s^2) against N(0, s^2), both orders).
 *
 * 1. The region, from the released values only (never the simulator's inclusion flags), each
 *    bound at error alpha / 4 (a union bound: all four hold at once with probability >= 1 - alpha):
 *    - s <= s_up: n0 s_hat^2 / s^2 ~ chi^2_{n0} (the outside values' mean is 0 by the model),
 *      s_up^2 = sum y_out^2 / chi^2_{n0; alpha/4};
 *    - m = c q in [m_lo, m_up]: the inside mean (its mean is c q), two one-sided bounds;
 *    - v = c^2 q >= v_lo: the difference of the worlds' mean squares (E y_in^2 - E y_out^2 = c^2 q).
 *    The mean bounds are normal-approximation (CLT) bounds with the sample variances plugged in:
 *    asymptotic, not exact (n = R T >= 4e4 values of light-tailed variables: y and y^2 of a
 *    Gaussian mixture, whose Berry-Esseen terms are O(1/sqrt(n))). An exact finite-sample bound on
 *    a mixture's moments is not what this computes; `experiments/audit-validity.ts` measures the
 *    coverage over seeds.
 * 2. The most private parameters in the region (the smallest epsilon consistent with it), using
 *    three monotonicities of the pair's hockey-stick divergences, both orders:
 *    (a) non-increasing in s at fixed c, q, and (b) non-decreasing in c at fixed q: the pair with
 *        (c', s') for c'/s' <= c/s is a post-processing of (c, s) (x -> (c'/c)(s'/s)... scaled
 *        and re-noised per sample, the same kernel in both worlds): a proof;
 *    (c) non-decreasing in q at fixed c: P_{r q} = r P_q + (1 - r) Q is P_q passed through the
 *        kernel "keep x with probability r, else draw from Q", which maps Q to Q: a proof;
 *    (d) non-decreasing in c at a fixed product m = c q: checked numerically in the tests (the
 *        grid of `test/audit/subsampled-gaussian-bound.test.ts`), not proved.
 *    For c in [c_i, c_{i+1}] inside the region, m >= m_i := max(m_lo, v_lo / c_{i+1}) and
 *    q = m / c >= m_i / c (c), so epsilon(c, q) >= epsilon(c, m_i / c) >= epsilon(c_i, m_i / c_i)
 *    (d). The region's c runs from c_lo = max(m_lo, v_lo / m_up) up (q = m / c <= 1 gives c >= m);
 *    the grid c_lo = c_0 < ... < c_K = max(c_lo, v_lo / m_lo) covers it, and beyond c_K,
 *    m_i = m_lo and (d) gives epsilon >= epsilon(c_K, m_lo / c_K). The minimum over the K + 1 corners (q capped at 1, by
 *    (c)) at s = s_up (a) is a lower bound of epsilon over the whole region.
 * 3. The epsilon of the T-fold composition at delta, a LOWER bound computed without dpfit's
 *    accountants (the audit must not trust what it checks): an optimistic privacy-loss
 *    distribution. delta(epsilon) of the composition is E_{P^T}[(1 - e^{epsilon - L})_+] with
 *    L the summed privacy losses; the function is non-decreasing in L and non-negative, so rounding
 *    each step's loss DOWN to a grid of step h (the loss is monotone in y, so a bin of losses is
 *    an interval of y whose probability is exact: normal survival functions) and dropping the mass
 *    of |y| beyond 12 standard deviations can only lower it: delta_lower(epsilon) <= delta(epsilon)
 *    for every coupling-wise smaller sum. The T-fold convolution is an FFT (the transform only is
 *    shared, `accounting/pld/fft.ts`, tested against the DFT's definition; the losses, their
 *    rounding and the tails are this file's) with its rounding error bounded and subtracted. Any epsilon with delta_lower(epsilon) > delta is
 *    below the pair's epsilon at delta (both orders; the larger is reported), found by bisection
 *    rounded down.
 */
import { fftToBitReversed, ifftFromBitReversed } from '../../accounting/pld/fft.js';
import { InvalidParameterError } from '../../errors.js';
import { chiSquareLowerQuantile } from '../../math/chi-square.js';
import { normalQuantile, normalSf } from '../../math/normal.js';
import { largestWhere } from '../../math/root-finding.js';
import { requireInteger, requireOpenUnit, requirePositive } from '../../validate.js';

/** One step's pair: shift c, sampling rate q, noise std s. */
export interface SubsampledGaussianPair {
  readonly shift: number;
  readonly rate: number;
  readonly std: number;
}

/** Standard deviations of the noise beyond which a value's mass is dropped (Phi(-12) ~ 2e-33). */
const TAIL = 12;
/** The loss grid's default step, and the largest FFT it may need (a coarser step beyond). */
const LOSS_STEP = 1e-3;
const MAX_FFT = 1 << 20;
/** The segments of the region's c (point 2 of the file comment). */
const SEGMENTS = 4;

/**
 * One order's one-step loss distribution, rounded down to multiples of h: masses[k] at loss
 * (offset + k) h. The loss is written as an increasing function of u, u ~ the order's P.
 */
function roundedLosses(pair: SubsampledGaussianPair, order: 'remove' | 'add', h: number): { masses: Float64Array; offset: number } {
  const a = pair.shift / pair.std;
  const q = pair.rate;
  // remove: P = (1 - q) N(0,1) + q N(a,1), Q = N(0,1), u = x, L(u) = log(1 - q + q e^{a u - a^2/2}).
  // add: P = N(0,1), Q = the mixture, u = -x ~ N(0,1), L(u) = -log(1 - q + q e^{-a u - a^2/2}).
  const loss = order === 'remove' ? (u: number) => Math.log1p(q * Math.expm1(a * u - (a * a) / 2)) : (u: number) => -Math.log1p(q * Math.expm1(-a * u - (a * a) / 2));
  // The u where L(u) = l (the inverse of the increasing L), -Infinity / +Infinity outside L's range.
  const inverse =
    order === 'remove'
      ? (l: number) => {
          const r = Math.expm1(l) / q;
          return r <= -1 ? -Infinity : (Math.log1p(r) + (a * a) / 2) / a;
        }
      : (l: number) => {
          const r = Math.expm1(-l) / q;
          return r <= -1 ? Infinity : -(Math.log1p(r) + (a * a) / 2) / a;
        };
  const survival = order === 'remove' ? (u: number) => (1 - q) * normalSf(u) + q * normalSf(u - a) : (u: number) => normalSf(u);
  const uMin = order === 'remove' ? -TAIL : -TAIL - a;
  const uMax = order === 'remove' ? a + TAIL : TAIL;
  const kLo = Math.floor(loss(uMin) / h);
  const kHi = Math.floor(loss(uMax) / h);
  const masses = new Float64Array(kHi - kLo + 1);
  for (let k = kLo; k <= kHi; k++) {
    const lo = Math.min(uMax, Math.max(uMin, inverse(k * h)));
    const hi = Math.min(uMax, Math.max(uMin, inverse((k + 1) * h)));
    // Exact mass of the bin (the normal survival's ~1e-16 absolute error shaved off by 1e-12).
    masses[k - kLo] = Math.max(0, survival(lo) - survival(hi) - 1e-15) * (1 - 1e-12);
  }
  return { masses, offset: kLo };
}

/** The T-fold composition's rounded losses and the function delta_lower(epsilon) of one order (file comment, point 3). */
function composedDeltaLower(pair: SubsampledGaussianPair, steps: number, order: 'remove' | 'add', lossStep: number): (epsilon: number) => number {
  let h = lossStep;
  let one = roundedLosses(pair, order, h);
  // Coarser loss steps when the composition would not fit the FFT (a lower bound either way).
  while (steps * (one.masses.length - 1) + 1 > MAX_FFT) {
    h *= 2;
    one = roundedLosses(pair, order, h);
  }
  const length = steps * (one.masses.length - 1) + 1;
  let n = 1;
  while (n < length) n <<= 1;
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  re.set(one.masses);
  // Bit-reversed order suffices: the power acts entry by entry, the inverse takes that order back.
  fftToBitReversed(re, im);
  for (let i = 0; i < n; i++) {
    const r = Math.hypot(re[i], im[i]) ** steps;
    const t = Math.atan2(im[i], re[i]) * steps;
    re[i] = r * Math.cos(t);
    im[i] = r * Math.sin(t);
  }
  ifftFromBitReversed(re, im);
  // Rounding error of the transforms and the power, bounded generously per entry and summed over
  // the N entries: (log2 N + T + 8) * 1e-15 * N (the masses sum to <= 1).
  const error = (Math.log2(n) + steps + 8) * 1e-15 * n;
  const offset = steps * one.offset;
  return (epsilon: number) => {
    let sum = 0;
    for (let k = 0; k < length; k++) {
      const l = (offset + k) * h;
      if (l > epsilon) sum += re[k] * -Math.expm1(epsilon - l);
    }
    return sum - error;
  };
}

/**
 * A lower bound on the epsilon at delta of T compositions of the subsampled Gaussian pair (file
 * comment, point 3), the larger of the two orders, rounded down.
 */
export function subsampledGaussianEpsilonLower(pair: SubsampledGaussianPair, steps: number, delta: number, lossStep = LOSS_STEP): number {
  requirePositive('shift', pair.shift);
  requirePositive('std', pair.std);
  if (!(pair.rate > 0 && pair.rate <= 1)) throw new InvalidParameterError('rate', pair.rate, 'in (0, 1]');
  requireInteger('steps', steps, 1);
  requireOpenUnit('delta', delta);
  requirePositive('lossStep', lossStep);
  let best = 0;
  for (const order of ['remove', 'add'] as const) {
    const deltaLower = composedDeltaLower(pair, steps, order, lossStep);
    best = Math.max(best, largestWhere((e) => deltaLower(e) > delta, { relativeTolerance: 1e-6, cap: 1e4 }).value);
  }
  return best;
}

/** delta_lower(epsilon) of one order (for the tests: <= the true hockey-stick divergence). */
export function subsampledGaussianDeltaLower(pair: SubsampledGaussianPair, steps: number, epsilon: number, order: 'remove' | 'add', lossStep = LOSS_STEP): number {
  return composedDeltaLower(pair, steps, order, lossStep)(epsilon);
}

export interface SubsampledGaussianRegion {
  /** Bounds holding jointly with probability >= confidence (asymptotically: file comment, point 1). */
  readonly stdUpper: number;
  readonly meanLower: number;
  readonly meanUpper: number;
  readonly excessLower: number;
  /** Point estimates: s, m = c q, v = c^2 q, and c = v / m, q = m^2 / v. */
  readonly std: number;
  readonly mean: number;
  readonly excess: number;
}

function moments(values: ArrayLike<number>): { mean: number; variance: number; meanSquare: number; squareVariance: number } {
  const n = values.length;
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    s1 += values[i];
    s2 += values[i] * values[i];
  }
  const mean = s1 / n;
  const meanSquare = s2 / n;
  let v1 = 0;
  let v2 = 0;
  for (let i = 0; i < n; i++) {
    v1 += (values[i] - mean) ** 2;
    v2 += (values[i] * values[i] - meanSquare) ** 2;
  }
  return { mean, variance: v1 / (n - 1), meanSquare, squareVariance: v2 / (n - 1) };
}

/** The confidence region of (s, m, v) from each world's one-step values (file comment, point 1). */
export function subsampledGaussianRegion(inside: ArrayLike<number>, outside: ArrayLike<number>, confidence: number): SubsampledGaussianRegion {
  const alpha = 1 - requireOpenUnit('confidence', confidence);
  const n1 = inside.length;
  const n0 = outside.length;
  if (n1 < 2 || n0 < 2) throw new InvalidParameterError('runs', Math.min(n1, n0), '>= 2 values with and without the canary');
  const a = moments(inside);
  const b = moments(outside);
  if (!(b.meanSquare > 0)) throw new InvalidParameterError('releases', b.meanSquare, 'values without the canary that are not all 0');
  const each = alpha / 4;
  const z = normalQuantile(1 - each) * (1 + 1e-12);
  const stdUpper = Math.sqrt((n0 * b.meanSquare) / chiSquareLowerQuantile(each, n0)) * (1 + 1e-12);
  const meanWidth = z * Math.sqrt(a.variance / n1);
  const excess = a.meanSquare - b.meanSquare;
  const excessWidth = z * Math.sqrt(a.squareVariance / n1 + b.squareVariance / n0);
  return { stdUpper, meanLower: a.mean - meanWidth, meanUpper: a.mean + meanWidth, excessLower: excess - excessWidth, std: Math.sqrt(b.meanSquare), mean: a.mean, excess };
}

export interface SubsampledGaussianBound {
  readonly epsilonLower: number;
  readonly region: SubsampledGaussianRegion;
  /** The parameters whose epsilon is the bound (the region's most private corner), or undefined when the region allows no canary effect. */
  readonly pair?: SubsampledGaussianPair;
}

/**
 * The lower bound on epsilon at delta of the T-step run from each world's one-step values
 * (file comment): the region, its most private corner at s_up x `stdFactor` (>= 1: e.g. the
 * smoothing of discrete noise, `accountant-audit.ts`), and that corner's epsilon.
 */
export function subsampledGaussianBound(inside: ArrayLike<number>, outside: ArrayLike<number>, steps: number, delta: number, confidence: number, stdFactor = 1): SubsampledGaussianBound {
  const region = subsampledGaussianRegion(inside, outside, confidence);
  if (!(stdFactor >= 1)) throw new InvalidParameterError('stdFactor', stdFactor, '>= 1');
  const { meanLower, meanUpper, excessLower } = region;
  if (!(meanLower > 0)) return { epsilonLower: 0, region };
  const std = region.stdUpper * stdFactor;
  // c >= m >= m_lo too (q <= 1): when v_lo is small (or <= 0) the region's smallest c is m_lo, a
  // Gaussian shift of m_lo per step (q = 1).
  const cLo = Math.max(meanLower, excessLower / meanUpper);
  const cHi = Math.max(cLo, excessLower / meanLower);
  let best: { epsilon: number; pair?: SubsampledGaussianPair } = { epsilon: Infinity };
  for (let i = cHi > cLo ? 0 : SEGMENTS; i <= SEGMENTS; i++) {
    const c = cLo * (cHi / cLo) ** (i / SEGMENTS);
    const next = i < SEGMENTS ? cLo * (cHi / cLo) ** ((i + 1) / SEGMENTS) : cHi;
    const m = Math.max(meanLower, excessLower / next) * (1 - 1e-12);
    const pair = { shift: c * (1 - 1e-12), rate: Math.min(1, m / c), std };
    const epsilon = subsampledGaussianEpsilonLower(pair, steps, delta);
    if (epsilon < best.epsilon) best = { epsilon, pair };
  }
  return { epsilonLower: best.epsilon, region, ...(best.pair === undefined ? {} : { pair: best.pair }) };
}
