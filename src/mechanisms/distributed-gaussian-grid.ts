/**
 * Distributed discrete Gaussian noise on a grid: K parties each add an independent share D_s
 * (exact discrete Gaussian of integer parameter s, in grid steps) to their own rounded value, and
 * only the SUM of the K noisy values is released (secure aggregation, `004` Sec. 5.4 / Fig. 13;
 * Kairouz, Liu & Steinke 2021, "The Distributed Discrete Gaussian Mechanism for Federated Learning
 * with Secure Aggregation", ICML, KLS). The sum of discrete Gaussians is NOT a discrete Gaussian;
 * what dpfit accounts is the following lemma (KLS state the same series as their tau term).
 *
 * ## Lemma (sums of discrete Gaussians)
 *
 * Notation of `accounting/discrete-coupling.ts`: rho_t(c) = sum_j exp(-(j - c)^2 / (2 t^2)),
 * D_t(k) = exp(-k^2 / (2 t^2)) / rho_t(0), e(t) = 2 sum_{m >= 1} exp(-2 pi^2 t^2 m^2),
 * xi(t) = log((1 + e(t)) / (1 - e(t))). Let X_1, ..., X_m be independent, X_i ~ D_s. Then for every
 * integer x,
 *
 *   e^{-Xi_m} <= P[X_1 + ... + X_m = x] / D_{sqrt(m) s}(x) <= e^{Xi_m},
 *   Xi_m = sum_{k=1}^{m-1} xi(s sqrt(k / (k + 1))) <= (m - 1) xi(s / sqrt(2)).
 *
 * Proof. (1) Two discrete Gaussians a, b > 0: completing the square,
 *   j^2 / a^2 + (x - j)^2 / b^2 = x^2 / S^2 + (j - x a^2 / S^2)^2 / tau^2,  S^2 = a^2 + b^2,
 *   tau^2 = a^2 b^2 / S^2, so (D_a * D_b)(x) = exp(-x^2 / (2 S^2)) rho_tau(x a^2 / S^2) / (rho_a(0) rho_b(0)).
 * By Poisson summation (discrete-coupling.ts, step (1)) rho_tau(c) lies in
 * sqrt(2 pi) tau [1 - e(tau), 1 + e(tau)] for every real c, so (D_a * D_b)(x) = C w(x) exp(-x^2 / (2 S^2))
 * with C a constant and w(x) in [1 - e(tau), 1 + e(tau)]. Both (D_a * D_b) and D_S sum to 1, so
 * C rho_S(0) lies in [1/(1 + e), 1/(1 - e)] and the ratio (D_a * D_b)(x) / D_S(x) = C w(x) rho_S(0)
 * lies in [e^{-xi(tau)}, e^{xi(tau)}].
 * (2) Induction on m: if the pmf p_k of X_1 + ... + X_k is within e^{+-Xi_k} of D_{sqrt(k) s}
 * pointwise, then p_{k+1} = p_k * D_s is within e^{+-Xi_k} of D_{sqrt(k) s} * D_s (a convolution of
 * non-negative terms keeps pointwise factors), which by (1) with a^2 = k s^2, b^2 = s^2,
 * tau^2 = s^2 k / (k + 1) is within e^{+-xi(s sqrt(k/(k+1)))} of D_{sqrt(k+1) s}. e(t) decreases in t
 * and k / (k + 1) >= 1/2. QED
 * (Checked numerically: the exact pmf of the sum, computed by convolution at 60 digits for
 * s in {0.5, 0.7, 1} and m = 2..5, stays within the bound; at s = 1, m = 2 the worst log ratio is
 * 1.0e-4 against Xi = 2.1e-4. At s = 0.5, m = 4 the Rényi divergence of order 2 of the sum shifted
 * by one is 1.032 > 2 / (2 m s^2) = 1: without the correction the sum would be over-credited.)
 *
 * ## What is accounted
 *
 * The released sum, in grid steps, is k + X_1 + ... + X_K (k the rounded query: the sum of the
 * parties' rounded values; a neighbour changes ONE party's value, by at most the sensitivity
 * Delta/g + sqrt(d) in grid steps, `grid-noise.ts`). An observer that knows some shares (its own,
 * or those of colluding parties) subtracts them; what protects a record is the sum of the m shares
 * it does not know (`countedShares`). By the lemma (coordinates independent), that release is
 * pointwise within e^{+-d Xi_m} of the single discrete Gaussian release with parameter sqrt(m) s,
 * which the smoothing coupling (discrete-coupling.ts, (a)) turns into the continuous Gaussian
 * mechanism with std sqrt(m s^2 - 64). The event records gridNoiseStd S = an integer <= sqrt(m) s
 * and noiseMultiplier S / (sensitivity in grid steps), rounded down: accounting the continuous
 * Gaussian of std sqrt(S^2 - 64) <= sqrt(m s^2 - 64) is pessimistic (more noise is a
 * post-processing of less). The factor: s >= MIN_GRID_NOISE_STD = 1024 makes
 * s / sqrt(2) >= 724 > 8, so Xi_m <= (m - 1) xi(8), and with m <= MAX_SHARES = 2^16 the per-sample
 * factor is below 2^16 times the coupling's own xi(8) ~ 9e-549; discrete-coupling.ts's one-ulp
 * argument (it needs the total over < 2^100 samples below 2^-1074 / 5) still holds with room to
 * spare (2^116 * 9e-549 < 1e-513). So the accountants' existing treatment of gridded discrete
 * Gaussians (one ulp on epsilon and delta) covers the lemma's correction as well.
 *
 * With m = 1 the event is exactly a single share's (a party's own noise, as local DP).
 */
