/**
 * The privacy loss distribution of sampling WITHOUT replacement (a uniform subset of m of the n
 * records, p = m / n, replace-one adjacency) of a mechanism M with a SYMMETRIC dominating pair
 * (P, Q): T(P, Q) = T(Q, P) = f and M is f-DP under replace-one adjacency. This holds for the
 * additive pairs of `additive-pair.ts` (Gaussian N(1, z^2) vs N(0, z^2), Laplace; the reflection
 * x -> 1 - x swaps P and Q), for the randomized-response pair of any pure-DP mechanism
 * (`pure-dp-pair.ts`) and for a non-private release (P, Q disjoint, f = 0).
 *
 * 1. The trade-off function of the subsampled mechanism. Dong, Roth & Su 2022 ("Gaussian
 *    differential privacy", JRSS-B), Thm. 4.2: M o Sample_m is C_p(f)-DP with
 *    C_p(f) = min{f_p, f_p^{-1}}**, f_p = p f + (1 - p) Id. Write R = p P + (1 - p) Q. For a test
 *    phi with E_Q phi = alpha, 1 - E_R phi = p (1 - E_P phi) + (1 - p)(1 - alpha), minimised by
 *    the same phi as 1 - E_P phi, so T(Q, R) = p T(Q, P) + (1 - p) Id = f_p and
 *    T(R, Q) = f_p^{-1}. With T(X, Y) = g, sup_phi (E_Y phi - x E_X phi) = 1 + g*(-x), i.e. the
 *    privacy profile of g is delta_g(eps) = H_{e^eps}(Y || X) = 1 + g*(-e^eps) (g* the convex
 *    conjugate), and T(X', Y') >= g iff H_x(Y' || X') <= 1 + g*(-x) for every x > 0 (the
 *    conjugate decides a convex g). The conjugate of a minimum is the maximum of the conjugates
 *    and g** has the conjugate of g, so the profile of C_p(f) at EVERY eps in R is
 *
 *      D(e^eps) = max(delta_A(eps), delta_Ainv(eps)),
 *      delta_A(eps)    = H_{e^eps}(R || Q) = p H_{e^eps'}(P || Q), e^eps' = (e^eps - (1 - p)) / p,
 *                        when e^eps > 1 - p (the event {R > x Q} is {P > x' Q}), else 1 - e^eps
 *                        (the whole space: p P(E) - (x - 1 + p) Q(E) is maximal at E = everything),
 *      delta_Ainv(eps) = H_{e^eps}(Q || R) = 1 - e^eps + e^eps delta_A(-eps),
 *
 *    by H_x(Y || X) = int (Y - x X)_+ = int (Y - x X) + int (x X - Y)_+ = 1 - x + x H_{1/x}(X || Y).
 *    Both hold at every neighbouring pair and in both orders (D is the profile of the one trade-off
 *    function that bounds every ordered pair). `test/accounting/pld/without-replacement.test.ts` checks
 *    them against direct numerical integration of hockey-sticks of Gaussian mixtures.
 *
 * 2. Which term is the maximum, and a pair whose profile is exactly D. With
 *    phi(a, b) = int (a P - b Q)_+, delta_A(x) = phi(p, x - 1 + p) and, by the symmetry of (P, Q),
 *    delta_Ainv(x) = phi(1 - x + x p, x p) for x >= 1 (0 when x (1 - p) >= 1). Both second
 *    arguments exceed the first by u = x - 1, and a -> phi(a, a + u) is nondecreasing (its
 *    derivative int_{aP > (a+u)Q} (P - Q) >= 0), so delta_A >= delta_Ainv for eps >= 0; by the
 *    identity above the reverse holds for eps <= 0. Let L = log(dR/dQ) under A = (R, Q). The
 *    symmetrised pair (P~, Q~) on three pieces: (R, Q) restricted to {L > 0}; (Q, R) restricted
 *    to {L > 0} (a mirror copy, loss -L); and one common atom of mass 1 - R(L > 0) - Q(L > 0)
 *    (>= 0: {L > 0} = {dP/dQ > 1}, and for the symmetric pair a = Q(dP/dQ > 1) = P(dP/dQ < 1)
 *    <= b = Q(dP/dQ < 1), so a <= 1/2 and R(L > 0) + Q(L > 0) = p b + (2 - p) a
 *    <= p (a + b) + 2 (1 - p) a <= 1). Both P~ and Q~ have mass 1 and the pair is symmetric by
 *    construction; for x >= 1 the set
 *    {P~ > x Q~} lies in the first piece, where P~ - x Q~ = R - x Q, so H_x(P~ || Q~) =
 *    H_x(R || Q) = delta_A; for x < 1 the identity and the symmetry give 1 - x + x delta_A(1/x) =
 *    delta_Ainv. Hence H_x(P~ || Q~) = D(x) for every x > 0: (P~, Q~) dominates M o Sample_m in
 *    both orders (Zhu, Dong & Wang 2022, Def. 7) and is the tightest pair doing so, and its
 *    composition dominates the composed mechanism (ZDW 2022, Thm. 10). Its loss distribution:
 *    loss > 0 is A's (the remove direction of `poisson-model.ts`, whose pair is the same
 *    (p P + (1 - p) Q, Q)) restricted to L > 0; loss < 0 is the reverse pair's (its add
 *    direction) restricted to loss < 0; plus the atom at loss 0 (+infinity: A's, e.g. a
 *    non-private M).
 *
 * 3. From D to a discrete PLD: connect the dots (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi
 *    2022), done by `../discretize.ts` on the engine's own grid eps_i = i h. D is convex in x = e^eps
 *    with D(0) = 1, so the piecewise-linear interpolation of D through (0, 1), (x_i, D(x_i)),
 *    constant D(x_k) beyond x_k, lies above D (chords of a convex function; D is nonincreasing).
 *    It is the profile of the discrete PLD with P-mass w_i = x_i (s_{i+1} - s_i) at loss eps_i
 *    (s_i the slope of the chord ending at x_i, s_0 = (D(x_0) - 1) / x_0, s_{k+1} = 0) and mass
 *    D(x_k) at +infinity: H of that PLD is D(x_k) + sum_i w_i (1 - x / x_i)_+, piecewise linear
 *    with slope -sum_{i >= j} w_i / x_i = s_j on (x_{j-1}, x_j) and value D(x_k) at x_k. w_i >= 0
 *    because the slopes of a convex function's chords increase (and s_k <= 0 = s_{k+1}); the total
 *    P-mass is its value at x = 0, 1; its Q-mass sum_i w_i e^{-eps_i} = -s_0 = (1 - D(x_0)) / x_0
 *    <= 1 since H_x >= 1 - x (take E = everything), the rest of Q sits where P~ = 0 (loss -inf).
 *    `../discretize.ts` builds exactly this PLD from the exact P- and Q-masses of the cells of the
 *    model below (a spread in e^{-L} that keeps both masses of each cell; the mass below the
 *    lowest point is moved up to it, which leaves H unchanged at x >= x_0 and is the chord from
 *    (0, 1) below; the mass above the top point is split between it and +infinity), which is why
 *    the model supplies those masses rather than values of D: the grid is the engine's own, and
 *    the accountant's tail budget decides the range. The result dominates D at every eps in R, so
 *    the engine's composition (`../compose.ts`, pessimistic) stays an upper bound.
 *
 * Lower bounds. The composition of (P~, Q~) need not be attained by any pair of datasets, so
 * `epsilonLower` must not come from it: the pair A (and its reverse) IS attained, by neighbours
 * x, x' whose other records all equal x' (the subsample's output is p M(x) + (1 - p) M(x') against
 * M(x') for the worst-case query), the same pair of datasets at every step, so the T-fold
 * composition of A, in each order, is a lower bound (`withoutReplacementLowerModels`, used by the
 * accountant's lower-bound pass).
 */
