/**
 * The DpEvent algebra (docs/design.md, "The one idea: events, not numbers").
 *
 * A DpEvent describes *what a private computation released*, never what it cost: accountants
 * (RDP, PLD, pure DP) turn events into guarantees. Events are immutable plain objects whose JSON
 * form is dpfit's public input format (`dpfit epsilon --event JSON`). Every constructor validates
 * its parameters and throws `InvalidParameterError` naming the field; `parseEvent` does the same
 * for untrusted JSON, with the path of the offending field (`event.events[2].noiseMultiplier`).
 *
 * Depth. Events are trees walked by every accountant, mostly by recursion; an event nested deeper
 * than `MAX_EVENT_DEPTH` (100) is refused with an `InvalidParameterError` naming the path of the
 * first event beyond the limit, by `parseEvent` (before any recursion, also for JSON that is merely
 * deeply nested arrays or objects) and by every public entry point that takes an event
 * (`requireEventDepth`, an iterative walk). See `MAX_EVENT_DEPTH` for why 100.
 */
import { InvalidParameterError } from '../errors.js';
import { optionNames, rejectUnknownOptions, requireInHalfOpen, requireInteger, requireNonNegative, requireOpenUnit, requirePositive, requireProbability } from '../validate.js';

/** Gaussian mechanism: noise std divided by the L2 sensitivity. */
export interface GaussianEvent {
  readonly kind: 'gaussian';
  readonly noiseMultiplier: number;
  /**
   * true when the noise is the discrete Gaussian (Canonne, Kamath, Steinke 2020) on a grid. Its
   * Rényi/zCDP guarantee equals the continuous one (CKS 2020, Thm. 4 and Sec. 4 for products),
   * but its privacy profile differs slightly: without `gridNoiseStd` only the RDP accountant
   * handles it.
   */
  readonly discrete?: boolean;
  /**
   * s: the integer std parameter of the discrete Gaussian in GRID STEPS (>= 16; only with
   * `discrete`); then noiseMultiplier = s / (L2 sensitivity in grid steps). With it every
   * accountant handles the release tightly through the smoothing coupling
   * (`discrete-coupling.ts`): it is the continuous Gaussian mechanism with multiplier
   * z sqrt(1 - 64/s^2), up to a factor e^{+-1e-500}.
   */
  readonly gridNoiseStd?: number;
}

/** Laplace mechanism: scale b divided by the L1 sensitivity. */
export interface LaplaceEvent {
  readonly kind: 'laplace';
  readonly noiseMultiplier: number;
  /** true for the discrete Laplace on a grid (pure DP is the same: epsilon = 1 / noiseMultiplier). */
  readonly discrete?: boolean;
  /**
   * For a ONE-dimensional discrete Laplace: its scale b in grid steps. The rounded query then moves
   * by an integer v <= b / noiseMultiplier steps between neighbours, and the RDP accountant uses
   * the exact Rényi divergence of the discrete Laplace at that shift (`laplaceRdp`), which is within
   * ~1/(3 b v) of the continuous one instead of the looser pure-DP bounds.
   */
  readonly gridScale?: number;
}

/** k-ary randomized response: with probability p answer a uniformly random bucket (of k). */
export interface RandomizedResponseEvent {
  readonly kind: 'randomizedResponse';
  readonly noiseParameter: number;
  readonly numBuckets: number;
}

/**
 * Relative Gaussian Mechanism (`000`, Def. 3), accounted by `000` Thm. 1. When `baselineStd`
 * (sigma) and `rRel` (R_rel of Def. 2) are given, orders whose condition
 * sigma^2 >= gamma eta^-2 [1 - eta (alpha - 1)] R_rel^2 fails have no bound (infinite RDP);
 * without them the producer guarantees sigma^2 >= gamma R_rel^2 / eta^2, valid at every order.
 */
export interface RelativeGaussianEvent {
  readonly kind: 'relativeGaussian';
  readonly eta: number;
  readonly gamma: number;
  readonly dimension: number;
  readonly baselineStd?: number;
  readonly rRel?: number;
  /** true when the noise is exact discrete Gaussian on a grid (only with baselineStd and rRel). */
  readonly discrete?: boolean;
  /**
   * s_b = baselineStd / g, the baseline std in grid steps (>= 16; only with `discrete`): the
   * accountants use RGM with baseline baselineStd sqrt(1 - 64/s_b^2) (`discrete-coupling.ts`).
   */
  readonly gridBaselineStd?: number;
}

