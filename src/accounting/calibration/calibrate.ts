/**
 * Calibration: the inverse problems of accounting. An accountant says what a release costs; a
 * calibration says how much noise (or how many steps) a target (epsilon, delta) allows.
 *
 * - `calibrateNoiseMultiplier`: the smallest noise multiplier z for which an event shape
 *   `makeEvent(z)` meets a target (epsilon, delta).
 * - `calibrateDpsgd`: the same for the DP-SGD shorthand (T steps of the Poisson-subsampled Gaussian).
 * - `maxSteps`: the largest number of steps that fits a budget.
 *
 * Searches bracket the answer and run Brent's method (on log z), then return the SAFE end of the
 * final bracket and re-account it: the returned value never overshoots the target (Opacus'
 * tolerance search can return a noise multiplier whose epsilon is above it: Opacus issue #346,
 * ACCOUNTING-NOTES).
 */
import { CalibrationError, DpfitError, InvalidParameterError } from '../../errors.js';
import { brentRoot } from '../../math/root-finding.js';
import { optionNames, rejectUnknownOptions, requireInHalfOpen, requireInteger, requireOpenUnit, requirePositive } from '../../validate.js';
import type { DpEvent } from '../events/types.js';
import { gaussianEvent, poissonSampledEvent, selfComposeEvent } from '../events/constructors.js';
import type { PrivacyGuarantee } from '../guarantee.js';
import { neighboringRelationOf } from '../neighboring.js';
import { RDP_ACCOUNTANT_OPTIONS, rdpEpsilon, type RdpAccountantOptions } from '../rdp/accountant.js';
import { rdpOfEvent } from '../rdp/event-rdp.js';
import { pldEpsilon } from '../pld/accountant.js';
import { guidedBracket } from './guided-bracket.js';

/** Accounts an event at delta (the RDP accountant by default; the PLD accountant plugs in here). */
export type EpsilonFunction = (event: DpEvent, delta: number) => PrivacyGuarantee;

export interface NoiseCalibration {
  readonly noiseMultiplier: number;
  /** The epsilon actually reached at `noiseMultiplier` (<= targetEpsilon). */
  readonly epsilon: number;
  readonly delta: number;
  readonly guarantee: PrivacyGuarantee;
  readonly event: DpEvent;
}

export interface NoiseCalibrationOptions {
  readonly targetEpsilon: number;
  readonly delta: number;
  /** Relative accuracy of the noise multiplier (default 1e-9). */
  readonly tolerance?: number;
  readonly accountant?: EpsilonFunction;
  /**
   * The epsilon the search's steps use (default: `accountant`): each must be a valid upper bound on
   * the event's epsilon, and may be a cheaper one (the PLD accountant without its check by the delta
   * query: `PLD_CALIBRATION`). The noise multiplier returned is re-accounted by `accountant`, and
   * raised until that meets the target, so the answer and its epsilon are `accountant`'s.
   */
  readonly probe?: EpsilonFunction;
  /**
   * A much cheaper epsilon whose root is near the probe's (RDP's for the PLD: `PLD_CALIBRATION`):
   * calibrated first (to 1e-4), it starts the probe's search with secant steps from its root
   * (`guided-bracket.ts`). Only a speed-up: the answer is the probe's and `accountant`'s as without it.
   */
  readonly guide?: EpsilonFunction;
  readonly rdpOptions?: RdpAccountantOptions;
}

const MIN_NOISE = 1e-3;
const MAX_NOISE = 1e6;

const NOISE_CALIBRATION_OPTIONS = optionNames<NoiseCalibrationOptions>({ targetEpsilon: true, delta: true, tolerance: true, accountant: true, probe: true, guide: true, rdpOptions: true });

