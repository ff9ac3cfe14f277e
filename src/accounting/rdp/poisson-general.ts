/**
 * Rényi DP of a Poisson-subsampled mechanism given only the RDP curve of the mechanism:
 * Zhu & Wang 2019, "Poisson Subsampled Rényi Differential Privacy" (ICML), Thm. 6, the general
 * upper bound (add/remove-one adjacency). Also home of the helpers shared with
 * `without-replacement.ts`: evaluation of integer-order bounds in log space and their extension
 * to fractional orders by convexity.
 */
import { InvalidParameterError } from '../../errors.js';
import { logBinomial } from '../../math/gamma.js';
import { log1pExp, logSumExp } from '../../math/log-space.js';
import { requireProbability } from '../../validate.js';

const EPS = Number.EPSILON;
const LOG3 = Math.log(3);

/**
 * Orders above this are not expanded (the series cost O(order)): the subsampling bounds return
 * the base RDP there, which is always valid. No useful (epsilon, delta) comes from such orders.
 */
export const MAX_SERIES_ORDER = 65536;

/** An RDP curve: order -> RDP at that order (>= 0, possibly Infinity). */
export type RdpCurve = (order: number) => number;

/** log(e^x - 1) for x >= 0, accurate for tiny and huge x (-Infinity at 0, Infinity at Infinity). */
export function logExpm1(x: number): number {
  return x > 1 ? x + Math.log1p(-Math.exp(-x)) : Math.log(Math.expm1(x));
}

/** The order check shared by the subsampling bounds: a number > 1 (Infinity allowed). */
export function requireOrder(param: string, order: unknown): number {
  if (typeof order !== 'number' || !(order > 1)) throw new InvalidParameterError(param, order, '> 1 (Infinity allowed)');
  return order;
}

/** Calls the base curve and checks its answer: a number >= 0 or Infinity (never NaN). */
export function evaluateBaseRdp(baseRdp: RdpCurve, order: number): number {
  const value = baseRdp(order);
  if (typeof value !== 'number' || !(value >= 0)) {
    throw new InvalidParameterError(`baseRdp(${order})`, value, 'a number >= 0 (Infinity allowed)');
  }
  return value;
}

/**
 * (1 / (alpha - 1)) log(1 + S), S = sum_i exp(logTerms[i]), rounded up: each log-term is assembled
 * from parts whose magnitudes sum to at most `maxWeight`, so it carries an absolute error below
 * 8 EPS maxWeight; the sum adds 2 EPS per term. Returns Infinity if any term is +Infinity.
 */
export function rdpFromLogExcessTerms(logTerms: number[], maxWeight: number, alpha: number): number {
  const logS = logSumExp(logTerms);
  if (logS === Infinity) return Infinity;
  const slack = 8 * EPS * maxWeight + 2 * EPS * (logTerms.length + 2);
  return rdpFromLogExcess(logS + slack, alpha);
}

/**
 * log(1 + e^logExcess) / (alpha - 1), rounded up (4 EPS for the last two operations); a positive
 * excess too small for a double gives the smallest positive double, not 0.
 */
export function rdpFromLogExcess(logExcess: number, alpha: number): number {
  if (logExcess === -Infinity) return 0;
  const rdp = (log1pExp(logExcess) / (alpha - 1)) * (1 + 4 * EPS);
  return rdp > 0 ? rdp : Number.MIN_VALUE;
}

/**
 * Extends a bound known at integer orders >= 2 to any order alpha > 1 by convexity: for any pair of
 * distributions, (alpha - 1) D_alpha is convex in alpha (it is the log of the moment function
 * alpha -> integral of p^alpha q^(1-alpha); van Erven & Harremoës 2014, "Rényi divergence and
 * Kullback-Leibler divergence", Thm. 11 and its proof), hence so is (alpha - 1) RDP(alpha), a
 * supremum of such functions, and (alpha - 1) RDP(alpha) -> a value <= 0 as alpha -> 1. With
 * a = floor(alpha) and upper bounds U(a), U(a + 1):
 *
 *   (alpha - 1) RDP(alpha) <= (a + 1 - alpha)(a - 1) U(a) + (alpha - a) a U(a + 1),
 *
 * (the first term is 0 for a = 1), a valid upper bound that is looser than an exact evaluation.
 */
