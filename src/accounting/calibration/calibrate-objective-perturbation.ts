/**
 * Noise calibration for objective perturbation (`003` Thm. 3.1/3.2) and for Approximate Minima
 * Perturbation (`003` Alg. 1, Thm. 4.1): the smallest sigma (std of the objective's linear noise b)
 * for which the event meets a target (epsilon, delta), for a given regularisation lambda.
 *
 * The search is `calibrateNoiseMultiplier` on the unitless z = sigma / L (epsilon decreases in
 * sigma: both L^2/(2 sigma^2) and the half-normal moment term of Thm. 3.2 do, and so does the
 * PLD of Lemma D.6), which returns the safe end of its bracket and re-accounts it.
 *
 * Accountant. `'rdp'` (default) is what `003` Sec. 5 uses (Thm. 3.2 / 4.1, then the RDP -> DP
 * conversion). `'pld'` uses the dominating pair of `003` Lemma D.6 (Thm. 3.1) composed, for AMP,
 * with the Gaussian's: a tighter calibration (less noise). The PLD is the exact profile of a pair
 * whose Rényi divergence is at most Thm. 3.2's bound, so an event calibrated with RDP also meets
 * the target under the PLD accountant (up to that accountant's 1e-4 relative discretisation
 * accuracy, which is far below the RDP conversion's slack).
 *
 * Floor. As sigma -> Infinity, epsilon tends to -log(1 - beta/lambda) (the first term of both
 * theorems), so a target at or below it is unreachable for that lambda: refused with
 * `InvalidParameterError` naming `regularization` and the smallest lambda that could work,
 * beta / (1 - e^{-epsilon}).
 */
import { InvalidParameterError, NumericalError } from '../../errors.js';
import { optionNames, rejectUnknownOptions, requireNonNegative, requireOpenUnit, requirePositive } from '../../validate.js';
import { ampEvent } from '../events/approximate-minima-perturbation.js';
import { calibrateNoiseMultiplier, type EpsilonFunction } from './calibrate.js';
import type { DpEvent } from '../events/types.js';
import { objectivePerturbationEvent } from '../events/constructors.js';
import type { PrivacyGuarantee } from '../guarantee.js';
import { pldEpsilon } from '../pld/accountant.js';
import { rdpEpsilon } from '../rdp/accountant.js';

/** Which accountant calibrates objective perturbation: RDP (`003` Thm. 3.2, Sec. 5) or PLD (Thm. 3.1, App. D). */
export type ObjectivePerturbationAccountant = 'rdp' | 'pld';

/** The accountant function for a name (throws `InvalidParameterError` for any other name). */
export function objectivePerturbationAccountant(name: ObjectivePerturbationAccountant | undefined): EpsilonFunction {
  const which = name ?? 'rdp';
  if (which === 'rdp') return (event: DpEvent, delta: number) => rdpEpsilon(event, delta);
  if (which === 'pld') return (event: DpEvent, delta: number) => pldEpsilon(event, delta);
  throw new InvalidParameterError('accountant', name, "'rdp' or 'pld'");
}

/**
 * epsilon of an event by the accountant, or Infinity when the accountant can give no bound
 * (NumericalError: e.g. the PLD accountant cannot resolve an almost non-private event). For
 * searches only: Infinity is the pessimistic answer ("the target is not met").
 */
export function epsilonOrInfinity(accountant: EpsilonFunction, event: DpEvent, delta: number): number {
  try {
    return accountant(event, delta).epsilon;
  } catch (error) {
    if (error instanceof NumericalError) return Infinity;
    throw error;
  }
}

const NO_BOUND: PrivacyGuarantee = Object.freeze({
  epsilon: Infinity,
  delta: 0,
  accountant: 'pld',
  neighboringRelation: 'addOrRemoveOne',
  guarantee: 'proven',
  warnings: ['the accountant gave no bound'],
});

/** The AMP part of the event: the Gaussian release of theta~ - theta^P (`003` Thm. 4.1). */
export interface AmpOutputParameters {
  /** tau: gradient-norm bound of the SUM objective at the released approximate minimiser. */
  readonly gradTolerance: number;
  /** sigma_out: std of the output noise. */
  readonly outputNoiseStd: number;
}

export const AMP_OUTPUT_PARAMETERS = optionNames<AmpOutputParameters>({ gradTolerance: true, outputNoiseStd: true });

export interface ObjectivePerturbationCalibrationOptions {
  readonly targetEpsilon: number;
  readonly delta: number;
  /** L: per-example gradient-norm bound. */
  readonly lipschitz: number;
  /** beta: per-example smoothness bound. */
  readonly smoothness: number;
  /** lambda > beta: regulariser of the SUM objective. */
  readonly regularization: number;
  /** Given: calibrate AMP (`003` Alg. 1) instead of exact objective perturbation. */
  readonly output?: AmpOutputParameters;
  readonly accountant?: ObjectivePerturbationAccountant;
  /** Relative accuracy of sigma (default 1e-9; the result is always on the safe side). */
  readonly tolerance?: number;
}

