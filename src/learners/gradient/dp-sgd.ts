/**
 * DP-SGD (Abadi et al. 2016): each step draws a TRUE Poisson batch (every record independently
 * with probability q; empty batches happen and are kept), clips each per-example gradient to
 * norm C, sums, adds noise of std zC — exact discrete Gaussian noise on a public power-of-two
 * grid, the rounding and the sum's floating-point error paid in the sensitivity
 * (`dp-gd.ts` `clippedSumNoise`) — and divides by the expected batch size qn. n is the public
 * `datasetSize` when one is declared, else the data's own count, treated as public as in Abadi et
 * al. and Opacus (`dpSgdPublicSize`). Momentum and Adam act on the noised gradient only:
 * post-processing, no privacy cost.
 *
 * Released: selfCompose(poissonSampled(q, gaussian(z)), T), add/remove-one. For a target
 * (epsilon, delta) the noise multiplier is calibrated by the RDP accountant for the continuous
 * mechanism (`calibrateDpsgd`: the safe end of the search); the gridded event's accounted
 * multiplier is at least that one, and the report re-accounts it.
 */
import { calibrateDpsgd } from '../../accounting/calibration/calibrate.js';
import type { DpEvent } from '../../accounting/events/types.js';
import { poissonSampledEvent, selfComposeEvent } from '../../accounting/events/constructors.js';
import { InvalidParameterError } from '../../errors.js';
import { poissonSubsampleIndices } from '../../random/discrete.js';
import { defaultRng, type Rng } from '../../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInHalfOpen, requireInteger, requireNonNegative, requireOpenUnit, requirePositive } from '../../validate.js';
import { clipThresholds } from '../glm/clip-thresholds.js';
import { sparseRowsOf } from '../glm/kernels/sparse-rows.js';
import { sumBatchClippedGradients, sumClippedGradients } from '../glm/per-example.js';
import type { GlmData, GlmLoss } from '../glm/types.js';
import { dataForLoss, lossByName, type LossParameters } from '../glm/losses/by-name.js';
import { linearModel } from '../models/model.js';
import { nonPrivateReport, privacyReport } from '../models/privacy-report.js';
import { type NoiseOptions, noiseTarget, requireOwnMethod, type TrainingDiagnostics, type TrainResult } from '../training.js';
import { clippedSumNoise, type SumNoise } from './clipped-sum-noise.js';

export type Optimizer = 'sgd' | 'momentum' | 'adam';
export type Schedule = 'constant' | 'inverseSqrt' | 'cosine';

export interface DpSgdOptions extends NoiseOptions {
  /** `train()`'s name of this learner: only 'dpsgd' (so that train()'s options for it pass here unchanged). */
  readonly method?: 'dpsgd';
  readonly loss?: string;
  readonly lossParameters?: LossParameters;
  readonly clipNorm: number;
  /** Expected batch size qn (give this or samplingProbability). */
  readonly batchSize?: number;
  readonly samplingProbability?: number;
  /** Number of steps (give this or epochs: steps = ceil(epochs / q)). */
  readonly steps?: number;
  readonly epochs?: number;
  readonly learningRate: number;
  readonly schedule?: Schedule;
  readonly optimizer?: Optimizer;
  /** Momentum coefficient (default 0.9) / Adam's beta1. */
  readonly momentum?: number;
  readonly regularization?: number;
  /**
   * The number of records, declared without looking at the data (`dpSgdPublicSize`): q, the
   * steps of an epoch and the noise's rounding bound then depend on it, not on the data's count.
   */
  readonly datasetSize?: number;
  readonly featureNames?: readonly string[];
  /** After each step; `theta` is the iterate after it (read it, do not keep it: it changes; every iterate is covered by the run's event). */
  readonly onStep?: (step: number, steps: number, theta: Float64Array) => void;
}

/** The public n of a DP-SGD run (`dpSgdPublicSize`). */
export interface DpSgdPublicSize {
  /** The n of q = batchSize / n and of epochs (declared, or the data's count). */
  readonly datasetSize: number;
  /** The most rows a batch sum may hold, for the noise's rounding bound. */
  readonly rowsBound: number;
  readonly declared: boolean;
}