/** The smallest z with epsilon(makeEvent(z), delta) <= targetEpsilon, returned on the safe side. */
export function calibrateNoiseMultiplier(makeEvent: (noiseMultiplier: number) => DpEvent, options: NoiseCalibrationOptions): NoiseCalibration {
  rejectUnknownOptions(options, NOISE_CALIBRATION_OPTIONS, 'calibrateNoiseMultiplier');
  if (options.rdpOptions !== undefined) rejectUnknownOptions(options.rdpOptions, RDP_ACCOUNTANT_OPTIONS, "calibrateNoiseMultiplier's rdpOptions");
  const targetEpsilon = requirePositive('targetEpsilon', options.targetEpsilon);
  const delta = requireOpenUnit('delta', options.delta);
  const tolerance = requirePositive('tolerance', options.tolerance ?? 1e-9);
  const account = options.accountant ?? ((event: DpEvent, d: number) => rdpEpsilon(event, d, options.rdpOptions));
  const probe = options.probe ?? account;
  const epsilonAt = (z: number) => probe(makeEvent(z), delta).epsilon;
  // f(log z) > 0: too little noise. epsilon decreases in z.
  const f = (logZ: number) => epsilonAt(Math.exp(logZ)) - targetEpsilon;
  const guided = options.guide === undefined ? undefined : guidedSearch(options.guide);
  if (guided !== undefined) return finishGuided(guided.z, guided.slope);
  let hi = 0; // log z = 0, z = 1
  while (f(hi) > 0) {
    hi += 1;
    if (hi > Math.log(MAX_NOISE)) {
      throw new CalibrationError(`no noise multiplier up to ${MAX_NOISE} reaches epsilon ${targetEpsilon} at delta ${delta}`);
    }
  }
  let lo = hi - 1;
  while (f(lo) <= 0) {
    lo -= 1;
    if (lo < Math.log(MIN_NOISE)) {
      // Even tiny noise meets the target: return the smallest noise we search, still checked.
      return finish(Math.exp(lo + 1));
    }
  }
  const root = brentRoot(f, lo, hi, { xAbsTol: tolerance / 4, xRelTol: 0 });
  return finish(Math.exp(root.hi));

  /**
   * The search from the guide's root (`guided-bracket.ts`), on log epsilon - log target (closer to
   * linear in log z than epsilon); undefined when the guide gives no bracket (the general search
   * then runs). The probe's values are kept, so that Brent's method does not recompute the ends.
   */
  function guidedSearch(guide: EpsilonFunction): { z: number; slope: number } | undefined {
    let start: number;
    let slope: number;
    try {
      start = Math.log(calibrateNoiseMultiplier(makeEvent, { targetEpsilon, delta, accountant: guide, tolerance: 1e-4 }).noiseMultiplier);
      slope = (Math.log(guide(makeEvent(Math.exp(start)), delta).epsilon) - Math.log(guide(makeEvent(Math.exp(start - 0.05)), delta).epsilon)) / 0.05;
    } catch (error) {
      if (error instanceof DpfitError) return undefined; // no guidance: the general search
      throw error;
    }
    const logTarget = Math.log(targetEpsilon);
    const known = new Map<number, number>();
    const g = (logZ: number) => {
      if (!(logZ >= Math.log(MIN_NOISE) && logZ <= Math.log(MAX_NOISE))) return NaN;
      let value = known.get(logZ);
      if (value === undefined) known.set(logZ, (value = Math.log(epsilonAt(Math.exp(logZ))) - logTarget));
      return value;
    };
    const bracket = guidedBracket(g, start, slope);
    if (bracket === undefined) return undefined;
    return { z: Math.exp(brentRoot(g, bracket.lo, bracket.hi, { xAbsTol: tolerance / 4, xRelTol: 0 }).hi), slope: bracket.slope };
  }

  /**
   * `finish` after the guided search, whose probe may differ from `accountant` by its accuracy
   * (1e-5 relative for the PLD's two grids): when `accountant` puts z above the target, log z
   * moves by 1.1 (then 4.4, 17.6, ...) times the excess in log epsilon over the probe's slope, plus the
   * tolerance, rather than by the tolerance alone.
   */
  function finishGuided(z: number, slope: number): NoiseCalibration {
    let logZ = Math.log(z);
    let factor = 1.1;
    for (let i = 0; i < 60; i++) {
      const noiseMultiplier = Math.exp(logZ);
      const event = makeEvent(noiseMultiplier);
      const guarantee = account(event, delta);
      if (guarantee.epsilon <= targetEpsilon) return Object.freeze({ noiseMultiplier, epsilon: guarantee.epsilon, delta, guarantee, event });
      const excess = Math.log(guarantee.epsilon / targetEpsilon);
      if (!Number.isFinite(excess)) return finish(noiseMultiplier);
      logZ += (factor * excess) / Math.abs(slope) + tolerance;
      factor *= 4;
    }
    throw new CalibrationError(`calibration could not reach epsilon ${targetEpsilon} on the safe side`);
  }

  function finish(z: number): NoiseCalibration {
    let noiseMultiplier = z;
    for (let i = 0; i < 200; i++) {
      const event = makeEvent(noiseMultiplier);
      const guarantee = account(event, delta);
      if (guarantee.epsilon <= targetEpsilon) {
        return Object.freeze({ noiseMultiplier, epsilon: guarantee.epsilon, delta, guarantee, event });
      }
      noiseMultiplier *= 1 + tolerance;
    }
    throw new CalibrationError(`calibration could not reach epsilon ${targetEpsilon} on the safe side`);
  }
}

/**
 * For calibrating to a Renyi-DP target (Mironov 2017, Def. 4): an `EpsilonFunction` whose epsilon
 * is the event's RDP at `order` (not an (epsilon, delta) guarantee; `delta` is ignored). `000`
 * App. C states its targets this way (alpha = 2, epsilon = 0.1).
 */
