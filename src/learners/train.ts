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
import type { SchemaBounds, TrainOutcome } from './learner.js';
import type { DpEvent } from '../accounting/events/types.js';
import { eventKey } from '../accounting/events/tree.js';
import { parseEvent } from '../accounting/events/json.js';
import { PrivacyBudget } from '../accounting/budget/privacy-budget.js';
import { InvalidParameterError } from '../errors.js';
import { cliName } from './learner.js';

export { schemaClipNorm } from './learner.js';
export type { TrainOutcome } from './learner.js';
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

/** The methods whose event is known before training (`Learner.plan`): those a budget can reserve for. */
export function plannableMethods(): string[] {
  return TRAIN_METHODS.filter((m) => learnerNamed(m).plan !== undefined);
}

/**
 * The event the resolved run will release, from its public n, d and complete options only
 * (`Learner.plan`); refuses, naming `what`, a learner that cannot say it before training.
 */
export function plannedEvent(resolved: ResolvedTraining, what = 'budget'): DpEvent {
  const { learner, dataset, size, options } = resolved;
  if (learner.plan === undefined) {
    throw new InvalidParameterError(
      what,
      `method '${learner.method}'`,
      `used with method ${plannableMethods().map((m) => `'${m}'`).join(' or ')} (the methods whose release (event) is computed before training, from public values; ${cliName(learner.method)}'s is not yet)`,
    );
  }
  return learner.plan({ n: size.value ?? dataset.n, d: dataset.d }, options);
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
 * The event a run of `train(data, options)` will release, computed BEFORE the data are read, from
 * the public shape alone (what `dpfit train --ledger` reserves): the options are resolved exactly
 * as `train()` resolves them (same checks, same public rules), on a stand-in of the shape that
 * holds no row. The run's n must be public without the data: `options.datasetSize` (a replace-one
 * learner then refuses data holding another count).
 */
export function plannedTrainingEvent(shape: PublicTrainingShape, options: TrainOptions, where = 'train()'): { event: DpEvent; resolved: ResolvedTraining } {
  const n = options.datasetSize ?? shape.n;
  if (n === undefined) throw new InvalidParameterError('datasetSize', undefined, 'given: the number of records, declared, so that the run\'s event is known before the data are read');
  const standIn: SchemaBoundedData = {
    dataset: { x: new Float64Array(0), y: new Float64Array(0), n, d: shape.d, ...(shape.featureNames === undefined ? {} : { featureNames: shape.featureNames }) },
    rowNormBound: shape.bounds.rowNormBound,
    labelBound: shape.bounds.labelBound,
  };
  const resolved = resolveTraining(standIn, { ...options, datasetSize: n } as TrainOptions, where);
  return { event: plannedEvent(resolved, where === 'train()' ? 'budget' : '--ledger'), resolved };
}

/** Throws unless the released event is the planned one (a bug: the plan and the learner disagree; nothing is returned). */
export function requirePlannedEvent(released: unknown, planned: DpEvent): void {
  let same = false;
  try {
    same = eventKey(parseEvent(JSON.stringify(released))) === eventKey(planned);
  } catch {
    same = false;
  }
  if (!same) throw new Error(`internal error: the run released another event than the one reserved in its budget (${JSON.stringify(released)}); nothing is returned, the reservation stays`);
}

/**
 * Trains with the method `options.method` (module comment). With `budget` (a `PrivacyBudget`),
 * the run's event, computed from public values before training (`Learner.plan`), is spent from
 * it first: a run that does not fit throws `BudgetExceededError` and trains nothing; a failure
 * after the spend does not give it back (a failure the data decide could tell something).
 */
export function train(data: TrainData, options: TrainOptions & { readonly budget?: PrivacyBudget }): TrainOutcome {
  const { budget, ...rest } = options;
  if (budget === undefined) return trainUnbudgeted(data, rest as TrainOptions);
  if (!(budget instanceof PrivacyBudget)) throw new InvalidParameterError('budget', budget, 'a PrivacyBudget (dpfit/accounting)');
  const resolved = resolveTraining(data, rest as TrainOptions);
  const event = plannedEvent(resolved);
  budget.spend(event, { description: `train() ${resolved.learner.method}` });
  const outcome = run(resolved);
  requirePlannedEvent(outcome.privacy.event, event);
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
