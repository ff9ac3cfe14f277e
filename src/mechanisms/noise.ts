/**
 * Query values as vectors, and CONTINUOUS floating-point noise (the opt-out of the mechanisms'
 * default exact discrete noise on a grid, `grid-noise.ts`). Continuous noise drawn and added in
 * floating point is open to the attacks of Mironov (CCS 2012): a report on it proves nothing.
 */
import { InvalidParameterError } from '../errors.js';
import type { Rng } from '../random/rng.js';
import { sampleGaussian, sampleLaplace } from '../random/continuous.js';

/** A query value: one number or a vector. */
export type QueryValue = number | readonly number[] | Float64Array;

/** Copies a query value into a Float64Array, rejecting non-finite entries. */
export function toVector(value: QueryValue, param = 'value'): Float64Array {
  const vector = typeof value === 'number' ? Float64Array.of(value) : Float64Array.from(value);
  if (vector.length === 0) throw new InvalidParameterError(param, value, 'a non-empty vector');
  for (let i = 0; i < vector.length; i++) {
    if (!Number.isFinite(vector[i])) throw new InvalidParameterError(`${param}[${i}]`, vector[i], 'a finite number');
  }
  return vector;
}

/** Returns the noised vector in the shape of the input (a number for a number). */
export function fromVector<T extends QueryValue>(input: T, vector: Float64Array): T extends number ? number : Float64Array {
  return (typeof input === 'number' ? vector[0] : vector) as T extends number ? number : Float64Array;
}

export type NoiseKind = 'gaussian' | 'laplace';

/** Adds independent continuous noise of the given std (Gaussian) or scale (Laplace) to every coordinate, in place. */
export function addContinuousNoise(vector: Float64Array, kind: NoiseKind, parameter: number, rng: Rng): Float64Array {
  for (let i = 0; i < vector.length; i++) {
    vector[i] += kind === 'gaussian' ? sampleGaussian(rng, 0, parameter) : sampleLaplace(rng, parameter);
  }
  return vector;
}
