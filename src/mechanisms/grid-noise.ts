/**
 * Floating-point-safe noise for every release: exact discrete noise on a public power-of-two grid
 * (Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy", CKS), chosen
 * so that the accounted epsilon stays within 0.01 % of the continuous mechanism's.
 *
 * Why. Continuous noise drawn in floating point and added in floating point has a support full
 * of holes: some released values can come from one dataset and not from its neighbour (Mironov,
 * "On significance of the least significant bits for differential privacy", CCS 2012).
 *
 * What is released. A query value x (a vector of d doubles) is rounded to the grid g = 2^e, each
 * coordinate to the nearest multiple k_j g (|x_j - k_j g| <= g/2, so two neighbouring values move
 * apart by at most g per coordinate: the L2 sensitivity in grid steps is Delta/g + sqrt(d)), and
 * g (k + K) is released with K ~ discrete Gaussian of integer std parameter s (grid steps), drawn
 * exactly. k + K is an integer below 2^53 and g a power of two, so the released double is exactly
 * the value the analysis speaks of: no rounding happens after the noise.
 *
 * Accounting. The event is gaussian(s / (Delta/g + sqrt(d)), discrete, gridNoiseStd s). The
 * accountants treat it through the smoothing coupling of `accounting/discrete-coupling.ts`: a
 * discrete Gaussian of parameter s is, within a factor e^{+-1e-500} pointwise, a post-processing
 * of the continuous Gaussian of std sqrt(s^2 - 64), so the release is accounted as the continuous
 * Gaussian mechanism with noise multiplier z sqrt(1 - 64/s^2).
 *
 * Choice of the grid. g is the largest power of two with g sqrt(d) <= 2^-14 Delta (the rounding
 * costs at most 6.1e-5 of the sensitivity) and s >= 1024 (the coupling's factor
 * sqrt(1 - 64/s^2) >= 1 - 3.1e-5); s is rounded up to an integer, so that the sampler's arithmetic
 * stays exact and fast. The planner returns an event whose accounted multiplier is >= the one
 * asked for: a noise multiplier calibrated for the continuous mechanism stays valid.
 */
import { couplingReducedNoise } from '../accounting/discrete-coupling.js';
import type { GaussianEvent, LaplaceEvent } from '../accounting/events/types.js';
import { gaussianEvent, laplaceEvent } from '../accounting/events/constructors.js';
import { InvalidParameterError } from '../errors.js';
import { fillDiscreteGaussian, sampleDiscreteLaplace } from '../random/exact.js';
import type { Rng } from '../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requirePositive } from '../validate.js';

/** The rounding may cost at most this fraction of the sensitivity: g sqrt(d) <= GRID_RESOLUTION Delta. */
export const GRID_RESOLUTION = 2 ** -14;
/** The noise spans at least this many grid steps (s >= 1024). */
export const MIN_GRID_NOISE_STD = 1024;
/** Largest noise parameter the exact samplers accept, in grid steps. */
const MAX_GRID_NOISE = 2 ** 46;
/** Grid values are kept within +-2^52 steps (a data-independent clamp, 1-Lipschitz: no sensitivity cost). */
const MAX_GRID_INDEX = 2 ** 52;
const U = Number.EPSILON / 2;

/** Largest power of two <= x (x > 0 finite). */
export function powerOfTwoAtMost(x: number): number {
  requirePositive('x', x);
  let p = 2 ** Math.floor(Math.log2(x));
  while (p > x) p /= 2;
  while (p * 2 <= x) p *= 2;
  return p;
}

/** Grid values g k must be exact doubles: g far above the subnormal range. */
function requireNormalGrid(granularity: number): void {
  if (!(granularity >= 2 ** -960)) {
    throw new InvalidParameterError('sensitivity', granularity / GRID_RESOLUTION, '>= 2^-946 (the noise grid would fall in the subnormal range)');
  }
}

/** Rounds each coordinate of `vector` to the grid g in place and returns the grid indices k (|k| <= 2^52). */
function roundToGrid(vector: Float64Array, granularity: number, out: Float64Array): Float64Array {
  for (let j = 0; j < vector.length; j++) {
    const v = vector[j];
    if (!Number.isFinite(v)) throw new InvalidParameterError(`value[${j}]`, v, 'a finite number');
    // v / g is exact (a power-of-two scaling); the clamp is data-independent and 1-Lipschitz.
    out[j] = Math.round(Math.max(-MAX_GRID_INDEX, Math.min(MAX_GRID_INDEX, v / granularity)));
  }
  return out;
}

