/**
 * The epsilon lower bound of a one-run audit (Steinke, Nasr & Jagielski 2023, "Privacy auditing
 * with one (1) training run", NeurIPS; SNJ below, Sec. 3, main theorem with delta > 0). m
 * canaries are each included independently with probability 1/2; after ONE run the auditor
 * guesses, for r of them chosen from the output (r fixed in advance), whether each was included,
 * and W of its r guesses are right. If the training is (epsilon, delta)-DP with respect to each
 * canary, then for every v
 *
 *   P[W >= v] <= P[Bin(r, p) >= v] + 2 m delta max_{1 <= i <= v} P[v - i <= Bin(r, p) < v] / i,
 *   p = e^epsilon / (1 + e^epsilon)
 *
 * (the guesses of randomized response are the best an epsilon-DP algorithm allows, and the delta
 * term pays for the rest). So a v with right-hand side <= alpha at epsilon refutes (epsilon, delta)
 * with confidence 1 - alpha, and the largest such epsilon is the audit's lower bound.
 */
import { InvalidParameterError } from '../../errors.js';
import { logBinomial } from '../../math/gamma.js';
import { largestWhere } from '../../math/root-finding.js';
import { regularizedIncompleteBeta } from '../../math/incomplete-beta.js';
import { requireInteger, requireNonNegative, requireOpenUnit } from '../../validate.js';

/** The right-hand side above (the p-value of v right guesses of r under (epsilon, delta)-DP), rounded up (1e-9 relative). */
export function oneRunPValue(canaries: number, guesses: number, correct: number, epsilon: number, delta: number): number {
  const m = requireInteger('canaries', canaries, 1);
  const r = requireInteger('guesses', guesses, 0, m);
  const v = requireInteger('correct', correct, 0, r);
  requireNonNegative('epsilon', epsilon);
  if (!(delta >= 0 && delta < 1)) throw new InvalidParameterError('delta', delta, 'in [0, 1)');
  if (v === 0) return 1;
  const p = 1 / (1 + Math.exp(-epsilon));
  // P[Bin(r, p) >= v] = I_p(v, r - v + 1) (A&S 26.5.24).
  const tail = regularizedIncompleteBeta(p, v, r - v + 1);
  let worst = 0;
  if (delta > 0) {
    const logP = Math.log(p);
    const logQ = Math.log1p(-p);
    let band = 0; // P[v - i <= Bin(r, p) < v]
    for (let i = 1; i <= v; i++) {
      const k = v - i;
      band += Math.exp(logBinomial(r, k) + k * logP + (r - k) * logQ);
      worst = Math.max(worst, band / i);
    }
  }
  return Math.min(1, (tail + 2 * m * delta * worst) * (1 + 1e-9));
}

/**
 * The largest epsilon (to 1e-9 relative, rounded down) whose p-value is <= 1 - confidence: the
 * training is not (epsilon, delta)-DP for any smaller epsilon, with probability >= confidence.
 */
export function oneRunEpsilonLower(canaries: number, guesses: number, correct: number, delta: number, confidence: number): number {
  const alpha = 1 - requireOpenUnit('confidence', confidence);
  return largestWhere((epsilon) => oneRunPValue(canaries, guesses, correct, epsilon, delta) <= alpha, { relativeTolerance: 1e-9, cap: 1e4 }).value;
}
