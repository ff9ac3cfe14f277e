/**
 * Rényi DP amplification by sampling WITHOUT replacement (a uniformly random subset of m of the
 * n records, gamma = m / n), replace-one adjacency: Wang, Balle & Kasiviswanathan 2019,
 * "Subsampled Rényi Differential Privacy and Analytical Moments Accountant" (AISTATS), Thm. 9.
 * The thesis `004` Thm. 3.2 is its special case eps(Infinity) = Infinity.
 */
import { InvalidParameterError } from '../../errors.js';
import { logBinomial } from '../../math/gamma.js';
import { requireProbability } from '../../validate.js';
import {
  evaluateBaseRdp,
  interpolateIntegerOrders,
  logExpm1,
  MAX_SERIES_ORDER,
  rdpFromLogExcessTerms,
  requireOrder,
  type RdpCurve,
} from './series.js';

const LOG2 = Math.LN2;
const LOG4 = 2 * Math.LN2;

/**
 * Wang, Balle & Kasiviswanathan 2019, Thm. 9 at integer alpha >= 2:
 *
 *   (alpha - 1) eps'(alpha) <= log(1 + gamma^2 C(alpha,2) min{4 (e^eps(2) - 1), e^eps(2) min{2, (e^eps(inf) - 1)^2}}
 *                                 + sum_{j=3}^{alpha} gamma^j C(alpha,j) e^((j-1) eps(j)) min{2, (e^eps(inf) - 1)^j}),
 *
 * all terms positive; `logExpm1Inf` = log(e^eps(inf) - 1) (Infinity when eps(inf) is infinite,
 * which gives the thesis' form 4 (e^eps(2) - 1) and 2 e^((j-1) eps(j))).
 */
function wbkIntegerBound(gamma: number, baseRdp: RdpCurve, alpha: number, logExpm1Inf: number): number {
  const logGamma = Math.log(gamma);
  const terms: number[] = [];
  let maxWeight = 0;
  for (let j = 2; j <= alpha; j++) {
    const eps = evaluateBaseRdp(baseRdp, j);
    const pureCap = Math.min(LOG2, j * logExpm1Inf); // log min{2, (e^eps(inf) - 1)^j}
    const moment = j === 2 ? Math.min(LOG4 + logExpm1(eps), eps + pureCap) : (j - 1) * eps + pureCap;
    const logC = logBinomial(alpha, j);
    const a = j * logGamma;
    const term = a + logC + moment;
    terms.push(term);
    if (Number.isFinite(term)) {
      maxWeight = Math.max(maxWeight, 2 + Math.abs(a) + Math.abs(logC) + (j - 1) * eps + Math.abs(moment) + Math.abs(pureCap));
    }
  }
  return rdpFromLogExcessTerms(terms, maxWeight, alpha);
}

/**
 * Upper bound on the Rényi DP at `order` of M o SampleWithoutReplacement with
 * `samplingRatio` = m / n, for ANY mechanism M whose RDP under replace-one adjacency is bounded
 * by `baseRdp` (e.g. the Gaussian with L2 sensitivity 2 c for per-record clip norm c:
 * order * 4c^2 / (2 sigma^2)): Wang, Balle & Kasiviswanathan 2019, Thm. 9, which holds at integer
 * orders >= 2. It uses the refinement by baseRdp(Infinity) (the pure-DP epsilon of M) when that
 * is finite; Infinity, or NaN from a curve undefined at Infinity, disables it (the bound is
 * increasing in eps(Infinity), so that is always safe).
 *
 * A fractional order is bounded by linear interpolation of (alpha - 1) RDP(alpha) between the
 * neighbouring integer orders, valid because that function is convex in alpha (van Erven &
 * Harremoës 2014; `interpolateIntegerOrders`) — an upper bound, looser than an exact value.
 * The result is never above `baseRdp(order)` (subsampling cannot hurt: the subsampled pairs
 * are replace-one neighbours, and Rényi divergence is jointly quasi-convex); at ratio 1 Thm. 9
 * is looser than the base curve, so the base RDP is returned. Orders above `MAX_SERIES_ORDER`
 * (and Infinity) return baseRdp(order). Cost O(order) calls of baseRdp.
 *
 * @example withoutReplacementRdp(0.01, (a) => (a * 4) / (2 * 1.1 ** 2), 8)
 */
export function withoutReplacementRdp(samplingRatio: number, baseRdp: RdpCurve, order: number): number {
  const gamma = requireProbability('samplingRatio', samplingRatio);
  const alpha = requireOrder('order', order);
  if (typeof baseRdp !== 'function') throw new InvalidParameterError('baseRdp', baseRdp, 'a function order -> RDP');
  if (gamma === 0) return 0;
  const base = evaluateBaseRdp(baseRdp, alpha);
  if (gamma === 1 || alpha > MAX_SERIES_ORDER) return base;
  const epsInf = baseRdp(Infinity);
  const logExpm1Inf = typeof epsInf === 'number' && epsInf >= 0 ? logExpm1(epsInf) : Infinity;
  const bound = interpolateIntegerOrders(alpha, (a) =>
    Math.min(wbkIntegerBound(gamma, baseRdp, a, logExpm1Inf), evaluateBaseRdp(baseRdp, a)),
  );
  return Math.min(bound, base);
}
