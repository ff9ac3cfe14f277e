/**
 * The composition of a piecewise-linear trade-off curve, and the epsilon it implies, rounded down.
 *
 * A trade-off curve (Dong, Roth & Su 2022, "Gaussian differential privacy", DRS below, Def. 2.1)
 * f(alpha) is the smallest false negative rate of a test with false positive rate alpha. If a
 * mechanism's curve is known to lie below a few points, f(alpha_i) <= beta_i, then, f being convex
 * with f(0) <= 1 and f(1) = 0, it lies below the chords between them and below the greatest convex
 * function under those chords: the lower convex hull g of (0, 1), the points and (1, 0)
 * (`tradeOffMinorant`). g is itself a trade-off curve (convex, continuous, non-increasing, below
 * 1 - alpha), that of a pair of discrete distributions on its segments: segment j from
 * (a_{j-1}, b_{j-1}) to (a_j, b_j) is an atom with mass a_j - a_{j-1} without the canary and
 * b_{j-1} - b_j with it.
 *
 * T independent runs of a mechanism with curve f have curve f^{(x)T} (DRS Def. 3.1, Thm. 3.2), and
 * f <= g implies f^{(x)T} <= g^{(x)T} (DRS Sec. 3: by Blackwell's theorem, DRS Sec. 2, g's pair is
 * a post-processing of f's, and the product of post-processings is one of the product). A curve below another
 * has every delta(epsilon) at least as large, in both directions of the pair
 * (delta(epsilon) = sup_alpha 1 - e^epsilon alpha - f(alpha), and the same for f's inverse). So
 * epsilon(g^{(x)T}, delta) <= epsilon(f^{(x)T}, delta): a lower bound on the composed mechanism's
 * epsilon. It is computed exactly, by enumerating the T-step counts of each atom (a multinomial,
 * at most `MAX_TERMS` terms), and rounded down.
 */
import { InvalidParameterError } from '../../errors.js';
import { logFactorial } from '../../math/gamma.js';
import { largestWhere } from '../../math/root-finding.js';
import { requireInteger, requireOpenUnit } from '../../validate.js';

export interface TradeOffPoint {
  /** False positive rate. */
  readonly alpha: number;
  /** False negative rate. */
  readonly beta: number;
}

/** The most count vectors the exact composition enumerates. */
export const MAX_TERMS = 3_000_000;

/** Number of count vectors of `atoms` atoms over `steps` steps: C(steps + atoms - 1, atoms - 1). */
export function compositionTerms(atoms: number, steps: number): number {
  let count = 1;
  for (let i = 1; i < atoms; i++) count = (count * (steps + i)) / i;
  return Math.round(count);
}

/** The vertices of the lower convex hull of (0, 1), `points` and (1, 0), from alpha = 0 to 1 (file comment). */
export function tradeOffMinorant(points: readonly TradeOffPoint[]): TradeOffPoint[] {
  for (const p of points) {
    if (!(p.alpha >= 0 && p.alpha <= 1 && p.beta >= 0 && p.beta <= 1)) throw new InvalidParameterError('points', `(${p.alpha}, ${p.beta})`, 'rates in [0, 1]');
  }
  const all = [{ alpha: 0, beta: 1 }, ...points, { alpha: 1, beta: 0 }].sort((p, q) => p.alpha - q.alpha || p.beta - q.beta);
  const hull: TradeOffPoint[] = [];
  for (const p of all) {
    while (hull.length >= 2) {
      const a = hull[hull.length - 2];
      const b = hull[hull.length - 1];
      // Drop b when it is on or above the chord from a to p (not strictly below: the hull is convex).
      if ((b.alpha - a.alpha) * (p.beta - a.beta) - (b.beta - a.beta) * (p.alpha - a.alpha) <= 0) hull.pop();
      else break;
    }
    if (hull.length === 1 && hull[0].alpha === p.alpha) {
      // A vertical start: the lowest point at alpha = 0 replaces (0, 1).
      hull[0] = p.beta < hull[0].beta ? p : hull[0];
      continue;
    }
    hull.push(p);
  }
  return hull;
}

/** The atoms of the discrete pair whose trade-off curve is the piecewise-linear `hull`: masses with the canary (`inside`) and without. */
export function hullAtoms(hull: readonly TradeOffPoint[]): { inside: number[]; outside: number[] } {
  const inside: number[] = [];
  const outside: number[] = [];
  for (let j = 1; j < hull.length; j++) {
    const out = hull[j].alpha - hull[j - 1].alpha;
    const ins = hull[j - 1].beta - hull[j].beta;
    if (out > 0 || ins > 0) {
      inside.push(Math.max(0, ins));
      outside.push(Math.max(0, out));
    }
  }
  // A hull that starts below (0, 1): the mass 1 - b_0 with the canary that never occurs without it.
  if (hull[0].beta < 1) {
    inside.push(1 - hull[0].beta);
    outside.push(0);
  }
  return { inside, outside };
}

