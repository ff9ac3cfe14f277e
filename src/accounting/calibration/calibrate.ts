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
import { CalibrationError, InvalidParameterError } from '../../errors.js';
import { brentRoot } from '../../math/root-finding.js';
import { optionNames, rejectUnknownOptions, requireInHalfOpen, requireInteger, requireOpenUnit, requirePositive } from '../../validate.js';
import type { DpEvent } from '../events/types.js';
import { gaussianEvent, poissonSampledEvent, selfComposeEvent } from '../events/constructors.js';
import type { PrivacyGuarantee } from '../guarantee.js';
import { neighboringRelationOf } from '../neighboring.js';
import { RDP_ACCOUNTANT_OPTIONS, rdpEpsilon, type RdpAccountantOptions } from '../rdp/accountant.js';
import { rdpOfEvent } from '../rdp/event-rdp.js';

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
  readonly rdpOptions?: RdpAccountantOptions;
}

const MIN_NOISE = 1e-3;
const MAX_NOISE = 1e6;

const NOISE_CALIBRATION_OPTIONS = optionNames<NoiseCalibrationOptions>({ targetEpsilon: true, delta: true, tolerance: true, accountant: true, rdpOptions: true });

/** The smallest z with epsilon(makeEvent(z), delta) <= targetEpsilon, returned on the safe side. */
export function calibrateNoiseMultiplier(makeEvent: (noiseMultiplier: number) => DpEvent, options: NoiseCalibrationOptions): NoiseCalibration {
  rejectUnknownOptions(options, NOISE_CALIBRATION_OPTIONS, 'calibrateNoiseMultiplier');
  if (options.rdpOptions !== undefined) rejectUnknownOptions(options.rdpOptions, RDP_ACCOUNTANT_OPTIONS, "calibrateNoiseMultiplier's rdpOptions");
  const targetEpsilon = requirePositive('targetEpsilon', options.targetEpsilon);
  const delta = requireOpenUnit('delta', options.delta);
  const tolerance = requirePositive('tolerance', options.tolerance ?? 1e-9);
  const account = options.accountant ?? ((event: DpEvent, d: number) => rdpEpsilon(event, d, options.rdpOptions));
  const epsilonAt = (z: number) => account(makeEvent(z), delta).epsilon;
  // f(log z) > 0: too little noise. epsilon decreases in z.
  const f = (logZ: number) => epsilonAt(Math.exp(logZ)) - targetEpsilon;
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