/** Objective perturbation for GLMs (`003`, Thm. 3.1 / 3.2): objective = SUM of losses + lambda/2 |theta|^2 + b.theta. */
export interface ObjectivePerturbationEvent {
  readonly kind: 'objectivePerturbation';
  readonly noiseStd: number;
  readonly lipschitz: number;
  readonly smoothness: number;
  readonly regularization: number;
  /** true when b was drawn as exact discrete Gaussian noise on a grid (g K, K ~ discrete Gaussian). */
  readonly discrete?: boolean;
  /**
   * s = noiseStd / g, the std parameter of b in grid steps (>= 16; only with `discrete`): the
   * accountants use the continuous noise std noiseStd sqrt(1 - 64/s^2) of the coupling
   * (`discrete-coupling.ts`, "Scope": the guarantee of the exact minimiser for the coupled
   * continuous noise, which AMP's tolerance pays for).
   */
  readonly gridNoiseStd?: number;
}

/** Poisson subsampling with probability q (add/remove-one adjacency). */
export interface PoissonSampledEvent {
  readonly kind: 'poissonSampled';
  readonly samplingProbability: number;
  readonly event: DpEvent;
}

/** A uniformly random subset of m out of n records (replace-one adjacency). */
export interface SampledWithoutReplacementEvent {
  readonly kind: 'sampledWithoutReplacement';
  readonly sourceDatasetSize: number;
  readonly sampleSize: number;
  readonly event: DpEvent;
}

/** Adaptive composition of the listed events. */
export interface ComposeEvent {
  readonly kind: 'compose';
  readonly events: readonly DpEvent[];
}

/** count-fold adaptive composition of one event. */
export interface SelfComposeEvent {
  readonly kind: 'selfCompose';
  readonly count: number;
  readonly event: DpEvent;
}

/**
 * Private hyperparameter tuning (Papernot & Steinke 2022): run the event a random number K of
 * times and release the best. K is Poisson(mean) when shape is Infinity, and truncated negative
 * binomial with parameter `shape` otherwise (1: geometric, 0: logarithmic).
 */
export interface RepeatAndSelectEvent {
  readonly kind: 'repeatAndSelect';
  readonly event: DpEvent;
  readonly mean: number;
  readonly shape: number;
}

/**
 * The thesis' private SGD with shuffling (`004`, Alg. 1) accounted by its Conjectures 1-2: a
 * CONJECTURE, never a guarantee. Accountants handle it only when the caller opts in, and mark
 * every result derived from it `guarantee: "conjecture"`.
 */
export interface ShuffledSgdConjectureEvent {
  readonly kind: 'shuffledSgdConjecture';
  /** n, the number of records. */
  readonly datasetSize: number;
  /** sigma / L (noise std over clipping norm); Conj. 1 assumes sigma^2 >= 4 L^2. */
  readonly noiseMultiplier: number;
  /** e, the expected number of passes over each record. */
  readonly epochs: number;
  /** tau in (0, 1): the fraction of each shuffled epoch that is processed. */
  readonly fraction: number;
  /** The conjecture's constant C >= 16 (16 is its most optimistic value). */
  readonly constant: number;
}

/**
 * ONE shuffled epoch of noisy SGD (batch size one) whose LAST iterate is released, accounted by
 * amplification by iteration (Feldman, Mironov, Talwar & Thakurta 2018; `004` Sec. 3.3, Thms.
 * 3.5-3.6 and Lemma 3.1), replace-one neighbours. A uniformly random permutation of
 * `datasetSize` = n records is drawn and its first `stepsPerEpoch` = m records are processed; a
 * record processed k-th from the end of the epoch is (alpha, 2 alpha (1 + g k)^2 / (z^2 k))-RDP,
 * z = `noiseMultiplier` (noise std over half the step's sensitivity) and g = `shiftGrowth` >= 0 the
 * per-step growth of the shift that rounding adds (0 in exact arithmetic). The epoch's RDP is the
 * mixture over positions (`accounting/amplification-by-iteration.ts`). Several epochs:
 * selfCompose. Its conditions (a convex, smooth loss and a non-expansive step) are checked by
 * the learner that emits it (`learners/gradient/lattice-sgd.ts`).
 */
export interface ShuffledLastIterateEvent {
  readonly kind: 'shuffledLastIterate';
  /** n: the records permuted. */
  readonly datasetSize: number;
  /** m <= n: the records of the permutation processed (one step each). */
  readonly stepsPerEpoch: number;
  readonly noiseMultiplier: number;
  readonly shiftGrowth: number;
}

/** A release with no privacy at all (infinite epsilon). */
export interface NonPrivateEvent {
  readonly kind: 'nonPrivate';
}

/** A step that releases nothing (zero epsilon). */
export interface NoOpEvent {
  readonly kind: 'noOp';
}

