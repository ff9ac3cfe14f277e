/**
 * Data-independent choice of the regulariser lambda and the noise sigma of objective perturbation
 * and of Approximate Minima Perturbation (AMP, `../events/approximate-minima-perturbation.ts`), as
 * in `003` Sec. 5 ("parameter selection"):
 *
 *   "find the smallest possible lambda such that sigma isn't too large": sigma <= f sigma_G, where
 *   sigma_G is the noise of the Gaussian mechanism that is (epsilon, delta)-DP and f = 1.3.
 *
 * sigma_G is taken at sensitivity L, the sensitivity of the Gaussian mechanism that objective
 * perturbation contains as a special case (`003` Lemma 3.4: its privacy is never better than the
 * Gaussian mechanism's with sensitivity L and noise sigma), computed with the same accountant:
 * RDP (`003` Sec. 5's choice) or, for `'pld'`, the exact analytic Gaussian (Balle & Wang 2018).
 * For AMP the sensitivity is the clipping norm C (the L of the event).
 *
 * Method. epsilon(lambda, sigma) decreases in both lambda (the floor -log(1 - beta/lambda) and,
 * for AMP, the Gaussian term 2 tau^2 alpha / (sigma_out^2 lambda^2) fall) and sigma. So
 * "the sigma calibrated for lambda is <= f sigma_G" holds iff the event with sigma = f sigma_G
 * meets the target at lambda, and the smallest such lambda is a root of
 * lambda -> epsilon(lambda, f sigma_G) - targetEpsilon, found by Brent's method on log lambda and
 * returned on the safe (larger) end of a bracket of relative width `tolerance`. Every input is
 * public (epsilon, delta, L, beta, f, tau, sigma_out), so the selection costs no privacy. With the
 * PLD accountant the monotonicity holds only up to its discretisation accuracy (1e-4 relative in
 * epsilon), so "smallest" is then approximate; the returned pair always meets the target.
 */
import { CalibrationError, InvalidParameterError } from '../../errors.js';
import { brentRoot } from '../../math/root-finding.js';
import { optionNames, rejectUnknownOptions, requireOpenUnit, requirePositive } from '../../validate.js';
import { calibrateNoiseMultiplier } from './calibrate.js';
import {
  calibrateObjectivePerturbation,
  epsilonOrInfinity,
  objectivePerturbationAccountant,
  objectivePerturbationFamilyEvent,
  AMP_OUTPUT_PARAMETERS,
  type AmpOutputParameters,
  type ObjectivePerturbationAccountant,
} from './calibrate-objective-perturbation.js';
import type { DpEvent } from '../events/types.js';
import { gaussianEvent } from '../events/constructors.js';
import { exactGaussianCompositionNoiseMultiplier } from '../gaussian/gaussian-composition.js';

/** `003` Sec. 5's factor f. */
export const DEFAULT_NOISE_FACTOR = 1.3;
/** `003` Sec. 5's tau (gradient-norm bound of the SUM objective). */
export const DEFAULT_AMP_GRAD_TOLERANCE = 0.01;
/** `003` Sec. 5's sigma_out. */
export const DEFAULT_AMP_OUTPUT_NOISE_STD = 0.15;

export interface ParameterSelectionOptions {
  readonly targetEpsilon: number;
  readonly delta: number;
  /** L: per-example gradient-norm bound (the clipping norm for AMP). */
  readonly lipschitz: number;
  /** beta: per-example smoothness bound (> 0). */
  readonly smoothness: number;
  /** f > 0: sigma may be at most f sigma_G (default 1.3, `003` Sec. 5). */
  readonly noiseFactor?: number;
  /** Given: select for AMP (`003` Alg. 1), whose event adds the output Gaussian. */
  readonly output?: AmpOutputParameters;
  readonly accountant?: ObjectivePerturbationAccountant;
  /** Relative width of the final lambda bracket (default 1e-10). */
  readonly tolerance?: number;
}