/** Every count vector of `atoms` atoms summing to `steps`, passed to `visit` (reused array). */
function forEachCount(atoms: number, steps: number, visit: (counts: Int32Array) => void): void {
  const counts = new Int32Array(atoms);
  const fill = (j: number, left: number): void => {
    if (j === atoms - 1) {
      counts[j] = left;
      visit(counts);
      return;
    }
    for (let c = left; c >= 0; c--) {
      counts[j] = c;
      fill(j + 1, left - c);
    }
  };
  fill(0, steps);
}

/**
 * The T-fold privacy loss distribution of the pair (p, q) in the direction p against q, as
 * (loss, probability under p) sorted by loss, descending: the losses of each count vector of the
 * atoms that p charges.
 */
function composedLosses(p: readonly number[], q: readonly number[], steps: number): { loss: Float64Array; probability: Float64Array } {
  const used = p.map((_, j) => j).filter((j) => p[j] > 0);
  const logP = used.map((j) => Math.log(p[j]));
  const lossOf = used.map((j) => (q[j] > 0 ? Math.log(p[j]) - Math.log(q[j]) : Infinity));
  const terms = compositionTerms(used.length, steps);
  const loss = new Float64Array(terms);
  const probability = new Float64Array(terms);
  const logT = logFactorial(steps);
  let k = 0;
  forEachCount(used.length, steps, (counts) => {
    let lp = logT;
    let l = 0;
    for (let j = 0; j < counts.length; j++) {
      if (counts[j] === 0) continue;
      lp += counts[j] * logP[j] - logFactorial(counts[j]);
      l += counts[j] * lossOf[j];
    }
    loss[k] = l;
    probability[k] = Math.exp(lp);
    k++;
  });
  const order = Array.from({ length: terms }, (_, i) => i).sort((i, j) => loss[j] - loss[i]);
  return { loss: Float64Array.from(order, (i) => loss[i]), probability: Float64Array.from(order, (i) => probability[i]) };
}

/**
 * The largest epsilon (to 1e-12 relative, rounded down) at which delta(epsilon) = sum over losses
 * L > epsilon of P (1 - e^(epsilon - L)) is still >= delta (1 + 1e-6): the relative slack covers
 * the rounding of the sums (at most MAX_TERMS terms of a few ulps each), so that the exact delta
 * at the returned epsilon is >= delta and the exact epsilon is >= the value returned.
 */
function epsilonFromLosses(losses: { loss: Float64Array; probability: Float64Array }, delta: number): number {
  const { loss, probability } = losses;
  const n = loss.length;
  // Prefix sums over the losses in descending order: mass and mass x e^-L (e^-Infinity = 0).
  const mass = new Float64Array(n + 1);
  const tilted = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) {
    mass[i + 1] = mass[i] + probability[i];
    tilted[i + 1] = tilted[i] + probability[i] * Math.exp(-loss[i]);
  }
  const deltaAt = (epsilon: number): number => {
    let lo = 0;
    let hi = n; // the number of losses > epsilon
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (loss[mid] > epsilon) lo = mid + 1;
      else hi = mid;
    }
    return mass[lo] - Math.exp(epsilon) * tilted[lo];
  };
  const target = delta * (1 + 1e-6);
  const largest = largestWhere((epsilon) => deltaAt(epsilon) >= target, { relativeTolerance: 1e-12, cap: 1e6 });
  return largest.capped ? Infinity : largest.value; // capped: a loss of +Infinity with mass >= delta, no finite epsilon
}

/**
 * A lower bound on epsilon at delta of T independent runs of a mechanism whose trade-off curve lies
 * below `points` (file comment): both directions of the pair, the larger.
 */
export function composedEpsilonLower(points: readonly TradeOffPoint[], steps: number, delta: number): number {
  requireInteger('steps', steps, 1);
  requireOpenUnit('delta', delta);
  const { inside, outside } = hullAtoms(tradeOffMinorant(points));
  const terms = compositionTerms(inside.length, steps);
  if (terms > MAX_TERMS) throw new InvalidParameterError('steps', steps, `fewer: ${inside.length} atoms over ${steps} steps make ${terms} terms (at most ${MAX_TERMS})`);
  return Math.max(epsilonFromLosses(composedLosses(inside, outside, steps), delta), epsilonFromLosses(composedLosses(outside, inside, steps), delta));
}
