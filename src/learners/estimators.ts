/**
 * A scikit-learn-like class API for people coming from diffprivlib: `new
 * PrivateLogisticRegression({epsilon, delta}).fit(data)`, then `predict`, `score` and `privacy`.
 * Thin wrappers over `train()` (`train.ts`): the method defaults to `dpfit train`'s (`dpsgd`)
 * with its default hyperparameters, and data loaded by `loadDataset` bring their schema's PUBLIC
 * bounds (row norm, label, hence the clipping norm), as on the command line. Every other option
 * of the chosen learner can be given and is passed through unchanged.
 *
 * Unlike diffprivlib, nothing is ever read from the data to fill a bound: a plain `{x, y, n, d}`
 * without a schema needs the bounds in the options (e.g. `clipNorm`), or `train()` refuses. So is
 * `method: 'objpert'` without `acceptNoGuarantee: true` (it is not private; `'amp'` is).
 *
 * @example
 * const train = await loadDataset('adult.data', adultSchema());
 * const clf = new PrivateLogisticRegression({ epsilon: 1, delta: 1e-5 }).fit(train);
 * clf.score(test); clf.privacy.epsilon; // <= 1
 */
import { DpfitError } from '../errors.js';
import { defaultMethodOptions } from './defaults.js';
import { glmConstants } from './glm/constants.js';
import { lossByName } from './losses.js';
import type { GlmData } from './glm/types.js';
import { evaluate, predict, type FeatureMatrix, type LinearModel } from './model.js';
import type { PrivacyReport } from './privacy-report.js';
import { train, trainingData, type SchemaBoundedData, type TrainData, type TrainMethod, type TrainOptions, type TrainOutcome } from './train.js';
import { DEFAULT_DELTA } from './training.js';

/** A predict, score or privacy call on an estimator that has not been fitted (or whose mechanism released nothing). */
function notFitted(message: string): DpfitError {
  return new DpfitError('NOT_FITTED', message);
}

/**
 * The estimator's options: the privacy target (delta defaults to the CLI's 1e-5), the method
 * (default `dpsgd`, as `dpfit train`), and any option of that method's learner (`train.ts`).
 */
export type EstimatorOptions = {
  readonly epsilon?: number;
  readonly delta?: number;
  readonly method?: TrainMethod;
} & Record<string, unknown>;

/**
 * `dpfit train`'s defaults (`defaults.ts`): public rules of n, d, the schema's row-norm bound and
 * the loss's curvature; options the caller gave are kept (a given schedule replaces the default one).
 */
function cliDefaults(method: TrainMethod, data: TrainData, loss: string, options: EstimatorOptions): Record<string, unknown> {
  // The public n: the records of the training set (dropped ones as zero rows), or DP-SGD's declared count.
  const { n: records, d } = labelledOf(trainingData(data));
  const n = method === 'dpsgd' && typeof options.datasetSize === 'number' ? options.datasetSize : records;
  const rowNormBound = 'dataset' in data ? data.rowNormBound : (options.rowNormBound as number | undefined);
  const smoothness = rowNormBound === undefined ? undefined : glmConstants(lossByName(loss, options.lossParameters as Record<string, number> | undefined), { rowNormBound }).smoothness;
  const defaults: Record<string, unknown> = defaultMethodOptions(method, {
    n, d,
    ...(smoothness === undefined ? {} : { smoothness }),
    ...(typeof options.epsilon === 'number' ? { epsilon: options.epsilon } : {}),
    ...(typeof options.regularization === 'number' ? { regularization: options.regularization } : {}),
    ...(typeof options.learningRate === 'number' ? { learningRate: options.learningRate } : {}),
  });
  if (options.steps !== undefined || options.epochs !== undefined) {
    delete defaults.steps;
    delete defaults.epochs;
  }
  if (options.samplingProbability !== undefined) delete defaults.batchSize;
  return defaults;
}

function featuresOf(data: FeatureMatrix | SchemaBoundedData): FeatureMatrix {
  return 'dataset' in data ? data.dataset : data;
}

function labelledOf(data: TrainData): GlmData {
  return 'dataset' in data ? data.dataset : data;
}

abstract class PrivateLinearEstimator {
  readonly options: EstimatorOptions;
  #outcome: TrainOutcome | undefined;

  constructor(options: EstimatorOptions = {}) {
    this.options = { ...options };
  }

  /** The loss this estimator minimises (`losses.ts`). */
  protected abstract readonly loss: string;

  /** Trains on `data` (a plain `{x, y, n, d}` or what `loadDataset` returns) and returns this. */
  fit(data: TrainData): this {
    const method = this.options.method ?? 'dpsgd';
    const options = { ...cliDefaults(method, data, this.loss, this.options), loss: this.loss, delta: DEFAULT_DELTA, ...this.options, method } as unknown as TrainOptions;
    this.#outcome = train(data, options);
    return this;
  }

  /** The released model (parameters only; undefined before fit). Throws when the mechanism released nothing. */
  get model(): LinearModel {
    if (this.#outcome === undefined) throw notFitted('this estimator is not fitted: call fit(data) first');
    if (this.#outcome.model === undefined) {
      const message = (this.#outcome.diagnostics as { message?: unknown }).message;
      throw notFitted(`the mechanism released no model${typeof message === 'string' ? `: ${message}` : ''} (its privacy report is still in .privacy)`);
    }
    return this.#outcome.model;
  }

  /** The privacy report of the release: epsilon, delta, event, neighbouring relation, guarantee, warnings. */
  get privacy(): PrivacyReport {
    if (this.#outcome === undefined) throw notFitted('this estimator is not fitted: call fit(data) first');
    return this.#outcome.privacy;
  }

  /** The data owner's PRIVATE diagnostics of the last fit (computed from the data: never publish them). */
  get diagnostics(): TrainOutcome['diagnostics'] {
    if (this.#outcome === undefined) throw notFitted('this estimator is not fitted: call fit(data) first');
    return this.#outcome.diagnostics;
  }

  abstract predict(data: FeatureMatrix | SchemaBoundedData): Float64Array;
  abstract score(data: TrainData): number;
}

/** Private logistic regression (labels 0/1, or -1/+1); `predict` gives labels 0/1, `score` the accuracy. */
export class PrivateLogisticRegression extends PrivateLinearEstimator {
  protected readonly loss = 'logistic';

  /** P(y = 1 | x) per row. */
  predictProba(data: FeatureMatrix | SchemaBoundedData): Float64Array {
    return predict(this.model, featuresOf(data));
  }

  /** Labels 0/1 (1 when P(y = 1 | x) >= 1/2). */
  predict(data: FeatureMatrix | SchemaBoundedData): Float64Array {
    return this.predictProba(data).map((p) => (p >= 0.5 ? 1 : 0));
  }

  /** Accuracy on labelled data. */
  score(data: TrainData): number {
    return evaluate(this.model, labelledOf(data)).accuracy as number;
  }
}

/** Private linear (least-squares) regression; `predict` gives x . theta, `score` the coefficient of determination R^2. */
export class PrivateLinearRegression extends PrivateLinearEstimator {
  protected readonly loss = 'squared';

  predict(data: FeatureMatrix | SchemaBoundedData): Float64Array {
    return predict(this.model, featuresOf(data));
  }

  /** R^2 on labelled data (as scikit-learn's `score`). */
  score(data: TrainData): number {
    return evaluate(this.model, labelledOf(data)).r2 as number;
  }
}
