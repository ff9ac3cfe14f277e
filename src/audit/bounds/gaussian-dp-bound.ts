/**
 * A lower confidence bound on epsilon for a mechanism whose test statistic is a Gaussian shift
 * (Gaussian differential privacy, Dong, Roth & Su 2022, "Gaussian differential privacy", JRSS B;
 * DRS below). When the statistic is N(m1, sigma^2) with the canary and N(m0, sigma^2) without,
 * the pair's trade-off curve is exactly G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu) with
 * mu = |m1 - m0| / sigma (DRS Def. 2.7), and the pair is (epsilon, delta)-DP exactly for
 * delta >= delta_mu(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)
 * (DRS Cor. 2.13). The statistic is such a shift exactly when the mechanism adds Gaussian noise to
 * a sum that the canary moves by a fixed amount: DP-GD's released sums along a gradient canary
 * (`gradient-canary.ts`), summed over the steps.
 *
 * The bound on mu, from n1 statistics with the canary and n0 without, under that model, with the
 * error probability alpha shared as alpha_s = alpha / 5 for the variance and alpha_m = 4 alpha / 5
 * for the mean (fixed in advance: the variance's bound has many degrees of freedom and costs
 * little, the mean's is what limits mu):
 *   - sigma <= sigma_up = sqrt(nu s^2 / chi^2_{nu; alpha_s}) with probability 1 - alpha_s (s^2 the
 *     pooled variance, nu = n1 + n0 - 2 degrees of freedom: nu s^2 / sigma^2 ~ chi^2_nu);
 *   - m1 - m0 >= x1 - x0 - z_{1 - alpha_m} sigma sqrt(1/n1 + 1/n0) with probability 1 - alpha_m
 *     (x1 - x0 ~ N(m1 - m0, sigma^2 (1/n1 + 1/n0)));
 * so by a union bound, with probability >= 1 - alpha, m1 - m0 >= Delta_lo = x1 - x0 -
 * z_{1 - alpha_m} sigma_up sqrt(1/n1 + 1/n0) and mu >= mu_lo = max(0, Delta_lo / sigma_up). When the
 * statistic is a sum of T independent identical Gaussian steps, the steps themselves are the
 * samples (n1 = runs x T) and the run's mu is sqrt(T) times the step's (DRS Cor. 3.3): the
 * variance then has T times more degrees of freedom, the mean the same precision. Then
 * epsilon(mu_lo, delta) <= epsilon(mu, delta) (delta_mu grows with mu): a lower bound on the
 * mechanism's epsilon at delta that holds with probability >= 1 - alpha, IF the model holds. The
 * model is the mechanism's definition here, not an estimate: the bound measures mu, not the shape.
 */
import { InvalidParameterError } from '../../errors.js';
import { log1mExp } from '../../math/log-space.js';
import { normalCdf, normalLogCdf, normalQuantile } from '../../math/normal.js';
import { chiSquareLowerQuantile } from '../../math/chi-square.js';
import { largestWhere } from '../../math/root-finding.js';
import { requireNonNegative, requireOpenUnit } from '../../validate.js';

/** G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu): the smallest false negative rate at false positive rate alpha of a mu-GDP pair (DRS Def. 2.7). */
export function gaussianTradeOff(mu: number, alpha: number): number {
  requireNonNegative('mu', mu);
  if (!(alpha >= 0 && alpha <= 1)) throw new InvalidParameterError('alpha', alpha, 'in [0, 1]');
  if (alpha === 0) return 1;
  if (alpha === 1) return 0;
  return normalCdf(normalQuantile(1 - alpha) - mu);
}

/** log delta_mu(epsilon) = log(Phi(-e/mu + mu/2) - e^e Phi(-e/mu - mu/2)) (DRS Cor. 2.13), in log space. */
export function gaussianDpLogDelta(mu: number, epsilon: number): number {
  requireNonNegative('mu', mu);
  requireNonNegative('epsilon', epsilon);
  if (mu === 0) return -Infinity;
  if (mu === Infinity) return 0;
  const logA = normalLogCdf(-epsilon / mu + mu / 2);
  const logB = normalLogCdf(-epsilon / mu - mu / 2);
  if (logA === -Infinity) return -Infinity;
  return logA + log1mExp(Math.min(epsilon + logB - logA, -Number.MIN_VALUE));
}

/**
 * epsilon of a mu-GDP pair at delta, rounded DOWN: an epsilon whose delta_mu, computed, is at
 * least delta (1 + 1e-9), far beyond the computation's ~1e-13 relative error, so that the exact
 * delta_mu(epsilon) >= delta and the exact epsilon(mu, delta) is >= the value returned. A lower
 * bound's rounding: never above the truth. Computed without the accountants' code (which rounds
 * the other way): the audit must not trust what it checks.
 */
export function gaussianDpEpsilonLower(mu: number, delta: number): number {
  requireNonNegative('mu', mu);
  requireOpenUnit('delta', delta);
  if (mu === Infinity) return Infinity;
  const target = Math.log(delta) + Math.log1p(1e-9);
  return largestWhere((epsilon) => gaussianDpLogDelta(mu, epsilon) >= target, { relativeTolerance: 1e-12 }).value;
}

export interface GaussianShiftBound {
  /** The point estimate (x1 - x0) / s. */
  readonly muEstimate: number;
  /** mu >= muLower with probability >= confidence, under the Gaussian shift model. */
  readonly muLower: number;
  /** The pooled standard deviation s and its upper confidence bound. */
  readonly std: number;
  readonly stdUpper: number;
}

function meanAndSquares(values: ArrayLike<number>): { mean: number; squares: number } {
  let mean = 0;
  for (let i = 0; i < values.length; i++) mean += values[i];
  mean /= values.length;
  let squares = 0;
  for (let i = 0; i < values.length; i++) squares += (values[i] - mean) ** 2;
  return { mean, squares };
}

/** The lower confidence bound on mu of a Gaussian shift from the statistics with and without the canary (file comment). */
export function gaussianShiftMuLower(inside: ArrayLike<number>, outside: ArrayLike<number>, confidence: number): GaussianShiftBound {
  const alpha = 1 - requireOpenUnit('confidence', confidence);
  const n1 = inside.length;
  const n0 = outside.length;
  if (n1 < 2 || n0 < 2) throw new InvalidParameterError('runs', Math.min(n1, n0), '>= 2 statistics with and without the canary');
  const a = meanAndSquares(inside);
  const b = meanAndSquares(outside);
  const nu = n1 + n0 - 2;
  const variance = (a.squares + b.squares) / nu;
  if (!(variance > 0)) throw new InvalidParameterError('statistics', variance, 'a positive pooled variance (the statistics are all equal)');
  const std = Math.sqrt(variance);
  const stdUpper = Math.sqrt((nu * variance) / chiSquareLowerQuantile(alpha / 5, nu)) * (1 + 1e-12);
  const z = normalQuantile(1 - (4 * alpha) / 5) * (1 + 1e-12);
  const shiftLower = a.mean - b.mean - z * stdUpper * Math.sqrt(1 / n1 + 1 / n0);
  return { muEstimate: (a.mean - b.mean) / std, muLower: Math.max(0, shiftLower / stdUpper), std, stdUpper };
}
