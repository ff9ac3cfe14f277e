/**
 * DP-GD (`002` Sec. 2.2) in the learner registry: full-batch clipped gradient descent with
 * Gaussian noise, replace-one (n is public by the relation), composing into tuned and one-vs-rest
 * releases, out of core and inside a database (`dp-gd.ts`, `gradient/streamed.ts`,
 * `sql-gradient.ts`).
 */
import { NON_PRIVATE_EVENT, selfComposeEvent } from '../../accounting/events/constructors.js';
import { requireInteger } from '../../validate.js';
import { DEFAULT_DPGD_STEPS, defaultStep } from '../defaults.js';
import { dpGdStepNoise, setUpDpGd, trainDpGd, type DpGdOptions, DP_GD_OPTIONS } from './dp-gd.js';
import { clipNormFromBounds, learnerOptions, type GradientLearner } from '../learner.js';

export const dpgd: GradientLearner<'dpgd', DpGdOptions> = {
  method: 'dpgd',
  summary: 'noisy gradient descent on the full data set',
  reference: 'the Gaussian mechanism on clipped gradient sums, composed over steps (RDP or PLD)',
  relation: 'replaceOne',
  datasetSize: 'records',
  options: learnerOptions(DP_GD_OPTIONS),
  required: ['clipNorm'],
  defaults: (shape, given) => {
    const regularization = given.regularization ?? 0;
    return { learningRate: given.learningRate ?? defaultStep(shape.smoothness, regularization), regularization, steps: given.steps ?? DEFAULT_DPGD_STEPS };
  },
  fromBounds: (bounds, given) => ({ clipNorm: clipNormFromBounds(given, bounds) }),
  train: trainDpGd,
  // finishDpGd's event, from setUpDpGd alone (zero noise: the non-private report's event).
  plan: (shape, options) => {
    const run = setUpDpGd(shape, options);
    return run.noise === undefined ? NON_PRIVATE_EVENT : selfComposeEvent(run.noise.event, run.steps);
  },
  work: (given, n) => {
    const steps = given.steps ?? DEFAULT_DPGD_STEPS;
    return n === undefined ? {} : { gradients: { count: steps * n, option: 'steps', value: steps, rule: `steps x rows = ${steps} x ${n}` } };
  },
  cli: { flags: ['noiseMultiplier', 'clipNorm', 'steps', 'learningRate', 'regularization', 'precision'] },
  composite: {
    runNoise: (options, shape, noiseMultiplier, continuous) => {
      const steps = requireInteger('steps', options.steps, 1);
      const noise = dpGdStepNoise(shape, options.clipNorm, noiseMultiplier, continuous);
      return { event: selfComposeEvent(noise.event, steps), granularity: noise.granularity };
    },
  },
  outOfCore: async (source, options) => (await import('./streamed.js')).trainDpGdStreamed(source, options),
  inDatabase: true,
};
