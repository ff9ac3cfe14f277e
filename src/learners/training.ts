/**
 * Options shared by the learners: either a privacy target (epsilon, delta) for which the learner
 * calibrates its noise with the accountant, or explicit noise (reported with what it costs).
 */
import { InvalidParameterError } from '../errors.js';
import type { Rng } from '../random/rng.js';
import { requireNonNegative, requireOpenUnit, requirePositive } from '../validate.js';
import type { LinearModel } from './models/model.js';
import type { PrivacyReport } from './models/privacy-report.js';

/** The delta every dpfit command and estimator uses when none is given (`--delta`'s default). */
export const DEFAULT_DELTA = 1e-5;

export interface NoiseOptions {
  /** Target epsilon; with `delta`, the learner calibrates its noise. */
  readonly epsilon?: number;
  /** delta of the target, or the delta at which explicit noise is reported. */
  readonly delta: number;
  /** Explicit noise multiplier instead of a target (0: no noise, NOT private; for testing). */
  readonly noiseMultiplier?: number;
  /** Randomness for sampling and noise (default: the secure generator). */
  readonly rng?: Rng;
  /**
   * Floating-point Gaussian noise instead of the default exact discrete noise on a grid: open to
   * floating-point attacks (Mironov 2012), so the report's guarantee is `none`. For experiments
   * that compare the two (e.g. `npm run bench -- train`).
   */
  readonly continuousNoise?: boolean;
}

/**
 * A learner's `method` (train()'s options for it, passed on unchanged, carry it): its own or
 * none. Another names a different learner, which this one would not be: refused.
 */
export function requireOwnMethod(method: unknown, own: string, where: string): void {
  if (method !== undefined && method !== own) {
    throw new InvalidParameterError('method', method, `'${own}' or absent: ${where} trains only '${own}' (train() picks the learner by its method)`);
  }
}

export type NoiseTarget =
  | { readonly kind: 'target'; readonly epsilon: number; readonly delta: number }
  | { readonly kind: 'explicit'; readonly noiseMultiplier: number };

export function noiseTarget(options: NoiseOptions): NoiseTarget {
  if ((options.epsilon === undefined) === (options.noiseMultiplier === undefined)) {
    throw new InvalidParameterError('epsilon', options.epsilon, 'given, or noiseMultiplier given instead (exactly one of the two)');
  }
  if (options.noiseMultiplier !== undefined) {
    if (options.noiseMultiplier !== 0) requirePositive('noiseMultiplier', options.noiseMultiplier);
    requireNonNegative('noiseMultiplier', options.noiseMultiplier);
    if (options.noiseMultiplier > 0) requireOpenUnit('delta', options.delta);
    return { kind: 'explicit', noiseMultiplier: options.noiseMultiplier };
  }
  return { kind: 'target', epsilon: requirePositive('epsilon', options.epsilon), delta: requireOpenUnit('delta', options.delta) };
}

export interface TrainingDiagnostics {
  readonly method: string;
  readonly steps: number;
  readonly noiseMultiplier: number;
  readonly noiseStd: number;
  /** Average fraction of per-example gradients that were clipped (gradient learners). */
  readonly clippedFraction?: number;
  readonly clipNorm?: number;
  readonly learningRate?: number;
  readonly [key: string]: unknown;
}

/** What a learner that always releases a model returns: the model, its privacy report and the owner's diagnostics. */
export interface TrainResult {
  readonly model: LinearModel;
  readonly privacy: PrivacyReport;
  readonly diagnostics: TrainingDiagnostics;
}
