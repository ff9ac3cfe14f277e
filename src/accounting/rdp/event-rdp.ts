/**
 * The RDP curve of any DpEvent on a grid of orders: one function per kind, dispatched on `kind`
 * (docs/design.md: no isinstance chains). Composition adds curves (Mironov 2017, Prop. 1), k-fold
 * self-composition multiplies by k. Subsampled events use the exact Poisson-subsampled Gaussian
 * (Mironov, Talwar, Zhang 2019) when the inner event is a continuous Gaussian, and the general
 * bounds of Zhu & Wang 2019 (Poisson) and Wang, Balle, Kasiviswanathan 2019 (without replacement,
 * `004` Thm. 3.2) otherwise; sampling without replacement of a Gaussian also gets the tighter
 * Gaussian-specific bound derived in `without-replacement.ts`. One record sampled with public
 * weights <= c (`004` Thm. 4.2) gets the same two bounds with gamma = c (`non-uniform-sampling.ts`).
 *
 * Discrete noise (Canonne, Kamath, Steinke 2020, CKS). An unsampled discrete Gaussian keeps the
 * continuous curve alpha / (2 z^2) (CKS Thm. 4, no correction). A Poisson-subsampled gridded one
 * (`gridNoiseStd` recorded) gets the smaller of the EXACT subsampled-Gaussian curve at the
 * coupling's z_eff = z sqrt(1 - 64/s^2) (`../discrete-coupling.ts`, whose correction of order
 * 1e-514 the accountant's final nextUp absorbs) and the general Zhu-Wang bound on CKS's curve;
 * without a grid std only the latter. Gridded objective perturbation and RGM are accounted as
 * their continuous surrogates (`continuousSurrogate`); discrete ones without a grid std have no
 * theorem here and are refused.
 *
 * The whole event is checked (`checkRdpSupport`) before any curve is computed, so an unsupported
 * sub-event raises `UnsupportedEventError` naming it before an accountant changes state.
 *
 * Compositions are multisets (`../events/multiset.ts`): identical sub-events are accounted once and
 * their curve multiplied by their count, so compose([e] * k) costs and equals selfCompose(e, k).
 * Many distinct Poisson-subsampled Gaussian steps (a noise or sampling schedule) are bounded by
 * chords on a fine grid (`sampled-gaussian-schedule.ts`): a valid upper bound, measured 1e-7 to
 * 1e-5 (relative) above the step-by-step sum at the orders that decide DP-SGD's epsilon, at most
 * ~7e-4 at large orders. The exported functions check the depth of the event first
 * (`requireEventDepth`); the walks below recurse at most MAX_EVENT_DEPTH levels.
 */
import { InvalidParameterError, UnsupportedEventError } from '../../errors.js';
import { continuousSurrogate, couplingReducedNoise } from '../discrete-coupling.js';
import { accountedNoiseMultiplier } from '../extreme-noise.js';
import { addCompositionAtoms, type CompositionAtom } from '../events/multiset.js';
import type { DpEvent } from '../events/types.js';
import { poissonSampledEvent } from '../events/constructors.js';
import { requireEventDepth } from '../events/depth.js';
import { flattenPoissonSampling } from '../events/tree.js';
import { relativeGaussianRdpOrInfinity } from './relative-gaussian.js';
import { gaussianRdp, laplaceRdp, objectivePerturbationRdp, randomizedResponseRdp } from './base-mechanisms.js';
import { poissonGaussianRdpCurve } from './subsampling/poisson-gaussian.js';
import { poissonSubsampledRdp } from './subsampling/poisson-general.js';
import type { RdpCurve } from './series.js';
import { repeatAndSelectRdp } from './repeat-and-select.js';
import { DEFAULT_SCHEDULE_GRID, SampledGaussianSchedule, type ScheduleStep } from './sampled-gaussian-schedule.js';
import { shuffledSgdConjectureCoefficient } from './shuffled-conjecture.js';
import { shuffledLastIterateEventRdp } from './amplification-by-iteration.js';
import { withoutReplacementGaussianRdpCurve, withoutReplacementRdp } from './subsampling/without-replacement.js';
import { nonUniformSampledGaussianRdpCurve, nonUniformSampledRdp } from './subsampling/non-uniform-sampling.js';

