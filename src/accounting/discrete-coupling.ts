/**
 * The smoothing coupling: how dpfit accounts exact discrete Gaussian noise on a grid
 * (Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy", CKS) TIGHTLY,
 * by reducing it to the continuous Gaussian mechanism with slightly less noise.
 *
 * ## Notation
 *
 * phi_t(x) = exp(-x^2 / (2 t^2)) / (sqrt(2 pi) t) is the N(0, t^2) density. For t > 0 and a real
 * centre c, rho_t(c) = sum_{j in Z} exp(-(j - c)^2 / (2 t^2)), and the discrete Gaussian on the
 * integers is D_{t,c}(k) = exp(-(k - c)^2 / (2 t^2)) / rho_t(c). Let
 *
 *   e(t) = 2 sum_{m >= 1} exp(-2 pi^2 t^2 m^2),   xi(t) = log((1 + e(t)) / (1 - e(t)))   (e(t) < 1).
 *
 * ## Lemma (smoothing coupling)
 *
 * Let s > s2 > 0, s1^2 = s^2 - s2^2, and let M''(c) be the randomised map: draw C ~ N(c, s1^2),
 * then K ~ D_{s2, C}. Then for every real c and every integer k,
 *
 *   e^{-xi(s2)} <= D_{s,c}(k) / P[M''(c) = k] <= e^{xi(s2)}.
 *
 * Proof. (1) Theta-function bounds. The Fourier transform of x -> exp(-(x - c)^2 / (2 t^2)) at
 * frequency m is sqrt(2 pi) t exp(-2 pi^2 t^2 m^2) e^{-2 pi i m c}; the function is smooth and
 * decays fast, so Poisson summation applies and, pairing m with -m,
 *   rho_t(c) = sqrt(2 pi) t [1 + 2 sum_{m >= 1} exp(-2 pi^2 t^2 m^2) cos(2 pi m c)].
 * Since |cos| <= 1, rho_t(c) / (sqrt(2 pi) t) lies in [1 - e(t), 1 + e(t)] for every c, and e(t)
 * decreases in t, so for t >= s2 it lies in [1 - e, 1 + e] with e = e(s2).
 * (2) The map M''. By definition
 *   P[M''(c) = k] = integral phi_{s1}(u - c) exp(-(k - u)^2 / (2 s2^2)) / rho_{s2}(u) du.
 * By (1) with t = s2, exp(-(k - u)^2 / (2 s2^2)) / rho_{s2}(u) lies between phi_{s2}(k - u) / (1 + e)
 * and phi_{s2}(k - u) / (1 - e) for every u; integrating, and using that the convolution of
 * N(0, s1^2) and N(0, s2^2) densities is the N(0, s1^2 + s2^2) = N(0, s^2) density,
 *   P[M''(c) = k] in [1/(1 + e), 1/(1 - e)] * phi_s(k - c).
 * (3) The target. D_{s,c}(k) = sqrt(2 pi) s phi_s(k - c) / rho_s(c), and by (1) with t = s >= s2,
 *   D_{s,c}(k) in [1/(1 + e), 1/(1 - e)] * phi_s(k - c).
 * Dividing (3) by (2): the ratio lies in [(1 - e)/(1 + e), (1 + e)/(1 - e)] = [e^{-xi}, e^{xi}]. QED
 *
 * ## Consequences used by the accountants
 *
 * (a) One release. A gridded Gaussian release is k + K (in grid steps) with k an integer vector
 * (the rounded query) and K ~ D_s^d, i.e. coordinate j is D_{s, k_j}. By the lemma (coordinates
 * independent) its pmf is within e^{+-d xi} of that of P2(k + N(0, s1^2 I)), where P2 draws
 * D_{s2, C_j} in each coordinate: a DATA-INDEPENDENT post-processing of the CONTINUOUS Gaussian
 * mechanism with std s1 on the same integer query. Its sensitivity in grid steps is s / z, so its
 * noise multiplier is z_eff = z s1 / s = z sqrt(1 - s2^2 / s^2).
 * (b) Compositions. In an adaptive composition with N discrete samples in total, each conditional
 * pmf is within its own factor and the factors multiply: the joint pmfs of the discrete run and of
 * the post-processed continuous run are within e^{+-N xi}. Poisson subsampling (and any sampling
 * whose law does not depend on the data) does not change this: for every batch the lemma applies,
 * and the mixture over batches of the post-processed continuous releases is the same
 * post-processing of the subsampled continuous mechanism, so the mixtures are within the same
 * factor. Private selection (repeatAndSelect) composes mechanisms likewise.
 * (c) Privacy. Write p, q for the discrete run's pmfs on neighbouring inputs and p', q' for the
 * post-processed continuous run's. With p <= e^{N xi} p' and q >= e^{-N xi} q':
 *   hockey stick: delta_D(eps) = sum (p - e^eps q)_+ <= e^{N xi} delta_C(eps - 2 N xi), where
 *     delta_C is that of the continuous mechanism (post-processing only lowers it);
 *   Rényi: D_alpha(p || q) <= D_alpha^C + (2 alpha - 1) N xi / (alpha - 1).
 * (d) Numbers. We use s2 = 8 (`COUPLING_SMOOTHING_STD`): e(8) = 2 exp(-128 pi^2) (1 + tiny)
 * ~ 4.5e-549 (it underflows in double precision), xi ~ 9e-549. Any computation that actually
 * draws its samples draws N < 2^100 of them (at 10^12 samples per second that takes 4e10
 * years), so N xi < 1.2e-518, and the corrections of (c) are < 1e-514 in epsilon or in the RDP
 * at every order alpha > 1 (alpha - 1 >= 2^-52 for a double alpha > 1), and factors
 * e^{N xi} < 1 + 1e-517 on delta.
 *
 * ## Why one ulp dominates the corrections
 *
 * The accountants account the continuous surrogate (`continuousSurrogate`) pessimistically and
 * then, for events that contain gridded discrete noise (`containsGriddedDiscreteNoise`):
 * - epsilon at delta: evaluate the surrogate at delta' = nextDown(delta) and report
 *   nextUp(epsilon'). Then delta_D(nextUp(eps')) <= e^{N xi} delta_C(nextUp(eps') - 2 N xi)
 *   <= e^{N xi} delta_C(eps') <= e^{N xi} delta' <= delta, because nextUp adds at least
 *   2^-1074 ~ 4.9e-324 > 2 N xi, and delta / nextDown(delta) >= 1 + 2^-53 > e^{N xi}. (The room
 *   delta - e^{N xi} delta' >= delta 2^-54 also covers any additive miss probability below that,
 *   such as the one a learner's coupling argument may carry.) The RDP accountant's conversions
 *   are nondecreasing with slope 1 in the RDP value at a fixed delta, so there nextUp(epsilon)
 *   alone absorbs the RDP correction of (c).
 * - delta at epsilon: evaluate the surrogate at eps' = nextDown(epsilon) (0 when epsilon = 0) and
 *   report nextUp(delta'). For epsilon > 0, eps' <= epsilon - 2 N xi, so
 *   delta_D(epsilon) <= e^{N xi} delta_C(eps') <= e^{N xi} delta'. For epsilon = 0, any privacy
 *   profile is 1-Lipschitz on (-inf, 0] (its slope is -e^eps Q(L > eps)), so
 *   delta_D(0) <= e^{N xi} (delta' + 2 N xi). Both are below delta' + 5 N xi (delta' <= 1), and
 *   nextUp(delta') - delta' >= 2^-1074 > 5 N xi.
 * A final epsilon that is 0 therefore becomes Number.MIN_VALUE: the honest statement.
 *
 * ## Lower bounds (the PLD accountant's epsilonLower)
 *
 * The reverse direction holds too: for t = 8 s / sqrt(s^2 - 64), adding N(0, t^2) to D_{s,c}
 * gives a density within e^{+-xi(8)} of phi_{s / sqrt(1 - 64/s^2)}(. - c) (complete the square:
 * the sum over k is rho_tau(m) with tau = s t / sqrt(s^2 + t^2) = 8 and m a point between c and
 * the argument, and (1) applies to rho_8 and rho_s). So the continuous Gaussian mechanism with the
 * LARGER multiplier z / sqrt(1 - 64/s^2) is (up to e^{+-N xi}) a post-processing of the discrete
 * one, and its exact epsilon is a lower bound for the discrete release's
 * (`continuousLowerSurrogate`).
 *
 * ## Comparison with CKS 2020
 *
 * CKS Thm. 4 (and Sec. 4 for products): a plain discrete Gaussian release with integer shift is at
 * least as private in Rényi divergence as the continuous one with the SAME std, D_alpha <=
 * alpha ||v||^2 / (2 s^2), with no correction at all. The RDP accountant keeps that bound for
 * unsampled discrete Gaussians; the coupling costs a factor sqrt(1 - 64/s^2) in noise (< 3.1e-5
 * relative for s >= 1024), but it also gives the whole privacy profile (PLD, exact Gaussian
 * composition) and the exact Poisson-subsampled curve, which CKS Thm. 4 does not.
 *
 * ## Scope
 *
 * - gaussian {discrete, gridNoiseStd}: the release of (a); the event's noiseMultiplier is
 *   s / (sensitivity in grid steps).
 * - relativeGaussian {discrete, gridBaselineStd s_b}: the noise of every coordinate is
 *   D_{s(k), k_j} with s(k)^2 = gamma ||k||^2 + s_b^2 >= s_b^2 > 64, so the lemma turns it into
 *   continuous RGM with the same gamma and baseline sigma sqrt(1 - 64/s_b^2) (the variance drops
 *   by 64 grid steps squared = sigma^2 64 / s_b^2). eta and rRel must be those of the ROUNDED
 *   query (the producer's responsibility).
 * - objectivePerturbation {discrete, gridNoiseStd}: b~ = g K is (within e^{+-d xi}) the image of
 *   a continuous C ~ N(0, g^2 (s^2 - 64) I) under the coordinatewise map P2. The surrogate is the
 *   objective perturbation of `003` with that continuous C, i.e. its guarantee is the guarantee
 *   of the exact minimiser of the objective perturbed by C. That is what AMP's proof (`003`
 *   Thm. 4.1) needs, provided the optimiser's tolerance pays for |b~ - C| (P2 moves each
 *   coordinate by a few s2 grid steps except with negligible probability). It is NOT a guarantee
 *   for the exact minimiser of the objective perturbed by b~ itself: P2 acts before the
 *   data-dependent minimisation, so that release is not a post-processing of the continuous one
 *   (and its support, a data-dependent countable set, would identify the data).
 * - laplace {discrete}: unchanged; its pure epsilon 1/z is exact for integer shifts (the
 *   normalisers cancel), and the PLD accountant uses the pure-DP dominating pair.
 * Events marked discrete without the grid std keep their old treatment (RDP by CKS Thm. 4 for
 * the Gaussian; refused elsewhere).
 */
