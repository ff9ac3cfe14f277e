/**
 * `train(data, options)`: one entry point for every learner, the same path
 * `dpfit train` takes. The `method` field picks the learner of the registry (`registry.ts`); the
 * other fields are that learner's options, and every option left out is filled by the same
 * PUBLIC rules as on the command line (`defaults.ts`: functions of the public n, d, the schema's
 * bounds, the loss and epsilon), so `train(prepared, { method: 'dpsgd', epsilon: 1, delta: 1e-5 })`
 * trains what `dpfit train --method dpsgd --epsilon 1 --delta 1e-5` trains (the same model and
 * report for the same seed: test/learners/train-cli-equality.test.ts). An option no learner of that method
 * takes is an error naming it and the closest valid one, never ignored.
 *
 * The result is always `{model, privacy, diagnostics}`; `model` is undefined only when the
 * mechanism released nothing (RGM's Propose-Test-Release rejected). `method: 'objpert'`
 * (objective perturbation without output noise) is refused unless `acceptNoGuarantee: true`: its
 * minimiser identifies the dataset, so it has no guarantee (`objective-perturbation-opt-in.ts`);
 * `'amp'` is the private one. `'rgm'` is ridge regression with `loss: 'squared'` (or a GLM by `000` App. B.2).
 *
 * `data` is either a plain `{x, y, n, d}` or what `loadDataset` returns. With the latter, the
 * schema's PUBLIC bounds fill what the options leave out, exactly as `dpfit train` does: the
 * row-norm bound, the label bound, the feature names, and the clipping norm (the loss's Lipschitz
 * bound on the schema's domain, `003` Thm. 3.1's L = sup|f'| R). Nothing is read from the data.
 * On a plain `{x, y, n, d}` the bounds are the caller's to give (`clipNorm`, ...).
 *
 * @example
 * const prepared = await loadDataset('adult.data', adultSchema());
 * const { model, privacy } = train(prepared, { method: 'dpsgd', epsilon: 1, delta: 1e-5 });
 * evaluate(model, testSet).accuracy; privacy.epsilon; // <= 1
 */
import { withZeroRows } from '../data/dropped-rows.js';
import type { PreparedData } from '../data/schema/apply.js';
import { datasetSizeReport, withDatasetSize } from './dataset-size.js';
import type { GlmData } from './glm/types.js';
import type { AnyLearner } from './registry.js';
import { checkGivenOptions, completeOptions, learnerNamed, publicShape, rejectOtherLearnersOptions, TRAIN_METHODS } from './registry.js';
import type { DatasetSizeReport } from './models/privacy-report.js';
import type { PlannedRelease, SchemaBounds, TrainOutcome } from './learner.js';
import { NON_PRIVATE_EVENT } from '../accounting/events/constructors.js';
import type { Rng } from '../random/rng.js';
import { eventKey } from '../accounting/events/tree.js';
import { parseEvent } from '../accounting/events/json.js';
import { PrivacyBudget } from '../accounting/budget/privacy-budget.js';
import { InvalidParameterError } from '../errors.js';

export { schemaClipNorm } from './learner.js';
export type { PlannedRelease, TrainOutcome } from './learner.js';
export { TRAIN_METHODS };
export type { TrainMethod, TrainOptions } from './registry.js';
import type { TrainOptions } from './registry.js';

/** What `loadDataset` returns, as far as training needs it: the data and the schema's PUBLIC bounds. */
export interface SchemaBoundedData {
  readonly dataset: GlmData & { readonly featureNames?: readonly string[] };
  /** Public bound on every row's L2 norm, from the schema. */
  readonly rowNormBound: number;
  /** Public bound on |y|, from the schema. */
  readonly labelBound: number;
}

export type TrainData = GlmData | SchemaBoundedData;

function isSchemaBounded(data: TrainData): data is SchemaBoundedData {
  return typeof data === 'object' && data !== null && 'dataset' in data && 'rowNormBound' in data;
}

/** What `loadDataset` returned (rows it dropped for missing values become zero rows: `data/dropped-rows.ts`). */
function isPrepared(data: SchemaBoundedData): data is SchemaBoundedData & PreparedData {
  return 'privateDiagnostics' in data && 'zeroRowLabel' in data;
}

/**
 * The training set `train()` learns from: what `loadDataset` returns with each record it dropped
 * for a missing value as a zero row (`data/dropped-rows.ts`: n must not depend on which rows a
 * schema dropped); any other data as they are. Public rules of n (defaults) must use its n.
 */
