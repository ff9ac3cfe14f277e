/**
 * `dpfit train --method ...`: from the command's flags to the learner registry
 * (`learners/registry.ts`). The flags become the learner's options (library names) and the run
 * is `train()`'s (or, for a multi-class label and `--tune`, a composite release of the same
 * learner's runs, its options completed by the same public rules): no method is named here.
 * Each method reads only the flags its registry entry lists; every other is refused. The result
 * always has the `{model, privacy, diagnostics}` shape (model undefined when the mechanism
 * released nothing: K = 0 runs in honest tuning, a Propose-Test-Release rejection).
 * `diagnostics` are the data owner's (private): the command writes them only to --diagnostics
 * and to stderr, never into the release.
 */
import type { PreparedData } from '../../data/schema/apply.js';
import { labelColumn } from '../../data/schema/bounds.js';
import type { Schema } from '../../data/schema/types.js';
import { setUpOneVsRest, trainOneVsRest, type OneVsRestModel, type OneVsRestOptions } from '../../learners/composite/one-vs-rest.js';
import { InvalidParameterError } from '../../errors.js';
import type { GradientSummer } from '../../learners/glm/gradient-summer.js';
import type { GradientMethodOptions } from '../../learners/composite/gradient-methods.js';
import { lossByName } from '../../learners/glm/losses/by-name.js';
import type { LinearModel } from '../../learners/models/model.js';
import type { PrivacyReport } from '../../learners/models/privacy-report.js';
import type { AnyLearner } from '../../learners/registry.js';
import { chargedRelease, plannedTrainingRelease, resolvePlannedTraining, resolveTraining, train, type PlannedRelease, type ResolvedTraining, type TrainOptions } from '../../learners/train.js';
import { setUpTuning, tuneGradientMethodHonestly, type TuneGradientMethodOptions } from '../../learners/composite/tune-gradient-method.js';
import type { LabelledData, ScoreMetric } from '../../learners/composite/tuning.js';
import type { Rng } from '../../random/rng.js';
import { checkMethodFlags, learnerOfFlags, methodsWith, optionsFromFlags, orList, TrainFlags } from '../train-flags.js';
import { schemaFeatureNames, schemaLabelBound, schemaRowNormBound } from '../../data/schema/bounds.js';
import { cliName } from '../../learners/learner.js';
import { type LedgerFlags, ledgerPath, openRunLedger, reserveRun } from '../ledger-flags.js';

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

/** The learner's options for this run: the flags', and what the command gives (randomness, progress, parallel sums). */
function runOptions(learner: AnyLearner, flags: TrainFlags, context: MethodContext): TrainOptions {
  const takes = (option: string) => learner.options.includes(option);
  return {
    ...optionsFromFlags(learner, flags),
    rng: context.rng,
    ...(context.onStep === undefined || !takes('onStep') ? {} : { onStep: context.onStep }),
    ...(context.gradientSummer === undefined || !takes('gradientSummer') ? {} : { gradientSummer: context.gradientSummer }),
  } as TrainOptions;
}

/** A composite release's run options: the complete options of the learner without the noise (the composite's). */
function compositeBase(learner: AnyLearner, complete: Record<string, unknown>): GradientMethodOptions {
  const { epsilon: _e, delta: _d, noiseMultiplier: _z, rng: _r, continuousNoise: _c, ...base } = complete;
  return { method: learner.method, ...base } as GradientMethodOptions;
}

/** `--tune`'s release on the resolved run (what `runTuned` trains and its plan reserves): the public candidates and law of K. */
function tuningOptions(learner: AnyLearner, flags: TrainFlags, resolved: ResolvedTraining): Omit<TuneGradientMethodOptions, 'rng' | 'publicValidation' | 'metric'> {
  return {
    base: compositeBase(learner, resolved.options),
    learningRates: flags.tuneLearningRates ?? DEFAULT_TUNING_GRID,
    distribution: { kind: 'poisson', mean: flags.tune as number },
    epsilon: flags.epsilon as number,
    delta: flags.delta,
  };
}

/** `--tune` needs PUBLIC validation data to score its candidates. */
function requireValidation(validation: unknown): void {
  if (validation === undefined) {
    throw new InvalidParameterError('--validation', undefined, 'a PUBLIC labelled file (not part of the private data) to score the candidates with --tune');
  }
}

