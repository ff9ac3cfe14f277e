/**
 * DP-SGD (Abadi et al. 2016) in the learner registry: Poisson-sampled batches, clipping and
 * Gaussian noise, add/remove-one; its q = B/n uses the declared `datasetSize` when there is one,
 * else the records read, treated as public (`dp-sgd.ts`, `dataset-size.ts`). Composes into tuned
 * and one-vs-rest releases and trains out of core.
 */
import { DEFAULT_DPSGD_EPOCHS, defaultDpSgdBatchSize, defaultStep } from '../defaults.js';
import { NON_PRIVATE_EVENT } from '../../accounting/events/constructors.js';
import { dpSgdPublicSize, dpSgdRunEvent, dpSgdSchedule, dpSgdStepNoise, setUpDpSgd, trainDpSgd, type DpSgdOptions, DP_SGD_OPTIONS } from './dp-sgd.js';
import { clipNormFromBounds, learnerOptions, publicCount, type GradientLearner } from '../learner.js';

export const dpsgd: GradientLearner<'dpsgd', DpSgdOptions> = {
  method: 'dpsgd',
  summary: 'noisy SGD on Poisson-sampled batches',
  reference: 'Abadi et al. 2016; subsampled-Gaussian accounting (RDP or PLD)',
  relation: 'addOrRemoveOne',
  datasetSize: 'declaredOrRecords',
  eventKinds: ['poissonSampled'],
  options: learnerOptions(DP_SGD_OPTIONS),
  required: ['clipNorm'],
  defaults: (shape, given) => {
    const regularization = given.regularization ?? 0;
    return {
      learningRate: given.learningRate ?? defaultStep(shape.smoothness, regularization),
      regularization,
      // A schedule given either way (steps or epochs, batchSize or samplingProbability) replaces the default one.
      ...(given.steps === undefined && given.epochs === undefined ? { epochs: DEFAULT_DPSGD_EPOCHS } : {}),
      ...(given.batchSize === undefined && given.samplingProbability === undefined ? { batchSize: defaultDpSgdBatchSize(publicCount(shape)) } : {}),
    };
  },
  fromBounds: (bounds, given) => ({ clipNorm: clipNormFromBounds(given, bounds) }),
  train: trainDpSgd,
  // trainDpSgd's event, from setUpDpSgd alone (zero noise: the non-private report's event).
  plan: (shape, options) => {
    const run = setUpDpSgd(shape, options);
    return run.noise === undefined ? NON_PRIVATE_EVENT : dpSgdRunEvent(run.samplingProbability, run.noise.event, run.steps);
  },
  work: (given, n) => {
    if (n === undefined) return {};
    const batch = given.batchSize ?? (given.samplingProbability === undefined ? defaultDpSgdBatchSize(n) : given.samplingProbability * n);
    if (!(batch > 0)) return {};
    const epochs = given.epochs ?? DEFAULT_DPSGD_EPOCHS;
    const steps = given.steps ?? Math.ceil((epochs * n) / batch);
    const by = given.steps !== undefined ? { option: 'steps', value: given.steps } : { option: 'epochs', value: epochs };
    return {
      steps: { count: steps, ...by, rule: `epochs x rows / batch size = ${epochs} x ${n} / ${batch}` },
      gradients: { count: steps * batch, ...by, rule: `steps x batch size = ${steps} x ${batch}` },
    };
  },
  cli: { flags: ['noiseMultiplier', 'clipNorm', 'steps', 'epochs', 'batchSize', 'learningRate', 'regularization', 'optimizer', 'schedule'] },
  composite: {
    runNoise: (options, shape, noiseMultiplier, continuous) => {
      const size = dpSgdPublicSize(shape.n, options.datasetSize);
      const { samplingProbability, steps } = dpSgdSchedule(size.datasetSize, options);
      const noise = dpSgdStepNoise({ n: size.rowsBound, d: shape.d }, options.clipNorm, noiseMultiplier, continuous);
      return { event: dpSgdRunEvent(samplingProbability, noise.event, steps), granularity: noise.granularity };
    },
  },
  outOfCore: async (source, options) => (await import('./streamed.js')).trainDpSgdStreamed(source, options),
};