export interface RdpOptions {
  /** Account `shuffledSgdConjecture` events (results are then a conjecture, not a guarantee). */
  readonly allowConjecture?: boolean;
  /**
   * Grid points per doubling of the noise multiplier (and sampling probability) for the chord
   * bounds of long heterogeneous DP-SGD schedules (`sampled-gaussian-schedule.ts`; default 1024,
   * an integer >= 16). Infinity accounts every distinct step exactly (cost ~0.4 ms per step).
   */
  readonly scheduleGrid?: number;
}

/** Validates `scheduleGrid` (undefined, an integer >= 16, or Infinity). */
export function validateScheduleGrid(scheduleGrid: unknown): number {
  if (scheduleGrid === undefined) return DEFAULT_SCHEDULE_GRID;
  if (scheduleGrid === Infinity) return Infinity;
  if (!(typeof scheduleGrid === 'number' && Number.isSafeInteger(scheduleGrid) && scheduleGrid >= 16)) {
    throw new InvalidParameterError('scheduleGrid', scheduleGrid, 'an integer >= 16 (grid points per doubling of z) or Infinity (every step exactly)');
  }
  return scheduleGrid;
}

/** Throws UnsupportedEventError for the first sub-event the RDP accountant cannot handle. */
export function checkRdpSupport(event: DpEvent, options: RdpOptions = {}, root: DpEvent = event): void {
  requireEventDepth(event);
  checkSupport(event, options, root);
}

function checkSupport(event: DpEvent, options: RdpOptions, root: DpEvent): void {
  switch (event.kind) {
    case 'shuffledSgdConjecture':
      if (!options.allowConjecture) {
        throw new UnsupportedEventError(root, event, "the shuffled-SGD conjecture (amplification by shuffling) is not a theorem: opt in (allowConjecture / --allow-conjecture) to account it, and the result will say guarantee: 'conjecture'");
      }
      if (!(event.noiseMultiplier >= 2)) {
        throw new UnsupportedEventError(root, event, `the shuffled-SGD conjecture assumes sigma^2 >= 4 L^2: noiseMultiplier must be >= 2, got ${event.noiseMultiplier}`);
      }
      return;
    case 'relativeGaussian':
      if (event.discrete && event.gridBaselineStd === undefined) {
        throw new UnsupportedEventError(root, event, "the Relative Gaussian Mechanism's Renyi bound is proved for continuous noise; for discrete noise record gridBaselineStd (the baseline std in grid steps), which lets the accountants use the smoothing coupling (accounting/discrete-coupling.ts)");
      }
      return;
    case 'objectivePerturbation':
      if (event.discrete && event.gridNoiseStd === undefined) {
        throw new UnsupportedEventError(root, event, "objective perturbation's guarantee is proved for continuous noise; for discrete noise record gridNoiseStd (the std of b in grid steps), which lets the accountants use the smoothing coupling (accounting/discrete-coupling.ts)");
      }
      return;
    case 'compose':
      for (const e of event.events) checkSupport(e, options, root);
      return;
    case 'poissonSampled':
    case 'sampledWithoutReplacement':
    case 'nonUniformSampled':
    case 'selfCompose':
    case 'repeatAndSelect':
      checkSupport(event.event, options, root);
      return;
    default:
      return;
  }
}

/** The RDP of `event` at every order of the grid (orders > 1, sorted ascending). */
export function rdpOfEvent(event: DpEvent, orders: readonly number[], options: RdpOptions = {}): Float64Array {
  requireEventDepth(event);
  validateScheduleGrid(options.scheduleGrid);
  return rdpOf(event, orders, options);
}

/**
 * The Poisson-subsampled Gaussian step (q, z) whose exact curve `rdpOf` would use for `event`, or
 * undefined: a continuous Gaussian, or a gridded discrete one with s >= 1024 (its coupled z_eff),
 * subsampled once with 0 < q < 1.
 */
export function sampledGaussianStep(event: DpEvent): { q: number; z: number } | undefined {
  if (event.kind !== 'poissonSampled') return undefined;
  const { samplingProbability: q, event: inner } = flattenPoissonSampling(event);
  if (!(q > 0 && q < 1) || inner.kind !== 'gaussian') return undefined;
  let z: number;
  if (!inner.discrete) z = inner.noiseMultiplier;
  else if (inner.gridNoiseStd !== undefined && inner.gridNoiseStd >= 1024) z = couplingReducedNoise(inner.noiseMultiplier, inner.gridNoiseStd);
  else return undefined;
  return z > 0 && z < Infinity ? { q, z: accountedNoiseMultiplier(z) } : undefined;
}

/** What `atomsRdp` did, for the accountant's warnings. */
export interface AtomsRdpInfo {
  /** Distinct steps bounded by chords, and the grid's corners (exact curves computed). */
  readonly schedule?: { readonly steps: number; readonly corners: number; readonly pointsPerDoubling: number };
}