/**
 * The public n of DP-SGD. Under add/remove-one neighbours the number of records is NOT public (a
 * neighbour has one more or one fewer), yet DP-SGD's event carries q = B/n and its noise the
 * rounding bound of a sum of up to n rows: a run that took n from the data would publish it. With
 * `datasetSize` declared, nothing released depends on the data's own count: q = B / datasetSize,
 * an epoch is datasetSize / B steps, the update divides by the expected batch B, and the noise
 * pays the rounding of sums of up to 2 datasetSize rows, so the data must hold at most that many
 * records (a count declared within a factor of two; refused otherwise, whatever the neighbour:
 * a pair of neighbours differs there only if the data hold exactly 2 datasetSize records).
 * Without it the data's count n is used and treated as public (Abadi et al. 2016, Opacus); the
 * report says which (`datasetSizeReport`).
 */
export function dpSgdPublicSize(n: number, datasetSize: number | undefined): DpSgdPublicSize {
  if (datasetSize === undefined) return { datasetSize: n, rowsBound: n, declared: false };
  const declared = requireInteger('datasetSize', datasetSize, 1);
  if (n > 2 * declared) {
    throw new InvalidParameterError('datasetSize', declared, 'at least half the number of records the data hold (the noise covers the rounding of batch sums of up to 2 x datasetSize rows)');
  }
  return { datasetSize: declared, rowsBound: 2 * declared, declared: true };
}

function learningRateAt(schedule: Schedule, base: number, t: number, steps: number): number {
  if (schedule === 'inverseSqrt') return base / Math.sqrt(t + 1);
  if (schedule === 'cosine') return (base * (1 + Math.cos((Math.PI * t) / steps))) / 2;
  return base;
}

/**
 * The sampling rate q and the number of steps T of a DP-SGD run on n rows: public quantities
 * (n is public in DP-SGD's accounting), so the run's event dpsgdEvent(q, z, T) is known before
 * training.
 */
export function dpSgdSchedule(
  n: number,
  options: Pick<DpSgdOptions, 'batchSize' | 'samplingProbability' | 'steps' | 'epochs'>,
): { samplingProbability: number; steps: number } {
  if ((options.batchSize === undefined) === (options.samplingProbability === undefined)) {
    throw new InvalidParameterError('batchSize', options.batchSize, 'given, or samplingProbability given instead (exactly one)');
  }
  if (options.batchSize !== undefined && !(options.batchSize > 0 && options.batchSize <= n)) {
    throw new InvalidParameterError('batchSize', options.batchSize, `in (0, ${n}] (the number of rows)`);
  }
  const samplingProbability = requireInHalfOpen('samplingProbability', options.samplingProbability ?? (options.batchSize as number) / n, 0, 1);
  if (options.steps !== undefined && options.epochs !== undefined) {
    throw new InvalidParameterError('epochs', options.epochs, 'absent when steps is given (the schedule is one or the other)');
  }
  if (options.steps === undefined && options.epochs === undefined) {
    throw new InvalidParameterError('steps', options.steps, 'given, or epochs given instead (exactly one)');
  }
  const steps = requireInteger('steps', options.steps ?? Math.ceil(requirePositive('epochs', options.epochs) / samplingProbability), 1);
  return { samplingProbability, steps };
}

/** DP-SGD's per-step noise on a batch of at most n rows (add/remove-one: the clipped sum moves by <= C). */
export function dpSgdStepNoise(shape: { n: number; d: number }, clipNorm: number, noiseMultiplier: number, continuous = false): SumNoise {
  return clippedSumNoise({ sensitivity: clipNorm, clipNorm, rows: shape.n, d: shape.d, noiseMultiplier, continuous });
}

/** The event of T DP-SGD steps: selfCompose(poissonSampled(q, step noise), T). */
export function dpSgdRunEvent(samplingProbability: number, stepEvent: DpEvent, steps: number): DpEvent {
  return selfComposeEvent(poissonSampledEvent(samplingProbability, stepEvent), steps);
}

