/**
 * The constructors of DpEvents (`types.ts`): every one validates its parameters, throws
 * `InvalidParameterError` naming the field, and returns a frozen event.
 */
import { InvalidParameterError } from '../../errors.js';
import { optionNames, rejectUnknownOptions, requireInHalfOpen, requireInteger, requireNonNegative, requireOpenUnit, requirePositive, requireProbability } from '../../validate.js';
import type {
  ComposeEvent,
  DpEvent,
  GaussianEvent,
  LaplaceEvent,
  NoOpEvent,
  NonPrivateEvent,
  NonUniformSampledEvent,
  ObjectivePerturbationEvent,
  PoissonSampledEvent,
  RandomizedResponseEvent,
  RelativeGaussianEvent,
  RepeatAndSelectEvent,
  SampledWithoutReplacementEvent,
  SelfComposeEvent,
  ShuffledLastIterateEvent,
  ShuffledSgdConjectureEvent,
} from './types.js';

/** The smallest grid noise std (in grid steps) the events accept: the coupling needs s > 8. */
export const MIN_GRID_NOISE_STD = 16;

/**
 * Checks a grid std field: absent, or a finite number >= 16 given together with discrete: true.
 * Returns the fields to store ({} or {discrete: true, [field]: value}).
 */
function gridFields<F extends string>(field: F, value: unknown, discrete: boolean | undefined): { discrete?: true } & Partial<Record<F, number>> {
  if (value === undefined) return (discrete ? { discrete: true } : {}) as { discrete?: true } & Partial<Record<F, number>>;
  if (discrete !== true) {
    throw new InvalidParameterError(field, value, 'absent unless discrete is true (it is the std of exact discrete noise, in grid steps)');
  }
  if (!(typeof value === 'number' && Number.isFinite(value) && value >= MIN_GRID_NOISE_STD)) {
    throw new InvalidParameterError(
      field,
      value,
      `a finite number >= ${MIN_GRID_NOISE_STD} (the noise std in grid steps; the smoothing coupling of accounting/discrete-coupling.ts needs it above 8, and 16 keeps its noise factor sqrt(1 - 64/s^2) >= 0.866)`,
    );
  }
  return { discrete: true, [field]: value } as { discrete?: true } & Partial<Record<F, number>>;
}

const GAUSSIAN_EVENT_OPTIONS = optionNames<NonNullable<Parameters<typeof gaussianEvent>[1]>>({ discrete: true, gridNoiseStd: true });

export function gaussianEvent(noiseMultiplier: number, options: { discrete?: boolean; gridNoiseStd?: number } = {}): GaussianEvent {
  rejectUnknownOptions(options, GAUSSIAN_EVENT_OPTIONS, 'gaussianEvent');
  requirePositive('noiseMultiplier', noiseMultiplier);
  return Object.freeze({ kind: 'gaussian', noiseMultiplier, ...gridFields('gridNoiseStd', options.gridNoiseStd, options.discrete) });
}

const LAPLACE_EVENT_OPTIONS = optionNames<NonNullable<Parameters<typeof laplaceEvent>[1]>>({ discrete: true, gridScale: true });

export function laplaceEvent(noiseMultiplier: number, options: { discrete?: boolean; gridScale?: number } = {}): LaplaceEvent {
  rejectUnknownOptions(options, LAPLACE_EVENT_OPTIONS, 'laplaceEvent');
  requirePositive('noiseMultiplier', noiseMultiplier);
  if (options.gridScale !== undefined) {
    if (options.discrete !== true) throw new InvalidParameterError('gridScale', options.gridScale, 'absent unless discrete is true (it is the scale of exact discrete noise, in grid steps)');
    const b = options.gridScale;
    if (!(typeof b === 'number' && Number.isFinite(b) && b >= 1 && b / noiseMultiplier >= 1)) {
      throw new InvalidParameterError('gridScale', b, `a finite number >= 1 and >= noiseMultiplier (${noiseMultiplier}): a shift of at least one grid step`);
    }
    return Object.freeze({ kind: 'laplace', noiseMultiplier, discrete: true, gridScale: b });
  }
  return Object.freeze(options.discrete ? { kind: 'laplace', noiseMultiplier, discrete: true } : { kind: 'laplace', noiseMultiplier });
}

