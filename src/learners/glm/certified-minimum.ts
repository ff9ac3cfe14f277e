/**
 * A point whose exact gradient norm is at most tau, for a mu-strongly convex, L-smooth objective,
 * that is ALWAYS returned: the learners that need an approximate minimiser with a certified
 * tolerance (output perturbation, Chaudhuri et al. 2011; AMP, `003` Alg. 1 / Thm. 4.1) must not
 * have a failure path that depends on the data (a refusal would release one bit that no
 * accountant pays for).
 *
 * Two certificates, and the release never depends on which one applies:
 *
 * 1. `checked`: the fast optimiser's point (Newton or L-BFGS, any settings) passes the gradient
 *    test ||g~|| (1 + (d + 4) u) + E(theta) <= tau, where g~ is the gradient computed in floating
 *    point and E a rigorous bound on its error (`glmGradientRoundingBound`); then the exact
 *    gradient norm is <= tau.
 * 2. `theorem`: otherwise, Nesterov's accelerated gradient method for strongly convex functions
 *    (Nesterov, "Introductory Lectures on Convex Optimization", 2004, constant step scheme
 *    (2.2.19) with gamma_0 = mu, Thm. 2.2.3) runs from that point for K iterations, K computed
 *    from the certified gradient bound g0 at the start:
 *      f(x_K) - f* <= (1 - q)^K (f(x_0) - f* + mu/2 ||x_0 - x*||^2) <= (1 - q)^K g0^2 / mu,
 *    q = sqrt(mu / L), using f(x_0) - f* <= g0^2 / (2 mu) and ||x_0 - x*|| <= g0 / mu (strong
 *    convexity), and ||grad f(x_K)||^2 <= 2 L (f(x_K) - f*) (smoothness), so
 *      K = ceil(log(2 (L/mu) g0^2 / (tau/2)^2) / -log(1 - q))  gives  ||grad f(x_K)|| <= tau / 2
 *    in exact arithmetic; the other half of tau is left for the floating-point deviation of the
 *    iterates (the computed gradients err by at most E, which the learners' public defaults keep
 *    orders of magnitude below tau). The gradient test of (1) is retried along the way, and a
 *    point that passes it is returned at once. There is no iteration cap: the work is bounded
 *    by K, which depends on the data only through g0.
 */
import { InvalidParameterError } from '../../errors.js';
import type { Objective } from '../../math/lbfgs.js';
import { norm2 } from '../../math/linear-algebra.js';
import { optionNames, rejectUnknownOptions, requirePositive } from '../../validate.js';
import { glmConstants } from './constants.js';
import { maxRowNorm } from './data.js';
import type { GlmData, GlmLoss } from './types.js';

export interface CertifiedMinimumOptions {
  /** mu > 0: the objective is mu-strongly convex. */
  readonly strongConvexity: number;
  /** L >= mu: the objective's gradient is L-Lipschitz (only the fallback uses it). */
  readonly smoothness: number;
  /** tau > 0: the returned point has exact ||grad|| <= tau. */
  readonly tolerance: number;
  /** A rigorous bound on ||computed gradient - exact gradient|| at theta. */
  readonly roundingBound: (theta: Float64Array) => number;
  /** Where to start: the fast optimiser's point. */
  readonly start: Float64Array;
  /** Called during the fallback with (iteration, K). */
  readonly onProgress?: (iteration: number, total: number) => void;
}

export interface CertifiedMinimum {
  readonly theta: Float64Array;
  /** `checked`: the gradient test passed; `theorem`: Nesterov's bound after the fallback's K iterations. */
  readonly certificate: 'checked' | 'theorem';
  /** Fallback iterations run (0 when the fast optimiser's point passed). */
  readonly fallbackIterations: number;
}

const U = Number.EPSILON / 2;

/** The certified upper bound on the exact gradient norm at theta (gradient written into `grad`). */
function certifiedGradientBound(objective: Objective, theta: Float64Array, grad: Float64Array, roundingBound: (theta: Float64Array) => number): number {
  const value = objective(theta, grad);
  const computed = norm2(grad);
  if (!Number.isFinite(value) || !Number.isFinite(computed)) return Infinity;
  return computed * (1 + (theta.length + 4) * U) + roundingBound(theta);
}

