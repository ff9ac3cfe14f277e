/**
 * Pure (epsilon, 0)-DP accounting and the classical composition theorems.
 *
 * - `pureEpsilon`: basic composition (epsilons add) of the pure-DP events: Laplace (1/b),
 *   randomized response (log(1 + k(1-p)/p)), their Poisson subsampling (log(1 + q(e^eps - 1)),
 *   add/remove-one) and sampling without replacement (log(1 + (m/n)(e^eps - 1)), replace-one;
 *   Balle, Barthe, Gaboardi 2018, Thm. 9 / 10), and one record sampled with public weights <= c
 *   (log(1 + c(e^eps - 1)), replace-one, by the same argument). Events with no pure-DP guarantee (Gaussian, RGM,
 *   objective perturbation) give Infinity, which is the truth for delta = 0.
 * - `advancedComposition`: `004` Thm. 2.1 (Dwork, Rothblum, Vadhan 2010): k-fold composition of
 *   (eps, delta)-DP mechanisms is (sqrt(2k log(1/delta')) eps + k eps (e^eps - 1), k delta + delta')-DP.
 */
import { requireInteger, requireNonNegative, requireOpenUnit, requireProbability } from '../validate.js';
import type { DpEvent } from './events/types.js';
import { requireEventDepth } from './events/depth.js';

const up = (x: number) => x * (1 + 8 * Number.EPSILON);

/** The pure-DP epsilon of an event by basic composition (Infinity when it has none). */
export function pureEpsilon(event: DpEvent): number {
  requireEventDepth(event);
  return pureEpsilonOf(event);
}

/** `pureEpsilon` after the depth check. */
function pureEpsilonOf(event: DpEvent): number {
  switch (event.kind) {
    case 'noOp':
      return 0;
    case 'laplace':
      return up(1 / event.noiseMultiplier);
    case 'randomizedResponse':
      return event.noiseParameter === 0 ? Infinity : up(Math.log1p((event.numBuckets * (1 - event.noiseParameter)) / event.noiseParameter));
    case 'poissonSampled':
      return up(Math.log1p(event.samplingProbability * Math.expm1(pureEpsilonOf(event.event))));
    case 'sampledWithoutReplacement':
      return up(Math.log1p((event.sampleSize / event.sourceDatasetSize) * Math.expm1(pureEpsilonOf(event.event))));
    case 'nonUniformSampled':
      // P - Q = w_i (X - Y) and X <= e^eps Q pointwise (x_i is a replace-one neighbour of every
      // record that Q mixes), so P <= (1 + w_i (e^eps - 1)) Q, w_i <= c (rdp/non-uniform-sampling.ts).
      return up(Math.log1p(event.maxWeight * Math.expm1(pureEpsilonOf(event.event))));
    case 'compose':
      return event.events.reduce((sum, e) => sum + pureEpsilonOf(e), 0);
    case 'selfCompose':
      return event.count === 0 ? 0 : event.count * pureEpsilonOf(event.event);
    default:
      return Infinity;
  }
}

/** `004` Thm. 2.1: (epsilon', k delta + delta') for k-fold composition of (epsilon, delta)-DP. */
export function advancedComposition(epsilon: number, delta: number, count: number, deltaPrime: number): { epsilon: number; delta: number } {
  requireNonNegative('epsilon', epsilon);
  requireProbability('delta', delta);
  requireInteger('count', count, 0);
  requireOpenUnit('deltaPrime', deltaPrime);
  const composed = Math.sqrt(2 * count * Math.log(1 / deltaPrime)) * epsilon + count * epsilon * Math.expm1(epsilon);
  return { epsilon: up(composed), delta: Math.min(1, count * delta + deltaPrime) };
}