export function trainingData(data: TrainData): TrainData {
  return isSchemaBounded(data) && isPrepared(data) ? withZeroRows(data) : data;
}

/** A training run made ready: its learner, its rows, its public n, and its complete options. */
export interface ResolvedTraining {
  readonly learner: AnyLearner;
  readonly dataset: GlmData;
  readonly size: DatasetSizeReport;
  /** What `learner.train` takes: the caller's options, the schema's bounds, the public rules. */
  readonly options: Record<string, unknown>;
}

/**
 * Everything `train()` decides before training (`registry.ts`, steps 1-4): the learner, the
 * checks of the options (unknown keys, the learner's rules and opt-in) before anything is read,
 * the public n, and the complete options. `dpfit train`'s composite releases (one-vs-rest,
 * `--tune`) start from here too. `where` names the caller in errors.
 */
export function resolveTraining(data: TrainData, options: TrainOptions, where = 'train()'): ResolvedTraining {
  const learner = learnerNamed((options as { method?: unknown }).method);
  const caller = `${where} with method '${learner.method}'`;
  checkGivenOptions(learner, options, caller);
  const bounded = isSchemaBounded(data);
  const rows = trainingData(data);
  const dataset: GlmData & { readonly featureNames?: readonly string[] } = bounded ? (rows as SchemaBoundedData).dataset : (rows as GlmData);
  const size = datasetSizeReport(learner.method, dataset.n, options.datasetSize);
  const bounds = bounded ? { rowNormBound: (rows as SchemaBoundedData).rowNormBound, labelBound: (rows as SchemaBoundedData).labelBound } : undefined;
  const complete = completeOptions(learner, publicShape(size, dataset, bounds, bounded ? dataset.featureNames : undefined), options);
  rejectOtherLearnersOptions(learner, options, caller);
  return { learner, dataset, size, options: complete };
}

/**
 * What the resolved run will release (`Learner.plan`: its event and the delta it pays outside
 * RDP), from its public n, d and complete options only: every learner of the registry says it
 * before training.
 */
export function plannedRelease(resolved: ResolvedTraining): PlannedRelease {
  const { learner, dataset, size, options } = resolved;
  return { ...learner.plan({ n: size.value ?? dataset.n, d: dataset.d }, options), relation: learner.relation };
}

/**
 * What a budget charges for a planned release: the plan, or a NON-PRIVATE release when the run is
 * known before training to have no guarantee (`noGuarantee` says why: a seeded generator,
 * continuous floating-point noise, a schema read from the private data). A budget's total is a
 * guarantee only while every entry is one, so such a run fits only an infinite budget (epsilon
 * Infinity), and the ledger says what it was.
 */
export function chargedRelease(planned: PlannedRelease, noGuarantee: string | undefined): PlannedRelease {
  return noGuarantee === undefined ? planned : { event: NON_PRIVATE_EVENT, extraDelta: 0, relation: planned.relation };
}

/** Why a run of these options has no guarantee before it starts (a seeded generator, continuous noise), or undefined. */
export function knownNoGuarantee(options: { readonly rng?: unknown; readonly continuousNoise?: unknown }): string | undefined {
  const rng = options.rng as Rng | undefined;
  if (rng !== undefined && rng.secure !== true) return 'a seeded generator: whoever knows or guesses the seed can regenerate the noise';
  if (options.continuousNoise === true) return 'continuous floating-point noise, which floating-point attacks can tell apart';
  return undefined;
}

/** The public shape of a training set that has not been read: n (declared), d, the schema's bounds and feature names. */
export interface PublicTrainingShape {
  /** The declared number of records (`datasetSize`); may be absent for a learner that uses no n. */
  readonly n?: number;
  readonly d: number;
  readonly bounds: SchemaBounds;
  readonly featureNames?: readonly string[];
}

/**
 * What a run of `train(data, options)` will release (`PlannedRelease`), computed BEFORE the data
 * are read, from the public shape alone (what `dpfit train --ledger` reserves): the options are
 * resolved exactly as `train()` resolves them (same checks, same public rules), on a stand-in of
 * the shape that holds no row. The run's n must be public without the data: `options.datasetSize`
 * (a replace-one learner then refuses data holding another count), unless the learner uses no n
 * (objective perturbation, AMP: a sum objective).
 */