export interface ParameterSelection {
  /** lambda: the smallest regulariser (up to `tolerance`, rounded up) with sigma <= f sigma_G. */
  readonly regularization: number;
  /** sigma: the noise calibrated for lambda (<= f sigma_G). */
  readonly noiseStd: number;
  /** sigma_G: the Gaussian mechanism's noise for (epsilon, delta) at sensitivity L. */
  readonly gaussianNoiseStd: number;
  readonly noiseFactor: number;
  /** epsilon of `event` at delta by the accountant (<= targetEpsilon). */
  readonly epsilon: number;
  readonly delta: number;
  readonly event: DpEvent;
  readonly accountant: ObjectivePerturbationAccountant;
}

/** sigma_G: the Gaussian mechanism's noise std for (epsilon, delta) at L2 sensitivity `sensitivity`. */
export function gaussianReferenceNoiseStd(targetEpsilon: number, delta: number, sensitivity: number, accountant: ObjectivePerturbationAccountant = 'rdp'): number {
  requirePositive('targetEpsilon', targetEpsilon);
  requireOpenUnit('delta', delta);
  requirePositive('sensitivity', sensitivity);
  const z = accountant === 'pld'
    ? exactGaussianCompositionNoiseMultiplier(targetEpsilon, delta)
    : calibrateNoiseMultiplier((m) => gaussianEvent(m), { targetEpsilon, delta, accountant: objectivePerturbationAccountant(accountant) }).noiseMultiplier;
  return z * sensitivity;
}

/** Largest lambda / beta searched before concluding that f is too small. */
const MAX_RATIO = 1e15;

const PARAMETER_SELECTION_OPTIONS = optionNames<ParameterSelectionOptions>({ targetEpsilon: true, delta: true, lipschitz: true, smoothness: true, noiseFactor: true, output: true, accountant: true, tolerance: true });

/**
 * `003` Sec. 5's selection for objective perturbation (or AMP with `output`): the smallest lambda
 * whose calibrated sigma is <= f sigma_G, and that sigma. Throws `CalibrationError` when even
 * lambda -> Infinity needs sigma > f sigma_G (f too small for this target).
 *
 * @example
 * selectObjectivePerturbationParameters({targetEpsilon: 1, delta: 1e-5, lipschitz: 1, smoothness: 0.25})
 * // {regularization: ..., noiseStd: <= 1.3 sigma_G, ...}
 */
