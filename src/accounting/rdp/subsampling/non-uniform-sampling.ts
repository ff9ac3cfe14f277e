/**
 * Rényi DP of ONE record selected with public, data-independent probabilities w_1..w_n
 * (sum w_i = 1, every w_i <= c < 1), then a mechanism M run on it; replace-one adjacency.
 * `004` (Berthier 2019) Lemma 4.1 / Thm. 4.2, which generalise Wang, Balle & Kasiviswanathan 2019
 * (WBK, AISTATS) Thm. 9 from uniform sampling (gamma = m / n) to such weights, gamma -> c.
 *
 * ## What is proven, and which sum
 *
 * The thesis prints, for integer alpha >= 2 (eps = the RDP curve of M),
 *
 *   eps#(alpha) <= 1/(alpha-1) log(1 + 4 c^2 C(alpha,2) (e^eps(2) - 1) + 2 sum_{j=1}^{alpha} c^j C(alpha,j) e^((j-1) eps(j))),
 *
 * while WBK's Thm. 9, whose proof it follows, sums from j = 3. Both hold: the printed sum only
 * adds the positive terms j = 1, 2 to the one below, which we prove and use (it is the smaller).
 * Let the neighbouring datasets differ in record i (x_i vs x_i'), P and Q the output laws,
 * X = M(x_i), Y = M(x_i'), M_k = M(x_k). Then P = w_i X + sum_{k != i} w_k M_k and Q likewise
 * with Y, so P - Q = w_i (X - Y) (`004` App. A.7), and for integer alpha
 *
 *   E_Q[(P/Q)^alpha] = sum_{j=0}^{alpha} C(alpha,j) w_i^j E_Q[((X - Y)/Q)^j]
 *                   <= 1 + 0 + sum_{j=2}^{alpha} C(alpha,j) w_i^j integral |X - Y|^j Q^(1-j)
 *
 * (the j = 1 term is w_i integral (X - Y) = 0: the thesis' j = 1 term is not needed). u -> u^(1-j)
 * is convex, so Q^(1-j) <= sum_{k != i} w_k M_k^(1-j) + w_i Y^(1-j) pointwise (Jensen, weights
 * summing to 1): each integral is at most zeta_j^j, the ternary |chi|^j moment
 * sup integral |X - Y|^j Z^(1-j) over X, Y, Z the outputs of M on three records, pairwise
 * replace-one neighbours as one-record datasets (Lemma 4.1 with the thesis' "r" = Q). Finally
 * w_i^j <= c^j, and zeta_j^j is bounded from the RDP of M as in WBK:
 * - |X - Y|^j <= X^j + Y^j gives zeta_j^j <= 2 e^((j-1) eps(j));
 * - for j = 2, (X - Y)^2 <= 2 (X - Z)^2 + 2 (Y - Z)^2 gives zeta_2^2 <= 4 (e^eps(2) - 1);
 * - |X - Y| <= (e^eps(inf) - 1) Y (pure DP) gives zeta_j^j <= (e^eps(inf) - 1)^j e^((j-1) eps(j)).
 * So WBK's min{.,.} refinements hold unchanged: they bound M's ternary moments, not the sampling.
 * That is `withoutReplacementRdp` with gamma = c. Two more bounds hold and are used:
 * - never above eps(alpha): P and Q are mixtures with the same weights of pairs of replace-one
 *   neighbours (all equal but (X, Y)), and Rényi divergence is jointly quasi-convex;
 * - for a Gaussian M, the tighter ternary moments derived in `without-replacement.ts` (its steps
 *   3-8 bound zeta_j for any three pairwise neighbouring inputs; its step 1 is replaced by the
 *   decomposition above, and its step 2 is the expansion above): `withoutReplacementGaussianRdpCurve`
 *   with gamma = c.
 * A fractional order gets the convexity interpolation of `interpolateIntegerOrders` (proven for
 * any pair of distributions), as in `without-replacement.ts`; only integer orders use the theorem.
 * At c = 1/n (uniform weights) the release is sampling one record of n without replacement, and
 * every value here equals `sampledWithoutReplacement(n, 1, M)`'s.
 *
 * ## Conditions
 *
 * 0 < c < 1 (checked by `nonUniformSampledEvent`); the weights are public (the same on both
 * datasets: replace-one only, `neighboring.ts` refuses add/remove); M's RDP must hold for any two
 * single records (any event's curve under replace-one does). c >= 1/n is implied by sum w_i = 1;
 * the event does not record n, so it cannot be checked here.
 */
import { requireOpenUnit } from '../../../validate.js';
import type { RdpCurve } from '../series.js';
import { withoutReplacementGaussianRdpCurve, withoutReplacementRdp } from './without-replacement.js';

/**
 * Upper bound on the RDP at `order` of M after one record is selected with public weights
 * <= `maxWeight` = c (file comment; `004` Thm. 4.2 with the sum from j = 3 as in WBK Thm. 9, and
 * its refinements), for any M whose replace-one RDP is bounded by `baseRdp`. Never above
 * baseRdp(order); orders above `MAX_SERIES_ORDER` and Infinity give baseRdp(order).
 *
 * @example nonUniformSampledRdp(0.01, (a) => a / (2 * 1.1 ** 2), 8)
 */
export function nonUniformSampledRdp(maxWeight: number, baseRdp: RdpCurve, order: number): number {
  return withoutReplacementRdp(requireOpenUnit('maxWeight', maxWeight), baseRdp, order);
}

/**
 * The RDP curve of a Gaussian mechanism (noise multiplier z, the replace-one L2 sensitivity of
 * one record's query) after one record is selected with public weights <= `maxWeight` = c: the
 * Gaussian-specific ternary moments of `without-replacement.ts` with gamma = c (file comment).
 *
 * @example nonUniformSampledGaussianRdpCurve(0.01, 2)(13)
 */
export function nonUniformSampledGaussianRdpCurve(maxWeight: number, noiseMultiplier: number): RdpCurve {
  return withoutReplacementGaussianRdpCurve(requireOpenUnit('maxWeight', maxWeight), noiseMultiplier);
}
