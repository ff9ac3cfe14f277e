/**
 * `dpfit train --method ...`: from the command's flags to one learner call. Each method reads
 * only the flags it documents; the result always has the `{model, privacy, diagnostics}` shape
 * (model undefined when the mechanism released nothing: K = 0 runs in honest tuning, a
 * Propose-Test-Release rejection). `diagnostics` are the data owner's (private): the command
 * writes them only to --diagnostics and to stderr, never into the release.
 */
import { labelColumn, type PreparedData, type Schema } from '../../data/schema.js';
import { trainOneVsRest, type OneVsRestModel } from '../../learners/one-vs-rest.js';
import { InvalidParameterError } from '../../errors.js';
import type { GradientSummer, TrainResult } from '../../learners/dp-gd.js';
import type { Optimizer, Schedule } from '../../learners/dp-sgd.js';
import { glmConstants } from '../../learners/glm/constants.js';
import type { GradientMethodOptions } from '../../learners/gradient-methods.js';
import { requireGradientMethod, trainGradientMethod } from '../../learners/gradient-methods.js';
import { defaultMethodOptions } from '../../learners/defaults.js';
import { lossByName } from '../../learners/losses.js';
import type { LinearModel } from '../../learners/model.js';
import { trainAmp } from '../../learners/amp.js';
import { trainObjectivePerturbation } from '../../learners/objective-perturbation.js';
import { GRID_INVERSION } from '../../learners/objective-perturbation-opt-in.js';
import { trainOutputPerturbation } from '../../learners/output-perturbation.js';
import { trainRgmGd } from '../../learners/rgm-gd.js';
import { trainOutputPerturbationSgd } from '../../learners/output-perturbation-sgd.js';
import type { PrivacyReport } from '../../learners/privacy-report.js';
import { tuneGradientMethodHonestly } from '../../learners/tune-gradient-method.js';
import type { LabelledData, ScoreMetric } from '../../learners/tuning.js';
import type { Rng } from '../../random/rng.js';

export interface TrainFlags {
  data: string;
  schema?: string;
  label?: string;
  /** The loss (--loss; --model is its deprecated alias). */
  loss: string;
  method: string;
  epsilon?: number;
  delta: number;
  noiseMultiplier?: number;
  clipNorm?: number;
  steps?: number;
  epochs?: number;
  batchSize?: number;
  learningRate?: number;
  regularization?: number;
  /** dpgd: feature storage, 'float64' or 'float32' (checked when parsed). */
  precision?: 'float64' | 'float32';
  optimizer: string;
  schedule: string;
  fraction?: number;
  conjecture?: boolean;
  projectionRadius?: number;
  gradTolerance?: number;
  maxIterations?: number;
  noiseStd?: number;
  outputNoiseStd?: number;
  accountant?: string;
  parameterNormBound?: number;
  featureClip?: number;
  bClip?: number;
  rho?: number;
  bNormBound?: number;
  ptrFraction?: number;
  /** objpert: the release has no guarantee (required: objective perturbation alone identifies the dataset). */
  acceptNoGuarantee?: boolean;
  tune?: number;
  tuneLearningRates?: number[];
  validation?: string;
  metric?: string;
  /** --dataset-size: the number of records, declared without the data (`learners/dataset-size.ts`). */
  datasetSize?: number;
  seed?: number;
  out?: string;
  diagnostics?: string;
  json?: boolean;
}

export const METHODS = ['dpsgd', 'dpgd', 'shuffled', 'output', 'output-sgd', 'objpert', 'amp', 'rgm'] as const;

export interface MethodResult {
  readonly model: LinearModel | OneVsRestModel | undefined;
  readonly privacy: PrivacyReport;
  readonly diagnostics: Record<string, unknown>;
}

export interface MethodContext {
  /** The public schema the data were prepared with (its label says binary, multi-class or numeric). */
  readonly schema: Schema;
  readonly rng: Rng;
  readonly onStep?: (step: number, steps: number) => void;
  /** PUBLIC labelled validation data (--validation), for honest tuning's scores. */
  readonly validation?: LabelledData;
  /** DP-GD's full-pass gradient sums on several threads (same sums bit for bit). */
  readonly gradientSummer?: GradientSummer;
}

