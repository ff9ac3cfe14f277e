/**
 * Shuffled SGD (`004` Alg. 1) in the learner registry: batch size one over shuffled partial
 * epochs, only the last iterate released, replace-one. By default each partial epoch is one record
 * (`defaultShuffledFraction`: tau = 1/n, each step amplified by sampling without replacement);
 * with whole epochs the schema's row-norm bound lets its last iterate be accounted by amplification
 * by iteration (`shuffled-sgd.ts`, `lattice-sgd.ts`). Inside a composite release it runs the plain
 * iteration, whose event `runNoise` gives.
 */
import { DEFAULT_SHUFFLED_EPOCHS, defaultShuffledFraction, defaultShuffledLearningRate } from '../defaults.js';
import { clipNormFromBounds, learnerOptions, publicCount, type GradientLearner } from '../learner.js';
import { planShuffledSgd, shuffledPartialEpochs, shuffledSgdEvent, shuffledStepNoise, trainShuffledSgd, type ShuffledSgdOptions, SHUFFLED_SGD_OPTIONS } from './shuffled-sgd.js';

export const shuffled: GradientLearner<'shuffled', ShuffledSgdOptions> = {
  method: 'shuffled',
  summary: 'noisy SGD on one record a step, drawn at random (--fraction 1: whole shuffled epochs, the last iterate accounted)',
  reference: '004 Alg. 1; one record a step: sampling without replacement (Wang, Balle & Kasiviswanathan 2019); --fraction 1: 004 Thm. 3.6 (the last iterate, by amplification by iteration)',
  relation: 'replaceOne',
  datasetSize: 'records',
  options: learnerOptions(SHUFFLED_SGD_OPTIONS),
  required: ['clipNorm'],
  defaults: (shape, given) => {
    const regularization = given.regularization ?? 0;
    const n = publicCount(shape);
    const epochs = given.epochs ?? DEFAULT_SHUFFLED_EPOCHS;
    return {
      learningRate: given.learningRate ?? (shape.smoothness === undefined ? 1 : defaultShuffledLearningRate(shape.smoothness + regularization, n, epochs)),
      regularization,
      epochs,
      fraction: given.fraction ?? defaultShuffledFraction(n),
    };
  },
  // The row-norm bound too: the last-iterate bound needs it (as dpfit train).
  fromBounds: (bounds, given) => ({ clipNorm: clipNormFromBounds(given, bounds), rowNormBound: given.rowNormBound ?? bounds.rowNormBound }),
  train: trainShuffledSgd,
  // setUpShuffledSgd's event (the lattice's headline bound when its conditions hold) with the public n and the declared R.
  plan: (shape, options) => ({ event: planShuffledSgd(shape, options), extraDelta: 0 }),
  work: (given, n) => {
    if (n === undefined) return {};
    const epochs = given.epochs ?? DEFAULT_SHUFFLED_EPOCHS;
    const fraction = given.fraction ?? defaultShuffledFraction(n);
    // ceil(epochs / fraction) partial epochs of floor(fraction x rows) steps, one gradient each.
    const count = shuffledPartialEpochs(epochs, fraction) * Math.max(1, Math.floor(fraction * n));
    const rule = `ceil(epochs / fraction) x floor(fraction x rows) = ceil(${epochs} / ${fraction}) x floor(${fraction} x ${n})`;
    return {
      steps: { count, option: 'epochs', value: epochs, rule },
      gradients: { count, option: 'epochs', value: epochs, rule },
    };
  },
  cli: { flags: ['noiseMultiplier', 'clipNorm', 'epochs', 'learningRate', 'regularization', 'fraction', 'conjecture', 'projectionRadius'], flagOptions: { conjecture: 'accountConjecture' } },
  composite: {
    runNoise: (options, shape, noiseMultiplier, continuous) => {
      const noise = shuffledStepNoise(shape.d, options.clipNorm, noiseMultiplier, continuous);
      const fraction = options.fraction ?? 1;
      const stepsPerEpoch = Math.floor(fraction * shape.n);
      return { event: shuffledSgdEvent(noise.event, shuffledPartialEpochs(options.epochs, fraction), { n: shape.n, stepsPerEpoch }), granularity: noise.granularity };
    },
    // The composite's event is the plain iteration's: the last-iterate path (accounted otherwise) is off.
    runOptions: (options) => ({ ...options, lastIterate: false }),
  },
};
