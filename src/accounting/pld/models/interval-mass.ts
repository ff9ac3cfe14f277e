/**
 * Probabilities of consecutive intervals under a one-dimensional distribution, computed so that
 * tiny intervals and deep tails keep their relative accuracy: each cut point is represented by
 * the SMALLER of its two tails (the CDF left of the median, the survival function right of it),
 * and the mass of an interval is a difference of two values of the same tail (or 1 minus two
 * tails when it straddles the median). Differences of CDF values near 1 would lose everything
 * below 1e-16; these lose only what the tails' own accuracy loses.
 */
import { normalCdf } from '../../../math/normal.js';

/** A continuous distribution on the real line through its two tails. */
export interface TailDistribution {
  /** A point with both tails >= 1/2 (any median). */
  readonly median: number;
  /** P(X <= x), used only for x <= median. */
  cdf(x: number): number;
  /** P(X > x), used only for x >= median. */
  sf(x: number): number;
  /** Total mass (default 1): a sub-probability such as the finite part of a Q-law. */
  readonly total?: number;
}

/** N(mean, sd^2); tails from `normalCdf`, which is relative-accurate deep in the lower tail. */
export function normalDistribution(mean: number, sd: number): TailDistribution {
  return {
    median: mean,
    cdf: (x) => (x === -Infinity ? 0 : normalCdf((x - mean) / sd)),
    sf: (x) => (x === Infinity ? 0 : normalCdf((mean - x) / sd)),
  };
}

/** Laplace(mean, scale): P(X <= x) = e^{(x - mean)/scale} / 2 left of the mean. */
export function laplaceDistribution(mean: number, scale: number): TailDistribution {
  return {
    median: mean,
    cdf: (x) => 0.5 * Math.exp((x - mean) / scale),
    sf: (x) => 0.5 * Math.exp(-(x - mean) / scale),
  };
}

/**
 * Masses of (-inf, x_0], (x_0, x_1], ..., (x_{n-1}, inf) for nondecreasing cut points x (which may
 * be +-Infinity): an array of length n + 1 that sums to 1 up to rounding. Every entry is >= 0.
 */
export function intervalMasses(dist: TailDistribution, x: ArrayLike<number>): Float64Array {
  const n = x.length;
  const total = dist.total ?? 1;
  const out = new Float64Array(n + 1);
  const tail = new Float64Array(n);
  const upper = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const xi = x[i];
    if (xi > dist.median) {
      upper[i] = 1;
      tail[i] = dist.sf(xi);
    } else {
      tail[i] = dist.cdf(xi);
    }
  }
  if (n === 0) {
    out[0] = total;
    return out;
  }
  out[0] = upper[0] ? Math.max(0, total - tail[0]) : tail[0];
  for (let i = 1; i < n; i++) {
    let m: number;
    if (!upper[i - 1] && !upper[i]) m = tail[i] - tail[i - 1];
    else if (upper[i - 1] && upper[i]) m = tail[i - 1] - tail[i];
    else m = total - tail[i - 1] - tail[i];
    out[i] = m > 0 ? m : 0;
  }
  out[n] = upper[n - 1] ? tail[n - 1] : Math.max(0, total - tail[n - 1]);
  return out;
}
