/**
 * Total-variation privacy (`004`, Sec. 2.4): a mechanism is delta-TV-private when the total
 * variation between its outputs on neighbouring inputs is at most delta. Composition adds
 * (`004` Thm. 2.2); Gaussian releases compose more tightly (`004` Sec. 2.4.2, "Stronger composition
 * rule"): here exactly, since k adaptively composed Gaussians with multipliers z_i are dominated by
 * one Gaussian with 1/z^2 = sum 1/z_i^2, whose total variation is 2 Phi(1/(2z)) - 1.
 *
 * - Gaussian (multiplier z): exact TV = 2 Phi(1/(2z)) - 1 (tighter than the thesis' Pinsker bound 1/(2z)).
 *   A gridded discrete Gaussian counts as the continuous one with z sqrt(1 - 64/s^2), one ulp
 *   added for the coupling (`discrete-coupling.ts`). A discrete Gaussian without a grid std is
 *   not the continuous one in TV (at s = 0.5 grid steps and a shift of one step its TV is 0.787,
 *   the continuous formula says 0.683): its KL is <= 1/(2 z^2) (CKS 2020, Thm. 4, as alpha -> 1),
 *   KLs add under composition, and Pinsker gives TV <= sqrt(KL / 2).
 * - Laplace (multiplier b, any dimension): TV <= min(1/(2b), sqrt(KL/2)) with
 *   KL <= 1/b + e^{-1/b} - 1 (Pinsker; the convex KL is maximal when the L1 shift sits in one coordinate).
 *   The discrete Laplace is only known to be (1/b)-DP (its KL can exceed the continuous one: at a
 *   shift of one grid step its pair is binary randomized response): TV <= tanh(1/(2b)), the TV of
 *   that pair, which bounds every epsilon-DP mechanism (Kairouz, Oh & Viswanath 2015).
 * - Randomized response: exactly 1 - p.
 * - Poisson subsampling with probability q (and sampling m of n) multiplies the TV by q (m/n);
 *   one record sampled with public weights <= c multiplies it by c.
 */
import { normalCdf } from '../math/normal.js';
import { couplingReducedNoise } from './discrete-coupling.js';
import type { DpEvent } from './events/types.js';
import { requireEventDepth } from './events/depth.js';
import { nextUp } from './float-steps.js';

const up = (x: number) => Math.min(1, x * (1 + 8 * Number.EPSILON));

interface Split {
  /** sum of 1/z^2 over continuous Gaussians (gridded discrete ones with their coupled z). */
  readonly gaussianPrecision: number;
  /** sum of the KL bounds 1/(2 z^2) of discrete Gaussians without a grid std. */
  readonly discreteKl: number;
  readonly otherTv: number;
  readonly gridded: boolean;
}

const EMPTY: Split = { gaussianPrecision: 0, discreteKl: 0, otherTv: 0, gridded: false };

function add(a: Split, b: Split): Split {
  return {
    gaussianPrecision: a.gaussianPrecision + b.gaussianPrecision,
    discreteKl: a.discreteKl + b.discreteKl,
    otherTv: a.otherTv + b.otherTv,
    gridded: a.gridded || b.gridded,
  };
}

/** The Gaussian releases at the top level of a composition, and the TV of the rest. */
function split(event: DpEvent): Split {
  switch (event.kind) {
    case 'gaussian': {
      const z = event.noiseMultiplier;
      if (!event.discrete) return { ...EMPTY, gaussianPrecision: 1 / (z * z) };
      if (event.gridNoiseStd === undefined) return { ...EMPTY, discreteKl: 1 / (2 * z * z) };
      const zEff = couplingReducedNoise(z, event.gridNoiseStd);
      return { ...EMPTY, gaussianPrecision: 1 / (zEff * zEff), gridded: true };
    }
    case 'compose':
      return event.events.map(split).reduce(add, EMPTY);
    case 'selfCompose': {
      const inner = split(event.event);
      const k = event.count;
      return { gaussianPrecision: k * inner.gaussianPrecision, discreteKl: k * inner.discreteKl, otherTv: k * inner.otherTv, gridded: k > 0 && inner.gridded };
    }
    default:
      return { ...EMPTY, otherTv: tvOf(event) };
  }
}

/** An upper bound on the total-variation privacy of an event (1 when nothing better is known). */
export function totalVariation(event: DpEvent): number {
  requireEventDepth(event);
  return tvOf(event);
}

/** `totalVariation` after the depth check. */
function tvOf(event: DpEvent): number {
  switch (event.kind) {
    case 'noOp':
      return 0;
    case 'laplace': {
      const b = event.noiseMultiplier;
      if (event.discrete) return up(Math.tanh(1 / (2 * b)) + 2 * Number.EPSILON);
      return up(Math.min(1 / (2 * b), Math.sqrt((1 / b + Math.expm1(-1 / b)) / 2)));
    }
    case 'randomizedResponse':
      // P = (a, b, ...), Q = (b, a, ...): TV = |a - b| = 1 - p.
      return up(1 - event.noiseParameter);
    case 'poissonSampled':
      return up(event.samplingProbability * tvOf(event.event));
    case 'sampledWithoutReplacement':
      return up((event.sampleSize / event.sourceDatasetSize) * tvOf(event.event));
    case 'nonUniformSampled':
      // P - Q = w_i (X - Y) with w_i <= c (`004` App. A.7).
      return up(event.maxWeight * tvOf(event.event));
    case 'gaussian':
    case 'compose':
    case 'selfCompose': {
      const { gaussianPrecision, discreteKl, otherTv, gridded } = split(event);
      // 2 Phi(x) - 1 cancels for small x: add its absolute rounding error (a few ulps of 1).
      const gaussianTv = gaussianPrecision === 0 ? 0 : 2 * normalCdf(Math.sqrt(gaussianPrecision) / 2) - 1 + 4 * Number.EPSILON;
      const discreteTv = discreteKl === 0 ? 0 : Math.sqrt(discreteKl / 2);
      const total = up(gaussianTv + discreteTv + otherTv);
      // The coupling's additive correction (< 1e-514) is below one ulp of any double.
      return gridded ? Math.min(1, nextUp(total)) : total;
    }
    default:
      return 1;
  }
}
