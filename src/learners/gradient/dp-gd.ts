/**
 * DP gradient descent (`002`, Sec. 2.2): T full-batch steps on the average loss; each step clips
 * every per-example gradient to norm C, sums, adds noise of std z * 2C — 2C is the L2 sensitivity
 * of the clipped sum under replace-one neighbours (`002` Sec. 2.5) — and divides by n (public
 * under replace-one: post-processing). The noise is exact discrete Gaussian noise on a public
 * power-of-two grid (`mechanisms/grid-noise.ts`; the rounding to the grid and the floating-point
 * error of the sum are paid in the sensitivity). The regulariser's gradient reg * theta uses no
 * data and costs nothing.
 *
 * Released: T Gaussian mechanisms with noise multiplier z, i.e. selfCompose(gaussian(z), T),
 * replace-one (gridded: the accountants use z sqrt(1 - 64/s^2), within 1e-4 of z). The noise for a target (epsilon, delta) is calibrated EXACTLY: T composed Gaussians
 * are one Gaussian with multiplier z / sqrt(T) (gaussian-composition.ts), so
 * z = sqrt(T) * analyticGaussianNoiseMultiplier(epsilon, delta). The report also gives what basic
 * composition (`002` Claim 2.3, epsilon <= 1, delta <= 1/2) and the RDP accountant would need.
 */
import { calibrateNoiseMultiplier } from '../../accounting/calibration/calibrate.js';
import { gaussianEvent, NON_PRIVATE_EVENT, selfComposeEvent } from '../../accounting/events/constructors.js';
import type { DpEvent } from '../../accounting/events/types.js';
import { exactGaussianCompositionNoiseMultiplier, gaussianCompositionEpsilon } from '../../accounting/gaussian/gaussian-composition.js';
import { InvalidParameterError } from '../../errors.js';
import { defaultRng, type Rng } from '../../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireNonNegative, requireOpenUnit, requirePositive, requirePositiveOrInfinity } from '../../validate.js';
import { clipThresholds } from '../glm/clip-thresholds.js';
import type { GradientSummer } from '../glm/gradient-summer.js';
import { storeFeatures, storeLabels } from '../glm/kernels/feature-memory.js';
import { dataForLoss, lossByName, type LossParameters } from '../glm/losses/by-name.js';
import { sumStoredClippedGradients, type ClippedGradientSumOptions } from '../glm/per-example.js';
import type { GlmData, GlmLoss, StoredGlmData } from '../glm/types.js';
import { linearModel } from '../models/model.js';
import { nonPrivateReport, privacyReport } from '../models/privacy-report.js';
import { noiseTarget, requireOwnMethod, type NoiseOptions, type TrainingDiagnostics, type TrainResult } from '../training.js';
import { clippedSumNoise, type SumNoise } from './clipped-sum-noise.js';

export interface DpGdOptions extends NoiseOptions {
  /** `train()`'s name of this learner: only 'dpgd' (so that train()'s options for it pass here unchanged). */
  readonly method?: 'dpgd';
  readonly loss?: string;
  readonly lossParameters?: LossParameters;
  /** Clipping norm C of per-example gradients (Infinity: no clipping, only with explicit zero noise). */
  readonly clipNorm: number;
  readonly steps: number;
  readonly learningRate: number;
  /** L2 regularisation strength on the average loss (default 0). */
  readonly regularization?: number;
  readonly featureNames?: readonly string[];
  /** After each step; `theta` is the iterate after it (read it, do not keep it: it changes; every iterate is covered by the run's event). */
  readonly onStep?: (step: number, steps: number, theta: Float64Array) => void;
  /**
   * Another implementation of `sumClippedGradients` giving the same sums bit for bit (e.g. the
   * Node worker pool of `glm/parallel-clipped-sum.ts`), with the data preparation it needs.
   */
  readonly gradientSummer?: GradientSummer;
  /**
   * How the features are stored for the passes: 'float64' (default) or 'float32' (half the memory
   * traffic; accumulation stays float64). Privacy is unchanged: rounding a row to float32 is a
   * per-row map of the data, and every gradient is clipped on the float32 values the sum uses
   * (thresholds from the stored rows), so the sum's sensitivity and its float-error bound
   * (`clippedSumRoundingBound`: the same summation order) are those of the float64 path.
   */
  readonly precision?: 'float64' | 'float32';
}