export function randomizedResponseEvent(noiseParameter: number, numBuckets: number): RandomizedResponseEvent {
  requireProbability('noiseParameter', noiseParameter);
  requireInteger('numBuckets', numBuckets, 2);
  return Object.freeze({ kind: 'randomizedResponse', noiseParameter, numBuckets });
}

const RELATIVE_GAUSSIAN_EVENT_PARAMS = optionNames<NonNullable<Parameters<typeof relativeGaussianEvent>[0]>>({ eta: true, gamma: true, dimension: true, baselineStd: true, rRel: true, discrete: true, gridBaselineStd: true });

export function relativeGaussianEvent(params: {
  eta: number;
  gamma: number;
  dimension: number;
  baselineStd?: number;
  rRel?: number;
  discrete?: boolean;
  gridBaselineStd?: number;
}): RelativeGaussianEvent {
  rejectUnknownOptions(params, RELATIVE_GAUSSIAN_EVENT_PARAMS, 'relativeGaussianEvent');
  const { eta, gamma, dimension, baselineStd, rRel } = params;
  requirePositive('eta', eta);
  requirePositive('gamma', gamma);
  requireInteger('dimension', dimension, 1);
  if ((baselineStd === undefined) !== (rRel === undefined)) {
    throw new InvalidParameterError('baselineStd', baselineStd, 'given together with rRel (or both omitted)');
  }
  const grid = gridFields('gridBaselineStd', params.gridBaselineStd, params.discrete);
  if (baselineStd !== undefined && rRel !== undefined) {
    requirePositive('baselineStd', baselineStd);
    requireNonNegative('rRel', rRel);
    return Object.freeze({ kind: 'relativeGaussian', eta, gamma, dimension, baselineStd, rRel, ...grid });
  }
  if (params.gridBaselineStd !== undefined) {
    throw new InvalidParameterError('gridBaselineStd', params.gridBaselineStd, 'absent unless baselineStd and rRel are given (the coupling reduces the baseline std)');
  }
  return Object.freeze({ kind: 'relativeGaussian', eta, gamma, dimension, ...grid });
}

const OBJECTIVE_PERTURBATION_EVENT_PARAMS = optionNames<NonNullable<Parameters<typeof objectivePerturbationEvent>[0]>>({ noiseStd: true, lipschitz: true, smoothness: true, regularization: true, discrete: true, gridNoiseStd: true });

export function objectivePerturbationEvent(params: {
  noiseStd: number;
  lipschitz: number;
  smoothness: number;
  regularization: number;
  discrete?: boolean;
  gridNoiseStd?: number;
}): ObjectivePerturbationEvent {
  rejectUnknownOptions(params, OBJECTIVE_PERTURBATION_EVENT_PARAMS, 'objectivePerturbationEvent');
  const { noiseStd, lipschitz, smoothness, regularization } = params;
  requirePositive('noiseStd', noiseStd);
  requirePositive('lipschitz', lipschitz);
  requireNonNegative('smoothness', smoothness);
  requirePositive('regularization', regularization);
  if (!(regularization > smoothness)) {
    throw new InvalidParameterError('regularization', regularization, `> smoothness (${smoothness})`, 'objective perturbation needs lambda > beta');
  }
  const grid = gridFields('gridNoiseStd', params.gridNoiseStd, params.discrete);
  return Object.freeze({ kind: 'objectivePerturbation', noiseStd, lipschitz, smoothness, regularization, ...grid });
}

export function poissonSampledEvent(samplingProbability: number, event: DpEvent): PoissonSampledEvent {
  requireInHalfOpen('samplingProbability', samplingProbability, 0, 1);
  return Object.freeze({ kind: 'poissonSampled', samplingProbability, event });
}

export function sampledWithoutReplacementEvent(
  sourceDatasetSize: number,
  sampleSize: number,
  event: DpEvent,
): SampledWithoutReplacementEvent {
  requireInteger('sourceDatasetSize', sourceDatasetSize, 1);
  requireInteger('sampleSize', sampleSize, 1, sourceDatasetSize);
  return Object.freeze({ kind: 'sampledWithoutReplacement', sourceDatasetSize, sampleSize, event });
}

/**
 * `004` Thm. 4.2: one record drawn with public probabilities w_i <= maxWeight = c, c in (0, 1) as
 * the theorem requires (c = 1 would allow a deterministic choice: use the inner event itself).
 */
