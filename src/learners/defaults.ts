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
import { nextUp } from '../accounting/float-steps.js';
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
 * Shuffled SGD (`004` Alg. 1, batch size one): the fraction tau = 1/n of each shuffled epoch, so
 * that each partial epoch processes ONE record drawn uniformly, and each step is then amplified by
 * sampling without replacement (Wang, Balle & Kasiviswanathan 2019; `shuffledSgdEvent`). With whole
 * epochs (tau = 1) the proven bound is the last iterate's (amplification by iteration, `004`
 * Thm. 3.6), which on n = 300 to 32561 rows at epsilon 1 needs a noise multiplier about three
 * times larger for the same number of steps (5 epochs on Adult: z = 4.60 by the last iterate,
 * 1.41 with tau = 1/n; 1 and 5 epochs on 300 and 3000 rows: 4.7-6.9 against 1.6-2.1): with one
 * record per step the noise, std z C per step, is what the last iterate carries. The smallest
 * double >= 1/n with floor(tau n) = 1.
 */
export function defaultShuffledFraction(n: number): number {
  requirePositive('n', n);
  let fraction = 1 / n;
  while (Math.floor(fraction * n) < 1) fraction = nextUp(fraction);
  return Math.min(1, fraction);
}

/**
 * Shuffled SGD's step: the total step length of DP-GD's default (DEFAULT_DPGD_STEPS steps of
 * 1 / beta) spread over its epochs x n steps of one record, i.e. 100 / (beta epochs n) (20 / (beta n)
 * at the default 5 epochs), at most 1 / beta. The earlier 5 / (beta n) moved five times less: even
 * without noise (z = 0) 5 epochs of it on Adult learnt only the intercept (test accuracy 0.7638,
 * the majority class), against 0.8409 at ten times that step.
 */
export function defaultShuffledLearningRate(smoothness: number, n: number, epochs: number = DEFAULT_SHUFFLED_EPOCHS): number {
  const beta = requirePositive('smoothness', smoothness);
  return Math.min(1 / beta, DEFAULT_DPGD_STEPS / (beta * requirePositive('n', n) * requirePositive('epochs', epochs)));
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
