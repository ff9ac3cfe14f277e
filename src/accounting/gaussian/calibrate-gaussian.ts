/**
 * Noise calibration for the Gaussian mechanism: the noise needed for a target (epsilon, delta).
 *
 * - `analytic` (Balle & Wang 2018, "Improving the Gaussian Mechanism for Differential Privacy",
 *   Alg. 1's goal by a different route): the smallest noise multiplier z whose exact privacy
 *   profile (`003` eq. B.1, see gaussian-profile.ts) satisfies delta(epsilon) <= delta, found by
 *   Brent's method on log delta(z) to a relative accuracy of 1e-12 and returned at the safe end of
 *   the final bracket, so the guarantee holds for the returned z itself.
 * - `classical` (`004`, Prop. 2.2; Dwork & Roth 2014, Thm. A.1): z = sqrt(2 log(1.25/delta)) / epsilon,
 *   proved only for epsilon < 1 — larger epsilons are refused.
 */
import { InvalidParameterError } from '../../errors.js';
import { brentRoot, expandBracket } from '../../math/root-finding.js';
import { optionNames, rejectUnknownOptions, requireOpenUnit, requirePositive } from '../../validate.js';
import { gaussianDelta, gaussianLogDelta } from './gaussian-profile.js';

export type GaussianCalibrationMethod = 'analytic' | 'classical';

export interface GaussianCalibration {
  /** Absolute noise standard deviation: noiseMultiplier * sensitivity. */
  readonly noiseStd: number;
  /** Noise std divided by the L2 sensitivity. */
  readonly noiseMultiplier: number;
  readonly epsilon: number;
  readonly delta: number;
  readonly sensitivity: number;
  readonly method: GaussianCalibrationMethod;
}

export interface GaussianCalibrationOptions {
  readonly targetEpsilon: number;
  readonly delta: number;
  /** L2 sensitivity of the query (default 1). */
  readonly sensitivity?: number;
  readonly method?: GaussianCalibrationMethod;
}

/** One double-precision step up, so that rounding never lowers a noise level. */
function roundUp(x: number): number {
  return x * (1 + 4 * Number.EPSILON);
}

/** The classical noise multiplier of `004` Prop. 2.2 (valid for epsilon < 1 only). */
export function classicalGaussianNoiseMultiplier(targetEpsilon: number, delta: number): number {
  requirePositive('targetEpsilon', targetEpsilon);
  requireOpenUnit('delta', delta);
  if (!(targetEpsilon < 1)) {
    throw new InvalidParameterError(
      'targetEpsilon',
      targetEpsilon,
      '< 1 for the classical calibration',
      "the classical calibration is proved for epsilon < 1 only; use the analytic calibration (method 'analytic')",
    );
  }
  return roundUp(Math.sqrt(2 * Math.log(1.25 / delta)) / targetEpsilon);
}

/**
 * The smallest noise multiplier z with delta(targetEpsilon; z) <= delta for the exact Gaussian
 * privacy profile (`003` eq. B.1). The returned z satisfies the target exactly (checked), and is
 * within a relative 1e-12 of the true minimum.
 */
export function analyticGaussianNoiseMultiplier(targetEpsilon: number, delta: number): number {
  requirePositive('targetEpsilon', targetEpsilon);
  requireOpenUnit('delta', delta);
  const logTarget = Math.log(delta);
  // log delta(z) is decreasing in z; f(z) > 0 means "too little noise".
  const f = (z: number): number => gaussianLogDelta(targetEpsilon, z) - logTarget;
  const start = Math.sqrt(2 * Math.log(1.25 / delta)) / targetEpsilon;
  const bracket = expandBracket(f, start, { direction: 'both', lowerLimit: 1e-12, upperLimit: 1e12 });
  const { hi } = brentRoot(f, bracket.lo, bracket.hi, { xRelTol: 1e-13 });
  // hi is on the safe side of the root; verify in log and in linear space (exp can round a log
  // residual of 0 up past delta), and step further if rounding says otherwise.
  let z = hi;
  for (let i = 0; f(z) > 0 || gaussianDelta(targetEpsilon, z) > delta; i++) {
    if (i > 60) throw new InvalidParameterError('delta', delta, 'reachable by the analytic Gaussian calibration');
    z = roundUp(z);
  }
  return z;
}

const CALIBRATE_GAUSSIAN_OPTIONS = optionNames<GaussianCalibrationOptions>({ targetEpsilon: true, delta: true, sensitivity: true, method: true });

/** Calibrates the Gaussian mechanism for a target (epsilon, delta) and L2 sensitivity. */
export function calibrateGaussian(options: GaussianCalibrationOptions): GaussianCalibration {
  rejectUnknownOptions(options, CALIBRATE_GAUSSIAN_OPTIONS, 'calibrateGaussian');
  const method = options.method ?? 'analytic';
  if (method !== 'analytic' && method !== 'classical') {
    throw new InvalidParameterError('method', method, "'analytic' or 'classical'");
  }
  const sensitivity = requirePositive('sensitivity', options.sensitivity ?? 1);
  const targetEpsilon = requirePositive('targetEpsilon', options.targetEpsilon);
  const delta = requireOpenUnit('delta', options.delta);
  const noiseMultiplier =
    method === 'analytic'
      ? analyticGaussianNoiseMultiplier(targetEpsilon, delta)
      : classicalGaussianNoiseMultiplier(targetEpsilon, delta);
  return Object.freeze({
    noiseStd: roundUp(noiseMultiplier * sensitivity),
    noiseMultiplier,
    epsilon: targetEpsilon,
    delta,
    sensitivity,
    method,
  });
}