/** Ten learning rates log-spaced over [1e-3, 10]: the default public grid of --tune. */
export const DEFAULT_TUNING_GRID: readonly number[] = Array.from({ length: 10 }, (_, k) => Number((1e-3 * 10 ** ((4 * k) / 9)).toPrecision(3)));

function lipschitzOf(flags: TrainFlags, prepared: PreparedData): number {
  const loss = lossByName(flags.loss);
  const constants = glmConstants(loss, { rowNormBound: prepared.rowNormBound, labelBound: prepared.labelBound });
  const clipNorm = flags.clipNorm ?? constants.lipschitz;
  if (!Number.isFinite(clipNorm)) {
    throw new InvalidParameterError('--clip-norm', flags.clipNorm, `given: the ${loss.name} loss has no finite Lipschitz bound on this schema's domain`);
  }
  return clipNorm;
}

/** The public defaults of a method for these flags and this schema (`learners/defaults.ts`). */
function defaultsOf(method: string, flags: TrainFlags, prepared: PreparedData): Record<string, number> {
  const { smoothness } = glmConstants(lossByName(flags.loss), { rowNormBound: prepared.rowNormBound, labelBound: prepared.labelBound });
  return defaultMethodOptions(method, {
    // DP-SGD's defaults (its batch size) use the declared count when there is one, as its q does.
    n: method === 'dpsgd' && flags.datasetSize !== undefined ? flags.datasetSize : prepared.dataset.n,
    d: prepared.dataset.d,
    smoothness,
    ...(flags.epsilon === undefined ? {} : { epsilon: flags.epsilon }),
    ...(flags.regularization === undefined ? {} : { regularization: flags.regularization }),
    ...(flags.learningRate === undefined ? {} : { learningRate: flags.learningRate }),
  });
}

function gradientOptions(flags: TrainFlags, prepared: PreparedData, context: MethodContext): GradientMethodOptions {
  const method = requireGradientMethod(flags.method);
  const defaults = defaultsOf(method, flags, prepared);
  const common = {
    loss: flags.loss,
    clipNorm: lipschitzOf(flags, prepared),
    learningRate: flags.learningRate ?? defaults.learningRate,
    regularization: flags.regularization ?? 0,
    featureNames: prepared.dataset.featureNames,
    ...(context.onStep === undefined ? {} : { onStep: context.onStep }),
  };
  if (method === 'dpgd') {
    return {
      method, ...common, steps: flags.steps ?? defaults.steps,
      ...(flags.precision === undefined ? {} : { precision: flags.precision }),
      ...(context.gradientSummer === undefined ? {} : { gradientSummer: context.gradientSummer }),
    };
  }
  if (method === 'dpsgd') {
    return {
      method,
      ...common,
      batchSize: flags.batchSize ?? defaults.batchSize,
      ...(flags.datasetSize === undefined ? {} : { datasetSize: flags.datasetSize }),
      ...(flags.steps !== undefined ? { steps: flags.steps } : { epochs: flags.epochs ?? defaults.epochs }),
      optimizer: flags.optimizer as Optimizer,
      schedule: flags.schedule as Schedule,
    };
  }
  return {
    method,
    ...common,
    epochs: flags.epochs ?? defaults.epochs,
    fraction: flags.fraction ?? defaults.fraction,
    accountConjecture: Boolean(flags.conjecture),
    rowNormBound: prepared.rowNormBound,
    ...(flags.projectionRadius === undefined ? {} : { projectionRadius: flags.projectionRadius }),
  };
}

function noiseFlags(flags: TrainFlags, context: MethodContext) {
  return { epsilon: flags.epsilon, delta: flags.delta, noiseMultiplier: flags.noiseMultiplier, rng: context.rng };
}

