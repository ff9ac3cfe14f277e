/**
 * Small goodness-of-fit tests for the sampler tests: one-sample Kolmogorov–Smirnov, chi-square
 * (with the regularised incomplete gamma for p-values), and z-tests for means and variances.
 * Written here rather than installing @stdlib stats packages (hundreds of dependencies).
 */
import erfc from '@stdlib/math-base-special-erfc';
import gammaln from '@stdlib/math-base-special-gammaln';

/** Significance level of every statistical test (docs/design.md, "Testing"). */
export const ALPHA = 1e-6;

/** Standard normal CDF Phi(x) = erfc(-x / sqrt 2) / 2. */
export function normalCdf(x: number): number {
  return 0.5 * erfc(-x / Math.SQRT2);
}

/** Two-sided p-value of a standard normal statistic z. */
export function twoSidedNormalPValue(z: number): number {
  return erfc(Math.abs(z) / Math.SQRT2);
}

/**
 * Survival function of the Kolmogorov distribution, P(K > x) with K = sup |Brownian bridge|:
 * 2 sum_{k>=1} (-1)^(k-1) exp(-2 k^2 x^2) for x >= 1, and one minus the dual (Jacobi theta) series
 * sqrt(2 pi)/x sum_{k>=1} exp(-(2k-1)^2 pi^2 / (8 x^2)) for x < 1, where it converges faster.
 */
export function kolmogorovSurvival(x: number): number {
  if (!(x > 0)) return 1;
  if (x < 1) {
    let s = 0;
    for (let k = 1; k <= 20; k++) s += Math.exp(-((2 * k - 1) ** 2) * Math.PI * Math.PI / (8 * x * x));
    return 1 - (Math.sqrt(2 * Math.PI) / x) * s;
  }
  let s = 0;
  for (let k = 1; k <= 100; k++) {
    const term = Math.exp(-2 * k * k * x * x);
    s += k % 2 === 1 ? term : -term;
    if (term < 1e-300) break;
  }
  return Math.min(1, Math.max(0, 2 * s));
}

export interface TestResult {
  statistic: number;
  pValue: number;
}

/**
 * One-sample KS test of `samples` against a continuous CDF. The p-value uses the Kolmogorov
 * limit with Stephens' (1970) finite-n correction, D (sqrt n + 0.12 + 0.11 / sqrt n).
 */
export function ksTest(samples: ArrayLike<number>, cdf: (x: number) => number): TestResult {
  const xs = Float64Array.from(samples).sort();
  const n = xs.length;
  let d = 0;
  for (let i = 0; i < n; i++) {
    const f = cdf(xs[i]);
    d = Math.max(d, (i + 1) / n - f, f - i / n);
  }
  const sn = Math.sqrt(n);
  return { statistic: d, pValue: kolmogorovSurvival((sn + 0.12 + 0.11 / sn) * d) };
}

/**
 * Regularised upper incomplete gamma Q(a, x) = Gamma(a, x) / Gamma(a): the power series of P for
 * x < a + 1, otherwise the continued fraction for Q (modified Lentz), both to ~1e-15.
 */
export function gammaQ(a: number, x: number): number {
  if (!(x > 0)) return 1;
  const logPrefactor = -x + a * Math.log(x) - gammaln(a);
  if (x < a + 1) {
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < 100000; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * 1e-16) break;
    }
    return 1 - sum * Math.exp(logPrefactor);
  }
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 100000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(logPrefactor) * h;
}

/** P(chi^2_df > statistic). */
export function chiSquareSurvival(statistic: number, df: number): number {
  return gammaQ(df / 2, statistic / 2);
}

export interface ChiSquareResult extends TestResult {
  df: number;
  bins: number;
}

/** Pearson's chi-square statistic of observed counts against expected counts (df = bins - 1). */
export function chiSquareTest(observed: ArrayLike<number>, expected: ArrayLike<number>): ChiSquareResult {
  let statistic = 0;
  for (let i = 0; i < observed.length; i++) statistic += (observed[i] - expected[i]) ** 2 / expected[i];
  const df = observed.length - 1;
  return { statistic, df, bins: observed.length, pValue: chiSquareSurvival(statistic, df) };
}

