/**
 * A one-run audit of a real training run (Steinke, Nasr & Jagielski 2023, "Privacy auditing with
 * one (1) training run"; the bound is `one-run-bound.ts`): the learner trains ONCE on the user's
 * rows plus m canaries and the audit guesses, from what the run released, which canaries were in.
 *
 * The canaries. Each canary j has a feature of its own (m columns appended to the user's d, zero
 * in every user row) and is the row R e_{d+j}: nothing else in the data touches its weight, so
 * the canaries do not interfere with each other or with the user's rows. Its label pushes its
 * weight up: logistic loss, label 1 and R = 4C, whose gradient -sigma(-R theta_j) R e_{d+j} is
 * clipped to exactly C while theta_j <= ln(3) / R (and still pushes when above); squared loss, a
 * label of 1e9 at R = 1e3, clipped to exactly C at every step the runs reach. Secret bits S_j,
 * each +1 or -1 with probability 1/2 (secure randomness), decide the data:
 *   - DP-SGD (add/remove-one): canary j is in the data when S_j = +1, absent otherwise. The run
 *     declares the public size n + ceil(m / 2) (`datasetSize`; n the declared size when one is
 *     given, else the records read, public as in `dpfit train`), so that q does not move with S.
 *   - DP-GD (replace-one): every canary is in the data, with its label (logistic 1 or 0, squared
 *     +-1e9) set by S_j: flipping S_j replaces one record, the relation DP-GD's report is for.
 * So flipping one S_j gives neighbouring datasets, each canary is a neighbour of the run's
 * guarantee, and SNJ's theorem applies with m canaries.
 *
 * The scores and guesses. 'lastModel': canary j's weight theta_{d+j} in the released model (the
 * run's last iterate; it moves only with canary j and the noise). 'accountant': every iterate is
 * read (what the accountant's composition covers) and each step's released noisy sum along
 * e_{d+j} recovered from the update (plain SGD and DP-GD steps only); the score is the
 * likelihood-ratio statistic of `likelihood-ratio.ts` on those sums. The r = `guesses` canaries
 * with the highest scores are guessed in (S = +1), the r/2 lowest out, the rest abstain, r fixed
 * before the run. W right guesses give epsilon_lower at `confidence`.
 *
 * What it reads and releases. The user's data come through `loadDataset` (as `dpfit train`'s), and
 * the training options are completed by the same public rules as `train()`'s for those data
 * (`resolveTraining`: clipping norm from the schema's bounds, step size, batch, epochs), then
 * given to the learner on the augmented data. The result holds the audit's numbers only (the
 * canaries' count, the guesses, the right ones, the bounds): post-processing of the trained model
 * (W is a function of the model and the secret bits, which are independent of the data), whose
 * privacy the run's own report covers. No model, metric or diagnostic leaves this function.
 *
 * What it spends. The training is a release of the user's data (with the canaries, which are the
 * auditor's): `planOneRunAudit` computes its event from public values before the data are read,
 * by the same resolution (`auditedRun`), so that a budget reserves it as it reserves a `train()`
 * run; given `reserved`, the run checks it released exactly that (`requirePlannedRelease`).
 */
import type { GlmData } from '../learners/glm/types.js';
import { InvalidParameterError } from '../errors.js';
import { trainDpGd, type DpGdOptions } from '../learners/gradient/dp-gd.js';
import { trainDpSgd, type DpSgdOptions } from '../learners/gradient/dp-sgd.js';
import type { PlannedRelease } from '../learners/learner.js';
import { learnerNamed } from '../learners/registry.js';
import { requirePlannedRelease, resolvePlannedTraining, resolveTraining, type PublicTrainingShape, type ResolvedTraining, type SchemaBoundedData } from '../learners/train.js';
import { defaultRng, type Rng } from '../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireOpenUnit, requirePositive } from '../validate.js';
import type { AuditMethod, ThreatModel } from './audit-options.js';
import { runStatistics } from './likelihood-ratio.js';
import { oneRunEpsilonLower } from './bounds/one-run-bound.js';

