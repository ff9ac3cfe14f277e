/**
 * Private SGD with shuffling (`004`, Alg. 1): batch size one; each of the P = ceil(epochs / tau)
 * partial epochs draws a fresh uniformly random permutation of the n records and processes only
 * its first m = floor(tau n) records; each step clips the example's gradient to norm C, adds
 * N(0, (zC)^2 I) and moves by learningRate: theta <- theta - gamma (clip_C(grad) + noise)
 * (plus gamma reg theta when an L2 regulariser is asked for; it uses no data).
 *
 * PROVEN ACCOUNTING (the default and the headline), under replace-one neighbours D ~ D' that
 * differ in the record at one index i*:
 *  1. The permutations use no data. Condition on all of them (the released model is a
 *     post-processing of the run with the permutations revealed, and a mixture, over a
 *     data-independent variable, of pairs of output laws each dominated by a pair of Gaussians is
 *     dominated by that pair: the hockey-stick divergence is jointly convex).
 *  2. Given the permutations the run is an adaptive composition of P m Gaussian mechanisms, one per
 *     step. A step that does not touch i* computes the same function of theta on D and D': its
 *     sensitivity is 0 and it costs nothing. A step that touches i* releases
 *     clip_C(g(theta; x)) + N(0, (zC)^2 I) versus the same with x', two vectors of norm <= C,
 *     so the L2 sensitivity is at most 2C: a Gaussian mechanism with noise multiplier zC / 2C = z/2.
 *  3. Within one partial epoch the permutation lists each index once, so i* is touched at most
 *     once; over the run at most P times.
 *  So the run is dominated by selfCompose(gaussian(z/2), P) (no amplification by shuffling is
 *  claimed). With one record per partial epoch (floor(tau n) = 1) the record is a uniform draw:
 *  sampling 1 of n without replacement amplifies each step (`shuffledSgdEvent`), and the noise is
 *  calibrated by the RDP accountant. That event's exact (epsilon, delta) is the Gaussian profile with multiplier
 *  z / (2 sqrt P) (Dong, Roth & Su 2022, Cor. 3.3; `gaussian-composition.ts`), so for a target
 *  (epsilon, delta) the noise is calibrated exactly: z = 2 sqrt(P) analyticGaussianNoiseMultiplier(epsilon, delta).
 *
 * CONJECTURE (only with `accountConjecture: true`): the thesis' Conj. 1-2 (amplification by the
 * partial shuffle, `004` Sec. 4.3) accounted by the RDP accountant with `allowConjecture`. It is
 * NOT a theorem: it is put in `privacy.comparisons.conjecture` and a warning, never in the headline.
 */
import { calibrateNoiseMultiplier } from '../accounting/calibrate.js';
import { gaussianEvent, sampledWithoutReplacementEvent, selfComposeEvent, shuffledSgdConjectureEvent, type DpEvent } from '../accounting/events.js';
import { exactGaussianCompositionNoiseMultiplier, gaussianCompositionEpsilon } from '../accounting/gaussian-composition.js';
import { rdpEpsilon } from '../accounting/rdp/accountant.js';
import { DpfitError, InvalidParameterError } from '../errors.js';
import { randomPermutation } from '../random/discrete.js';
import { defaultRng } from '../random/rng.js';
import { requireNonNegative, requireOpenUnit, requirePositive } from '../validate.js';
import { clippedSumNoise, type SumNoise, type TrainResult } from './dp-gd.js';
import { sumClippedGradients } from './glm/per-example.js';
import type { GlmData } from './glm/types.js';
import { dataForLoss, lossByName } from './losses.js';
import { linearModel } from './model.js';
import { nonPrivateReport, privacyReport } from './privacy-report.js';
import { noiseTarget, type NoiseOptions, type TrainingDiagnostics } from './training.js';