export function rdpAtOrder(order: number): EpsilonFunction {
  if (!(typeof order === 'number' && order > 1 && Number.isFinite(order))) throw new InvalidParameterError('rdpOrder', order, 'a finite Renyi order > 1');
  return (event, delta) => {
    const epsilon = rdpOfEvent(event, [order])[0];
    return { epsilon, delta, accountant: 'rdp', order, neighboringRelation: neighboringRelationOf(event), guarantee: 'proven', warnings: [`epsilon is the Renyi DP at order ${order}, not an (epsilon, delta) guarantee`] };
  };
}

/**
 * The options that calibrate with the PLD accountant (`dpfit calibrate dpsgd --accountant pld`, the
 * calculator): the search's steps by the PLD's epsilon without its check by the delta query
 * (`checkedEpsilon: false`, a valid upper bound on its own grid), the answer re-accounted by the
 * checked epsilon (so that a delta query in another process agrees with it); z to 1e-6 relative.
 */
export const PLD_CALIBRATION: Readonly<Pick<NoiseCalibrationOptions, 'accountant' | 'probe' | 'guide' | 'tolerance'>> = Object.freeze({
  accountant: (event: DpEvent, delta: number) => pldEpsilon(event, delta),
  probe: (event: DpEvent, delta: number) => pldEpsilon(event, delta, { checkedEpsilon: false }),
  guide: (event: DpEvent, delta: number) => rdpEpsilon(event, delta),
  tolerance: 1e-6,
});

/** The DP-SGD shorthand: `steps` compositions of the Poisson-subsampled Gaussian (add/remove-one). */
export function dpsgdEvent(samplingProbability: number, noiseMultiplier: number, steps: number): DpEvent {
  requireInHalfOpen('samplingProbability', samplingProbability, 0, 1);
  requirePositive('noiseMultiplier', noiseMultiplier);
  requireInteger('steps', steps, 0);
  return selfComposeEvent(poissonSampledEvent(samplingProbability, gaussianEvent(noiseMultiplier)), steps);
}

/** calibrateNoiseMultiplier's options, which it forwards, and the DP-SGD shape. */
const CALIBRATE_DPSGD_OPTIONS = optionNames<NonNullable<Parameters<typeof calibrateDpsgd>[0]>>({ ...NOISE_CALIBRATION_OPTIONS, samplingProbability: true, steps: true });

/** The smallest noise multiplier for DP-SGD with sampling probability q and T steps. */
export function calibrateDpsgd(options: NoiseCalibrationOptions & { samplingProbability: number; steps: number }): NoiseCalibration {
  rejectUnknownOptions(options, CALIBRATE_DPSGD_OPTIONS, 'calibrateDpsgd');
  const { samplingProbability, steps: stepCount, ...calibration } = options;
  const q = requireInHalfOpen('samplingProbability', samplingProbability, 0, 1);
  const steps = requireInteger('steps', stepCount, 1);
  return calibrateNoiseMultiplier((z) => dpsgdEvent(q, z, steps), calibration);
}

const MAX_STEPS_OPTIONS = optionNames<NonNullable<Parameters<typeof maxSteps>[1]>>({ targetEpsilon: true, delta: true, accountant: true, maxSteps: true });

/**
 * The largest number of steps T of `makeEvent(T)` whose epsilon at delta is <= targetEpsilon
 * (0 when even one step exceeds it). Exponential search then bisection on integers; epsilon must be
 * nondecreasing in T (it is for every composition).
 */
export function maxSteps(
  makeEvent: (steps: number) => DpEvent,
  options: { targetEpsilon: number; delta: number; accountant?: EpsilonFunction; maxSteps?: number },
): { steps: number; epsilon: number } {
  rejectUnknownOptions(options, MAX_STEPS_OPTIONS, 'maxSteps');
  const targetEpsilon = requirePositive('targetEpsilon', options.targetEpsilon);
  const delta = requireOpenUnit('delta', options.delta);
  const limit = requireInteger('maxSteps', options.maxSteps ?? 1e9, 1);
  const account = options.accountant ?? ((event: DpEvent, d: number) => rdpEpsilon(event, d));
  const epsilonAt = (steps: number) => account(makeEvent(steps), delta).epsilon;
  if (epsilonAt(1) > targetEpsilon) return { steps: 0, epsilon: 0 };
  let good = 1;
  let bad = 2;
  while (bad <= limit && epsilonAt(bad) <= targetEpsilon) {
    good = bad;
    bad *= 2;
  }
  if (bad > limit) {
    if (epsilonAt(limit) <= targetEpsilon) return { steps: limit, epsilon: epsilonAt(limit) };
    bad = limit;
  }
  while (bad - good > 1) {
    const mid = Math.floor((good + bad) / 2);
    if (epsilonAt(mid) <= targetEpsilon) good = mid;
    else bad = mid;
  }
  return { steps: good, epsilon: epsilonAt(good) };
}
