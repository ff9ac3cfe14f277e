/**
 * k-ary randomized response (Warner 1965; `004` Sec. 2, "A simple example"): with probability p
 * answer a uniformly random bucket among k (possibly the true one), otherwise the truth.
 * Its pure-DP epsilon is log(1 + k (1 - p) / p) under replace-one adjacency; the noise parameter
 * for a target epsilon is p = k / (e^epsilon + k - 1).
 */
import type { RandomizedResponseEvent } from '../accounting/events/types.js';
import { randomizedResponseEvent } from '../accounting/events/constructors.js';
import { InvalidParameterError } from '../errors.js';
import { sampleBernoulli } from '../random/discrete.js';
import { defaultRng, uniformInt, type Rng } from '../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requirePositive, requireProbability } from '../validate.js';

/** Pure-DP epsilon of k-ary randomized response with noise parameter p: log(1 + k(1-p)/p). */
export function randomizedResponseEpsilon(noiseParameter: number, numBuckets: number): number {
  const p = requireProbability('noiseParameter', noiseParameter);
  const k = requireInteger('numBuckets', numBuckets, 2);
  if (p === 0) return Infinity;
  return Math.log1p((k * (1 - p)) / p);
}

/** The smallest noise parameter p whose epsilon is at most targetEpsilon. */
export function randomizedResponseNoiseParameter(targetEpsilon: number, numBuckets: number): number {
  requirePositive('targetEpsilon', targetEpsilon);
  const k = requireInteger('numBuckets', numBuckets, 2);
  let p = k / (Math.expm1(targetEpsilon) + k);
  // Step up (more noise) until the computed epsilon is on the safe side of the target.
  while (randomizedResponseEpsilon(p, k) > targetEpsilon && p < 1) p = Math.min(1, p * (1 + 2 * Number.EPSILON));
  return p;
}

export interface RandomizedResponseOptions {
  readonly numBuckets: number;
  /** Probability of answering uniformly at random; give this or `epsilon`. */
  readonly noiseParameter?: number;
  readonly epsilon?: number;
  readonly rng?: Rng;
}

export interface RandomizedResponseResult {
  readonly value: number;
  readonly event: RandomizedResponseEvent;
  readonly noiseParameter: number;
  readonly epsilon: number;
}

const RANDOMIZED_RESPONSE_OPTIONS = optionNames<RandomizedResponseOptions>({ numBuckets: true, noiseParameter: true, epsilon: true, rng: true });

/** Releases one bucket index in [0, numBuckets) by k-ary randomized response. */
export function randomizedResponse(trueBucket: number, options: RandomizedResponseOptions): RandomizedResponseResult {
  rejectUnknownOptions(options, RANDOMIZED_RESPONSE_OPTIONS, 'randomizedResponse');
  const k = requireInteger('numBuckets', options.numBuckets, 2);
  requireInteger('trueBucket', trueBucket, 0, k - 1);
  if ((options.epsilon === undefined) === (options.noiseParameter === undefined)) {
    throw new InvalidParameterError('epsilon', options.epsilon, 'given, or noiseParameter given instead (exactly one of the two)');
  }
  const p =
    options.noiseParameter !== undefined
      ? requireProbability('noiseParameter', options.noiseParameter)
      : randomizedResponseNoiseParameter(options.epsilon as number, k);
  const rng = options.rng ?? defaultRng();
  const value = sampleBernoulli(rng, p) ? uniformInt(rng, k) : trueBucket;
  return { value, event: randomizedResponseEvent(p, k), noiseParameter: p, epsilon: randomizedResponseEpsilon(p, k) };
}
