/**
 * A scikit-learn-like class API for people coming from diffprivlib: `new
 * PrivateLogisticRegression({epsilon, delta}).fit(data)`, then `predict`, `score` and `privacy`.
 * Thin wrappers over `train()` (`train.ts`): the method defaults to `dpfit train`'s (`dpsgd`)
 * with its default hyperparameters, and data loaded by `loadDataset` bring their schema's PUBLIC
 * bounds (row norm, label, hence the clipping norm), as on the command line. Every other option
 * of the chosen learner can be given and is passed through unchanged; any other key is refused
 * when the estimator is made (`clipnorm`: "unknown option clipnorm (did you mean clipNorm?)").
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
import type { GlmData } from './glm/types.js';
import type { Learner, TrainOutcome as LearnerOutcome } from './learner.js';
import { evaluate, predict, type FeatureMatrix, type LinearModel } from './models/model.js';
import { rejectUnknownOptions } from '../validate.js';
import type { PrivacyReport } from './models/privacy-report.js';
import { DEFAULT_TRAIN_METHOD, learnerNamed, trainOptionNames, type CommonTrainOptions, type RegistryEntry } from './registry.js';
import { train, type SchemaBoundedData, type TrainData, type TrainOptions, type TrainOutcome } from './train.js';
import { DEFAULT_DELTA } from './training.js';

/** A predict, score or privacy call on an estimator that has not been fitted (or whose mechanism released nothing). */
function notFitted(message: string): DpfitError {
  return new DpfitError('NOT_FITTED', message);
}

/** The estimator's options with one learner: `train()`'s, delta optional (1e-5), the method optional for the default one. */
type EstimatorOptionsOf<L> = L extends Learner<infer M, infer O, LearnerOutcome>
  ? Partial<O> & CommonTrainOptions & (M extends typeof DEFAULT_TRAIN_METHOD ? { readonly method?: M } : { readonly method: M })
  : never;

/**
 * The estimator's options: the privacy target (delta defaults to the CLI's 1e-5), the method
 * (default `dpsgd`, as `dpfit train`), and any option of that method's learner (`train.ts`); a
 * key that learner does not take is refused when the estimator is made (`new ...`), naming the
 * closest valid one.
 */
export type EstimatorOptions = EstimatorOptionsOf<RegistryEntry>;

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
    const learner = learnerNamed(options.method ?? DEFAULT_TRAIN_METHOD);
    rejectUnknownOptions(options, trainOptionNames(learner), `${new.target.name} with method '${learner.method}'`);
    this.options = { ...options };
  }

  /** The loss this estimator minimises (`glm/losses/by-name.ts`). */
  protected abstract readonly loss: string;

  /** Trains on `data` (a plain `{x, y, n, d}` or what `loadDataset` returns) and returns this. */
  fit(data: TrainData): this {
    // Every option left out is filled by train() with dpfit train's public rules.
    const options = { loss: this.loss, delta: DEFAULT_DELTA, ...this.options, method: this.options.method ?? DEFAULT_TRAIN_METHOD } as TrainOptions;
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