export interface GaussianGridPlan {
  /** g: the public power-of-two grid of the release. */
  readonly granularity: number;
  /** s: the integer std parameter of the discrete Gaussian, in grid steps. */
  readonly gridNoiseStd: number;
  /** Delta/g + sqrt(d), rounded up: the L2 sensitivity of the rounded query, in grid steps. */
  readonly gridSensitivity: number;
  /** g s: the noise std in the query's units. */
  readonly noiseStd: number;
  /** s / gridSensitivity: the event's noise multiplier (before the coupling's factor). */
  readonly noiseMultiplier: number;
  readonly event: GaussianEvent;
}

/**
 * The multiplier the accountants use for gaussian(z, discrete, gridNoiseStd s): z sqrt(1 - 64/s^2),
 * rounded down (`accounting/discrete-coupling.ts`), so that the planner checks its own result
 * with the accountants' arithmetic.
 */
export function griddedGaussianEffectiveMultiplier(noiseMultiplier: number, gridNoiseStd: number): number {
  return couplingReducedNoise(noiseMultiplier, gridNoiseStd);
}

/**
 * The grid and the integer noise for a Gaussian release of L2 sensitivity `sensitivity` in
 * `dimension` coordinates whose accounted noise multiplier must be at least `noiseMultiplier`
 * (module comment). `roundingSlack` is a public bound on how far floating-point evaluation can
 * move the query beyond its exact sensitivity (added to it).
 */
export interface GridPlanOptions {
  /** The exact sensitivity of the query (L2 for Gaussian noise, L1 for Laplace noise). */
  readonly sensitivity: number;
  /** The accounted noise multiplier must be at least this. */
  readonly noiseMultiplier: number;
  readonly dimension: number;
  /** A public bound on the floating-point error of the query beyond its exact sensitivity (added to it). */
  readonly roundingSlack?: number;
  /** A grid of your choice (a power of two) instead of the automatic one; the noise must then span >= 16 steps. */
  readonly granularity?: number;
}

/** Smallest noise, in grid steps, of a user-chosen grid: the smoothing coupling needs s >= 16. */
const MIN_EXPLICIT_GRID_NOISE = 16;

/** The validated parts of a plan: the sensitivity with its slack, and the grid. */
function resolveGrid(options: GridPlanOptions, spread: number): { z: number; d: number; delta: number; granularity: number; minSteps: number } {
  const z = requirePositive('noiseMultiplier', options.noiseMultiplier);
  const d = requireInteger('dimension', options.dimension, 1);
  const slack = options.roundingSlack ?? 0;
  if (!(slack >= 0 && Number.isFinite(slack))) throw new InvalidParameterError('roundingSlack', slack, 'a finite number >= 0');
  const delta = (requirePositive('sensitivity', options.sensitivity) + slack) * (1 + 4 * U);
  if (!Number.isFinite(delta) || !Number.isFinite(z)) throw new InvalidParameterError('sensitivity', options.sensitivity, 'finite, with a finite noise multiplier');
  if (options.granularity !== undefined) {
    const granularity = requirePositive('granularity', options.granularity);
    if (powerOfTwoAtMost(granularity) !== granularity) {
      throw new InvalidParameterError('granularity', granularity, 'a power of two (2^k): only then is every released value g (k + K) an exact double');
    }
    requireNormalGrid(granularity);
    return { z, d, delta, granularity, minSteps: MIN_EXPLICIT_GRID_NOISE };
  }
  let granularity = powerOfTwoAtMost(Math.min((GRID_RESOLUTION * delta) / spread, (z * delta) / (2 * MIN_GRID_NOISE_STD)));
  // Very large noise: a coarser grid keeps the noise within the samplers' range (the rounding is then negligible against it).
  while ((z * delta) / granularity > MAX_GRID_NOISE / 4) granularity *= 2;
  requireNormalGrid(granularity);
  return { z, d, delta, granularity, minSteps: MIN_GRID_NOISE_STD };
}

/** A chosen grid must leave the noise >= 16 steps wide (else it would be raised silently, far above the request). */
function requireEnoughSteps(options: GridPlanOptions, steps: number, granularity: number): void {
  if (options.granularity !== undefined && steps < MIN_EXPLICIT_GRID_NOISE) {
    throw new InvalidParameterError('granularity', granularity, `finer: the noise spans ${steps} grid steps, and the exact discrete noise needs >= ${MIN_EXPLICIT_GRID_NOISE}`);
  }
}

const GRID_PLAN_OPTIONS = optionNames<GridPlanOptions>({ sensitivity: true, noiseMultiplier: true, dimension: true, roundingSlack: true, granularity: true });

