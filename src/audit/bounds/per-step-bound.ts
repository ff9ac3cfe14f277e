/**
 * A lower bound on epsilon from each step's release, composed over the steps: the audit of a
 * mechanism made of T independent, identical steps (the accountant's threat model,
 * `gradient-canary.ts`: fresh noise and a fresh Poisson draw at each step, the same canary).
 *
 * Every step of every run of one world is an independent draw of that step's release, so R runs
 * give R T samples of the one-step pair instead of R samples of the T-step one. Threshold tests on
 * the canary coordinate ("the canary is in when y > t", the most powerful tests of the pair: its
 * likelihood ratio grows with y) bound the one-step trade-off curve f at a few points: with
 * Clopper-Pearson upper bounds on their false positive and false negative rates, f(FPR_up) <=
 * f(FPR) <= FNR <= FNR_up (f is non-increasing), for k thresholds all 2k rates at once with
 * probability >= confidence (each at 1 - (1 - confidence) / (2k): a union bound).
 * `composed-trade-off.ts` turns those points into a lower bound on epsilon of the T-step
 * composition. The thresholds are chosen on the first half of the runs (half A, among sets of up
 * to three at quantiles of its values, for the largest bound there at a stricter confidence, as
 * `split-threshold.ts`) and the bound is computed on the second half (half B) alone.
 *
 * It assumes what the accountant assumes of the mechanism (independent steps, the same release
 * distribution at each step) but nothing of that distribution's shape. The release is the
 * canary coordinate itself, not a run statistic.
 */
import { InvalidParameterError } from '../../errors.js';
import { clopperPearsonUpper } from './clopper-pearson.js';
import { MAX_TERMS, composedEpsilonLower, compositionTerms, type TradeOffPoint } from './composed-trade-off.js';

/** Quantile levels of half A's pooled per-step values where thresholds are tried. */
const LEVELS = [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99, 0.995, 0.998, 0.999];
/** At most this many thresholds in one test set (k + 1 atoms in the composition). */
const MAX_THRESHOLDS = 3;
/** The selection on half A enumerates at most this many composition terms in all (about 10 s). */
const SELECTION_BUDGET = 4e7;
/** The selection's confidence penalty, as `split-threshold.ts`. */
const SELECTION_STRICTNESS = 50;

export interface PerStepBound {
  readonly epsilonLower: number;
  /** The thresholds chosen on half A and, on half B, the one-step curve's bounding points. */
  readonly thresholds: readonly number[];
  readonly points: readonly TradeOffPoint[];
  /** Samples of each world's one-step release on half B (runs x steps). */
  readonly evaluated: number;
}

/** Whether the per-step bound can be computed for T steps (its exact composition stays within `MAX_TERMS`). */
export function perStepBoundFits(steps: number): boolean {
  return compositionTerms(MAX_THRESHOLDS + 1, steps) <= MAX_TERMS;
}

/** Counts of values > t in a sorted array (binary search). */
function countAbove(sorted: Float64Array, t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] > t) hi = mid;
    else lo = mid + 1;
  }
  return sorted.length - lo;
}

/** The bounding points of thresholds `ts` from sorted samples of each world, each rate at confidence 1 - alpha / (2k). */
function pointsOf(ts: readonly number[], inside: Float64Array, outside: Float64Array, alpha: number): TradeOffPoint[] {
  const n = inside.length;
  const each = alpha / (2 * ts.length);
  return ts.map((t) => ({
    alpha: clopperPearsonUpper(countAbove(outside, t), n, each),
    beta: clopperPearsonUpper(n - countAbove(inside, t), n, each),
  }));
}

/** Subsets of `values` of size 1..k, in a fixed order. */
function subsets(values: readonly number[], k: number): number[][] {
  const out: number[][] = [];
  const grow = (start: number, chosen: number[]) => {
    if (chosen.length > 0) out.push(chosen);
    if (chosen.length === k) return;
    for (let i = start; i < values.length; i++) grow(i + 1, [...chosen, values[i]]);
  };
  grow(0, []);
  return out;
}

/**
 * The per-step bound (file comment) from the canary coordinates of `runs` runs of `steps` steps in
 * each world, y[r * steps + t].
 */
export function perStepBound(inside: Float64Array, outside: Float64Array, runs: number, steps: number, delta: number, confidence: number): PerStepBound {
  if (inside.length !== runs * steps || outside.length !== runs * steps) throw new InvalidParameterError('releases', inside.length, `runs x steps = ${runs * steps} values in each world`);
  if (runs < 4) throw new InvalidParameterError('runs', runs, '>= 4 (two halves of >= 2 runs)');
  if (!perStepBoundFits(steps)) throw new InvalidParameterError('steps', steps, `at most the steps whose exact composition of ${MAX_THRESHOLDS + 1} atoms has <= ${MAX_TERMS} terms`);
  const alpha = 1 - confidence;
  const cut = Math.floor(runs / 2) * steps;
  const sorted = (y: Float64Array) => Float64Array.from(y).sort();
  const aIn = sorted(inside.subarray(0, cut));
  const aOut = sorted(outside.subarray(0, cut));
  const bIn = sorted(inside.subarray(cut));
  const bOut = sorted(outside.subarray(cut));
  const pooled = sorted(Float64Array.from([...aIn, ...aOut]));
  const levels = [...new Set(LEVELS.map((l) => pooled[Math.min(pooled.length - 1, Math.floor(l * pooled.length))]))];
  // As many thresholds per set as the selection's budget allows for this T.
  let k = MAX_THRESHOLDS;
  while (k > 1 && subsets(levels, k).length * compositionTerms(k + 1, steps) > SELECTION_BUDGET) k--;
  let best = { ts: [levels[0]], bound: -1 };
  for (const ts of subsets(levels, k)) {
    const bound = composedEpsilonLower(pointsOf(ts, aIn, aOut, alpha / SELECTION_STRICTNESS), steps, delta);
    if (bound > best.bound) best = { ts, bound };
  }
  const points = pointsOf(best.ts, bIn, bOut, alpha);
  return { epsilonLower: composedEpsilonLower(points, steps, delta), thresholds: best.ts, points, evaluated: bIn.length };
}
