/**
 * The Laplace mechanism (Dwork et al. 2006; `004` Prop. 2.1): adding Lap(b) noise with
 * b = Delta_1 / epsilon to each coordinate of a query of L1 sensitivity Delta_1 is epsilon-DP.
 * Returns the noised value and its `laplace` event (noiseMultiplier = b / Delta_1).
 */
import { laplaceEvent, type LaplaceEvent } from '../accounting/events.js';
import { InvalidParameterError } from '../errors.js';
import { defaultRng, type Rng } from '../random/rng.js';
import { requirePositive } from '../validate.js';
import { addNoise, fromVector, gridSensitivity, toVector, type QueryValue } from './noise.js';

export interface LaplaceMechanismOptions {
  /** L1 sensitivity of the query. */
  readonly sensitivity: number;
  /** Target epsilon (pure DP); give this or `scale`. */
  readonly epsilon?: number;
  /** Laplace scale b; give this or `epsilon`. */
  readonly scale?: number;
  /** Grid step for exact discrete Laplace noise (default: continuous noise). */
  readonly granularity?: number;
  readonly rng?: Rng;
}

export interface LaplaceMechanismResult<T extends QueryValue> {
  readonly value: T extends number ? number : Float64Array;
  readonly event: LaplaceEvent;
  /** The Laplace scale b that was used. */
  readonly scale: number;
  /** The L1 sensitivity the noise was calibrated to (including the grid rounding). */
  readonly sensitivity: number;
  /** The pure-DP epsilon of this release: sensitivity / scale. */
  readonly epsilon: number;
}

export function laplaceMechanism<T extends QueryValue>(value: T, options: LaplaceMechanismOptions): LaplaceMechanismResult<T> {
  const vector = toVector(value);
  requirePositive('sensitivity', options.sensitivity);
  if ((options.epsilon === undefined) === (options.scale === undefined)) {
    throw new InvalidParameterError('epsilon', options.epsilon, 'given, or scale given instead (exactly one of the two)');
  }
  const sensitivity = gridSensitivity(options.sensitivity, options.granularity, vector.length, 'l1');
  const scale =
    options.scale !== undefined
      ? requirePositive('scale', options.scale)
      : (sensitivity / requirePositive('epsilon', options.epsilon)) * (1 + 4 * Number.EPSILON);
  const rng = options.rng ?? defaultRng();
  addNoise(vector, 'laplace', scale, rng, options.granularity);
  const noiseMultiplier = scale / sensitivity;
  return {
    value: fromVector(value, vector),
    event: laplaceEvent(noiseMultiplier, { discrete: options.granularity !== undefined }),
    scale,
    sensitivity,
    epsilon: 1 / noiseMultiplier,
  };
}
