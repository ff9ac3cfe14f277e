/**
 * Exact accounting of adaptively composed Gaussian mechanisms: k Gaussian releases with noise
 * multipliers z_i are together exactly as private as ONE Gaussian release with
 * 1/z^2 = sum_i 1/z_i^2 (Dong, Roth & Su 2022, "Gaussian Differential Privacy", Cor. 3.3: mu-GDP
 * composes as sqrt(sum mu_i^2), and mu-GDP is the Gaussian privacy profile of `003` eq. B.1 with
 * z = 1/mu). So DP-GD's (epsilon, delta) is the exact Gaussian profile — tighter than any RDP
 * conversion, and what a PLD accountant approaches as its grid is refined.
 *
 * Applies only to compositions of continuous Gaussian events, gridded discrete Gaussian events
 * (`gridNoiseStd` recorded: counted with the smoothing coupling's z_eff = z sqrt(1 - 64/s^2),
 * `../discrete-coupling.ts`) and noOps; returns undefined for anything else (a discrete Gaussian
 * without a grid std has a privacy profile this module does not know).
 */
import { NumericalError } from '../../errors.js';
import { brentRoot } from '../../math/root-finding.js';
import { requireOpenUnit } from '../../validate.js';
import { analyticGaussianNoiseMultiplier } from './calibrate-gaussian.js';
import { containsGriddedDiscreteNoise, couplingReducedNoise } from '../discrete-coupling.js';
import type { DpEvent } from '../events/types.js';
import { gaussianEvent, selfComposeEvent } from '../events/constructors.js';
import { requireEventDepth } from '../events/depth.js';
import { nextDown, nextUp } from '../float-steps.js';
import { gaussianDelta, gaussianLogDelta } from './gaussian-profile.js';
import type { PrivacyGuarantee } from '../guarantee.js';
import { neighboringRelationOf } from '../neighboring.js';

/**
 * sum of 1/z^2 over the Gaussian releases, or undefined if the event is not a Gaussian composition.
 * A gridded discrete Gaussian counts with its coupled multiplier z_eff (rounded down).
 */
export function gaussianPrecision(event: DpEvent): number | undefined {
  requireEventDepth(event);
  return precisionOf(event);
}

/**
 * `gaussianPrecision` after the depth check. Rounded UP at every level (a larger precision is a less
 * private Gaussian): 1/z^2 takes two roundings, count x p one, a left-to-right sum of k terms at most
 * (k - 1) of them (Higham 2002, Sec. 4.2), each covered by a factor (1 + 2 EPS) per rounding.
 */
function precisionOf(event: DpEvent): number | undefined {
  const EPS = Number.EPSILON;
  switch (event.kind) {
    case 'noOp':
      return 0;
    case 'gaussian': {
      let z = event.noiseMultiplier;
      if (event.discrete) {
        if (event.gridNoiseStd === undefined) return undefined;
        z = couplingReducedNoise(event.noiseMultiplier, event.gridNoiseStd);
      }
      return (1 / (z * z)) * (1 + 6 * EPS);
    }
    case 'selfCompose': {
      const inner = precisionOf(event.event);
      return inner === undefined ? undefined : event.count * inner * (1 + 4 * EPS);
    }
    case 'compose': {
      let total = 0;
      for (const e of event.events) {
        const inner = precisionOf(e);
        if (inner === undefined) return undefined;
        total += inner;
      }
      return total * (1 + 2 * (event.events.length + 1) * EPS);
    }
    default:
      return undefined;
  }
}

/**
 * The exact epsilon of a Gaussian composition at delta (undefined for other events). With gridded
 * discrete noise it is the continuous surrogate's epsilon at nextDown(delta), rounded up one ulp,
 * which bounds the discrete release's (`../discrete-coupling.ts`, "Why one ulp dominates").
 */
export function gaussianCompositionEpsilon(event: DpEvent, delta: number): PrivacyGuarantee | undefined {
  requireOpenUnit('delta', delta);
  const precision = gaussianPrecision(event);
  if (precision === undefined) return undefined;
  const base = { delta, accountant: 'exactGaussian' as const, neighboringRelation: neighboringRelationOf(event), guarantee: 'proven' as const };
  if (precision === 0) return { ...base, epsilon: 0, warnings: [] };
  if (containsGriddedDiscreteNoise(event)) {
    const epsilon = continuousCompositionEpsilon(precision, nextDown(delta));
    return {
      ...base,
      epsilon: nextUp(epsilon),
      warnings: [],
      notes: [
        'exact up to one ulp: the discrete Gaussian releases are accounted as continuous Gaussians with noise multiplier z sqrt(1 - 64/s^2) (smoothing coupling), composed exactly (Dong, Roth & Su 2022, Cor. 3.3)',
      ],
    };
  }
  const epsilon = continuousCompositionEpsilon(precision, delta);
  return {
    ...base,
    epsilon,
    warnings: [],
    ...(epsilon === 0 ? {} : { notes: ['exact: a composition of Gaussian mechanisms is one Gaussian mechanism (Dong, Roth & Su 2022, Cor. 3.3)'] }),
  };
}

