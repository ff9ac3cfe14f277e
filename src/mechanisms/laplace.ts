/**
 * The Laplace mechanism (Dwork et al. 2006; `004` Prop. 2.1): adding Lap(b) noise with
 * b = Delta_1 / epsilon to each coordinate of a query of L1 sensitivity Delta_1 is epsilon-DP.
 * Returns the noised value and its `laplace` event (noiseMultiplier = b / Delta_1).
 *
 * By default the noise is the exact discrete Laplace (Canonne, Kamath & Steinke 2020, Alg. 2) on a
 * public power-of-two grid (`grid-noise.ts`): the value is rounded to the grid, the rounding paid
 * in the sensitivity, so floating-point attacks (Mironov 2012, who showed them on exactly this
 * mechanism) do not apply. `granularity` chooses the grid; `continuous: true` gives floating-point
 * noise (no proven guarantee).
 */
import type { LaplaceEvent } from '../accounting/events/types.js';
import { laplaceEvent } from '../accounting/events/constructors.js';
import { InvalidParameterError } from '../errors.js';
import { defaultRng, type Rng } from '../random/rng.js';
import { optionNames, rejectUnknownOptions, requirePositive } from '../validate.js';
import { addLaplaceGridNoise, planLaplaceGrid } from './grid-noise.js';
import { addContinuousNoise, fromVector, toVector, type QueryValue } from './noise.js';

export interface LaplaceMechanismOptions {
  /** L1 sensitivity of the query. */
  readonly sensitivity: number;
  /** Target epsilon (pure DP); give this or `scale`. */
  readonly epsilon?: number;
  /** Laplace scale b; give this or `epsilon`. */
  readonly scale?: number;
  /** The grid of the discrete noise, a power of two (default: chosen from the sensitivity and the dimension). */
  readonly granularity?: number;
  /** Floating-point noise instead (vulnerable to floating-point attacks; for comparisons only). */
  readonly continuous?: boolean;
  readonly rng?: Rng;
}

export interface LaplaceMechanismResult<T extends QueryValue> {
  readonly value: T extends number ? number : Float64Array;
  readonly event: LaplaceEvent;
  /** The Laplace scale b that was used (in the query's units). */
  readonly scale: number;
  /** The L1 sensitivity the noise was calibrated to (including the grid rounding). */
  readonly sensitivity: number;
  /** The pure-DP epsilon of this release: sensitivity / scale (at most the target). */
  readonly epsilon: number;
  /** The grid of the released value (undefined for continuous noise). */
  readonly granularity?: number;
}

const LAPLACE_MECHANISM_OPTIONS = optionNames<LaplaceMechanismOptions>({ sensitivity: true, epsilon: true, scale: true, granularity: true, continuous: true, rng: true });

export function laplaceMechanism<T extends QueryValue>(value: T, options: LaplaceMechanismOptions): LaplaceMechanismResult<T> {
  rejectUnknownOptions(options, LAPLACE_MECHANISM_OPTIONS, 'laplaceMechanism');
  const vector = toVector(value);
  const sensitivity = requirePositive('sensitivity', options.sensitivity);
  if ((options.epsilon === undefined) === (options.scale === undefined)) {
    throw new InvalidParameterError('epsilon', options.epsilon, 'given, or scale given instead (exactly one of the two)');
  }
  if (options.continuous && options.granularity !== undefined) {
    throw new InvalidParameterError('granularity', options.granularity, 'absent with continuous: true (continuous noise has no grid)');
  }
  const requested = options.scale !== undefined ? requirePositive('scale', options.scale) / sensitivity : (1 / requirePositive('epsilon', options.epsilon)) * (1 + 4 * Number.EPSILON);
  const rng = options.rng ?? defaultRng();
  if (options.continuous) {
    const scale = requested * sensitivity;
    addContinuousNoise(vector, 'laplace', scale, rng);
    const noiseMultiplier = scale / sensitivity;
    return { value: fromVector(value, vector), event: laplaceEvent(noiseMultiplier), scale, sensitivity, epsilon: 1 / noiseMultiplier };
  }
  const plan = planLaplaceGrid({ sensitivity, noiseMultiplier: requested, dimension: vector.length, ...(options.granularity === undefined ? {} : { granularity: options.granularity }) });
  addLaplaceGridNoise(vector, plan, rng);
  return {
    value: fromVector(value, vector),
    event: plan.event,
    scale: plan.scale,
    sensitivity: plan.gridSensitivity * plan.granularity,
    epsilon: 1 / plan.noiseMultiplier,
    granularity: plan.granularity,
  };
}
