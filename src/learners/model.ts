/**
 * Linear models: theta for a GLM loss, predictions and evaluation. A model serialises to JSON with
 * its privacy report (and, when trained from a schema, the schema), so a saved model says what it
 * cost.
 */
import { InvalidParameterError } from '../errors.js';
import { accuracy, logLoss, meanSquaredError, rocAuc, rSquared } from '../eval/metrics.js';
import type { PrivacyReport } from './privacy-report.js';

export type ModelTask = 'classification' | 'regression';

export interface LinearModel {
  readonly format: 'dpfit-linear-model/1';
  readonly loss: { readonly name: string; readonly parameters: Readonly<Record<string, number>> };
  readonly task: ModelTask;
  /** Coefficients, one per feature (an intercept is a feature column of the data). */
  readonly theta: readonly number[];
  readonly featureNames?: readonly string[];
  readonly privacy?: PrivacyReport;
  readonly schema?: unknown;
}

/** The (not yet reported) model of a GLM loss with coefficients theta. */
export function linearModel(loss: { readonly name: string; readonly parameters: Readonly<Record<string, number>>; readonly labels: 'signed' | 'real' }, theta: ArrayLike<number>, featureNames?: readonly string[]): LinearModel {
  return {
    format: 'dpfit-linear-model/1',
    loss: { name: loss.name, parameters: { ...loss.parameters } },
    task: loss.labels === 'signed' ? 'classification' : 'regression',
    theta: Array.from(theta),
    ...(featureNames ? { featureNames: [...featureNames] } : {}),
  };
}

export interface FeatureMatrix {
  readonly x: Float64Array;
  readonly n: number;
  readonly d: number;
}

/** Margins x_i . theta. */
export function predictMargins(model: LinearModel, data: FeatureMatrix): Float64Array {
  if (data.d !== model.theta.length) {
    throw new InvalidParameterError('data.d', data.d, `${model.theta.length} (the model's number of features)`);
  }
  const out = new Float64Array(data.n);
  const { x, d } = data;
  for (let i = 0; i < data.n; i++) {
    let z = 0;
    for (let j = 0, o = i * d; j < d; j++) z += x[o + j] * model.theta[j];
    out[i] = z;
  }
  return out;
}

/**
 * Predictions: for classification the probability of the positive class (logistic link for the
 * logistic loss; for margin losses, 1 when the margin is >= 0 and 0 otherwise), for regression the
 * margin itself.
 */
export function predict(model: LinearModel, data: FeatureMatrix): Float64Array {
  const margins = predictMargins(model, data);
  if (model.task === 'regression') return margins;
  if (model.loss.name === 'logistic') return margins.map((z) => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z))));
  return margins.map((z) => (z >= 0 ? 1 : 0));
}

export interface Metrics {
  readonly n: number;
  readonly accuracy?: number;
  readonly logLoss?: number;
  readonly auc?: number;
  readonly mse?: number;
  readonly r2?: number;
}

/** Utility on labelled data: 0/1 (or -1/+1) labels for classification, real targets for regression. */
export function evaluate(model: LinearModel, data: FeatureMatrix & { readonly y: Float64Array }): Metrics {
  const predictions = predict(model, data);
  if (model.task === 'regression') {
    return { n: data.n, mse: meanSquaredError(predictions, data.y), r2: rSquared(predictions, data.y) };
  }
  const labels = data.y.map((v) => (v > 0 ? 1 : 0));
  let auc: number | undefined;
  const positives = labels.reduce((a, b) => a + b, 0);
  if (positives > 0 && positives < labels.length) auc = rocAuc(predictMargins(model, data), labels);
  return {
    n: data.n,
    accuracy: accuracy(predictions, labels),
    ...(model.loss.name === 'logistic' ? { logLoss: logLoss(predictions, labels) } : {}),
    ...(auc === undefined ? {} : { auc }),
  };
}

/** Reads a model from its JSON form, checking the format. */
export function parseModel(json: unknown): LinearModel {
  const record = json as Partial<LinearModel> | null;
  if (record === null || typeof record !== 'object' || record.format !== 'dpfit-linear-model/1') {
    throw new InvalidParameterError('model', typeof json, "a dpfit model (format 'dpfit-linear-model/1')");
  }
  if (!Array.isArray(record.theta) || !record.theta.every((v) => typeof v === 'number' && Number.isFinite(v))) {
    throw new InvalidParameterError('model.theta', record.theta, 'an array of finite numbers');
  }
  return record as LinearModel;
}