/** `002` Claim 2.3's noise multiplier (relative to the sensitivity 2C/n): T sqrt(2 log(2T/delta)) / epsilon. */
export function basicCompositionNoiseMultiplier(steps: number, epsilon: number, delta: number): number | undefined {
  if (!(epsilon <= 1 && delta <= 0.5)) return undefined;
  return (steps * Math.sqrt(2 * Math.log((2 * steps) / delta))) / epsilon;
}



/** DP-GD's per-step noise on n rows in d coordinates (replace-one: the clipped sum moves by <= 2C). */
export function dpGdStepNoise(shape: { n: number; d: number }, clipNorm: number, noiseMultiplier: number, continuous = false): SumNoise {
  return clippedSumNoise({ sensitivity: 2 * clipNorm, clipNorm, rows: shape.n, d: shape.d, noiseMultiplier, continuous });
}

/** The event of T DP-GD steps with noise multiplier z (calibrated for the continuous mechanism). */
export function dpGdEvent(shape: { n: number; d: number }, clipNorm: number, noiseMultiplier: number, steps: number, continuous = false) {
  return selfComposeEvent(dpGdStepNoise(shape, clipNorm, noiseMultiplier, continuous).event, steps);
}

/**
 * @internal The validated set-up of one DP-GD run on n rows in d coordinates: everything but the
 * data. Shared by `trainDpGd` (rows in memory) and the streamed and SQL runs
 * (`gradient/streamed.ts`, `sql-gradient.ts`), so that all of them release the same thing.
 */
export interface DpGdRun {
  readonly loss: GlmLoss;
  readonly n: number;
  readonly d: number;
  readonly steps: number;
  readonly clipNorm: number;
  readonly learningRate: number;
  readonly regularization: number;
  readonly target: ReturnType<typeof noiseTarget>;
  readonly rng: Rng;
  readonly noiseMultiplier: number;
  /** Undefined with zero noise. */
  readonly noise: SumNoise | undefined;
}

/**
 * @internal Checks the options and plans the noise of DP-GD on `shape` (public quantities only).
 * `roundingSlack` replaces the sum's default public floating-point error bound
 * (`clippedSumRoundingBound`) when the sum is computed elsewhere (a SQL engine's own order).
 */
export function setUpDpGd(shape: { n: number; d: number }, options: DpGdOptions, roundingSlack?: number): DpGdRun {
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const steps = requireInteger('steps', options.steps, 1);
  const clipNorm = requirePositiveOrInfinity('clipNorm', options.clipNorm);
  const learningRate = requirePositive('learningRate', options.learningRate);
  const regularization = requireNonNegative('regularization', options.regularization ?? 0);
  const target = noiseTarget(options);
  const rng = options.rng ?? defaultRng();
  const { n, d } = shape;
  let noiseMultiplier: number;
  if (target.kind === 'target') {
    noiseMultiplier = exactGaussianCompositionNoiseMultiplier(target.epsilon, target.delta, steps);
  } else {
    noiseMultiplier = target.noiseMultiplier;
  }
  if (noiseMultiplier > 0 && clipNorm === Infinity) {
    throw new InvalidParameterError('clipNorm', clipNorm, 'finite when noise is added (the sensitivity is 2 clipNorm / n)');
  }
  let noise: SumNoise | undefined;
  if (noiseMultiplier === 0) noise = undefined;
  else if (roundingSlack === undefined) noise = dpGdStepNoise({ n, d }, clipNorm, noiseMultiplier, options.continuousNoise);
  else noise = clippedSumNoise({ sensitivity: 2 * clipNorm, clipNorm, rows: n, d, noiseMultiplier, continuous: options.continuousNoise, roundingSlack });
  return { loss, n, d, steps, clipNorm, learningRate, regularization, target, rng, noiseMultiplier, noise };
}

/** @internal One DP-GD update from the clipped sum in `gradient` (noised in place: the release), then onStep. */
export function dpGdUpdate(run: DpGdRun, options: DpGdOptions, t: number, gradient: Float64Array, theta: Float64Array): void {
  const { n, d, learningRate, regularization } = run;
  // The released value is the noisy SUM; dividing it by the public n is post-processing.
  run.noise?.add(gradient, run.rng);
  for (let j = 0; j < d; j++) theta[j] -= learningRate * (gradient[j] / n + regularization * theta[j]);
  options.onStep?.(t + 1, run.steps, theta);
}

/** What a DP-GD run releases (`finishDpGd`'s event), known from its set-up alone: T gridded Gaussians composed, `nonPrivate` without noise. */
export function dpGdRunEvent(run: Pick<DpGdRun, 'noise' | 'steps'>): DpEvent {
  return run.noise === undefined ? NON_PRIVATE_EVENT : selfComposeEvent(run.noise.event, run.steps);
}

