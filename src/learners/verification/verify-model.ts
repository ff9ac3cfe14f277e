/**
 * `verifyModel`: checks the privacy claim a model file makes, with dpfit's own accountants
 * (docs/design.md, "What a release may contain"). A model file says what it cost in its
 * privacy block; nothing stops anyone from editing that block, or from writing a file by hand.
 * The verifier trusts only the event (what the file says was released) and re-derives the rest:
 *
 *  - epsilon: the event accounted at the claimed delta by the RDP accountant, the PLD accountant
 *    (when it supports the event) and the exact Gaussian composition (when the event is one); the
 *    tightest valid bound is the verified epsilon. The claim must be at least that (up to a 1e-12
 *    relative slack), and must be what the accountant it names gives for the event (otherwise the
 *    event does not describe the release the epsilon was computed for: it was changed).
 *    Releases with a Propose-Test-Release part (RGM) are accounted at `deltaComponents.rdp`, with
 *    delta = rdp + ptr and the test's threshold >= log(1/delta_ptr)/epsilon_ptr (`000` Prop. 2).
 *  - the sub-claims (`subClaimProblems`): `rdp.epsilon` and `pld.epsilon` are at least the headline
 *    (which is the smaller of the two), `pld.epsilonLower` at most `pld.epsilon`; `rdp.epsilon` and
 *    its `order` are what the RDP accountant gives for the event, `pld.epsilon` (and its
 *    `epsilonLower`) what the exact Gaussian composition (a Gaussian composition: what the learners
 *    put in `pld` for one) or the PLD accountant (objective perturbation, AMP) gives, where verify
 *    has it at hand; otherwise only the inequalities. `comparisons`: only the names dpfit writes,
 *    each an epsilon >= 0 at the report's delta with a noise multiplier > 0 when given; the bounds
 *    of this release among them (shuffled SGD's `plainComposition` / `lastIterate`, the one not used
 *    for the headline) at least the headline. Not checked: DP-GD's `basicComposition` and
 *    `rdpCalibration` (the noise other accountants would need for the target, not bounds of this
 *    release; their events are not in the file), the value of shuffled SGD's unused bound (its
 *    event is not in the file) and its `conjecture` (004 Conj. 1-2, not a guarantee).
 *  - the neighbouring relation: the one the event's release has (`releaseRelation`): add/remove-one
 *    exactly when the event has a poissonSampled (DP-SGD) or objectivePerturbation (objective
 *    perturbation, AMP) part, replace-one otherwise, either for an event with a nonPrivate part
 *    (infinite epsilon). Gaussian, Laplace and RGM events carry no relation, so the file's word
 *    is not taken for theirs; the accountants' `neighboringRelationOf` agrees where the event
 *    carries one.
 *  - the guarantee: the weakest of what the accountant proves (conjecture events), the randomness
 *    (anything but the secure generator: none), the noise (continuous floating-point noise, i.e.
 *    a gaussian/laplace/objectivePerturbation/relativeGaussian event without `discrete: true`, or
 *    no stated grid: none), epsilon Infinity or a nonPrivate event (none), objective perturbation
 *    without AMP's output noise (none: its minimiser identifies the dataset,
 *    `objective-perturbation-opt-in.ts`; it used to be a conjecture), the embedded schema's
 *    provenance (suggested from the private data: none), and the reasons already in the report's
 *    warnings. A claim stronger than that does not hold.
 *  - the grid: `granularity`/`granularities` must be what the event implies where it implies one,
 *    and theta must lie on the stated grid where theta is the grid value (`verify-grid.ts`).
 *  - a one-vs-rest model of k classes: the event is selfCompose(run, k), k runs as `trainOneVsRest`
 *    writes it (`runCountProblem`).
 *  - a federated model: every node its own description lists carries its block (`privacy.summary`,
 *    and `privacy.nodeNames` when the file has it, against `privacy.nodes`), and each block's
 *    `extraDelta` is its PTR delta (0 without a test).
 *  - only what dpfit writes: a field dpfit does not write anywhere (the file's top level, a class
 *    model, the loss and its parameters, `privacy`, `privacy.rdp`/`pld`/`ptr`/`deltaComponents`/
 *    `datasetSize`/`granularities`/`relativeSensitivity`, a comparison, a federated file's `privacy` and node blocks, the
 *    embedded schema as `parseSchema` reads it) is a problem, not a warning: an extra field can
 *    carry anything. `privacy.datasetSize` (`dataset-size.ts`) must be {value?, source, note}:
 *    source 'records', 'declared' or 'unused', value a positive integer exactly when source is not
 *    'unused', note a string; 'unused' exactly for an objectivePerturbation event (objective
 *    perturbation and AMP use no n). The accountant named is one dpfit has; RGM's `ptr.passed` is
 *    true (a model is released only then). These are problems (exit 4), not a malformed file.
 *  - RGM for a GLM (no PTR part): `privacy.relativeSensitivity` {source 'glm', featureClip,
 *    regularization} with n = `datasetSize.value` and the model's loss re-derive eta and R_rel
 *    (`000` App. B.2), and every relativeGaussian part of the event has at least those; without
 *    that block, or without a PTR part, a Relative Gaussian release is not proven.
 *
 * What a file alone cannot show. A model file is not signed: verify checks that the claim follows
 * from the event and that the file holds only what dpfit writes, not that the event is what ran.
 * It cannot detect
 *  - an event edited consistently: a larger noise multiplier (its `gridNoiseStd` with it), fewer
 *    steps, fewer steps per one-vs-rest run, a smaller sampling rate, each with the claim
 *    re-accounted to match; RGM's PTR delta_ptr made smaller with `ptr.delta`, `ptr.threshold`,
 *    `deltaComponents` and `delta` edited to match (the event carries the test's Laplace noise,
 *    not its threshold, so the threshold the test really used is not in it); a grid doubled with
 *    the sensitivity where theta is post-processed (`verify-grid.ts`); a federated node removed
 *    from its block, `nodeNames` and the summary together;
 *  - a guarantee raised by editing `randomness` and `warnings` together (a seeded run given the
 *    secure generator's description and its seed warning deleted; a tuning-overlap warning
 *    deleted): nothing else in the file records them;
 *  - data hidden in the free text dpfit writes (warnings, feature and class names, the embedded
 *    schema's names, notes and descriptions, `datasetSize.note`, a federated node's `label`), in
 *    numbers nothing derives (the schema's declared bounds, theta where theta is post-processed),
 *    or in the last digits of numbers checked to a relative slack.
 * Only a signed file answers those: a signature over the whole file by whoever ran the training,
 * checked against their public key, binds the event to the run (verify then checks the claim
 * against the event as here).
 *
 * A malformed file (wrong format, non-finite parameters, an event that does not parse) is a
 * `DataFormatError`; a well-formed file whose claim is not supported gives `holds: false` and
 * one line per problem. No data are read: the verification is of the claim, not of the model.
 *
 * @example
 * const result = verifyModel(JSON.parse(readFileSync('model.json', 'utf8')), { source: 'model.json' });
 * result.holds; // true when the claimed (epsilon, delta, guarantee) follow from the event
 */
