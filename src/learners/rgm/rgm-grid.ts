/**
 * What RGM gradient descent (`rgm-gd.ts`, `000` eq. 7) needs beyond the gridded mechanism of
 * `mechanisms/relative-gaussian-grid.ts`: a public bound on the floating-point error of the
 * gradient it rounds, and a public ball that keeps the iterate (hence that error) bounded.
 *
 * The iterate is projected onto the ball of radius Theta = 2 B / (rho lambda_min(C)) (and
 * 2 B / mu when mu > 0) after every step: ridge's minimiser A~^-1 b~ lies inside it whenever
 * A~ >= rho C (what PTR tests), the projection is post-processing of released values, and it
 * bounds ||theta|| in the error E below.
 */
import type { RelativeGaussianEvent } from '../../accounting/events/types.js';
import {
  addRelativeGaussianGridNoise,
  griddedRelativeGaussianEvent,
  planRelativeGaussianGrid,
  relativeGaussianBaselineSteps,
  type RelativeGaussianGrid,
} from '../../mechanisms/relative-gaussian-grid.js';
import type { Rng } from '../../random/rng.js';

const U = Number.EPSILON / 2;
/** Higham's gamma_k = k u / (1 - k u): the relative error bound of k floating-point operations (u = 2^-53). */
export const gammaOf = (k: number) => (k * U) / (1 - k * U);

export interface RgmGridInput {
  readonly eta: number;
  readonly rRel: number;
  readonly n: number;
  readonly d: number;
  /** R_c: rows satisfy x~^T C^-1 x~ <= R_c^2. */
  readonly featureClip: number;
  /** B: ||x~_i y~_i|| <= B. */
  readonly bClip: number;
  readonly lambdaMaxC: number;
  /** A lower bound on lambda_min(C). */
  readonly lambdaMinC: number;
  readonly rho: number;
  readonly regularization: number;
}

export interface RgmGrid extends RelativeGaussianGrid {
  /** Theta: the public projection radius of the iterate. */
  readonly thetaRadius: number;
  /** E: the public bound on the floating-point error of the computed gradient. */
  readonly computationError: number;
}

/**
 * A public bound E on ||computed (A~ theta - b~) - exact|| for ||theta|| <= Theta. A~ and b~ are
 * averages of n products (each entry's error <= gamma_{n+2} times the sum of magnitudes, and the
 * Frobenius norm of sum_i |x~_i| |x~_i|^T is <= sum_i ||x~_i||^2 <= n lambda_max(C) R_c^2), then
 * g = A~ theta - b~ adds d + 1 roundings per coordinate (Higham 2002, Sec. 3.1 and 4.2).
 */
export function rgmComputationError(input: RgmGridInput, thetaRadius: number): number {
  const { n, d, featureClip, bClip, lambdaMaxC, regularization } = input;
  const spectral = lambdaMaxC * featureClip * featureClip + regularization;
  const frobenius = Math.sqrt(d) * spectral;
  return (gammaOf(n + 2) + gammaOf(d + 2)) * (frobenius * thetaRadius + bClip) * (1 + 1e-9);
}

/** The grid, the projection radius and the relative sensitivity of the rounded, computed gradient. */
export function rgmGrid(input: RgmGridInput): RgmGrid {
  const { bClip, rho, lambdaMinC, regularization } = input;
  let thetaRadius = (2 * bClip) / (rho * lambdaMinC);
  if (regularization > 0) thetaRadius = Math.min(thetaRadius, (2 * bClip) / regularization);
  const computationError = rgmComputationError(input, thetaRadius);
  const grid = planRelativeGaussianGrid({ eta: input.eta, rRel: input.rRel, dimension: input.d, extraError: computationError });
  return { ...grid, thetaRadius, computationError };
}

/** s_b for relative noise gamma (`relativeGaussianBaselineSteps`). */
export function rgmBaselineSteps(grid: RgmGrid, gamma: number): number {
  return relativeGaussianBaselineSteps(grid, gamma);
}

/** The event of one gridded RGM step with relative noise gamma. */
export function rgmGriddedEvent(grid: RgmGrid, gamma: number): RelativeGaussianEvent {
  return griddedRelativeGaussianEvent(grid, gamma, rgmBaselineSteps(grid, gamma));
}

/** Releases the gradient (in place) on the grid with RGM noise (`addRelativeGaussianGridNoise`). */
export function addRgmGridNoise(gradient: Float64Array, grid: RgmGrid, gamma: number, baselineSteps: number, rng: Rng): Float64Array {
  return addRelativeGaussianGridNoise(gradient, grid, gamma, baselineSteps, rng);
}

/** Projects theta onto the ball of radius Theta (1 - 1e-9), so that the computed norm stays <= Theta. */
export function projectOntoBall(theta: Float64Array, radius: number): void {
  let s = 0;
  for (let j = 0; j < theta.length; j++) s += theta[j] * theta[j];
  const norm = Math.sqrt(s);
  const limit = radius * (1 - 1e-9);
  if (norm > limit) {
    const factor = limit / norm;
    for (let j = 0; j < theta.length; j++) theta[j] *= factor;
  }
}