/** @internal The model, report and diagnostics of a finished DP-GD run. */
export function finishDpGd(run: DpGdRun, options: DpGdOptions, theta: Float64Array, clippedFraction: number): TrainResult {
  const { loss, n, steps, noise, noiseMultiplier, target, rng, clipNorm, learningRate } = run;
  const delta = target.kind === 'target' ? target.delta : options.delta;
  const model = linearModel(loss, theta, options.featureNames);
  const noiseStd = noise === undefined ? 0 : noise.noiseStd / n;
  const diagnostics: TrainingDiagnostics = { method: 'dpgd', steps, noiseMultiplier, noiseStd, clippedFraction, clipNorm, learningRate };
  if (noise === undefined) {
    const privacy = nonPrivateReport(rng, 'replaceOne');
    return { model: { ...model, privacy }, privacy, diagnostics };
  }
  const event = dpGdRunEvent(run);
  const accountDelta = requireOpenUnit('delta', delta);
  const comparisons: Record<string, { epsilon: number; delta: number; noiseMultiplier?: number }> = {};
  if (target.kind === 'target') {
    const basic = basicCompositionNoiseMultiplier(steps, target.epsilon, target.delta);
    if (basic !== undefined) comparisons.basicComposition = { epsilon: target.epsilon, delta: target.delta, noiseMultiplier: basic };
    const rdp = calibrateNoiseMultiplier((z) => selfComposeEvent(gaussianEvent(z), steps), { targetEpsilon: target.epsilon, delta: target.delta });
    comparisons.rdpCalibration = { epsilon: rdp.epsilon, delta: target.delta, noiseMultiplier: rdp.noiseMultiplier };
  }
  const privacy = privacyReport(event, accountDelta, { relation: 'replaceOne', rng, pld: gaussianCompositionEpsilon, comparisons, granularity: noise.granularity });
  return { model: { ...model, privacy }, privacy, diagnostics };
}

export const DP_GD_OPTIONS = optionNames<DpGdOptions>({ method: true, loss: true, lossParameters: true, clipNorm: true, steps: true, learningRate: true, regularization: true, featureNames: true, onStep: true, gradientSummer: true, precision: true, epsilon: true, delta: true, noiseMultiplier: true, rng: true, continuousNoise: true });

export function trainDpGd(data: GlmData, options: DpGdOptions): TrainResult {
  rejectUnknownOptions(options, DP_GD_OPTIONS, 'trainDpGd');
  requireOwnMethod(options.method, 'dpgd', 'trainDpGd');
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const glmData = dataForLoss(loss, data);
  const run = setUpDpGd(glmData, options);
  const { n, d, steps, clipNorm } = run;
  const summer = options.gradientSummer;
  const precision = options.precision ?? 'float64';
  if (precision !== 'float64' && precision !== 'float32') throw new InvalidParameterError('precision', precision, '"float64" or "float32"');
  if (precision === 'float32' && summer !== undefined && summer.sumStored === undefined) {
    throw new InvalidParameterError('precision', precision, '"float64" with this gradientSummer (it has no sumStored)');
  }
  // Float32 storage: one rounded copy in a feature memory (shared, SIMD-ready); otherwise the summer's preparation.
  const stored = (): StoredGlmData => {
    const x = storeFeatures(glmData.x, n, d, 'float32');
    return { ...glmData, x, y: storeLabels(x, d, glmData.y) };
  };
  const summed: StoredGlmData = precision === 'float32' ? stored() : summer === undefined ? glmData : summer.prepare(glmData);
  const sum = summer === undefined ? sumStoredClippedGradients : summer.sumStored ?? (summer.sum as typeof sumStoredClippedGradients);
  // Per-row clip thresholds: public functions of the stored rows and C, computed once for the run.
  const thresholds = summer === undefined || summer.sumStored !== undefined ? clipThresholds(summed, clipNorm) : undefined;
  const sumOptions: ClippedGradientSumOptions = thresholds === undefined ? { clipNorm } : { clipNorm, thresholds };
  const theta = new Float64Array(d);
  const gradient = new Float64Array(d);
  let clippedFraction = 0;
  for (let t = 0; t < steps; t++) {
    const { clippedCount } = sum(run.loss, summed, theta, { ...sumOptions, out: gradient });
    clippedFraction += clippedCount / n / steps;
    dpGdUpdate(run, options, t, gradient, theta);
  }
  return finishDpGd(run, options, theta, clippedFraction);
}