export function selectObjectivePerturbationParameters(options: ParameterSelectionOptions): ParameterSelection {
  rejectUnknownOptions(options, PARAMETER_SELECTION_OPTIONS, 'selectObjectivePerturbationParameters');
  if (options.output !== undefined) rejectUnknownOptions(options.output, AMP_OUTPUT_PARAMETERS, "selectObjectivePerturbationParameters' output");
  const targetEpsilon = requirePositive('targetEpsilon', options.targetEpsilon);
  const delta = requireOpenUnit('delta', options.delta);
  const lipschitz = requirePositive('lipschitz', options.lipschitz);
  const smoothness = requirePositive('smoothness', options.smoothness);
  const noiseFactor = requirePositive('noiseFactor', options.noiseFactor ?? DEFAULT_NOISE_FACTOR);
  const tolerance = requirePositive('tolerance', options.tolerance ?? 1e-10);
  const accountantName = options.accountant ?? 'rdp';
  const accountant = objectivePerturbationAccountant(accountantName);
  const gaussianNoiseStd = gaussianReferenceNoiseStd(targetEpsilon, delta, lipschitz, accountantName);
  const cap = noiseFactor * gaussianNoiseStd;
  const epsilonAt = (lambda: number): number => {
    const event = objectivePerturbationFamilyEvent(cap, { lipschitz, smoothness, regularization: lambda, output: options.output });
    return epsilonOrInfinity(accountant, event, delta);
  };

  // Bracket [lo, hi] in lambda: epsilon(lo) > target >= epsilon(hi).
  const lowest = smoothness * (1 + 1e-9);
  let hi = 2 * smoothness;
  while (epsilonAt(hi) > targetEpsilon) {
    hi *= 2;
    if (hi > MAX_RATIO * smoothness) {
      throw new CalibrationError(
        `no regularization up to ${MAX_RATIO} * beta makes sigma <= ${noiseFactor} sigma_G = ${cap} reach epsilon ${targetEpsilon} at delta ${delta}; raise noiseFactor`,
      );
    }
  }
  let lo = Math.max(hi / 2, lowest);
  while (epsilonAt(lo) <= targetEpsilon) {
    if (lo === lowest) return finish(lo);
    hi = lo;
    lo = Math.max(lo / 2, lowest);
  }
  const g = (u: number): number => epsilonAt(Math.exp(u)) - targetEpsilon;
  const root = brentRoot(g, Math.log(lo), Math.log(hi), { xAbsTol: tolerance / 4, xRelTol: 0 });
  return finish(Math.exp(root.hi));

  function finish(start: number): ParameterSelection {
    let lambda = start;
    for (let i = 0; epsilonAt(lambda) > targetEpsilon; i++) {
      if (i > 100) throw new CalibrationError(`parameter selection could not reach epsilon ${targetEpsilon} on the safe side`);
      lambda *= 1 + tolerance;
    }
    // The calibrated sigma for lambda; never above the cap, which is known to meet the target.
    const calibrated = calibrateObjectivePerturbation({ targetEpsilon, delta, lipschitz, smoothness, regularization: lambda, output: options.output, accountant: accountantName });
    const useCap = calibrated.noiseStd > cap;
    const event = useCap ? objectivePerturbationFamilyEvent(cap, { lipschitz, smoothness, regularization: lambda, output: options.output }) : calibrated.event;
    const epsilon = useCap ? accountant(event, delta).epsilon : calibrated.epsilon;
    if (!(epsilon <= targetEpsilon)) throw new CalibrationError(`parameter selection: epsilon ${epsilon} > target ${targetEpsilon} after calibration`);
    return Object.freeze({
      regularization: lambda,
      noiseStd: useCap ? cap : calibrated.noiseStd,
      gaussianNoiseStd,
      noiseFactor,
      epsilon,
      delta,
      event,
      accountant: accountantName,
    });
  }
}

/** selectObjectivePerturbationParameters' options (forwarded) but `output`, and AMP's tau and sigma_out. */
const SELECT_AMP_PARAMETERS_OPTIONS = optionNames<NonNullable<Parameters<typeof selectAmpParameters>[0]>>({ targetEpsilon: true, delta: true, lipschitz: true, smoothness: true, noiseFactor: true, accountant: true, tolerance: true, gradTolerance: true, outputNoiseStd: true });

/**
 * `003` Sec. 5's parameters for AMP, Approximate Minima Perturbation (Alg. 1): tau and sigma_out
 * fixed and data-independent (defaults 0.01 and 0.15, the paper's), then lambda and sigma by
 * `selectObjectivePerturbationParameters` with the AMP event. `lipschitz` is the clipping norm C
 * (or the loss's smaller L).
 */
export function selectAmpParameters(
  options: Omit<ParameterSelectionOptions, 'output'> & { gradTolerance?: number; outputNoiseStd?: number },
): ParameterSelection & AmpOutputParameters {
  if (typeof options === 'object' && options !== null && 'output' in options && (options as { output?: unknown }).output !== undefined) {
    throw new InvalidParameterError('output', (options as { output?: unknown }).output, 'absent (give gradTolerance and outputNoiseStd)');
  }
  rejectUnknownOptions(options, SELECT_AMP_PARAMETERS_OPTIONS, 'selectAmpParameters');
  const { gradTolerance: tau, outputNoiseStd: sigmaOut, ...selectionOptions } = options;
  const gradTolerance = requirePositive('gradTolerance', tau ?? DEFAULT_AMP_GRAD_TOLERANCE);
  const outputNoiseStd = requirePositive('outputNoiseStd', sigmaOut ?? DEFAULT_AMP_OUTPUT_NOISE_STD);
  const selection = selectObjectivePerturbationParameters({ ...selectionOptions, output: { gradTolerance, outputNoiseStd } });
  return Object.freeze({ ...selection, gradTolerance, outputNoiseStd });
}
