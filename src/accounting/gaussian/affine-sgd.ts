/**
 * The exact privacy of the LAST iterate of noisy SGD when every gradient is affine in theta
 * (`004` Sec. 3.4: linear regression, g_t(theta) = alpha_t theta + beta_t with alpha_t = x_t x_t^T
 * PSD and beta_t = -y_t x_t), one pass in a fixed order, theta_0 fixed. The iterates are then
 * Gaussian with the recursions of
 *   - `004` Prop. 3.2 (noise N(0, sigma^2 I) added at each step):
 *       m_{t+1} = (I - gamma alpha_t) m_t - gamma beta_t,
 *       Sigma_{t+1} = sigma^2 I + (I - gamma alpha_t) Sigma_t (I - gamma alpha_t);
 *   - noise feedback (`004` Sec. 3.4.1: theta_{t+1} = theta_t - gamma g_t - eta_{t+1} + eta_t, eta_0 = 0,
 *     eta_t ~ N(0, sigma^2 I) independent): the same mean. For the covariance, dpfit does NOT use
 *     `004` Prop. 3.3 (Sigma_{t+1} = 2 gamma^2 sigma^2 alpha_t^2 + M_t Sigma_t M_t, M_t = I - gamma alpha_t),
 *     which disagrees with simulation of the update it states (the test shows it: the last noise
 *     eta_T is never cancelled, so Var(theta_T) >= sigma^2). Derivation: with e_t = theta_t - m_t and
 *     f_t = e_t + eta_t, f_{t+1} = M_t e_t + eta_t = M_t f_t + gamma alpha_t eta_t, where eta_t is
 *     independent of f_t; so F_{t+1} = M_t F_t M_t + gamma^2 alpha_t Cov(eta_t) alpha_t (Cov(eta_0) = 0,
 *     sigma^2 I after), F_0 = 0, and Cov(theta_T) = F_T + sigma^2 I.
 *
 * Two neighbouring datasets with the same alpha_t's (their records differ in the target y only)
 * give last iterates N(m, Sigma) and N(m', Sigma): a Gaussian shift pair, which is EXACTLY the
 * Gaussian mechanism with noise multiplier 1/mu, mu = ||Sigma^{+1/2} (m - m')|| (mu = Infinity when
 * m - m' leaves the range of Sigma: no noise in that direction). Its (epsilon, delta) curve is the
 * Gaussian privacy profile (`003` eq. B.1), computed by the exact Gaussian accountant.
 *
 * `004` Sec. 3.4.3: with noise feedback most of the noise is cancelled later (the covariance is
 * only sigma^2 I plus small terms, against the accumulated noise without feedback), and most of the
 * privacy with it (the tests reproduce it).
 */
import { InvalidParameterError } from '../../errors.js';
import { symmetricEigen } from '../../math/symmetric-eigen.js';
import { gaussianEvent } from '../events/constructors.js';
import { gaussianCompositionEpsilon } from './gaussian-composition.js';

export interface AffineStep {
  /** alpha_t (d x d, symmetric PSD, row-major). */
  readonly alpha: Float64Array;
  /** beta_t (d). */
  readonly beta: Float64Array;
}

export interface AffineSgdOptions {
  readonly d: number;
  /** Step size gamma. */
  readonly stepSize: number;
  /** Std sigma of the noise of each step. */
  readonly noiseStd: number;
  readonly theta0?: Float64Array;
  /** Noise feedback (`004` Sec. 3.4.1; covariance derived in the file comment; default false: Prop. 3.2). */
  readonly noiseFeedback?: boolean;
}

export interface GaussianIterate {
  readonly mean: Float64Array;
  readonly covariance: Float64Array;
}

function multiply(a: Float64Array, b: Float64Array, d: number): Float64Array {
  const out = new Float64Array(d * d);
  for (let i = 0; i < d; i++) for (let k = 0; k < d; k++) {
    const aik = a[i * d + k];
    if (aik === 0) continue;
    for (let j = 0; j < d; j++) out[i * d + j] += aik * b[k * d + j];
  }
  return out;
}

