/**
 * Rényi DP of a Poisson-subsampled mechanism given only the RDP curve of the mechanism:
 * Zhu & Wang 2019, "Poisson Subsampled Rényi Differential Privacy" (ICML), Thm. 6, the general
 * upper bound (add/remove-one adjacency).
 */
import { InvalidParameterError } from '../../../errors.js';
import { logBinomial } from '../../../math/gamma.js';
import { requireProbability } from '../../../validate.js';
import {
  evaluateBaseRdp,
  interpolateIntegerOrders,
  logExpm1,
  MAX_SERIES_ORDER,
  rdpFromLogExcessTerms,
  requireOrder,
  type RdpCurve,
} from '../series.js';

const EPS = Number.EPSILON;
const LOG3 = Math.log(3);

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