/** @internal The validated set-up of one DP-SGD run on n rows in d coordinates (shared with `gradient/streamed.ts`). */
export interface DpSgdRun {
  readonly loss: GlmLoss;
  /** Rows of the data (the batches are drawn from them). */
  readonly n: number;
  /** The public n of q and of the expected batch q n (`dpSgdPublicSize`). */
  readonly datasetSize: number;
  readonly d: number;
  readonly clipNorm: number;
  readonly samplingProbability: number;
  readonly steps: number;
  readonly learningRate: number;
  readonly regularization: number;
  readonly schedule: Schedule;
  readonly optimizer: Optimizer;
  readonly beta1: number;
  readonly target: ReturnType<typeof noiseTarget>;
  readonly rng: Rng;
  readonly noiseMultiplier: number;
  readonly noise: SumNoise | undefined;
  /** The optimiser's state (momentum, Adam's second moment). */
  readonly m: Float64Array;
  readonly v: Float64Array;
}

/** @internal Checks the options, calibrates and plans the noise (public quantities only). */
export function setUpDpSgd(shape: { n: number; d: number }, options: DpSgdOptions): DpSgdRun {
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const { n, d } = shape;
  const clipNorm = requirePositive('clipNorm', options.clipNorm);
  const size = dpSgdPublicSize(n, options.datasetSize);
  const { samplingProbability: q, steps } = dpSgdSchedule(size.datasetSize, options);
  const learningRate = requirePositive('learningRate', options.learningRate);
  const regularization = requireNonNegative('regularization', options.regularization ?? 0);
  const schedule = options.schedule ?? 'constant';
  const optimizer = options.optimizer ?? 'sgd';
  if (!['constant', 'inverseSqrt', 'cosine'].includes(schedule)) throw new InvalidParameterError('schedule', schedule, "'constant', 'inverseSqrt' or 'cosine'");
  if (!['sgd', 'momentum', 'adam'].includes(optimizer)) throw new InvalidParameterError('optimizer', optimizer, "'sgd', 'momentum' or 'adam'");
  const beta1 = options.momentum ?? 0.9;
  if (!(beta1 >= 0 && beta1 < 1)) throw new InvalidParameterError('momentum', beta1, 'in [0, 1)');
  const target = noiseTarget(options);
  const rng = options.rng ?? defaultRng();

  const calibration = target.kind === 'target' ? calibrateDpsgd({ samplingProbability: q, steps, targetEpsilon: target.epsilon, delta: target.delta }) : undefined;
  const noiseMultiplier = calibration?.noiseMultiplier ?? (target.kind === 'explicit' ? target.noiseMultiplier : 0);
  const noise = noiseMultiplier === 0 ? undefined : dpSgdStepNoise({ n: size.rowsBound, d }, clipNorm, noiseMultiplier, options.continuousNoise);
  return {
    loss, n, datasetSize: size.datasetSize, d, clipNorm, samplingProbability: q, steps, learningRate, regularization, schedule, optimizer, beta1, target, rng, noiseMultiplier, noise,
    m: new Float64Array(d), v: new Float64Array(d),
  };
}

/** @internal Step t's update from the clipped sum of its batch in `gradient` (noised in place: the release), then onStep. */
export function dpSgdUpdate(run: DpSgdRun, options: DpSgdOptions, t: number, gradient: Float64Array, theta: Float64Array): void {
  const { d, steps, optimizer, beta1, regularization, m, v } = run;
  const expectedBatch = run.samplingProbability * run.datasetSize;
  run.noise?.add(gradient, run.rng);
  const rate = learningRateAt(run.schedule, run.learningRate, t, steps);
  // Adam's bias corrections, the same numbers for every coordinate.
  const correction1 = 1 - beta1 ** (t + 1);
  const correction2 = 1 - 0.999 ** (t + 1);
  for (let j = 0; j < d; j++) {
    const g = gradient[j] / expectedBatch + regularization * theta[j];
    if (optimizer === 'sgd') theta[j] -= rate * g;
    else if (optimizer === 'momentum') {
      m[j] = beta1 * m[j] + g;
      theta[j] -= rate * m[j];
    } else {
      m[j] = beta1 * m[j] + (1 - beta1) * g;
      v[j] = 0.999 * v[j] + 0.001 * g * g;
      const mHat = m[j] / correction1;
      const vHat = v[j] / correction2;
      theta[j] -= (rate * mHat) / (Math.sqrt(vHat) + 1e-8);
    }
  }
  options.onStep?.(t + 1, steps, theta);
}

