/**
 * Internal: accurate log-probabilities of the Poisson and binomial distributions, for the
 * acceptance tests of the rejection samplers in `discrete.ts`.
 *
 * The naive form k log(lambda) - lambda - log(k!) loses all precision for large arguments
 * (k log(lambda) ~ 1e11 for lambda = 1e10 leaves ~1e-5 of absolute accuracy). Following the
 * saddle-point decomposition of C. Loader ("Fast and Accurate Computation of Binomial
 * Probabilities", 2000), each log-pmf is written as a sum of O(1) terms:
 *   log k! = k log k - k + log(2 pi k) / 2 + stirlingError(k),
 *   deviance(x, m) = x log(x / m) + m - x = m * phi((x - m) / m), phi(d) = (1 + d) log1p(d) - d,
 * whose absolute error is about 1e-16 * |x - m| instead of 1e-16 * x log x.
 */

const LOG_2PI = Math.log(2 * Math.PI);
const SMALL = 16;
/** log k! for k < SMALL, summed directly (error below 1e-15). */
const LOG_FACTORIAL_SMALL: Float64Array = (() => {
  const table = new Float64Array(SMALL);
  for (let k = 2; k < SMALL; k++) table[k] = table[k - 1] + Math.log(k);
  return table;
})();

/** stirlingError(k) = log k! - (k log k - k + log(2 pi k)/2), for integers k >= 1. */
export function stirlingError(k: number): number {
  if (k < SMALL) return LOG_FACTORIAL_SMALL[k] - (k * Math.log(k) - k + 0.5 * (LOG_2PI + Math.log(k)));
  // Stirling's series 1/(12k) - 1/(360k^3) + 1/(1260k^5) - 1/(1680k^7) + 1/(1188k^9); the next
  // term is below 1e-16 for k >= 16.
  const r = 1 / k;
  const r2 = r * r;
  return r * (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 * (1 / 1680 - r2 / 1188))));
}

/** deviance(x, m) = x log(x/m) + m - x >= 0, for x >= 0 and m > 0. */
export function deviance(x: number, m: number): number {
  if (x === 0) return m;
  const d = (x - m) / m;
  return m * ((1 + d) * Math.log1p(d) - d);
}

/** log P(K = k) for K ~ Poisson(lambda), integer k >= 0, lambda > 0. */
export function logPoissonPmf(k: number, lambda: number): number {
  if (k === 0) return -lambda;
  return -stirlingError(k) - deviance(k, lambda) - 0.5 * (LOG_2PI + Math.log(k));
}

/** log P(K = k) for K ~ Binomial(n, p), integers 0 <= k <= n, 0 < p < 1. */
export function logBinomialPmf(k: number, n: number, p: number): number {
  if (k === 0) return n * Math.log1p(-p);
  if (k === n) return n * Math.log(p);
  const q = 1 - p;
  return (
    stirlingError(n) -
    stirlingError(k) -
    stirlingError(n - k) -
    deviance(k, n * p) -
    deviance(n - k, n * q) +
    0.5 * (Math.log(n / (k * (n - k))) - LOG_2PI)
  );
}