import type { DpEvent } from '../../events/types.js';
import { nextDown, nextUp } from '../../float-steps.js';
import { pureEpsilon } from '../../pure-dp.js';
import { gaussianPair, laplacePair } from './additive-pair.js';
import { normalizeAtoms, lossTails, type LossAtom, type PrivacyLossModel } from './loss-model.js';
import { poissonSubsampledModel } from './poisson-model.js';
import { pureDpLossModels } from './pure-dp-pair.js';

/** The remove (R, Q) and add (Q, R) loss models of the mixture pair R = p P + (1 - p) Q (`poisson-model.ts`, `pure-dp-pair.ts`). */
export interface MixturePairModels {
  readonly remove: PrivacyLossModel;
  readonly add: PrivacyLossModel;
}

/** Mass of the atoms of `model` with loss exactly 0. */
function atomMassAtZero(model: PrivacyLossModel): number {
  let mass = 0;
  for (const a of model.atoms) if (a.loss === 0) mass += a.mass;
  return mass;
}

/**
 * The symmetrised PLD of step 2 (file comment): the loss of the pair (P~, Q~) whose privacy profile
 * is max(H_x(R || Q), H_x(Q || R)) at every x > 0, built from the two directions of the mixture
 * pair. `pair.remove` must be the loss of (R, Q) and `pair.add` that of (Q, R) for a SYMMETRIC
 * inner pair (P, Q); the caller guarantees both.
 */
