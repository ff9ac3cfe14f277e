/**
 * Chernoff bounds on the tails of a composed discrete PLD, used to choose the window of the FFT and
 * to bound the mass that falls outside it. For independent losses S = sum_j sum_{1..k_j} L_j,
 *
 *   P(S >= x) <= exp(sum_j k_j K_j(t) - t x),   P(S <= x) <= exp(sum_j k_j K_j(-t) + t x),   t > 0,
 *
 * with K_j(t) = log E[e^{t L_j}] over the finite part of the (sub-probability) PLD j.
 *
 * For speed K_j is bounded above on bins of W consecutive grid points: e^{ts} is convex in s, so
 * on a bin [a, b] it lies below its chord, and the bin's contribution is at most
 * e^{ta} [M (b - mu) + M (mu - a) e^{t (b - a)}] / (b - a) for the bin's mass M and mean mu. The
 * bound is rigorous for every W and tight to second order (relative error about t^2 (b - a)^2 / 8
 * per step); W is chosen so that this stays below 1/2 in total over all compositions. The sums
 * over bins are Horner evaluations in e^{-t W h}: two multiply-adds per bin, no exponential.
 */
import type { DiscretePld } from './discrete-pld.js';

export interface BinnedMgf {
  /** Chord coefficients per bin: contribution e^{t a_b} (alpha_b + beta_b e^{t (W - 1) h}). */
  readonly alpha: Float64Array;
  readonly beta: Float64Array;
  /** Loss at the start of bin 0, and the bin width W h. */
  readonly start: number;
  readonly binWidth: number;
  /** (W - 1) h: the chord length. */
  readonly span: number;
  /** Smallest and largest loss carrying mass (NaN when the finite part is empty). */
  readonly minLoss: number;
  readonly maxLoss: number;
}

export interface PldMoments {
  readonly mass: number;
  /** Mean and variance of the normalised finite part. */
  readonly mean: number;
  readonly variance: number;
}

/** Mass, mean and variance of a PLD's finite part (negative masses ignored). */
export function pldMoments(pld: DiscretePld): PldMoments {
  const m = pld.masses;
  const h = pld.valueDiscretization;
  let s0 = 0;
  let s1 = 0;
  for (let j = 0; j < m.length; j++) {
    if (m[j] > 0) {
      s0 += m[j];
      s1 += m[j] * j;
    }
  }
  if (!(s0 > 0)) return { mass: 0, mean: 0, variance: 0 };
  const c = s1 / s0;
  let s2 = 0;
  for (let j = 0; j < m.length; j++) if (m[j] > 0) s2 += m[j] * (j - c) * (j - c);
  return { mass: s0, mean: (pld.minIndex + c) * h, variance: (s2 / s0) * h * h };
}

/** The binned MGF bound of a PLD with bins of `width` grid points. */
export function binnedMgf(pld: DiscretePld, width: number): BinnedMgf {
  const m = pld.masses;
  const h = pld.valueDiscretization;
  let first = -1;
  let last = -1;
  for (let j = 0; j < m.length; j++) {
    if (m[j] > 0) {
      if (first < 0) first = j;
      last = j;
    }
  }
  if (first < 0) {
    return { alpha: new Float64Array(0), beta: new Float64Array(0), start: 0, binWidth: h, span: 0, minLoss: NaN, maxLoss: NaN };
  }
  const W = Math.max(1, Math.min(width, last - first + 1));
  const bins = Math.ceil((last - first + 1) / W);
  const alpha = new Float64Array(bins);
  const beta = new Float64Array(bins);
  for (let b = 0; b < bins; b++) {
    const from = first + b * W;
    const to = Math.min(last, from + W - 1);
    let mass = 0;
    let moment = 0; // sum m (j - from), in grid steps
    for (let j = from; j <= to; j++) {
      if (m[j] > 0) {
        mass += m[j];
        moment += m[j] * (j - from);
      }
    }
    if (W === 1) {
      alpha[b] = mass;
      continue;
    }
    // chord over [from, from + W - 1] (in grid steps): M (b - mu)/(b - a) and M (mu - a)/(b - a)
    const fraction = mass > 0 ? Math.min(1, Math.max(0, moment / mass / (W - 1))) : 0;
    alpha[b] = mass * (1 - fraction);
    beta[b] = mass * fraction;
  }
  return {
    alpha,
    beta,
    start: (pld.minIndex + first) * h,
    binWidth: W * h,
    span: (W - 1) * h,
    minLoss: (pld.minIndex + first) * h,
    maxLoss: (pld.minIndex + last) * h,
  };
}