import { InvalidParameterError } from '../errors.js';
import type { DpEvent } from './events/types.js';
import {
  composeEvent,
  gaussianEvent,
  objectivePerturbationEvent,
  poissonSampledEvent,
  relativeGaussianEvent,
  repeatAndSelectEvent,
  nonUniformSampledEvent,
  sampledWithoutReplacementEvent,
  selfComposeEvent,
} from './events/constructors.js';
import { requireEventDepth } from './events/depth.js';
import { someEvent } from './events/tree.js';

const EPS = Number.EPSILON;

/** s2 of the lemma: the std (in grid steps) of the discrete Gaussian the coupling keeps. */
export const COUPLING_SMOOTHING_STD = 8;

/**
 * e(t) = 2 sum_{m >= 1} exp(-2 pi^2 t^2 m^2) and xi(t) = log((1 + e)/(1 - e)) of the lemma, for
 * t > 0 with e(t) < 1 (t >= 0.25 or so). Summed until the terms stop mattering; underflows to 0
 * for t >= ~6.1 (at t = 8, e ~ 4e-549).
 */
export function smoothingCouplingError(smoothingStd: number): { readonly e: number; readonly xi: number } {
  if (!(typeof smoothingStd === 'number' && Number.isFinite(smoothingStd) && smoothingStd > 0)) {
    throw new InvalidParameterError('smoothingStd', smoothingStd, 'a finite number > 0');
  }
  const a = 2 * Math.PI * Math.PI * smoothingStd * smoothingStd;
  let e = 0;
  for (let m = 1; m < 1000; m++) {
    const term = 2 * Math.exp(-a * m * m);
    e += term;
    if (term <= e * 1e-17) break;
  }
  if (!(e < 1)) throw new InvalidParameterError('smoothingStd', smoothingStd, 'large enough that e(t) < 1 (t >= 0.25)');
  // Round e and xi up (a few ulps): they are bounds.
  const eUp = e * (1 + 8 * EPS);
  return { e: eUp, xi: Math.log1p((2 * eUp) / (1 - eUp)) * (1 + 8 * EPS) };
}

