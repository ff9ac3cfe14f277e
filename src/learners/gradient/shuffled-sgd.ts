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
 * LAST ITERATE (the default when its conditions hold): only the final model is released, so
 * amplification by iteration applies (`004` Thms. 3.5-3.6, Lemma 3.1; Feldman et al. 2018). The
 * run is then the lattice iteration of `lattice-sgd.ts` (projection on a public ball of radius r,
 * state and noise on a lattice, the same clipped steps), whose conditions are checked by name: a
 * smooth loss, a PUBLIC row-norm bound R and learningRate (beta_f R^2 + lambda) <= 2. Both proven
 * bounds are computed for that run (plain composition of its per-step Gaussian releases, and the
 * `shuffledLastIterate` event) and the smaller is the headline, the other in `comparisons`; for
 * a target epsilon the noise is the smallest that meets the target by either. Composite releases
 * (tuning, one-vs-rest) run the plain iteration (`compositeRunOptions`).
 *
 * CONJECTURE (only with `accountConjecture: true`): the thesis' Conj. 1-2 (amplification by the
 * partial shuffle, `004` Sec. 4.3) accounted by the RDP accountant with `allowConjecture`. It is
 * NOT a theorem: it is put in `privacy.comparisons.conjecture` and a warning, never in the headline.
 */
import { calibrateNoiseMultiplier } from '../../accounting/calibration/calibrate.js';
import { couplingReducedNoise } from '../../accounting/discrete-coupling.js';
import type { DpEvent } from '../../accounting/events/types.js';
import {
  gaussianEvent,
  NON_PRIVATE_EVENT,
  sampledWithoutReplacementEvent,
  selfComposeEvent,
  shuffledSgdConjectureEvent,
} from '../../accounting/events/constructors.js';
import { exactGaussianCompositionNoiseMultiplier, gaussianCompositionEpsilon } from '../../accounting/gaussian/gaussian-composition.js';
import { rdpEpsilon } from '../../accounting/rdp/accountant.js';
import { DpfitError, InvalidParameterError } from '../../errors.js';
import { randomPermutation, shufflePrefixInPlace } from '../../random/discrete.js';
import { defaultRng, type Rng } from '../../random/rng.js';
import { optionNames, rejectUnknownOptions, requireNonNegative, requireOpenUnit, requirePositive } from '../../validate.js';
import { rowsWithinBound } from '../glm/data.js';
import { sumClippedGradients } from '../glm/per-example.js';
import { clipThresholds } from '../glm/clip-thresholds.js';
import { latticeScratch, latticeSgdObstacle, latticeSgdStep, planLatticeSgd, type LatticeSgdPlan, type LatticeSgdSettings } from './lattice-sgd.js';
import type { GlmData, GlmLoss } from '../glm/types.js';
import { dataForLoss, lossByName, type LossParameters } from '../glm/losses/by-name.js';
import { linearModel } from '../models/model.js';
import { nonPrivateReport, privacyReport } from '../models/privacy-report.js';
import { type NoiseOptions, noiseTarget, requireOwnMethod, type TrainingDiagnostics, type TrainResult } from '../training.js';
import { clippedSumNoise, type SumNoise } from './clipped-sum-noise.js';

