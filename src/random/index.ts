/**
 * Randomness for dpfit: generators (`Rng`, secure by default) and samplers. See docs/design.md,
 * "Randomness".
 */
export type { Rng } from './rng.js';
export { defaultRng, secureRng, seededRng, uniformInt } from './rng.js';
export { fillGaussian, sampleExponential, sampleGaussian, sampleLaplace } from './continuous.js';
export {
  poissonSubsampleIndices,
  poissonSubsampleMask,
  randomPermutation,
  sampleBernoulli,
  sampleBinomial,
  samplePoisson,
  shuffleInPlace,
} from './discrete.js';
export {
  doubleToRational,
  fillDiscreteGaussian,
  sampleBernoulliExpRational,
  sampleDiscreteGaussian,
  sampleDiscreteGaussianVariance,
  sampleDiscreteLaplace,
} from './exact.js';
