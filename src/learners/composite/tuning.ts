/**
 * Honest hyperparameter tuning (Papernot & Steinke 2022, "Hyperparameter Tuning with Renyi
 * Differential Privacy"; used in `003` Sec. 5), and, for comparison only, a grid search that is
 * NOT private.
 *
 * The mechanism (`tuneHonestly`):
 *   Q(D) = pick a candidate uniformly at random from the (public, fixed) list, train it privately
 *          on D and score the trained model; output (model, candidate, score).
 *   Draw K from a public law (Poisson(mu), or the truncated negative binomial D_{eta,gamma} with
 *   mean mu), run Q independently K times and release ONLY the run with the highest score
 *   (nothing when K = 0). K itself, the other runs, their scores and their diagnostics are not
 *   released.
 * Papernot & Steinke's Thm. 2 (truncated negative binomial) and Thm. 6 (Poisson) bound the RDP of
 * this release from Q's RDP curve: the event is repeatAndSelect(perRunEvent, mu, eta), with
 * eta = Infinity for Poisson (accounted by `rdp/repeat-and-select.ts`).
 *
 * What makes it honest — the two conditions the theorems need, and how they are enforced:
 *  1. Q must be ONE mechanism with one privacy bound, whichever candidate it picks. The caller
 *     declares `perRunEvent` BEFORE any data is touched; every run's reported event must equal it
 *     exactly (and hold under the same neighbouring relation), else the tuning stops with an
 *     error. Since candidates are picked at random, the declared event must be what every
 *     candidate releases: calibrate each candidate to the same event (e.g. fix the steps and
 *     sampling rate across candidates, tune the learning rate or clipping norm).
 *  2. The score must be part of Q's output without extra leakage. The default scorer evaluates
 *     the model on `publicValidation`, data the caller asserts is PUBLIC (not part of D): the
 *     score is then a post-processing of the private model and costs nothing. We do NOT score on
 *     a held-out split of the private data by default: an exact held-out accuracy is a function of
 *     private records that no event in the run covers. A caller who wants a private-data score
 *     must make it private inside the run (e.g. add noise to it) and include that release in
 *     `perRunEvent` (e.g. compose(trainEvent, laplace(...))); `train` then returns
 *     `{result, score}` and the score is trusted to be covered by the declared event.
 */
import type { DpEvent } from '../../accounting/events/types.js';
import { repeatAndSelectEvent } from '../../accounting/events/constructors.js';
import { eventToJson } from '../../accounting/events/json.js';
import { neighboringRelationOf } from '../../accounting/neighboring.js';
import { truncatedNegativeBinomialGamma } from '../../accounting/rdp/repeat-and-select.js';
import { InvalidParameterError } from '../../errors.js';
import { samplePoisson } from '../../random/discrete.js';
import { defaultRng, uniformInt, type Rng } from '../../random/rng.js';
import { sampleTruncatedNegativeBinomial } from '../../random/truncated-negative-binomial.js';
import { optionNames, rejectUnknownOptions, requireOpenUnit, requirePositive } from '../../validate.js';
import type { GlmData } from '../glm/types.js';
import { evaluate, type FeatureMatrix, type LinearModel } from '../models/model.js';
import { privacyReport, type PrivacyReport } from '../models/privacy-report.js';
import type { TrainResult } from '../training.js';

/** The law of the number of runs K (public; chosen before seeing data). */
export type RunCountDistribution =
  | { readonly kind: 'poisson'; readonly mean: number }
  | { readonly kind: 'truncatedNegativeBinomial'; readonly mean: number; readonly shape: number };

export interface ScoredRun {
  readonly result: TrainResult;
  /** Higher is better. Must be covered by the run's event (see the module comment). */
  readonly score: number;
}

/** Trains one candidate privately (its `privacy.event` must equal the declared per-run event). */
export type CandidateTrainer<C> = (data: GlmData, candidate: C, rng: Rng) => TrainResult | ScoredRun;

export type ScoreMetric = 'accuracy' | 'auc' | 'logLoss' | 'mse' | 'r2';

export type LabelledData = FeatureMatrix & { readonly y: Float64Array };

export interface ScoringOptions {
  /** PUBLIC validation data (not part of the private data set) for the default scorer. */
  readonly publicValidation?: LabelledData;
  /** Metric of the default scorer (default accuracy for classification, r2 for regression). */
  readonly metric?: ScoreMetric;
}

export interface HonestTuningOptions<C> extends ScoringOptions {
  readonly candidates: readonly C[];
  readonly train: CandidateTrainer<C>;
  /** The event every run releases, declared before any run (checked against every run). */
  readonly perRunEvent: DpEvent;
  /** The grid of every run's noise, declared with perRunEvent (undefined: floating-point noise, no guarantee). */
  readonly granularity?: number;
  readonly distribution: RunCountDistribution;
  /** delta at which the tuned release is accounted. */
  readonly delta: number;
  /** Needed only when perRunEvent is relation-free (e.g. a bare Gaussian composition). */
  readonly relation?: 'replaceOne' | 'addOrRemoveOne';
  readonly rng?: Rng;
}

