/**
 * `train(data, options)`: one entry point for every learner (issue 6's model API). The `method`
 * field picks the learner; the other fields are that learner's options, unchanged. The result is
 * always `{model, privacy, diagnostics}`; `model` is undefined only when the mechanism released
 * nothing (RGM's Propose-Test-Release rejected). `method: 'objpert'` (objective perturbation
 * without output noise) is refused unless `acceptNoGuarantee: true`: its minimiser identifies the
 * dataset, so it has no guarantee (`objective-perturbation-opt-in.ts`); `'amp'` is the private one.
 *
 * `data` is either a plain `{x, y, n, d}` or what `loadDataset` returns. With the latter, the
 * schema's PUBLIC bounds fill what the options leave out, exactly as `dpfit train` does: the
 * row-norm bound, the label bound, the feature names, and the clipping norm (the loss's Lipschitz
 * bound on the schema's domain, `003` Thm. 3.1's L = sup|f'| R). Nothing is read from the data.
 *
 * @example
 * const prepared = await loadDataset('adult.data', adultSchema());
 * const { model, privacy } = train(prepared, { method: 'dpsgd', epsilon: 1, delta: 1e-5, batchSize: 256, epochs: 10, learningRate: 1 });
 * evaluate(model, testSet).accuracy; privacy.epsilon; // <= 1
 */
import { InvalidParameterError } from '../errors.js';
import { trainAmp, type AmpOptions } from './amp.js';
import { trainDpGd, type DpGdOptions, type TrainResult } from './dp-gd.js';
import { trainDpSgd, type DpSgdOptions } from './dp-sgd.js';
import { glmConstants } from './glm/constants.js';
import type { GlmData } from './glm/types.js';
import { withZeroRows } from '../data/dropped-rows.js';
import type { PreparedData } from '../data/schema.js';
import { datasetSizeReport, withDatasetSize } from './dataset-size.js';
import { lossByName } from './losses.js';
import type { LinearModel } from './model.js';
import { trainObjectivePerturbation, type ObjectivePerturbationOptions } from './objective-perturbation.js';
import { trainOutputPerturbation, type OutputPerturbationOptions } from './output-perturbation.js';
import { trainOutputPerturbationSgd, type OutputPerturbationSgdOptions } from './output-perturbation-sgd.js';
import type { PrivacyReport } from './privacy-report.js';
import { trainRgmGd, type RgmGdOptions } from './rgm-gd.js';
import { trainShuffledSgd, type ShuffledSgdOptions } from './shuffled-sgd.js';

/** A learner's options with the fields the schema can supply made optional. */
type SchemaFilled<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;

/** What every method accepts besides its own options. */
interface CommonTrainOptions {
  /**
   * The number of records, declared without looking at the data (`dataset-size.ts`): replace-one
   * learners refuse data that hold another number; DP-SGD computes q and its epochs from it
   * instead of the data's own count; objective perturbation and AMP use no n.
   */
  readonly datasetSize?: number;
}

export type TrainOptions = CommonTrainOptions &
  (
    | ({ readonly method: 'dpgd' } & SchemaFilled<DpGdOptions, 'clipNorm'>)
    | ({ readonly method: 'dpsgd' } & SchemaFilled<DpSgdOptions, 'clipNorm'>)
    | ({ readonly method: 'shuffled' } & SchemaFilled<ShuffledSgdOptions, 'clipNorm'>)
    | ({ readonly method: 'output' } & OutputPerturbationOptions)
    | ({ readonly method: 'outputSgd' } & OutputPerturbationSgdOptions)
    | ({ readonly method: 'objpert' } & ObjectivePerturbationOptions)
    | ({ readonly method: 'amp' } & AmpOptions)
    | ({ readonly method: 'rgm' } & SchemaFilled<RgmGdOptions, 'featureClip' | 'bClip'>)
  );

export type TrainMethod = TrainOptions['method'];

export const TRAIN_METHODS: readonly TrainMethod[] = ['dpgd', 'dpsgd', 'shuffled', 'output', 'outputSgd', 'objpert', 'amp', 'rgm'];

/** What `loadDataset` returns, as far as training needs it: the data and the schema's PUBLIC bounds. */
export interface SchemaBoundedData {
  readonly dataset: GlmData & { readonly featureNames?: readonly string[] };
  /** Public bound on every row's L2 norm, from the schema. */
  readonly rowNormBound: number;
  /** Public bound on |y|, from the schema. */
  readonly labelBound: number;
}

export type TrainData = GlmData | SchemaBoundedData;

export interface TrainOutcome {
  readonly model: LinearModel | undefined;
  readonly privacy: PrivacyReport;
  readonly diagnostics: TrainResult['diagnostics'] | Record<string, unknown>;
}

function isSchemaBounded(data: TrainData): data is SchemaBoundedData {
  return typeof data === 'object' && data !== null && 'dataset' in data && 'rowNormBound' in data;
}

/** What `loadDataset` returned (rows it dropped for missing values become zero rows: `data/dropped-rows.ts`). */
function isPrepared(data: SchemaBoundedData): data is SchemaBoundedData & PreparedData {
  return 'privateDiagnostics' in data && 'zeroRowLabel' in data;
}

