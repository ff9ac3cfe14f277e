/**
 * Output perturbation (Chaudhuri, Monteleoni & Sarwate 2011) in the learner registry: the
 * certified minimiser of the lambda-regularised average loss plus Gaussian noise, replace-one
 * (`output-perturbation.ts`).
 */
import { defaultOutputRegularization } from '../defaults.js';
import { learnerOptions, publicCount, type Learner, type OptionRule } from '../learner.js';
import { trainOutputPerturbation, type OutputPerturbationOptions, OUTPUT_PERTURBATION_OPTIONS } from './output-perturbation.js';
import type { TrainResult } from '../training.js';

/** lambda > 0: the strong convexity output perturbation's sensitivity bound needs (shared with output-sgd). */
export const POSITIVE_REGULARIZATION: OptionRule = {
  option: 'regularization',
  holds: (value) => typeof value === 'number' && value > 0,
  expected: '> 0',
  why: 'the strong convexity its sensitivity bound needs',
};

export const output: Learner<'output', OutputPerturbationOptions, TrainResult> = {
  method: 'output',
  summary: 'noise on the regularised minimiser',
  reference: 'Chaudhuri, Monteleoni, Sarwate 2011 (output perturbation)',
  relation: 'replaceOne',
  datasetSize: 'records',
  options: learnerOptions(OUTPUT_PERTURBATION_OPTIONS),
  rules: [POSITIVE_REGULARIZATION],
  defaults: (shape, given) => ({ regularization: given.regularization ?? defaultOutputRegularization(publicCount(shape), shape.d, shape.epsilon ?? 1) }),
  // Either bound gives the Lipschitz constant: the row-norm bound unless a clipping norm is given.
  fromBounds: (bounds, given) => (given.clipNorm !== undefined ? {} : { rowNormBound: given.rowNormBound ?? bounds.rowNormBound }),
  train: trainOutputPerturbation,
  work: (given, n) =>
    given.maxIterations === undefined || n === undefined
      ? {}
      : { gradients: { count: given.maxIterations * n, option: 'maxIterations', value: given.maxIterations, rule: `max-iterations x rows = ${given.maxIterations} x ${n}` } },
  cli: { flags: ['noiseMultiplier', 'clipNorm', 'regularization', 'gradTolerance', 'maxIterations'] },
};
