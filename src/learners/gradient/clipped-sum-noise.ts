/**
 * The noise of one release of a sum of clipped gradients, shared by every gradient learner (DP-GD,
 * DP-SGD, shuffled SGD, federated nodes): its event, its grid and how to add it. The event is a
 * function of public quantities only, so it is known before any data is read.
 */
import { addGaussianGridNoise, planGaussianGrid } from '../../mechanisms/grid-noise.js';
import { fillGaussian } from '../../random/continuous.js';
import type { Rng } from '../../random/rng.js';
import { clippedSumRoundingBound } from '../glm/per-example.js';
import { gaussianEvent } from '../../accounting/events/constructors.js';
import type { GaussianEvent } from '../../accounting/events/types.js';

/** The noise one release of a sum of clipped gradients gets: its event, and how to add it. */
export interface SumNoise {
  readonly event: GaussianEvent;
  /** Noise std in the units of the sum. */
  readonly noiseStd: number;
  /** The grid (undefined for continuous floating-point noise, opted into with `continuousNoise`). */
  readonly granularity?: number;
  /** Adds the noise to the sum in place. */
  readonly add: (sum: Float64Array, rng: Rng) => void;
}

/**
 * The noise of one release of a sum of at most `rows` clipped gradients (norm <= C) in d
 * coordinates, of exact L2 sensitivity `sensitivity` (2C replace-one, C add/remove-one), with
 * noise multiplier at least z. By default exact discrete Gaussian noise on a power-of-two grid
 * (`mechanisms/grid-noise.ts`); the sensitivity also pays twice the public bound on the
 * floating-point error of the computed sum (`clippedSumRoundingBound`; `roundingSlack` replaces that
 * twice-the-bound term for sums computed in another order, e.g. by a SQL engine). The event is a function
 * of public quantities only, so it is known before any data is read.
 */
export function clippedSumNoise(params: { sensitivity: number; clipNorm: number; rows: number; d: number; noiseMultiplier: number; continuous?: boolean; roundingSlack?: number }): SumNoise {
  const { sensitivity, noiseMultiplier: z, d } = params;
  if (params.continuous) {
    const noiseStd = z * sensitivity;
    const noise = new Float64Array(d);
    return {
      event: gaussianEvent(z),
      noiseStd,
      add: (sum, rng) => {
        fillGaussian(rng, noise, noiseStd);
        for (let j = 0; j < d; j++) sum[j] += noise[j];
      },
    };
  }
  const plan = planGaussianGrid({
    sensitivity,
    noiseMultiplier: z,
    dimension: d,
    roundingSlack: params.roundingSlack ?? 2 * clippedSumRoundingBound(params.rows, params.clipNorm, d),
  });
  const scratch = new Float64Array(d);
  return { event: plan.event, noiseStd: plan.noiseStd, granularity: plan.granularity, add: (sum, rng) => addGaussianGridNoise(sum, plan, rng, scratch) };
}