/** The law N(m_T, Sigma_T) of the last iterate (file comment, `004` Props. 3.2-3.3). */
export function affineSgdLastIterate(steps: readonly AffineStep[], options: AffineSgdOptions): GaussianIterate {
  const { d, stepSize: gamma, noiseStd: sigma } = options;
  if (!(Number.isSafeInteger(d) && d >= 1)) throw new InvalidParameterError('d', d, 'an integer >= 1');
  if (!(gamma > 0 && Number.isFinite(gamma))) throw new InvalidParameterError('stepSize', gamma, 'a finite number > 0');
  if (!(sigma >= 0 && Number.isFinite(sigma))) throw new InvalidParameterError('noiseStd', sigma, 'a finite number >= 0');
  const mean = Float64Array.from(options.theta0 ?? new Float64Array(d));
  let covariance = new Float64Array(d * d);
  steps.forEach((step, t) => {
    if (step.alpha.length !== d * d || step.beta.length !== d) throw new InvalidParameterError(`steps[${t}]`, 'shape', `alpha of ${d * d} and beta of ${d} numbers`);
    // M = I - gamma alpha_t
    const m = Float64Array.from(step.alpha, (v, k) => (k % (d + 1) === 0 ? 1 : 0) - gamma * v);
    const next = new Float64Array(d);
    for (let i = 0; i < d; i++) {
      let s = -gamma * step.beta[i];
      for (let j = 0; j < d; j++) s += m[i * d + j] * mean[j];
      next[i] = s;
    }
    mean.set(next);
    // Without feedback `covariance` is Sigma_t; with it, F_t (file comment).
    const propagated = multiply(multiply(m, covariance, d), m, d);
    const added = options.noiseFeedback
      ? multiply(step.alpha, step.alpha, d).map((v) => (t === 0 ? 0 : gamma * gamma * sigma * sigma * v))
      : Float64Array.from({ length: d * d }, (_, k) => (k % (d + 1) === 0 ? sigma * sigma : 0));
    covariance = propagated.map((v, k) => v + added[k]);
    // Keep it exactly symmetric.
    for (let i = 0; i < d; i++) for (let j = 0; j < i; j++) covariance[i * d + j] = covariance[j * d + i] = (covariance[i * d + j] + covariance[j * d + i]) / 2;
  });
  // With feedback, Cov(theta_T) = F_T + sigma^2 I: the last noise is never cancelled.
  if (options.noiseFeedback && steps.length > 0) for (let i = 0; i < d; i++) covariance[i * d + i] += sigma * sigma;
  return { mean, covariance };
}

/**
 * mu of the shift pair N(m, Sigma), N(m', Sigma): ||Sigma^{+1/2} (m - m')|| (Infinity when the
 * shift has a component where Sigma has no variance). The covariances must be equal (relative
 * 1e-12): otherwise the pair is not a shift pair and this exact computation does not apply.
 */
export function gaussianShiftMu(a: GaussianIterate, b: GaussianIterate): number {
  const d = a.mean.length;
  let scale = 0;
  for (let k = 0; k < d * d; k++) scale = Math.max(scale, Math.abs(a.covariance[k]));
  for (let k = 0; k < d * d; k++) {
    if (Math.abs(a.covariance[k] - b.covariance[k]) > 1e-12 * Math.max(scale, 1e-300)) {
      throw new InvalidParameterError('covariances', `entry ${k}: ${a.covariance[k]} vs ${b.covariance[k]}`, 'equal (the neighbours must share every alpha_t: records that differ in the target only), so that the last iterates are a Gaussian shift pair');
    }
  }
  const { values, vectors } = symmetricEigen(a.covariance, d);
  const largest = Math.max(...values.map(Math.abs), 1e-300);
  let mu2 = 0;
  for (let k = 0; k < d; k++) {
    let projection = 0;
    for (let i = 0; i < d; i++) projection += vectors[i * d + k] * (a.mean[i] - b.mean[i]);
    if (values[k] <= 1e-12 * largest) {
      if (Math.abs(projection) > 1e-12 * (Math.hypot(...a.mean) + Math.hypot(...b.mean) + 1e-300)) return Infinity;
      continue;
    }
    mu2 += (projection * projection) / values[k];
  }
  return Math.sqrt(mu2);
}

/** The exact epsilon at delta of a Gaussian shift pair with parameter mu (mu-GDP). */
export function gaussianShiftEpsilon(mu: number, delta: number): number {
  if (!(mu >= 0)) throw new InvalidParameterError('mu', mu, 'a number >= 0');
  if (mu === 0) return 0;
  if (mu === Infinity) return Infinity;
  return (gaussianCompositionEpsilon(gaussianEvent(1 / mu), delta) as { epsilon: number }).epsilon;
}
