/**
 * Shared pieces of the RDP subsampling bounds (poisson-gaussian.ts, poisson-general.ts,
 * without-replacement.ts): evaluation of integer-order series in log space, rounded up, and their
 * extension to fractional orders by convexity.
 */
import { InvalidParameterError } from '../../errors.js';
import { log1pExp, logSumExp } from '../../math/log-space.js';

const EPS = Number.EPSILON;

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

