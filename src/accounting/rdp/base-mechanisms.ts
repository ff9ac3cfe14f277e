/**
 * Rényi DP of the base (unsampled) mechanisms at one order alpha > 1. Each function returns an
 * upper bound, rounded up by a few ulps; Infinity only where there is no privacy.
 */
import { logSumExp } from '../../math/log-space.js';
import { normalLogCdf } from '../../math/normal.js';
import { accountedNoiseMultiplier } from '../extreme-noise.js';

const EPS = Number.EPSILON;

/** Rounds a positive bound up by a relative 8 ulps. */
function up(x: number): number {
  return x * (1 + 8 * EPS);
}

/**
 * Gaussian mechanism with noise multiplier z (std / L2 sensitivity): alpha / (2 z^2)
 * (Mironov 2017, Prop. 7; `003` Thm. B.1). The discrete Gaussian on a grid has the same bound
 * (Canonne, Kamath, Steinke 2020, Thm. 4 — per coordinate, and for products, Sec. 4).
 */
export function gaussianRdp(noiseMultiplier: number, order: number): number {
  if (order === Infinity) return Infinity;
  const z = accountedNoiseMultiplier(noiseMultiplier);
  return up(order / (2 * z * z));
}

/**
 * Laplace mechanism with noise multiplier b (scale / L1 sensitivity), Mironov 2017, Prop. 6:
 *   eps(alpha) = 1/(alpha-1) log( alpha/(2alpha-1) e^{(alpha-1)/b} + (alpha-1)/(2alpha-1) e^{-alpha/b} ),
 * never above the pure-DP value 1/b. For the discrete Laplace (exact samplers) without its grid
 * scale, the pure-DP bound and the zCDP bound of pure DP (Bun & Steinke 2016, Prop. 3.3:
 * alpha eps^2 / 2) are used; with the grid scale of a one-dimensional release,
 * `discreteLaplaceRdp`.
 */
export function laplaceRdp(noiseMultiplier: number, order: number, discrete = false, gridScale?: number): number {
  const pure = 1 / noiseMultiplier;
  if (discrete && gridScale !== undefined) return Math.min(up(pure), discreteLaplaceRdp(gridScale, Math.floor((gridScale / noiseMultiplier) * (1 + 4 * EPS)), order));
  if (discrete) return up(Math.min(pure, (order * pure * pure) / 2));
  const a = order;
  const logTerm = logSumExp([Math.log(a / (2 * a - 1)) + (a - 1) / noiseMultiplier, Math.log((a - 1) / (2 * a - 1)) - a / noiseMultiplier]);
  const slack = 8 * EPS * (Math.abs(a / noiseMultiplier) + 2);
  return Math.min(up(pure), up((logTerm + slack) / (a - 1)));
}

/**
 * The exact Rényi divergence D_alpha(DL(0) || DL(v)) of the discrete Laplace P(k) ∝ e^{-t|k|},
 * t = 1/b, against its shift by an integer v >= 1 (the normalisers cancel). With the privacy loss
 * L(k) = t(|k - v| - |k|) under P: L = tv for k <= 0, -tv for k >= v, t(v - 2k) in between, so
 *   E_P[e^{(alpha-1)L}] = [e^{(alpha-1)tv} + e^{-alpha tv}
 *                          + (1 - e^{-t}) e^{(alpha-1)tv} sum_{k=1}^{v-1} e^{-(2alpha-1)tk}] / (1 + e^{-t}).
 * It is nondecreasing in v: going from v to v + 1 multiplies the loss's exponential by
 * w = e^{(alpha-1)t} on {k <= v} and by 1/w on {k >= v + 1}, which changes the sum by
 * (w - 1)(A - B/w) with A >= P(k <= 0) e^{(alpha-1)tv} >= P(k >= v + 1) e^{-(alpha-1)tv} >= B/w
 * (symmetry of P); so the bound at the largest shift covers every smaller one, and by the
 * reflection k -> v - k the divergence in the other direction is the same. The sum is evaluated
 * with expm1/log1p against its value 1 at alpha = 1 and rounded up by a slack far above its error.
 */
export function discreteLaplaceRdp(gridScale: number, shift: number, order: number): number {
  const t = 1 / gridScale;
  const v = Math.max(1, shift);
  const a = order;
  if (a === Infinity) return up(t * v);
  const e1 = Math.expm1((a - 1) * t * v); // e^{(a-1)tv} - 1
  const c = (2 * a - 1) * t;
  // sum_{k=1}^{v-1} e^{-ck} = e^{-c} (1 - e^{-c(v-1)}) / (1 - e^{-c})
  const geometric = v > 1 ? (Math.exp(-c) * -Math.expm1(-c * (v - 1))) / -Math.expm1(-c) : 0;
  const oneMinusEt = -Math.expm1(-t);
  // numerator - denominator, the denominator being 1 + e^{-t}:
  //   e1 + (e^{-a tv} - e^{-t}) + (1 - e^{-t}) (1 + e1) geometric
  const middle = oneMinusEt * (1 + e1) * geometric;
  const excess = e1 + (Math.exp(-a * t * v) - Math.exp(-t)) + middle;
  const ratio = excess / (1 + Math.exp(-t));
  const value = Math.log1p(ratio) / (a - 1);
  // Each term carries a relative error of a few ulps of magnitudes <= 1 + e1 + middle.
  const slack = (16 * EPS * (2 + e1 + middle)) / (a - 1);
  return Math.max(0, up(value + slack));
}

/**
 * k-ary randomized response with noise parameter p (replace-one): the exact Rényi divergence
 * between the output distributions of two different inputs, P = (a, b, b, ...) and Q = (b, a, b, ...)
 * with a = 1 - p + p/k, b = p/k:
 *   D_alpha(P || Q) = 1/(alpha-1) log( a^alpha b^{1-alpha} + b^alpha a^{1-alpha} + (k-2) b ).
 */
export function randomizedResponseRdp(noiseParameter: number, numBuckets: number, order: number): number {
  const p = noiseParameter;
  const k = numBuckets;
  if (p === 0) return Infinity;
  if (p === 1) return 0;
  const logA = Math.log1p(-p + p / k);
  const logB = Math.log(p / k);
  const terms = [order * logA + (1 - order) * logB, order * logB + (1 - order) * logA];
  if (k > 2) terms.push(Math.log(k - 2) + logB);
  const slack = 8 * EPS * (order * (Math.abs(logA) + Math.abs(logB)) + 4);
  return Math.max(0, up((logSumExp(terms) + slack) / (order - 1)));
}

/**
 * Objective perturbation for GLMs (`003`, Thm. 3.2): with s = L / sigma,
 *   eps(alpha) = -log(1 - beta/lambda) + s^2/2 + 1/(alpha-1) log E_{X ~ N(0, s^2)}[e^{(alpha-1)|X|}],
 * and the half-normal moment in closed form, E[e^{t|X|}] = 2 e^{t^2 s^2 / 2} Phi(t s).
 */
export function objectivePerturbationRdp(
  params: { noiseStd: number; lipschitz: number; smoothness: number; regularization: number },
  order: number,
): number {
  const s = params.lipschitz / params.noiseStd;
  const t = order - 1;
  const logMoment = Math.LN2 + (t * t * s * s) / 2 + normalLogCdf(t * s);
  const value = -Math.log1p(-params.smoothness / params.regularization) + (s * s) / 2 + logMoment / t;
  return up(value + 8 * EPS * (Math.abs(logMoment) / t + s * s + 1));
}