export type DpEvent =
  | GaussianEvent
  | LaplaceEvent
  | RandomizedResponseEvent
  | RelativeGaussianEvent
  | ObjectivePerturbationEvent
  | PoissonSampledEvent
  | SampledWithoutReplacementEvent
  | ComposeEvent
  | SelfComposeEvent
  | RepeatAndSelectEvent
  | ShuffledSgdConjectureEvent
  | ShuffledLastIterateEvent
  | NonPrivateEvent
  | NoOpEvent;

export type DpEventKind = DpEvent['kind'];

export const EVENT_KINDS: readonly DpEventKind[] = Object.freeze([
  'gaussian',
  'laplace',
  'randomizedResponse',
  'relativeGaussian',
  'objectivePerturbation',
  'poissonSampled',
  'sampledWithoutReplacement',
  'compose',
  'selfCompose',
  'repeatAndSelect',
  'shuffledSgdConjecture',
  'shuffledLastIterate',
  'nonPrivate',
  'noOp',
]);

// ---------------------------------------------------------------------------------------------
// Constructors (validated, frozen)

/** The smallest grid noise std (in grid steps) the events accept: the coupling needs s > 8. */
export const MIN_GRID_NOISE_STD = 16;

/**
 * Checks a grid std field: absent, or a finite number >= 16 given together with discrete: true.
 * Returns the fields to store ({} or {discrete: true, [field]: value}).
 */
function gridFields<F extends string>(field: F, value: unknown, discrete: boolean | undefined): { discrete?: true } & Partial<Record<F, number>> {
  if (value === undefined) return (discrete ? { discrete: true } : {}) as { discrete?: true } & Partial<Record<F, number>>;
  if (discrete !== true) {
    throw new InvalidParameterError(field, value, 'absent unless discrete is true (it is the std of exact discrete noise, in grid steps)');
  }
  if (!(typeof value === 'number' && Number.isFinite(value) && value >= MIN_GRID_NOISE_STD)) {
    throw new InvalidParameterError(
      field,
      value,
      `a finite number >= ${MIN_GRID_NOISE_STD} (the noise std in grid steps; the smoothing coupling of accounting/discrete-coupling.ts needs it above 8, and 16 keeps its noise factor sqrt(1 - 64/s^2) >= 0.866)`,
    );
  }
  return { discrete: true, [field]: value } as { discrete?: true } & Partial<Record<F, number>>;
}

const GAUSSIAN_EVENT_OPTIONS = optionNames<NonNullable<Parameters<typeof gaussianEvent>[1]>>({ discrete: true, gridNoiseStd: true });

export function gaussianEvent(noiseMultiplier: number, options: { discrete?: boolean; gridNoiseStd?: number } = {}): GaussianEvent {
  rejectUnknownOptions(options, GAUSSIAN_EVENT_OPTIONS, 'gaussianEvent');
  requirePositive('noiseMultiplier', noiseMultiplier);
  return Object.freeze({ kind: 'gaussian', noiseMultiplier, ...gridFields('gridNoiseStd', options.gridNoiseStd, options.discrete) });
}

const LAPLACE_EVENT_OPTIONS = optionNames<NonNullable<Parameters<typeof laplaceEvent>[1]>>({ discrete: true, gridScale: true });

export function laplaceEvent(noiseMultiplier: number, options: { discrete?: boolean; gridScale?: number } = {}): LaplaceEvent {
  rejectUnknownOptions(options, LAPLACE_EVENT_OPTIONS, 'laplaceEvent');
  requirePositive('noiseMultiplier', noiseMultiplier);
  if (options.gridScale !== undefined) {
    if (options.discrete !== true) throw new InvalidParameterError('gridScale', options.gridScale, 'absent unless discrete is true (it is the scale of exact discrete noise, in grid steps)');
    const b = options.gridScale;
    if (!(typeof b === 'number' && Number.isFinite(b) && b >= 1 && b / noiseMultiplier >= 1)) {
      throw new InvalidParameterError('gridScale', b, `a finite number >= 1 and >= noiseMultiplier (${noiseMultiplier}): a shift of at least one grid step`);
    }
    return Object.freeze({ kind: 'laplace', noiseMultiplier, discrete: true, gridScale: b });
  }
  return Object.freeze(options.discrete ? { kind: 'laplace', noiseMultiplier, discrete: true } : { kind: 'laplace', noiseMultiplier });
}

export function randomizedResponseEvent(noiseParameter: number, numBuckets: number): RandomizedResponseEvent {
  requireProbability('noiseParameter', noiseParameter);
  requireInteger('numBuckets', numBuckets, 2);
  return Object.freeze({ kind: 'randomizedResponse', noiseParameter, numBuckets });
}

const RELATIVE_GAUSSIAN_EVENT_PARAMS = optionNames<NonNullable<Parameters<typeof relativeGaussianEvent>[0]>>({ eta: true, gamma: true, dimension: true, baselineStd: true, rRel: true, discrete: true, gridBaselineStd: true });

