/**
 * Shuffled SGD (`004` Alg. 1) in the learner registry: batch size one over shuffled partial
 * epochs, only the last iterate released, replace-one. The schema's row-norm bound lets its last
 * iterate be accounted by amplification by iteration (`shuffled-sgd.ts`, `lattice-sgd.ts`); inside
 * a composite release it runs the plain iteration, whose event `runNoise` gives.
 */
import { DEFAULT_SHUFFLED_EPOCHS, defaultShuffledLearningRate } from '../defaults.js';
import { clipNormFromBounds, learnerOptions, publicCount, type GradientLearner } from '../learner.js';
import { shuffledPartialEpochs, shuffledSgdEvent, shuffledStepNoise, trainShuffledSgd, type ShuffledSgdOptions, SHUFFLED_SGD_OPTIONS } from './shuffled-sgd.js';

export const shuffled: GradientLearner<'shuffled', ShuffledSgdOptions> = {
  method: 'shuffled',
  summary: 'noisy SGD over shuffled epochs, its last iterate accounted',
  reference: '004 Alg. 1, Thm. 3.6 (the last iterate, by amplification by iteration)',
  relation: 'replaceOne',
  datasetSize: 'records',
  options: learnerOptions(SHUFFLED_SGD_OPTIONS),
  required: ['clipNorm'],
  defaults: (shape, given) => {
    const regularization = given.regularization ?? 0;
    return {
      learningRate: given.learningRate ?? (shape.smoothness === undefined ? 1 : defaultShuffledLearningRate(shape.smoothness + regularization, publicCount(shape))),
      regularization,
      epochs: given.epochs ?? DEFAULT_SHUFFLED_EPOCHS,
      fraction: given.fraction ?? 1,
    };
  },
  // The row-norm bound too: the last-iterate bound needs it (as dpfit train).
  fromBounds: (bounds, given) => ({ clipNorm: clipNormFromBounds(given, bounds), rowNormBound: given.rowNormBound ?? bounds.rowNormBound }),
  train: trainShuffledSgd,
  work: (given, n) => {
    if (n === undefined) return {};
    const epochs = given.epochs ?? DEFAULT_SHUFFLED_EPOCHS;
    const fraction = given.fraction ?? 1;
    return {
      steps: { count: epochs * fraction * n, option: 'epochs', value: epochs, rule: `epochs x rows / batch size = ${epochs} x ${n} / 1` },
      gradients: { count: epochs * fraction * n, option: 'epochs', value: epochs, rule: `epochs x fraction x rows = ${epochs} x ${fraction} x ${n}` },
    };
  },
  cli: { flags: ['noiseMultiplier', 'clipNorm', 'epochs', 'learningRate', 'regularization', 'fraction', 'conjecture', 'projectionRadius'], flagOptions: { conjecture: 'accountConjecture' } },
  composite: {
    runNoise: (options, shape, noiseMultiplier, continuous) => {
      const noise = shuffledStepNoise(shape.d, options.clipNorm, noiseMultiplier, continuous);
      const stepsPerEpoch = Math.floor((options.fraction ?? 1) * shape.n);
      return { event: shuffledSgdEvent(noise.event, shuffledPartialEpochs(options.epochs, options.fraction ?? 1), { n: shape.n, stepsPerEpoch }), granularity: noise.granularity };
    },
    // The composite's event is the plain iteration's: the last-iterate path (accounted otherwise) is off.
    runOptions: (options) => ({ ...options, lastIterate: false }),
  },
};
