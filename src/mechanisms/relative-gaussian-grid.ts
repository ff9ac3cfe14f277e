/**
 * The Relative Gaussian Mechanism (`000` Def. 3) on a public power-of-two grid, with exact
 * discrete noise: the query value is rounded to the grid g and released as g (k + K), K_j exact
 * discrete Gaussian whose variance parameter is the exact rational gamma ||k||^2 + s_b^2 (in grid
 * steps), so that no floating-point value decides anything after the value is known.
 *
 * Relative sensitivity of the rounded query (`000` Def. 2). If the exact query values on
 * neighbouring inputs satisfy ||q - q'||^2 <= eta^2 ||q||^2 + R^2, and the values actually rounded
 * differ from them by at most rho0 each (g sqrt(d) / 2 for the rounding, plus any public bound on
 * the query's floating-point error), then for any t > 0
 *   ||q_r - q'_r||^2 <= (||q - q'|| + 2 rho0)^2 <= (1 + t)(eta^2 ||q||^2 + R^2) + (1 + 1/t) 4 rho0^2,
 *   ||q||^2 <= (1 + t) ||q_r||^2 + (1 + 1/t) rho0^2,
 * so q_r has relative sensitivity (eta', R') with
 *   eta' = (1 + t) eta,   R'^2 = (1 + t) R^2 + (1 + 1/t) rho0^2 ((1 + t) eta^2 + 4);
 * t = 2 rho0 / R (t = 2^-13 when R = 0) keeps both within a few rho0 / R of the originals.
 *
 * The noise. In grid steps the release is k + K with K_j ~ D(s(k)), s(k)^2 = gamma ||k||^2 + s_b^2:
 * by the smoothing coupling of `accounting/discrete-coupling.ts` each coordinate is, within a
 * factor e^{+-1e-500}, a post-processing of the continuous N(k_j, s(k)^2 - 64), i.e. of RGM with
 * relative noise gamma and baseline g sqrt(s_b^2 - 64) on q_r. The event records s_b
 * (`gridBaselineStd`); the accountants apply the reduction, and s_b is chosen so that the reduced
 * baseline still meets `000` Thm. 1's condition.
 */
import type { RelativeGaussianEvent } from '../accounting/events/types.js';
import { relativeGaussianEvent } from '../accounting/events/constructors.js';
import { relativeGaussianMinBaselineStd } from '../accounting/rdp/relative-gaussian.js';
import { InvalidParameterError } from '../errors.js';
import { doubleToRational, sampleDiscreteGaussianVariance } from '../random/exact.js';
import type { Rng } from '../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireNonNegative, requirePositive } from '../validate.js';
import { griddedGaussianEffectiveMultiplier, GRID_RESOLUTION, MIN_GRID_NOISE_STD, powerOfTwoAtMost } from './grid-noise.js';

const U = Number.EPSILON / 2;

export interface RelativeGaussianGrid {
  /** g: the public grid of the release. */
  readonly granularity: number;
  /** eta' and R' of the rounded query (module comment). */
  readonly eta: number;
  readonly rRel: number;
  readonly dimension: number;
}

const RELATIVE_GAUSSIAN_GRID_OPTIONS = optionNames<NonNullable<Parameters<typeof planRelativeGaussianGrid>[0]>>({ eta: true, rRel: true, dimension: true, extraError: true, granularityBound: true });

/**
 * The grid and the relative sensitivity of the rounded query. `granularityBound` caps g (e.g. so
 * that a given baseline spans >= 1024 steps); `extraError` is a public bound on the query's own
 * floating-point error, added to the rounding's g sqrt(d) / 2.
 */
export function planRelativeGaussianGrid(options: { eta: number; rRel: number; dimension: number; extraError?: number; granularityBound?: number }): RelativeGaussianGrid {
  rejectUnknownOptions(options, RELATIVE_GAUSSIAN_GRID_OPTIONS, 'planRelativeGaussianGrid');
  const eta = requirePositive('eta', options.eta);
  const rRel = requireNonNegative('rRel', options.rRel);
  const d = requireInteger('dimension', options.dimension, 1);
  const extra = requireNonNegative('extraError', options.extraError ?? 0);
  const bounds = [rRel > 0 ? (GRID_RESOLUTION * rRel) / Math.sqrt(d) : Infinity, options.granularityBound ?? Infinity];
  const bound = Math.min(...bounds);
  if (!Number.isFinite(bound)) throw new InvalidParameterError('rRel', rRel, '> 0, or a granularityBound given (the grid needs a public scale)');
  const granularity = powerOfTwoAtMost(bound);
  const rho0 = ((granularity * Math.sqrt(d)) / 2 + extra) * (1 + 1e-9);
  const t = rRel > 0 ? (2 * rho0) / rRel : 2 ** -13;
  const etaPrime = (1 + t) * eta * (1 + 4 * U);
  const rPrime = Math.sqrt((1 + t) * rRel * rRel + (1 + 1 / t) * rho0 * rho0 * ((1 + t) * eta * eta + 4)) * (1 + 4 * U);
  return { granularity, eta: etaPrime, rRel: rPrime, dimension: d };
}

/**
 * s_b: the integer baseline in grid steps (>= 1024) whose coupled continuous baseline
 * g sqrt(s_b^2 - 64) is at least `baselineStd` and meets `000` Thm. 1's condition at every order
 * for this gamma.
 */
export function relativeGaussianBaselineSteps(grid: RelativeGaussianGrid, gamma: number, baselineStd = 0): number {
  const needed = Math.max(baselineStd, relativeGaussianMinBaselineStd(grid.eta, gamma, grid.rRel, 1)) * (1 + 1e-12);
  let steps = Math.max(MIN_GRID_NOISE_STD, Math.ceil(needed / grid.granularity));
  while (grid.granularity * griddedGaussianEffectiveMultiplier(steps, steps) < needed) steps = Math.max(steps + 1, Math.ceil(steps * (1 + 1e-12)));
  return steps;
}

/** The event of one gridded RGM release with relative noise gamma and baseline s_b grid steps. */
export function griddedRelativeGaussianEvent(grid: RelativeGaussianGrid, gamma: number, baselineSteps: number): RelativeGaussianEvent {
  return relativeGaussianEvent({
    eta: grid.eta,
    gamma,
    dimension: grid.dimension,
    baselineStd: grid.granularity * baselineSteps,
    rRel: grid.rRel,
    discrete: true,
    gridBaselineStd: baselineSteps,
  });
}

/**
 * Releases `vector` (in place) with RGM noise on the grid: k = round(vector / g), then g (k + K),
 * K_j ~ discrete Gaussian of variance parameter gamma ||k||^2 + s_b^2 (an exact rational).
 */
export function addRelativeGaussianGridNoise(vector: Float64Array, grid: RelativeGaussianGrid, gamma: number, baselineSteps: number, rng: Rng): Float64Array {
  const g = grid.granularity;
  const d = vector.length;
  const k = new Float64Array(d);
  let normSquared = 0n;
  for (let j = 0; j < d; j++) {
    // v / g is exact; the clamp to 2^52 steps is data-independent and 1-Lipschitz (no sensitivity cost).
    k[j] = Math.round(Math.max(-(2 ** 52), Math.min(2 ** 52, vector[j] / g)));
    const kb = BigInt(k[j]);
    normSquared += kb * kb;
  }
  const { num, den } = doubleToRational(gamma);
  const s = BigInt(baselineSteps);
  const varianceNum = num * normSquared + s * s * den;
  for (let j = 0; j < d; j++) vector[j] = (k[j] + sampleDiscreteGaussianVariance(rng, varianceNum, den)) * g;
  return vector;
}
