/**
 * DP gradient descent (`002`, Sec. 2.2): T full-batch steps on the average loss; each step clips
 * every per-example gradient to norm C, averages, and adds N(0, lambda^2 I) with
 * lambda = z * 2C / n — the L2 sensitivity of the clipped average under replace-one neighbours
 * (`002` Sec. 2.5; n is public under replace-one). The regulariser's gradient reg * theta uses no
 * data and costs nothing.
 *
 * Released: T Gaussian mechanisms with noise multiplier z, i.e. selfCompose(gaussian(z), T),
 * replace-one. The noise for a target (epsilon, delta) is calibrated EXACTLY: T composed Gaussians
 * are one Gaussian with multiplier z / sqrt(T) (gaussian-composition.ts), so
 * z = sqrt(T) * analyticGaussianNoiseMultiplier(epsilon, delta). The report also gives what basic
 * composition (`002` Claim 2.3, epsilon <= 1, delta <= 1/2) and the RDP accountant would need.
 */
import { calibrateNoiseMultiplier } from '../accounting/calibrate.js';
import { gaussianEvent, selfComposeEvent } from '../accounting/events.js';
import { exactGaussianCompositionNoiseMultiplier, gaussianCompositionEpsilon } from '../accounting/gaussian-composition.js';
import { InvalidParameterError } from '../errors.js';
import { fillGaussian } from '../random/continuous.js';
import { defaultRng } from '../random/rng.js';
import { requireInteger, requireNonNegative, requireOpenUnit, requirePositive, requirePositiveOrInfinity } from '../validate.js';
import { sumClippedGradients } from './glm/per-example.js';
import type { GlmData } from './glm/types.js';
import { dataForLoss, lossByName } from './losses.js';
import { linearModel, type LinearModel } from './model.js';
import { privacyReport, type PrivacyReport } from './privacy-report.js';
import type { NoiseOptions, TrainingDiagnostics } from './training.js';
import { noiseTarget } from './training.js';

export interface DpGdOptions extends NoiseOptions {
  readonly loss?: string;
  readonly lossParameters?: Record<string, number>;
  /** Clipping norm C of per-example gradients (Infinity: no clipping, only with explicit zero noise). */
  readonly clipNorm: number;
  readonly steps: number;
  readonly learningRate: number;
  /** L2 regularisation strength on the average loss (default 0). */
  readonly regularization?: number;
  readonly featureNames?: readonly string[];
  readonly onStep?: (step: number, steps: number) => void;
  /**
   * Another implementation of `sumClippedGradients` giving the same sums bit for bit (e.g. the
   * Node worker pool of `glm/parallel-clipped-sum.ts`), with the data preparation it needs.
   */
  readonly gradientSummer?: GradientSummer;
}

export interface GradientSummer {
  prepare<T extends GlmData>(data: T): T;
  sum: typeof sumClippedGradients;
}

export interface TrainResult {
  readonly model: LinearModel;
  readonly privacy: PrivacyReport;
  readonly diagnostics: TrainingDiagnostics;
}

/** `002` Claim 2.3's noise multiplier (relative to the sensitivity 2C/n): T sqrt(2 log(2T/delta)) / epsilon. */
export function basicCompositionNoiseMultiplier(steps: number, epsilon: number, delta: number): number | undefined {
  if (!(epsilon <= 1 && delta <= 0.5)) return undefined;
  return (steps * Math.sqrt(2 * Math.log((2 * steps) / delta))) / epsilon;
}

export function trainDpGd(data: GlmData, options: DpGdOptions): TrainResult {
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const glmData = dataForLoss(loss, data);
  const steps = requireInteger('steps', options.steps, 1);
  const clipNorm = requirePositiveOrInfinity('clipNorm', options.clipNorm);
  const learningRate = requirePositive('learningRate', options.learningRate);
  const regularization = requireNonNegative('regularization', options.regularization ?? 0);
  const target = noiseTarget(options);
  const rng = options.rng ?? defaultRng();
  const { n, d } = glmData;
  const summer = options.gradientSummer;
  const summed = summer === undefined ? glmData : summer.prepare(glmData);

  let noiseMultiplier: number;
  if (target.kind === 'target') {
    noiseMultiplier = exactGaussianCompositionNoiseMultiplier(target.epsilon, target.delta, steps);
  } else {
    noiseMultiplier = target.noiseMultiplier;
  }
  if (noiseMultiplier > 0 && clipNorm === Infinity) {
    throw new InvalidParameterError('clipNorm', clipNorm, 'finite when noise is added (the sensitivity is 2 clipNorm / n)');
  }
  const noiseStd = noiseMultiplier === 0 ? 0 : (noiseMultiplier * 2 * clipNorm) / n;

  const theta = new Float64Array(d);
  const noise = new Float64Array(d);
  const gradient = new Float64Array(d);
  let clippedFraction = 0;
  for (let t = 0; t < steps; t++) {
    const { clippedCount } = (summer?.sum ?? sumClippedGradients)(loss, summed, theta, { clipNorm, out: gradient });
    clippedFraction += clippedCount / n / steps;
    if (noiseStd > 0) fillGaussian(rng, noise, noiseStd);
    for (let j = 0; j < d; j++) theta[j] -= learningRate * (gradient[j] / n + noise[j] + regularization * theta[j]);
    options.onStep?.(t + 1, steps);
  }

  const delta = target.kind === 'target' ? target.delta : options.delta;
  const model = linearModel(loss, theta, options.featureNames);
  const diagnostics: TrainingDiagnostics = { method: 'dpgd', steps, noiseMultiplier, noiseStd, clippedFraction, clipNorm, learningRate };
  if (noiseMultiplier === 0) {
    return { model, privacy: nonPrivateReport(rng.description), diagnostics };
  }
  const event = selfComposeEvent(gaussianEvent(noiseMultiplier), steps);
  const accountDelta = requireOpenUnit('delta', delta);
  const comparisons: Record<string, { epsilon: number; delta: number; noiseMultiplier?: number }> = {};
  if (target.kind === 'target') {
    const basic = basicCompositionNoiseMultiplier(steps, target.epsilon, target.delta);
    if (basic !== undefined) comparisons.basicComposition = { epsilon: target.epsilon, delta: target.delta, noiseMultiplier: basic };
    const rdp = calibrateNoiseMultiplier((z) => selfComposeEvent(gaussianEvent(z), steps), { targetEpsilon: target.epsilon, delta: target.delta });
    comparisons.rdpCalibration = { epsilon: rdp.epsilon, delta: target.delta, noiseMultiplier: rdp.noiseMultiplier };
  }
  const privacy = privacyReport(event, accountDelta, { relation: 'replaceOne', rng, pld: gaussianCompositionEpsilon, comparisons });
  return { model: { ...model, privacy }, privacy, diagnostics };
}

/** The report of a run with no noise: infinite epsilon, said plainly. */
export function nonPrivateReport(randomness: string): PrivacyReport {
  return Object.freeze({
    epsilon: Infinity,
    delta: 0,
    accountant: 'none',
    event: { kind: 'nonPrivate' },
    neighboringRelation: 'replaceOne',
    guarantee: 'proven',
    rdp: { epsilon: Infinity },
    randomness,
    warnings: ['no noise was added: this model is NOT private'],
  });
}
