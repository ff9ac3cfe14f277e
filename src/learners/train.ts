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
import type { TrainOutcome } from './learner.js';

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

export function train(data: TrainData, options: TrainOptions): TrainOutcome {
  const { learner, dataset, size, options: complete } = resolveTraining(data, options);
  const { model, privacy, diagnostics } = learner.train(dataset, complete);
  const stated = withDatasetSize(privacy, size);
  return { model: model === undefined ? undefined : { ...model, privacy: stated }, privacy: stated, diagnostics };
}