export function plannedTrainingRelease(shape: PublicTrainingShape, options: TrainOptions, where = 'train()'): { planned: PlannedRelease; resolved: ResolvedTraining } {
  const resolved = resolvePlannedTraining(shape, options, where);
  return { planned: plannedRelease(resolved), resolved };
}

/**
 * `resolveTraining` on a stand-in of the public shape (no row): the complete options a run on data
 * of this shape will use, for a plan. n is `options.datasetSize` (else `shape.n`); a learner that
 * uses no n is given a placeholder it never reads.
 */
export function resolvePlannedTraining(shape: PublicTrainingShape, options: TrainOptions, where = 'train()'): ResolvedTraining {
  const learner = learnerNamed((options as { method?: unknown }).method);
  const declared = options.datasetSize ?? shape.n;
  if (declared === undefined && learner.datasetSize !== 'unused') {
    throw new InvalidParameterError('datasetSize', undefined, 'given: the number of records, declared, so that the run\'s event is known before the data are read');
  }
  const n = declared ?? 1;
  const standIn: SchemaBoundedData = {
    dataset: { x: new Float64Array(0), y: new Float64Array(0), n, d: shape.d, ...(shape.featureNames === undefined ? {} : { featureNames: shape.featureNames }) },
    rowNormBound: shape.bounds.rowNormBound,
    labelBound: shape.bounds.labelBound,
  };
  return resolveTraining(standIn, (declared === undefined ? options : { ...options, datasetSize: n }) as TrainOptions, where);
}

/** The delta a released report paid outside RDP: RGM's `deltaComponents.ptr`, else 0. */
function releasedExtraDelta(privacy: unknown): number {
  const ptr = (privacy as { deltaComponents?: { ptr?: unknown } } | null)?.deltaComponents?.ptr;
  return typeof ptr === 'number' ? ptr : 0;
}

/**
 * Throws unless the released report is covered by the planned release (a bug: the plan and the
 * learner disagree; nothing is returned): the same event and the same delta outside RDP, or a
 * planned non-private release, which covers anything.
 */
export function requirePlannedRelease(privacy: { readonly event: unknown }, planned: PlannedRelease): void {
  if (planned.event.kind === 'nonPrivate') return;
  let same = false;
  try {
    same = eventKey(parseEvent(JSON.stringify(privacy.event))) === eventKey(planned.event) && releasedExtraDelta(privacy) === planned.extraDelta;
  } catch {
    same = false;
  }
  if (!same) throw new Error(`internal error: the run released another event than the one reserved in its budget (${JSON.stringify(privacy.event)}); nothing is returned, the reservation stays`);
}

/**
 * Trains with the method `options.method` (module comment). With `budget` (a `PrivacyBudget`),
 * the run's release, computed from public values before training (`Learner.plan`; a release
 * known to have no guarantee counts as non-private: `chargedRelease`), is spent from it first: a
 * run that does not fit throws `BudgetExceededError` and trains nothing; a failure after the
 * spend does not give it back (a failure the data decide could tell something).
 */
export function train(data: TrainData, options: TrainOptions & { readonly budget?: PrivacyBudget }): TrainOutcome {
  const { budget, ...rest } = options;
  if (budget === undefined) return trainUnbudgeted(data, rest as TrainOptions);
  if (!(budget instanceof PrivacyBudget)) throw new InvalidParameterError('budget', budget, 'a PrivacyBudget (dpfit/accounting)');
  const resolved = resolveTraining(data, rest as TrainOptions);
  const planned = chargedRelease(plannedRelease(resolved), knownNoGuarantee(resolved.options));
  budget.spend(planned.event, { description: `train() ${resolved.learner.method}`, extraDelta: planned.extraDelta, relation: planned.relation });
  const outcome = run(resolved);
  requirePlannedRelease(outcome.privacy, planned);
  return outcome;
}

function run(resolved: ResolvedTraining): TrainOutcome {
  const { learner, dataset, size, options: complete } = resolved;
  const { model, privacy, diagnostics } = learner.train(dataset, complete);
  const stated = withDatasetSize(privacy, size);
  return { model: model === undefined ? undefined : { ...model, privacy: stated }, privacy: stated, diagnostics };
}

function trainUnbudgeted(data: TrainData, options: TrainOptions): TrainOutcome {
  return run(resolveTraining(data, options));
}