export function relativeGaussianEvent(params: {
  eta: number;
  gamma: number;
  dimension: number;
  baselineStd?: number;
  rRel?: number;
  discrete?: boolean;
  gridBaselineStd?: number;
}): RelativeGaussianEvent {
  rejectUnknownOptions(params, RELATIVE_GAUSSIAN_EVENT_PARAMS, 'relativeGaussianEvent');
  const { eta, gamma, dimension, baselineStd, rRel } = params;
  requirePositive('eta', eta);
  requirePositive('gamma', gamma);
  requireInteger('dimension', dimension, 1);
  if ((baselineStd === undefined) !== (rRel === undefined)) {
    throw new InvalidParameterError('baselineStd', baselineStd, 'given together with rRel (or both omitted)');
  }
  const grid = gridFields('gridBaselineStd', params.gridBaselineStd, params.discrete);
  if (baselineStd !== undefined && rRel !== undefined) {
    requirePositive('baselineStd', baselineStd);
    requireNonNegative('rRel', rRel);
    return Object.freeze({ kind: 'relativeGaussian', eta, gamma, dimension, baselineStd, rRel, ...grid });
  }
  if (params.gridBaselineStd !== undefined) {
    throw new InvalidParameterError('gridBaselineStd', params.gridBaselineStd, 'absent unless baselineStd and rRel are given (the coupling reduces the baseline std)');
  }
  return Object.freeze({ kind: 'relativeGaussian', eta, gamma, dimension, ...grid });
}

const OBJECTIVE_PERTURBATION_EVENT_PARAMS = optionNames<NonNullable<Parameters<typeof objectivePerturbationEvent>[0]>>({ noiseStd: true, lipschitz: true, smoothness: true, regularization: true, discrete: true, gridNoiseStd: true });

export function objectivePerturbationEvent(params: {
  noiseStd: number;
  lipschitz: number;
  smoothness: number;
  regularization: number;
  discrete?: boolean;
  gridNoiseStd?: number;
}): ObjectivePerturbationEvent {
  rejectUnknownOptions(params, OBJECTIVE_PERTURBATION_EVENT_PARAMS, 'objectivePerturbationEvent');
  const { noiseStd, lipschitz, smoothness, regularization } = params;
  requirePositive('noiseStd', noiseStd);
  requirePositive('lipschitz', lipschitz);
  requireNonNegative('smoothness', smoothness);
  requirePositive('regularization', regularization);
  if (!(regularization > smoothness)) {
    throw new InvalidParameterError('regularization', regularization, `> smoothness (${smoothness})`, '003 Thm. 3.1 needs lambda > beta');
  }
  const grid = gridFields('gridNoiseStd', params.gridNoiseStd, params.discrete);
  return Object.freeze({ kind: 'objectivePerturbation', noiseStd, lipschitz, smoothness, regularization, ...grid });
}

export function poissonSampledEvent(samplingProbability: number, event: DpEvent): PoissonSampledEvent {
  requireInHalfOpen('samplingProbability', samplingProbability, 0, 1);
  return Object.freeze({ kind: 'poissonSampled', samplingProbability, event });
}

/**
 * Nested Poisson sampling as one: a record kept with probability q1, then with q2, is kept with
 * probability q1 q2 independently of the others, so poissonSampled(q1, poissonSampled(q2, e)) is
 * poissonSampled(q1 q2, e). The product is rounded up (a larger rate is less private: Poisson
 * sampling at q is sampling at q / q' followed by sampling at q', and sampling never hurts), so
 * accounting at the returned rate is an upper bound. Returns the rate and the first event below
 * the chain that is not Poisson sampling.
 */
export function flattenPoissonSampling(event: PoissonSampledEvent): { samplingProbability: number; event: DpEvent } {
  let q = event.samplingProbability;
  let inner = event.event;
  while (inner.kind === 'poissonSampled') {
    const product = q * inner.samplingProbability;
    q = Math.min(1, product + Math.max(product * Number.EPSILON, Number.MIN_VALUE)); // >= the exact product (rounding <= half an ulp, or half the least subnormal)
    inner = inner.event;
  }
  return { samplingProbability: q, event: inner };
}

export function sampledWithoutReplacementEvent(
  sourceDatasetSize: number,
  sampleSize: number,
  event: DpEvent,
): SampledWithoutReplacementEvent {
  requireInteger('sourceDatasetSize', sourceDatasetSize, 1);
  requireInteger('sampleSize', sampleSize, 1, sourceDatasetSize);
  return Object.freeze({ kind: 'sampledWithoutReplacement', sourceDatasetSize, sampleSize, event });
}

