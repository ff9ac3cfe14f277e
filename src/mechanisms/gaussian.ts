/**
 * The Gaussian mechanism: adds N(0, sigma^2) to each coordinate of a query of L2 sensitivity
 * Delta_2. Either the noise is given (`noiseMultiplier` = sigma / Delta_2) or it is calibrated for a
 * target (epsilon, delta) — analytically (Balle & Wang 2018, exact: `003` eq. B.1) by default, or by
 * the classical formula of `004` Prop. 2.2 (epsilon < 1 only). Returns the `gaussian` event.
 */
import { calibrateGaussian, type GaussianCalibrationMethod } from '../accounting/calibrate-gaussian.js';
import { gaussianEvent, type GaussianEvent } from '../accounting/events.js';
import { InvalidParameterError } from '../errors.js';
import { defaultRng, type Rng } from '../random/rng.js';
import { requirePositive } from '../validate.js';
import { addNoise, fromVector, gridSensitivity, toVector, type QueryValue } from './noise.js';

export interface GaussianMechanismOptions {
  /** L2 sensitivity of the query. */
  readonly sensitivity: number;
  /** Noise std / sensitivity; give this or (targetEpsilon, delta). */
  readonly noiseMultiplier?: number;
  readonly targetEpsilon?: number;
  readonly delta?: number;
  /** Calibration for a target: 'analytic' (default) or 'classical'. */
  readonly calibration?: GaussianCalibrationMethod;
  /** Grid step for exact discrete Gaussian noise (default: continuous noise). */
  readonly granularity?: number;
  readonly rng?: Rng;
}

export interface GaussianMechanismResult<T extends QueryValue> {
  readonly value: T extends number ? number : Float64Array;
  readonly event: GaussianEvent;
  readonly noiseStd: number;
  readonly noiseMultiplier: number;
  /** The L2 sensitivity the noise was calibrated to (including the grid rounding). */
  readonly sensitivity: number;
}

export function gaussianMechanism<T extends QueryValue>(value: T, options: GaussianMechanismOptions): GaussianMechanismResult<T> {
  const vector = toVector(value);
  requirePositive('sensitivity', options.sensitivity);
  const hasTarget = options.targetEpsilon !== undefined || options.delta !== undefined;
  if (hasTarget === (options.noiseMultiplier !== undefined)) {
    throw new InvalidParameterError('noiseMultiplier', options.noiseMultiplier, 'given, or targetEpsilon and delta given instead (exactly one of the two)');
  }
  const sensitivity = gridSensitivity(options.sensitivity, options.granularity, vector.length, 'l2');
  const noiseMultiplier =
    options.noiseMultiplier !== undefined
      ? requirePositive('noiseMultiplier', options.noiseMultiplier)
      : calibrateGaussian({
          targetEpsilon: options.targetEpsilon as number,
          delta: options.delta as number,
          method: options.calibration,
        }).noiseMultiplier;
  const noiseStd = noiseMultiplier * sensitivity * (1 + 4 * Number.EPSILON);
  addNoise(vector, 'gaussian', noiseStd, options.rng ?? defaultRng(), options.granularity);
  return {
    value: fromVector(value, vector),
    event: gaussianEvent(noiseMultiplier, { discrete: options.granularity !== undefined }),
    noiseStd,
    noiseMultiplier,
    sensitivity,
  };
}
