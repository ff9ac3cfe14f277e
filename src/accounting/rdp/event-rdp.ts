/**
 * The RDP curve of any DpEvent on a grid of orders: one function per kind, dispatched on `kind`
 * (DESIGN.md: no isinstance chains). Composition adds curves (Mironov 2017, Prop. 1), k-fold
 * self-composition multiplies by k. Subsampled events use the exact Poisson-subsampled Gaussian
 * (Mironov, Talwar, Zhang 2019) when the inner event is a continuous Gaussian, and the general
 * bounds of Zhu & Wang 2019 (Poisson) and Wang, Balle, Kasiviswanathan 2019 (without replacement,
 * `004` Thm. 3.2) otherwise.
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
 */
import { UnsupportedEventError } from '../../errors.js';
import { continuousSurrogate, couplingReducedNoise } from '../discrete-coupling.js';
import type { DpEvent } from '../events.js';
import { relativeGaussianRdpOrInfinity } from '../relative-gaussian.js';
import { gaussianRdp, laplaceRdp, objectivePerturbationRdp, randomizedResponseRdp } from './base-mechanisms.js';
import { poissonGaussianRdpCurve } from './poisson-gaussian.js';
import { poissonSubsampledRdp } from './poisson-general.js';
import type { RdpCurve } from './series.js';
import { repeatAndSelectRdp } from './repeat-and-select.js';
import { shuffledSgdConjectureCoefficient } from './shuffled-conjecture.js';
import { withoutReplacementRdp } from './without-replacement.js';

export interface RdpOptions {
  /** Account `shuffledSgdConjecture` events (results are then a conjecture, not a guarantee). */
  readonly allowConjecture?: boolean;
}

/** Throws UnsupportedEventError for the first sub-event the RDP accountant cannot handle. */
export function checkRdpSupport(event: DpEvent, options: RdpOptions = {}, root: DpEvent = event): void {
  switch (event.kind) {
    case 'shuffledSgdConjecture':
      if (!options.allowConjecture) {
        throw new UnsupportedEventError(root, event, "004 Conj. 1-2 is a conjecture, not a theorem: opt in (allowConjecture / --allow-conjecture) to account it, and the result will say guarantee: 'conjecture'");
      }
      shuffledSgdConjectureCoefficient(event); // validates its assumption sigma >= 2L
      return;
    case 'relativeGaussian':
      if (event.discrete && event.gridBaselineStd === undefined) {
        throw new UnsupportedEventError(root, event, "000 Thm. 1 is proved for continuous noise; for discrete noise record gridBaselineStd (the baseline std in grid steps), which lets the accountants use the smoothing coupling (accounting/discrete-coupling.ts)");
      }
      return;
    case 'objectivePerturbation':
      if (event.discrete && event.gridNoiseStd === undefined) {
        throw new UnsupportedEventError(root, event, "003 Thm. 3.1/3.2 are proved for continuous noise; for discrete noise record gridNoiseStd (the std of b in grid steps), which lets the accountants use the smoothing coupling (accounting/discrete-coupling.ts)");
      }
      return;
    case 'compose':
      for (const e of event.events) checkRdpSupport(e, options, root);
      return;
    case 'poissonSampled':
    case 'sampledWithoutReplacement':
    case 'selfCompose':
    case 'repeatAndSelect':
      checkRdpSupport(event.event, options, root);
      return;
    default:
      return;
  }
}

/** The RDP of `event` at every order of the grid (orders > 1, sorted ascending). */
export function rdpOfEvent(event: DpEvent, orders: readonly number[], options: RdpOptions = {}): Float64Array {
  switch (event.kind) {
    case 'noOp':
      return new Float64Array(orders.length);
    case 'nonPrivate':
      return new Float64Array(orders.length).fill(Infinity);
    case 'compose': {
      const total = new Float64Array(orders.length);
      for (const e of event.events) {
        const curve = rdpOfEvent(e, orders, options);
        for (let i = 0; i < total.length; i++) total[i] += curve[i];
      }
      return total;
    }
    case 'selfCompose': {
      const curve = event.count === 0 ? new Float64Array(orders.length) : rdpOfEvent(event.event, orders, options);
      for (let i = 0; i < curve.length; i++) curve[i] = event.count === 0 ? 0 : curve[i] * event.count;
      return curve;
    }
    case 'poissonSampled': {
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
        const general = pointwise(orders, (order) => poissonSubsampledRdp(event.samplingProbability, rdpCurveOf(inner, options), order));
        for (let i = 0; i < general.length; i++) general[i] = Math.min(general[i], coupled[i]);
        return general;
      }
      return pointwise(orders, (order) => poissonSubsampledRdp(event.samplingProbability, rdpCurveOf(inner, options), order));
    }
    case 'sampledWithoutReplacement': {
      const ratio = event.sampleSize / event.sourceDatasetSize;
      return pointwise(orders, (order) => withoutReplacementRdp(ratio, rdpCurveOf(event.event, options), order));
    }
    case 'repeatAndSelect':
      return repeatAndSelectRdp(orders, rdpOfEvent(event.event, orders, options), event.mean, event.shape);
    default:
      return pointwise(orders, rdpCurveOf(event, options));
  }
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
    case 'noOp':
      return () => 0;
    case 'nonPrivate':
      return () => Infinity;
    case 'compose': {
      const curves = event.events.map((e) => rdpCurveOf(e, options));
      return (order) => curves.reduce((sum, curve) => sum + curve(order), 0);
    }
    case 'selfCompose': {
      const curve = rdpCurveOf(event.event, options);
      return (order) => (event.count === 0 ? 0 : event.count * curve(order));
    }
    default:
      return (order) => (order === Infinity ? Infinity : rdpOfEvent(event, [order], options)[0]);
  }
}
