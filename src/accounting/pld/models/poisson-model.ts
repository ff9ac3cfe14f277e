/**
 * Poisson subsampling with probability q of an additive-noise mechanism with dominating pair
 * (P, Q), add/remove-one adjacency (Zhu, Dong, Wang 2022, Thm. 11; Koskela et al. 2020, Sec. 6):
 *
 *   remove a record:  (q P + (1 - q) Q,  Q)    loss  l_r(x) = log(1 - q + q e^{l(x)}),  x ~ qP + (1-q)Q
 *   add a record:     (Q,  q P + (1 - q) Q)    loss  l_a(x) = -l_r(x),                  x ~ Q
 *
 * The two directions have different privacy loss distributions (neither dominates the other for
 * every epsilon). The accountant composes each direction separately and reports the worse
 * (valid because for a fixed pair of neighbouring datasets every step of an adaptive composition
 * is in the same direction); see `../compose.ts`.
 *
 * Both losses are monotone in x, so loss cells are x intervals: l_r(x) <= s iff
 * l(x) <= T^{-1}(s) with T(t) = log(1 - q + q e^t) = log1p(q expm1(t)).
 */
import { intervalMasses, type TailDistribution } from './interval-mass.js';
import type { AdditivePair } from './additive-pair.js';
import { normalizeAtoms, type PrivacyLossModel } from './loss-model.js';

export type Direction = 'remove' | 'add';

/** T(t) = log(1 - q + q e^t), without overflow for large t. */
function mixLoss(q: number, t: number): number {
  if (t === Infinity) return Infinity;
  if (t === -Infinity) return Math.log1p(-q);
  if (t > 30) return t + Math.log(q) + Math.log1p(((1 - q) / q) * Math.exp(-t));
  return Math.log1p(q * Math.expm1(t));
}

/** T^{-1}(s) = log(1 + expm1(s) / q) for s > log(1 - q); -Infinity below. */
function baseLoss(q: number, s: number): number {
  if (!(s > Math.log1p(-q))) return -Infinity;
  if (s === Infinity) return Infinity;
  if (s > 30) return s - Math.log(q) + Math.log1p(-(1 - q) * Math.exp(-s));
  return Math.log1p(Math.expm1(s) / q);
}

export function poissonSubsampledModel(pair: AdditivePair, q: number, direction: Direction): PrivacyLossModel {
  const low = mixLoss(q, pair.lossMin);
  const high = mixLoss(q, pair.lossMax);
  // Atoms (flat parts of l): remove direction loss T(l) with P-mass q P + (1 - q) Q; add direction
  // loss -T(l) with P-mass Q.
  const atoms = normalizeAtoms(
    pair.atoms.map((a) =>
      direction === 'remove' ? { loss: mixLoss(q, a.loss), mass: q * a.pMass + (1 - q) * a.qMass } : { loss: -mixLoss(q, a.loss), mass: a.qMass },
    ),
  );
  // x cut points restricted to the continuous part: the first and last intervals (outside it) are
  // dropped, the atoms carry that probability.
  const clamp = (x: number) => Math.min(pair.continuousHigh, Math.max(pair.continuousLow, x));
  const continuousMasses = (dist: TailDistribution, cuts: Float64Array) => {
    const x = new Float64Array(cuts.length + 2);
    x[0] = pair.continuousLow;
    for (let i = 0; i < cuts.length; i++) x[i + 1] = clamp(cuts[i]);
    x[cuts.length + 1] = pair.continuousHigh;
    return intervalMasses(dist, x).subarray(1, cuts.length + 2);
  };
  const description = `PoissonSampled(q = ${q}, ${pair.description}), ${direction} direction`;
  if (direction === 'remove') {
    return {
      description,
      infinityMass: 0,
      atoms,
      lossMin: low,
      lossMax: high,
      cellMasses(edges) {
        const x = new Float64Array(edges.length);
        for (let i = 0; i < edges.length; i++) x[i] = pair.xSup(baseLoss(q, edges[i]));
        const mp = continuousMasses(pair.p, x);
        const mq = continuousMasses(pair.q, x);
        const p = new Float64Array(mq.length);
        for (let i = 0; i < p.length; i++) p[i] = q * mp[i] + (1 - q) * mq[i];
        return { p, q: Float64Array.from(mq) };
      },
    };
  }
  return {
    description,
    infinityMass: 0,
    atoms,
    lossMin: -high,
    lossMax: -low,
    cellMasses(edges) {
      // l_a(x) in (e_{c-1}, e_c]  iff  x in [xInf(-e_c), xInf(-e_{c-1})): increasing cut points
      // y_j = xInf(-e_{n-1-j}); x interval j holds loss cell n - j.
      const n = edges.length;
      const y = new Float64Array(n);
      for (let j = 0; j < n; j++) y[j] = pair.xInf(baseLoss(q, -edges[n - 1 - j]));
      const mp = continuousMasses(pair.p, y);
      const mq = continuousMasses(pair.q, y);
      const p = new Float64Array(n + 1);
      const qq = new Float64Array(n + 1);
      for (let c = 0; c <= n; c++) {
        p[c] = mq[n - c];
        qq[c] = q * mp[n - c] + (1 - q) * mq[n - c];
      }
      return { p, q: qq };
    },
  };
}
