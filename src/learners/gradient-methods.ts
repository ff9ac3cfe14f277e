/**
 * The three gradient-perturbation learners behind one dispatcher, and what composite releases
 * (honest tuning, one-vs-rest) need from them: the event of ONE run as a function of the noise
 * multiplier z, known before any data is touched (it depends only on n, which these learners
 * treat as public, and on the options), so the noise can be calibrated for the whole composite
 * release and every run then trained with that explicit z.
 *
 *   dpgd      selfCompose(gaussian(z), T)                      replace-one     (dp-gd.ts)
 *   dpsgd     selfCompose(poissonSampled(q, gaussian(z)), T)   add/remove-one  (dp-sgd.ts)
 *   shuffled  selfCompose(gaussian(z/2), P) (sampled 1 of n when floor(tau n) = 1)  replace-one  (shuffled-sgd.ts)
 */
import { calibrateNoiseMultiplier } from '../accounting/calibrate.js';
import { selfComposeEvent, type DpEvent } from '../accounting/events.js';
import { exactGaussianCompositionNoiseMultiplier, gaussianPrecision } from '../accounting/gaussian-composition.js';
import { InvalidParameterError } from '../errors.js';
import { requireInteger, requirePositive } from '../validate.js';
import { dpGdStepNoise, trainDpGd, type DpGdOptions, type TrainResult } from './dp-gd.js';
import { dpSgdPublicSize, dpSgdRunEvent, dpSgdSchedule, dpSgdStepNoise, trainDpSgd, type DpSgdOptions } from './dp-sgd.js';
import type { GlmData } from './glm/types.js';
import type { NoiseOptions } from './training.js';
import { shuffledPartialEpochs, shuffledSgdEvent, shuffledStepNoise, trainShuffledSgd, type ShuffledSgdOptions } from './shuffled-sgd.js';

export type GradientMethod = 'dpgd' | 'dpsgd' | 'shuffled';
export const GRADIENT_METHODS: readonly GradientMethod[] = ['dpgd', 'dpsgd', 'shuffled'];

type WithoutNoise<T> = Omit<T, 'epsilon' | 'delta' | 'noiseMultiplier' | 'rng' | 'continuousNoise'>;

/** The public shape of the data a run's event depends on: n rows (public for these learners) and d features. */
export interface RunShape {
  readonly n: number;
  readonly d: number;
}

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

/**
 * What one run releases with noise multiplier z on data of the given shape: its event and the
 * grid of its noise. By default the gridded discrete noise the learner draws; `continuous` gives
 * the floating-point mechanism's event (what calibrations solve for: the gridded event's
 * accounted multiplier is at least z). Depends on public quantities only.
 */
export function gradientRunNoise(options: GradientMethodOptions, shape: RunShape, noiseMultiplier: number, continuous = false): { event: DpEvent; granularity?: number } {
  requirePositive('noiseMultiplier', noiseMultiplier);
  const clipNorm = requirePositive('clipNorm', options.clipNorm);
  switch (options.method) {
    case 'dpgd': {
      const steps = requireInteger('steps', options.steps, 1);
      const noise = dpGdStepNoise(shape, clipNorm, noiseMultiplier, continuous);
      return { event: selfComposeEvent(noise.event, steps), granularity: noise.granularity };
    }
    case 'dpsgd': {
      const size = dpSgdPublicSize(shape.n, options.datasetSize);
      const { samplingProbability, steps } = dpSgdSchedule(size.datasetSize, options);
      const noise = dpSgdStepNoise({ n: size.rowsBound, d: shape.d }, clipNorm, noiseMultiplier, continuous);
      return { event: dpSgdRunEvent(samplingProbability, noise.event, steps), granularity: noise.granularity };
    }
    case 'shuffled': {
      const noise = shuffledStepNoise(shape.d, clipNorm, noiseMultiplier, continuous);
      const stepsPerEpoch = Math.floor((options.fraction ?? 1) * shape.n);
      return { event: shuffledSgdEvent(noise.event, shuffledPartialEpochs(options.epochs, options.fraction ?? 1), { n: shape.n, stepsPerEpoch }), granularity: noise.granularity };
    }
    default:
      throw new InvalidParameterError('method', (options as { method: unknown }).method, `one of ${GRADIENT_METHODS.join(', ')}`);
  }
}

/** The event of `gradientRunNoise`. */
export function gradientRunEvent(options: GradientMethodOptions, shape: RunShape, noiseMultiplier: number, continuous = false): DpEvent {
  return gradientRunNoise(options, shape, noiseMultiplier, continuous).event;
}

/**
 * The options of a run inside a composite release (tuning, one-vs-rest), whose accounting uses
 * `gradientRunEvent`: the run must be the mechanism that event describes, so shuffled SGD's
 * last-iterate path (a different iteration, accounted differently) is turned off.
 */
export function compositeRunOptions(options: GradientMethodOptions): GradientMethodOptions {
  return options.method === 'shuffled' ? { ...options, lastIterate: false } : options;
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
 * `wrap(runEvent(z))` is (epsilon, delta)-DP, solved for the continuous mechanism: compositions of
 * Gaussians alone (DP-GD and shuffled SGD under `selfCompose` wraps) exactly, anything else by the
 * RDP accountant. The returned event is the one the runs release (gridded discrete noise, whose
 * accounted multiplier is at least z, hence at least as private).
 */
export function calibrateCompositeNoise(
  options: GradientMethodOptions,
  shape: RunShape,
  wrap: (runEvent: DpEvent) => DpEvent,
  target: { readonly epsilon: number; readonly delta: number },
  continuous = false,
): { noiseMultiplier: number; event: DpEvent } {
  const continuousEvent = (z: number) => wrap(gradientRunEvent(options, shape, z, true));
  const precision = gaussianPrecision(continuousEvent(1));
  let noiseMultiplier: number;
  if (precision !== undefined && precision > 0) {
    // The composite is k Gaussians of multiplier z (k = precision at z = 1; shuffled SGD's z/2 gives 4 per use).
    noiseMultiplier = exactGaussianCompositionNoiseMultiplier(target.epsilon, target.delta, precision, continuousEvent);
  } else {
    noiseMultiplier = calibrateNoiseMultiplier(continuousEvent, { targetEpsilon: target.epsilon, delta: target.delta }).noiseMultiplier;
  }
  return { noiseMultiplier, event: wrap(gradientRunEvent(options, shape, noiseMultiplier, continuous)) };
}
