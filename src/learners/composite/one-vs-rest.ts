/**
 * Multi-class classification by one-vs-rest: for each of the K classes, a binary GLM (class k
 * against the others) trained privately on ALL the rows; a row is predicted as the class whose
 * model gives the largest margin.
 *
 * The budget split. Every binary run reads every row (a changed record changes its features in
 * all K problems and its label in up to two), so the K runs compose: the release is
 * selfCompose(runEvent(z), K), with no parallel composition. The noise multiplier z is
 * calibrated ONCE for that composed event (`calibrateCompositeNoise`): exactly for DP-GD and
 * shuffled SGD (K T Gaussians are one Gaussian), by the RDP accountant for DP-SGD. This is the even
 * split of the budget in the accountant's own currency (each class gets 1/K of the Gaussian
 * precision, or of the RDP curve), which is much tighter than giving each class epsilon/K and
 * delta/K by basic composition. Every class gets the same z and the same event.
 */
import { selfComposeEvent } from '../../accounting/events/constructors.js';
import { InvalidParameterError, dataValueError } from '../../errors.js';
import { defaultRng, type Rng } from '../../random/rng.js';
import { optionNames, rejectUnknownOptions, requireOpenUnit, requirePositive } from '../../validate.js';
import type { GlmData } from '../glm/types.js';
import { rejectUnknownBaseOptions } from './gradient-method-options.js';
import { calibrateCompositeNoise, compositeRunOptions, gradientMethodRelation, gradientRunEvent, trainGradientMethod, type GradientMethodOptions } from './gradient-methods.js';
import { parseModel, parsePrivacyReport, predictMargins, type FeatureMatrix, type LinearModel } from '../models/model.js';
import { nonPrivateReport, privacyReport, type PrivacyReport } from '../models/privacy-report.js';
import { gaussianCompositionEpsilon } from '../../accounting/gaussian/gaussian-composition.js';

export interface OneVsRestModel {
  readonly format: 'dpfit-one-vs-rest-model/1';
  /** Class names; class k is y = k in the data. */
  readonly classes: readonly string[];
  /** models[k]: class k against the rest (their own privacy fields are omitted: see `privacy`). */
  readonly models: readonly LinearModel[];
  readonly featureNames?: readonly string[];
  /** The privacy of the whole release (all K models). */
  readonly privacy?: PrivacyReport;
  readonly schema?: unknown;
}

/** Data whose labels are class indices 0 .. K-1. */
export type MultiClassData = GlmData;

export interface OneVsRestOptions {
  readonly classes: readonly string[];
  /** The binary learner and its options (its loss must be a classification loss). */
  readonly base: GradientMethodOptions;
  /** Target for the WHOLE release (all K models), or an explicit noise multiplier for every run. */
  readonly epsilon?: number;
  readonly noiseMultiplier?: number;
  readonly delta: number;
  readonly rng?: Rng;
}

export interface OneVsRestResult {
  readonly model: OneVsRestModel;
  readonly privacy: PrivacyReport;
  readonly diagnostics: { readonly method: string; readonly classes: number; readonly noiseMultiplier: number; readonly perClass: readonly unknown[] };
}

function checkClassLabels(y: Float64Array, classes: number): void {
  for (let i = 0; i < y.length; i++) {
    const v = y[i];
    if (!(Number.isInteger(v) && v >= 0 && v < classes)) throw dataValueError(`y[${i}]`, `a class index in 0 .. ${classes - 1}`);
  }
  // Classes absent from the data train too: which classes are present is decided by the records, and a class missing from one neighbour only must not change what is released.
}

const ONE_VS_REST_OPTIONS = optionNames<OneVsRestOptions>({ classes: true, base: true, epsilon: true, noiseMultiplier: true, delta: true, rng: true });