export interface ShuffledSgdOptions extends NoiseOptions {
  /** `train()`'s name of this learner: only 'shuffled' (so that train()'s options for it pass here unchanged). */
  readonly method?: 'shuffled';
  readonly loss?: string;
  readonly lossParameters?: LossParameters;
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
  /**
   * Account the last iterate by amplification by iteration (`lattice-sgd.ts`): 'auto' (default)
   * when its conditions hold, true to require it (an error names the failed condition), false never.
   */
  readonly lastIterate?: boolean | 'auto';
  /** r: the public radius of the ball the last-iterate path projects the iterate on (default 1000). */
  readonly projectionRadius?: number;
  /** R: a PUBLIC bound on every row's norm (the schema's); the last-iterate path needs it. */
  readonly rowNormBound?: number;
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

/**
 * The records of each partial epoch, in order: a fresh uniformly random permutation of the n
 * records when the epoch is whole (m = n), else the first m entries of one reused array after a
 * fresh partial shuffle of its prefix (`shufflePrefixInPlace`: a uniform ordered sample of m of the
 * n records whatever the array held, drawn with no data), so that a short partial epoch costs O(m),
 * not O(n). Either way only the first m entries are read.
 */
function partialEpochOrders(rng: Rng, n: number, m: number): () => Uint32Array {
  if (m >= n) return () => randomPermutation(rng, n);
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  return () => shufflePrefixInPlace(rng, order, m);
}

/** The default radius r of the ball the last-iterate path projects on (public; it only sets the rounding slack). */
export const DEFAULT_PROJECTION_RADIUS = 1000;

/** The smaller of the exact-Gaussian and RDP epsilons of a proven event. */
function provenEpsilon(event: DpEvent, delta: number): number {
  const exact = gaussianCompositionEpsilon(event, delta);
  const rdp = rdpEpsilon(event, delta).epsilon;
  return exact === undefined ? rdp : Math.min(rdp, exact.epsilon);
}

export const SHUFFLED_SGD_OPTIONS = optionNames<ShuffledSgdOptions>({ method: true, loss: true, lossParameters: true, clipNorm: true, epochs: true, fraction: true, learningRate: true, regularization: true, accountConjecture: true, featureNames: true, lastIterate: true, projectionRadius: true, rowNormBound: true, onStep: true, epsilon: true, delta: true, noiseMultiplier: true, rng: true, continuousNoise: true });

/** What Alg. 1 decides before it reads a row (`setUpShuffledSgd`): its schedule, its noise, which iteration runs and its event. */
export interface ShuffledSgdRun {
  readonly loss: GlmLoss;
  readonly clipNorm: number;
  readonly epochs: number;
  readonly fraction: number;
  readonly learningRate: number;
  readonly regularization: number;
  readonly partialEpochs: number;
  readonly stepsPerEpoch: number;
  readonly steps: number;
  readonly noiseMultiplier: number;
  /** The lattice iteration (`lattice-sgd.ts`), when its conditions hold and the run is private; its two proven accountings. */
  readonly lattice?: {
    readonly settings: LatticeSgdSettings;
    readonly plan: LatticeSgdPlan;
    readonly useLastIterate: boolean;
    readonly plainEpsilon: number;
    readonly lastIterateEpsilon: number;
  };
  /** The plain iteration's step noise (absent on the lattice, and without noise). */
  readonly noise?: SumNoise;
  /** Why the last-iterate bound is not used (absent when it is). */
  readonly obstacle?: string;
  /** The delta the release is reported at (absent without noise). */
  readonly delta?: number;
  /** The release's event: the smaller proven bound's on the lattice, the plain composition's otherwise, `nonPrivate` without noise. */
  readonly event: DpEvent;
}

/**
 * Everything Alg. 1 decides from public values, before any row is read: the options checked, the
 * noise (calibrated for a target), whether the lattice iteration runs and which of its two proven
 * bounds is the headline, and the event. `shape.n` is public (replace-one); `rowNormBound` is R,
 * checked against the rows by the caller that has them (`NaN` when none is declared: the lattice
 * then does not run).
 */
export function setUpShuffledSgd(shape: { readonly n: number; readonly d: number }, options: ShuffledSgdOptions, rowNormBound: number): ShuffledSgdRun {
  const { n, d } = shape;
  if (!(n >= 1)) throw new InvalidParameterError('data', n, 'at least one row');
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const clipNorm = requirePositive('clipNorm', options.clipNorm);
  const epochs = requirePositive('epochs', options.epochs);
  const fraction = options.fraction ?? 1;
  if (!(typeof fraction === 'number' && fraction > 0 && fraction <= 1)) throw new InvalidParameterError('fraction', fraction, 'in (0, 1]');
  const stepsPerEpoch = Math.floor(fraction * n);
  if (stepsPerEpoch < 1) throw new InvalidParameterError('fraction', fraction, `>= 1/n = ${1 / n} (floor(tau n) steps per partial epoch must be at least 1)`);
  const learningRate = requirePositive('learningRate', options.learningRate);
  const regularization = requireNonNegative('regularization', options.regularization ?? 0);
  const lastIterate = options.lastIterate ?? 'auto';
  if (!(lastIterate === true || lastIterate === false || lastIterate === 'auto')) throw new InvalidParameterError('lastIterate', lastIterate, "true, false or 'auto'");
  const projectionRadius = requirePositive('projectionRadius', options.projectionRadius ?? DEFAULT_PROJECTION_RADIUS);
  const partialEpochs = shuffledPartialEpochs(epochs, fraction);
  const steps = partialEpochs * stepsPerEpoch;
  const target = noiseTarget(options);
  const common = { loss, clipNorm, epochs, fraction, learningRate, regularization, partialEpochs, stepsPerEpoch, steps };

  const sampled = stepsPerEpoch === 1 && n >= 2;
  const eventShape = { n, stepsPerEpoch };
  // The noise plain composition needs (for the continuous mechanism; grids only add noise).
  const plainNoise = (epsilon: number, delta: number) =>
    sampled
      ? calibrateNoiseMultiplier((z) => shuffledSgdEvent(gaussianEvent(z / 2), partialEpochs, eventShape), { targetEpsilon: epsilon, delta }).noiseMultiplier
      : 2 * exactGaussianCompositionNoiseMultiplier(epsilon, delta, partialEpochs);

  // Amplification by iteration (`lattice-sgd.ts`): used when its conditions hold, unless turned off.
  const settings: LatticeSgdSettings = { n, stepsPerEpoch, d, clipNorm, learningRate, regularization, projectionRadius, rowNormBound, curvatureBound: loss.curvatureBound };
  const nonPrivate = target.kind !== 'target' && target.noiseMultiplier === 0;
  const obstacle =
    lastIterate === false
      ? 'it was turned off (lastIterate: false)'
      : options.continuousNoise
        ? 'continuous floating-point noise was asked for (continuousNoise), and the lattice iteration draws exact discrete noise'
        : latticeSgdObstacle(settings);
  if (lastIterate === true && obstacle !== undefined) throw new InvalidParameterError('lastIterate', true, `usable only when its conditions hold: ${obstacle}`);
  if (obstacle === undefined && !nonPrivate) {
    const delta = requireOpenUnit('delta', target.kind === 'target' ? target.delta : options.delta);
    const noiseMultiplier = target.kind === 'target' ? latticeNoise(settings, partialEpochs, plainNoise(target.epsilon, target.delta), target.epsilon, delta) : target.noiseMultiplier;
    const plan = planLatticeSgd(settings, noiseMultiplier);
    // Both proven bounds of the lattice run (public: they depend on the plan alone); the smaller is the headline.
    const plainEvent = shuffledSgdEvent(plan.stepEvent, partialEpochs, eventShape);
    const lastIterateEvent = selfComposeEvent(plan.epochEvent, partialEpochs);
    const plainEpsilon = provenEpsilon(plainEvent, delta);
    const lastIterateEpsilon = rdpEpsilon(lastIterateEvent, delta).epsilon;
    const useLastIterate = lastIterateEpsilon < plainEpsilon;
    return {
      ...common,
      noiseMultiplier,
      lattice: { settings, plan, useLastIterate, plainEpsilon, lastIterateEpsilon },
      delta,
      event: useLastIterate ? lastIterateEvent : plainEvent,
    };
  }

  const noiseMultiplier = target.kind !== 'target' ? target.noiseMultiplier : plainNoise(target.epsilon, target.delta);
  if (noiseMultiplier === 0) return { ...common, noiseMultiplier, ...(obstacle === undefined ? {} : { obstacle }), event: NON_PRIVATE_EVENT };
  const noise = shuffledStepNoise(d, clipNorm, noiseMultiplier, options.continuousNoise);
  const delta = requireOpenUnit('delta', target.kind === 'target' ? target.delta : options.delta);
  return { ...common, noiseMultiplier, noise, ...(obstacle === undefined ? {} : { obstacle }), delta, event: shuffledSgdEvent(noise.event, partialEpochs, eventShape) };
}

/** Alg. 1's release from public values alone (`Learner.plan`): the public n, the declared R, no row read. */
export function planShuffledSgd(shape: { readonly n: number; readonly d: number }, options: ShuffledSgdOptions): DpEvent {
  rejectUnknownOptions(options, SHUFFLED_SGD_OPTIONS, 'trainShuffledSgd');
  requireOwnMethod(options.method, 'shuffled', 'trainShuffledSgd');
  return setUpShuffledSgd(shape, options, options.rowNormBound === undefined ? NaN : requirePositive('rowNormBound', options.rowNormBound)).event;
}

export function trainShuffledSgd(data: GlmData, options: ShuffledSgdOptions): TrainResult {
  rejectUnknownOptions(options, SHUFFLED_SGD_OPTIONS, 'trainShuffledSgd');
  requireOwnMethod(options.method, 'shuffled', 'trainShuffledSgd');
  const lossData = dataForLoss(lossByName(options.loss ?? 'logistic', options.lossParameters), data);
  const { n, d } = lossData;
  if (!(n >= 1)) throw new InvalidParameterError('data', n, 'at least one row');
  const glmData = options.rowNormBound === undefined ? lossData : rowsWithinBound(lossData, options.rowNormBound);
  const run = setUpShuffledSgd({ n, d }, options, options.rowNormBound ?? NaN);
  const { loss, clipNorm, epochs, fraction, learningRate, regularization, partialEpochs, stepsPerEpoch, steps, noiseMultiplier, noise } = run;
  const rng = options.rng ?? defaultRng();
  const shape = { n, stepsPerEpoch };
  if (run.lattice !== undefined) {
    return trainOnLattice(loss, glmData, run.lattice.settings, { run, rng, options, shape });
  }
  const noiseStd = noise?.noiseStd ?? 0;

  const theta = new Float64Array(d);
  const gradient = new Float64Array(d);
  const index = new Uint32Array(1);
  let clipped = 0;
  let t = 0;
  const nextOrder = partialEpochOrders(rng, n, stepsPerEpoch);
  for (let epoch = 0; epoch < partialEpochs; epoch++) {
    const permutation = nextOrder();
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

  const delta = run.delta as number;
  const comparisons: Record<string, { epsilon: number; delta: number; noiseMultiplier?: number }> = {};
  const warnings: string[] = [];
  if (!options.continuousNoise && run.obstacle !== undefined && (options.lastIterate ?? 'auto') === 'auto') {
    warnings.push(`the last-iterate bound (amplification by iteration) was not used: ${run.obstacle}`);
  }
  addConjecture(options, { n, noiseMultiplier, epochs, fraction, delta }, comparisons, warnings);
  const privacy = privacyReport(run.event, delta, {
    relation: 'replaceOne',
    rng,
    pld: gaussianCompositionEpsilon,
    ...(Object.keys(comparisons).length > 0 ? { comparisons } : {}),
    warnings,
    granularity: noise.granularity,
  });
  return { model: { ...model, privacy }, privacy, diagnostics };
}

/**
 * The noise multiplier of the lattice path for a target: the plain-composition noise (lifted so
 * that the lattice's step event still meets the target), or less when the last-iterate bound
 * meets the target with less.
 */
function latticeNoise(settings: LatticeSgdSettings, partialEpochs: number, plainZ: number, targetEpsilon: number, delta: number): number {
  let z = plainZ;
  for (let i = 0; i < 16; i++) {
    const plan = planLatticeSgd(settings, z);
    const accounted = couplingReducedNoise(plan.stepEvent.noiseMultiplier, plan.noiseParameter);
    if (accounted >= plainZ / 2) break;
    z *= (plainZ / 2 / accounted) * (1 + 1e-9);
  }
  const lastIterateEvent = (zz: number): DpEvent => {
    try {
      return selfComposeEvent(planLatticeSgd(settings, zz).epochEvent, partialEpochs);
    } catch (error) {
      if (error instanceof InvalidParameterError) return NON_PRIVATE_EVENT; // too little noise for the lattice: not a candidate
      throw error;
    }
  };
  if (!(rdpEpsilon(lastIterateEvent(z), delta).epsilon <= targetEpsilon)) return z;
  const calibrated = calibrateNoiseMultiplier(lastIterateEvent, { targetEpsilon, delta, tolerance: 1e-6 }).noiseMultiplier;
  return Math.min(z, calibrated);
}

interface LatticeRun {
  readonly run: ShuffledSgdRun;
  readonly rng: Rng;
  readonly options: ShuffledSgdOptions;
  readonly shape: { readonly n: number; readonly stepsPerEpoch: number };
}

/** Alg. 1 on the lattice (`lattice-sgd.ts`), accounted by the better of plain composition and the last-iterate bound (`setUpShuffledSgd` chose). */
function trainOnLattice(loss: GlmLoss, data: GlmData, settings: LatticeSgdSettings, latticeRun: LatticeRun): TrainResult {
  const { run, rng, options } = latticeRun;
  const { noiseMultiplier, partialEpochs } = run;
  const { plan, useLastIterate, plainEpsilon, lastIterateEpsilon } = run.lattice as NonNullable<ShuffledSgdRun['lattice']>;
  const delta = run.delta as number;
  const { n, d, stepsPerEpoch } = settings;
  const thresholds = clipThresholds(data, settings.clipNorm).values;
  const scratch = latticeScratch(d);
  const k = new Float64Array(d);
  const theta = new Float64Array(d);
  const steps = partialEpochs * stepsPerEpoch;
  let clipped = 0;
  let t = 0;
  const nextOrder = partialEpochOrders(rng, n, stepsPerEpoch);
  for (let epoch = 0; epoch < partialEpochs; epoch++) {
    const permutation = nextOrder();
    for (let j = 0; j < stepsPerEpoch; j++) {
      if (latticeSgdStep(plan, settings, loss, data, thresholds, permutation[j], k, rng, scratch)) clipped++;
      t++;
      if (options.onStep !== undefined) {
        for (let i = 0; i < d; i++) theta[i] = plan.granularity * k[i];
        options.onStep(t, steps, theta);
      }
    }
  }
  for (let i = 0; i < d; i++) theta[i] = plan.granularity * k[i];

  const comparisons: Record<string, { epsilon: number; delta: number; noiseMultiplier?: number }> = useLastIterate
    ? { plainComposition: { epsilon: plainEpsilon, delta, noiseMultiplier } }
    : { lastIterate: { epsilon: lastIterateEpsilon, delta, noiseMultiplier } };
  const warnings: string[] = [];
  addConjecture(options, { n, noiseMultiplier, epochs: run.epochs, fraction: run.fraction, delta }, comparisons, warnings);
  const privacy = privacyReport(run.event, delta, {
    relation: 'replaceOne',
    rng,
    pld: gaussianCompositionEpsilon,
    comparisons,
    warnings,
    granularity: plan.granularity,
  });
  const model = linearModel(loss, theta, options.featureNames);
  const diagnostics: TrainingDiagnostics = {
    method: 'shuffled',
    steps,
    noiseMultiplier,
    noiseStd: plan.noiseParameter * plan.granularity,
    clippedFraction: steps === 0 ? 0 : clipped / steps,
    clipNorm: settings.clipNorm,
    learningRate: settings.learningRate,
    fraction: run.fraction,
    partialEpochs,
    stepsPerEpoch,
    projectionRadius: settings.projectionRadius,
    accounting: useLastIterate ? 'lastIterate' : 'plainComposition',
  };
  return { model: { ...model, privacy }, privacy, diagnostics };
}

function addConjecture(
  options: ShuffledSgdOptions,
  run: { n: number; noiseMultiplier: number; epochs: number; fraction: number; delta: number },
  comparisons: Record<string, { epsilon: number; delta: number; noiseMultiplier?: number }>,
  warnings: string[],
): void {
  if (!options.accountConjecture) return;
  const conjecture = conjectureComparison(run.n, run.noiseMultiplier, run.epochs, run.fraction, run.delta);
  if (conjecture.kind === 'ok') {
    comparisons.conjecture = { epsilon: conjecture.epsilon, delta: run.delta, noiseMultiplier: run.noiseMultiplier };
    warnings.push(
      `the shuffled-SGD conjecture (amplification by shuffling: NOT a proven guarantee) would give epsilon = ${conjecture.epsilon}; the headline epsilon is a proven bound`,
    );
  } else {
    warnings.push(`the shuffled-SGD conjecture was not accounted: ${conjecture.reason}`);
  }
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