function runTuned(flags: TrainFlags, prepared: PreparedData, context: MethodContext): MethodResult {
  const mean = flags.tune as number;
  if (flags.epsilon === undefined) throw new InvalidParameterError('--epsilon', undefined, 'given with --tune (the noise is calibrated for the whole tuned release)');
  if (context.validation === undefined) {
    throw new InvalidParameterError('--validation', undefined, 'a PUBLIC labelled file (not part of the private data) to score the candidates with --tune');
  }
  if (flags.learningRate !== undefined) throw new InvalidParameterError('--learning-rate', flags.learningRate, 'not given with --tune (use --tune-learning-rates for the candidate grid)');
  if (flags.noiseMultiplier !== undefined) throw new InvalidParameterError('--noise-multiplier', flags.noiseMultiplier, 'not given with --tune (the noise is calibrated from --epsilon for the whole tuned release)');
  const result = tuneGradientMethodHonestly(prepared.dataset, {
    base: gradientOptions(flags, prepared, context),
    learningRates: flags.tuneLearningRates ?? DEFAULT_TUNING_GRID,
    distribution: { kind: 'poisson', mean },
    epsilon: flags.epsilon,
    delta: flags.delta,
    publicValidation: context.validation,
    ...(flags.metric === undefined ? {} : { metric: flags.metric as ScoreMetric }),
    rng: context.rng,
  });
  return {
    model: result.model,
    privacy: result.privacy,
    diagnostics: { ...result.diagnostics, learningRate: result.candidate, validationScore: result.score, noiseMultiplier: result.noiseMultiplier },
  };
}

function fromTrainResult(result: TrainResult): MethodResult {
  return { model: result.model, privacy: result.privacy, diagnostics: { ...result.diagnostics } };
}

/** A multi-class label: one-vs-rest over a gradient method, the K runs composed (`one-vs-rest.ts`). */
function runOneVsRest(flags: TrainFlags, prepared: PreparedData, context: MethodContext, classes: string[]): MethodResult {
  if (!['dpgd', 'dpsgd', 'shuffled'].includes(flags.method)) {
    throw new InvalidParameterError('--method', flags.method, `dpgd, dpsgd or shuffled for a multi-class label (one-vs-rest over ${classes.length} classes)`);
  }
  if (flags.tune !== undefined) throw new InvalidParameterError('--tune', flags.tune, 'not given with a multi-class label (tuning one-vs-rest is not implemented)');
  if (lossByName(flags.loss).labels !== 'signed') throw new InvalidParameterError('--loss', flags.loss, 'a classification loss (logistic, huber or smoothedHinge) for a multi-class label');
  const result = trainOneVsRest(prepared.dataset, {
    classes,
    base: gradientOptions(flags, prepared, context),
    ...(flags.epsilon === undefined ? {} : { epsilon: flags.epsilon }),
    ...(flags.noiseMultiplier === undefined ? {} : { noiseMultiplier: flags.noiseMultiplier }),
    delta: flags.delta,
    rng: context.rng,
  });
  return { model: result.model, privacy: result.privacy, diagnostics: { ...result.diagnostics } };
}

/** The flags each method reads (besides --data, --schema, --label, --loss, --method, --epsilon, --delta, --seed, --out, --diagnostics, --json). */
const TUNING_FLAGS = ['tune', 'tuneLearningRates', 'validation', 'metric'] as const;
const METHOD_FLAGS: Readonly<Record<(typeof METHODS)[number], readonly (keyof TrainFlags)[]>> = {
  dpsgd: ['noiseMultiplier', 'clipNorm', 'steps', 'epochs', 'batchSize', 'learningRate', 'regularization', 'optimizer', 'schedule', ...TUNING_FLAGS],
  dpgd: ['noiseMultiplier', 'clipNorm', 'steps', 'learningRate', 'regularization', 'precision', ...TUNING_FLAGS],
  shuffled: ['noiseMultiplier', 'clipNorm', 'epochs', 'learningRate', 'regularization', 'fraction', 'conjecture', 'projectionRadius', ...TUNING_FLAGS],
  output: ['noiseMultiplier', 'clipNorm', 'regularization', 'gradTolerance', 'maxIterations'],
  'output-sgd': ['noiseMultiplier', 'clipNorm', 'regularization', 'epochs', 'batchSize', 'learningRate'],
  objpert: ['noiseStd', 'regularization', 'accountant', 'parameterNormBound', 'gradTolerance', 'maxIterations', 'acceptNoGuarantee'],
  amp: ['noiseStd', 'regularization', 'accountant', 'clipNorm', 'gradTolerance', 'outputNoiseStd', 'maxIterations'],
  rgm: ['noiseMultiplier', 'steps', 'regularization', 'featureClip', 'bClip', 'rho', 'bNormBound', 'ptrFraction', 'learningRate'],
};

