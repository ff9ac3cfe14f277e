/**
 * The chi-square distribution: its CDF through the regularised lower incomplete gamma function
 * P(a, x) = gamma(a, x) / Gamma(a) (chi^2_k CDF at x = P(k/2, x/2); Abramowitz & Stegun 26.4.19),
 * and its lower quantiles, which give one-sided upper confidence bounds on a normal variance
 * (sigma^2 <= nu s^2 / chi^2_{nu; alpha} with probability 1 - alpha). The audit needs them
 * (`audit/gaussian-dp-bound.ts`).
 *
 * P(a, x) is summed as the series e^-x x^a / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n)) for
 * x < a + 1 (A&S 6.5.29) and as 1 - Q(a, x) with Q the continued fraction of A&S 6.5.31 (modified
 * Lentz) above; the prefactor is taken in log space. Relative error ~1e-13 for a up to 1e7.
 */
import { InvalidParameterError, NumericalError } from '../errors.js';
import { requireNonNegative, requirePositive } from '../validate.js';
import { logGamma } from './gamma.js';

const EPS = Number.EPSILON;
const TINY = 1e-300;

/** log(e^-x x^a / Gamma(a)), the common prefactor of both expansions. */
function logPrefactor(a: number, x: number): number {
  return -x + a * Math.log(x) - logGamma(a);
}

/** P(a, x) by the series (x < a + 1). */
function lowerSeries(a: number, x: number): number {
  let term = 1 / a;
  let sum = term;
  for (let n = 1; n < 100_000; n++) {
    term *= x / (a + n);
    sum += term;
    if (term < sum * EPS) return Math.min(1, sum * Math.exp(logPrefactor(a, x)));
  }
  throw new NumericalError(`the incomplete gamma series did not converge (a = ${a}, x = ${x})`);
}

/** Q(a, x) = 1 - P(a, x) by the continued fraction (x >= a + 1), modified Lentz. */
function upperFraction(a: number, x: number): number {
  let b = x + 1 - a;
  let c = 1 / TINY;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 100_000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < TINY) d = TINY;
    c = b + an / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) return Math.min(1, Math.exp(logPrefactor(a, x)) * h);
  }
  throw new NumericalError(`the incomplete gamma continued fraction did not converge (a = ${a}, x = ${x})`);
}

/** The regularised lower incomplete gamma function P(a, x), a > 0, x >= 0. */
export function regularizedLowerGamma(a: number, x: number): number {
  requirePositive('a', a);
  requireNonNegative('x', x);
  if (x === 0) return 0;
  if (x === Infinity) return 1;
  return x < a + 1 ? lowerSeries(a, x) : 1 - upperFraction(a, x);
}

/** P(X <= x) for X ~ chi^2 with `df` degrees of freedom. */
export function chiSquareCdf(x: number, df: number): number {
  requirePositive('df', df);
  return regularizedLowerGamma(df / 2, requireNonNegative('x', x) / 2);
}

/**
 * A lower quantile of chi^2_df, rounded down: an x with P(X <= x) <= p (relative accuracy 1e-12),
 * so that nu s^2 / x is a valid (slightly conservative) upper confidence bound on a variance.
 * p must be in (0, 1/2] (the lower tail, where P(a, x) is computed without cancellation).
 */
export function chiSquareLowerQuantile(p: number, df: number): number {
  if (!(p > 0 && p <= 0.5)) throw new InvalidParameterError('p', p, 'in (0, 0.5] (a lower quantile)');
  requirePositive('df', df);
  // The median is below df (chi^2 is right-skewed): [0, df] brackets every lower quantile.
  let lo = 0;
  let hi = df;
  // Aim a hair below p so that the CDF's own rounding (~1e-13 relative) cannot cross it.
  const target = p * (1 - 1e-10);
  for (let i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (chiSquareCdf(mid, df) > target) hi = mid;
    else lo = mid;
  }
  return lo;
}