export function planGaussianGrid(options: GridPlanOptions): GaussianGridPlan {
  rejectUnknownOptions(options, GRID_PLAN_OPTIONS, 'planGaussianGrid');
  const { z, d, delta, granularity, minSteps } = resolveGrid(options, Math.sqrt(options.dimension));
  const gridSensitivity = (delta / granularity + Math.sqrt(d)) * (1 + 4 * U);
  const target = z * (1 + 1e-12);
  if (target * gridSensitivity > MAX_GRID_NOISE) throw new InvalidParameterError('granularity', granularity, `coarser: the noise would span more than 2^46 grid steps`);
  requireEnoughSteps(options, target * gridSensitivity, granularity);
  let s = Math.max(minSteps, Math.ceil(target * gridSensitivity));
  const multiplier = (steps: number) => (steps / gridSensitivity) * (1 - 4 * U);
  while (griddedGaussianEffectiveMultiplier(multiplier(s), s) < target) s = Math.max(s + 1, Math.ceil(s * (1 + 1e-12)));
  const noiseMultiplier = multiplier(s);
  return Object.freeze({
    granularity,
    gridNoiseStd: s,
    gridSensitivity,
    noiseStd: granularity * s,
    noiseMultiplier,
    event: gaussianEvent(noiseMultiplier, { discrete: true, gridNoiseStd: s }),
  });
}

/**
 * Releases `vector` with the plan's noise, in place: each coordinate rounded to the grid, plus
 * g K with K exact discrete Gaussian. `scratch` (length >= d) avoids an allocation in hot loops.
 */
export function addGaussianGridNoise(vector: Float64Array, plan: GaussianGridPlan, rng: Rng, scratch?: Float64Array): Float64Array {
  const d = vector.length;
  const k = scratch !== undefined && scratch.length >= d ? scratch.subarray(0, d) : new Float64Array(d);
  roundToGrid(vector, plan.granularity, vector);
  fillDiscreteGaussian(rng, k, plan.gridNoiseStd);
  const g = plan.granularity;
  for (let j = 0; j < d; j++) vector[j] = (vector[j] + k[j]) * g; // an integer below 2^53 times a power of two: exact
  return vector;
}

export interface LaplaceGridPlan {
  readonly granularity: number;
  /** b: the discrete Laplace scale in grid steps. */
  readonly gridScale: number;
  /** Delta_1/g + d, rounded up: the L1 sensitivity of the rounded query in grid steps. */
  readonly gridSensitivity: number;
  /** g b: the scale in the query's units. */
  readonly scale: number;
  /** b / gridSensitivity >= the requested multiplier (pure DP epsilon = 1 / noiseMultiplier). */
  readonly noiseMultiplier: number;
  readonly event: LaplaceEvent;
}

/**
 * The grid and scale for a Laplace release of L1 sensitivity `sensitivity` in `dimension`
 * coordinates with noise multiplier (scale / sensitivity) at least `noiseMultiplier`: g is the
 * largest power of two with g d <= 2^-14 Delta_1 and b >= 1024 grid steps. For integer shifts
 * the discrete Laplace's normalisers cancel, so its pure-DP epsilon is exactly gridSensitivity / b.
 */
export function planLaplaceGrid(options: GridPlanOptions): LaplaceGridPlan {
  rejectUnknownOptions(options, GRID_PLAN_OPTIONS, 'planLaplaceGrid');
  const { z, d, delta, granularity, minSteps } = resolveGrid(options, options.dimension);
  const gridSensitivity = (delta / granularity + d) * (1 + 4 * U);
  if (z * gridSensitivity > MAX_GRID_NOISE) throw new InvalidParameterError('granularity', granularity, `coarser: the noise would span more than 2^46 grid steps`);
  requireEnoughSteps(options, z * gridSensitivity, granularity);
  const gridScale = Math.max(minSteps, z * gridSensitivity * (1 + 8 * U));
  const noiseMultiplier = (gridScale / gridSensitivity) * (1 - 4 * U);
  return Object.freeze({
    granularity,
    gridScale,
    gridSensitivity,
    scale: granularity * gridScale,
    noiseMultiplier,
    // One-dimensional releases record the scale in grid steps: the RDP accountant then uses the exact discrete Laplace divergence.
    event: laplaceEvent(noiseMultiplier, d === 1 ? { discrete: true, gridScale } : { discrete: true }),
  });
}

/** Releases `vector` with the plan's discrete Laplace noise, in place (see `addGaussianGridNoise`). */
export function addLaplaceGridNoise(vector: Float64Array, plan: LaplaceGridPlan, rng: Rng): Float64Array {
  roundToGrid(vector, plan.granularity, vector);
  const g = plan.granularity;
  for (let j = 0; j < vector.length; j++) vector[j] = (vector[j] + sampleDiscreteLaplace(rng, plan.gridScale)) * g;
  return vector;
}
