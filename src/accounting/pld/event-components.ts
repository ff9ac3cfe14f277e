/**
 * From a DpEvent to the multiset of mechanisms the PLD accountant composes: one function per
 * kind (docs/design.md), nested compositions flattened and counts multiplied, identical mechanisms
 * merged so that each is discretised and transformed once. The whole event is checked before
 * anything is computed; an unsupported sub-event raises UnsupportedEventError naming it.
 *
 * Supported: continuous Gaussian and Laplace, randomized response, objective perturbation
 * (`003` Lemma D.6), Poisson subsampling (add/remove) of a Gaussian or Laplace (or of a
 * non-private release), nested Poisson subsampling (rates multiply), sampling without replacement
 * (replace-one) of a Gaussian, Laplace or non-private release (`models/without-replacement-model.ts`: the
 * symmetrised PLD of Dong, Roth & Su 2022, Thm. 4.2, one model for both orders), compositions. Discrete noise:
 * a gridded discrete Gaussian (`gridNoiseStd`) and a gridded objective perturbation are their
 * continuous surrogates of the smoothing coupling (`../discrete-coupling.ts`: the continuous
 * Gaussian pair at z_eff = z sqrt(1 - 64/s^2), a valid dominating pair up to a factor e^{+-1e-500}
 * that the accountant's final rounding absorbs); the discrete Laplace, an epsilon-DP mechanism
 * with epsilon = 1/z (exact for integer shifts), gets the pure-DP dominating pair
 * (`models/pure-dp-pair.ts`, Kairouz, Oh & Viswanath 2015). Not supported, with the reason in the error:
 * discrete Gaussian noise or objective perturbation whose grid std is not recorded, the relative
 * Gaussian mechanism (RDP-only), sampling without replacement of other releases (no symmetric
 * dominating pair known), non-uniform sampling of one record (`004` Thm. 4.2, RDP-only), private
 * selection, the shuffled-SGD conjecture.
 */
import { UnsupportedEventError } from '../../errors.js';
import { continuousSurrogate } from '../discrete-coupling.js';
import type { DpEvent } from '../events/types.js';
import { requireEventDepth } from '../events/depth.js';
import { eventKey, flattenPoissonSampling } from '../events/tree.js';
import { pureEpsilon } from '../pure-dp.js';
import { gaussianPair, laplacePair, type AdditivePair } from './models/additive-pair.js';
import { gaussianLossModel } from './models/gaussian-model.js';
import type { PrivacyLossModel } from './models/loss-model.js';
import { objectivePerturbationLossModel } from './models/objective-perturbation.js';
import { poissonSubsampledModel } from './models/poisson-model.js';
import { pureDpLossModels } from './models/pure-dp-pair.js';
import { atomicLossModel, randomizedResponseLossModel } from './models/randomized-response-model.js';
import { isSymmetricInner, withoutReplacementLossModels } from './models/without-replacement-model.js';

/** One mechanism with its total count in the composition. */
export interface PldComponent {
  /** Identifies the mechanism (equal keys are the same mechanism). */
  readonly key: string;
  readonly count: number;
  /** Builds its loss models: `add` only when the add direction's PLD differs from remove's. */
  readonly models: () => { remove: PrivacyLossModel; add?: PrivacyLossModel };
  /**
   * For a continuous Gaussian (q = 1) or a Poisson-subsampled one (0 < q < 1): its parameters,
   * so that long schedules can be grouped (`schedule-buckets.ts`).
   */
  readonly sampledGaussian?: { readonly q: number; readonly z: number };
}

/** The loss models of a continuous Gaussian with noise multiplier z, Poisson-subsampled with rate q (q = 1: not subsampled). */
export function sampledGaussianModels(q: number, z: number): { remove: PrivacyLossModel; add?: PrivacyLossModel } {
  if (q >= 1) return { remove: gaussianLossModel(z) };
  const pair = gaussianPair(z);
  return { remove: poissonSubsampledModel(pair, q, 'remove'), add: poissonSubsampledModel(pair, q, 'add') };
}

export interface PldEventSummary {
  readonly components: readonly PldComponent[];
  /** true when a non-private release occurs with count > 0 (epsilon is then infinite). */
  readonly nonPrivate: boolean;
}

const RDP_ONLY =
  "the relative Gaussian mechanism has an RDP guarantee only (000 Thm. 1); no dominating pair is known for it, so the PLD accountant cannot account it: use the RDP accountant";

/** Throws UnsupportedEventError for the first sub-event the PLD accountant cannot handle. */
export function checkPldSupport(event: DpEvent, root: DpEvent = event): void {
  requireEventDepth(event);
  checkSupport(event, root);
}