export interface OneRunOptions {
  readonly method: AuditMethod;
  /** The training target. */
  readonly epsilon: number;
  readonly delta: number;
  /** m: canaries inserted (each in the data with probability 1/2). */
  readonly canaries: number;
  /** r: canaries guessed (r/2 in, r/2 out), fixed before the run (default m / 5, rounded to even). */
  readonly guesses?: number;
  readonly confidence?: number;
  /** The claim audited (default: the epsilon the run's report gives). */
  readonly claimedEpsilon?: number;
  /** Default 'lastModel'. */
  readonly threatModel?: ThreatModel;
  /** The learner's other options, as `train()` takes them (steps, epochs, batchSize, learningRate, clipNorm, loss, ...); the rest is filled by the public rules. */
  readonly training?: Readonly<Record<string, unknown>>;
  /** The secret bits' and the training's randomness (default secure). */
  readonly rng?: Rng;
  readonly onStep?: (step: number, steps: number) => void;
  /**
   * The release reserved for this run in a budget before the data were read (`planOneRunAudit`,
   * or a non-private charge): the run must release exactly it, else it throws and returns nothing
   * (as `dpfit train --ledger` checks its run).
   */
  readonly reserved?: PlannedRelease;
}

export interface OneRunResult {
  readonly method: AuditMethod;
  readonly threatModel: ThreatModel;
  /** The lower bound on epsilon at `delta`, with probability >= confidence. */
  readonly epsilonLower: number;
  readonly epsilonClaimed: number;
  /** What dpfit's accountant reports for the audited run (data plus canaries). */
  readonly epsilonAccounted: number;
  readonly delta: number;
  readonly confidence: number;
  readonly violated: boolean;
  readonly canaries: number;
  readonly guesses: number;
  readonly correct: number;
}

const ONE_RUN_OPTIONS = optionNames<OneRunOptions>({ method: true, epsilon: true, delta: true, canaries: true, guesses: true, confidence: true, claimedEpsilon: true, threatModel: true, training: true, rng: true, onStep: true, reserved: true });
/** Options the audit sets itself: the learner's own names for them are refused in `training`. */
const OWN_TRAINING_KEYS = ['method', 'epsilon', 'delta', 'rng', 'onStep', 'featureNames'];
const SQUARED_LABEL = 1e9;
const SQUARED_RADIUS = 1e3;

/** The augmented data: the user's rows with m zero columns, then the canary rows (file comment). */
function withCanaries(data: GlmData, secret: Int8Array, method: AuditMethod, squared: boolean, radius: number): GlmData {
  const { n, d } = data;
  const m = secret.length;
  const rows = method === 'dpgd' ? [...secret.keys()] : [...secret.keys()].filter((j) => secret[j] === 1);
  const width = d + m;
  const total = n + rows.length;
  const x = new Float64Array(total * width);
  const y = new Float64Array(total);
  for (let i = 0; i < n; i++) {
    x.set(data.x.subarray(i * d, (i + 1) * d), i * width);
    y[i] = data.y[i];
  }
  rows.forEach((j, k) => {
    x[(n + k) * width + d + j] = radius;
    const up = secret[j] === 1;
    y[n + k] = squared ? (up ? SQUARED_LABEL : -SQUARED_LABEL) : up ? 1 : 0;
  });
  return { x, y, n: total, d: width };
}

/** The secret bits: +1 or -1, each with probability 1/2. */
function secretBits(m: number, rng: Rng): Int8Array {
  const bits = new Int8Array(m);
  for (let j = 0; j < m; j++) bits[j] = rng.nextDouble() < 0.5 ? 1 : -1;
  return bits;
}