export interface ShuffledSgdOptions extends NoiseOptions {
  readonly loss?: string;
  readonly lossParameters?: Record<string, number>;
  /** Clipping norm C of each example's gradient. */
  readonly clipNorm: number;
  /** e: the expected number of passes over each record (Alg. 1). */
  readonly epochs: number;
  /** tau in (0, 1]: the fraction of each shuffled epoch that is processed (default 1). */
  readonly fraction?: number;
  /** gamma: the step size. */
  readonly learningRate: number;
  /** L2 regularisation strength (default 0; no privacy cost). */
  readonly regularization?: number;
  /** Also report `004` Conj. 1-2's epsilon, as a labelled conjecture (never the headline). */
  readonly accountConjecture?: boolean;
  readonly featureNames?: readonly string[];
  /** Called after every step; `theta` is the current iterate (read it, do not keep it: it changes). */
  readonly onStep?: (step: number, steps: number, theta: Float64Array) => void;
}

/** Number of partial epochs ceil(e / tau), with the same rounding tolerance as the conjecture's accountant. */
export function shuffledPartialEpochs(epochs: number, fraction: number): number {
  return Math.max(1, Math.ceil(epochs / fraction - 1e-12));
}

/**
 * The noise of one step (one clipped example gradient, std z C): a Gaussian mechanism of L2
 * sensitivity 2C (replace-one), i.e. noise multiplier z/2, on the grid of `dp-gd.ts`
 * `clippedSumNoise` unless `continuous`.
 */
export function shuffledStepNoise(d: number, clipNorm: number, noiseMultiplier: number, continuous = false): SumNoise {
  return clippedSumNoise({ sensitivity: 2 * clipNorm, clipNorm, rows: 1, d, noiseMultiplier: noiseMultiplier / 2, continuous });
}

/**
 * The proven event of Alg. 1: the step noise's event (multiplier >= z/2) composed P times. When
 * each partial epoch processes ONE record (floor(tau n) = 1, n >= 2), that record is drawn uniformly
 * and independently of the other partial epochs: the step is the Gaussian mechanism on a sample of
 * 1 of n drawn without replacement, amplified by Wang, Balle & Kasiviswanathan 2019 (replace-one),
 * so the event is selfCompose(sampledWithoutReplacement(n, 1, step), P).
 */
export function shuffledSgdEvent(stepEvent: DpEvent, partialEpochs: number, shape?: { readonly n: number; readonly stepsPerEpoch: number }): DpEvent {
  if (shape !== undefined && shape.stepsPerEpoch === 1 && shape.n >= 2) {
    return selfComposeEvent(sampledWithoutReplacementEvent(shape.n, 1, stepEvent), partialEpochs);
  }
  return selfComposeEvent(stepEvent, partialEpochs);
}