function runTuned(learner: AnyLearner, flags: TrainFlags, prepared: PreparedData, options: TrainOptions, context: MethodContext): MethodResult {
  requireValidation(context.validation);
  const resolved = resolveTraining(prepared, options, 'dpfit train');
  const result = tuneGradientMethodHonestly(resolved.dataset, {
    ...tuningOptions(learner, flags, resolved),
    publicValidation: context.validation as LabelledData,
    ...(flags.metric === undefined ? {} : { metric: flags.metric as ScoreMetric }),
    rng: context.rng,
  });
  return {
    model: result.model,
    privacy: result.privacy,
    diagnostics: { ...result.diagnostics, learningRate: result.candidate, validationScore: result.score, noiseMultiplier: result.noiseMultiplier },
  };
}

/** The flag rules of a multi-class label (one-vs-rest over a gradient method), checked before anything is read. */
function checkOneVsRestFlags(learner: AnyLearner, flags: TrainFlags, classes: readonly string[]): void {
  if (learner.composite === undefined) {
    throw new InvalidParameterError('--method', flags.method, `${orList(methodsWith((l) => l.composite !== undefined))} for a multi-class label (one-vs-rest over ${classes.length} classes)`);
  }
  if (flags.tune !== undefined) throw new InvalidParameterError('--tune', flags.tune, 'not given with a multi-class label (tuning one-vs-rest is not implemented)');
  if (lossByName(flags.loss).labels !== 'signed') throw new InvalidParameterError('--loss', flags.loss, 'a classification loss (logistic or smoothedHinge) for a multi-class label');
}

/** The one-vs-rest release on the resolved run (what `runOneVsRest` trains and its plan reserves): the schema's classes, the noise of the whole release. */
function oneVsRestOptions(learner: AnyLearner, flags: TrainFlags, resolved: ResolvedTraining, classes: readonly string[]): Omit<OneVsRestOptions, 'rng'> {
  return {
    classes,
    base: compositeBase(learner, resolved.options),
    ...(flags.epsilon === undefined ? {} : { epsilon: flags.epsilon }),
    ...(flags.noiseMultiplier === undefined ? {} : { noiseMultiplier: flags.noiseMultiplier }),
    delta: flags.delta,
  };
}

/** A multi-class label: one-vs-rest over a gradient method, the K runs composed (`one-vs-rest.ts`). */
function runOneVsRest(learner: AnyLearner, flags: TrainFlags, prepared: PreparedData, options: TrainOptions, classes: string[]): MethodResult {
  checkOneVsRestFlags(learner, flags, classes);
  const resolved = resolveTraining(prepared, options, 'dpfit train');
  const result = trainOneVsRest(resolved.dataset, { ...oneVsRestOptions(learner, flags, resolved, classes), rng: options.rng });
  return { model: result.model, privacy: result.privacy, diagnostics: { ...result.diagnostics } };
}

/**
 * The loss against the schema's label, before anything is read. Huber's loss is robust regression
 * on the residual x . theta - y (Huber 1964; `glm/losses/huber.ts`): on a binary label it fitted the
 * class codes 0/1 as numbers, wrote a regression model (`task: 'regression'`) and `predict` and
 * `evaluate` then printed values and an MSE for a label the schema calls binary. It is refused
 * there, naming the classification losses; it stays for a numeric label. (The squared loss stays
 * on a binary label: ridge on the class codes is what `rgm` fits, `000` Sec. 5.)
 */
export function checkLossForLabel(loss: string, schema: Schema): void {
  const label = labelColumn(schema);
  if (loss !== 'huber' || label === undefined || label.positive === undefined) return;
  throw new InvalidParameterError(
    '--loss',
    loss,
    `a classification loss for the binary label '${label.name}': logistic (labels and probabilities) or smoothedHinge; huber is robust regression of a numeric label (a schema label with lower and upper), and would fit the class codes as numbers`,
  );
}

/** Runs the method the flags name through the registry; throws InvalidParameterError naming the flag for misuse. */
export function runTrainingMethod(flags: TrainFlags, prepared: PreparedData, context: MethodContext): MethodResult {
  checkMethodFlags(flags);
  const learner = learnerOfFlags(flags);
  const options = runOptions(learner, flags, context);
  const label = labelColumn(context.schema);
  if (label.classes !== undefined) return runOneVsRest(learner, flags, prepared, options, label.classes.map(String));
  if (flags.tune !== undefined) return runTuned(learner, flags, prepared, options, context);
  const { model, privacy, diagnostics } = train(prepared, options);
  return { model, privacy, diagnostics: { ...diagnostics } };
}

