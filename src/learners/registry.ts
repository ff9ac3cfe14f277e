/**
 * The learner registry: every learner of dpfit, once: the CLI and the library share one definition of each learner, its name and its defaults. `train()`, the
 * estimators, `dpfit train` (in memory, one-vs-rest, `--tune`, out of core, in a database), the
 * composite releases (`gradient-methods.ts`), `dataset-size.ts`, `verifyModel`'s relation rule
 * and the CLI's work limits all read their per-method facts here; none keeps a list of its own.
 *
 * Each entry (`*-learner.ts` in its family folder, the `Learner` interface of `learner.ts`) holds one learner's name
 * (the CLI spells it in kebab-case), its relation, which n it may depend on, its options and the
 * public rules that fill them, its train function, its flags and its work rule. Adding a learner
 * is one `*-learner.ts` file beside its train function and one line in `LEARNERS` (docs/architecture.md, "How to add a
 * learner").
 *
 * What `resolveTraining` does, in this order, before anything is read from the data:
 *   1. the method is one of `LEARNERS` (else an error naming the closest);
 *   2. no option is unknown to every learner (`clipnorm`: "unknown option clipnorm (did you mean
 *      clipNorm?)"); the learner's rules on given values and its opt-in;
 *   3. the public n (`dataset-size.ts`), then the complete options: what the caller gave, the
 *      schema's bounds, the public rules of `defaults.ts`; an option nothing public can fill is
 *      refused by name;
 *   4. no option of another learner (`batchSize` with `dpgd`): refused, naming the learners that
 *      take it. (After 3, so that a missing clipping norm is said first: test/learners-estimators.)
 */
import type { DatasetSizeReport } from './models/privacy-report.js';
import { InvalidParameterError, UnknownOptionError } from '../errors.js';
import { closestName } from '../validate.js';
import type { DpEvent } from '../accounting/events/types.js';
import type { DefaultsShape } from './defaults.js';
import { glmConstants } from './glm/constants.js';
import type { GlmData } from './glm/types.js';
import { cliName, type Given, type Learner, type PublicShape, type SchemaBounds, type TrainOutcome } from './learner.js';
import { lossByName } from './glm/losses/by-name.js';
import { amp } from './perturbation/amp-learner.js';
import { dpgd } from './gradient/dpgd-learner.js';
import { dpsgd } from './gradient/dpsgd-learner.js';
import { objpert } from './perturbation/objpert-learner.js';
import { output } from './perturbation/output-learner.js';
import { outputSgd } from './perturbation/output-sgd-learner.js';
import { rgm } from './rgm/rgm-learner.js';
import { shuffled } from './gradient/shuffled-learner.js';

/** Every learner, in `dpfit train --help`'s order (`dpsgd`, the CLI's and the estimators' default, first). */
export const LEARNERS = [dpsgd, dpgd, shuffled, output, outputSgd, objpert, amp, rgm] as const;

/** Any learner of the registry, its options erased. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyLearner = Learner<string, any, TrainOutcome>;

/** The registry's entries, each with its own options type. */
export type RegistryEntry = (typeof LEARNERS)[number];
type Entry = RegistryEntry;

/** The method of `dpfit train` and the estimators when none is given. */
export const DEFAULT_TRAIN_METHOD = 'dpsgd' satisfies Entry['method'];

/** The library name of a method. */
export type TrainMethod = Entry['method'];

/** The method names of `train()`. */
export const TRAIN_METHODS: readonly TrainMethod[] = LEARNERS.map((l) => l.method);

/** What every method accepts besides its own options. */
export interface CommonTrainOptions {
  /**
   * The number of records, declared without looking at the data (`dataset-size.ts`): replace-one
   * learners refuse data that hold another number; DP-SGD computes q and its epochs from it
   * instead of the data's own count; objective perturbation and AMP use no n.
   */
  readonly datasetSize?: number;
}

/** `train()`'s options for one learner: its method, and its options, each left out filled by the public rules but delta. */
export type TrainOptionsOf<L> = L extends Learner<infer M, infer O, TrainOutcome> ? { readonly method: M } & CommonTrainOptions & Given<O> : never;

/** `train()`'s options: one exact set per method (TypeScript refuses a key the method does not take). */
export type TrainOptions = TrainOptionsOf<Entry>;

/** The options `train()` accepts whatever the method. */
const COMMON_OPTIONS = ['method', 'datasetSize'] as const;

/** The learner of a library method name; refuses another name, naming the closest. */
export function learnerNamed(method: unknown): AnyLearner {
  const found = LEARNERS.find((l) => l.method === method);
  if (found !== undefined) return found as AnyLearner;
  const names = TRAIN_METHODS.map((m) => `'${m}'`).join(', ');
  const closest = typeof method === 'string' ? closestName(method, TRAIN_METHODS) : undefined;
  throw new InvalidParameterError('method', method, names, closest === undefined ? undefined : `did you mean '${closest}'?`);
}

/** The learner `dpfit train --method NAME` names (its kebab-case name), or undefined. */
export function learnerOfCliName(name: string): AnyLearner | undefined {
  return LEARNERS.find((l) => cliName(l.method) === name) as AnyLearner | undefined;
}

/** Every option `train()` takes with this learner's method. */
export function trainOptionNames(learner: AnyLearner): readonly string[] {
  return [...new Set([...COMMON_OPTIONS, ...learner.options])];
}

/** Every option of any learner (a key outside it is a typo, whatever the method). */
const ANY_OPTION: ReadonlySet<string> = new Set(LEARNERS.flatMap((l) => trainOptionNames(l as AnyLearner)));

