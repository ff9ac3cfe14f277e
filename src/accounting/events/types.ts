/**
 * The DpEvent algebra (docs/design.md, "The one idea: events, not numbers"): the kinds of event
 * and their fields.
 *
 * A DpEvent describes *what a private computation released*, never what it cost: accountants
 * (RDP, PLD, pure DP) turn events into guarantees. Events are immutable plain objects whose JSON
 * form is dpfit's public input format (`dpfit epsilon --event JSON`). The rest of the algebra
 * stands beside this file: `constructors.ts` (validated, frozen), `json.ts` (`eventToJson`,
 * `parseEvent`), `depth.ts` (the nesting limit every walk relies on), `tree.ts` (sub-events,
 * searches, canonical keys), `multiset.ts` (a composition as distinct releases with counts) and
 * `description.ts` (a short text for titles).
 */
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
   * (`../discrete-coupling.ts`): it is the continuous Gaussian mechanism with multiplier
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
   * accountants use RGM with baseline baselineStd sqrt(1 - 64/s_b^2) (`../discrete-coupling.ts`).
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
   * (`../discrete-coupling.ts`, "Scope": the guarantee of the exact minimiser for the coupled
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

/**
 * ONE record selected with data-independent probabilities w_1..w_n (sum 1, each w_i <= maxWeight
 * = c < 1), then the inner event run on it (replace-one adjacency): `004` Lemma 4.1 / Thm. 4.2
 * (non-uniform subsampling), accounted by the RDP accountant (`rdp/non-uniform-sampling.ts`).
 * The weights must be public: the same on neighbouring datasets. c >= 1/n follows from the sum.
 */
export interface NonUniformSampledEvent {
  readonly kind: 'nonUniformSampled';
  readonly maxWeight: number;
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
 * mixture over positions (`accounting/rdp/amplification-by-iteration.ts`). Several epochs:
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
  | NonUniformSampledEvent
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
  'nonUniformSampled',
  'compose',
  'selfCompose',
  'repeatAndSelect',
  'shuffledSgdConjecture',
  'shuffledLastIterate',
  'nonPrivate',
  'noOp',
]);

/**
 * The fields of each kind, in a fixed order (its JSON form without `kind`): what `parseEvent`
 * accepts and, without the sub-events, what a canonical key (`eventKey`) covers.
 */
export const EVENT_FIELDS: Readonly<Record<DpEventKind, readonly string[]>> = Object.freeze({
  gaussian: ['noiseMultiplier', 'discrete', 'gridNoiseStd'],
  laplace: ['noiseMultiplier', 'discrete', 'gridScale'],
  randomizedResponse: ['noiseParameter', 'numBuckets'],
  relativeGaussian: ['eta', 'gamma', 'dimension', 'baselineStd', 'rRel', 'discrete', 'gridBaselineStd'],
  objectivePerturbation: ['noiseStd', 'lipschitz', 'smoothness', 'regularization', 'discrete', 'gridNoiseStd'],
  poissonSampled: ['samplingProbability', 'event'],
  sampledWithoutReplacement: ['sourceDatasetSize', 'sampleSize', 'event'],
  nonUniformSampled: ['maxWeight', 'event'],
  compose: ['events'],
  selfCompose: ['count', 'event'],
  repeatAndSelect: ['event', 'mean', 'shape'],
  shuffledSgdConjecture: ['datasetSize', 'noiseMultiplier', 'epochs', 'fraction', 'constant'],
  shuffledLastIterate: ['datasetSize', 'stepsPerEpoch', 'noiseMultiplier', 'shiftGrowth'],
  nonPrivate: [],
  noOp: [],
});
