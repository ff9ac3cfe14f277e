/**
 * Minimises a GLM objective (`glmObjective`: SUM of losses + lambda/2 ||theta||^2 + b.theta,
 * optionally clipped) to a gradient-norm tolerance, by damped Newton for small d and L-BFGS
 * otherwise, and re-checks the tolerance on a fresh gradient evaluation at the returned point.
 * Learners whose guarantee needs (near-)exact minimisers (objective and output perturbation) use
 * `met` to refuse a release; they never trust the optimiser's own flag alone.
 */
import { InvalidParameterError } from '../../errors.js';
import { lbfgs, type OptimizeProgress, type OptimizeStopReason } from '../../math/lbfgs.js';
import { norm2 } from '../../math/linear-algebra.js';
import { newton } from '../../math/newton.js';
import { requireInteger } from '../../validate.js';
import { glmHessianCallback, glmObjective, type GlmObjectiveOptions } from './objective.js';
import type { GlmData, GlmLoss } from './types.js';

/** Largest dimension for which Newton's method (O(n d^2) per Hessian) is the default. */
export const NEWTON_MAX_DIMENSION = 200;

export interface MinimizeGlmOptions {
  /** Absolute tolerance on ||grad|| of the SUM objective. */
  readonly gradTolerance: number;
  /** Step cap (default 100 for Newton, 10000 for L-BFGS). */
  readonly maxIterations?: number;
  /** Default: 'newton' for d <= NEWTON_MAX_DIMENSION, else 'lbfgs'. */
  readonly optimizer?: 'newton' | 'lbfgs';
  /** After every accepted step (progress bars: `optimizer-progress.ts`). */
  readonly onIteration?: (progress: OptimizeProgress) => void;
}

export interface MinimizeGlmResult {
  readonly theta: Float64Array;
  readonly optimizer: 'newton' | 'lbfgs';
  readonly iterations: number;
  /** ||grad|| recomputed at theta. */
  readonly gradNorm: number;
  readonly reason: OptimizeStopReason;
  /** The optimiser converged and the recomputed gradient norm is <= gradTolerance. */
  readonly met: boolean;
}

export function minimizeGlmObjective(loss: GlmLoss, data: GlmData, objectiveOptions: GlmObjectiveOptions, options: MinimizeGlmOptions): MinimizeGlmResult {
  const objective = glmObjective(loss, data, objectiveOptions);
  const optimizer = options.optimizer ?? (data.d <= NEWTON_MAX_DIMENSION ? 'newton' : 'lbfgs');
  if (optimizer !== 'newton' && optimizer !== 'lbfgs') throw new InvalidParameterError('optimizer', optimizer, "'newton' or 'lbfgs'");
  const start = new Float64Array(data.d);
  const result = optimizer === 'newton'
    ? newton(objective, glmHessianCallback(loss, data, objectiveOptions), start, {
      gradTolerance: options.gradTolerance,
      maxIterations: requireInteger('maxIterations', options.maxIterations ?? 100, 1),
      ...(options.onIteration === undefined ? {} : { onIteration: options.onIteration }),
    })
    : lbfgs(objective, start, { gradTolerance: options.gradTolerance, maxIterations: requireInteger('maxIterations', options.maxIterations ?? 10000, 1), ...(options.onIteration === undefined ? {} : { onIteration: options.onIteration }) });
  const gradient = new Float64Array(data.d);
  objective(result.x, gradient);
  const gradNorm = norm2(gradient);
  return { theta: result.x, optimizer, iterations: result.iterations, gradNorm, reason: result.reason, met: result.converged && gradNorm <= options.gradTolerance };
}
