/**
 * The Relative Gaussian Mechanism (Hendrikx, Mangold, Bellet 2024 — `000`, Def. 3):
 *
 *   RGM_{gamma,sigma}(R)(x) = R(x) + N(0, (gamma |R(x)|^2 + sigma^2) I_d),
 *
 * whose noise scales with the norm of the output. Private for queries with (eta, R_rel)-relative L2
 * sensitivity (`000`, Def. 2) — a property of the query that the caller asserts — with the Rényi DP
 * of `000` Thm. 1 (see accounting/rdp/relative-gaussian.ts). The returned event records sigma and R_rel
 * so that accountants give no bound at orders where Thm. 1's sigma condition fails.
 *
 * By default the value is rounded to a public power-of-two grid and released with exact discrete
 * noise whose variance is computed exactly (`relative-gaussian-grid.ts`; the rounding raises eta
 * and R_rel by about 1e-4 relative, and the event says so); `continuous: true` gives floating-point
 * noise instead (vulnerable to floating-point attacks, Mironov 2012).
 */
import type { RelativeGaussianEvent } from '../accounting/events/types.js';
import { relativeGaussianEvent } from '../accounting/events/constructors.js';
import {
  calibrateRelativeGaussian,
  relativeGaussianMaxOrder,
  relativeGaussianMinBaselineStd,
  relativeGaussianMinOrder,
} from '../accounting/rdp/relative-gaussian.js';
import { InvalidParameterError } from '../errors.js';
import { defaultRng, type Rng } from '../random/rng.js';
import { sampleGaussian } from '../random/continuous.js';
import { optionNames, rejectUnknownOptions, requireNonNegative, requirePositive } from '../validate.js';
import { MIN_GRID_NOISE_STD } from './grid-noise.js';
import { toVector, type QueryValue } from './noise.js';
import { addRelativeGaussianGridNoise, griddedRelativeGaussianEvent, planRelativeGaussianGrid, relativeGaussianBaselineSteps } from './relative-gaussian-grid.js';

export interface RelativeGaussianOptions {
  /** Relative sensitivity eta of the query (`000` Def. 2). */
  readonly eta: number;
  /** Additive term R_rel of the relative sensitivity (`000` Def. 2). */
  readonly rRel: number;
  /** Relative noise gamma; give this or (targetEpsilon, delta). */
  readonly gamma?: number;
  readonly targetEpsilon?: number;
  readonly delta?: number;
  /**
   * Baseline std sigma. Default: sqrt(gamma) R_rel / eta, valid at every order of Thm. 1
   * (with a target, the smallest sigma valid at the calibrated order).
   */
  readonly baselineStd?: number;
  /** Floating-point noise instead of the default exact discrete noise on a grid (no proven guarantee). */
  readonly continuous?: boolean;
  readonly rng?: Rng;
}

export interface RelativeGaussianResult {
  readonly value: Float64Array;
  readonly event: RelativeGaussianEvent;
  readonly gamma: number;
  readonly baselineStd: number;
  /** The std actually used: sqrt(gamma |R(x)|^2 + sigma^2). It depends on the data: do not release it. */
  readonly noiseStd: number;
  /** The grid of the release (undefined for continuous noise). */
  readonly granularity?: number;
}

const RELATIVE_GAUSSIAN_OPTIONS = optionNames<RelativeGaussianOptions>({ eta: true, rRel: true, gamma: true, targetEpsilon: true, delta: true, baselineStd: true, continuous: true, rng: true });

export function relativeGaussianMechanism(value: QueryValue, options: RelativeGaussianOptions): RelativeGaussianResult {
  rejectUnknownOptions(options, RELATIVE_GAUSSIAN_OPTIONS, 'relativeGaussianMechanism');
  const vector = toVector(value);
  const d = vector.length;
  const etaQuery = requirePositive('eta', options.eta);
  const rRelQuery = requireNonNegative('rRel', options.rRel);
  const hasTarget = options.targetEpsilon !== undefined || options.delta !== undefined;
  if (hasTarget === (options.gamma !== undefined)) {
    throw new InvalidParameterError('gamma', options.gamma, 'given, or targetEpsilon and delta given instead (exactly one of the two)');
  }
  if (options.baselineStd !== undefined) requirePositive('baselineStd', options.baselineStd);
  // On the grid the query's relative sensitivity grows a little (relative-gaussian-grid.ts): calibrate and check with the grid's.
  const grid = options.continuous
    ? undefined
    : rRelQuery === 0 && options.baselineStd === undefined
      ? undefined
      : planRelativeGaussianGrid({
          eta: etaQuery,
          rRel: rRelQuery,
          dimension: d,
          ...(options.baselineStd === undefined ? {} : { granularityBound: options.baselineStd / (2 * MIN_GRID_NOISE_STD) }),
        });
  const eta = grid?.eta ?? etaQuery;
  const rRel = grid?.rRel ?? rRelQuery;
  let gamma: number;
  let defaultSigma: number;
  if (options.gamma !== undefined) {
    gamma = requirePositive('gamma', options.gamma);
    defaultSigma = relativeGaussianMinBaselineStd(eta, gamma, rRel, 1);
  } else {
    const calibration = calibrateRelativeGaussian({
      eta,
      dimension: d,
      targetEpsilon: options.targetEpsilon as number,
      delta: options.delta as number,
      rRel,
    });
    gamma = calibration.gamma;
    defaultSigma = calibration.baselineStd ?? 0;
  }
  const baselineStd = options.baselineStd ?? defaultSigma;
  if (!(baselineStd > 0)) {
    throw new InvalidParameterError('baselineStd', options.baselineStd, '> 0 (with rRel = 0 any positive value is valid)');
  }
  const params = { eta, gamma, dimension: d, baselineStd, rRel };
  if (!(relativeGaussianMinOrder(params) < relativeGaussianMaxOrder(eta))) {
    throw new InvalidParameterError(
      'baselineStd',
      baselineStd,
      `>= ${relativeGaussianMinBaselineStd(eta, gamma, rRel, relativeGaussianMaxOrder(eta))}`,
      'no Renyi order satisfies sigma^2 >= gamma eta^-2 [1 - eta (alpha - 1)] R_rel^2',
    );
  }
  let normSquared = 0;
  for (let i = 0; i < d; i++) normSquared += vector[i] * vector[i];
  const rng = options.rng ?? defaultRng();
  if (grid === undefined) {
    const noiseStd = Math.sqrt(gamma * normSquared + baselineStd * baselineStd);
    for (let i = 0; i < d; i++) vector[i] += sampleGaussian(rng, 0, noiseStd);
    return { value: vector, event: relativeGaussianEvent(params), gamma, baselineStd, noiseStd };
  }
  const steps = relativeGaussianBaselineSteps(grid, gamma, baselineStd);
  const usedBaseline = grid.granularity * steps;
  const noiseStd = Math.sqrt(gamma * normSquared + usedBaseline * usedBaseline);
  addRelativeGaussianGridNoise(vector, grid, gamma, steps, rng);
  return { value: vector, event: griddedRelativeGaussianEvent(grid, gamma, steps), gamma, baselineStd: usedBaseline, noiseStd, granularity: grid.granularity };
}