/** An upper bound on log sum_i m_i e^{t s_i} (-Infinity for an empty PLD). */
export function logMgf(c: BinnedMgf, t: number): number {
  const n = c.alpha.length;
  if (n === 0) return -Infinity;
  const tail = Math.exp(t * c.span);
  let acc = 0;
  if (t >= 0) {
    // e^{t a_{n-1}} sum_b e^{-t W h (n-1-b)} (alpha_b + beta_b e^{t span})
    const sigma = Math.exp(-t * c.binWidth);
    for (let b = 0; b < n; b++) acc = acc * sigma + (c.alpha[b] + c.beta[b] * tail);
    return t * (c.start + (n - 1) * c.binWidth) + Math.log(acc);
  }
  const rho = Math.exp(t * c.binWidth);
  for (let b = n - 1; b >= 0; b--) acc = acc * rho + (c.alpha[b] + c.beta[b] * tail);
  return t * c.start + Math.log(acc);
}

export interface TailPart {
  readonly mgf: BinnedMgf;
  readonly moments: PldMoments;
  readonly count: number;
}

/** The support of the composed finite part: [sum k_j minLoss_j, sum k_j maxLoss_j]. */
export function composedSupport(parts: readonly TailPart[]): { min: number; max: number } {
  let min = 0;
  let max = 0;
  for (const { mgf, count } of parts) {
    if (count === 0 || Number.isNaN(mgf.minLoss)) continue;
    min += count * mgf.minLoss;
    max += count * mgf.maxLoss;
  }
  return { min, max };
}

function totalLogMgf(parts: readonly TailPart[], t: number): number {
  let s = 0;
  for (const { mgf, count } of parts) if (count > 0) s += count * logMgf(mgf, t);
  return s;
}

/** Mean and variance of the composed loss (normalised finite parts). */
function composedMoments(parts: readonly TailPart[]): { mean: number; variance: number } {
  let mean = 0;
  let variance = 0;
  for (const { moments, count } of parts) {
    mean += count * moments.mean;
    variance += count * moments.variance;
  }
  return { mean, variance };
}

/**
 * min over t > 0 of f(t), f quasi-convex in log t: a scan of log t over [guess / e^12, guess e^12]
 * and [1e-6, 1e10] (heavy-tailed losses, such as Poisson subsampling with a small rate, have their
 * optimum far from the Gaussian guess), then golden-section refinement around the best point. Any
 * t gives a valid bound; the search only tightens it.
 */
function minimizeNear(f: (t: number) => number, t0: number): number {
  const lo = Math.min(Math.log(t0) - 12, Math.log(1e-6));
  const hi = Math.max(Math.log(t0) + 12, Math.log(1e10));
  const steps = Math.ceil((hi - lo) / 0.5);
  let best = Infinity;
  let bestI = 0;
  for (let i = 0; i <= steps; i++) {
    const v = f(Math.exp(lo + ((hi - lo) * i) / steps));
    if (v < best) {
      best = v;
      bestI = i;
    }
  }
  let a = lo + ((hi - lo) * Math.max(0, bestI - 1)) / steps;
  let b = lo + ((hi - lo) * Math.min(steps, bestI + 1)) / steps;
  const g = (Math.sqrt(5) - 1) / 2;
  let x1 = b - g * (b - a);
  let x2 = a + g * (b - a);
  let f1 = f(Math.exp(x1));
  let f2 = f(Math.exp(x2));
  for (let i = 0; i < 24; i++) {
    if (f1 <= f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - g * (b - a);
      f1 = f(Math.exp(x1));
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + g * (b - a);
      f2 = f(Math.exp(x2));
    }
  }
  const result = Math.min(best, f1, f2);
  return Number.isNaN(result) ? Infinity : result;
}