export interface TuningResult<C> {
  /** The best run's model (its `privacy` is the tuning's report), or undefined when K = 0. */
  readonly model: LinearModel | undefined;
  readonly candidate: C | undefined;
  readonly score: number | undefined;
  /** The privacy of the whole tuning (repeatAndSelect), the headline. */
  readonly privacy: PrivacyReport;
  /** Public quantities only: K, the other runs and their scores are NOT released. */
  readonly diagnostics: {
    readonly method: 'honestTuning';
    readonly distribution: RunCountDistribution;
    readonly candidates: number;
    readonly released: boolean;
    readonly message: string;
  };
}

/** Default scorer: a metric of the model on PUBLIC validation data (higher is better). */
export function scoreOnPublicData(model: LinearModel, validation: LabelledData, metric?: ScoreMetric): number {
  const chosen = metric ?? (model.task === 'regression' ? 'r2' : 'accuracy');
  const metrics = evaluate(model, validation);
  const value = metrics[chosen];
  if (value === undefined) throw new InvalidParameterError('metric', chosen, `a metric available for this model (${Object.keys(metrics).join(', ')})`);
  return chosen === 'logLoss' || chosen === 'mse' ? -value : value;
}

function isScoredRun(run: TrainResult | ScoredRun): run is ScoredRun {
  return (run as ScoredRun).result !== undefined && typeof (run as ScoredRun).score === 'number';
}

function scoreRun(run: TrainResult | ScoredRun, options: ScoringOptions): { result: TrainResult; score: number } {
  if (isScoredRun(run)) return { result: run.result, score: run.score };
  if (options.publicValidation === undefined) {
    throw new InvalidParameterError('publicValidation', undefined, 'PUBLIC validation data for the default scorer, or a train function returning {result, score}');
  }
  return { result: run, score: scoreOnPublicData(run.model, options.publicValidation, options.metric) };
}

/** JSON with sorted keys, so equal events compare equal whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as Record<string, unknown>)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

function checkDistribution(distribution: RunCountDistribution): { mean: number; shape: number } {
  if (distribution === null || typeof distribution !== 'object') throw new InvalidParameterError('distribution', distribution, "{kind: 'poisson', mean} or {kind: 'truncatedNegativeBinomial', mean, shape}");
  if (distribution.kind === 'poisson') return { mean: requirePositive('distribution.mean', distribution.mean), shape: Infinity };
  if (distribution.kind === 'truncatedNegativeBinomial') {
    const { mean, shape } = distribution;
    if (!(typeof mean === 'number' && mean > 1 && Number.isFinite(mean))) throw new InvalidParameterError('distribution.mean', mean, '> 1 (K >= 1 under the truncated negative binomial)');
    if (!(typeof shape === 'number' && Number.isFinite(shape) && shape >= 0)) throw new InvalidParameterError('distribution.shape', shape, 'a finite number >= 0 (eta; use poisson for eta = Infinity)');
    return { mean, shape };
  }
  throw new InvalidParameterError('distribution.kind', (distribution as { kind: unknown }).kind, "'poisson' or 'truncatedNegativeBinomial'");
}

/** Draws the number of runs K from the declared law. */
export function sampleRunCount(rng: Rng, distribution: RunCountDistribution): number {
  const { mean, shape } = checkDistribution(distribution);
  if (shape === Infinity) return samplePoisson(rng, mean);
  return sampleTruncatedNegativeBinomial(rng, truncatedNegativeBinomialGamma(mean, shape), shape);
}

const HONEST_TUNING_OPTIONS = optionNames<HonestTuningOptions<unknown>>({ candidates: true, train: true, perRunEvent: true, granularity: true, distribution: true, delta: true, relation: true, rng: true, publicValidation: true, metric: true });

