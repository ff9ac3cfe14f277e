/**
 * epsilon from a membership test's error counts (Kairouz, Oh & Viswanath 2015, Thm. 2.1: for an
 * (epsilon, delta)-DP mechanism every test has FPR + e^epsilon FNR >= 1 - delta and
 * FNR + e^epsilon FPR >= 1 - delta). With Clopper-Pearson upper bounds FPR_up and FNR_up, each at
 * confidence 1 - (1 - confidence) / 2,
 *
 *   epsilon >= max(log((1 - delta - FNR_up) / FPR_up), log((1 - delta - FPR_up) / FNR_up))
 *
 * with probability >= `confidence` over the runs (a union bound over the two rates).
 */
import { clopperPearsonUpper } from './clopper-pearson.js';

/** The (confidence) lower bound on epsilon from a test's error counts, each out of `trials` (file comment). */
export function epsilonLowerBound(falsePositives: number, falseNegatives: number, trials: number, delta: number, confidence: number): number {
  const alpha = (1 - confidence) / 2;
  const fpr = clopperPearsonUpper(falsePositives, trials, alpha);
  const fnr = clopperPearsonUpper(falseNegatives, trials, alpha);
  const bound = (a: number, b: number) => (1 - delta - a > 0 && b > 0 ? Math.log((1 - delta - a) / b) : 0);
  return Math.max(0, bound(fnr, fpr), bound(fpr, fnr));
}