/** How often (in iterations) the fallback retries the gradient test. */
const CHECK_EVERY = 25;

const CERTIFIED_MINIMUM_OPTIONS = optionNames<CertifiedMinimumOptions>({ strongConvexity: true, smoothness: true, tolerance: true, roundingBound: true, start: true, onProgress: true });

export function certifiedMinimum(objective: Objective, options: CertifiedMinimumOptions): CertifiedMinimum {
  rejectUnknownOptions(options, CERTIFIED_MINIMUM_OPTIONS, 'certifiedMinimum');
  const mu = requirePositive('strongConvexity', options.strongConvexity);
  const smoothness = requirePositive('smoothness', options.smoothness);
  const tau = requirePositive('tolerance', options.tolerance);
  if (!(smoothness >= mu) || !Number.isFinite(smoothness)) throw new InvalidParameterError('smoothness', smoothness, `finite and >= strongConvexity (${mu})`);
  const d = options.start.length;
  const grad = new Float64Array(d);
  let x = Float64Array.from(options.start);
  const g0 = certifiedGradientBound(objective, x, grad, options.roundingBound);
  if (g0 <= tau) return { theta: x, certificate: 'checked', fallbackIterations: 0 };
  if (!Number.isFinite(g0)) {
    // The fast optimiser left the domain (an infinite value): restart from 0, where every GLM objective is finite.
    x = new Float64Array(d);
    const restart = certifiedGradientBound(objective, x, grad, options.roundingBound);
    if (restart <= tau) return { theta: x, certificate: 'checked', fallbackIterations: 0 };
    return accelerated(objective, x, restart, mu, smoothness, tau, options);
  }
  return accelerated(objective, x, g0, mu, smoothness, tau, options);
}

function accelerated(objective: Objective, start: Float64Array, g0: number, mu: number, smoothness: number, tau: number, options: CertifiedMinimumOptions): CertifiedMinimum {
  const d = start.length;
  const q = Math.sqrt(mu / smoothness);
  const kappa = smoothness / mu;
  const iterations = q >= 1 ? 1 : Math.max(1, Math.ceil(Math.log((2 * kappa * g0 * g0) / ((tau / 2) * (tau / 2))) / -Math.log1p(-q)));
  const momentum = (1 - q) / (1 + q);
  const grad = new Float64Array(d);
  let x = Float64Array.from(start);
  const y = Float64Array.from(start);
  for (let k = 1; k <= iterations; k++) {
    objective(y, grad);
    const next = new Float64Array(d);
    for (let j = 0; j < d; j++) next[j] = y[j] - grad[j] / smoothness;
    for (let j = 0; j < d; j++) y[j] = next[j] + momentum * (next[j] - x[j]);
    x = next;
    if (k % CHECK_EVERY === 0 || k === iterations) {
      options.onProgress?.(k, iterations);
      if (certifiedGradientBound(objective, x, grad, options.roundingBound) <= tau) return { theta: x, certificate: 'checked', fallbackIterations: k };
    }
  }
  return { theta: x, certificate: 'theorem', fallbackIterations: iterations };
}

/**
 * An upper bound on the smoothness of the SUM objective sum_i l(x_i . theta) + lambda/2 ||theta||^2
 * (clipped or not: clipping keeps f'' <= sup f'', `003` Thm. F.3): n sup f'' max ||x_i||^2 + lambda,
 * from the data (only the certified fallback's step size uses it; it is never released).
 */
export function objectiveSmoothness(loss: GlmLoss, data: GlmData, lambda: number): number {
  const largest = maxRowNorm(data) * (1 + 1e-12);
  const perRow = largest === 0 ? 0 : glmConstants(loss, { rowNormBound: largest }).smoothness;
  if (!Number.isFinite(perRow)) throw new InvalidParameterError('loss', loss.name, 'a loss with bounded second derivative (the certified minimiser needs a smoothness bound)');
  return Math.max(lambda, data.n * perRow + lambda) * (1 + 1e-12);
}