/**
 * The noise the coupling leaves continuous: noise * sqrt(1 - 64 / s^2), rounded DOWN (less noise
 * is the pessimistic direction). `noise` is a noise multiplier or a std; `gridNoiseStd` is s, the
 * std parameter in grid steps (>= 16). The expression is evaluated as in
 * `mechanisms/grid-noise.ts` (`griddedGaussianEffectiveMultiplier`), so a planner's check and the
 * accountants agree bit for bit.
 */
export function couplingReducedNoise(noise: number, gridNoiseStd: number): number {
  const s2 = COUPLING_SMOOTHING_STD * COUPLING_SMOOTHING_STD;
  // Relative rounding error of the product before the factor: < 3 u; (1 - 4 EPS) = (1 - 8 u) covers it.
  return noise * Math.sqrt(1 - s2 / (gridNoiseStd * gridNoiseStd)) * (1 - 4 * EPS);
}

/** noise / sqrt(1 - 64 / s^2), rounded UP: the continuous noise the discrete release dominates (lower bounds). */
export function couplingEnlargedNoise(noise: number, gridNoiseStd: number): number {
  const s2 = COUPLING_SMOOTHING_STD * COUPLING_SMOOTHING_STD;
  return (noise / Math.sqrt(1 - s2 / (gridNoiseStd * gridNoiseStd))) * (1 + 4 * EPS);
}

