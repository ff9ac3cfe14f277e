/**
 * The privacy loss distribution of ANY epsilon-DP mechanism, and of its Poisson subsampling.
 *
 * Dominating pair. Binary randomized response with parameter epsilon, P = (a, 1 - a) and
 * Q = (1 - a, a) with a = e^eps / (1 + e^eps), dominates every epsilon-DP mechanism: the privacy
 * region of an epsilon-DP mechanism lies inside that of this pair (Kairouz, Oh & Viswanath 2015,
 * "The Composition Theorem for Differential Privacy", Thm. 2.1: any (eps, 0)-DP mechanism's
 * hypothesis-testing region is contained in the randomized-response region; equivalently its
 * hockey-stick divergences are at most the pair's, Zhu, Dong & Wang 2022, Def. 7). The pair is
 * symmetric, so it dominates both directions. Its loss is +eps with P-mass a and -eps with
 * P-mass 1 - a. It is also exact for some mechanisms of the class: e.g. the discrete Laplace with
 * an L1 sensitivity of one grid step (its loss takes only the values +-1/b, with these masses).
 *
 * Poisson subsampling (rate q, add/remove-one). If (P, Q) dominates M in the remove direction,
 * (q P + (1 - q) Q, Q) dominates M o Sample_q in the remove direction and (Q, q P + (1 - q) Q)
 * in the add direction (Zhu, Dong & Wang 2022, Thm. 11). On the two points of the pair:
 *   remove: loss log1p(q expm1(eps)) with mass (1 - a)(1 + q expm1(eps)),
 *           loss log1p(q expm1(-eps)) with mass a (1 + q expm1(-eps));
 *   add:    the negated losses with masses (1 - a) and a (the Q-masses).
 */
import type { PrivacyLossModel } from './loss-model.js';
import { atomicLossModel } from './randomized-response-model.js';

/** Loss models of an epsilon-DP mechanism Poisson-subsampled at rate q (q = 1: not subsampled). */
export function pureDpLossModels(epsilon: number, samplingProbability = 1): { remove: PrivacyLossModel; add?: PrivacyLossModel } {
  const q = samplingProbability;
  const description = `PureDp(epsilon = ${epsilon}${q < 1 ? `, Poisson q = ${q}` : ''})`;
  if (!Number.isFinite(epsilon)) {
    // No privacy: P and Q disjoint; subsampled, as in the non-private case of ../event-components.ts.
    if (q >= 1) return { remove: atomicLossModel(description, [], 1) };
    return {
      remove: atomicLossModel(`${description}, remove direction`, [{ loss: Math.log1p(-q), mass: 1 - q }], q),
      add: atomicLossModel(`${description}, add direction`, [{ loss: -Math.log1p(-q), mass: 1 }], 0),
    };
  }
  const a = 1 / (1 + Math.exp(-epsilon));
  const b = 1 / (1 + Math.exp(epsilon));
  if (q >= 1) {
    return { remove: atomicLossModel(description, [{ loss: epsilon, mass: a }, { loss: -epsilon, mass: b }], 0) };
  }
  const up = q * Math.expm1(epsilon);
  const down = q * Math.expm1(-epsilon);
  const lossUp = Math.log1p(up);
  const lossDown = Math.log1p(down);
  return {
    remove: atomicLossModel(`${description}, remove direction`, [{ loss: lossUp, mass: b * (1 + up) }, { loss: lossDown, mass: a * (1 + down) }], 0),
    add: atomicLossModel(`${description}, add direction`, [{ loss: -lossUp, mass: b }, { loss: -lossDown, mass: a }], 0),
  };
}
