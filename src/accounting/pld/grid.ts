/**
 * Choosing the grid: the range of losses each mechanism needs and the step h.
 *
 * Range: per mechanism, the quantiles of its loss (under P) at a tail probability tau / (10 K),
 * K the total number of compositions, so that all truncations of all steps together move at most
 * tau / 5 of probability (and do so pessimistically, see `discretize.ts`).
 *
 * Step: connect-the-dots splits the mass of a cell between its end points, which adds at most
 * h^2/4 (about h^2/6 on average) to the variance of each step's loss, and the optimistic
 * contraction removes about as much. The composed loss has variance V = sum_j k_j var_j, and
 * epsilon moves with the variance of the composed loss, so the gap between the pessimistic and
 * the optimistic epsilon is about K h^2 / (3 V) relative: h = sqrt(3 r V / K) for a target
 * relative accuracy r. The accountant checks the gap it actually gets and refines if needed.
 */
import { NumericalError } from '../../errors.js';
import { lossTails, type PrivacyLossModel } from './models/loss-model.js';

/** Smallest s with P(s < L < inf) <= tail, and largest s with P(L <= s) <= tail. */
export function lossQuantiles(model: PrivacyLossModel, tail: number): { low: number; high: number } {
  const high = search(model, tail, 'high');
  const low = search(model, tail, 'low');
  return { low: Math.min(low, high), high: Math.max(low, high) };
}

function search(model: PrivacyLossModel, tail: number, side: 'high' | 'low'): number {
  // ok(s): the tail beyond s on this side is <= tail. ok is monotone: false then true (high side,
  // increasing s) or true then false (low side).
  const ok = (s: number) => {
    const t = lossTails(model, s);
    return side === 'high' ? t.above <= tail : t.below <= tail;
  };
  const LIMIT = 1e7;
  if (side === 'high') {
    let hi = Number.isFinite(model.lossMax) ? model.lossMax : 1;
    while (!ok(hi)) {
      if (hi > LIMIT) throw new NumericalError(`the privacy loss of ${model.description} exceeds ${LIMIT} with probability > ${tail}`);
      hi = hi > 0 ? 2 * hi : 1;
    }
    let lo = Number.isFinite(model.lossMin) ? model.lossMin : Math.min(hi, 0) - 1;
    while (ok(lo)) {
      if (lo === model.lossMin) return lo;
      if (lo < -LIMIT) return lo;
      lo = lo < 0 ? 2 * lo : -1;
    }
    return bisect(lo, hi, ok, false);
  }
  let lo = Number.isFinite(model.lossMin) ? model.lossMin : -1;
  while (!ok(lo)) {
    if (lo < -LIMIT) throw new NumericalError(`the privacy loss of ${model.description} is below ${-LIMIT} with probability > ${tail}`);
    lo = lo < 0 ? 2 * lo : -1;
  }
  let hi = Number.isFinite(model.lossMax) ? model.lossMax : Math.max(lo, 0) + 1;
  while (ok(hi)) {
    if (hi === model.lossMax || hi > LIMIT) return hi;
    hi = hi > 0 ? 2 * hi : 1;
  }
  return bisect(lo, hi, ok, true);
}

/** Bisection for the boundary between ok and not-ok; returns the ok end. */
function bisect(a: number, b: number, ok: (s: number) => boolean, okAtA: boolean): number {
  let lo = a;
  let hi = b;
  for (let i = 0; i < 200 && hi - lo > 1e-15 * Math.max(1, Math.abs(lo), Math.abs(hi)); i++) {
    const mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (ok(mid) === okAtA) lo = mid;
    else hi = mid;
  }
  return okAtA ? lo : hi;
}

/**
 * Mean and variance of the loss under P (finite part), from its atoms and 4096 cells between the
 * quantiles at 1e-12, each cell's mass placed at its u-mean.
 */
export function lossMoments(model: PrivacyLossModel): { mean: number; variance: number } {
  const { low, high } = lossQuantiles(model, 1e-12);
  const cells = 4096;
  const width = high > low ? (high - low) / cells : 1;
  const edges = new Float64Array(cells + 1);
  for (let i = 0; i <= cells; i++) edges[i] = low + i * width;
  const { p, q } = model.cellMasses(edges);
  let mass = 0;
  let sum = 0;
  let sumSq = 0;
  const addAt = (w: number, s: number) => {
    mass += w;
    sum += w * s;
    sumSq += w * s * s;
  };
  addAt(p[0], edges[0]);
  for (let c = 1; c <= cells + 1; c++) {
    const w = p[c];
    if (!(w > 0)) continue;
    const base = edges[c - 1];
    let offset = q[c] > 0 ? Math.log(w / q[c]) - base : width;
    if (!(offset >= 0)) offset = 0;
    if (c <= cells && offset > width) offset = width;
    if (!Number.isFinite(offset)) offset = width;
    addAt(w, base + offset);
  }
  for (const a of model.atoms) addAt(a.mass, a.loss);
  if (!(mass > 0)) return { mean: 0, variance: 0 };
  const mean = sum / mass;
  return { mean, variance: Math.max(0, sumSq / mass - mean * mean) };
}

/** The grid step h = sqrt(3 r V / K) (see the file comment), aligned as `alignStep` does. */
export function chooseValueDiscretization(totalVariance: number, totalCount: number, relativeAccuracy: number, align?: readonly number[]): number {
  let h = totalVariance > 0 && totalCount > 0 ? Math.sqrt((3 * relativeAccuracy * totalVariance) / totalCount) : 1e-2;
  if (!(h > 0) || !Number.isFinite(h)) h = 1e-2;
  return alignStep(h, align);
}

/**
 * A step h' <= h that puts the loss values `align` (most important first) on the grid i h':
 * the first exactly (h' = |a_1| / m), and the second as nearly as the choice of m in
 * [m_0, 2 m_0) allows (m_0 the smallest admissible m). Atoms on the grid are represented exactly;
 * an atom off the grid costs the optimistic bound an error of order its distance to the grid.
 */
export function alignStep(h: number, align?: readonly number[]): number {
  const targets = (align ?? []).map(Math.abs).filter((a) => a > 0 && Number.isFinite(a));
  if (targets.length === 0) return h;
  const a = targets[0];
  const m0 = Math.ceil(a / h - 1e-9);
  if (!(m0 >= 1 && m0 < 1e9)) return h;
  if (targets.length === 1) return a / m0;
  const b = targets[1];
  let best = m0;
  let bestDistance = Infinity;
  for (let m = m0; m < 2 * m0 && m < m0 + 4096; m++) {
    const x = (b * m) / a;
    const distance = Math.abs(x - Math.round(x));
    if (distance < bestDistance - 1e-12) {
      best = m;
      bestDistance = distance;
    }
  }
  return a / best;
}