/** The clipping norm `dpfit train` uses by default: the loss's Lipschitz bound on the schema's domain. */
export function schemaClipNorm(loss: string | undefined, lossParameters: Record<string, number> | undefined, bounds: Pick<SchemaBoundedData, 'rowNormBound' | 'labelBound'>): number {
  const resolved = lossByName(loss ?? 'logistic', lossParameters);
  const { lipschitz } = glmConstants(resolved, { rowNormBound: bounds.rowNormBound, labelBound: bounds.labelBound });
  if (!Number.isFinite(lipschitz)) {
    throw new InvalidParameterError('clipNorm', undefined, `given: the ${resolved.name} loss has no finite Lipschitz bound on the schema's domain (it needs a bound on the parameters), so the schema cannot fix the clipping norm`);
  }
  return lipschitz;
}

/** The options with the schema's public bounds filled in where the caller left them out (as `dpfit train`). */
function fillFromSchema(options: TrainOptions, data: SchemaBoundedData): TrainOptions {
  const featureNames = 'featureNames' in options && options.featureNames !== undefined ? {} : data.dataset.featureNames === undefined ? {} : { featureNames: data.dataset.featureNames };
  const clip = (o: { readonly clipNorm?: number; readonly loss?: string; readonly lossParameters?: Record<string, number> }) =>
    o.clipNorm !== undefined ? {} : { clipNorm: schemaClipNorm(o.loss, o.lossParameters, data) };
  const rowNorm = (o: { readonly rowNormBound?: number }) => (o.rowNormBound !== undefined ? {} : { rowNormBound: data.rowNormBound });
  switch (options.method) {
    case 'dpgd':
    case 'dpsgd':
    case 'shuffled':
      return { ...options, ...featureNames, ...clip(options) } as TrainOptions;
    case 'output':
      // Either bound gives the Lipschitz constant; the CLI uses the row-norm bound unless a clipping norm is given.
      return { ...options, ...featureNames, ...(options.clipNorm !== undefined ? {} : rowNorm(options)) };
    case 'outputSgd':
      return { ...options, ...featureNames, ...rowNorm(options) };
    case 'objpert':
      return { ...options, ...featureNames, ...rowNorm(options), ...(options.labelBound !== undefined || options.huberThreshold !== undefined ? {} : { labelBound: data.labelBound }) };
    case 'amp':
      return { ...options, ...featureNames, ...rowNorm(options), ...clip(options) };
    case 'rgm': {
      const featureClip = options.featureClip ?? data.rowNormBound;
      return { ...options, ...featureNames, featureClip, bClip: options.bClip ?? featureClip * data.labelBound };
    }
    default:
      return options;
  }
}

/** Refuses, naming the parameter and what to do, an option the learner needs and neither the caller nor a schema gave. */
function requireGiven(options: object, fields: readonly string[], method: string): void {
  for (const field of fields) {
    if ((options as Record<string, unknown>)[field] !== undefined) continue;
    throw new InvalidParameterError(
      field,
      undefined,
      `given for method '${method}' (> 0), or train on what loadDataset returns: the schema's public bounds then fix it, as dpfit train does`,
    );
  }
}

/**
 * The training set `train()` learns from: what `loadDataset` returns with each record it dropped
 * for a missing value as a zero row (`data/dropped-rows.ts`: n must not depend on which rows a
 * schema dropped); any other data as they are. Public rules of n (defaults) must use its n.
 */
export function trainingData(data: TrainData): TrainData {
  return isSchemaBounded(data) && isPrepared(data) ? withZeroRows(data) : data;
}

export function train(data: TrainData, options: TrainOptions): TrainOutcome {
  const bounded = isSchemaBounded(data);
  const rows = trainingData(data);
  const dataset: GlmData = bounded ? (rows as SchemaBoundedData).dataset : (rows as GlmData);
  const size = datasetSizeReport(options.method, dataset.n, options.datasetSize);
  const { model, privacy, diagnostics } = trainMethod(dataset, bounded ? fillFromSchema(options, rows as SchemaBoundedData) : options);
  const stated = withDatasetSize(privacy, size);
  return { model: model === undefined ? undefined : { ...model, privacy: stated }, privacy: stated, diagnostics };
}

function trainMethod(dataset: GlmData, options: TrainOptions): TrainOutcome {
  // Only DP-SGD takes a declared count into its computation; the others have checked it above.
  const { datasetSize, ...rest } = options;
  const o = (options.method === 'dpsgd' ? options : rest) as TrainOptions;
  switch (o.method) {
    case 'dpgd':
      requireGiven(o, ['clipNorm'], o.method);
      return trainDpGd(dataset, o as DpGdOptions);
    case 'dpsgd':
      requireGiven(o, ['clipNorm'], o.method);
      return trainDpSgd(dataset, o as DpSgdOptions);
    case 'shuffled':
      requireGiven(o, ['clipNorm'], o.method);
      return trainShuffledSgd(dataset, o as ShuffledSgdOptions);
    case 'output':
      return trainOutputPerturbation(dataset, o);
    case 'outputSgd':
      return trainOutputPerturbationSgd(dataset, o);
    case 'objpert':
      return trainObjectivePerturbation(dataset, o);
    case 'amp':
      return trainAmp(dataset, o);
    case 'rgm': {
      requireGiven(o, ['featureClip', 'bClip'], o.method);
      const { model, privacy, diagnostics } = trainRgmGd(dataset, o as RgmGdOptions);
      return { model, privacy, diagnostics: { ...diagnostics } };
    }
    default:
      throw new InvalidParameterError('method', (o as { method?: unknown }).method, TRAIN_METHODS.map((m) => `'${m}'`).join(', '));
  }
}
