/**
 * The Gaussian mechanism: adds noise of std sigma to each coordinate of a query of L2 sensitivity
 * Delta_2. Either the noise is given (`noiseMultiplier` = sigma / Delta_2) or it is calibrated for
 * a target (epsilon, delta) — analytically (Balle & Wang 2018, exact: `003` eq. B.1) by default,
 * or by the classical formula of `004` Prop. 2.2 (epsilon < 1 only). Returns the `gaussian` event.
 *
 * By default the noise is exact discrete Gaussian noise on a public power-of-two grid
 * (`grid-noise.ts`; Canonne, Kamath & Steinke 2020): the value is rounded to the grid (paid in
 * the sensitivity) and every released number is exactly what the analysis speaks of, so the
 * floating-point attacks on textbook noise (Mironov 2012) do not apply. The grid is chosen so
 * that the accounted epsilon is within 0.01 % of the continuous mechanism's; pass `granularity`
 * to choose it yourself, or `continuous: true` for floating-point noise (no proven guarantee).
 */
import { calibrateGaussian, type GaussianCalibrationMethod } from '../accounting/gaussian/calibrate-gaussian.js';
import type { GaussianEvent } from '../accounting/events/types.js';
import { gaussianEvent } from '../accounting/events/constructors.js';
import { InvalidParameterError } from '../errors.js';
import { defaultRng, type Rng } from '../random/rng.js';
import { optionNames, rejectUnknownOptions, requirePositive } from '../validate.js';
import { addGaussianGridNoise, planGaussianGrid } from './grid-noise.js';
import { addContinuousNoise, fromVector, toVector, type QueryValue } from './noise.js';

export interface GaussianMechanismOptions {
  /** L2 sensitivity of the query. */
  readonly sensitivity: number;
  /** Noise std / sensitivity; give this or (targetEpsilon, delta). */
  readonly noiseMultiplier?: number;
  readonly targetEpsilon?: number;
  readonly delta?: number;
  /** Calibration for a target: 'analytic' (default) or 'classical'. */
  readonly calibration?: GaussianCalibrationMethod;
  /** The grid of the discrete noise, a power of two (default: chosen from the sensitivity and the dimension). */
  readonly granularity?: number;
  /** Floating-point noise instead (vulnerable to floating-point attacks; for comparisons only). */
  readonly continuous?: boolean;
  readonly rng?: Rng;
}

export interface GaussianMechanismResult<T extends QueryValue> {
  readonly value: T extends number ? number : Float64Array;
  readonly event: GaussianEvent;
  readonly noiseStd: number;
  /** The event's noise multiplier: at least the requested or calibrated one. */
  readonly noiseMultiplier: number;
  /** The L2 sensitivity the noise was calibrated to (including the grid rounding). */
  readonly sensitivity: number;
  /** The grid of the released value (undefined for continuous noise). */
  readonly granularity?: number;
}

const GAUSSIAN_MECHANISM_OPTIONS = optionNames<GaussianMechanismOptions>({ sensitivity: true, noiseMultiplier: true, targetEpsilon: true, delta: true, calibration: true, granularity: true, continuous: true, rng: true });

export function gaussianMechanism<T extends QueryValue>(value: T, options: GaussianMechanismOptions): GaussianMechanismResult<T> {
  rejectUnknownOptions(options, GAUSSIAN_MECHANISM_OPTIONS, 'gaussianMechanism');
  const vector = toVector(value);
  requirePositive('sensitivity', options.sensitivity);
  const hasTarget = options.targetEpsilon !== undefined || options.delta !== undefined;
  if (hasTarget === (options.noiseMultiplier !== undefined)) {
    throw new InvalidParameterError('noiseMultiplier', options.noiseMultiplier, 'given, or targetEpsilon and delta given instead (exactly one of the two)');
  }
  if (options.continuous && options.granularity !== undefined) {
    throw new InvalidParameterError('granularity', options.granularity, 'absent with continuous: true (continuous noise has no grid)');
  }
  const requested =
    options.noiseMultiplier !== undefined
      ? requirePositive('noiseMultiplier', options.noiseMultiplier)
      : calibrateGaussian({
          targetEpsilon: options.targetEpsilon as number,
          delta: options.delta as number,
          method: options.calibration,
        }).noiseMultiplier;
  const rng = options.rng ?? defaultRng();
  if (options.continuous) {
    const noiseStd = requested * options.sensitivity * (1 + 4 * Number.EPSILON);
    addContinuousNoise(vector, 'gaussian', noiseStd, rng);
    return { value: fromVector(value, vector), event: gaussianEvent(requested), noiseStd, noiseMultiplier: requested, sensitivity: options.sensitivity };
  }
  const plan = planGaussianGrid({ sensitivity: options.sensitivity, noiseMultiplier: requested, dimension: vector.length, ...(options.granularity === undefined ? {} : { granularity: options.granularity }) });
  addGaussianGridNoise(vector, plan, rng);
  return {
    value: fromVector(value, vector),
    event: plan.event,
    noiseStd: plan.noiseStd,
    noiseMultiplier: plan.noiseMultiplier,
    sensitivity: plan.gridSensitivity * plan.granularity,
    granularity: plan.granularity,
  };
}