import type { DpEvent } from '../../accounting/events/types.js';
import { childEvents, someEvent } from '../../accounting/events/tree.js';
import { parseEvent } from '../../accounting/events/json.js';
import { gaussianCompositionEpsilon } from '../../accounting/gaussian/gaussian-composition.js';
import type { GuaranteeKind, PrivacyGuarantee } from '../../accounting/guarantee.js';
import { containsConjecture, neighboringRelationOf, type NeighboringRelation } from '../../accounting/neighboring.js';
import { pldEpsilon } from '../../accounting/pld/accountant.js';
import { rdpEpsilon } from '../../accounting/rdp/accountant.js';
import { DataFormatError, DpfitError, InvalidParameterError, NumericalError, UnsupportedEventError } from '../../errors.js';
import { defaultRng } from '../../random/rng.js';
import { parseModel, type LinearModel } from '../models/model.js';
import { localPerNodeSummary, secureAggregationSummary, type NodeClaim, type SecureAggregationClaim } from '../models/local-per-node.js';
import { OBJECTIVE_PERTURBATION_NOT_PRIVATE } from '../perturbation/objective-perturbation-opt-in.js';
import { gridProblems } from './verify-grid.js';
import { rgmGlmSensitivity } from '../rgm/rgm-glm.js';
import { parseOneVsRestModel, type OneVsRestModel } from '../composite/one-vs-rest.js';
import { ADD_OR_REMOVE_EVENT_KINDS, N_UNUSED_EVENT_KINDS } from '../registry.js';
import { weakerGuarantee, type GuaranteeCondition, type PrivacyReport } from '../models/privacy-report.js';
import { optionNames, rejectUnknownOptions } from '../../validate.js';
import { parseSchema } from '../../data/schema/parse.js';

/** An (epsilon, delta) guarantee as claimed by a file or as verified. */
export interface GuaranteeSummary {
  readonly epsilon: number;
  readonly delta: number;
  readonly accountant: string;
  readonly guarantee: GuaranteeKind;
  readonly neighboringRelation: string;
}

export interface ModelVerification {
  /** true when the claimed guarantee follows from the event (and no problem was found). */
  readonly holds: boolean;
  /** The model's format ('dpfit-linear-model/1' or 'dpfit-one-vs-rest-model/1'). */
  readonly format: string;
  /** What dpfit's accountants give for the file's event (null: the file has no privacy block). */
  readonly verified: GuaranteeSummary | null;
  /** What the file claims (null: no privacy block). */
  readonly claimed: GuaranteeSummary | null;
  /** Why the claim does not hold, one line each (empty when it holds). */
  readonly problems: readonly string[];
  /** Why the verified guarantee is below `proven`, and the report's own warnings. */
  readonly warnings: readonly string[];
  /**
   * A federated model (`dpfit-federated-model/1`): each node's report verified on its own (local
   * DP, one guarantee per node). `verified` and `claimed` are then the node with the largest
   * verified epsilon, named in `node`.
   */
  readonly nodes?: readonly { readonly node: string; readonly verification: ModelVerification }[];
  readonly node?: string;
}

export interface VerifyModelOptions {
  /** Name of the file, for error messages. */
  readonly source?: string;
}

/** Relative slack of the epsilon comparisons (accountants round pessimistically, ~1e-12). */
const EPSILON_SLACK = 1e-12;
/** How far above the named accountant's epsilon a claim may be before the event is said to be changed. */
const REPRODUCTION_SLACK = 1e-9;
/** `SUGGESTED_PROVENANCE` of `data/schema/types.ts`. */
const SUGGESTED_PROVENANCE = 'suggested-from-private-data';

// ---- what dpfit writes (`cli/commands/train.ts` releasedModel, `privacy-report.ts`, `dataset-size.ts`,
// `rgm-gd.ts`, `federated/coordinator.ts`): any other field is a problem (module comment)
const MODEL_FIELDS = ['format', 'loss', 'task', 'theta', 'featureNames', 'privacy', 'schema'];
const ONE_VS_REST_FIELDS = ['format', 'classes', 'models', 'featureNames', 'privacy', 'schema'];
/** A one-vs-rest file's class models (a per-class privacy block is a problem of its own). */
const CLASS_MODEL_FIELDS = ['format', 'loss', 'task', 'theta', 'featureNames', 'privacy'];
const LOSS_FIELDS = ['name', 'parameters'];
/** The parameters of each loss (`glm/*.ts`); the others have none. */
const LOSS_PARAMETERS: Readonly<Record<string, readonly string[]>> = { huber: ['delta'], smoothedHinge: ['smoothing'] };
const REPORT_FIELDS = [
  'epsilon', 'delta', 'accountant', 'event', 'neighboringRelation', 'guarantee', 'rdp', 'pld', 'comparisons',
  'granularity', 'granularities', 'randomness', 'warnings', 'ptr', 'deltaComponents', 'datasetSize', 'relativeSensitivity',
];
/** The fields of the report's sub-blocks. */
const REPORT_BLOCKS: Readonly<Record<string, readonly string[]>> = {
  rdp: ['epsilon', 'order'],
  pld: ['epsilon', 'epsilonLower'],
  ptr: ['epsilon', 'delta', 'passed', 'threshold'],
  deltaComponents: ['rdp', 'ptr'],
  datasetSize: ['value', 'source', 'note'],
  granularities: ['objective', 'output', 'ptr', 'gradient'],
  relativeSensitivity: ['source', 'featureClip', 'regularization'],
};
const COMPARISON_FIELDS = ['epsilon', 'delta', 'noiseMultiplier'];
/** The accountants a report names (`PrivacyGuarantee.accountant`, and 'none' for a release without noise). */
const ACCOUNTANTS = ['rdp', 'pld', 'exactGaussian', 'pure', 'none'];
const DATASET_SIZE_SOURCES = ['records', 'declared', 'unused'];
const EXTRA_FIELD = 'a published file holds only what dpfit writes, and an extra field can carry anything';

/** A field's name as a problem quotes it (at most 60 characters: a name can be long). */
function fieldName(key: string): string {
  return key.length <= 60 ? key : `${key.slice(0, 57)}...`;
}

/** A value as a problem quotes it: its JSON, at most 60 characters ('missing' when absent). */
function quoted(value: unknown): string {
  const text = JSON.stringify(value) ?? 'missing';
  return text.length <= 60 ? text : `${text.slice(0, 57)}...`;
}

/** One problem per field of `value` (an object) that is not in `fields`; `path` is the object's ('' for the file itself). */
function extraFieldProblems(value: unknown, fields: readonly string[], path: string, holder: string): string[] {
  if (!isRecord(value)) return [];
  return Object.keys(value)
    .filter((key) => !fields.includes(key))
    .map((key) => `${path === '' ? '' : `${path}.`}${fieldName(key)} is not a field dpfit writes (${holder}: ${fields.join(', ') || 'none'}): ${EXTRA_FIELD}`);
}

/** The loss's fields and its parameters' names (`lossByName` ignores parameters it does not read). */
function lossProblems(loss: unknown, path: string): string[] {
  if (!isRecord(loss)) return [];
  const parameters = typeof loss.name === 'string' ? (LOSS_PARAMETERS[loss.name] ?? []) : [];
  return [...extraFieldProblems(loss, LOSS_FIELDS, path, 'a loss holds'), ...extraFieldProblems(loss.parameters, parameters, `${path}.parameters`, `the ${String(loss.name)} loss's parameters are`)];
}

/**
 * The embedded schema is one dpfit reads (`parseSchema`: no field it does not know, every value of
 * its type), as `evaluate` and `predict` read it. Its names, notes and descriptions are free text.
 */