export function symmetrizedLossModel(pair: MixturePairModels, description: string): PrivacyLossModel {
  const { remove, add } = pair;
  // R(L > 0): A's P-mass of positive and infinite losses; Q(L > 0): the reverse pair's P-mass of
  // negative losses (loss -L < 0).
  const rPositive = lossTails(remove, 0).above + remove.infinityMass;
  const qPositive = lossTails(add, 0).below - atomMassAtZero(add);
  // The common atom at 0 (loss 0 contributes (1 - x)_+ to H_x): a few ulps more is pessimistic
  // (more P-mass never lowers a hockey-stick, alone or composed).
  const middle = Math.max(0, 1 - rPositive - qPositive) + 4 * Number.EPSILON;
  const atoms: LossAtom[] = [
    ...remove.atoms.filter((a) => a.loss > 0),
    ...add.atoms.filter((a) => a.loss < 0),
    { loss: 0, mass: middle },
  ];
  const lossMax = Math.max(0, remove.lossMax);
  const lossMin = Math.min(0, add.lossMin);
  return {
    description,
    infinityMass: remove.infinityMass,
    atoms: normalizeAtoms(atoms),
    lossMin,
    lossMax,
    cellMasses(edges) {
      // Cut the cells at 0 (inserted if absent): cells ending at or below 0 are the mirror piece
      // (the add direction's loss < 0), cells starting at or above 0 are A's piece (loss > 0);
      // losses exactly 0 of the continuous parts have probability 0.
      const n = edges.length;
      let k = 0;
      while (k < n && edges[k] < 0) k++;
      const inserted = !(k < n && edges[k] === 0);
      const cuts = inserted ? new Float64Array(n + 1) : edges;
      if (inserted) {
        cuts.set(edges.subarray(0, k), 0);
        cuts[k] = 0;
        cuts.set(edges.subarray(k), k + 1);
      }
      const negative = add.cellMasses(cuts);
      const positive = remove.cellMasses(cuts);
      const p = new Float64Array(n + 1);
      const q = new Float64Array(n + 1);
      // Cells c <= k of `cuts` end at or below 0 (cut k is 0); cells c > k start at or above 0 and
      // are cell c - 1 of `edges` when 0 was inserted (cells k and k + 1 of `cuts` are then both
      // parts of cell k of `edges`).
      for (let c = 0; c <= k; c++) {
        p[c] += negative.p[c];
        q[c] += negative.q[c];
      }
      for (let c = k + 1; c < cuts.length + 1; c++) {
        const out = inserted ? c - 1 : c;
        p[out] += positive.p[c];
        q[out] += positive.q[c];
      }
      return { p, q };
    },
  };
}

/** Inner releases whose dominating pair is known and symmetric (file comment). */
export type WithoutReplacementInner = 'gaussian' | 'laplace' | 'nonPrivate';

/** true when `event` (inside sampling without replacement) has a symmetric dominating pair this file handles. */
export function isSymmetricInner(event: DpEvent): event is DpEvent & { kind: WithoutReplacementInner } {
  return event.kind === 'gaussian' || event.kind === 'laplace' || event.kind === 'nonPrivate';
}

/**
 * The mixture pair's two directions for `inner` at sampling ratio p: a continuous Gaussian (a
 * gridded one enters as its continuous surrogate, `../../discrete-coupling.ts`) or Laplace through
 * `poisson-model.ts`; the discrete Laplace (pure epsilon 1/b) and a non-private release through
 * the randomized-response pair of `pure-dp-pair.ts`.
 */
function mixturePair(inner: DpEvent & { kind: WithoutReplacementInner }, p: number): MixturePairModels {
  if (inner.kind === 'nonPrivate' || (inner.kind === 'laplace' && inner.discrete)) {
    // At p = 1 (n - 1 of n rounded up) the pair is symmetric: its reverse has the same loss.
    const { remove, add } = pureDpLossModels(inner.kind === 'nonPrivate' ? Infinity : pureEpsilon(inner), p);
    return { remove, add: add ?? remove };
  }
  const pair = inner.kind === 'gaussian' ? gaussianPair(inner.noiseMultiplier) : laplacePair(inner.noiseMultiplier);
  return { remove: poissonSubsampledModel(pair, p, 'remove'), add: poissonSubsampledModel(pair, p, 'add') };
}

/**
 * Loss models of sampling m of n records without replacement (replace-one) followed by `inner`,
 * for 1 <= m < n. `bound` 'upper': the symmetrised PLD (one model, it dominates both orders), the
 * ratio m / n rounded up one ulp (the profile is nondecreasing in p: H_x(pP + (1-p)Q || Q) and
 * H_x(Q || pP + (1-p)Q) are convex in p and smallest at p = 0). 'lower': the attained pair A and
 * its reverse (file comment, "Lower bounds"), the ratio rounded down one ulp.
 */
export function withoutReplacementLossModels(
  inner: DpEvent & { kind: WithoutReplacementInner },
  sourceDatasetSize: number,
  sampleSize: number,
  bound: 'upper' | 'lower',
): { remove: PrivacyLossModel; add?: PrivacyLossModel } {
  const ratio = sampleSize / sourceDatasetSize;
  if (bound === 'lower') return mixturePair(inner, nextDown(ratio));
  const p = nextUp(ratio);
  const description = `SampledWithoutReplacement(n = ${sourceDatasetSize}, m = ${sampleSize}, ${inner.kind}${'noiseMultiplier' in inner ? `(${inner.noiseMultiplier})` : ''}), symmetrised`;
  return { remove: symmetrizedLossModel(mixturePair(inner, p), description) };
}