/** The events directly inside `event` (none for a mechanism). */
export function childEvents(event: DpEvent): readonly DpEvent[] {
  switch (event.kind) {
    case 'compose':
      return event.events;
    case 'poissonSampled':
    case 'sampledWithoutReplacement':
    case 'selfCompose':
    case 'repeatAndSelect':
      return [event.event];
    default:
      return [];
  }
}

/**
 * true when `test` holds for the event or any event inside it (pre-order, an explicit stack: no
 * recursion, so any depth is safe; `requireEventDepth` still bounds it, which also stops cycles).
 */
export function someEvent(event: DpEvent, test: (e: DpEvent) => boolean): boolean {
  requireEventDepth(event);
  const stack: DpEvent[] = [event];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (test(e)) return true;
    const children = childEvents(e);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Depth

/**
 * The deepest nesting of events accepted anywhere (an event alone has depth 1; compose([e]) has
 * depth 2). Real events are shallow: the deepest dpfit builds is private selection over
 * one-vs-rest DP-SGD, repeatAndSelect(compose(selfCompose(poissonSampled(gaussian)))), about 5
 * levels, and ledgers compose flat lists; 100 is 20 times that, so no real event is refused. It
 * is also far below what the recursive walks survive: parsing and accounting an event of depth
 * 100 passes with a fifth of V8's default stack (`node --stack-size=200`; the walks cost up to
 * ~1.2 KB of stack per level, and ~1,500 levels overflowed the default stack before this limit),
 * which leaves room for callers with deep stacks of their own and browsers with smaller ones. Every public entry point
 * that takes an event checks it first (`requireEventDepth`, iterative) and `parseEvent` checks raw
 * JSON before building anything.
 */
export const MAX_EVENT_DEPTH = 100;

/**
 * Raw JSON may nest objects and arrays at most this deep: an event of depth d nests at most 2d
 * (an object per event, an array per `events` list), so nothing valid is refused, and every value
 * that reaches the field checks is shallow enough for their error messages (which serialise it).
 */
export const MAX_JSON_DEPTH = 2 * MAX_EVENT_DEPTH + 1;

/** A path of at most ~160 characters for messages: the head, the number of levels, the tail. */
function shortPath(path: string, levels: number): string {
  if (path.length <= 160) return path;
  const head = path.slice(0, 70);
  const tail = path.slice(-70);
  const cutHead = Math.max(head.lastIndexOf('.'), head.lastIndexOf('['));
  const cutTail = Math.min(...['.', '['].map((c) => tail.indexOf(c)).filter((i) => i >= 0));
  return `${cutHead > 0 ? head.slice(0, cutHead) : head} ...(${levels} levels)... ${Number.isFinite(cutTail) ? tail.slice(cutTail) : tail}`;
}

/**
 * An event (or JSON) nested deeper than the limit: an `InvalidParameterError` whose `param` is the
 * full path of the first value beyond the limit (`event.events[0].events[0]...`), whose `value` is
 * the depth reached (never the nested value itself, whose serialisation would recurse), and whose
 * message shows the path shortened.
 */
export class EventDepthError extends InvalidParameterError {
  constructor(path: string, depth: number, limit: number, what: 'events' | 'JSON levels') {
    super(path, depth, `nested at most ${limit} ${what} deep (MAX_EVENT_DEPTH = ${MAX_EVENT_DEPTH})`);
    this.message = `${shortPath(path, depth)} must be nested at most ${limit} ${what} deep (MAX_EVENT_DEPTH = ${MAX_EVENT_DEPTH}), got depth ${depth}`;
  }
}

interface WalkFrame {
  readonly value: unknown;
  readonly depth: number;
  readonly parent: WalkFrame | undefined;
  /** The path segment from the parent: '.field' or '[i]' ('' at the root). */
  readonly segment: string;
}

function framePath(root: string, frame: WalkFrame): string {
  const segments: string[] = [];
  for (let f: WalkFrame | undefined = frame; f !== undefined; f = f.parent) segments.push(f.segment);
  return root + segments.reverse().join('');
}

/**
 * Throws `EventDepthError` when `event` nests more than `MAX_EVENT_DEPTH` events (a cycle, possible
 * in an event built in code, counts as too deep). Iterative (an explicit stack), O(size of the
 * event). Returns the event's depth. Every public function that walks an event calls it first.
 */
export function requireEventDepth(event: DpEvent, param = 'event'): number {
  let deepest = 0;
  const stack: WalkFrame[] = [{ value: event, depth: 1, parent: undefined, segment: '' }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > MAX_EVENT_DEPTH) throw new EventDepthError(framePath(param, frame), frame.depth, MAX_EVENT_DEPTH, 'events');
    if (frame.depth > deepest) deepest = frame.depth;
    const e = frame.value as DpEvent;
    if (e === null || typeof e !== 'object') continue;
    if (e.kind === 'compose') {
      if (!Array.isArray(e.events)) continue;
      for (let i = e.events.length - 1; i >= 0; i--) stack.push({ value: e.events[i], depth: frame.depth + 1, parent: frame, segment: `.events[${i}]` });
    } else if ('event' in e && (e.kind === 'poissonSampled' || e.kind === 'sampledWithoutReplacement' || e.kind === 'selfCompose' || e.kind === 'repeatAndSelect')) {
      stack.push({ value: e.event, depth: frame.depth + 1, parent: frame, segment: '.event' });
    }
  }
  return deepest;
}