function schemaProblems(schema: unknown): string[] {
  if (schema === undefined) return [];
  try {
    parseSchema(schema, 'the embedded schema');
    return [];
  } catch (error) {
    if (!(error instanceof DpfitError)) throw error;
    return [`${error.message.replace(/^the embedded schema: schema: /, 'the embedded schema: ')}: the file holds the public schema as dpfit writes it, and an extra field can carry anything`];
  }
}

/** The fields of a privacy report and of its sub-blocks, and the accountant's name. */
function reportFieldProblems(privacy: Record<string, unknown>): string[] {
  const problems = extraFieldProblems(privacy, REPORT_FIELDS, 'privacy', 'a privacy report holds');
  for (const [block, fields] of Object.entries(REPORT_BLOCKS)) problems.push(...extraFieldProblems(privacy[block], fields, `privacy.${block}`, `privacy.${block} holds`));
  if (isRecord(privacy.comparisons)) {
    for (const [name, entry] of Object.entries(privacy.comparisons)) problems.push(...extraFieldProblems(entry, COMPARISON_FIELDS, `privacy.comparisons.${fieldName(name)}`, 'a comparison holds'));
  }
  if (privacy.accountant !== undefined && !ACCOUNTANTS.includes(privacy.accountant as string)) {
    problems.push(`privacy.accountant = ${quoted(privacy.accountant)} is not an accountant dpfit reports (${ACCOUNTANTS.join(', ')})`);
  }
  return problems;
}

/**
 * `privacy.datasetSize` (`dataset-size.ts`): {value?, source, note} with source 'records',
 * 'declared' or 'unused', value a positive integer present exactly when source is not 'unused',
 * note a string; and 'unused' exactly for objective perturbation and AMP (an objectivePerturbation
 * event: their objective is a sum and no released value depends on n), unless the release has no
 * noise (epsilon Infinity, where it says what the method would use). Absent in files written before
 * it and in a federated node's block.
 */
function datasetSizeProblems(size: unknown, event: DpEvent, nonPrivate: boolean): string[] {
  if (size === undefined) return [];
  if (!isRecord(size)) return [`privacy.datasetSize = ${quoted(size)} is not {value, source, note}: which n the released values depend on, and why it may be public`];
  const problems: string[] = [];
  const { value, source, note } = size;
  if (typeof source !== 'string' || !DATASET_SIZE_SOURCES.includes(source)) {
    problems.push(`privacy.datasetSize.source = ${quoted(source)} is not one of ${DATASET_SIZE_SOURCES.map((s) => `'${s}'`).join(', ')}`);
  } else if (source === 'unused') {
    if (value !== undefined) problems.push(`privacy.datasetSize.value is given, but source 'unused' says no released value depends on n: dpfit writes no count there (it would publish n)`);
  } else if (!(Number.isSafeInteger(value) && (value as number) >= 1)) {
    problems.push(`privacy.datasetSize.value = ${quoted(value)} is not a positive integer: source '${source}' says the released values depend on that n`);
  }
  if (typeof note !== 'string') problems.push(`privacy.datasetSize.note = ${quoted(note)} is not a string (why that n may be public)`);
  if (!nonPrivate && typeof source === 'string' && DATASET_SIZE_SOURCES.includes(source)) {
    // A release of a learner that uses no n (registry: objective perturbation and AMP) holds its event kind.
    const sum = someEvent(event, (e) => N_UNUSED_EVENT_KINDS.has(e.kind));
    if (sum && source !== 'unused') {
      problems.push(`privacy.datasetSize.source = '${source}', but objective perturbation and AMP (an objectivePerturbation event) use no n: their objective is a sum, so their report says 'unused' and n stays private`);
    } else if (!sum && source === 'unused') {
      problems.push("privacy.datasetSize.source = 'unused', but this release depends on n: only objective perturbation and AMP (an objectivePerturbation event) use none");
    }
  }
  return problems;
}

/**
 * Warnings that lower a guarantee, as the learners and the CLI word their conditions
 * (`privacy-report.ts` `randomnessConditions`, `nonPrivateReport`, objective perturbation's unpaid
 * minimiser, the CLI's schema and validation checks). A guarantee raised by editing the file
 * while such a warning stays is caught here.
 */
