/**
 * Total-variation privacy (`004`, Sec. 2.4): a mechanism is delta-TV-private when the total
 * variation between its outputs on neighbouring inputs is at most delta. Composition adds
 * (`004` Thm. 2.2); Gaussian releases compose more tightly (`004` Sec. 2.4.2, "Stronger composition
 * rule"): here exactly, since k adaptively composed Gaussians with multipliers z_i are dominated by
 * one Gaussian with 1/z^2 = sum 1/z_i^2, whose total variation is 2 Phi(1/(2z)) - 1.
 *
 * - Gaussian (multiplier z): exact TV = 2 Phi(1/(2z)) - 1 (tighter than the thesis' Pinsker bound 1/(2z)).
 * - Laplace (multiplier b, any dimension): TV <= min(1/(2b), sqrt(KL/2)) with
 *   KL <= 1/b + e^{-1/b} - 1 (Pinsker; the convex KL is maximal when the L1 shift sits in one coordinate).
 * - Randomized response: exactly 1 - p.
 * - Poisson subsampling with probability q (and sampling m of n) multiplies the TV by q (m/n).
 */
import { normalCdf } from '../math/normal.js';
import type { DpEvent } from './events.js';

const up = (x: number) => Math.min(1, x * (1 + 8 * Number.EPSILON));

/** Sum of 1/z^2 over the Gaussian releases at the top level of a composition, and the TV of the rest. */
function split(event: DpEvent): { gaussianPrecision: number; otherTv: number } {
  switch (event.kind) {
    case 'gaussian':
      return { gaussianPrecision: 1 / (event.noiseMultiplier * event.noiseMultiplier), otherTv: 0 };
    case 'compose':
      return event.events.map(split).reduce((a, b) => ({ gaussianPrecision: a.gaussianPrecision + b.gaussianPrecision, otherTv: a.otherTv + b.otherTv }), {
        gaussianPrecision: 0,
        otherTv: 0,
      });
    case 'selfCompose': {
      const inner = split(event.event);
      return { gaussianPrecision: event.count * inner.gaussianPrecision, otherTv: event.count * inner.otherTv };
    }
    default:
      return { gaussianPrecision: 0, otherTv: totalVariation(event) };
  }
}

/** An upper bound on the total-variation privacy of an event (1 when nothing better is known). */
export function totalVariation(event: DpEvent): number {
  switch (event.kind) {
    case 'noOp':
      return 0;
    case 'laplace': {
      const b = event.noiseMultiplier;
      return up(Math.min(1 / (2 * b), Math.sqrt((1 / b + Math.expm1(-1 / b)) / 2)));
    }
    case 'randomizedResponse':
      // P = (a, b, ...), Q = (b, a, ...): TV = |a - b| = 1 - p.
      return up(1 - event.noiseParameter);
    case 'poissonSampled':
      return up(event.samplingProbability * totalVariation(event.event));
    case 'sampledWithoutReplacement':
      return up((event.sampleSize / event.sourceDatasetSize) * totalVariation(event.event));
    case 'gaussian':
    case 'compose':
    case 'selfCompose': {
      const { gaussianPrecision, otherTv } = split(event);
      // 2 Phi(x) - 1 cancels for small x: add its absolute rounding error (a few ulps of 1).
      const gaussianTv = gaussianPrecision === 0 ? 0 : 2 * normalCdf(Math.sqrt(gaussianPrecision) / 2) - 1 + 4 * Number.EPSILON;
      return up(gaussianTv + otherTv);
    }
    default:
      return 1;
  }
}