export function nonUniformSampledEvent(maxWeight: number, event: DpEvent): NonUniformSampledEvent {
  if (!(typeof maxWeight === 'number' && maxWeight > 0 && maxWeight < 1)) {
    throw new InvalidParameterError('maxWeight', maxWeight, 'in (0, 1): c, the largest probability with which any one record is selected (amplification by non-uniform sampling needs 0 < c < 1)');
  }
  return Object.freeze({ kind: 'nonUniformSampled', maxWeight, event });
}

export function composeEvent(events: readonly DpEvent[]): ComposeEvent {
  if (!Array.isArray(events)) throw new InvalidParameterError('events', events, 'an array of events');
  return Object.freeze({ kind: 'compose', events: Object.freeze([...events]) });
}

export function selfComposeEvent(event: DpEvent, count: number): SelfComposeEvent {
  requireInteger('count', count, 0);
  return Object.freeze({ kind: 'selfCompose', count, event });
}

export function repeatAndSelectEvent(event: DpEvent, mean: number, shape: number): RepeatAndSelectEvent {
  requirePositive('mean', mean);
  if (!(typeof shape === 'number' && (shape === Infinity || (Number.isFinite(shape) && shape >= 0)))) {
    throw new InvalidParameterError('shape', shape, '>= 0 or Infinity (Poisson)');
  }
  // K >= 1 under the truncated negative binomial, whose mean tends to 1 as its gamma tends to 1.
  if (shape !== Infinity && !(mean > 1)) throw new InvalidParameterError('mean', mean, '> 1 (the number of runs is at least 1)');
  return Object.freeze({ kind: 'repeatAndSelect', event, mean, shape });
}

const SHUFFLED_SGD_CONJECTURE_PARAMS = optionNames<NonNullable<Parameters<typeof shuffledSgdConjectureEvent>[0]>>({ datasetSize: true, noiseMultiplier: true, epochs: true, fraction: true, constant: true });

export function shuffledSgdConjectureEvent(params: {
  datasetSize: number;
  noiseMultiplier: number;
  epochs: number;
  fraction: number;
  constant?: number;
}): ShuffledSgdConjectureEvent {
  rejectUnknownOptions(params, SHUFFLED_SGD_CONJECTURE_PARAMS, 'shuffledSgdConjectureEvent');
  const { datasetSize, noiseMultiplier, epochs, fraction } = params;
  const constant = params.constant ?? 16;
  requireInteger('datasetSize', datasetSize, 2);
  requirePositive('noiseMultiplier', noiseMultiplier);
  requirePositive('epochs', epochs);
  requireOpenUnit('fraction', fraction);
  if (!(typeof constant === 'number' && Number.isFinite(constant) && constant >= 16)) {
    throw new InvalidParameterError('constant', constant, '>= 16 (the conjecture\'s smallest constant)');
  }
  return Object.freeze({ kind: 'shuffledSgdConjecture', datasetSize, noiseMultiplier, epochs, fraction, constant });
}

export function shuffledLastIterateEvent(params: {
  datasetSize: number;
  stepsPerEpoch: number;
  noiseMultiplier: number;
  shiftGrowth?: number;
}): ShuffledLastIterateEvent {
  const datasetSize = requireInteger('datasetSize', params.datasetSize, 1);
  const stepsPerEpoch = requireInteger('stepsPerEpoch', params.stepsPerEpoch, 1, datasetSize);
  const noiseMultiplier = requirePositive('noiseMultiplier', params.noiseMultiplier);
  const shiftGrowth = params.shiftGrowth ?? 0;
  if (!(typeof shiftGrowth === 'number' && Number.isFinite(shiftGrowth) && shiftGrowth >= 0)) {
    throw new InvalidParameterError('shiftGrowth', shiftGrowth, 'a finite number >= 0');
  }
  return Object.freeze({ kind: 'shuffledLastIterate', datasetSize, stepsPerEpoch, noiseMultiplier, shiftGrowth });
}

export const NON_PRIVATE_EVENT: NonPrivateEvent = Object.freeze({ kind: 'nonPrivate' });
export const NO_OP_EVENT: NoOpEvent = Object.freeze({ kind: 'noOp' });
