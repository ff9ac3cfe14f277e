/**
 * Linear models: theta for a GLM loss, predictions and evaluation. A model serialises to JSON with
 * its privacy report (and, when trained from a schema, the schema), so a saved model says what it
 * cost.
 */
import { InvalidParameterError } from '../../errors.js';
import { accuracy, logLoss, meanSquaredError, rocAuc, rSquared } from '../../eval/metrics.js';
import { lossByName, lossParameterNames } from '../glm/losses/by-name.js';
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
  if (model.loss.name === 'logistic') return logisticProbabilities(margins);
  return margins.map((z) => (z >= 0 ? 1 : 0));
}

/** The logistic model's probability of the positive class from its margins (no overflow either side). */
export function logisticProbabilities(margins: Float64Array): Float64Array {
  return margins.map((z) => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z))));
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

/**
 * A number of a model file: JSON has no Infinity, so dpfit writes it as the string "Infinity"
 * (`toJson` in the CLI, `eventToJson`); both forms are read back. NaN is never accepted.
 */
function readNumberish(value: unknown, param: string, expected: string, accept: (v: number) => boolean): number {
  const number = value === 'Infinity' ? Infinity : value === '-Infinity' ? -Infinity : value;
  if (typeof number !== 'number' || Number.isNaN(number) || !accept(number)) throw new InvalidParameterError(param, value, expected);
  return number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const RELATIONS = ['addOrRemoveOne', 'replaceOne', 'relativeToSensitivity'];
const GUARANTEES = ['proven', 'conjecture', 'none'];

/**
 * Checks the shape of a privacy report read from a model file, loosely: the fields dpfit reads
 * must have their types (epsilon >= 0 or "Infinity", delta in [0, 1], a known guarantee, an event
 * object, string warnings, a positive grid), other fields pass through. Numbers written as
 * "Infinity" come back as Infinity. The event itself is only checked to be an object: `parseEvent`
 * (and `dpfit verify`) check it fully.
 */
export function parsePrivacyReport(json: unknown, path = 'model.privacy'): PrivacyReport {
  if (!isRecord(json)) throw new InvalidParameterError(path, json, 'a privacy report (a JSON object)');
  const out: Record<string, unknown> = { ...json };
  const nonNegative = (v: number) => v >= 0;
  out.epsilon = readNumberish(json.epsilon, `${path}.epsilon`, 'a number >= 0 (or "Infinity")', nonNegative);
  out.delta = readNumberish(json.delta, `${path}.delta`, 'a number in [0, 1]', (v) => v >= 0 && v <= 1);
  if (!isRecord(json.event)) throw new InvalidParameterError(`${path}.event`, json.event, 'a DpEvent (a JSON object with a "kind")');
  if (typeof json.guarantee !== 'string' || !GUARANTEES.includes(json.guarantee)) throw new InvalidParameterError(`${path}.guarantee`, json.guarantee, "'proven', 'conjecture' or 'none'");
  for (const field of ['accountant', 'randomness']) {
    if (json[field] !== undefined && typeof json[field] !== 'string') throw new InvalidParameterError(`${path}.${field}`, json[field], 'a string');
  }
  if (json.neighboringRelation !== undefined && !(typeof json.neighboringRelation === 'string' && RELATIONS.includes(json.neighboringRelation))) {
    throw new InvalidParameterError(`${path}.neighboringRelation`, json.neighboringRelation, RELATIONS.map((r) => `'${r}'`).join(', '));
  }
  if (json.warnings !== undefined && !(Array.isArray(json.warnings) && json.warnings.every((w) => typeof w === 'string'))) {
    throw new InvalidParameterError(`${path}.warnings`, json.warnings, 'a list of strings');
  }
  const positiveFinite = (v: number) => v > 0 && Number.isFinite(v);
  if (json.granularity !== undefined) out.granularity = readNumberish(json.granularity, `${path}.granularity`, 'a finite number > 0', positiveFinite);
  if (json.granularities !== undefined) {
    if (!isRecord(json.granularities)) throw new InvalidParameterError(`${path}.granularities`, json.granularities, 'an object of grids');
    out.granularities = Object.fromEntries(
      Object.entries(json.granularities).map(([k, v]) => [k, readNumberish(v, `${path}.granularities.${k}`, 'a finite number > 0', positiveFinite)]),
    );
  }
  // Sub-blocks of numbers (accountants' results, comparisons, RGM's PTR part): every field a number, "Infinity" or a boolean.
  const numbers = (value: unknown, at: string): Record<string, unknown> => {
    if (!isRecord(value)) throw new InvalidParameterError(at, value, 'an object');
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, typeof v === 'boolean' ? v : readNumberish(v, `${at}.${k}`, 'a number (or "Infinity")', () => true)]),
    );
  };
  for (const field of ['rdp', 'pld', 'ptr', 'deltaComponents']) {
    if (json[field] !== undefined) out[field] = numbers(json[field], `${path}.${field}`);
  }
  if (json.comparisons !== undefined) {
    if (!isRecord(json.comparisons)) throw new InvalidParameterError(`${path}.comparisons`, json.comparisons, 'an object');
    out.comparisons = Object.fromEntries(Object.entries(json.comparisons).map(([k, v]) => [k, numbers(v, `${path}.comparisons.${k}`)]));
  }
  return out as unknown as PrivacyReport;
}