function checkSupport(event: DpEvent, root: DpEvent): void {
  switch (event.kind) {
    case 'gaussian':
      if (event.discrete && event.gridNoiseStd === undefined) {
        throw new UnsupportedEventError(
          root,
          event,
          'the privacy curve of a discrete Gaussian depends on its std in grid steps: record gridNoiseStd in the event (the PLD accountant then uses the smoothing coupling of accounting/discrete-coupling.ts), or use the RDP accountant (CKS 2020 Thm. 4)',
        );
      }
      return;
    case 'objectivePerturbation':
      if (event.discrete && event.gridNoiseStd === undefined) {
        throw new UnsupportedEventError(root, event, 'objective perturbation with discrete noise is accounted through the smoothing coupling, which needs the std of b in grid steps: record gridNoiseStd in the event');
      }
      return;
    case 'laplace':
    case 'randomizedResponse':
    case 'noOp':
    case 'nonPrivate':
      return;
    case 'relativeGaussian':
      throw new UnsupportedEventError(root, event, RDP_ONLY);
    case 'poissonSampled': {
      const inner = innermost(event);
      if (inner.kind === 'gaussian' || inner.kind === 'laplace') return checkSupport(inner, root);
      if (inner.kind === 'noOp' || inner.kind === 'nonPrivate') return;
      throw new UnsupportedEventError(
        root,
        event,
        `the PLD accountant subsamples only a Gaussian, Laplace or non-private release (a dominating pair of Poisson subsampling is known for those, Zhu, Dong, Wang 2022 Thm. 11), not a ${inner.kind} event`,
      );
    }
    case 'sampledWithoutReplacement': {
      const inner = event.event;
      if (isSymmetricInner(inner)) return checkSupport(inner, root);
      if (inner.kind === 'noOp') return;
      throw new UnsupportedEventError(
        root,
        event,
        `the PLD accountant samples without replacement (replace-one) only a Gaussian, Laplace or non-private release: Dong, Roth & Su 2022 Thm. 4.2 needs the inner release's symmetric dominating pair, which is not implemented for a ${inner.kind} event: use the RDP accountant`,
      );
    }
    case 'nonUniformSampled':
      throw new UnsupportedEventError(
        root,
        event,
        "one record sampled with non-uniform weights (004 Thm. 4.2) is proven in RDP only; no dominating pair is implemented for it (Dong, Roth & Su's, for sampling without replacement, assumes uniform weights): use the RDP accountant",
      );
    case 'repeatAndSelect':
      throw new UnsupportedEventError(root, event, 'private selection (Papernot & Steinke 2022) is analysed in RDP only: use the RDP accountant');
    case 'shuffledLastIterate':
      throw new UnsupportedEventError(root, event, 'amplification by iteration (Feldman et al. 2018) is a Renyi-divergence argument without a privacy loss distribution: use the RDP accountant');
    case 'shuffledSgdConjecture':
      throw new UnsupportedEventError(root, event, '004 Conj. 1-2 is an RDP conjecture without a privacy loss distribution: use the RDP accountant (with allowConjecture)');
    case 'compose':
      for (const e of event.events) checkSupport(e, root);
      return;
    case 'selfCompose':
      checkSupport(event.event, root);
      return;
  }
}

/** Follows nested Poisson subsampling down to the subsampled release. */
function innermost(event: DpEvent & { kind: 'poissonSampled' }): DpEvent {
  let e: DpEvent = event;
  while (e.kind === 'poissonSampled') e = e.event;
  return e;
}

function additivePair(event: DpEvent): AdditivePair {
  if (event.kind === 'gaussian') return gaussianPair(event.noiseMultiplier);
  if (event.kind === 'laplace') return laplacePair(event.noiseMultiplier);
  throw new Error(`internal error: no additive pair for ${event.kind}`);
}

/**
 * Poisson subsampling (rate q) of a non-private release: remove direction P = q (point mass where
 * Q = 0) + (1 - q) Q, loss +infinity with mass q and log(1 - q) with mass 1 - q; add direction:
 * loss -log(1 - q) with mass 1.
 */
function subsampledNonPrivate(q: number): { remove: PrivacyLossModel; add?: PrivacyLossModel } {
  if (q >= 1) return { remove: atomicLossModel('NonPrivate', [], 1) };
  const name = `PoissonSampled(q = ${q}, NonPrivate)`;
  return {
    remove: atomicLossModel(`${name}, remove direction`, [{ loss: Math.log1p(-q), mass: 1 - q }], q),
    add: atomicLossModel(`${name}, add direction`, [{ loss: -Math.log1p(-q), mass: 1 }], 0),
  };
}

/**
 * Flattens a (supported) event, composed `count` times, into its mechanisms with counts; call
 * `checkPldSupport` first.
 * Gridded discrete noise enters as its continuous surrogate (`continuousSurrogate`).
 * `bound` 'lower' (the accountant's lower-bound pass) replaces the symmetrised PLD of sampling
 * without replacement, an upper bound only, by the attained mixture pair in both orders
 * (`models/without-replacement-model.ts`, "Lower bounds"); every other mechanism is the same.
 */
