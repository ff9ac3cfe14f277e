/**
 * Clopper-Pearson (exact binomial) confidence bounds: for k successes in n trials, the one-sided
 * upper bound p_up with P(Bin(n, p_up) <= k) = alpha, and the lower bound p_lo with
 * P(Bin(n, p_lo) >= k) = alpha (Clopper & Pearson 1934). The true p is below p_up (above p_lo)
 * with probability >= 1 - alpha. Computed by bisection on the binomial tail (monotone in p),
 * summed term by term in log space for k <= 64 and, above, as the regularised incomplete beta
 * function (`math/incomplete-beta.ts`, ~1e-13 relative), whose level is then lowered by 1e-10
 * relative to cover that error; the bisection ends on the conservative side.
 */
import { InvalidParameterError } from '../../errors.js';
import { logBinomial } from '../../math/gamma.js';
import { regularizedIncompleteBeta } from '../../math/incomplete-beta.js';

/** Counts up to this are summed term by term; above, the incomplete beta function (O(sqrt n) instead of O(k)). */
const SUMMED_COUNTS = 64;

/** P(Bin(n, p) <= k). */
function binomialCdf(k: number, n: number, p: number): number {
  if (k >= n) return 1;
  if (p <= 0) return 1;
  if (p >= 1) return 0;
  if (k > SUMMED_COUNTS) return regularizedIncompleteBeta(1 - p, n - k, k + 1);
  const lp = Math.log(p);
  const lq = Math.log1p(-p);
  let total = 0;
  for (let j = 0; j <= k; j++) total += Math.exp(logBinomial(n, j) + j * lp + (n - j) * lq);
  return Math.min(1, total);
}

function requireCounts(k: number, n: number, alpha: number): void {
  if (!(Number.isSafeInteger(n) && n >= 1)) throw new InvalidParameterError('n', n, 'an integer >= 1');
  if (!(Number.isSafeInteger(k) && k >= 0 && k <= n)) throw new InvalidParameterError('k', k, `an integer in [0, ${n}]`);
  if (!(alpha > 0 && alpha < 1)) throw new InvalidParameterError('alpha', alpha, 'in (0, 1)');
}

/** The one-sided (1 - alpha) upper confidence bound on p after k successes in n trials. */
export function clopperPearsonUpper(k: number, n: number, alpha: number): number {
  requireCounts(k, n, alpha);
  if (k === n) return 1;
  let lo = k / n;
  let hi = 1;
  const level = k > SUMMED_COUNTS ? alpha * (1 - 1e-10) : alpha;
  for (let i = 0; i < 200 && hi - lo > 1e-15; i++) {
    const mid = (lo + hi) / 2;
    if (binomialCdf(k, n, mid) > level) lo = mid;
    else hi = mid;
  }
  return hi; // P(Bin(n, hi) <= k) <= alpha: the conservative end
}

/** The one-sided (1 - alpha) lower confidence bound on p after k successes in n trials. */
export function clopperPearsonLower(k: number, n: number, alpha: number): number {
  requireCounts(k, n, alpha);
  return 1 - clopperPearsonUpper(n - k, n, alpha);
}