export function interpolateIntegerOrders(alpha: number, boundAtInteger: (order: number) => number): number {
  if (Number.isInteger(alpha)) return boundAtInteger(alpha);
  const a = Math.floor(alpha);
  const upper = a * boundAtInteger(a + 1);
  if (upper === Infinity) return Infinity;
  const lower = a >= 2 ? (a - 1) * boundAtInteger(a) : 0;
  if (lower === Infinity) return Infinity;
  const value = ((a + 1 - alpha) * lower + (alpha - a) * upper) / (alpha - 1);
  return value * (1 + 4 * EPS);
}

/**
 * Zhu & Wang 2019, Thm. 6 at integer alpha >= 2, gamma < 1:
 *
 *   (alpha - 1) eps'(alpha) <= log[(1-gamma)^(alpha-1) (alpha gamma - gamma + 1)
 *        + C(alpha,2) gamma^2 (1-gamma)^(alpha-2) e^eps(2)
 *        + 3 sum_{l=3}^{alpha} C(alpha,l) gamma^l (1-gamma)^(alpha-l) e^((l-1) eps(l))].
 *
 * The first term is the l = 0, 1 part of 1 = sum_l C(alpha,l) gamma^l (1-gamma)^(alpha-l), so
 * the bracket minus 1 is a sum of positive terms, evaluated without cancellation:
 * C(alpha,2) gamma^2 (1-gamma)^(alpha-2) (e^eps(2) - 1) + sum_{l>=3} C(alpha,l) gamma^l
 * (1-gamma)^(alpha-l) (3 e^((l-1) eps(l)) - 1).
 */
function zhuWangIntegerBound(gamma: number, baseRdp: RdpCurve, alpha: number): number {
  const logGamma = Math.log(gamma);
  const log1mGamma = Math.log1p(-gamma);
  const terms: number[] = [];
  let maxWeight = 0;
  for (let l = 2; l <= alpha; l++) {
    const eps = evaluateBaseRdp(baseRdp, l);
    const x = (l - 1) * eps;
    // log(e^x - 1) for l = 2; log(3 e^x - 1) = log 3 + x + log(1 - e^-x / 3) for l >= 3.
    const moment = l === 2 ? logExpm1(eps) : LOG3 + x + Math.log1p(-Math.exp(-x) / 3);
    const logC = logBinomial(alpha, l);
    const a = l * logGamma;
    const b = (alpha - l) * log1mGamma;
    const term = logC + a + b + moment;
    terms.push(term);
    if (Number.isFinite(term)) maxWeight = Math.max(maxWeight, 2 + Math.abs(logC) + Math.abs(a) + Math.abs(b) + x + Math.abs(moment));
  }
  return rdpFromLogExcessTerms(terms, maxWeight, alpha);
}

/**
 * Upper bound on the Rényi DP at `order` of M o PoissonSample (each record kept independently
 * with probability `samplingProbability`, add/remove-one adjacency) for ANY mechanism M whose RDP
 * under add/remove-one adjacency (both directions) is bounded by `baseRdp`: Zhu & Wang 2019,
 * Thm. 6 (the general upper bound; optimal up to an additive log(3)/(alpha - 1) and a factor
 * 1 + O(q), their abstract) at integer orders,
 * extended to fractional orders by convexity (`interpolateIntegerOrders`), and never above
 * `baseRdp(order)` (subsampling cannot hurt: Rényi divergence is jointly quasi-convex).
 * Orders above `MAX_SERIES_ORDER` (and Infinity) return baseRdp(order). Calls baseRdp at
 * 2..ceil(order), O(order) work.
 *
 * For the Gaussian mechanism use the exact `poissonGaussianRdp` instead; this bound is above it
 * by a relative O(q) at small q (and equal at order 2). Unlike true RDP, the bound need not be
 * nondecreasing in the order (its slack shrinks with the order); since the true RDP is, a caller
 * holding a grid may replace each value by the minimum over the larger orders.
 *
 * @example poissonSubsampledRdp(0.01, (a) => a / (2 * 1.1 ** 2), 8)
 */
export function poissonSubsampledRdp(samplingProbability: number, baseRdp: RdpCurve, order: number): number {
  const gamma = requireProbability('samplingProbability', samplingProbability);
  const alpha = requireOrder('order', order);
  if (typeof baseRdp !== 'function') throw new InvalidParameterError('baseRdp', baseRdp, 'a function order -> RDP');
  if (gamma === 0) return 0;
  const base = evaluateBaseRdp(baseRdp, alpha);
  if (gamma === 1 || alpha > MAX_SERIES_ORDER) return base;
  const bound = interpolateIntegerOrders(alpha, (a) => Math.min(zhuWangIntegerBound(gamma, baseRdp, a), evaluateBaseRdp(baseRdp, a)));
  return Math.min(bound, base);
}
