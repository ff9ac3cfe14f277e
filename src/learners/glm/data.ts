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

/** Rows normalised to R exceed it by rounding by less than this, relative. */
const ROW_NORM_ROUNDING = 1e-12;

/**
 * Checks a PUBLIC row-norm bound R against the data and returns R, never a value read from the
 * rows: the learners' constants, and so the release's event, are functions of R alone (a release
 * planned before the data are read, `plannedTrainingRelease`, states the event of the trained
 * model). Rows above R by rounding only (at most 1e-12 relative) are accepted; learners whose
 * guarantee needs every row within R train on `rowsWithinBound(data, R)`. A row further above R is
 * refused. Learners that train on the rows call `rowsWithinBound` instead (the same check). `src/data`'s `checkRowNormBound` is the strict check that names the row.
 */
export function checkedRowNormBound(data: GlmData, rowNormBound: number | undefined): number {
  const bound = requirePositive('rowNormBound', rowNormBound);
  if (maxRowNorm(data) > bound * (1 + ROW_NORM_ROUNDING)) throw rowAboveBound(bound);
  return bound;
}

/** The refusal of a row above the public bound (by more than rounding); the row is not shown. */
function rowAboveBound(bound: number): InvalidParameterError {
  return new InvalidParameterError('rowNormBound', bound, '>= every row norm (a row has a larger norm, not shown: messages never quote the data); normalise or clip the rows');
}

/**
 * The data checked against the PUBLIC bound R as `checkedRowNormBound` checks them (a row above
 * R by more than rounding is refused), with every row above R by rounding scaled down until its
 * computed norm is at most R; the data themselves when no row is above R. A row-by-row map fixed
 * in advance (clipping to R), so neighbouring data sets stay neighbours, and the constants
 * computed from R bound every row trained on. One pass over the rows' norms.
 */
export function rowsWithinBound(data: GlmData, rowNormBound: number | undefined): GlmData {
  const bound = requirePositive('rowNormBound', rowNormBound);
  const norms = rowNorms(data);
  let largest = 0;
  for (const r of norms) if (r > largest) largest = r;
  if (largest > bound * (1 + ROW_NORM_ROUNDING)) throw rowAboveBound(bound);
  if (!(largest > bound)) return data;
  const x = Float64Array.from(data.x);
  const { d } = data;
  for (let i = 0; i < data.n; i++) {
    if (!(norms[i] > bound)) continue;
    const row = x.subarray(i * d, (i + 1) * d);
    const factor = (bound / norms[i]) * (1 - 4 * Number.EPSILON);
    for (let j = 0; j < d; j++) row[j] *= factor;
    for (let guard = 0; guard < 64 && Math.sqrt(row.reduce((s, v) => s + v * v, 0)) > bound; guard++) {
      for (let j = 0; j < d; j++) row[j] *= 1 - 2 * Number.EPSILON;
    }
  }
  return { ...data, x };
}
