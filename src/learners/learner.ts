/**
 * What the learner registry (`registry.ts`) holds for each learner: one `Learner` per method, in
 * `*-learner.ts` in its family folder, is everything `train()`, the estimators and `dpfit train` know about it —
 * its name, its neighbouring relation, which n its released values may depend on, the options it
 * takes and the public rules that fill the ones left out, its train function, the flags of
 * `dpfit train` it reads, its work rule for the CLI's limits, its opt-in, and what composite
 * releases (tuning, one-vs-rest), out-of-core and in-database training need from it.
 *
 * Defaults are PUBLIC rules (docs/design.md, "Data"; `defaults.ts`): functions of the public n
 * (`dataset-size.ts`), d, the schema's declared bounds, the loss and epsilon, never of the data.
 * A learner whose release keeps n private (a sum objective) is given no n at all.
 */
import type { DpEvent } from '../accounting/events/types.js';
import { InvalidParameterError } from '../errors.js';
import type { DefaultsShape } from './defaults.js';
import type { TrainResult } from './training.js';
import { glmConstants } from './glm/constants.js';
import type { GlmData } from './glm/types.js';
import { lossByName } from './glm/losses/by-name.js';
import type { OptionNames } from '../validate.js';
import type { LinearModel } from './models/model.js';
import type { PrivacyReport } from './models/privacy-report.js';
import type { RowSource } from '../data/row-source.js';

/** What every learner returns: `model` is undefined only when the mechanism released nothing. */
export interface TrainOutcome {
  readonly model: LinearModel | undefined;
  readonly privacy: PrivacyReport;
  readonly diagnostics: TrainResult['diagnostics'] | Record<string, unknown>;
}

/** The schema's PUBLIC bounds (`loadDataset`'s `rowNormBound` and `labelBound`). */
export interface SchemaBounds {
  /** Public bound on every row's L2 norm. */
  readonly rowNormBound: number;
  /** Public bound on |y|. */
  readonly labelBound: number;
}

/** What the public rules may read: never the data. */
export interface PublicShape {
  /**
   * The public n (`dataset-size.ts`): the records read (dropped ones as zero rows) for replace-one
   * learners, DP-SGD's declared `datasetSize` when there is one; absent for a learner whose release
   * keeps n private (sum objective), so that no rule of it can read n.
   */
  readonly n?: number;
  readonly d: number;
  /** The schema's bounds, when the data come with a schema (`loadDataset`, `dpfit train`). */
  readonly bounds?: SchemaBounds;
  readonly featureNames?: readonly string[];
}

/** A learner's options as a caller gives them: every field may be left out but the target delta. */
export type Given<O> = Partial<O> & { readonly delta: number };

/**
 * A learner's options as the registry lists them: the names of its train function's strict
 * option list (`optionNames<O>` in its module, checked by the compiler against `O`), without
 * `method`, which `train()` holds itself.
 */
export function learnerOptions<O>(names: OptionNames<O>): readonly (Exclude<keyof O, 'method'> & string)[] {
  return Object.keys(names).filter((name) => name !== 'method') as (Exclude<keyof O, 'method'> & string)[];
}

/**
 * A rule on one option's value, decided by the options alone (checked before anything is read,
 * by `train()` on the options and by `dpfit train` on its flags): `regularization > 0` for
 * output perturbation, the linear loss for RGM.
 */
export interface OptionRule {
  readonly option: string;
  /** The value the learner uses when the option is not given; without one, an absent option passes. */
  readonly absent?: unknown;
  readonly holds: (value: unknown) => boolean;
  /** The valid range, as errors say it ("> 0"). */
  readonly expected: string;
  /** Why, in a few words. */
  readonly why: string;
}

/** An option that must be exactly `true` for the learner to run at all (objpert's `acceptNoGuarantee`). */
export interface OptIn {
  readonly option: string;
  /** Throws `InvalidParameterError` naming the option unless `value` is `true` (the library's words). */
  readonly check: (value: unknown) => void;
  /** `dpfit train`'s refusal of the method without its flag (`--method must be EXPECTED, got ... (DETAIL)`). */
  readonly refusal: { readonly expected: string; readonly detail: string };
  /** Said on stderr when the CLI runs it. */
  readonly warning: string;
}

/** One count of a run's work for `cli/limits.ts`: the option that sets it, its value and how it was counted. */
export interface WorkCount {
  readonly count: number;
  readonly option: string;
  readonly value: number | undefined;
  readonly rule: string;
}

/** One run's optimiser steps and per-example gradient evaluations (absent: the run bounds itself). */
export interface RunWork {
  readonly steps?: WorkCount;
  readonly gradients?: WorkCount;
}

/** The options of a run inside a composite release: the noise is the composite's. */
export type WithoutNoise<O> = Omit<O, 'epsilon' | 'delta' | 'noiseMultiplier' | 'rng' | 'continuousNoise'>;

/** What a composite release (honest tuning, one-vs-rest) needs of a learner (`gradient-methods.ts`). */
export interface CompositeRuns<O> {
  /**
   * What one run releases with noise multiplier z on data of this shape (n public for these
   * learners): its event and the grid of its noise; `continuous` gives the floating-point
   * mechanism's event, which calibrations solve for.
   */
  runNoise(options: WithoutNoise<O>, shape: { readonly n: number; readonly d: number }, noiseMultiplier: number, continuous: boolean): { event: DpEvent; granularity?: number };
  /** The options of a run whose event is `runNoise`'s (shuffled SGD: the plain iteration, not the last-iterate one). */
  runOptions?(options: WithoutNoise<O>): WithoutNoise<O>;
}