/**
 * Reads a model from its JSON form, checking the format, the loss (a known loss with valid
 * parameters, and the task it implies), finite coefficients and the shape of the privacy report (`parsePrivacyReport`). Throws `InvalidParameterError` naming the
 * offending field.
 */
export function parseModel(json: unknown, path = 'model'): LinearModel {
  const record = json as Partial<LinearModel> | null;
  if (record === null || typeof record !== 'object' || record.format !== 'dpfit-linear-model/1') {
    throw new InvalidParameterError(path, typeof json, "a dpfit model (format 'dpfit-linear-model/1')");
  }
  if (!Array.isArray(record.theta) || !record.theta.every((v) => typeof v === 'number' && Number.isFinite(v))) {
    throw new InvalidParameterError(`${path}.theta`, record.theta, 'an array of finite numbers');
  }
  const loss = record.loss as unknown;
  if (!isRecord(loss) || typeof loss.name !== 'string' || !isRecord(loss.parameters)) {
    throw new InvalidParameterError(`${path}.loss`, loss, 'a loss {name, parameters}');
  }
  // Only the parameters the loss takes are read: another one in a file is not an option of the
  // loss but a field dpfit does not write, which `verifyModel` reports as such (and prediction ignores).
  const known = lossParameterNames(loss.name) ?? [];
  const parameters = Object.fromEntries(
    Object.entries(loss.parameters)
      .filter(([k]) => known.includes(k))
      .map(([k, v]) => [k, readNumberish(v, `${path}.loss.parameters.${k}`, 'a number (or "Infinity")', () => true)]),
  );
  // The loss must be one dpfit knows (predictions and metrics depend on it), with valid parameters,
  // and the task must be the loss's: a file cannot make "evil" or a regression logistic.
  let glm;
  try {
    glm = lossByName(loss.name, parameters);
  } catch (error) {
    if (error instanceof InvalidParameterError) {
      throw new InvalidParameterError(error.param === 'loss' ? `${path}.loss.name` : `${path}.loss.parameters`, error.param === 'loss' ? loss.name : loss.parameters, error.expected);
    }
    throw error;
  }
  if (record.task !== 'classification' && record.task !== 'regression') {
    throw new InvalidParameterError(`${path}.task`, record.task, "'classification' or 'regression'");
  }
  const task = glm.labels === 'signed' ? 'classification' : 'regression';
  if (record.task !== task) throw new InvalidParameterError(`${path}.task`, record.task, `'${task}' (the task of the ${loss.name} loss)`);
  if (record.featureNames !== undefined && !(Array.isArray(record.featureNames) && record.featureNames.length === record.theta.length && record.featureNames.every((f) => typeof f === 'string'))) {
    throw new InvalidParameterError(`${path}.featureNames`, record.featureNames, `a list of ${record.theta.length} names (one per coefficient)`);
  }
  // A null privacy block is no block (it claims nothing).
  const { privacy, ...rest } = record as LinearModel;
  return {
    ...rest,
    loss: { name: loss.name, parameters },
    ...(privacy === undefined || privacy === null ? {} : { privacy: parsePrivacyReport(privacy, `${path}.privacy`) }),
  };
}