const LOWERING_WARNINGS: readonly { readonly pattern: RegExp; readonly level: 'conjecture' | 'none' }[] = [
  { pattern: /\bNOT private\b/, level: 'none' },
  { pattern: /\bno guarantee is proven\b/, level: 'none' },
  { pattern: /\bis not proven\b/, level: 'conjecture' },
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function secureDescription(): string {
  try {
    return defaultRng().description;
  } catch {
    return 'secure (crypto.getRandomValues)';
  }
}

/** Visits every sub-event (the event included). */
function walk(event: DpEvent, visit: (e: DpEvent, parent: DpEvent | undefined) => void, parent?: DpEvent): void {
  visit(event, parent);
  for (const child of childEvents(event)) walk(child, visit, event);
}

const NOISE_KINDS = new Set(['gaussian', 'laplace', 'objectivePerturbation', 'relativeGaussian']);

interface EventFacts {
  readonly nonPrivate: boolean;
  readonly noisy: boolean;
  readonly continuous: string[];
  readonly unpaidObjectivePerturbation: boolean;
  readonly laplaceNoiseMultipliers: number[];
  readonly relativeGaussian: boolean;
}

/**
 * RGM for a GLM (`rgm/rgm-glm.ts`, `000` App. B.2): its relative sensitivity holds for every
 * dataset, from public values the report states (`privacy.relativeSensitivity`: the feature clip
 * R and lambda; n is `datasetSize.value`; the loss is the model's). Re-derives eta and R_rel and
 * checks every relativeGaussian part of the event against them. undefined: the report states no
 * such derivation (then RGM needs its PTR part); 'none': it holds; else the problem.
 */
function glmRelativeSensitivityProblem(json: unknown, report: PrivacyReport, event: DpEvent): string | undefined {
  const stated = report.relativeSensitivity;
  if (stated === undefined) return undefined;
  const loss = isRecord(json) && isRecord(json.loss) ? json.loss.name : undefined;
  const n = report.datasetSize?.value;
  let derived: { eta: number; rRel: number };
  try {
    if (stated.source !== 'glm') throw new InvalidParameterError('privacy.relativeSensitivity.source', stated.source, "'glm'");
    derived = rgmGlmSensitivity({ loss: String(loss), n: n as number, featureClip: stated.featureClip, regularization: stated.regularization });
  } catch (error) {
    if (!(error instanceof DpfitError)) throw error;
    return `privacy.relativeSensitivity does not give a GLM's relative sensitivity (loss ${quoted(loss)}, n = privacy.datasetSize.value ${quoted(n)}): ${error.message}`;
  }
  let problem: string | undefined;
  walk(event, (e) => {
    if (e.kind !== 'relativeGaussian' || problem !== undefined) return;
    const { eta, rRel } = e as { eta: number; rRel: number };
    if (!(eta >= derived.eta) || !(rRel >= derived.rRel)) {
      problem = `the event's relativeGaussian eta = ${fmt(eta)}, R_rel = ${fmt(rRel)} are below what privacy.relativeSensitivity gives (eta >= ${fmt(derived.eta)}, R_rel >= ${fmt(derived.rRel)}): the noise does not cover the sensitivity`;
    }
  });
  return problem ?? 'none';
}

function eventFacts(event: DpEvent): EventFacts {
  let nonPrivate = false;
  let noisy = false;
  let unpaidObjectivePerturbation = false;
  let relativeGaussian = false;
  const continuous: string[] = [];
  walk(event, (e, parent) => {
    if (e.kind === 'nonPrivate') nonPrivate = true;
    if (e.kind === 'relativeGaussian') relativeGaussian = true;
    if (e.kind !== 'nonPrivate' && e.kind !== 'noOp' && !('event' in e) && !('events' in e)) noisy = true;
    if (NOISE_KINDS.has(e.kind) && (e as { discrete?: unknown }).discrete !== true) continuous.push(e.kind);
    if (e.kind === 'objectivePerturbation') {
      // AMP (003 Alg. 1) is compose([objectivePerturbation, gaussian]): its output noise pays the tolerance.
      const amp = parent?.kind === 'compose' && parent.events.some((s) => s.kind === 'gaussian');
      if (!amp) unpaidObjectivePerturbation = true;
    }
  });
  const laplaceNoiseMultipliers = event.kind === 'compose' ? event.events.filter((e) => e.kind === 'laplace').map((e) => (e as { noiseMultiplier: number }).noiseMultiplier) : [];
  return { nonPrivate, noisy, continuous, unpaidObjectivePerturbation, laplaceNoiseMultipliers, relativeGaussian };
}

/** Why a release has the relation `releaseRelation` gives it (for problems). */
const RELATION_REASONS: Readonly<Record<'addOrRemoveOne' | 'replaceOne', string>> = {
  addOrRemoveOne: 'it has a poissonSampled (DP-SGD) or objectivePerturbation (objective perturbation, AMP) part, which dpfit accounts under add/remove-one',
  replaceOne:
    "it has no poissonSampled or objectivePerturbation part, and every such dpfit release (DP-GD, output perturbation, shuffled SGD, RGM with its PTR test, a federated node's runs) treats n as public and calibrates its noise to a replace-one sensitivity: nothing in it bounds what adding or removing a record changes",
};

/**
 * The neighbouring relation of the release a dpfit event describes. dpfit's learners report
 * add/remove-one exactly for DP-SGD (a `poissonSampled` part), objective perturbation and AMP (an
 * `objectivePerturbation` part) and composites of those (tuning's `repeatAndSelect`, one-vs-rest's
 * `selfCompose` of runs); every other release (DP-GD, output perturbation and its SGD variant,
 * shuffled SGD with its last-iterate and without-replacement events, RGM with its PTR Laplace, a
 * federated node's runs) is replace-one (`privacyReport`'s `relation` in each learner). Gaussian,
 * Laplace and RGM events carry no relation of their own (`neighboringRelationOf` says
 * `relativeToSensitivity`), so the file's word would otherwise be taken for theirs. Undefined for
 * an event with a `nonPrivate` part: its epsilon is infinite, true under either relation (DP-SGD's
 * zero-noise report says addOrRemoveOne, the others' replaceOne). Which kinds mark an add/remove-one
 * release is each learner's registry entry (`eventKinds`, `registry.ts`).
 */
export function releaseRelation(event: DpEvent): 'addOrRemoveOne' | 'replaceOne' | undefined {
  if (someEvent(event, (e) => e.kind === 'nonPrivate')) return undefined;
  // The event kinds of the registry's add/remove-one learners (their entries' `eventKinds`).
  return someEvent(event, (e) => ADD_OR_REMOVE_EVENT_KINDS.has(e.kind)) ? 'addOrRemoveOne' : 'replaceOne';
}

/**
 * Why a one-vs-rest event does not account its k runs (undefined when it does). `trainOneVsRest`
 * releases selfCompose(run, k): k runs, one per class, each reading every row (no parallel
 * composition). Any other event pays for something else: selfCompose(run, 1) with its epsilon
 * re-accounted to match pays for one model of k. The same steps in another shape (e.g. one
 * selfCompose of all k T steps) are refused too: they cost the same, but dpfit never writes them,
 * and the file cannot show that they are k runs rather than one. How many steps one run had is not
 * in the file: k runs of fewer steps each cannot be told from the file alone.
 */
function runCountProblem(event: DpEvent, k: number): string | undefined {
  if (event.kind === 'selfCompose' && event.count === k) return undefined;
  const found = event.kind === 'selfCompose' ? `selfCompose(run, ${event.count})` : `a ${event.kind} event`;
  return `privacy.event is ${found}, not ${k} runs: a one-vs-rest release of ${k} models is selfCompose(run, ${k}), one run per class, each reading every row, so this event does not account all ${k} models`;
}

interface Accounted {
  readonly results: Map<string, PrivacyGuarantee>;
  readonly best: PrivacyGuarantee | undefined;
  readonly unsupported?: string;
}

/** The event at delta by every accountant of dpfit that supports it. */
function accountEvent(event: DpEvent, delta: number, claimedAccountant: string | undefined): Accounted {
  const results = new Map<string, PrivacyGuarantee>();
  let unsupported: string | undefined;
  try {
    results.set('rdp', rdpEpsilon(event, delta, { allowConjecture: true }));
  } catch (error) {
    if (!(error instanceof DpfitError)) throw error;
    unsupported = error.message;
  }
  try {
    const exact = gaussianCompositionEpsilon(event, delta);
    if (exact !== undefined) results.set('exactGaussian', exact);
  } catch (error) {
    if (!(error instanceof DpfitError)) throw error;
  }
  // The exact Gaussian composition is exact: PLD can only approach it (run it anyway when the file names it).
  if (!results.has('exactGaussian') || claimedAccountant === 'pld') {
    try {
      results.set('pld', pldEpsilon(event, delta));
    } catch (error) {
      if (!(error instanceof UnsupportedEventError || error instanceof NumericalError || error instanceof InvalidParameterError)) throw error;
    }
  }
  let best: PrivacyGuarantee | undefined;
  for (const result of results.values()) if (best === undefined || result.epsilon < best.epsilon) best = result;
  return { results, best, ...(best === undefined ? { unsupported: unsupported ?? 'no accountant supports it' } : {}) };
}

/**
 * The comparisons dpfit's learners write (`privacy.comparisons`), and whether each is a bound of
 * this release (then it is at least the headline, which is the smallest proven bound).
 */
const COMPARISONS: Readonly<Record<string, { readonly boundOfRelease: boolean }>> = {
  // DP-GD with a target: the noise basic composition (002 Claim 2.3) and the RDP accountant would
  // need for the target (epsilon, delta); the epsilon is the target's (or the calibrated one's).
  basicComposition: { boundOfRelease: false },
  rdpCalibration: { boundOfRelease: false },
  // Shuffled SGD on the lattice: the bound not used for the headline (the larger of the two).
  plainComposition: { boundOfRelease: true },
  lastIterate: { boundOfRelease: true },
  // Shuffled SGD's 004 Conj. 1-2: NOT a guarantee, and smaller than the headline.
  conjecture: { boundOfRelease: false },
};

/** An epsilon as a report states it: a number >= 0 (Infinity read back from "Infinity"). */
function isEpsilon(value: unknown): value is number {
  return typeof value === 'number' && value >= 0;
}

/**
 * `privacy.rdp`, `privacy.pld` and `privacy.comparisons` (module comment). The headline is the
 * smaller of the RDP and PLD bounds (`privacyReport`), so neither is below it; each is re-derived
 * where verify has the accountant's result at hand (`accountEvent`): RDP always, the exact
 * Gaussian composition for Gaussian compositions (which is what the learners put in `pld` for
 * them), the PLD accountant for objective perturbation and AMP.
 */
function subClaimProblems(report: PrivacyReport, accounted: Accounted | undefined): string[] {
  const problems: string[] = [];
  const headline = report.epsilon;
  const notBelowHeadline = (field: string, value: number, why: string): void => {
    if (!(value >= headline * (1 - EPSILON_SLACK))) problems.push(`${field} = ${fmt(value)} is below privacy.epsilon = ${fmt(headline)}: ${why}`);
  };
  /** A claimed epsilon is what the accountant gives for the event (as the headline's check). */
  const reproduced = (field: string, claimed: number, verified: PrivacyGuarantee, name: string): void => {
    if (!(claimed >= verified.epsilon * (1 - EPSILON_SLACK))) {
      problems.push(`${field} = ${fmt(claimed)} is below what the ${name} accountant gives for the event (${fmt(verified.epsilon)})`);
    } else if (claimed > verified.epsilon * (1 + REPRODUCTION_SLACK) + Number.MIN_VALUE) {
      problems.push(`${field} = ${fmt(claimed)} is not what the ${name} accountant gives for the event (${fmt(verified.epsilon)}): edited, or the event is not the one it was computed for`);
    }
  };
  const smaller = 'the headline is the smaller of the RDP and PLD bounds, so neither is below it';

  const rdp = report.rdp as { readonly epsilon?: unknown; readonly order?: unknown } | undefined;
  if (rdp !== undefined) {
    const rdpVerified = accounted?.results.get('rdp');
    if (!isEpsilon(rdp.epsilon)) {
      problems.push(`privacy.rdp.epsilon = ${quoted(rdp.epsilon)} is not an epsilon (a number >= 0, or "Infinity")`);
    } else {
      notBelowHeadline('privacy.rdp.epsilon', rdp.epsilon, smaller);
      if (rdpVerified !== undefined) reproduced('privacy.rdp.epsilon', rdp.epsilon, rdpVerified, 'RDP');
    }
    if (rdp.order !== undefined && (rdpVerified === undefined ? !(typeof rdp.order === 'number' && rdp.order > 1) : rdp.order !== rdpVerified.order)) {
      problems.push(`privacy.rdp.order = ${quoted(rdp.order)} is not the order at which the RDP accountant attains its bound for the event (${rdpVerified?.order === undefined ? 'none' : fmt(rdpVerified.order)})`);
    }
  }

  const pld = report.pld as { readonly epsilon?: unknown; readonly epsilonLower?: unknown } | undefined;
  if (pld !== undefined) {
    if (!isEpsilon(pld.epsilon)) {
      problems.push(`privacy.pld.epsilon = ${quoted(pld.epsilon)} is not an epsilon (a number >= 0, or "Infinity")`);
    } else {
      notBelowHeadline('privacy.pld.epsilon', pld.epsilon, smaller);
      if (pld.epsilonLower !== undefined && !(isEpsilon(pld.epsilonLower) && pld.epsilonLower <= pld.epsilon)) {
        problems.push(`privacy.pld.epsilonLower = ${quoted(pld.epsilonLower)} is not a lower bound of privacy.pld.epsilon = ${fmt(pld.epsilon)} (a number in [0, ${fmt(pld.epsilon)}])`);
      }
      // The learners' `pld` is the exact Gaussian composition for a Gaussian composition, the PLD accountant otherwise.
      const reference = accounted?.results.get('exactGaussian') ?? accounted?.results.get('pld');
      if (reference !== undefined) {
        const name = reference.accountant === 'exactGaussian' ? 'exact Gaussian composition' : 'PLD';
        reproduced('privacy.pld.epsilon', pld.epsilon, reference, name);
        const lower = (reference as { readonly epsilonLower?: number }).epsilonLower;
        if (typeof pld.epsilonLower === 'number') {
          if (lower === undefined) problems.push(`privacy.pld.epsilonLower = ${fmt(pld.epsilonLower)} is given, but the ${name} accountant gives no lower bound for the event`);
          else if (!(Math.abs(pld.epsilonLower - lower) <= REPRODUCTION_SLACK * lower)) problems.push(`privacy.pld.epsilonLower = ${fmt(pld.epsilonLower)} is not what the ${name} accountant gives for the event (${fmt(lower)})`);
        }
      }
    }
  }

  for (const [name, entry] of Object.entries(report.comparisons ?? {})) {
    const field = `privacy.comparisons.${name}`;
    const known = COMPARISONS[name];
    if (known === undefined) {
      problems.push(`${field} is not a comparison dpfit writes (${Object.keys(COMPARISONS).join(', ')}): a published file holds only what dpfit writes, and an extra field can carry anything`);
      continue;
    }
    const { epsilon, delta, noiseMultiplier } = entry as { readonly epsilon?: unknown; readonly delta?: unknown; readonly noiseMultiplier?: unknown };
    if (!isEpsilon(epsilon)) problems.push(`${field}.epsilon = ${quoted(epsilon)} is not an epsilon (a number >= 0)`);
    else if (known.boundOfRelease) notBelowHeadline(`${field}.epsilon`, epsilon, `it is this release's bound by the other method, which was not used for the headline because it is the larger`);
    if (!(typeof delta === 'number' && delta > 0 && delta < 1 && delta === report.delta)) {
      problems.push(`${field}.delta = ${quoted(delta)} is not privacy.delta = ${fmt(report.delta)}: every comparison dpfit writes is at the report's delta`);
    }
    if (noiseMultiplier !== undefined && !(typeof noiseMultiplier === 'number' && noiseMultiplier > 0 && Number.isFinite(noiseMultiplier))) {
      problems.push(`${field}.noiseMultiplier = ${quoted(noiseMultiplier)} is not a noise multiplier (a finite number > 0)`);
    }
  }
  return problems;
}

function fmt(value: number): string {
  return Number.isFinite(value) ? String(Number(value.toPrecision(12))) : String(value);
}

function malformed(source: string, error: unknown): never {
  if (error instanceof InvalidParameterError) throw new DataFormatError(source, `is not a valid dpfit model: ${error.message}`);
  throw error;
}

const FEDERATED_FORMAT = 'dpfit-federated-model/1';
const FEDERATED_FIELDS = ['format', 'loss', 'task', 'theta', 'featureNames', 'privacy', 'schema'];
const FEDERATED_PRIVACY_FIELDS = ['kind', 'summary', 'nodeNames', 'nodes'];
const NODE_BLOCK_FIELDS = ['node', 'label', 'privacy', 'extraDelta'];

/**
 * A federated model (`federated/coordinator.ts`): ridge coefficients and privacy
 * {kind: 'localPerNode', nodes: [{node, privacy}]}. Each node's report is verified as the privacy
 * block of the same coefficients would be in a linear model (the same checks, node by node); the
 * claim holds when every node's does.
 */
function verifyFederatedModel(json: Record<string, unknown>, source: string): ModelVerification {
  const privacy = json.privacy;
  if (!isRecord(privacy) || (privacy.kind !== 'localPerNode' && privacy.kind !== 'secureAggregation') || !Array.isArray(privacy.nodes) || privacy.nodes.length === 0) {
    throw new DataFormatError(source, "is not a valid dpfit model: privacy must be {kind: 'localPerNode' or 'secureAggregation', nodes: [{node, privacy}, ...]} in a federated model");
  }
  // Secure aggregation (`federated/secure/plan.ts`): each node's event is the sum's, as every node accounted it; the block says whose shares it counts.
  const secure = privacy.kind === 'secureAggregation';
  if (secure && !isRecord(privacy.aggregation)) throw new DataFormatError(source, "is not a valid dpfit model: a secureAggregation privacy block carries its aggregation parameters");
  const warnings: string[] = [];
  const problems: string[] = [
    ...extraFieldProblems(json, FEDERATED_FIELDS, '', `a ${FEDERATED_FORMAT} file holds`),
    ...lossProblems(json.loss, 'loss'),
    ...schemaProblems(json.schema),
    ...extraFieldProblems(privacy, secure ? [...FEDERATED_PRIVACY_FIELDS, 'aggregation'] : FEDERATED_PRIVACY_FIELDS, 'privacy', "a federated model's privacy holds"),
  ];
  const nodes: { node: string; verification: ModelVerification }[] = [];
  const names = new Set<string>();
  privacy.nodes.forEach((entry: unknown, i: number) => {
    if (!isRecord(entry) || typeof entry.node !== 'string' || !isRecord(entry.privacy)) {
      throw new DataFormatError(source, `is not a valid dpfit model: privacy.nodes[${i}] must be {node: NAME, privacy: {...}}`);
    }
    if (names.has(entry.node)) problems.push(`node ${entry.node} appears twice in privacy.nodes`);
    names.add(entry.node);
    problems.push(...extraFieldProblems(entry, NODE_BLOCK_FIELDS, `privacy.nodes[${i}]`, "a node's block holds"));
    if (entry.label !== undefined && typeof entry.label !== 'string') problems.push(`privacy.nodes[${i}].label = ${quoted(entry.label)} is not a string (the node's address or name)`);
    // The delta the node's ledger adds to its RDP accounting: PTR's for rgm, none otherwise (`federated/node.ts`).
    const components = entry.privacy.deltaComponents;
    const extraDelta = isRecord(components) && typeof components.ptr === 'number' ? components.ptr : 0;
    if (entry.extraDelta !== undefined && entry.extraDelta !== extraDelta) {
      problems.push(`privacy.nodes[${i}].extraDelta = ${quoted(entry.extraDelta)} is not the node's PTR delta (${fmt(extraDelta)}: privacy.deltaComponents.ptr, or 0 without a test)`);
    }
    // Privacy does not depend on the task: a ridge classifier's coefficients are checked as ridge regression's.
    const linear = { format: 'dpfit-linear-model/1', loss: json.loss, task: json.task === 'classification' && isRecord(json.loss) && json.loss.name === 'squared' ? 'regression' : json.task, theta: json.theta, ...(json.featureNames === undefined ? {} : { featureNames: json.featureNames }), privacy: entry.privacy };
    const verification = verifyClaim(linear, `${source} (node ${entry.node})`, { thetaReleased: false, node: true });
    nodes.push({ node: entry.node, verification });
    problems.push(...verification.problems.map((p) => `node ${entry.node}: ${p}`));
    warnings.push(...verification.warnings.map((w) => `node ${entry.node}: ${w}`));
  });
  problems.push(...nodeListProblems(privacy, privacy.nodes as NodeClaim[], source, secure ? (privacy.aggregation as SecureAggregationClaim) : undefined));
  const worst = nodes.reduce((a, b) => ((b.verification.verified?.epsilon ?? Infinity) > (a.verification.verified?.epsilon ?? Infinity) ? b : a));
  return Object.freeze({
    holds: problems.length === 0 && nodes.every((n) => n.verification.holds),
    format: FEDERATED_FORMAT,
    verified: worst.verification.verified,
    claimed: worst.verification.claimed,
    problems: Object.freeze(problems),
    warnings: Object.freeze([...new Set(warnings)]),
    nodes: Object.freeze(nodes),
    node: worst.node,
  });
}

/**
 * The nodes a federated model says took part (`privacy.nodeNames`, absent from files written before nodes were named, and the
 * `privacy.summary` sentence, `local-per-node.ts`) against the blocks it carries in
 * `privacy.nodes`: a node named without its block hides what that node's records cost.
 */
function nodeListProblems(privacy: Record<string, unknown>, blocks: readonly NodeClaim[], source: string, aggregation?: SecureAggregationClaim): string[] {
  const problems: string[] = [];
  const present = blocks.map((b) => String(b.node));
  const listed = privacy.nodeNames;
  if (listed !== undefined) {
    if (!Array.isArray(listed) || !listed.every((name) => typeof name === 'string')) {
      throw new DataFormatError(source, "is not a valid dpfit model: privacy.nodeNames must be the list of the names of the nodes that took part");
    }
    for (const name of listed) {
      if (!present.includes(name)) problems.push(`privacy.nodeNames lists node ${name}, but privacy.nodes has no block for it: every node that took part carries its own report (a removed block hides what that node's records cost)`);
    }
    for (const name of present) if (!listed.includes(name)) problems.push(`privacy.nodes has a block for node ${name}, which privacy.nodeNames does not list`);
  }
  const expected = aggregation === undefined ? localPerNodeSummary(blocks) : secureAggregationSummary(blocks, aggregation);
  if (typeof privacy.summary !== 'string') {
    problems.push("privacy.summary is missing: the model's own description of the nodes that took part and what each claims");
  } else if (privacy.summary !== expected) {
    problems.push(`privacy.summary does not describe privacy.nodes (a node's block removed, or a claim edited): it reads "${privacy.summary}", the blocks give "${expected}"`);
  }
  return problems;
}

const VERIFY_MODEL_OPTIONS = optionNames<VerifyModelOptions>({ source: true });

/**
 * Reads a model file's JSON (already parsed) and checks its privacy claim. Throws
 * `DataFormatError` when the file is not a well-formed dpfit model.
 */
export function verifyModel(json: unknown, options: VerifyModelOptions = {}): ModelVerification {
  rejectUnknownOptions(options, VERIFY_MODEL_OPTIONS, 'verifyModel');
  const source = options.source ?? 'model';
  if (!isRecord(json)) throw new DataFormatError(source, `is not a dpfit model (a JSON object with a "format"), got ${Array.isArray(json) ? 'an array' : json === null ? 'null' : typeof json}`);
  if (json.format === FEDERATED_FORMAT) return verifyFederatedModel(json, source);
  return verifyClaim(json, source, { thetaReleased: true, node: false });
}

/**
 * The checks of a linear or one-vs-rest model's claim. `thetaReleased`: theta is what the
 * event released (false for a node's report in a federated model, whose theta is the
 * coordinator's iterate: only the report itself is checked).
 */
function verifyClaim(json: Record<string, unknown>, source: string, options: { readonly thetaReleased: boolean; readonly node: boolean }): ModelVerification {
  const format = json.format;
  let model: LinearModel | OneVsRestModel;
  try {
    if (format === 'dpfit-linear-model/1') model = parseModel(json);
    else if (format === 'dpfit-one-vs-rest-model/1') model = parseOneVsRestModel(json);
    else throw new DataFormatError(source, `is not a dpfit model: format must be 'dpfit-linear-model/1' or 'dpfit-one-vs-rest-model/1', got ${JSON.stringify(format) ?? 'none'}`);
  } catch (error) {
    malformed(source, error);
  }

  const problems: string[] = [];
  const warnings: string[] = [];
  // A federated node's block is checked here as a linear model's privacy; its file's own fields and loss by verifyFederatedModel.
  if (!options.node) {
    const fields = model.format === 'dpfit-one-vs-rest-model/1' ? ONE_VS_REST_FIELDS : MODEL_FIELDS;
    problems.push(...extraFieldProblems(json, fields, '', `a ${model.format} file holds`), ...schemaProblems(json.schema));
    if (model.format === 'dpfit-linear-model/1') problems.push(...lossProblems(json.loss, 'loss'));
  }
  if (model.format === 'dpfit-one-vs-rest-model/1') {
    (json.models as unknown[]).forEach((m, k) => {
      if (isRecord(m) && m.privacy !== undefined && m.privacy !== null) {
        problems.push(`models[${k}] carries its own privacy block: a one-vs-rest release has one privacy block for the whole release (all ${model.models.length} models)`);
      }
      problems.push(...extraFieldProblems(m, CLASS_MODEL_FIELDS, `models[${k}]`, 'a class model holds'));
      if (isRecord(m)) problems.push(...lossProblems(m.loss, `models[${k}].loss`));
    });
  }

  const report = model.privacy;
  if (report === undefined) {
    problems.unshift('the file has no privacy block: nothing says what this model cost, so no guarantee can be verified (treat it as NOT private)');
    return Object.freeze({ holds: false, format: model.format, verified: null, claimed: null, problems: Object.freeze(problems), warnings: Object.freeze([...new Set(warnings)]) });
  }
  problems.push(...reportFieldProblems(json.privacy as Record<string, unknown>));

  let event: DpEvent;
  try {
    event = parseEvent(report.event, 'privacy.event');
  } catch (error) {
    malformed(source, error);
  }
  const claimed: GuaranteeSummary = {
    epsilon: report.epsilon,
    delta: report.delta,
    accountant: report.accountant ?? 'unknown',
    guarantee: report.guarantee,
    neighboringRelation: report.neighboringRelation ?? 'unknown',
  };
  const facts = eventFacts(event);
  const conditions: GuaranteeCondition[] = [];
  problems.push(...datasetSizeProblems((report as { readonly datasetSize?: unknown }).datasetSize, event, facts.nonPrivate));
  if (model.format === 'dpfit-one-vs-rest-model/1' && !facts.nonPrivate) {
    const short = runCountProblem(event, model.models.length);
    if (short !== undefined) problems.push(short);
  }

  // ---- the delta the event is accounted at (RGM: the RDP part of delta; the PTR part checked apart)
  const extra = report as PrivacyReport & {
    readonly ptr?: { readonly epsilon?: unknown; readonly delta?: unknown; readonly threshold?: unknown; readonly passed?: unknown };
    readonly deltaComponents?: { readonly rdp?: unknown; readonly ptr?: unknown };
  };
  let accountDelta = report.delta;
  if (extra.deltaComponents !== undefined || extra.ptr !== undefined) {
    const rdpPart = extra.deltaComponents?.rdp;
    const ptrPart = extra.deltaComponents?.ptr;
    const ptr = extra.ptr;
    const isProbability = (v: unknown): v is number => typeof v === 'number' && v > 0 && v < 1;
    if (!isProbability(rdpPart) || !isProbability(ptrPart) || ptr === undefined || !isProbability(ptr.delta) || typeof ptr.epsilon !== 'number' || !(ptr.epsilon > 0) || typeof ptr.threshold !== 'number') {
      problems.push('privacy.deltaComponents {rdp, ptr} and privacy.ptr {epsilon, delta, threshold} must be given together, with deltas in (0, 1) and epsilon > 0 (a Propose-Test-Release release)');
    } else {
      accountDelta = rdpPart;
      if (!(Math.abs(report.delta - (rdpPart + ptrPart)) <= EPSILON_SLACK * report.delta)) {
        problems.push(`privacy.delta = ${fmt(report.delta)} is not deltaComponents.rdp + deltaComponents.ptr = ${fmt(rdpPart + ptrPart)}`);
      }
      if (ptr.passed !== undefined && ptr.passed !== true) {
        problems.push(`privacy.ptr.passed = ${quoted(ptr.passed)}, but a model is released only when the Propose-Test-Release test passes`);
      }
      if (ptr.delta !== ptrPart) problems.push(`privacy.ptr.delta = ${fmt(ptr.delta)} is not deltaComponents.ptr = ${fmt(ptrPart)}`);
      const needed = Math.log(1 / ptr.delta) / ptr.epsilon;
      if (!(ptr.threshold >= needed * (1 - EPSILON_SLACK))) {
        problems.push(`privacy.ptr.threshold = ${fmt(ptr.threshold)} is below log(1/delta_ptr)/epsilon_ptr = ${fmt(needed)}: the test does not bound the chance that an unsafe dataset passes by delta_ptr`);
      }
      // The test's noise is in the event (discrete Laplace, noise multiplier >= 1/epsilon_ptr).
      // Its noise multiplier is 1/epsilon_ptr rounded up to whole grid steps (>= 1024 of them: < 0.1 %).
      if (facts.laplaceNoiseMultipliers.length === 1) {
        const eventEpsilon = 1 / facts.laplaceNoiseMultipliers[0];
        if (eventEpsilon > ptr.epsilon * (1 + EPSILON_SLACK) || ptr.epsilon > eventEpsilon * 1.01) {
          problems.push(`privacy.ptr.epsilon = ${fmt(ptr.epsilon)} is not the epsilon of the test's Laplace noise in the event (${fmt(eventEpsilon)}): the threshold must be computed with the test's own epsilon`);
        }
      } else {
        problems.push("privacy.ptr is given but the event has no single Laplace test (a Propose-Test-Release event is compose([laplace, ...]))");
      }
    }
  }

  // ---- epsilon by dpfit's accountants
  let verifiedEpsilon: number;
  let verifiedAccountant: string;
  let accountantGuarantee: GuaranteeKind = containsConjecture(event) ? 'conjecture' : 'proven';
  let accounted: Accounted | undefined;
  if (facts.nonPrivate) {
    verifiedEpsilon = Infinity;
    verifiedAccountant = 'none';
  } else if (!(accountDelta > 0 && accountDelta < 1)) {
    verifiedEpsilon = Infinity;
    verifiedAccountant = 'none';
    warnings.push(`no accountant bounds epsilon at delta = ${fmt(accountDelta)} for this event`);
  } else {
    accounted = accountEvent(event, accountDelta, report.accountant);
    if (accounted.best === undefined) {
      verifiedEpsilon = Infinity;
      verifiedAccountant = 'none';
      problems.push(`no dpfit accountant supports the event (${accounted.unsupported})`);
    } else {
      verifiedEpsilon = accounted.best.epsilon;
      verifiedAccountant = accounted.best.accountant;
      accountantGuarantee = weakerGuarantee(accountantGuarantee, accounted.best.guarantee);
    }
  }
  if (!(report.epsilon >= verifiedEpsilon * (1 - EPSILON_SLACK))) {
    problems.push(
      `privacy.epsilon = ${fmt(report.epsilon)} is below what the event costs at delta = ${fmt(accountDelta)}: ${fmt(verifiedEpsilon)} by the ${verifiedAccountant} accountant (the epsilon, the delta or the event was changed)`,
    );
  } else if (accounted?.best !== undefined && Number.isFinite(report.epsilon)) {
    // The claim must be what the accountant it names gives for this event: a larger number means
    // the event is not the one the epsilon was computed for (e.g. its noise was raised afterwards).
    const named = (report.accountant !== undefined ? accounted.results.get(report.accountant) : undefined) ?? accounted.best;
    if (report.epsilon > named.epsilon * (1 + REPRODUCTION_SLACK) + Number.MIN_VALUE) {
      problems.push(
        `privacy.epsilon = ${fmt(report.epsilon)} is not what the ${named.accountant} accountant gives for the event (${fmt(named.epsilon)}): the event (or the delta) is not the one this epsilon was computed for: changed after training?`,
      );
    }
  }
  problems.push(...subClaimProblems(report, accounted));

  // ---- neighbouring relation: the one the event's release has (`releaseRelation`), not the file's word
  let eventRelation: NeighboringRelation | undefined;
  try {
    eventRelation = neighboringRelationOf(event);
  } catch (error) {
    if (!(error instanceof UnsupportedEventError)) throw error;
    problems.push(`the event mixes neighbouring relations: ${error.message}`);
  }
  const implied = releaseRelation(event);
  const carried = eventRelation === undefined || eventRelation === 'relativeToSensitivity' ? undefined : eventRelation;
  if (report.neighboringRelation === undefined || report.neighboringRelation === 'relativeToSensitivity') {
    problems.push("privacy.neighboringRelation must say which relation the guarantee holds under ('addOrRemoveOne' or 'replaceOne')");
  } else if (implied !== undefined && implied !== report.neighboringRelation) {
    problems.push(`privacy.neighboringRelation = '${report.neighboringRelation}' but the event's release holds under '${implied}': ${RELATION_REASONS[implied]}`);
  } else if (carried !== undefined && carried !== report.neighboringRelation) {
    problems.push(`privacy.neighboringRelation = '${report.neighboringRelation}' but the event holds under '${carried}'`);
  }
  if (implied !== undefined && carried !== undefined && carried !== implied) {
    // Cannot happen for an event that parses (the accountants' relation comes from the same parts): said, not assumed.
    problems.push(`the accountants give the event the relation '${carried}' but its release is '${implied}' (${RELATION_REASONS[implied]})`);
  }
  const verifiedRelation = implied ?? carried ?? report.neighboringRelation ?? 'unknown';

  // ---- the stated grid: what the event implies, and theta where theta is the grid value
  const thetas = !options.thetaReleased ? [] : model.format === 'dpfit-one-vs-rest-model/1' ? model.models.map((m) => m.theta) : [model.theta];
  problems.push(...gridProblems(event, report, thetas));

  // ---- what holds
  if (accountantGuarantee === 'conjecture') conditions.push({ level: 'conjecture', reason: 'the accountant bounds this event through a conjecture (amplification by shuffling in shuffled SGD, unproven), not a theorem' });
  const secure = secureDescription();
  if (report.randomness !== secure) {
    conditions.push({
      level: 'none',
      reason: report.randomness === undefined
        ? 'the report does not state its randomness: only noise from the secure generator is private'
        : `the noise came from '${report.randomness}', not the secure generator: whoever can regenerate it can remove it, so this release is NOT private`,
    });
  }
  if (facts.continuous.length > 0) {
    conditions.push({ level: 'none', reason: `the event has continuous floating-point noise (${[...new Set(facts.continuous)].join(', ')} without "discrete": true), which floating-point attacks can tell apart (Mironov 2012): no guarantee is proven for it` });
  } else if (facts.noisy && !facts.nonPrivate && !(typeof report.granularity === 'number' && Number.isInteger(Math.log2(report.granularity)))) {
    conditions.push({ level: 'none', reason: 'the report states no power-of-two grid (granularity) for its discrete noise: no guarantee is proven without it' });
  }
  if (facts.nonPrivate || verifiedEpsilon === Infinity || report.epsilon === Infinity) conditions.push({ level: 'none', reason: 'epsilon is infinite: this model is NOT private' });
  if (facts.unpaidObjectivePerturbation) conditions.push({ level: 'none', reason: OBJECTIVE_PERTURBATION_NOT_PRIVATE });
  const glmSensitivity = facts.relativeGaussian && extra.ptr === undefined ? glmRelativeSensitivityProblem(json, report, event) : undefined;
  if (glmSensitivity !== undefined && glmSensitivity !== 'none') problems.push(glmSensitivity);
  if (facts.relativeGaussian && extra.ptr === undefined && glmSensitivity === undefined) {
    conditions.push({
      level: 'none',
      reason: "the event has Relative Gaussian noise but the report has no Propose-Test-Release part (privacy.ptr, privacy.deltaComponents): RGM's relative sensitivity holds only on datasets that pass the test",
    });
  }
  const schema = (json as { schema?: unknown }).schema;
  if (isRecord(schema) && schema.provenance === SUGGESTED_PROVENANCE) {
    conditions.push({ level: 'none', reason: `the embedded schema's provenance is '${SUGGESTED_PROVENANCE}': its bounds and categories were read from the private data, so this model is NOT private` });
  }
  for (const warning of report.warnings ?? []) {
    for (const { pattern, level } of LOWERING_WARNINGS) if (pattern.test(warning)) conditions.push({ level, reason: warning });
  }
  let derived: GuaranteeKind = 'proven';
  for (const c of conditions) derived = weakerGuarantee(derived, c.level);
  if (weakerGuarantee(report.guarantee, derived) !== report.guarantee) {
    const why = conditions.filter((c) => weakerGuarantee(c.level, report.guarantee) === c.level && c.level !== report.guarantee).map((c) => c.reason);
    problems.push(`privacy.guarantee = '${report.guarantee}' is stronger than what holds ('${derived}'): ${why[0] ?? conditions[0]?.reason}`);
  }
  const verified: GuaranteeSummary = {
    epsilon: verifiedEpsilon,
    delta: report.delta,
    accountant: verifiedAccountant,
    // A claim weaker than what the event allows stands (the report knows conditions the file does not show).
    guarantee: weakerGuarantee(derived, report.guarantee),
    neighboringRelation: verifiedRelation,
  };
  const reasons = conditions.map((c) => c.reason);
  return Object.freeze({
    holds: problems.length === 0,
    format: model.format,
    verified: Object.freeze(verified),
    claimed: Object.freeze(claimed),
    problems: Object.freeze(problems),
    warnings: Object.freeze([...new Set([...reasons, ...warnings, ...(report.warnings ?? [])])]),
  });
}

/** One line for people: whether the claim holds, and the guarantee that does. */
export function describeVerification(result: ModelVerification): string {
  if (result.claimed === null || result.verified === null) return 'WARNING: the model has no privacy block: nothing says what it cost; treat it as NOT private';
  const c = result.claimed;
  const short = (v: number) => (Number.isFinite(v) ? String(Number(v.toPrecision(6))) : String(v));
  const claim = `(epsilon = ${short(c.epsilon)}, delta = ${short(c.delta)}) ${c.guarantee}${result.nodes === undefined ? '' : ` for each node's own records (local DP, ${result.nodes.length} nodes; the largest: ${result.node})`}`;
  if (!result.holds) return `WARNING: the model's privacy claim ${claim} DOES NOT HOLD: ${result.problems[0]}${result.problems.length > 1 ? ` (and ${result.problems.length - 1} more problem${result.problems.length > 2 ? 's' : ''}: dpfit verify)` : ''}`;
  return `privacy: ${claim} — verified${result.verified.guarantee === 'none' ? ' (no privacy guarantee: NOT private)' : ''}`;
}