import type { GaussianEvent } from '../accounting/events/types.js';
import { gaussianEvent } from '../accounting/events/constructors.js';
import { InvalidParameterError } from '../errors.js';
import { optionNames, rejectUnknownOptions, requireInteger, requirePositive } from '../validate.js';
import { GRID_RESOLUTION, griddedGaussianEffectiveMultiplier, MIN_GRID_NOISE_STD, powerOfTwoAtMost } from './grid-noise.js';

/** At most this many shares are summed (the lemma's factor stays far below one ulp: module comment). */
export const MAX_SHARES = 2 ** 16;
/** Largest share parameter, in grid steps (the exact sampler's range, as `grid-noise.ts`). */
const MAX_SHARE_NOISE = 2 ** 46;
const U = Number.EPSILON / 2;

export interface DistributedGridOptions {
  /** The exact L2 sensitivity of the summed query (one party's value changes). */
  readonly sensitivity: number;
  /** The accounted noise multiplier of the sum of `countedShares` shares must be at least this. */
  readonly noiseMultiplier: number;
  readonly dimension: number;
  /** K: the parties, each adding one share. */
  readonly shares: number;
  /** m <= K: the shares an observer does not know (what the guarantee counts). */
  readonly countedShares: number;
  /** A public bound on one party's floating-point error beyond the exact sensitivity (added to it). */
  readonly roundingSlack?: number;
}

export interface DistributedGridPlan {
  /** g: the public power-of-two grid every party rounds to. */
  readonly granularity: number;
  /** s: each party's integer discrete Gaussian parameter, in grid steps. */
  readonly shareNoiseStd: number;
  readonly shares: number;
  readonly countedShares: number;
  /** Delta/g + sqrt(d), rounded up: the sum's L2 sensitivity in grid steps. */
  readonly gridSensitivity: number;
  /** g sqrt(K) s: the std of the whole sum's noise, in the query's units. */
  readonly sumNoiseStd: number;
  /** The event of one release of the sum, for an observer that does not know `countedShares` shares. */
  readonly event: GaussianEvent;
  /** The event of one party's value with its own share alone (what holds if every share but its own is known). */
  readonly shareEvent: GaussianEvent;
}