/**
 * Chi-square goodness of fit of integer samples to a pmf on [support[0], support[1]] (bounds may be
 * infinite). The window of values is grown from `center` until the pmf falls below 1e-18 on both
 * sides (the mass outside must be below 1e-9, else this throws: widen the support or fix the pmf);
 * adjacent values are then pooled left to right until each bin expects at least `minExpected`.
 * Samples outside the window fall into the edge bins.
 */
export function discreteChiSquare(
  samples: ArrayLike<number>,
  pmf: (k: number) => number,
  center: number,
  support: [number, number] = [-Infinity, Infinity],
  minExpected = 10,
): ChiSquareResult {
  const n = samples.length;
  let lo = center;
  let hi = center;
  while (lo - 1 >= support[0] && pmf(lo - 1) > 1e-18) lo--;
  while (hi + 1 <= support[1] && pmf(hi + 1) > 1e-18) hi++;
  const width = hi - lo + 1;
  const probabilities = new Float64Array(width);
  let total = 0;
  for (let k = lo; k <= hi; k++) {
    probabilities[k - lo] = pmf(k);
    total += probabilities[k - lo];
  }
  if (Math.abs(1 - total) > 1e-9) throw new Error(`pmf mass in [${lo}, ${hi}] is ${total}, not 1`);
  const counts = new Float64Array(width);
  for (let i = 0; i < n; i++) {
    const k = Math.min(hi, Math.max(lo, samples[i]));
    counts[k - lo]++;
  }
  const observed: number[] = [];
  const expected: number[] = [];
  let o = 0;
  let e = 0;
  for (let j = 0; j < width; j++) {
    o += counts[j];
    e += n * probabilities[j];
    if (e >= minExpected) {
      observed.push(o);
      expected.push(e);
      o = 0;
      e = 0;
    }
  }
  if (observed.length === 0) throw new Error('too few samples for a chi-square test');
  observed[observed.length - 1] += o;
  expected[expected.length - 1] += e;
  return chiSquareTest(observed, expected);
}

/** z-test of a sample mean against mu, with the known variance of one sample. */
export function meanZTest(samples: ArrayLike<number>, mu: number, variance: number): TestResult {
  const n = samples.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += samples[i];
  const z = (sum / n - mu) / Math.sqrt(variance / n);
  return { statistic: z, pValue: twoSidedNormalPValue(z) };
}

/**
 * Large-sample z-test of the sample variance against `variance`: Var(s^2) ~ (mu4 - sigma^4) / n,
 * with the fourth central moment mu4 estimated from the sample.
 */
export function varianceZTest(samples: ArrayLike<number>, variance: number): TestResult {
  const n = samples.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += samples[i];
  const mean = sum / n;
  let m2 = 0;
  let m4 = 0;
  for (let i = 0; i < n; i++) {
    const d2 = (samples[i] - mean) ** 2;
    m2 += d2;
    m4 += d2 * d2;
  }
  const s2 = m2 / (n - 1);
  m4 /= n;
  const z = (s2 - variance) / Math.sqrt((m4 - (m2 / n) ** 2) / n);
  return { statistic: z, pValue: twoSidedNormalPValue(z) };
}

/** Binomial z-test of `successes` out of `trials` against probability p (0 < p < 1). */
export function proportionZTest(successes: number, trials: number, p: number): TestResult {
  const z = (successes - trials * p) / Math.sqrt(trials * p * (1 - p));
  return { statistic: z, pValue: twoSidedNormalPValue(z) };
}

/** Formats a test result for assertion messages. */
export function formatResult(result: TestResult & { df?: number }): string {
  const df = result.df === undefined ? '' : `, df ${result.df}`;
  return `statistic ${result.statistic.toPrecision(6)}${df}, p-value ${result.pValue.toExponential(3)}`;
}