/** A composition's releases split into those accounted one by one and a schedule bound. */
export interface SplitAtoms {
  readonly exact: readonly CompositionAtom[];
  readonly schedule: SampledGaussianSchedule | undefined;
}

/**
 * Splits the releases of a composition: many distinct Poisson-subsampled Gaussian steps go to a
 * `SampledGaussianSchedule` when its plan pays (see there), everything else is accounted exactly.
 */
export function splitAtoms(atoms: Iterable<CompositionAtom>, options: RdpOptions): SplitAtoms {
  const rest: CompositionAtom[] = [];
  const sgm: CompositionAtom[] = [];
  const steps: ScheduleStep[] = [];
  for (const atom of atoms) {
    const step = sampledGaussianStep(atom.event);
    if (step === undefined) rest.push(atom);
    else {
      sgm.push(atom);
      steps.push({ q: step.q, z: step.z, count: atom.count });
    }
  }
  const schedule = steps.length === 0 ? undefined : SampledGaussianSchedule.plan(steps, validateScheduleGrid(options.scheduleGrid));
  return { exact: schedule === undefined ? [...rest, ...sgm] : rest, schedule };
}

/**
 * The RDP of a split composition at `orders`: sum of count x curve over the exact releases (in
 * order of first appearance) plus the schedule bound. `curveOf` gives one release's curve at
 * `orders`; `onProgress` is called after each curve (and each corner of the schedule).
 */
export function splitRdp(
  split: SplitAtoms,
  orders: readonly number[],
  curveOf: (atom: CompositionAtom) => Float64Array,
  onProgress?: () => void,
): { rdp: Float64Array; info: AtomsRdpInfo } {
  const total = new Float64Array(orders.length);
  for (const atom of split.exact) {
    const curve = curveOf(atom);
    for (let i = 0; i < total.length; i++) total[i] += atom.count * curve[i];
    onProgress?.();
  }
  const { schedule } = split;
  if (schedule === undefined) return { rdp: total, info: {} };
  const part = schedule.rdp(orders, onProgress);
  for (let i = 0; i < total.length; i++) total[i] += part[i];
  return { rdp: total, info: { schedule: { steps: schedule.steps.length, corners: schedule.cornerCount, pointsPerDoubling: schedule.pointsPerDoubling } } };
}

/** `rdpOfEvent` after the depth check. */
function rdpOf(event: DpEvent, orders: readonly number[], options: RdpOptions): Float64Array {
  switch (event.kind) {
    case 'noOp':
      return new Float64Array(orders.length);
    case 'nonPrivate':
      return new Float64Array(orders.length).fill(Infinity);
    case 'compose':
    case 'selfCompose':
      return splitRdp(splitAtoms(addCompositionAtoms(event).values(), options), orders, (atom) => rdpOf(atom.event, orders, options)).rdp;
    case 'poissonSampled': {
      if (event.event.kind === 'poissonSampled') {
        // Nested Poisson sampling is sampling at the product of the rates (rounded up).
        const flat = flattenPoissonSampling(event);
        return rdpOf(poissonSampledEvent(flat.samplingProbability, flat.event), orders, options);
      }
      const inner = event.event;
      if (inner.kind === 'gaussian' && !inner.discrete) {
        return poissonGaussianRdpCurve(event.samplingProbability, inner.noiseMultiplier, orders);
      }
      if (inner.kind === 'gaussian' && inner.gridNoiseStd !== undefined) {
        // Both are valid bounds: the exact curve of the coupled continuous Gaussian (tight for large
        // s) and Zhu-Wang on CKS's curve (better only when 64/s^2 is large). Zhu-Wang's general
        // bound is never below the exact continuous curve at z, and the coupled one is within
        // 64/s^2 <= 6.2e-5 (relative, in z) of that curve once s >= 1024 — every learner's grid —
        // so it is skipped there: it cost 20x the exact curve's time.
        const coupled = poissonGaussianRdpCurve(event.samplingProbability, couplingReducedNoise(inner.noiseMultiplier, inner.gridNoiseStd), orders);
        if (inner.gridNoiseStd >= 1024) return coupled;
        const general = pointwise(orders, (order) => poissonSubsampledRdp(event.samplingProbability, curveOf(inner, options), order));
        for (let i = 0; i < general.length; i++) general[i] = Math.min(general[i], coupled[i]);
        return general;
      }
      return pointwise(orders, (order) => poissonSubsampledRdp(event.samplingProbability, curveOf(inner, options), order));
    }
    case 'sampledWithoutReplacement':
      return sampledWithBounds(event.sampleSize / event.sourceDatasetSize, event.event, orders, options, withoutReplacementRdp, withoutReplacementGaussianRdpCurve);
    case 'nonUniformSampled':
      // 004 Thm. 4.2: the bounds of sampling without replacement with gamma = c (non-uniform-sampling.ts).
      return sampledWithBounds(event.maxWeight, event.event, orders, options, nonUniformSampledRdp, nonUniformSampledGaussianRdpCurve);
    case 'repeatAndSelect':
      return repeatAndSelectRdp(orders, rdpOf(event.event, orders, options), event.mean, event.shape);
    default:
      return pointwise(orders, curveOf(event, options));
  }
}