/** An integer <= sqrt(m) s (exactly: the float square root may round up to the next integer). */
function floorSqrtTimes(m: number, s: number): number {
  const square = BigInt(m) * BigInt(s) * BigInt(s);
  let r = BigInt(Math.floor(Math.sqrt(m) * s));
  while (r * r > square) r -= 1n;
  while ((r + 1n) * (r + 1n) <= square) r += 1n;
  return Number(r);
}

/** The event of the sum of m shares of parameter s (module comment): S = floor(sqrt(m) s), multiplier S / gridSensitivity rounded down. */
function sumEvent(m: number, s: number, gridSensitivity: number): GaussianEvent {
  const S = m === 1 ? s : floorSqrtTimes(m, s);
  return gaussianEvent((S / gridSensitivity) * (1 - 4 * U), { discrete: true, gridNoiseStd: S });
}

const DISTRIBUTED_GRID_OPTIONS = optionNames<DistributedGridOptions>({ sensitivity: true, noiseMultiplier: true, dimension: true, shares: true, countedShares: true, roundingSlack: true });

/**
 * The grid and the per-party share for a distributed Gaussian release whose accounted multiplier,
 * for an observer missing `countedShares` shares, is at least `noiseMultiplier` (module comment).
 * The grid is the largest power of two with g sqrt(d) <= 2^-14 Delta and a share of at least 1024
 * steps; s is the smallest integer whose event meets the target through the accountants'
 * arithmetic.
 */
export function planDistributedGaussianGrid(options: DistributedGridOptions): DistributedGridPlan {
  rejectUnknownOptions(options, DISTRIBUTED_GRID_OPTIONS, 'planDistributedGaussianGrid');
  const z = requirePositive('noiseMultiplier', options.noiseMultiplier);
  const d = requireInteger('dimension', options.dimension, 1);
  const K = requireInteger('shares', options.shares, 1, MAX_SHARES);
  const m = requireInteger('countedShares', options.countedShares, 1, K);
  const slack = options.roundingSlack ?? 0;
  if (!(slack >= 0 && Number.isFinite(slack))) throw new InvalidParameterError('roundingSlack', slack, 'a finite number >= 0');
  const delta = (requirePositive('sensitivity', options.sensitivity) + slack) * (1 + 4 * U);
  if (!Number.isFinite(delta) || !Number.isFinite(z)) throw new InvalidParameterError('sensitivity', options.sensitivity, 'finite, with a finite noise multiplier');
  const granularity = powerOfTwoAtMost(Math.min((GRID_RESOLUTION * delta) / Math.sqrt(d), (z * delta) / (2 * MIN_GRID_NOISE_STD * Math.sqrt(m))));
  if (!(granularity >= 2 ** -960)) throw new InvalidParameterError('sensitivity', options.sensitivity, 'large enough that the grid stays above 2^-960 (normal doubles)');
  const gridSensitivity = (delta / granularity + Math.sqrt(d)) * (1 + 4 * U);
  const target = z * (1 + 1e-12);
  let s = Math.max(MIN_GRID_NOISE_STD, Math.ceil((target * gridSensitivity) / Math.sqrt(m)));
  if (s > MAX_SHARE_NOISE) throw new InvalidParameterError('noiseMultiplier', z, `small enough that each share spans at most 2^46 grid steps (it would span ${s})`);
  const accounted = (steps: number) => {
    const e = sumEvent(m, steps, gridSensitivity);
    return griddedGaussianEffectiveMultiplier(e.noiseMultiplier, e.gridNoiseStd as number);
  };
  while (accounted(s) < target) s = Math.max(s + 1, Math.ceil(s * (1 + 1e-12)));
  return Object.freeze({
    granularity,
    shareNoiseStd: s,
    shares: K,
    countedShares: m,
    gridSensitivity,
    sumNoiseStd: granularity * Math.sqrt(K) * s,
    event: sumEvent(m, s, gridSensitivity),
    shareEvent: sumEvent(1, s, gridSensitivity),
  });
}