export function tuneHonestly<C>(data: GlmData, options: HonestTuningOptions<C>): TuningResult<C> {
  rejectUnknownOptions(options, HONEST_TUNING_OPTIONS, 'tuneHonestly');
  const { candidates, train, perRunEvent, distribution } = options;
  if (!Array.isArray(candidates) || candidates.length === 0) throw new InvalidParameterError('candidates', candidates, 'a non-empty list of candidate settings');
  if (typeof train !== 'function') throw new InvalidParameterError('train', train, 'a function (data, candidate, rng) => TrainResult | {result, score}');
  const { mean, shape } = checkDistribution(distribution);
  const delta = requireOpenUnit('delta', options.delta);
  if (perRunEvent === undefined || perRunEvent.kind === 'nonPrivate') {
    throw new InvalidParameterError('perRunEvent', perRunEvent?.kind, 'the (private) event every run releases, declared before tuning');
  }
  const eventRelation = neighboringRelationOf(perRunEvent);
  let relation: 'replaceOne' | 'addOrRemoveOne';
  if (eventRelation === 'relativeToSensitivity') {
    if (options.relation === undefined) throw new InvalidParameterError('relation', undefined, "'replaceOne' or 'addOrRemoveOne' (perRunEvent is relation-free)");
    relation = options.relation;
  } else {
    if (options.relation !== undefined && options.relation !== eventRelation) throw new InvalidParameterError('relation', options.relation, `'${eventRelation}' (the relation of perRunEvent)`);
    relation = eventRelation;
  }
  if (options.publicValidation === undefined && options.metric !== undefined) {
    throw new InvalidParameterError('publicValidation', undefined, 'given when a metric is given');
  }
  const rng = options.rng ?? defaultRng();
  const declared = canonical(eventToJson(perRunEvent));
  const tuningEvent = repeatAndSelectEvent(perRunEvent, mean, shape);

  const runs = sampleRunCount(rng, distribution);
  let best: { result: TrainResult; score: number; candidate: C } | undefined;
  for (let r = 0; r < runs; r++) {
    const candidate = candidates[uniformInt(rng, candidates.length)];
    const { result, score } = scoreRun(train(data, candidate, rng), options);
    if (canonical(result.privacy.event) !== declared) {
      throw new InvalidParameterError(
        'perRunEvent',
        result.privacy.event,
        `the event every run releases; a run released ${canonical(result.privacy.event)} but ${declared} was declared (honest tuning needs one event for every candidate)`,
      );
    }
    if (result.privacy.granularity !== options.granularity) {
      throw new InvalidParameterError('granularity', result.privacy.granularity, `${options.granularity} (the grid declared for every run's noise)`);
    }
    if (result.privacy.neighboringRelation !== relation) {
      throw new InvalidParameterError('relation', result.privacy.neighboringRelation, `'${relation}' (every run must hold under the declared relation)`);
    }
    const s = Number.isNaN(score) ? -Infinity : score;
    if (best === undefined || s > best.score) best = { result, score: s, candidate };
  }

  const warnings =
    best === undefined
      ? ['K = 0 runs were drawn: nothing is released (this outcome is part of the mechanism and is covered by the reported epsilon)']
      : [];
  const privacy = privacyReport(tuningEvent, delta, { relation, rng, warnings, granularity: options.granularity });
  const diagnostics = {
    method: 'honestTuning' as const,
    distribution,
    candidates: candidates.length,
    released: best !== undefined,
    message:
      best === undefined
        ? 'no model: the random number of runs K was 0 (Poisson)'
        : 'released the best of a random number of private runs; the number of runs, the other runs and their scores are not released',
  };
  if (best === undefined) return { model: undefined, candidate: undefined, score: undefined, privacy, diagnostics };
  return { model: { ...best.result.model, privacy }, candidate: best.candidate, score: best.score, privacy, diagnostics };
}

/** The label of a release that carries no privacy guarantee. */
export interface NotPrivateLabel {
  readonly private: false;
  readonly reason: 'grid search over private data leaks';
}

export interface GridSearchResult<C> {
  readonly model: LinearModel;
  readonly candidate: C;
  readonly score: number;
  /** Every candidate's score (this alone leaks the data). */
  readonly scores: readonly { readonly candidate: C; readonly score: number }[];
  readonly privacy: NotPrivateLabel;
}

export interface GridSearchOptions<C> extends ScoringOptions {
  readonly train: CandidateTrainer<C>;
  readonly rng?: Rng;
}

const GRID_SEARCH_OPTIONS = optionNames<GridSearchOptions<unknown>>({ train: true, rng: true, publicValidation: true, metric: true });

/**
 * NOT PRIVATE — for comparison only. Trains every candidate and returns the best: the choice (and
 * the scores) depend on the data through all runs, and no theorem bounds the result's privacy
 * (Papernot & Steinke 2022, Sec. 1 give an example where it fails badly). The report says so.
 */
export function gridSearchNotPrivate<C>(data: GlmData, candidates: readonly C[], options: GridSearchOptions<C>): GridSearchResult<C> {
  rejectUnknownOptions(options, GRID_SEARCH_OPTIONS, 'gridSearchNotPrivate');
  if (!Array.isArray(candidates) || candidates.length === 0) throw new InvalidParameterError('candidates', candidates, 'a non-empty list of candidate settings');
  const rng = options.rng ?? defaultRng();
  const scores: { candidate: C; score: number }[] = [];
  let best: { model: LinearModel; candidate: C; score: number } | undefined;
  for (const candidate of candidates) {
    const { result, score } = scoreRun(options.train(data, candidate, rng), options);
    const s = Number.isNaN(score) ? -Infinity : score;
    scores.push({ candidate, score: s });
    if (best === undefined || s > best.score) best = { model: result.model, candidate, score: s };
  }
  const label: NotPrivateLabel = Object.freeze({ private: false, reason: 'grid search over private data leaks' });
  const found = best as { model: LinearModel; candidate: C; score: number };
  const { privacy: _dropped, ...model } = found.model;
  return { model, candidate: found.candidate, score: found.score, scores, privacy: label };
}