/**
 * What the run the flags describe will release, from public values only (the flags, the schema,
 * the declared --dataset-size), exactly as `runTrainingMethod` (or the push-down, `inDatabase`)
 * will resolve it: a single learner's plan (`Learner.plan`), one-vs-rest's K composed runs (the
 * classes are the schema's), `--tune`'s repeatAndSelect of one run (its public candidates and
 * mean), or DP-GD inside a database (its noise planned for the SQL sum's rounding slack).
 */
export async function plannedTrainingRun(flags: TrainFlags, schema: Schema, rng: Rng, inDatabase: boolean): Promise<PlannedRelease> {
  const learner = learnerOfFlags(flags);
  const options = runOptions(learner, flags, { schema, rng });
  const featureNames = schemaFeatureNames(schema);
  const shape = { d: featureNames.length, featureNames, bounds: { rowNormBound: schemaRowNormBound(schema), labelBound: schemaLabelBound(schema) } };
  const classes = labelColumn(schema).classes?.map(String);
  if (classes !== undefined) checkOneVsRestFlags(learner, flags, classes);
  if (classes === undefined && flags.tune !== undefined) requireValidation(flags.validation);
  if (classes === undefined && flags.tune === undefined && !inDatabase) return plannedTrainingRelease(shape, options, 'dpfit train').planned;
  const resolved = resolvePlannedTraining(shape, options, 'dpfit train');
  const runShape = { n: resolved.size.value ?? resolved.dataset.n, d: resolved.dataset.d };
  const { relation } = learner;
  if (classes !== undefined) return { event: setUpOneVsRest(runShape, oneVsRestOptions(learner, flags, resolved, classes)).event, extraDelta: 0, relation };
  if (flags.tune !== undefined) return { event: setUpTuning(runShape, tuningOptions(learner, flags, resolved)).event, extraDelta: 0, relation };
  const { planDpGdInSql } = await import('../../learners/sql/sql-gradient.js');
  return { event: planDpGdInSql(runShape, resolved.options as unknown as Parameters<typeof planDpGdInSql>[1]), extraDelta: 0, relation };
}

/**
 * `--ledger`: the run's release computed from public values (`plannedTrainingRun`), then reserved
 * in the ledger, all before any data are read; a run over the budget throws `BudgetExceededError`
 * (exit 4). A run known before it starts to have no guarantee (`noGuarantee`: --seed, a suggested
 * schema; objpert's plan says so itself) is charged as a non-private release, which only an
 * infinite budget holds (`chargedRelease`). Undefined without a ledger. The caller checks after
 * training that the release is covered by this one (`requirePlannedRelease`).
 */
export async function reserveTrainingRun(flags: TrainFlags & LedgerFlags & { db?: string }, schema: Schema, rng: Rng, noGuarantee: string | undefined): Promise<PlannedRelease | undefined> {
  const path = ledgerPath(flags); // refuses budget flags without a ledger
  if (path === undefined) return undefined;
  const learner = learnerOfFlags(flags);
  if (learner.datasetSize !== 'unused' && flags.datasetSize === undefined) {
    throw new InvalidParameterError('--dataset-size', undefined, `given with --ledger: the number of records, declared, so that the run's release is known before the data are read (--method ${cliName(learner.method)} uses n)`);
  }
  const inDatabase = flags.db !== undefined && learner.inDatabase === true && labelColumn(schema).classes === undefined;
  const planned = await plannedTrainingRun(flags, schema, rng, inDatabase);
  const charged = chargedRelease(planned, noGuarantee);
  const ledger = await openRunLedger(flags);
  if (ledger === undefined) return undefined;
  const what = `train --method ${cliName(learner.method)}${flags.tune === undefined ? '' : ' --tune'}${flags.out === undefined ? '' : ` --out ${flags.out}`}`;
  const why = noGuarantee ?? (charged.event.kind === 'nonPrivate' && planned.event.kind === 'nonPrivate' ? nonPrivateReason(learner, flags) : undefined);
  try {
    await reserveRun(ledger, 'train', why === undefined ? what : `${what} (charged as non-private: ${why})`, charged, why);
  } finally {
    await ledger.close();
  }
  return charged;
}

/** Why a planned release is non-private: objpert's missing guarantee, or no noise. */
function nonPrivateReason(learner: AnyLearner, flags: TrainFlags): string {
  if (learner.optIn !== undefined) return `--method ${cliName(learner.method)} has no guarantee (${learner.optIn.warning})`;
  return flags.noiseMultiplier === 0 ? '--noise-multiplier 0 adds no noise' : 'the run adds no noise';
}