export function trainOneVsRest(data: MultiClassData, options: OneVsRestOptions): OneVsRestResult {
  rejectUnknownOptions(options, ONE_VS_REST_OPTIONS, 'trainOneVsRest');
  rejectUnknownBaseOptions(options.base, 'trainOneVsRest');
  const { classes, base } = options;
  if (!Array.isArray(classes) || classes.length < 2) throw new InvalidParameterError('classes', classes, 'a list of at least two class names');
  if (data.n === 0) throw new InvalidParameterError('data.n', 0, 'at least one row (the data set is empty)');
  checkClassLabels(data.y, classes.length);
  if ((options.epsilon === undefined) === (options.noiseMultiplier === undefined)) {
    throw new InvalidParameterError('epsilon', options.epsilon, 'given, or noiseMultiplier given instead (exactly one of the two)');
  }
  const delta = requireOpenUnit('delta', options.delta);
  const k = classes.length;
  const wrap = (run: ReturnType<typeof gradientRunEvent>) => selfComposeEvent(run, k);
  const noiseMultiplier = options.epsilon !== undefined
    ? calibrateCompositeNoise(base, data, wrap, { epsilon: requirePositive('epsilon', options.epsilon), delta }).noiseMultiplier
    : options.noiseMultiplier as number;
  const rng = options.rng ?? defaultRng();
  const models: LinearModel[] = [];
  const perClass: unknown[] = [];
  let lastGranularity: number | undefined;
  for (let c = 0; c < k; c++) {
    const y = new Float64Array(data.n);
    for (let i = 0; i < data.n; i++) y[i] = data.y[i] === c ? 1 : 0;
    const result = trainGradientMethod({ ...data, y }, compositeRunOptions(base), { noiseMultiplier, delta, rng });
    const { privacy: perRun, ...model } = result.model;
    lastGranularity = perRun?.granularity;
    models.push(model);
    perClass.push(result.diagnostics);
  }
  const privacy = noiseMultiplier === 0
    ? nonPrivateReport(rng, gradientMethodRelation(base.method))
    : privacyReport(wrap(gradientRunEvent(base, data, noiseMultiplier)), delta, {
        relation: gradientMethodRelation(base.method),
        rng,
        pld: gaussianCompositionEpsilon,
        granularity: lastGranularity,
      });
  const model: OneVsRestModel = {
    format: 'dpfit-one-vs-rest-model/1',
    classes: [...classes],
    models,
    ...(base.featureNames ? { featureNames: [...base.featureNames] } : {}),
    privacy,
  };
  return { model, privacy, diagnostics: { method: `oneVsRest(${base.method})`, classes: k, noiseMultiplier, perClass } };
}

/** The predicted class index of each row: the class whose model has the largest margin. */
export function predictClasses(model: OneVsRestModel, data: FeatureMatrix): Uint32Array {
  const margins = model.models.map((m) => predictMargins(m, data));
  const out = new Uint32Array(data.n);
  for (let i = 0; i < data.n; i++) {
    let best = 0;
    for (let c = 1; c < margins.length; c++) if (margins[c][i] > margins[best][i]) best = c;
    out[i] = best;
  }
  return out;
}

/** Accuracy of a one-vs-rest model on data labelled with class indices. */
export function evaluateOneVsRest(model: OneVsRestModel, data: FeatureMatrix & { readonly y: Float64Array }): { accuracy: number } {
  const predicted = predictClasses(model, data);
  let correct = 0;
  for (let i = 0; i < data.n; i++) if (predicted[i] === data.y[i]) correct++;
  return { accuracy: correct / data.n };
}

/**
 * Checks a JSON value is a one-vs-rest model: each class model a valid linear model with the same
 * number of features, and the privacy report of the whole release in shape (`parsePrivacyReport`).
 * Throws `InvalidParameterError` naming the offending field.
 */
export function parseOneVsRestModel(json: unknown): OneVsRestModel {
  const record = json as Partial<OneVsRestModel> | null;
  if (record === null || typeof record !== 'object' || record.format !== 'dpfit-one-vs-rest-model/1') {
    throw new InvalidParameterError('model', typeof json, "a dpfit one-vs-rest model (format 'dpfit-one-vs-rest-model/1')");
  }
  if (!Array.isArray(record.classes) || record.classes.length < 2 || !record.classes.every((c) => typeof c === 'string')) {
    throw new InvalidParameterError('model.classes', record.classes, 'a list of at least two class names');
  }
  if (!Array.isArray(record.models) || record.models.length !== record.classes.length) {
    throw new InvalidParameterError('model.models', record.models, `one linear model per class (${record.classes.length})`);
  }
  const models = record.models.map((m, k) => parseModel(m, `model.models[${k}]`));
  const d = models[0].theta.length;
  if (!models.every((m) => m.theta.length === d)) throw new InvalidParameterError('model.models', 'theta lengths differ', 'every class model with the same number of features');
  if (record.featureNames !== undefined && !(Array.isArray(record.featureNames) && record.featureNames.length === d && record.featureNames.every((f) => typeof f === 'string'))) {
    throw new InvalidParameterError('model.featureNames', record.featureNames, `a list of ${d} names (one per coefficient)`);
  }
  // A null privacy block is no block (it claims nothing).
  const { privacy, ...rest } = record as OneVsRestModel;
  return { ...rest, models, ...(privacy === undefined || privacy === null ? {} : { privacy: parsePrivacyReport(privacy, 'model.privacy') }) };
}
