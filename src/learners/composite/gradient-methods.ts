/**
 * The gradient-perturbation learners of the registry (those whose entry has `composite`, in
 * `*-learner.ts`) behind one dispatcher, and what composite releases
 * (honest tuning, one-vs-rest) need from them: the event of ONE run as a function of the noise
 * multiplier z, known before any data is touched (it depends only on n, which these learners
 * treat as public, and on the options), so the noise can be calibrated for the whole composite
 * release and every run then trained with that explicit z.
 *
 *   dpgd      selfCompose(gaussian(z), T)                      replace-one     (dp-gd.ts)
 *   dpsgd     selfCompose(poissonSampled(q, gaussian(z)), T)   add/remove-one  (dp-sgd.ts)
 *   shuffled  selfCompose(gaussian(z/2), P) (sampled 1 of n when floor(tau n) = 1)  replace-one  (shuffled-sgd.ts)
 */
import { calibrateNoiseMultiplier } from '../../accounting/calibration/calibrate.js';
import type { DpEvent } from '../../accounting/events/types.js';
import { exactGaussianCompositionNoiseMultiplier, gaussianPrecision } from '../../accounting/gaussian/gaussian-composition.js';
import { InvalidParameterError } from '../../errors.js';
import { requirePositive } from '../../validate.js';
import type { GlmData } from '../glm/types.js';
import type { CompositeRuns, GradientLearner, WithoutNoise } from '../learner.js';
import { LEARNERS } from '../registry.js';
import type { NoiseOptions, TrainResult } from '../training.js';

/** The learners whose runs compose (their registry entries have `composite`). */
type CompositeEntry = Extract<(typeof LEARNERS)[number], { readonly composite: object }>;

export type GradientMethod = CompositeEntry['method'];

/** The gradient learners of the registry, in its order. */
const GRADIENT_LEARNERS = LEARNERS.filter((l): l is CompositeEntry => 'composite' in l && l.composite !== undefined);
export const GRADIENT_METHODS: readonly GradientMethod[] = GRADIENT_LEARNERS.map((l) => l.method);

/** The public shape of the data a run's event depends on: n rows (public for these learners) and d features. */
export interface RunShape {
  readonly n: number;
  readonly d: number;
}

/** The options of one method, without the noise (set by the composite release). */
export type GradientMethodOptions = CompositeEntry extends infer L ? (L extends GradientLearner<infer M, infer O> ? { readonly method: M } & WithoutNoise<O> : never) : never;

export function requireGradientMethod(method: string): GradientMethod {
  if (!(GRADIENT_METHODS as readonly string[]).includes(method)) {
    throw new InvalidParameterError('method', method, `one of ${GRADIENT_METHODS.map((m) => `'${m}'`).join(', ')}`);
  }
  return method as GradientMethod;
}

/** The registry entry of a gradient method (its composite runs and train function, options erased). */
function gradientLearner(method: unknown): GradientLearner<string, { readonly delta: number; readonly clipNorm: number }> & { readonly composite: CompositeRuns<never> } {
  const found = GRADIENT_LEARNERS.find((l) => l.method === method);
  if (found === undefined) throw new InvalidParameterError('method', method, `one of ${GRADIENT_METHODS.join(', ')}`);
  return found as never;
}

/** The neighbouring relation a method's accounting holds under (DP-SGD's Poisson sampling: add/remove-one). */
export function gradientMethodRelation(method: GradientMethod): 'replaceOne' | 'addOrRemoveOne' {
  return gradientLearner(method).relation;
}

/**
 * What one run releases with noise multiplier z on data of the given shape: its event and the
 * grid of its noise (the learner's `composite.runNoise`). By default the gridded discrete noise
 * the learner draws; `continuous` gives the floating-point mechanism's event (what calibrations
 * solve for: the gridded event's accounted multiplier is at least z). Depends on public
 * quantities only.
 */
export function gradientRunNoise(options: GradientMethodOptions, shape: RunShape, noiseMultiplier: number, continuous = false): { event: DpEvent; granularity?: number } {
  const learner = gradientLearner(options.method);
  requirePositive('noiseMultiplier', noiseMultiplier);
  const clipNorm = requirePositive('clipNorm', options.clipNorm);
  return learner.composite.runNoise({ ...options, clipNorm } as never, shape, noiseMultiplier, continuous);
}

/** The event of `gradientRunNoise`. */
export function gradientRunEvent(options: GradientMethodOptions, shape: RunShape, noiseMultiplier: number, continuous = false): DpEvent {
  return gradientRunNoise(options, shape, noiseMultiplier, continuous).event;
}

/**
 * The options of a run inside a composite release (tuning, one-vs-rest), whose accounting uses
 * `gradientRunEvent`: the run must be the mechanism that event describes (shuffled SGD's
 * last-iterate path, a different iteration accounted differently, is turned off).
 */
export function compositeRunOptions(options: GradientMethodOptions): GradientMethodOptions {
  const runOptions = gradientLearner(options.method).composite.runOptions;
  return runOptions === undefined ? options : (runOptions(options as never) as GradientMethodOptions);
}

/** Trains one run with a target (epsilon, delta) or an explicit noise multiplier (reported at delta). */
export function trainGradientMethod(data: GlmData, options: GradientMethodOptions, noise: NoiseOptions): TrainResult {
  const { method, ...rest } = options;
  return gradientLearner(method).train(data, { ...rest, ...noise } as never);
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