/** The kebab-case flag of a TrainFlags field. */
function flagOf(name: string): string {
  return `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** Whether the user gave a flag (optimizer and schedule have defaults: given means another value). */
function given(flags: TrainFlags, name: keyof TrainFlags): boolean {
  if (name === 'optimizer') return flags.optimizer !== 'sgd';
  if (name === 'schedule') return flags.schedule !== 'constant';
  return flags[name] !== undefined && flags[name] !== false;
}

/**
 * Every check the flags alone decide, before any file is read: a known method, no flag the method
 * would silently ignore (e.g. --accountant pld with dpsgd, whose noise is calibrated and reported by
 * RDP), the flags --tune needs and refuses. Throws InvalidParameterError naming the flag.
 */
export function checkMethodFlags(flags: TrainFlags): void {
  if (!(METHODS as readonly string[]).includes(flags.method)) {
    throw new InvalidParameterError('--method', flags.method, METHODS.map((m) => `'${m}'`).join(', '));
  }
  const method = flags.method as (typeof METHODS)[number];
  if (method === 'objpert' && flags.acceptNoGuarantee !== true) {
    // Decided by the flags alone, before any file is read: the refusal is the same whatever the data.
    throw new InvalidParameterError(
      '--method',
      flags.method,
      'amp (objective perturbation with output noise, 003 Alg. 1: proven), or objpert with --accept-no-guarantee (research only: guarantee none)',
      `objective perturbation alone is not private: ${GRID_INVERSION}`,
    );
  }
  if (flags.tune !== undefined && !['dpgd', 'dpsgd', 'shuffled'].includes(method)) {
    throw new InvalidParameterError('--tune', flags.tune, `used with a gradient method (dpgd, dpsgd, shuffled); ${method}'s own parameters are chosen without touching the data`);
  }
  if (flags.accountant !== undefined && !METHOD_FLAGS[method].includes('accountant')) {
    throw new InvalidParameterError(
      '--accountant',
      flags.accountant,
      `given only with --method objpert or amp (their noise is calibrated by it); --method ${method} is calibrated and reported by its own accountant (see the report's "accountant"; dpfit epsilon --accountant pld --event re-accounts the model's event)`,
    );
  }
  for (const name of Object.keys(flags) as (keyof TrainFlags)[]) {
    if (!ALL_METHOD_FLAGS.has(name) || METHOD_FLAGS[method].includes(name) || !given(flags, name)) continue;
    const users = METHODS.filter((m) => METHOD_FLAGS[m].includes(name));
    throw new InvalidParameterError(flagOf(name), flags[name], `given only with --method ${users.join(', ')} (--method ${method} does not use it)`);
  }
  if (flags.tune === undefined) {
    if (flags.tuneLearningRates !== undefined) throw new InvalidParameterError('--tune-learning-rates', flags.tuneLearningRates, 'given only with --tune (the candidates of honest tuning)');
    if (flags.validation !== undefined) throw new InvalidParameterError('--validation', flags.validation, 'given only with --tune (it scores the tuning candidates)');
    if (flags.metric !== undefined) throw new InvalidParameterError('--metric', flags.metric, 'given only with --tune (it scores the tuning candidates)');
  } else {
    if (flags.epsilon === undefined) throw new InvalidParameterError('--epsilon', undefined, 'given with --tune (the noise is calibrated for the whole tuned release)');
    if (flags.validation === undefined) throw new InvalidParameterError('--validation', undefined, 'given with --tune: a PUBLIC labelled file (not part of the private data) scores the candidates');
    if (flags.learningRate !== undefined) throw new InvalidParameterError('--learning-rate', flags.learningRate, 'not given with --tune (use --tune-learning-rates for the candidate grid)');
    if (flags.noiseMultiplier !== undefined) throw new InvalidParameterError('--noise-multiplier', flags.noiseMultiplier, 'not given with --tune (the noise is calibrated from --epsilon for the whole tuned release)');
  }
  if (flags.accountant !== undefined && flags.accountant !== 'rdp' && flags.accountant !== 'pld') {
    throw new InvalidParameterError('--accountant', flags.accountant, "'rdp' (003 Sec. 5) or 'pld'");
  }
}

