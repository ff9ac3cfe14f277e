/**
 * Shape and value checks for the data the GLM helpers read, and row norms (the R of the
 * privacy constants, and the per-row clipping thresholds of the clipped-gradient loss).
 */
import { InvalidParameterError, dataValueError } from '../../errors.js';
import { requireInteger, requirePositive } from '../../validate.js';
import { checkLabels } from './constants.js';
import type { GlmData, GlmLoss, StoredGlmData } from './types.js';

/** Checks n, d and the array lengths (O(1)); throws `InvalidParameterError`. */
export function checkGlmShape(data: GlmData): void {
  const n = requireInteger('data.n', data.n, 0);
  const d = requireInteger('data.d', data.d, 1);
  if (!(data.x instanceof Float64Array) || data.x.length !== n * d) {
    throw new InvalidParameterError('data.x.length', data.x?.length, `n * d = ${n * d} (a row-major Float64Array)`);
  }
  if (!(data.y instanceof Float64Array) || data.y.length !== n) {
    throw new InvalidParameterError('data.y.length', data.y?.length, `n = ${n} (a Float64Array)`);
  }
}

/** `checkGlmShape` for features stored as float64 or float32 (the clipped-gradient sums). */
export function checkStoredGlmShape(data: StoredGlmData): void {
  if (data.x instanceof Float32Array) {
    const n = requireInteger('data.n', data.n, 0);
    const d = requireInteger('data.d', data.d, 1);
    if (data.x.length !== n * d) throw new InvalidParameterError('data.x.length', data.x.length, `n * d = ${n * d} (a row-major Float32Array)`);
    if (!(data.y instanceof Float64Array) || data.y.length !== n) throw new InvalidParameterError('data.y.length', data.y?.length, `n = ${n} (a Float64Array)`);
    return;
  }
  checkGlmShape(data as GlmData);
}

/** Checks that a parameter vector has length d and finite entries. */
export function checkTheta(theta: Float64Array, d: number, param = 'theta'): void {
  if (!(theta instanceof Float64Array) || theta.length !== d) {
    throw new InvalidParameterError(`${param}.length`, theta?.length, `d = ${d} (a Float64Array)`);
  }
  for (let j = 0; j < d; j++) if (!Number.isFinite(theta[j])) throw new InvalidParameterError(`${param}[${j}]`, theta[j], 'a finite number');
}

/**
 * Full check, O(n d): shape, finite features, labels in the loss's convention (`checkLabels`).
 * Run it once per data set, not per optimiser step.
 */
export function validateGlmData(loss: GlmLoss, data: GlmData): void {
  checkGlmShape(data);
  const { x, d } = data;
  for (let k = 0; k < x.length; k++) {
    if (!Number.isFinite(x[k])) throw dataValueError(`data.x[${Math.floor(k / d)}][${k % d}]`, 'a finite number');
  }
  checkLabels(loss, data.y);
}

/** ||x_i||_2 for every row (a new array of length n). */
export function rowNorms(data: GlmData): Float64Array {
  const { x, n, d } = data;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const off = i * d;
    let s = 0;
    for (let j = 0; j < d; j++) {
      const v = x[off + j];
      s += v * v;
    }
    out[i] = Math.sqrt(s);
  }
  return out;
}

/** max_i ||x_i||_2 (0 for an empty data set). Not private: it reads every row. */
export function maxRowNorm(data: GlmData): number {
  let m = 0;
  for (const r of rowNorms(data)) if (r > m) m = r;
  return m;
}

/**
 * Checks a PUBLIC row-norm bound R against the data (every ||x_i|| <= R) and returns the bound to
 * compute the learners' constants with: R, or the largest row norm when rows normalised to R
 * exceed it by rounding (at most 1e-12 relative: the constants then use that larger value, so
 * they stay bounds). `src/data`'s `checkRowNormBound` is the strict check that names the row.
 */
export function checkedRowNormBound(data: GlmData, rowNormBound: number | undefined): number {
  const bound = requirePositive('rowNormBound', rowNormBound);
  const largest = maxRowNorm(data);
  if (largest > bound && largest <= bound * (1 + 1e-12)) return largest;
  if (largest > bound) {
    throw new InvalidParameterError('rowNormBound', bound, '>= every row norm (a row has a larger norm, not shown: messages never quote the data); normalise or clip the rows');
  }
  return bound;
}