/** One learner of the registry (module comment). */
export interface Learner<M extends string, O extends { readonly delta: number }, R extends TrainOutcome = TrainOutcome> {
  /** Its one name: `train({method})`; `dpfit train --method` takes its kebab-case (`cliName`). */
  readonly method: M;
  /** What `dpfit train --help` says it releases (after its name in `--method`), in words, without paper tags. */
  readonly summary: string;
  /** Where its algorithm and guarantee come from (papers by tag, e.g. `003 Alg. 1`): `train --help`'s references. */
  readonly reference: string;
  /** The neighbouring relation its guarantee holds under. */
  readonly relation: 'replaceOne' | 'addOrRemoveOne';
  /**
   * Which n its released values may depend on (`dataset-size.ts`): 'records' (replace-one: the
   * records read are public by the relation), 'declaredOrRecords' (DP-SGD: a declared
   * `datasetSize`, else the records read, treated as public), 'unused' (a sum objective: none).
   */
  readonly datasetSize: 'records' | 'declaredOrRecords' | 'unused';
  /**
   * Event kinds only its releases hold (in any composite of them), by which `verifyModel` knows
   * an add/remove-one release or one that uses no n (`poissonSampled`: DP-SGD).
   */
  readonly eventKinds?: readonly DpEvent['kind'][];
  /** Every option it takes (`train()` adds `method` and `datasetSize`), from its module's strict list (`learnerOptions`). */
  readonly options: readonly (keyof O & string)[];
  /** Options nothing public fills on data without a schema: refused by name when missing. */
  readonly required?: readonly (keyof O & string)[];
  /** Rules on given values, decided by the options alone. */
  readonly rules?: readonly OptionRule[];
  readonly optIn?: OptIn;
  /**
   * The options the public rules fill (`defaults.ts`) where the caller gave none: from n (absent
   * for a sum objective), d, the smoothness of the loss on the public row-norm bound (absent
   * without one), epsilon, and what the caller gave (`given` wins over every rule).
   */
  defaults(shape: DefaultsShape, given: Partial<O>): Partial<O>;
  /** What the schema's public bounds fill where the caller gave nothing (`dpfit train`'s defaults). */
  fromBounds(bounds: SchemaBounds, given: Partial<O>): Partial<O>;
  /** Trains on the data with complete options. */
  train(data: GlmData, options: O): R;
  /** One run's work from the given options and the public n (`cli/limits.ts`); absent n: nothing may use it. */
  work(given: Partial<O>, n: number | undefined): RunWork;
  /** The `dpfit train` flags it reads (commander attribute names) and the option a flag sets when it is not its own name. */
  readonly cli: { readonly flags: readonly string[]; readonly flagOptions?: Readonly<Record<string, keyof O & string>> };
  /**
   * The event a run with these complete options releases on data of this public shape, from
   * public quantities only (the same set-up `train` runs): what a budget (`train()`'s `budget`,
   * `dpfit train --ledger`) reserves before the data are read. Absent: the learner cannot say
   * yet, and a budgeted run of it is refused.
   */
  plan?(shape: { readonly n: number; readonly d: number }, options: O): DpEvent;
  /** Gradient learners: composite releases (honest tuning, one-vs-rest) of its runs. */
  readonly composite?: CompositeRuns<O>;
  /** Training on rows streamed from a source too large for memory (`gradient/streamed.ts`), the same release as in memory. */
  readonly outOfCore?: (source: RowSource, options: O) => Promise<TrainResult>;
  /** Its gradient sums can run inside a database (`sql-gradient.ts`: DP-GD's push-down). */
  readonly inDatabase?: boolean;
}

/** A learner whose runs compose into tuned and one-vs-rest releases (DP-GD, DP-SGD, shuffled SGD). */
export type GradientLearner<M extends string, O extends { readonly delta: number }> = Learner<M, O, TrainResult> & { readonly composite: CompositeRuns<O> };

/** `dpfit train --method`'s name for a library method name: its kebab-case (`outputSgd` -> `output-sgd`). */
export function cliName(method: string): string {
  return method.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** The public n a rule needs; absent only for a learner whose release keeps n private, whose rules never ask. */
export function publicCount(shape: DefaultsShape): number {
  if (shape.n === undefined) throw new Error('a public rule asked for n, which this learner\'s release keeps private');
  return shape.n;
}

/** The clipping norm `dpfit train` uses by default: the loss's Lipschitz bound on the schema's domain (`003` Thm. 3.1's L = sup|f'| R). */
export function schemaClipNorm(loss: string | undefined, lossParameters: Record<string, number> | undefined, bounds: SchemaBounds): number {
  const resolved = lossByName(loss ?? 'logistic', lossParameters);
  const { lipschitz } = glmConstants(resolved, { rowNormBound: bounds.rowNormBound, labelBound: bounds.labelBound });
  if (!Number.isFinite(lipschitz)) {
    throw new InvalidParameterError('clipNorm', undefined, `given: the ${resolved.name} loss has no finite Lipschitz bound on the schema's domain (it needs a bound on the parameters), so the schema cannot fix the clipping norm`);
  }
  return lipschitz;
}

/** The clipping norm a learner's options leave out, from the schema (its loss and bounds). */
export function clipNormFromBounds(given: { readonly clipNorm?: number; readonly loss?: string; readonly lossParameters?: Record<string, number> }, bounds: SchemaBounds): number {
  return given.clipNorm ?? schemaClipNorm(given.loss, given.lossParameters, bounds);
}