/** The options of a one-run audit, checked (every check before anything is read or trained). */
function checkOneRun(options: OneRunOptions, where: string) {
  rejectUnknownOptions(options, ONE_RUN_OPTIONS, where);
  const method = options.method;
  if (method !== 'dpgd' && method !== 'dpsgd') throw new InvalidParameterError('method', method, "'dpgd' or 'dpsgd'");
  const threatModel = options.threatModel ?? 'lastModel';
  if (threatModel !== 'lastModel' && threatModel !== 'accountant') throw new InvalidParameterError('threatModel', threatModel, "'lastModel' or 'accountant'");
  const m = requireInteger('canaries', options.canaries, 2, 1_000_000);
  const guesses = requireInteger('guesses', options.guesses ?? 2 * Math.max(1, Math.round(m / 10)), 2, m);
  if (guesses % 2 !== 0) throw new InvalidParameterError('guesses', guesses, 'an even number (half guessed in, half out)');
  const confidence = requireOpenUnit('confidence', options.confidence ?? 0.95);
  const epsilon = requirePositive('epsilon', options.epsilon);
  const delta = requireOpenUnit('delta', options.delta);
  const training = options.training ?? {};
  for (const key of OWN_TRAINING_KEYS) if (key in training) throw new InvalidParameterError(`training.${key}`, training[key], `absent (the audit sets ${key} itself)`);
  return { method, threatModel, m, guesses, confidence, epsilon, delta, trainOptions: { method, epsilon, delta, ...training } as Parameters<typeof resolveTraining>[1] };
}

/**
 * The run the audit trains, from the user's run resolved by the public rules: its learner options
 * (DP-SGD declares the public size n + ceil(m / 2), file comment) and its public shape (n + m rows
 * for DP-GD, every canary in; d + m columns), what its event is computed from.
 */
function auditedRun(resolved: ResolvedTraining, method: AuditMethod, m: number): { complete: Record<string, unknown>; shape: { n: number; d: number } } {
  const { featureNames: _names, ...complete } = resolved.options as Record<string, unknown> & { featureNames?: unknown };
  const n = resolved.size.value ?? resolved.dataset.n;
  const d = resolved.dataset.d + m;
  if (method === 'dpgd') return { complete, shape: { n: n + m, d } };
  const datasetSize = ((complete.datasetSize as number | undefined) ?? n) + Math.ceil(m / 2);
  return { complete: { ...complete, datasetSize }, shape: { n: datasetSize, d } };
}

/**
 * What a one-run audit's training will release (its event, the delta outside RDP, the relation),
 * computed BEFORE the data are read from their public shape (the declared `training.datasetSize`,
 * the schema's d and bounds), exactly as `oneRunAudit` will resolve the run: what a budget
 * reserves for it (`dpfit audit --one-run --ledger`), as `plannedTrainingRelease` does for
 * `train()`. The canaries are part of the run: m more columns, and m more rows (DP-GD) or
 * ceil(m / 2) more in the declared size (DP-SGD).
 */
export function planOneRunAudit(shape: PublicTrainingShape, options: OneRunOptions): PlannedRelease {
  const c = checkOneRun(options, 'planOneRunAudit');
  const resolved = resolvePlannedTraining(shape, c.trainOptions, 'planOneRunAudit');
  const run = auditedRun(resolved, c.method, c.m);
  const learner = learnerNamed(c.method);
  return { ...learner.plan(run.shape, run.complete as never), relation: learner.relation };
}