/**
 * The raw-JSON check of `parseEvent`, before anything recurses: objects (events) nested at most
 * `MAX_EVENT_DEPTH` deep, objects and arrays together at most `MAX_JSON_DEPTH`. Iterative.
 */
function requireJsonDepth(value: unknown, path: string): void {
  interface JsonFrame extends WalkFrame {
    /** Objects on the path to this value, itself included. */
    readonly objects: number;
  }
  if (value === null || typeof value !== 'object') return;
  const stack: JsonFrame[] = [{ value, depth: 1, objects: Array.isArray(value) ? 0 : 1, parent: undefined, segment: '' }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.objects > MAX_EVENT_DEPTH) throw new EventDepthError(framePath(path, frame), frame.objects, MAX_EVENT_DEPTH, 'events');
    if (frame.depth > MAX_JSON_DEPTH) throw new EventDepthError(framePath(path, frame), frame.depth, MAX_JSON_DEPTH, 'JSON levels');
    const v = frame.value;
    const children: [string, unknown][] = Array.isArray(v) ? v.map((c, i) => [`[${i}]`, c]) : Object.entries(v as object).map(([k, c]) => [`.${k}`, c]);
    for (let i = children.length - 1; i >= 0; i--) {
      const [segment, child] = children[i];
      if (child === null || typeof child !== 'object') continue;
      stack.push({ value: child, depth: frame.depth + 1, objects: frame.objects + (Array.isArray(child) ? 0 : 1), parent: frame, segment });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Canonical keys


/**
 * A canonical string for an event: equal keys <=> the same release (the same kind, the same
 * numbers — every field the accountants read, in a fixed order, `discrete: false` the same as
 * absent — and equal sub-events in the same order). Used to group identical sub-events of a
 * composition so that each is accounted once and its count multiplied. Call on events that passed
 * `requireEventDepth` (it recurses through sub-events).
 *
 * @example eventKey(gaussianEvent(1.1)) // 'gaussian(noiseMultiplier=1.1)'
 */
export function eventKey(event: DpEvent): string {
  const record = event as unknown as Record<string, unknown>;
  const parts: string[] = [];
  for (const field of KEY_FIELDS[event.kind]) {
    const value = record[field];
    if (value === undefined || (field === 'discrete' && value === false)) continue;
    parts.push(`${field}=${String(value)}`);
  }
  if (event.kind === 'compose') return `compose[${event.events.map(eventKey).join(',')}]`;
  const children = childEvents(event);
  if (children.length === 1) parts.push(`event=${eventKey(children[0])}`);
  return `${event.kind}(${parts.join(',')})`;
}

export function composeEvent(events: readonly DpEvent[]): ComposeEvent {
  if (!Array.isArray(events)) throw new InvalidParameterError('events', events, 'an array of events');
  return Object.freeze({ kind: 'compose', events: Object.freeze([...events]) });
}

export function selfComposeEvent(event: DpEvent, count: number): SelfComposeEvent {
  requireInteger('count', count, 0);
  return Object.freeze({ kind: 'selfCompose', count, event });
}

export function repeatAndSelectEvent(event: DpEvent, mean: number, shape: number): RepeatAndSelectEvent {
  requirePositive('mean', mean);
  if (!(typeof shape === 'number' && (shape === Infinity || (Number.isFinite(shape) && shape >= 0)))) {
    throw new InvalidParameterError('shape', shape, '>= 0 or Infinity (Poisson)');
  }
  // K >= 1 under the truncated negative binomial, whose mean tends to 1 as its gamma tends to 1.
  if (shape !== Infinity && !(mean > 1)) throw new InvalidParameterError('mean', mean, '> 1 (the number of runs is at least 1)');
  return Object.freeze({ kind: 'repeatAndSelect', event, mean, shape });
}

const SHUFFLED_SGD_CONJECTURE_PARAMS = optionNames<NonNullable<Parameters<typeof shuffledSgdConjectureEvent>[0]>>({ datasetSize: true, noiseMultiplier: true, epochs: true, fraction: true, constant: true });

export function shuffledSgdConjectureEvent(params: {
  datasetSize: number;
  noiseMultiplier: number;
  epochs: number;
  fraction: number;
  constant?: number;
}): ShuffledSgdConjectureEvent {
  rejectUnknownOptions(params, SHUFFLED_SGD_CONJECTURE_PARAMS, 'shuffledSgdConjectureEvent');
  const { datasetSize, noiseMultiplier, epochs, fraction } = params;
  const constant = params.constant ?? 16;
  requireInteger('datasetSize', datasetSize, 2);
  requirePositive('noiseMultiplier', noiseMultiplier);
  requirePositive('epochs', epochs);
  requireOpenUnit('fraction', fraction);
  if (!(typeof constant === 'number' && Number.isFinite(constant) && constant >= 16)) {
    throw new InvalidParameterError('constant', constant, '>= 16 (004 Conj. 1)');
  }
  return Object.freeze({ kind: 'shuffledSgdConjecture', datasetSize, noiseMultiplier, epochs, fraction, constant });
}

export function shuffledLastIterateEvent(params: {
  datasetSize: number;
  stepsPerEpoch: number;
  noiseMultiplier: number;
  shiftGrowth?: number;
}): ShuffledLastIterateEvent {
  const datasetSize = requireInteger('datasetSize', params.datasetSize, 1);
  const stepsPerEpoch = requireInteger('stepsPerEpoch', params.stepsPerEpoch, 1, datasetSize);
  const noiseMultiplier = requirePositive('noiseMultiplier', params.noiseMultiplier);
  const shiftGrowth = params.shiftGrowth ?? 0;
  if (!(typeof shiftGrowth === 'number' && Number.isFinite(shiftGrowth) && shiftGrowth >= 0)) {
    throw new InvalidParameterError('shiftGrowth', shiftGrowth, 'a finite number >= 0');
  }
  return Object.freeze({ kind: 'shuffledLastIterate', datasetSize, stepsPerEpoch, noiseMultiplier, shiftGrowth });
}

export const NON_PRIVATE_EVENT: NonPrivateEvent = Object.freeze({ kind: 'nonPrivate' });
export const NO_OP_EVENT: NoOpEvent = Object.freeze({ kind: 'noOp' });

// ---------------------------------------------------------------------------------------------
// JSON

/** Serialises an event to its public JSON form (Infinity as the string "Infinity"). */
export function eventToJson(event: DpEvent): unknown {
  requireEventDepth(event);
  return JSON.parse(JSON.stringify(event, (_key, value) => (value === Infinity ? 'Infinity' : value)));
}

const FIELDS: Record<DpEventKind, readonly string[]> = {
  gaussian: ['noiseMultiplier', 'discrete', 'gridNoiseStd'],
  laplace: ['noiseMultiplier', 'discrete', 'gridScale'],
  randomizedResponse: ['noiseParameter', 'numBuckets'],
  relativeGaussian: ['eta', 'gamma', 'dimension', 'baselineStd', 'rRel', 'discrete', 'gridBaselineStd'],
  objectivePerturbation: ['noiseStd', 'lipschitz', 'smoothness', 'regularization', 'discrete', 'gridNoiseStd'],
  poissonSampled: ['samplingProbability', 'event'],
  sampledWithoutReplacement: ['sourceDatasetSize', 'sampleSize', 'event'],
  compose: ['events'],
  selfCompose: ['count', 'event'],
  repeatAndSelect: ['event', 'mean', 'shape'],
  shuffledSgdConjecture: ['datasetSize', 'noiseMultiplier', 'epochs', 'fraction', 'constant'],
  shuffledLastIterate: ['datasetSize', 'stepsPerEpoch', 'noiseMultiplier', 'shiftGrowth'],
  nonPrivate: [],
  noOp: [],
};

/** The numeric and flag fields of each kind (its JSON fields without the sub-events): what a canonical key covers. */
const KEY_FIELDS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(Object.entries(FIELDS).map(([kind, fields]) => [kind, fields.filter((f) => f !== 'event' && f !== 'events')]));

/**
 * Parses and validates an event from untrusted JSON (a string or an already-parsed value).
 * Unknown kinds, unknown fields, missing fields and out-of-range values are
 * `InvalidParameterError`s whose `param` is the path of the field.
 */
export function parseEvent(input: unknown, path = 'event'): DpEvent {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch (error) {
      throw new InvalidParameterError(path, truncate(input as string), 'valid JSON', (error as Error).message);
    }
  }
  // Before anything recurses (the walk below, or an error message serialising a nested value).
  requireJsonDepth(value, path);
  return parseChecked(value, path);
}

/** `parseEvent` after the depth check: recursion depth <= MAX_EVENT_DEPTH. */
function parseChecked(value: unknown, path: string): DpEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidParameterError(path, value, 'a JSON object with a "kind" field');
  }
  const record = value as Record<string, unknown>;
  const kind = record.kind;
  if (typeof kind !== 'string' || !(EVENT_KINDS as readonly string[]).includes(kind)) {
    throw new InvalidParameterError(`${path}.kind`, kind, `one of ${EVENT_KINDS.join(', ')}`);
  }
  const allowed = FIELDS[kind as DpEventKind];
  for (const key of Object.keys(record)) {
    if (key !== 'kind' && !allowed.includes(key)) {
      throw new InvalidParameterError(`${path}.${key}`, record[key], `absent (not a field of a ${kind} event; fields: ${allowed.join(', ') || 'none'})`);
    }
  }
  const num = (field: string): number => readNumber(record, field, path);
  const sub = (field: string): DpEvent => parseChecked(required(record, field, path), `${path}.${field}`);
  const optional = (field: string): number | undefined => (record[field] === undefined ? undefined : num(field));
  const discrete = (): boolean => readBoolean(record, 'discrete', path);
  return withPath(path, () => {
    switch (kind as DpEventKind) {
      case 'gaussian':
        return gaussianEvent(num('noiseMultiplier'), { discrete: discrete(), gridNoiseStd: optional('gridNoiseStd') });
      case 'laplace':
        return laplaceEvent(num('noiseMultiplier'), { discrete: discrete(), gridScale: optional('gridScale') });
      case 'randomizedResponse':
        return randomizedResponseEvent(num('noiseParameter'), num('numBuckets'));
      case 'relativeGaussian':
        return relativeGaussianEvent({
          eta: num('eta'),
          gamma: num('gamma'),
          dimension: num('dimension'),
          baselineStd: optional('baselineStd'),
          rRel: optional('rRel'),
          discrete: discrete(),
          gridBaselineStd: optional('gridBaselineStd'),
        });
      case 'objectivePerturbation':
        return objectivePerturbationEvent({
          noiseStd: num('noiseStd'),
          lipschitz: num('lipschitz'),
          smoothness: num('smoothness'),
          regularization: num('regularization'),
          discrete: discrete(),
          gridNoiseStd: optional('gridNoiseStd'),
        });
      case 'poissonSampled':
        return poissonSampledEvent(num('samplingProbability'), sub('event'));
      case 'sampledWithoutReplacement':
        return sampledWithoutReplacementEvent(num('sourceDatasetSize'), num('sampleSize'), sub('event'));
      case 'compose': {
        const events = required(record, 'events', path);
        if (!Array.isArray(events)) throw new InvalidParameterError(`${path}.events`, events, 'an array of events');
        return composeEvent(events.map((e, i) => parseChecked(e, `${path}.events[${i}]`)));
      }
      case 'selfCompose':
        return selfComposeEvent(sub('event'), num('count'));
      case 'repeatAndSelect':
        return repeatAndSelectEvent(sub('event'), num('mean'), num('shape'));
      case 'shuffledSgdConjecture':
        return shuffledSgdConjectureEvent({
          datasetSize: num('datasetSize'),
          noiseMultiplier: num('noiseMultiplier'),
          epochs: num('epochs'),
          fraction: num('fraction'),
          constant: record.constant === undefined ? undefined : num('constant'),
        });
      case 'shuffledLastIterate':
        return shuffledLastIterateEvent({
          datasetSize: num('datasetSize'),
          stepsPerEpoch: num('stepsPerEpoch'),
          noiseMultiplier: num('noiseMultiplier'),
          shiftGrowth: record.shiftGrowth === undefined ? undefined : num('shiftGrowth'),
        });
      case 'nonPrivate':
        return NON_PRIVATE_EVENT;
      case 'noOp':
        return NO_OP_EVENT;
    }
  });
}

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function required(record: Record<string, unknown>, field: string, path: string): unknown {
  if (!(field in record)) throw new InvalidParameterError(`${path}.${field}`, undefined, `present in a ${String(record.kind)} event`);
  return record[field];
}

function readNumber(record: Record<string, unknown>, field: string, path: string): number {
  const value = required(record, field, path);
  if (value === 'Infinity') return Infinity;
  if (typeof value !== 'number') throw new InvalidParameterError(`${path}.${field}`, value, 'a number');
  return value;
}

function readBoolean(record: Record<string, unknown>, field: string, path: string): boolean {
  const value = record[field];
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new InvalidParameterError(`${path}.${field}`, value, 'true or false');
  return value;
}

/** Re-throws a constructor's InvalidParameterError with the JSON path prefixed to its param. */
function withPath<T>(path: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof InvalidParameterError && !error.param.startsWith(path)) {
      throw new InvalidParameterError(`${path}.${error.param}`, error.value, error.expected);
    }
    throw error;
  }
}
