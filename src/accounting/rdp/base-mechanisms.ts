/**
 * Rényi DP of the base (unsampled) mechanisms at one order alpha > 1. Each function returns an
 * upper bound, rounded up by a few ulps; Infinity only where there is no privacy.
 */
import { logSumExp } from '../../math/log-space.js';
import { normalLogCdf } from '../../math/normal.js';

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
  return up(order / (2 * noiseMultiplier * noiseMultiplier));
}

/**
 * Laplace mechanism with noise multiplier b (scale / L1 sensitivity), Mironov 2017, Prop. 6:
 *   eps(alpha) = 1/(alpha-1) log( alpha/(2alpha-1) e^{(alpha-1)/b} + (alpha-1)/(2alpha-1) e^{-alpha/b} ),
 * never above the pure-DP value 1/b. For the discrete Laplace (exact samplers) the pure-DP bound
 * and the zCDP bound of pure DP (Bun & Steinke 2016, Prop. 3.3: alpha eps^2 / 2) are used instead.
 */
export function laplaceRdp(noiseMultiplier: number, order: number, discrete = false): number {
  const pure = 1 / noiseMultiplier;
  if (discrete) return up(Math.min(pure, (order * pure * pure) / 2));
  const a = order;
  const logTerm = logSumExp([Math.log(a / (2 * a - 1)) + (a - 1) / noiseMultiplier, Math.log((a - 1) / (2 * a - 1)) - a / noiseMultiplier]);
  const slack = 8 * EPS * (Math.abs(a / noiseMultiplier) + 2);
  return Math.min(up(pure), up((logTerm + slack) / (a - 1)));
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
