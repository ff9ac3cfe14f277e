/**
 * The DpEvent of Approximate Minima Perturbation with gradient clipping (`003` Alg. 1, Thm. 4.1).
 * AMP in dpfit's names (`ampEvent`, `selectAmpParameters`) is always Approximate Minima
 * Perturbation, never amplification (`../rdp/amplification-by-iteration.ts`, subsampling).
 *
 * `003` Remark 4.2: Alg. 1 is the adaptive composition of objective perturbation (which releases
 * the exact minimiser theta^P of the perturbed objective, Thm. 3.1/3.2) and a Gaussian mechanism
 * that releases the difference theta~ - theta^P. The perturbed objective
 * SUM_i l_C(theta; z_i) + lambda/2 ||theta||^2 + b.theta is lambda-strongly convex and its gradient
 * vanishes at theta^P, so ||grad L(theta~)|| <= tau gives ||theta~ - theta^P|| <= tau / lambda on
 * every data set, and the L2 sensitivity of theta~ - theta^P is at most 2 tau / lambda. Thm. 4.1's
 * last term, 2 tau^2 alpha / (sigma_out^2 lambda^2), is exactly the Rényi DP alpha / (2 z^2) of the
 * Gaussian mechanism with noise multiplier z = sigma_out / (2 tau / lambda) = sigma_out lambda / (2 tau).
 * Both terms use the paper's scaling: lambda multiplies the SUM of the losses (not the average),
 * and tau bounds the gradient of that sum.
 *
 * The event is compose([objectivePerturbation(sigma, L, beta, lambda), gaussian(z)]); it is
 * add/remove-one (objective perturbation's relation, `003` Sec. 2.1), and the Gaussian part is
 * relation-free (its sensitivity bound holds for any two data sets).
 */
import { InvalidParameterError } from '../../errors.js';
import { optionNames, rejectUnknownOptions, requirePositive } from '../../validate.js';
import type { ComposeEvent } from './types.js';
import { composeEvent, gaussianEvent, objectivePerturbationEvent } from './constructors.js';

export interface AmpEventParameters {
  /** sigma: std of each coordinate of the objective's linear noise b. */
  readonly noiseStd: number;
  /** L: bound on every per-example gradient norm (the clipping norm C, or less). */
  readonly lipschitz: number;
  /** beta: smoothness bound of the per-example loss (sup f'' R^2). */
  readonly smoothness: number;
  /** lambda: regulariser of the SUM objective, > beta. */
  readonly regularization: number;
  /** tau: bound on ||grad L(theta~)||_2 of the SUM objective at the approximate minimiser. */
  readonly gradTolerance: number;
  /** sigma_out: std of each coordinate of the output noise. */
  readonly outputNoiseStd: number;
}

/**
 * z = sigma_out lambda / (2 tau), rounded DOWN by a few ulps (less noise per unit of sensitivity is
 * the pessimistic direction).
 */
export function ampOutputNoiseMultiplier(params: Pick<AmpEventParameters, 'regularization' | 'gradTolerance' | 'outputNoiseStd'>): number {
  const lambda = requirePositive('regularization', params.regularization);
  const tau = requirePositive('gradTolerance', params.gradTolerance);
  const sigmaOut = requirePositive('outputNoiseStd', params.outputNoiseStd);
  const z = ((sigmaOut * lambda) / (2 * tau)) * (1 - 8 * Number.EPSILON);
  if (!(z > 0 && Number.isFinite(z))) {
    throw new InvalidParameterError('outputNoiseStd', sigmaOut, 'such that sigma_out lambda / (2 tau) is a positive finite number', `got ${z}`);
  }
  return z;
}

const AMP_EVENT_PARAMETERS = optionNames<AmpEventParameters>({ noiseStd: true, lipschitz: true, smoothness: true, regularization: true, gradTolerance: true, outputNoiseStd: true });

/**
 * The event of Approximate Minima Perturbation (AMP), `003` Alg. 1 (see the module comment):
 * objective perturbation composed with the Gaussian release of theta~ - theta^P at sensitivity
 * 2 tau / lambda. Refuses lambda <= beta (Thm. 4.1's condition, via `objectivePerturbationEvent`).
 *
 * @example
 * ampEvent({noiseStd: 5, lipschitz: Math.SQRT2, smoothness: 0.5, regularization: 20, gradTolerance: 0.01, outputNoiseStd: 0.15})
 * // compose([objectivePerturbation(...), gaussian(150)])
 */
export function ampEvent(params: AmpEventParameters): ComposeEvent {
  rejectUnknownOptions(params, AMP_EVENT_PARAMETERS, 'ampEvent');
  const objective = objectivePerturbationEvent({
    noiseStd: params.noiseStd,
    lipschitz: params.lipschitz,
    smoothness: params.smoothness,
    regularization: params.regularization,
  });
  return composeEvent([objective, gaussianEvent(ampOutputNoiseMultiplier(params))]);
}
