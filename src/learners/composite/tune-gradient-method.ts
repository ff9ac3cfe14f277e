/**
 * Honest learning-rate tuning of a gradient learner (DP-GD, DP-SGD, shuffled SGD), the way `003`
 * Sec. 5 tunes "honest DP-SGD": the learning rate is drawn from a PUBLIC candidate list, each run
 * is a private training run with the SAME event, and the best run by a score on PUBLIC validation
 * data is released after a random number K of runs (Papernot & Steinke 2022; `tuning.ts`).
 *
 * The noise multiplier is calibrated for the whole release repeatAndSelect(runEvent(z), mu, eta)
 * (by the RDP accountant: Papernot & Steinke's bounds are RDP bounds), so the headline epsilon
 * includes the cost of tuning. Only the learning rate varies between candidates: it changes
 * neither the steps nor the sampling nor the noise, so every run releases the declared event.
 */
import { repeatAndSelectEvent } from '../../accounting/events/constructors.js';
import { truncatedNegativeBinomialGamma } from '../../accounting/rdp/repeat-and-select.js';
import { InvalidParameterError } from '../../errors.js';
import { defaultRng } from '../../random/rng.js';
import { optionNames, rejectUnknownOptions, requireOpenUnit, requirePositive } from '../../validate.js';
import type { GlmData } from '../glm/types.js';
import { rejectUnknownBaseOptions } from './gradient-method-options.js';
import { calibrateCompositeNoise, compositeRunOptions, gradientMethodRelation, gradientRunNoise, trainGradientMethod, type GradientMethodOptions, type RunShape } from './gradient-methods.js';
import type { DpEvent } from '../../accounting/events/types.js';
import { tuneHonestly, type RunCountDistribution, type ScoringOptions, type TuningResult } from './tuning.js';
import type { Rng } from '../../random/rng.js';

export interface TuneGradientMethodOptions extends ScoringOptions {
  /** The learner and its options; its learningRate is replaced by each candidate's. */
  readonly base: GradientMethodOptions;
  /** PUBLIC candidate learning rates, fixed before seeing the data. */
  readonly learningRates: readonly number[];
  /** The law of the number of runs K (default Poisson with mean 10). */
  readonly distribution?: RunCountDistribution;
  /** Target (epsilon, delta) of the whole tuned release. */
  readonly epsilon: number;
  readonly delta: number;
  readonly rng?: Rng;
}

/** P[K > s] for K ~ Poisson(mu): 1 - sum_{k <= s} e^-mu mu^k / k!. */
export function poissonTailAbove(s: number, mu: number): number {
  let term = Math.exp(-mu);
  let cdf = term;
  for (let k = 1; k <= s; k++) {
    term *= mu / k;
    cdf += term;
  }
  return 1 - cdf;
}

/** mu with P[K > s] >= probability for K ~ Poisson(mu) (`003` Sec. 5: s = 10, probability 0.9 gives mu ~ 15.4). */
export function poissonMeanForGrid(gridSize: number, probability = 0.9): number {
  if (!(Number.isInteger(gridSize) && gridSize >= 0)) throw new InvalidParameterError('gridSize', gridSize, 'an integer >= 0');
  requireOpenUnit('probability', probability);
  let lo = 0;
  let hi = gridSize + 1;
  while (poissonTailAbove(gridSize, hi) < probability) hi *= 2;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (poissonTailAbove(gridSize, mid) >= probability) hi = mid;
    else lo = mid;
  }
  return hi;
}

const TUNE_GRADIENT_METHOD_OPTIONS = optionNames<TuneGradientMethodOptions>({ base: true, learningRates: true, distribution: true, epsilon: true, delta: true, rng: true, publicValidation: true, metric: true });

/** What a tuned release decides before it reads a row (`setUpTuning`): the noise of every run and the event of the whole release. */
export interface TuningPlan {
  readonly noiseMultiplier: number;
  readonly distribution: RunCountDistribution;
  /** One run's event and grid (every candidate's). */
  readonly run: { readonly event: DpEvent; readonly granularity?: number };
  /** repeatAndSelect(run.event, mu, eta): what the tuned release costs, whatever K and whichever run is released. */
  readonly event: DpEvent;
}

/**
 * The options of a tuned release checked, the noise multiplier calibrated for the whole release
 * and its event, from public values only (the run's public n and d, the public candidate list and
 * the law of K): what a budget reserves before the data are read.
 */
export function setUpTuning(shape: RunShape, options: Omit<TuneGradientMethodOptions, 'rng' | 'publicValidation' | 'metric'>): TuningPlan {
  rejectUnknownBaseOptions(options.base, 'tuneGradientMethodHonestly');
  const { base, learningRates } = options;
  if (!Array.isArray(learningRates) || learningRates.length === 0) throw new InvalidParameterError('learningRates', learningRates, 'a non-empty list of positive learning rates');
  learningRates.forEach((rate, k) => requirePositive(`learningRates[${k}]`, rate));
  const epsilon = requirePositive('epsilon', options.epsilon);
  const delta = requireOpenUnit('delta', options.delta);
  const distribution = options.distribution ?? { kind: 'poisson', mean: 10 };
  const eta = distribution.kind === 'poisson' ? Infinity : distribution.shape;
  if (distribution.kind === 'truncatedNegativeBinomial') truncatedNegativeBinomialGamma(distribution.mean, distribution.shape); // validates
  const wrap = (run: DpEvent) => repeatAndSelectEvent(run, distribution.mean, eta);
  const { noiseMultiplier } = calibrateCompositeNoise(base, shape, wrap, { epsilon, delta });
  const run = gradientRunNoise(base, shape, noiseMultiplier);
  return { noiseMultiplier, distribution, run, event: wrap(run.event) };
}

export function tuneGradientMethodHonestly(data: GlmData, options: TuneGradientMethodOptions): TuningResult<number> & { readonly noiseMultiplier: number } {
  rejectUnknownOptions(options, TUNE_GRADIENT_METHOD_OPTIONS, 'tuneGradientMethodHonestly');
  const { base, learningRates, delta } = options;
  const { noiseMultiplier, distribution, run } = setUpTuning(data, options);
  const rng = options.rng ?? defaultRng();
  const result = tuneHonestly(data, {
    candidates: learningRates,
    train: (d, learningRate, runRng) => trainGradientMethod(d, compositeRunOptions({ ...base, learningRate }), { noiseMultiplier, delta, rng: runRng }),
    perRunEvent: run.event,
    ...(run.granularity === undefined ? {} : { granularity: run.granularity }),
    distribution,
    delta,
    relation: gradientMethodRelation(base.method),
    rng,
    ...(options.publicValidation === undefined ? {} : { publicValidation: options.publicValidation }),
    ...(options.metric === undefined ? {} : { metric: options.metric }),
  });
  return { ...result, noiseMultiplier };
}
