/**
 * Default hyperparameters, computed from PUBLIC quantities only (the number of rows n, treated as
 * public as everywhere in dpfit, the dimension d, the schema's row-norm bound R, the loss's
 * curvature, the target epsilon), never from the data, so choosing them costs no privacy. Each
 * rule is the textbook choice for the method's analysis; the constants were checked on UCI Adult
 * at epsilon = 1 (docs/methods.md, "Defaults"), where every default beats the majority class.
 *
 * Each learner's registry entry (`*-learner.ts` in its family folder, `defaults`) puts these rules together for its
 * options; `train()`, the estimators and every path of `dpfit train` fill options through it.
 */
import { requirePositive } from '../validate.js';

/** beta = sup f'' R^2 + lambda: the smoothness of the average regularised GLM loss on rows of norm <= R. */
export function glmSmoothness(curvatureBound: number, rowNormBound: number, regularization = 0): number {
  return curvatureBound * rowNormBound * rowNormBound + regularization;
}

/**
 * DP-GD and DP-SGD: the step 1 / beta, the classical step of gradient descent on a beta-smooth
 * convex function (Nesterov 2004, Thm. 2.1.14), which the noise does not change.
 */
export function defaultGradientLearningRate(smoothness: number): number {
  return 1 / requirePositive('smoothness', smoothness);
}

/**
 * Shuffled SGD (batch size one): 5 / (beta n) per step, so that one epoch of n steps moves about
 * as far as five full-batch steps of 1 / beta while the per-step noise (std learningRate z C)
 * stays small; with DEFAULT_SHUFFLED_EPOCHS epochs. Far below the 2 / beta the last-iterate
 * bound needs.
 */
export function defaultShuffledLearningRate(smoothness: number, n: number): number {
  return 5 / (requirePositive('smoothness', smoothness) * requirePositive('n', n));
}
export const DEFAULT_SHUFFLED_EPOCHS = 5;

/**
 * Output perturbation (exact ERM or SGD): lambda = sqrt(d) / (n epsilon). The output noise has
 * std z 2L / (n lambda) per coordinate (Chaudhuri, Monteleoni & Sarwate 2011, sensitivity
 * 2L / (n lambda)) and z is about sqrt(2 ln(1.25 / delta)) / epsilon, so its norm is then about
 * 2 L sqrt(2 ln(1.25 / delta)), the same whatever n, d and epsilon, while the regulariser's
 * pull lambda vanishes as n grows. With no target epsilon (an explicit noise multiplier), epsilon = 1.
 */
export function defaultOutputRegularization(n: number, d: number, epsilon = 1): number {
  return Math.sqrt(requirePositive('d', d)) / (requirePositive('n', n) * requirePositive('epsilon', epsilon));
}

/**
 * Output perturbation of SGD: the batch size b = ceil(100 gamma mu n) (at least 1, at most n).
 * Its sensitivity (2 gamma L / b) / (1 - rho^m), m = n / b steps per epoch and 1 - rho about
 * gamma mu, is within about 1 % of the exact minimiser's 2L / (n mu) once m gamma mu <= 0.01;
 * with b = 1 it is 2 gamma L, which no n reduces. DEFAULT_OUTPUT_SGD_EPOCHS epochs.
 */
export function defaultOutputSgdBatchSize(n: number, learningRate: number, regularization: number): number {
  const b = Math.ceil(100 * requirePositive('learningRate', learningRate) * requirePositive('regularization', regularization) * requirePositive('n', n));
  return Math.max(1, Math.min(n, b));
}
export const DEFAULT_OUTPUT_SGD_EPOCHS = 10;

/** What the defaults need to know: public quantities only. */
export interface DefaultsShape {
  /** The public n (`dataset-size.ts`); absent for a learner whose release keeps n private (its rules use none). */
  readonly n?: number;
  readonly d: number;
  /** beta of the average loss WITHOUT lambda (sup f'' R^2); unknown without a public row-norm bound R. */
  readonly smoothness?: number;
  readonly epsilon?: number;
  /** The lambda the caller chose, if any (output methods default it). */
  readonly regularization?: number;
  /** The step size the caller chose, if any (output-sgd's batch size depends on it). */
  readonly learningRate?: number;
}

/**
 * The step 1 / (beta + lambda) of DP-GD, DP-SGD and output-sgd (`defaultGradientLearningRate`);
 * without a public smoothness, 1.
 */
export function defaultStep(smoothness: number | undefined, regularization: number): number {
  return smoothness === undefined ? 1 : defaultGradientLearningRate(smoothness + regularization);
}

/** DP-GD: 100 full-batch steps. */
export const DEFAULT_DPGD_STEPS = 100;
/** DP-SGD: 10 epochs of expected batches of min(256, n). */
export const DEFAULT_DPSGD_EPOCHS = 10;
export function defaultDpSgdBatchSize(n: number): number {
  return Math.min(256, n);
}
/** RGM: 100 steps. */
export const DEFAULT_RGM_STEPS = 100;