/** Trains once with canaries and returns the audit's numbers only (file comment). */
export function oneRunAudit(data: SchemaBoundedData, options: OneRunOptions): OneRunResult {
  const { method, threatModel, m, guesses, confidence, delta, trainOptions } = checkOneRun(options, 'oneRunAudit');
  // The user's run, completed by the public rules on the user's data: what `dpfit train` would train.
  const resolved = resolveTraining(data, trainOptions, 'oneRunAudit');
  const { complete } = auditedRun(resolved, method, m);
  const base = resolved.dataset;
  const loss = (complete.loss as string | undefined) ?? 'logistic';
  const squared = loss === 'squared';
  if (!squared && loss !== 'logistic') throw new InvalidParameterError('loss', loss, "'logistic' or 'squared' for a one-run audit (its canaries are built for them)");
  const clipNorm = requirePositive('clipNorm', complete.clipNorm);
  const radius = squared ? SQUARED_RADIUS : 4 * clipNorm;
  if (threatModel === 'accountant') {
    if ((complete.optimizer ?? 'sgd') !== 'sgd' || (complete.schedule ?? 'constant') !== 'constant') {
      throw new InvalidParameterError('optimizer', complete.optimizer ?? complete.schedule, "'sgd' with the constant schedule for the accountant threat model (each step's sum is read back from the update)");
    }
  }
  const rng = options.rng ?? defaultRng();
  const secret = secretBits(m, rng);
  const augmented = withCanaries(base, secret, method, squared, radius);
  // The canary weights after every step (accountant) or the last model only.
  const steps: Float64Array[] = [];
  const keep = (_t: number, _T: number, theta: Float64Array) => {
    if (threatModel === 'accountant') steps.push(theta.slice(base.d));
  };
  const onStep = (t: number, T: number, theta: Float64Array) => {
    keep(t, T, theta);
    options.onStep?.(t, T);
  };
  const result =
    method === 'dpgd'
      ? trainDpGd(augmented, { ...(complete as unknown as DpGdOptions), onStep, rng })
      : trainDpSgd(augmented, { ...(complete as unknown as DpSgdOptions), onStep, rng });
  if (options.reserved !== undefined) requirePlannedRelease(result.privacy, options.reserved);
  const theta = result.model.theta;
  let scores: Float64Array;
  if (threatModel === 'lastModel') scores = Float64Array.from({ length: m }, (_, j) => theta[base.d + j]);
  else {
    const diagnostics = result.diagnostics;
    const regularization = (complete.regularization as number | undefined) ?? 0;
    // DP-GD's diagnostics give the noise std of the sum divided by n; DP-SGD's, of the sum.
    const divisor = method === 'dpgd' ? augmented.n : (diagnostics.expectedBatchSize as number);
    const noiseStd = method === 'dpgd' ? diagnostics.noiseStd * augmented.n : diagnostics.noiseStd;
    scores = accountantScores(steps, m, { method, rate: diagnostics.learningRate as number, regularization, divisor, noiseStd, clipNorm, samplingProbability: method === 'dpgd' ? 1 : (diagnostics.samplingProbability as number) });
  }
  // Guesses: the r/2 highest scores in, the r/2 lowest out.
  const order = [...scores.keys()].sort((i, j) => scores[i] - scores[j]);
  const half = guesses / 2;
  let correct = 0;
  for (let k = 0; k < half; k++) {
    if (secret[order[m - 1 - k]] === 1) correct++;
    if (secret[order[k]] === -1) correct++;
  }
  const epsilonLower = oneRunEpsilonLower(m, guesses, correct, delta, confidence);
  const epsilonClaimed = options.claimedEpsilon ?? result.privacy.epsilon;
  return { method, threatModel, epsilonLower, epsilonClaimed, epsilonAccounted: result.privacy.epsilon, delta, confidence, violated: epsilonLower > epsilonClaimed, canaries: m, guesses, correct };
}

/**
 * Each canary's likelihood-ratio score from the iterates: with divisor D (DP-SGD the expected batch,
 * DP-GD n) and regularisation lambda, step t's released sum along e_{d+j} is
 * G = D ((theta_{t-1} - theta_t) / rate - lambda theta_{t-1}); the canary's clipped gradient is -C
 * along the weight it raises, so y = -G is C + noise when the canary is in a DP-SGD batch (noise
 * alone otherwise) and +-C + noise for DP-GD (where the statistic, the sum of the y, is the last
 * weight again when lambda = 0: full batches release nothing more about a canary than the last model).
 */
function accountantScores(steps: readonly Float64Array[], m: number, run: { method: AuditMethod; rate: number; regularization: number; divisor: number; noiseStd: number; clipNorm: number; samplingProbability: number }): Float64Array {
  const T = steps.length;
  const y = new Float64Array(m * T);
  let previous = new Float64Array(m);
  steps.forEach((theta, t) => {
    for (let j = 0; j < m; j++) y[j * T + t] = run.divisor * ((theta[j] - previous[j]) / run.rate + run.regularization * previous[j]);
    previous = Float64Array.from(theta);
  });
  return runStatistics({ method: run.method, inside: y, outside: y, runs: m, steps: T, accounted: 0, noiseStd: run.noiseStd, gridNoiseStd: Infinity, clipNorm: run.clipNorm, samplingProbability: run.samplingProbability }, 'inside');
}