/** @internal The model, report and diagnostics of a finished DP-SGD run. */
export function finishDpSgd(run: DpSgdRun, options: DpSgdOptions, theta: Float64Array, counts: { clipped: number; used: number; emptyBatches: number }): TrainResult {
  const { loss, noise, noiseMultiplier, target, rng, samplingProbability: q, steps } = run;
  const model = linearModel(loss, theta, options.featureNames);
  const diagnostics: TrainingDiagnostics = {
    method: 'dpsgd',
    steps,
    noiseMultiplier,
    noiseStd: noise?.noiseStd ?? 0,
    clippedFraction: counts.used === 0 ? 0 : counts.clipped / counts.used,
    clipNorm: run.clipNorm,
    learningRate: run.learningRate,
    samplingProbability: q,
    expectedBatchSize: q * run.datasetSize,
    emptyBatches: counts.emptyBatches,
    optimizer: run.optimizer,
    schedule: run.schedule,
  };
  if (noise === undefined) {
    const privacy = nonPrivateReport(rng, 'addOrRemoveOne');
    return { model: { ...model, privacy }, privacy, diagnostics };
  }
  const delta = requireOpenUnit('delta', target.kind === 'target' ? target.delta : options.delta);
  // The calibration was for the continuous multiplier; the gridded event's accounted multiplier is at least that.
  const event = dpSgdRunEvent(q, noise.event, steps);
  const privacy = privacyReport(event, delta, { relation: 'addOrRemoveOne', rng, granularity: noise.granularity });
  return { model: { ...model, privacy }, privacy, diagnostics };
}

export const DP_SGD_OPTIONS = optionNames<DpSgdOptions>({ method: true, loss: true, lossParameters: true, clipNorm: true, batchSize: true, samplingProbability: true, steps: true, epochs: true, learningRate: true, schedule: true, optimizer: true, momentum: true, regularization: true, datasetSize: true, featureNames: true, onStep: true, epsilon: true, delta: true, noiseMultiplier: true, rng: true, continuousNoise: true });

export function trainDpSgd(data: GlmData, options: DpSgdOptions): TrainResult {
  rejectUnknownOptions(options, DP_SGD_OPTIONS, 'trainDpSgd');
  requireOwnMethod(options.method, 'dpsgd', 'trainDpSgd');
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const glmData = dataForLoss(loss, data);
  const run = setUpDpSgd(glmData, options);
  const { n, d, steps, clipNorm, samplingProbability: q, rng } = run;
  const theta = new Float64Array(d);
  const gradient = new Float64Array(d);
  const counts = { clipped: 0, used: 0, emptyBatches: 0 };
  // The rows' clip thresholds (and, for mostly-zero features, their nonzero entries) once, when
  // the batches will read about n rows or more: the same sums bit for bit as a squared norm per
  // row and step over the dense rows (`sumBatchClippedGradients`, `kernels/sparse-rows.ts`).
  const cached = steps * q >= 1;
  const thresholds = cached ? clipThresholds(glmData, clipNorm) : undefined;
  const sparse = cached ? sparseRowsOf(glmData.x, n, d) : undefined;
  for (let t = 0; t < steps; t++) {
    const batch = poissonSubsampleIndices(rng, n, q);
    if (batch.length === 0) {
      counts.emptyBatches++;
      gradient.fill(0);
    } else {
      const result = thresholds === undefined
        ? sumClippedGradients(run.loss, glmData, theta, { clipNorm, indices: batch, out: gradient })
        : sumBatchClippedGradients(run.loss, glmData, theta, { clipNorm, indices: batch, thresholds, sparse, out: gradient });
      counts.clipped += result.clippedCount;
      counts.used += result.count;
    }
    dpSgdUpdate(run, options, t, gradient, theta);
  }
  return finishDpSgd(run, options, theta, counts);
}