const ALL_METHOD_FLAGS: ReadonlySet<string> = new Set(Object.values(METHOD_FLAGS).flat());

/** Runs the method the flags name; throws InvalidParameterError naming the flag for misuse. */
export function runTrainingMethod(flags: TrainFlags, prepared: PreparedData, context: MethodContext): MethodResult {
  checkMethodFlags(flags);
  const label = labelColumn(context.schema);
  if (label.classes !== undefined) return runOneVsRest(flags, prepared, context, label.classes.map(String));
  switch (flags.method) {
    case 'dpgd':
    case 'dpsgd':
    case 'shuffled': {
      if (flags.tune !== undefined) return runTuned(flags, prepared, context);
      return fromTrainResult(trainGradientMethod(prepared.dataset, gradientOptions(flags, prepared, context), noiseFlags(flags, context)));
    }
    case 'output':
      return fromTrainResult(
        trainOutputPerturbation(prepared.dataset, {
          loss: flags.loss,
          ...noiseFlags(flags, context),
          regularization: outputRegularization(flags, prepared),
          ...(flags.clipNorm !== undefined ? { clipNorm: flags.clipNorm } : { rowNormBound: prepared.rowNormBound }),
          ...(flags.gradTolerance === undefined ? {} : { gradTolerance: flags.gradTolerance }),
          ...(flags.maxIterations === undefined ? {} : { maxIterations: flags.maxIterations }),
          featureNames: prepared.dataset.featureNames,
          ...(context.onStep === undefined ? {} : { onStep: context.onStep }),
        }),
      );
    case 'output-sgd': {
      const defaults = defaultsOf('outputSgd', flags, prepared);
      if (flags.regularization !== undefined) requireRegularization(flags);
      return fromTrainResult(
        trainOutputPerturbationSgd(prepared.dataset, {
          loss: flags.loss,
          ...noiseFlags(flags, context),
          regularization: defaults.regularization,
          rowNormBound: prepared.rowNormBound,
          ...(flags.clipNorm !== undefined ? { clipNorm: flags.clipNorm } : {}),
          epochs: flags.epochs ?? defaults.epochs,
          batchSize: flags.batchSize ?? defaults.batchSize,
          learningRate: defaults.learningRate,
          featureNames: prepared.dataset.featureNames,
          ...(context.onStep === undefined ? {} : { onStep: context.onStep }),
        }),
      );
    }
    case 'objpert':
      return fromTrainResult(
        trainObjectivePerturbation(prepared.dataset, {
          loss: flags.loss,
          ...objectivePerturbationFlags(flags, prepared, context),
          labelBound: prepared.labelBound,
          ...(flags.parameterNormBound === undefined ? {} : { parameterNormBound: flags.parameterNormBound }),
          ...(flags.gradTolerance === undefined ? {} : { gradTolerance: flags.gradTolerance }),
          ...(flags.maxIterations === undefined ? {} : { maxIterations: flags.maxIterations }),
          acceptNoGuarantee: flags.acceptNoGuarantee,
        }),
      );
    case 'amp':
      return fromTrainResult(
        trainAmp(prepared.dataset, {
          loss: flags.loss,
          ...objectivePerturbationFlags(flags, prepared, context),
          clipNorm: lipschitzOf(flags, prepared),
          ...(flags.gradTolerance === undefined ? {} : { gradTolerance: flags.gradTolerance }),
          ...(flags.outputNoiseStd === undefined ? {} : { outputNoiseStd: flags.outputNoiseStd }),
          ...(flags.maxIterations === undefined ? {} : { maxIterations: flags.maxIterations }),
        }),
      );
    case 'rgm': {
      if (lossByName(flags.loss).name !== 'squared') {
        throw new InvalidParameterError('--loss', flags.loss, "'linear' with --method rgm (000 Sec. 5 is ridge regression)");
      }
      if (flags.noiseMultiplier !== undefined && flags.noiseMultiplier !== 0) {
        throw new InvalidParameterError('--noise-multiplier', flags.noiseMultiplier, '0 (no test, no noise, NOT private) or absent with --method rgm: its noise is calibrated from --epsilon');
      }
      const featureClip = flags.featureClip ?? prepared.rowNormBound;
      const result = trainRgmGd(prepared.dataset, {
        ...(flags.epsilon === undefined ? {} : { epsilon: flags.epsilon }),
        ...(flags.noiseMultiplier === undefined ? {} : { noiseMultiplier: flags.noiseMultiplier }),
        delta: flags.delta,
        steps: flags.steps ?? defaultsOf('rgm', flags, prepared).steps,
        regularization: flags.regularization ?? 0,
        featureClip,
        bClip: flags.bClip ?? featureClip * prepared.labelBound,
        ...(flags.rho === undefined ? {} : { rho: flags.rho }),
        ...(flags.bNormBound === undefined ? {} : { bNormBound: flags.bNormBound }),
        ...(flags.ptrFraction === undefined ? {} : { ptrEpsilonFraction: flags.ptrFraction }),
        ...(flags.learningRate === undefined ? {} : { learningRate: flags.learningRate }),
        featureNames: prepared.dataset.featureNames,
        rng: context.rng,
      });
      return { model: result.model, privacy: result.privacy, diagnostics: { ...result.diagnostics } };
    }
    default:
      throw new InvalidParameterError('--method', flags.method, METHODS.join(', '));
  }
}