/** true when the event (anywhere inside) has discrete noise whose grid std is recorded. */
export function containsGriddedDiscreteNoise(event: DpEvent): boolean {
  return someEvent(event, (e) =>
    e.kind === 'gaussian' || e.kind === 'objectivePerturbation' ? e.gridNoiseStd !== undefined : e.kind === 'relativeGaussian' && e.gridBaselineStd !== undefined,
  );
}

type LeafMap = (event: DpEvent) => DpEvent;

/**
 * Rebuilds `event` with `leaf` applied to every leaf; returns the same object when nothing changed.
 * Checks the depth first (then recurses at most MAX_EVENT_DEPTH levels).
 */
function mapLeaves(event: DpEvent, leaf: LeafMap): DpEvent {
  requireEventDepth(event);
  return mapChecked(event, leaf);
}

function mapChecked(event: DpEvent, leaf: LeafMap): DpEvent {
  switch (event.kind) {
    case 'compose': {
      const events = event.events.map((e) => mapChecked(e, leaf));
      return events.every((e, i) => e === event.events[i]) ? event : composeEvent(events);
    }
    case 'selfCompose': {
      const inner = mapChecked(event.event, leaf);
      return inner === event.event ? event : selfComposeEvent(inner, event.count);
    }
    case 'poissonSampled': {
      const inner = mapChecked(event.event, leaf);
      return inner === event.event ? event : poissonSampledEvent(event.samplingProbability, inner);
    }
    case 'sampledWithoutReplacement': {
      const inner = mapChecked(event.event, leaf);
      return inner === event.event ? event : sampledWithoutReplacementEvent(event.sourceDatasetSize, event.sampleSize, inner);
    }
    case 'nonUniformSampled': {
      const inner = mapChecked(event.event, leaf);
      return inner === event.event ? event : nonUniformSampledEvent(event.maxWeight, inner);
    }
    case 'repeatAndSelect': {
      const inner = mapChecked(event.event, leaf);
      return inner === event.event ? event : repeatAndSelectEvent(inner, event.mean, event.shape);
    }
    default:
      return leaf(event);
  }
}

