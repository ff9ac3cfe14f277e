/**
 * A distribution-free lower bound on epsilon from one threshold test, the threshold chosen on one
 * half of the runs and evaluated on the other (sample splitting): the first half of the runs of
 * each world (half A) picks, among thresholds at quantiles of its statistics, the one whose
 * Clopper-Pearson bound (`error-rate-bound.ts`) is largest on half A, computed there at a stricter
 * confidence (1 - (1 - confidence) / 50): that penalises the thresholds far in a tail, whose few
 * errors would be counted on half B with a large relative noise (measured on a Gaussian shift with
 * mu = 0.925 and 2 x 1000 runs: the 5th percentile of the bound rises from 0.66 to 0.91, the
 * median stays 1.2). The second half (half B),
 * independent of that choice, counts that threshold's false positives and false negatives, and
 * their Clopper-Pearson bound is the result. The threshold is a function of half A only, so on
 * half B it is as good as fixed in advance: no union bound over the thresholds tried.
 *
 * It assumes only that the runs are independent and identically distributed within each world
 * (which holds however the mechanism behaves), not any shape of the statistic's distribution.
 * The order of the runs must not depend on their values (the order they were produced in).
 */
import { InvalidParameterError } from '../../errors.js';
import { epsilonLowerBound } from './error-rate-bound.js';

/** Thresholds tried on half A: this many quantiles of its pooled statistics. */
const CANDIDATES = 200;
/** The selection's confidence penalty: its alpha is the evaluation's divided by this. */
const SELECTION_STRICTNESS = 50;

export interface SplitThresholdBound {
  readonly epsilonLower: number;
  /** The test: "the canary is in" when the statistic exceeds `threshold`. */
  readonly threshold: number;
  /** Errors on half B, out of `evaluated` runs of each world. */
  readonly falsePositives: number;
  readonly falseNegatives: number;
  readonly evaluated: number;
}

function countAbove(values: ArrayLike<number>, from: number, to: number, threshold: number): number {
  let count = 0;
  for (let i = from; i < to; i++) if (values[i] > threshold) count++;
  return count;
}

/** The split-sample bound (file comment) from the statistics of the runs with (`inside`) and without (`outside`) the canary. */
export function splitThresholdBound(inside: ArrayLike<number>, outside: ArrayLike<number>, delta: number, confidence: number): SplitThresholdBound {
  const n = inside.length;
  if (outside.length !== n) throw new InvalidParameterError('outside', outside.length, `as many runs as inside (${n})`);
  if (n < 4) throw new InvalidParameterError('runs', n, '>= 4 (two halves of >= 2 runs)');
  const half = Math.floor(n / 2);
  const selection = 1 - (1 - confidence) / SELECTION_STRICTNESS;
  const pooled: number[] = [];
  for (let i = 0; i < half; i++) pooled.push(inside[i], outside[i]);
  pooled.sort((x, y) => x - y);
  let best = { threshold: pooled[0], bound: -1 };
  for (let c = 0; c < CANDIDATES; c++) {
    const threshold = pooled[Math.min(pooled.length - 1, Math.floor(((c + 0.5) * pooled.length) / CANDIDATES))];
    const falsePositives = countAbove(outside, 0, half, threshold);
    const falseNegatives = half - countAbove(inside, 0, half, threshold);
    const bound = epsilonLowerBound(falsePositives, falseNegatives, half, delta, selection);
    if (bound > best.bound) best = { threshold, bound };
  }
  const evaluated = n - half;
  const falsePositives = countAbove(outside, half, n, best.threshold);
  const falseNegatives = evaluated - countAbove(inside, half, n, best.threshold);
  return { epsilonLower: epsilonLowerBound(falsePositives, falseNegatives, evaluated, delta, confidence), threshold: best.threshold, falsePositives, falseNegatives, evaluated };
}