/**
 * Sampling without replacement (ratio m / n) or of one record with weights <= c (ratio c): the
 * general bound on the inner curve, and for a Gaussian the smaller Gaussian-specific one (a
 * gridded discrete Gaussian through the coupling's z_eff, as for Poisson sampling above).
 */
function sampledWithBounds(
  ratio: number,
  inner: DpEvent,
  orders: readonly number[],
  options: RdpOptions,
  generalBound: (ratio: number, baseRdp: RdpCurve, order: number) => number,
  gaussianCurve: (ratio: number, noiseMultiplier: number) => RdpCurve,
): Float64Array {
  const general = pointwise(orders, (order) => generalBound(ratio, curveOf(inner, options), order));
  if (inner.kind !== 'gaussian' || (inner.discrete && inner.gridNoiseStd === undefined)) return general;
  const z = inner.discrete ? couplingReducedNoise(inner.noiseMultiplier, inner.gridNoiseStd as number) : inner.noiseMultiplier;
  const gaussian = pointwise(orders, gaussianCurve(ratio, z));
  for (let i = 0; i < general.length; i++) general[i] = Math.min(general[i], gaussian[i]);
  return general;
}

function pointwise(orders: readonly number[], curve: RdpCurve): Float64Array {
  const out = new Float64Array(orders.length);
  for (let i = 0; i < orders.length; i++) out[i] = curve(orders[i]);
  return out;
}

/**
 * The RDP of `event` as a function of the order, for use inside subsampling bounds that need
 * integer orders off the grid. Events whose bound needs a whole grid (repeat-and-select) are
 * evaluated on a grid that contains the requested order.
 */
export function rdpCurveOf(event: DpEvent, options: RdpOptions = {}): RdpCurve {
  requireEventDepth(event);
  return curveOf(event, options);
}

/** `rdpCurveOf` after the depth check. */
function curveOf(event: DpEvent, options: RdpOptions): RdpCurve {
  switch (event.kind) {
    case 'gaussian':
      return (order) => gaussianRdp(event.noiseMultiplier, order);
    case 'laplace':
      return (order) => (order === Infinity ? 1 / event.noiseMultiplier : laplaceRdp(event.noiseMultiplier, order, event.discrete, event.gridScale));
    case 'randomizedResponse':
      return (order) =>
        order === Infinity ? Math.log1p((event.numBuckets * (1 - event.noiseParameter)) / event.noiseParameter) : randomizedResponseRdp(event.noiseParameter, event.numBuckets, order);
    case 'relativeGaussian': {
      const continuous = continuousSurrogate(event) as typeof event;
      return (order) => relativeGaussianRdpOrInfinity(continuous, order);
    }
    case 'objectivePerturbation': {
      const continuous = continuousSurrogate(event) as typeof event;
      return (order) => (order === Infinity ? Infinity : objectivePerturbationRdp(continuous, order));
    }
    case 'shuffledSgdConjecture': {
      const coefficient = shuffledSgdConjectureCoefficient(event);
      return (order) => coefficient * order;
    }
    case 'shuffledLastIterate':
      return (order) => shuffledLastIterateEventRdp(order, event);
    case 'noOp':
      return () => 0;
    case 'nonPrivate':
      return () => Infinity;
    case 'compose':
    case 'selfCompose': {
      const atoms = [...addCompositionAtoms(event).values()];
      const curves = atoms.map((atom) => curveOf(atom.event, options));
      return (order) => curves.reduce((sum, curve, i) => sum + atoms[i].count * curve(order), 0);
    }
    default:
      return (order) => (order === Infinity ? Infinity : rdpOf(event, [order], options)[0]);
  }
}