/** Objective perturbation's privacy flags: lambda of the SUM objective (optional with a target), sigma or a target. */
function objectivePerturbationFlags(flags: TrainFlags, prepared: PreparedData, context: MethodContext) {
  if (flags.noiseMultiplier !== undefined) {
    throw new InvalidParameterError('--noise-multiplier', flags.noiseMultiplier, `not used by --method ${flags.method} (give --noise-std, the std of b, or --epsilon)`);
  }
  if (flags.accountant !== undefined && flags.accountant !== 'rdp' && flags.accountant !== 'pld') {
    throw new InvalidParameterError('--accountant', flags.accountant, "'rdp' (003 Sec. 5) or 'pld'");
  }
  return {
    delta: flags.delta,
    ...(flags.epsilon === undefined ? {} : { epsilon: flags.epsilon }),
    ...(flags.noiseStd === undefined ? {} : { noiseStd: flags.noiseStd }),
    ...(flags.regularization === undefined ? {} : { regularization: flags.regularization }),
    ...(flags.accountant === undefined ? {} : { accountant: flags.accountant as 'rdp' | 'pld' }),
    rowNormBound: prepared.rowNormBound,
    featureNames: prepared.dataset.featureNames,
    rng: context.rng,
    ...(context.onStep === undefined ? {} : { onStep: context.onStep }),
  };
}

/** Output perturbation's lambda: --regularization, else sqrt(d) / (n epsilon) (`learners/defaults.ts`). */
function outputRegularization(flags: TrainFlags, prepared: PreparedData): number {
  if (flags.regularization === undefined) return defaultsOf('output', flags, prepared).regularization;
  return requireRegularization(flags);
}

function requireRegularization(flags: TrainFlags): number {
  if (flags.regularization === undefined) {
    throw new InvalidParameterError('--regularization', undefined, `given for --method ${flags.method}: lambda > 0, the strong convexity its sensitivity bound needs`);
  }
  if (!(flags.regularization > 0)) {
    throw new InvalidParameterError('--regularization', flags.regularization, `> 0 for --method ${flags.method} (the strong convexity its sensitivity bound needs)`);
  }
  return flags.regularization;
}
