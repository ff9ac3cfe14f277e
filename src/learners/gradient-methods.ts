/**
 * The three gradient-perturbation learners behind one dispatcher, and what composite releases
 * (honest tuning, one-vs-rest) need from them: the event of ONE run as a function of the noise
 * multiplier z, known before any data is touched (it depends only on n, which these learners
 * treat as public, and on the options), so the noise can be calibrated for the whole composite
 * release and every run then trained with that explicit z.
 *
 *   dpgd      selfCompose(gaussian(z), T)                      replace-one     (dp-gd.ts)
 *   dpsgd     selfCompose(poissonSampled(q, gaussian(z)), T)   add/remove-one  (dp-sgd.ts)
 *   shuffled  selfCompose(gaussian(z/2), P)                    replace-one     (shuffled-sgd.ts)
 */
import { calibrateNoiseMultiplier, dpsgdEvent } from '../accounting/calibrate.js';
import { gaussianEvent, selfComposeEvent, type DpEvent } from '../accounting/events.js';
import { exactGaussianCompositionNoiseMultiplier, gaussianPrecision } from '../accounting/gaussian-composition.js';
import { InvalidParameterError } from '../errors.js';
import { requireInteger } from '../validate.js';
import { trainDpGd, type DpGdOptions, type TrainResult } from './dp-gd.js';
import { dpSgdSchedule, trainDpSgd, type DpSgdOptions } from './dp-sgd.js';
import type { GlmData } from './glm/types.js';
import type { NoiseOptions } from './training.js';
import { shuffledPartialEpochs, shuffledSgdEvent, trainShuffledSgd, type ShuffledSgdOptions } from './shuffled-sgd.js';

export type GradientMethod = 'dpgd' | 'dpsgd' | 'shuffled';
export const GRADIENT_METHODS: readonly GradientMethod[] = ['dpgd', 'dpsgd', 'shuffled'];

type WithoutNoise<T> = Omit<T, 'epsilon' | 'delta' | 'noiseMultiplier' | 'rng'>;

/** The options of one method, without the noise (set by the composite release). */
export type GradientMethodOptions =
  | ({ readonly method: 'dpgd' } & WithoutNoise<DpGdOptions>)
  | ({ readonly method: 'dpsgd' } & WithoutNoise<DpSgdOptions>)
  | ({ readonly method: 'shuffled' } & WithoutNoise<ShuffledSgdOptions>);

export function requireGradientMethod(method: string): GradientMethod {
  if (!(GRADIENT_METHODS as readonly string[]).includes(method)) {
    throw new InvalidParameterError('method', method, `one of ${GRADIENT_METHODS.map((m) => `'${m}'`).join(', ')}`);
  }
  return method as GradientMethod;
}

/** The neighbouring relation a method's accounting holds under (DP-SGD's Poisson sampling: add/remove-one). */
export function gradientMethodRelation(method: GradientMethod): 'replaceOne' | 'addOrRemoveOne' {
  return method === 'dpsgd' ? 'addOrRemoveOne' : 'replaceOne';
}

/** The event one run releases with noise multiplier z on n rows. */
export function gradientRunEvent(options: GradientMethodOptions, n: number, noiseMultiplier: number): DpEvent {
  switch (options.method) {
    case 'dpgd':
      return selfComposeEvent(gaussianEvent(noiseMultiplier), requireInteger('steps', options.steps, 1));
    case 'dpsgd': {
      const { samplingProbability, steps } = dpSgdSchedule(n, options);
      return dpsgdEvent(samplingProbability, noiseMultiplier, steps);
    }
    case 'shuffled':
      return shuffledSgdEvent(noiseMultiplier, shuffledPartialEpochs(options.epochs, options.fraction ?? 1));
    default:
      throw new InvalidParameterError('method', (options as { method: unknown }).method, `one of ${GRADIENT_METHODS.join(', ')}`);
  }
}

/** Trains one run with a target (epsilon, delta) or an explicit noise multiplier (reported at delta). */
export function trainGradientMethod(data: GlmData, options: GradientMethodOptions, noise: NoiseOptions): TrainResult {
  const { method, ...rest } = options;
  const full = { ...rest, ...noise };
  if (method === 'dpgd') return trainDpGd(data, full as DpGdOptions);
  if (method === 'dpsgd') return trainDpSgd(data, full as DpSgdOptions);
  if (method === 'shuffled') return trainShuffledSgd(data, full as ShuffledSgdOptions);
  throw new InvalidParameterError('method', method, `one of ${GRADIENT_METHODS.join(', ')}`);
}

/**
 * The smallest noise multiplier z (on the safe side) for which the composite release
 * `wrap(runEvent(z))` is (epsilon, delta)-DP. Compositions of Gaussians alone (DP-GD and shuffled
 * SGD under `selfCompose` wraps) are calibrated exactly; anything else by the RDP accountant.
 */
export function calibrateCompositeNoise(
  options: GradientMethodOptions,
  n: number,
  wrap: (runEvent: DpEvent) => DpEvent,
  target: { readonly epsilon: number; readonly delta: number },
): { noiseMultiplier: number; event: DpEvent } {
  const probe = wrap(gradientRunEvent(options, n, 1));
  const precision = gaussianPrecision(probe);
  if (precision !== undefined && precision > 0) {
    // The composite is k Gaussians of multiplier z (k = precision at z = 1; shuffled SGD's z/2 gives 4 per use).
    const makeEvent = (z: number) => wrap(gradientRunEvent(options, n, z));
    const z = exactGaussianCompositionNoiseMultiplier(target.epsilon, target.delta, precision, makeEvent);
    return { noiseMultiplier: z, event: makeEvent(z) };
  }
  const calibration = calibrateNoiseMultiplier((z) => wrap(gradientRunEvent(options, n, z)), { targetEpsilon: target.epsilon, delta: target.delta });
  return { noiseMultiplier: calibration.noiseMultiplier, event: calibration.event };
}
