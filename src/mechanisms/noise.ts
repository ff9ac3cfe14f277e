/**
 * Adding noise to a real vector, continuously or on a grid with the exact discrete samplers of
 * Canonne, Kamath, Steinke 2020 (which avoid the floating-point attacks of Mironov 2012).
 *
 * On a grid of step g, the query value is first rounded to the grid (each coordinate moves by at
 * most g/2, so two neighbouring values move apart by at most g per coordinate): the sensitivity
 * the noise is calibrated to grows by g*d (L1) or g*sqrt(d) (L2) — `gridSensitivity` — and the
 * noise is g times an integer drawn exactly.
 */
import { InvalidParameterError } from '../errors.js';
import type { Rng } from '../random/rng.js';
import { sampleGaussian, sampleLaplace } from '../random/continuous.js';
import { sampleDiscreteGaussian, sampleDiscreteLaplace } from '../random/exact.js';
import { requirePositive } from '../validate.js';

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

/** Sensitivity after rounding to a grid of step g in d dimensions: L1 grows by g d, L2 by g sqrt(d). */
export function gridSensitivity(sensitivity: number, granularity: number | undefined, dimension: number, norm: 'l1' | 'l2'): number {
  if (granularity === undefined) return sensitivity;
  requirePositive('granularity', granularity);
  return sensitivity + granularity * (norm === 'l1' ? dimension : Math.sqrt(dimension));
}

export type NoiseKind = 'gaussian' | 'laplace';

/**
 * Adds independent noise of the given std (Gaussian) or scale (Laplace) to every coordinate, in
 * place. With a granularity g, rounds each coordinate to the grid first and draws the exact
 * discrete distribution of parameter std/g (resp. scale/g), scaled back by g.
 */
export function addNoise(vector: Float64Array, kind: NoiseKind, parameter: number, rng: Rng, granularity?: number): Float64Array {
  if (granularity === undefined) {
    for (let i = 0; i < vector.length; i++) {
      vector[i] += kind === 'gaussian' ? sampleGaussian(rng, 0, parameter) : sampleLaplace(rng, parameter);
    }
    return vector;
  }
  const gridParameter = parameter / granularity;
  for (let i = 0; i < vector.length; i++) {
    const onGrid = Math.round(vector[i] / granularity);
    const noise = kind === 'gaussian' ? sampleDiscreteGaussian(rng, gridParameter) : sampleDiscreteLaplace(rng, gridParameter);
    vector[i] = (onGrid + noise) * granularity;
  }
  return vector;
}
