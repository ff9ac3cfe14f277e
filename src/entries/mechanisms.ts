/**
 * `dpfit/mechanisms`: noise mechanisms (Gaussian, Laplace, randomized response, the Relative
 * Gaussian Mechanism) with the public grids their released values live on, and the random
 * generators and samplers they draw from (`Rng`, the platform CSPRNG by default, exact discrete
 * Gaussian and Laplace samplers). A mechanism returns `{value, event}`: its event goes to
 * `dpfit/accounting`. Browser-safe: nothing here imports a Node module (docs/architecture.md,
 * "Package entries"). Explicit exports only.
 */

export {
  BudgetExceededError,
  CalibrationError,
  DataFormatError,
  DpfitError,
  InvalidParameterError,
  NumericalError,
  UnknownOptionError,
  UnsupportedEventError,
} from '../errors.js';

// Mechanisms
export type { GaussianMechanismOptions, GaussianMechanismResult } from '../mechanisms/gaussian.js';
export { gaussianMechanism } from '../mechanisms/gaussian.js';
export type { LaplaceMechanismOptions, LaplaceMechanismResult } from '../mechanisms/laplace.js';
export { laplaceMechanism } from '../mechanisms/laplace.js';
export type { RandomizedResponseOptions, RandomizedResponseResult } from '../mechanisms/randomized-response.js';
export { randomizedResponse, randomizedResponseEpsilon, randomizedResponseNoiseParameter } from '../mechanisms/randomized-response.js';
export type { RelativeGaussianOptions, RelativeGaussianResult } from '../mechanisms/relative-gaussian.js';
export { relativeGaussianMechanism } from '../mechanisms/relative-gaussian.js';
export type { QueryValue } from '../mechanisms/noise.js';
export type { GaussianGridPlan, GridPlanOptions, LaplaceGridPlan } from '../mechanisms/grid-noise.js';
export { addGaussianGridNoise, addLaplaceGridNoise, GRID_RESOLUTION, planGaussianGrid, planLaplaceGrid } from '../mechanisms/grid-noise.js';
export type { RelativeGaussianGrid } from '../mechanisms/relative-gaussian-grid.js';
export { addRelativeGaussianGridNoise, planRelativeGaussianGrid } from '../mechanisms/relative-gaussian-grid.js';

// Randomness
export type { Rng } from '../random/index.js';
export {
  defaultRng,
  fillDiscreteGaussian,
  fillGaussian,
  poissonSubsampleIndices,
  poissonSubsampleMask,
  randomPermutation,
  sampleBernoulli,
  sampleBinomial,
  sampleDiscreteGaussian,
  sampleDiscreteGaussianVariance,
  sampleDiscreteLaplace,
  sampleExponential,
  sampleGaussian,
  sampleLaplace,
  samplePoisson,
  secureRng,
  seededRng,
  shuffleInPlace,
  uniformInt,
} from '../random/index.js';