/**
 * The exact delta of a Gaussian composition at epsilon (undefined for other events): the profile
 * (`003` eq. B.1) of one Gaussian with 1/z^2 = sum 1/z_i^2, z rounded down as in
 * `gaussianCompositionEpsilon`, taken at epsilon (1 - 2e-12): `gaussianDelta` is an upper bound only
 * up to the accuracy of log Phi (1e-14 relative), and this margin, like the 1e-12 steps of
 * `gaussianCompositionEpsilon`, covers it. With gridded discrete noise it is the continuous
 * surrogate's delta at nextDown(epsilon), rounded up one ulp.
 */
export function gaussianCompositionDelta(event: DpEvent, epsilon: number): number | undefined {
  const precision = gaussianPrecision(event);
  if (precision === undefined) return undefined;
  if (precision === 0) return 0;
  const z = 1 / Math.sqrt(precision) / (1 + 4 * Number.EPSILON);
  const at = (e: number) => e * (1 - 2e-12);
  if (containsGriddedDiscreteNoise(event)) return Math.min(1, nextUp(gaussianDelta(epsilon > 0 ? at(nextDown(epsilon)) : 0, z)));
  return gaussianDelta(at(epsilon), z);
}

/** The smallest epsilon (on the safe side) at which one Gaussian of precision 1/z^2 is (epsilon, delta)-DP. */
function continuousCompositionEpsilon(precision: number, delta: number): number {
  const z = 1 / Math.sqrt(precision) / (1 + 4 * Number.EPSILON); // round the composed noise down: pessimistic
  if (gaussianDelta(0, z) <= delta) return 0;
  // delta(epsilon) decreases in epsilon; find where it crosses delta, return the upper end.
  const f = (epsilon: number) => gaussianLogDelta(epsilon, z) - Math.log(delta);
  let hi = 1;
  while (f(hi) > 0) hi *= 2;
  const { hi: epsilon } = brentRoot(f, 0, hi, { xRelTol: 1e-12 });
  let safe = epsilon;
  while (gaussianDelta(safe, z) > delta) safe *= 1 + 1e-12;
  return safe;
}

/**
 * The noise multiplier z for which `count` composed Gaussian mechanisms gaussian(z) are
 * (epsilon, delta)-DP by the exact profile above: sqrt(count) times the analytic Gaussian
 * multiplier (Balle & Wang 2018), enlarged by 1e-9 relative so that this module's pessimistic
 * re-accounting (which rounds the composed noise down and epsilon up, ~1e-12 relative) also stays
 * <= epsilon; checked, and enlarged further if it did not. `makeEvent` is the event actually
 * released at z when it is another Gaussian-only event of the same precision count / z^2 (e.g.
 * shuffled SGD's compositions of gaussian(z / 2)): the check is made on it. It may also release
 * gridded discrete Gaussians (`gridNoiseStd`), whose coupled multipliers are a little below z:
 * when a check fails, z is scaled by the factor by which the made event's composed multiplier
 * 1/sqrt(precision) falls short of the one needed (at least 1 + 1e-9 2^attempt).
 */
export function exactGaussianCompositionNoiseMultiplier(
  epsilon: number,
  delta: number,
  count = 1,
  makeEvent: (noiseMultiplier: number) => DpEvent = (z) => (count === 1 ? gaussianEvent(z) : selfComposeEvent(gaussianEvent(z), count)),
): number {
  const needed = analyticGaussianNoiseMultiplier(epsilon, delta) * (1 + 1e-9);
  const meets = (z: number) => (gaussianCompositionEpsilon(makeEvent(z), delta)?.epsilon ?? Infinity) <= epsilon;
  let z = Math.sqrt(count) * needed;
  let failed: number | undefined;
  for (let attempt = 0; attempt < 20; attempt++) {
    if (meets(z)) return failed === undefined || z <= failed * (1 + 1e-8) ? z : tighten(failed, z);
    failed = z;
    const precision = gaussianPrecision(makeEvent(z));
    const shortfall = precision !== undefined && precision > 0 ? needed * Math.sqrt(precision) : 1;
    z *= Math.max(shortfall, 1 + 1e-9 * 2 ** attempt);
  }
  throw new NumericalError(`exactGaussianCompositionNoiseMultiplier: could not verify a noise multiplier for epsilon ${epsilon}, delta ${delta}`);

  /**
   * A large step (when the made event's precision is not exactly count / z^2, e.g. a grid std that
   * grows with z) may overshoot: bisect on log z between the last failure and the first success,
   * returning only values that were checked.
   */
  function tighten(lo: number, hi: number): number {
    for (let i = 0; i < 60 && hi > lo * (1 + 1e-9); i++) {
      const mid = Math.sqrt(lo * hi);
      if (meets(mid)) hi = mid;
      else lo = mid;
    }
    return hi;
  }
}