/** How a surface names a method in its messages: `method 'output'` (library) or `--method output` (CLI). */
export function methodReference(learner: AnyLearner): string {
  return `method '${learner.method}'`;
}

/**
 * Step 2 of the module comment: refuses a key no learner takes (naming the closest option of this
 * method), a value a rule of the learner excludes, and a run the learner's opt-in does not allow.
 * `where` says whose options these are in the error.
 */
export function checkGivenOptions(learner: AnyLearner, options: object, where: string): void {
  const valid = trainOptionNames(learner);
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && !ANY_OPTION.has(key)) throw new UnknownOptionError(key, value, where, valid, closestName(key, valid));
  }
  const given = options as Record<string, unknown>;
  for (const rule of learner.rules ?? []) {
    const value = given[rule.option] ?? rule.absent;
    if (value === undefined || rule.holds(value)) continue;
    throw new InvalidParameterError(rule.option, value, `${rule.expected} for ${methodReference(learner)} (${rule.why})`);
  }
  learner.optIn?.check(given[learner.optIn.option]);
}

/** Step 4: refuses an option of another learner, naming who takes it. */
export function rejectOtherLearnersOptions(learner: AnyLearner, options: object, where: string): void {
  const valid = trainOptionNames(learner);
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || valid.includes(key)) continue;
    const takers = LEARNERS.filter((l) => (l.options as readonly string[]).includes(key)).map((l) => l.method);
    const error = new UnknownOptionError(key, value, where, valid, closestName(key, valid));
    error.message = `${error.message} (${key} is an option of ${takers.join(', ')})`;
    throw error;
  }
}

/** The smoothness of the loss on the public row-norm bound (given, else the schema's), which the step-size rules need. */
function publicSmoothness(given: Record<string, unknown>, bounds: SchemaBounds | undefined): number | undefined {
  const rowNormBound = typeof given.rowNormBound === 'number' ? given.rowNormBound : bounds?.rowNormBound;
  if (rowNormBound === undefined) return undefined;
  return glmConstants(lossByName((given.loss as string | undefined) ?? 'logistic', given.lossParameters as Record<string, number> | undefined), { rowNormBound }).smoothness;
}

/** The public shape's part the rules of `defaults.ts` read. */
function rulesShape(shape: PublicShape, given: Record<string, unknown>): DefaultsShape {
  return {
    ...(shape.n === undefined ? {} : { n: shape.n }),
    d: shape.d,
    ...(typeof given.epsilon === 'number' ? { epsilon: given.epsilon } : {}),
    ...(() => {
      const smoothness = publicSmoothness(given, shape.bounds);
      return smoothness === undefined ? {} : { smoothness };
    })(),
  };
}

/** The options without the keys whose value is undefined (an absent option). */
function defined(options: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}

/**
 * Step 3: the complete options of a learner on data of this public shape: what the caller gave,
 * then what the schema's bounds fill, then the public rules (`defaults.ts`). Refuses, by name, an
 * option nothing public fills. `train()`'s own keys (`method`, and `datasetSize` for a learner
 * that does not take it) are left out: the result is what `learner.train` takes.
 */
export function completeOptions(learner: AnyLearner, shape: PublicShape, options: object): Record<string, unknown> {
  const given = defined(options);
  delete given.method;
  if (!learner.options.includes('datasetSize')) delete given.datasetSize;
  const rules = learner.defaults(rulesShape(shape, given), given);
  const bounded = shape.bounds === undefined ? {} : learner.fromBounds(shape.bounds, given);
  const complete: Record<string, unknown> = { ...(shape.featureNames === undefined ? {} : { featureNames: shape.featureNames }), ...defined(rules), ...defined(bounded), ...given };
  for (const field of learner.required ?? []) {
    if (complete[field] !== undefined) continue;
    throw new InvalidParameterError(
      field,
      undefined,
      `given for ${methodReference(learner)} (> 0), or train on what loadDataset returns: the schema's public bounds then fix it, as dpfit train does`,
    );
  }
  return complete;
}

/** The public shape of a training set for a learner: its public n, d, the schema's bounds and feature names. */
export function publicShape(size: DatasetSizeReport, dataset: GlmData, bounds?: SchemaBounds, featureNames?: readonly string[]): PublicShape {
  return {
    ...(size.value === undefined ? {} : { n: size.value }),
    d: dataset.d,
    ...(bounds === undefined ? {} : { bounds }),
    ...(featureNames === undefined ? {} : { featureNames }),
  };
}

/** The per-method default hyperparameters for a public shape (the rules of `defaults.ts`, as `dpfit train` fills them). */
export function defaultMethodOptions(method: string, shape: DefaultsShape): Record<string, number> {
  const given = { ...(shape.regularization === undefined ? {} : { regularization: shape.regularization }), ...(shape.learningRate === undefined ? {} : { learningRate: shape.learningRate }) };
  return learnerNamed(method).defaults(shape, given) as Record<string, number>;
}

/** Event kinds whose presence makes a release add/remove-one (`verifyModel`'s relation rule). */
export const ADD_OR_REMOVE_EVENT_KINDS: ReadonlySet<DpEvent['kind']> = new Set(LEARNERS.filter((l) => l.relation === 'addOrRemoveOne').flatMap((l) => (l as AnyLearner).eventKinds ?? []));

/** Event kinds whose presence says the release uses no n (a sum objective: `privacy.datasetSize` is 'unused'). */
export const N_UNUSED_EVENT_KINDS: ReadonlySet<DpEvent['kind']> = new Set(LEARNERS.filter((l) => l.datasetSize === 'unused').flatMap((l) => (l as AnyLearner).eventKinds ?? []));
