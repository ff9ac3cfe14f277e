/**
 * Output perturbation of SGD (`004` Sec. 3.2.2) in the learner registry: noiseless SGD on the
 * lambda-regularised loss plus Gaussian output noise, its sensitivity by contraction,
 * replace-one (`output-perturbation-sgd.ts`).
 */
import { DEFAULT_OUTPUT_SGD_EPOCHS, defaultOutputRegularization, defaultOutputSgdBatchSize, defaultStep } from '../defaults.js';
import type { TrainResult } from '../training.js';
import { learnerOptions, publicCount, type Learner } from '../learner.js';
import { trainOutputPerturbationSgd, type OutputPerturbationSgdOptions, OUTPUT_PERTURBATION_SGD_OPTIONS } from './output-perturbation-sgd.js';
import { POSITIVE_REGULARIZATION } from './output-learner.js';

export const outputSgd: Learner<'outputSgd', OutputPerturbationSgdOptions, TrainResult> = {
  method: 'outputSgd',
  summary: 'noise on the output of (non-private) SGD',
  reference: '004 Sec. 3.2.2',
  relation: 'replaceOne',
  datasetSize: 'records',
  options: learnerOptions(OUTPUT_PERTURBATION_SGD_OPTIONS),
  rules: [POSITIVE_REGULARIZATION],
  defaults: (shape, given) => {
    const n = publicCount(shape);
    const regularization = given.regularization ?? defaultOutputRegularization(n, shape.d, shape.epsilon ?? 1);
    const learningRate = given.learningRate ?? defaultStep(shape.smoothness, regularization);
    return { regularization, learningRate, epochs: given.epochs ?? DEFAULT_OUTPUT_SGD_EPOCHS, batchSize: given.batchSize ?? defaultOutputSgdBatchSize(n, learningRate, regularization) };
  },
  // The row-norm bound always: its smoothness needs R even with a clipping norm.
  fromBounds: (bounds, given) => ({ rowNormBound: given.rowNormBound ?? bounds.rowNormBound }),
  train: trainOutputPerturbationSgd,
  work: (given, n) => {
    if (n === undefined) return {};
    const epochs = given.epochs ?? DEFAULT_OUTPUT_SGD_EPOCHS;
    // Without a given batch size its default depends on the loss and the schema: 1 counts at least as many steps.
    const batch = given.batchSize ?? 1;
    return {
      steps: { count: (epochs * n) / Math.max(1, batch), option: 'epochs', value: epochs, rule: `epochs x rows / batch size = ${epochs} x ${n} / ${batch}` },
      gradients: { count: epochs * n, option: 'epochs', value: epochs, rule: `epochs x fraction x rows = ${epochs} x 1 x ${n}` },
    };
  },
  cli: { flags: ['noiseMultiplier', 'clipNorm', 'regularization', 'epochs', 'batchSize', 'learningRate'] },
};