export function pldComponents(event: DpEvent, count = 1, bound: 'upper' | 'lower' = 'upper'): PldEventSummary {
  requireEventDepth(event);
  type Entry = { count: number; models: PldComponent['models']; sampledGaussian?: PldComponent['sampledGaussian'] };
  const byKey = new Map<string, Entry>();
  let nonPrivate = false;
  const add = (key: string, count: number, models: PldComponent['models'], sampledGaussian?: PldComponent['sampledGaussian']) => {
    const entry = byKey.get(key);
    const total = (entry?.count ?? 0) + count;
    if (!Number.isSafeInteger(total)) throw new UnsupportedEventError(event, event, `the total number of compositions of ${key} exceeds ${Number.MAX_SAFE_INTEGER}`);
    if (entry === undefined) byKey.set(key, { count: total, models, ...(sampledGaussian === undefined ? {} : { sampledGaussian }) });
    else entry.count = total;
  };
  // An explicit stack (compositions can be wide and deep); each entry is visited once.
  const stack: { e: DpEvent; multiplicity: number }[] = [];
  const walk = (e: DpEvent, multiplicity: number): void => {
    stack.push({ e, multiplicity });
  };
  const visit = (e: DpEvent, multiplicity: number): void => {
    if (multiplicity === 0) return;
    if (!Number.isSafeInteger(multiplicity)) throw new UnsupportedEventError(event, e, `the number of compositions exceeds ${Number.MAX_SAFE_INTEGER}`);
    switch (e.kind) {
      case 'noOp':
        return;
      case 'nonPrivate':
        nonPrivate = true;
        return;
      case 'gaussian': {
        const z = e.noiseMultiplier;
        return add(`gaussian:${z}`, multiplicity, () => ({ remove: gaussianLossModel(z) }), { q: 1, z });
      }
      case 'laplace': {
        const b = e.noiseMultiplier;
        if (e.discrete) {
          const epsilon = pureEpsilon(e); // 1/b rounded up
          return add(`laplaceDiscrete:${b}`, multiplicity, () => pureDpLossModels(epsilon));
        }
        return add(`laplace:${b}`, multiplicity, () => ({ remove: poissonSubsampledModel(laplacePair(b), 1, 'remove') }));
      }
      case 'randomizedResponse': {
        const { noiseParameter: p, numBuckets: k } = e;
        return add(`randomizedResponse:${p}:${k}`, multiplicity, () => ({ remove: randomizedResponseLossModel(p, k) }));
      }
      case 'objectivePerturbation': {
        const key = `objectivePerturbation:${e.noiseStd}:${e.lipschitz}:${e.smoothness}:${e.regularization}`;
        return add(key, multiplicity, () => ({ remove: objectivePerturbationLossModel(e) }));
      }
      case 'poissonSampled': {
        const { samplingProbability: q, event: inner } = flattenPoissonSampling(e);
        if (inner.kind === 'noOp') return;
        if (inner.kind === 'nonPrivate') return add(`poissonSampled:${q}:nonPrivate`, multiplicity, () => subsampledNonPrivate(q));
        if (q >= 1) return walk(inner, multiplicity);
        const innerEvent = inner;
        if (innerEvent.kind === 'laplace' && innerEvent.discrete) {
          const epsilon = pureEpsilon(innerEvent);
          return add(`poissonSampled:${q}:laplaceDiscrete:${innerEvent.noiseMultiplier}`, multiplicity, () => pureDpLossModels(epsilon, q));
        }
        const key = `poissonSampled:${q}:${inner.kind}:${(inner as { noiseMultiplier: number }).noiseMultiplier}`;
        const sampledGaussian = innerEvent.kind === 'gaussian' ? { q, z: innerEvent.noiseMultiplier } : undefined;
        return add(
          key,
          multiplicity,
          () => {
            const pair = additivePair(innerEvent);
            return { remove: poissonSubsampledModel(pair, q, 'remove'), add: poissonSubsampledModel(pair, q, 'add') };
          },
          sampledGaussian,
        );
      }
      case 'sampledWithoutReplacement': {
        const inner = e.event;
        if (inner.kind === 'noOp') return;
        if (e.sampleSize >= e.sourceDatasetSize) return walk(inner, multiplicity); // the whole dataset: M itself
        if (!isSymmetricInner(inner)) throw new UnsupportedEventError(event, e, `internal error: ${inner.kind} reached pldComponents unchecked`);
        const { sourceDatasetSize: n, sampleSize: m } = e;
        return add(`sampledWithoutReplacement:${n}:${m}:${bound}:${eventKey(inner)}`, multiplicity, () => withoutReplacementLossModels(inner, n, m, bound));
      }
      case 'compose':
        for (let i = e.events.length - 1; i >= 0; i--) walk(e.events[i], multiplicity);
        return;
      case 'selfCompose':
        return walk(e.event, multiplicity * e.count);
      default:
        throw new UnsupportedEventError(event, e, `internal error: ${e.kind} reached pldComponents unchecked`);
    }
  };
  walk(continuousSurrogate(event), count);
  while (stack.length > 0) {
    const { e, multiplicity } = stack.pop()!;
    visit(e, multiplicity);
  }
  const components = [...byKey.entries()].map(([key, entry]) => ({ key, ...entry }));
  return { components, nonPrivate };
}