/** The tilt t at which a Gaussian with the composed moments attains its bound at distance d. */
function guess(parts: readonly TailPart[], distance: number): number {
  const { variance } = composedMoments(parts);
  const t = variance > 0 ? Math.abs(distance) / variance : 1;
  return Number.isFinite(t) && t > 1e-12 ? Math.min(t, 1e12) : 1;
}

/** An x with P(S >= x) <= tau. */
export function upperTailPoint(parts: readonly TailPart[], tau: number): number {
  const { max } = composedSupport(parts);
  const { variance } = composedMoments(parts);
  const logTau = Math.log(tau);
  const t0 = guess(parts, Math.sqrt(-2 * logTau * variance));
  return Math.min(max, minimizeNear((t) => (totalLogMgf(parts, t) - logTau) / t, t0));
}

/** An x with P(S <= x) <= tau. */
export function lowerTailPoint(parts: readonly TailPart[], tau: number): number {
  const { min } = composedSupport(parts);
  const { variance } = composedMoments(parts);
  const logTau = Math.log(tau);
  const t0 = guess(parts, Math.sqrt(-2 * logTau * variance));
  return Math.max(min, -minimizeNear((t) => (totalLogMgf(parts, -t) - logTau) / t, t0));
}

/** A bound on P(S >= x). */
export function massAtOrAbove(parts: readonly TailPart[], x: number): number {
  if (x > composedSupport(parts).max) return 0;
  const { mean } = composedMoments(parts);
  if (!(x > mean)) return 1;
  return Math.min(1, Math.exp(minimizeNear((t) => totalLogMgf(parts, t) - t * x, guess(parts, x - mean))));
}

/** A bound on P(S <= x). */
export function massAtOrBelow(parts: readonly TailPart[], x: number): number {
  if (x < composedSupport(parts).min) return 0;
  const { mean } = composedMoments(parts);
  if (!(x < mean)) return 1;
  return Math.min(1, Math.exp(minimizeNear((t) => totalLogMgf(parts, -t) + t * x, guess(parts, mean - x))));
}

/**
 * Bin width (in grid points) that keeps the chord error of all K compositions small at the tilt
 * needed for tail probability tau: t ~ sqrt(2 log(1/tau)) / sd, error ~ K t^2 w^2 / 8 <= 1/2.
 */
export function binWidthFor(totalCount: number, totalVariance: number, tau: number, h: number): number {
  if (!(totalVariance > 0)) return 1;
  const t = (2 * Math.sqrt(-2 * Math.log(tau))) / Math.sqrt(totalVariance);
  const w = 2 / (t * Math.sqrt(Math.max(1, totalCount)));
  return Math.max(1, Math.floor(w / h));
}

/**
 * An x with e^{lambda (x - base)} P(S >= x) <= tau: the top of a window starting at `base` whose
 * wrap-around, amplified by e^{lambda N h} when a tilted composition is untilted, stays below tau.
 */
export function shiftedUpperTailPoint(parts: readonly TailPart[], lambda: number, base: number, tau: number): number {
  const { max } = composedSupport(parts);
  const { variance } = composedMoments(parts);
  const logTau = Math.log(tau);
  const u0 = guess(parts, Math.sqrt(-2 * logTau * variance));
  return Math.min(max, minimizeNear((u) => (totalLogMgf(parts, lambda + u) - lambda * base - logTau) / u, u0));
}