/** The gridded objective perturbation and RGM leaves map the same way in both surrogates. */
function coupledNonGaussianLeaf(event: DpEvent): DpEvent {
  if (event.kind === 'objectivePerturbation' && event.gridNoiseStd !== undefined) {
    const { lipschitz, smoothness, regularization } = event;
    return objectivePerturbationEvent({ noiseStd: couplingReducedNoise(event.noiseStd, event.gridNoiseStd), lipschitz, smoothness, regularization });
  }
  if (event.kind === 'relativeGaussian' && event.gridBaselineStd !== undefined && event.baselineStd !== undefined && event.rRel !== undefined) {
    const { eta, gamma, dimension, rRel } = event;
    return relativeGaussianEvent({ eta, gamma, dimension, baselineStd: couplingReducedNoise(event.baselineStd, event.gridBaselineStd), rRel });
  }
  return event;
}

/**
 * The continuous surrogate of an event (module comment, consequences (a)-(c)): every gridded
 * discrete Gaussian gaussian(z, discrete, gridNoiseStd s) becomes the continuous gaussian(z_eff),
 * z_eff = z sqrt(1 - 64/s^2) rounded down; a gridded objective perturbation and a gridded RGM
 * keep their form with the std (baseline std) reduced likewise. Everything else is unchanged (in
 * particular discrete events without a grid std, and the discrete Laplace). An upper bound on
 * the surrogate's privacy loss is one on the original's up to the corrections of (c), which the
 * accountants' final one-ulp rounding absorbs.
 *
 * @example continuousSurrogate(gaussianEvent(2, { discrete: true, gridNoiseStd: 1024 })) // gaussian(1.99993896...)
 */
export function continuousSurrogate(event: DpEvent): DpEvent {
  return mapLeaves(event, (leaf) => {
    if (leaf.kind === 'gaussian' && leaf.gridNoiseStd !== undefined) return gaussianEvent(couplingReducedNoise(leaf.noiseMultiplier, leaf.gridNoiseStd));
    return coupledNonGaussianLeaf(leaf);
  });
}

/**
 * The surrogate for LOWER bounds (module comment, "Lower bounds"): a gridded discrete Gaussian
 * becomes the continuous gaussian(z / sqrt(1 - 64/s^2)) (rounded up), which is a post-processing
 * of it up to e^{+-N xi}. Gridded objective perturbation and RGM map as in `continuousSurrogate`
 * (their events stand for the coupled continuous mechanism, see "Scope").
 */
export function continuousLowerSurrogate(event: DpEvent): DpEvent {
  return mapLeaves(event, (leaf) => {
    if (leaf.kind === 'gaussian' && leaf.gridNoiseStd !== undefined) return gaussianEvent(couplingEnlargedNoise(leaf.noiseMultiplier, leaf.gridNoiseStd));
    return coupledNonGaussianLeaf(leaf);
  });
}