export interface ObjectivePerturbationCalibration {
  /** sigma, the std of b: the event's `noiseStd`. */
  readonly noiseStd: number;
  /** epsilon of `event` at `delta` by the calibrating accountant (<= targetEpsilon). */
  readonly epsilon: number;
  readonly delta: number;
  readonly event: DpEvent;
  readonly guarantee: PrivacyGuarantee;
  readonly accountant: ObjectivePerturbationAccountant;
}

/** -log(1 - beta/lambda): the epsilon floor of objective perturbation as sigma -> Infinity (`003` Thm. 3.1/3.2). */
export function objectivePerturbationEpsilonFloor(smoothness: number, regularization: number): number {
  const beta = requireNonNegative('smoothness', smoothness);
  const lambda = requirePositive('regularization', regularization);
  if (!(lambda > beta)) return Infinity;
  return -Math.log1p(-beta / lambda);
}

/**
 * The event for noise std sigma: objective perturbation, or AMP's composition when `output` is
 * given.
 */
export function objectivePerturbationFamilyEvent(
  noiseStd: number,
  params: { lipschitz: number; smoothness: number; regularization: number; output?: AmpOutputParameters },
): DpEvent {
  const base = { noiseStd, lipschitz: params.lipschitz, smoothness: params.smoothness, regularization: params.regularization };
  return params.output === undefined ? objectivePerturbationEvent(base) : ampEvent({ ...base, ...params.output });
}

const OBJECTIVE_PERTURBATION_CALIBRATION_OPTIONS = optionNames<ObjectivePerturbationCalibrationOptions>({ targetEpsilon: true, delta: true, lipschitz: true, smoothness: true, regularization: true, output: true, accountant: true, tolerance: true });

/**
 * The smallest sigma (up to `tolerance`, on the safe side) for which objective perturbation
 * (or AMP, with `output`) with regularisation lambda is (targetEpsilon, delta)-DP by the chosen
 * accountant. Throws `InvalidParameterError` when lambda <= beta or the target is at or below
 * the floor -log(1 - beta/lambda), and `CalibrationError` when no sigma up to 1e6 L suffices.
 *
 * @example
 * calibrateObjectivePerturbation({targetEpsilon: 1, delta: 1e-5, lipschitz: 1, smoothness: 0.25, regularization: 10}).noiseStd
 */
export function calibrateObjectivePerturbation(options: ObjectivePerturbationCalibrationOptions): ObjectivePerturbationCalibration {
  rejectUnknownOptions(options, OBJECTIVE_PERTURBATION_CALIBRATION_OPTIONS, 'calibrateObjectivePerturbation');
  if (options.output !== undefined) rejectUnknownOptions(options.output, AMP_OUTPUT_PARAMETERS, "calibrateObjectivePerturbation's output");
  const targetEpsilon = requirePositive('targetEpsilon', options.targetEpsilon);
  const delta = requireOpenUnit('delta', options.delta);
  const lipschitz = requirePositive('lipschitz', options.lipschitz);
  const smoothness = requireNonNegative('smoothness', options.smoothness);
  const regularization = requirePositive('regularization', options.regularization);
  if (!(regularization > smoothness)) {
    throw new InvalidParameterError('regularization', regularization, `> smoothness (${smoothness})`, 'objective perturbation and AMP need lambda > beta');
  }
  const floor = objectivePerturbationEpsilonFloor(smoothness, regularization);
  if (!(floor < targetEpsilon)) {
    const smallest = smoothness / -Math.expm1(-targetEpsilon);
    throw new InvalidParameterError(
      'regularization',
      regularization,
      `> beta / (1 - e^-epsilon) = ${smallest}`,
      `no noise reaches epsilon ${targetEpsilon}: -log(1 - beta/lambda) = ${floor} is a floor of objective perturbation's epsilon`,
    );
  }
  const accountantName = options.accountant ?? 'rdp';
  const accountant = objectivePerturbationAccountant(accountantName);
  const params = { lipschitz, smoothness, regularization, output: options.output };
  // During the search an accountant failure counts as "target not met"; the returned event is
  // accounted by `accountant` itself (calibrateNoiseMultiplier re-accounts its answer).
  const searchAccountant: EpsilonFunction = (event, d) => {
    try {
      return accountant(event, d);
    } catch (error) {
      if (error instanceof NumericalError) return { ...NO_BOUND, delta: d };
      throw error;
    }
  };
  const calibration = calibrateNoiseMultiplier((z) => objectivePerturbationFamilyEvent(z * lipschitz, params), {
    targetEpsilon,
    delta,
    accountant: searchAccountant,
    tolerance: options.tolerance,
  });
  // The same product as inside makeEvent, so exactly the event's noiseStd.
  const noiseStd = calibration.noiseMultiplier * lipschitz;
  const event = calibration.event;
  return Object.freeze({
    noiseStd,
    epsilon: calibration.epsilon,
    delta,
    event,
    guarantee: calibration.guarantee,
    accountant: accountantName,
  });
}