export function trainShuffledSgd(data: GlmData, options: ShuffledSgdOptions): TrainResult {
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const glmData = dataForLoss(loss, data);
  const { n, d } = glmData;
  if (!(n >= 1)) throw new InvalidParameterError('data', n, 'at least one row');
  const clipNorm = requirePositive('clipNorm', options.clipNorm);
  const epochs = requirePositive('epochs', options.epochs);
  const fraction = options.fraction ?? 1;
  if (!(typeof fraction === 'number' && fraction > 0 && fraction <= 1)) throw new InvalidParameterError('fraction', fraction, 'in (0, 1]');
  const stepsPerEpoch = Math.floor(fraction * n);
  if (stepsPerEpoch < 1) throw new InvalidParameterError('fraction', fraction, `>= 1/n = ${1 / n} (floor(tau n) steps per partial epoch must be at least 1)`);
  const learningRate = requirePositive('learningRate', options.learningRate);
  const regularization = requireNonNegative('regularization', options.regularization ?? 0);
  const partialEpochs = shuffledPartialEpochs(epochs, fraction);
  const steps = partialEpochs * stepsPerEpoch;
  const target = noiseTarget(options);
  const rng = options.rng ?? defaultRng();

  const sampled = stepsPerEpoch === 1 && n >= 2;
  const noiseMultiplier =
    target.kind !== 'target'
      ? target.noiseMultiplier
      : sampled
        ? calibrateNoiseMultiplier((z) => shuffledSgdEvent(gaussianEvent(z / 2), partialEpochs, { n, stepsPerEpoch }), { targetEpsilon: target.epsilon, delta: target.delta }).noiseMultiplier
        : 2 * exactGaussianCompositionNoiseMultiplier(target.epsilon, target.delta, partialEpochs);
  const noise = noiseMultiplier === 0 ? undefined : shuffledStepNoise(d, clipNorm, noiseMultiplier, options.continuousNoise);
  const noiseStd = noise?.noiseStd ?? 0;

  const theta = new Float64Array(d);
  const gradient = new Float64Array(d);
  const index = new Uint32Array(1);
  let clipped = 0;
  let t = 0;
  for (let epoch = 0; epoch < partialEpochs; epoch++) {
    const permutation = randomPermutation(rng, n);
    for (let j = 0; j < stepsPerEpoch; j++) {
      index[0] = permutation[j];
      clipped += sumClippedGradients(loss, glmData, theta, { clipNorm, indices: index, out: gradient }).clippedCount;
      noise?.add(gradient, rng);
      for (let k = 0; k < d; k++) theta[k] -= learningRate * (gradient[k] + regularization * theta[k]);
      t++;
      options.onStep?.(t, steps, theta);
    }
  }

  const model = linearModel(loss, theta, options.featureNames);
  const diagnostics: TrainingDiagnostics = {
    method: 'shuffled',
    steps,
    noiseMultiplier,
    noiseStd,
    clippedFraction: steps === 0 ? 0 : clipped / steps,
    clipNorm,
    learningRate,
    fraction,
    partialEpochs,
    stepsPerEpoch,
  };
  if (noise === undefined) {
    const privacy = nonPrivateReport(rng, 'replaceOne');
    return { model: { ...model, privacy }, privacy, diagnostics };
  }

  const delta = requireOpenUnit('delta', target.kind === 'target' ? target.delta : options.delta);
  const event = shuffledSgdEvent(noise.event, partialEpochs, { n, stepsPerEpoch });
  const comparisons: Record<string, { epsilon: number; delta: number; noiseMultiplier?: number }> = {};
  const warnings: string[] = [];
  if (options.accountConjecture) {
    const conjecture = conjectureComparison(n, noiseMultiplier, epochs, fraction, delta);
    if (conjecture.kind === 'ok') {
      comparisons.conjecture = { epsilon: conjecture.epsilon, delta, noiseMultiplier };
      warnings.push(
        `004 Conj. 1-2 (a conjecture, NOT a proven guarantee) would give epsilon = ${conjecture.epsilon}; the headline epsilon is the proven bound without amplification`,
      );
    } else {
      warnings.push(`the conjecture (004 Conj. 1-2) was not accounted: ${conjecture.reason}`);
    }
  }
  const privacy = privacyReport(event, delta, {
    relation: 'replaceOne',
    rng,
    pld: gaussianCompositionEpsilon,
    ...(Object.keys(comparisons).length > 0 ? { comparisons } : {}),
    warnings,
    granularity: noise.granularity,
  });
  return { model: { ...model, privacy }, privacy, diagnostics };
}

function conjectureComparison(
  n: number,
  noiseMultiplier: number,
  epochs: number,
  fraction: number,
  delta: number,
): { kind: 'ok'; epsilon: number } | { kind: 'skipped'; reason: string } {
  if (!(fraction < 1)) return { kind: 'skipped', reason: 'it needs tau < 1 (fraction in (0, 1))' };
  if (n < 2) return { kind: 'skipped', reason: 'it needs n >= 2' };
  if (!(noiseMultiplier >= 2)) return { kind: 'skipped', reason: `it assumes sigma >= 2C (noise multiplier ${noiseMultiplier} < 2)` };
  try {
    const event = shuffledSgdConjectureEvent({ datasetSize: n, noiseMultiplier, epochs, fraction });
    const result = rdpEpsilon(event, delta, { allowConjecture: true });
    return { kind: 'ok', epsilon: result.epsilon };
  } catch (error) {
    if (error instanceof DpfitError) return { kind: 'skipped', reason: error.message };
    throw error;
  }
}
