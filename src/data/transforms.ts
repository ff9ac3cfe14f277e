/**
 * Per-row transforms that cost no privacy: each output row is a function of its own input row
 * and of public constants only, so replacing one record changes one output row and nothing else.
 * (Statistics of the whole data — a min/max scaler, a norm bound set to the largest observed norm
 * — would leak; dpfit does not offer them.)
 *
 * - `normalizeRows`: x_i <- x_i / ||x_i||_2 (`003` Sec. 5: "normalize each row x_i to have unit
 *   l2-norm ... doesn't require expending any privacy budget as each data point is transformed only
 *   by its own per-sample norm"). A zero row stays zero. Rows end with norm in [1 - 1e-15, 1]:
 *   rounded down by a few ulps, so that no way of summing the squares finds a norm above 1.
 * - `clipRows`: x_i <- x_i min(1, C / ||x_i||_2), norm <= C (rounded down likewise).
 * - `clipRowsMahalanobis`: the clipping of `000` Prop. 3, x_i <- R_c x_i / max(R_c, sqrt(x_i^T C^-1 x_i)),
 *   with a public matrix C (e.g. a declared covariance).
 * - `scaleRows`: multiply every row by the same public constant.
 * - `addIntercept`: append a constant column c; a norm bound B becomes sqrt(B^2 + c^2).
 *
 * All return new datasets; the input is not modified. Browser-safe.
 */
import { InvalidParameterError } from '../errors.js';
import { optionNames, rejectUnknownOptions, requireFinite, requirePositive } from '../validate.js';
import type { Dataset } from './dataset.js';

function sumSquares(x: Float64Array, start: number, end: number): number {
  let s = 0;
  for (let k = start; k < end; k++) s += x[k] * x[k];
  return s;
}

/**
 * L2 norm of x[start, end) without overflow or underflow: the plain sum of squares when it is a
 * normal number, else rescaled by the largest |x_k| (rows with entries near 1e154 or 1e-154).
 */
function robustNorm(x: Float64Array, start: number, end: number): number {
  const s = sumSquares(x, start, end);
  if (s < Infinity && s > 1e-290) return Math.sqrt(s);
  let max = 0;
  for (let k = start; k < end; k++) max = Math.max(max, Math.abs(x[k]));
  if (max === 0 || max === Infinity) return max;
  let t = 0;
  for (let k = start; k < end; k++) t += (x[k] / max) ** 2;
  return max * Math.sqrt(t);
}

/** The largest |x_k| of x[start, end). */
function maxAbs(x: Float64Array, start: number, end: number): number {
  let max = 0;
  for (let k = start; k < end; k++) max = Math.max(max, Math.abs(x[k]));
  return max;
}

/**
 * Rescales the non-zero row x[start, end) to L2 norm `target`, rounding down: divide by the
 * largest |x_k| (`max`, from the caller) first (so neither huge nor subnormal rows lose
 * precision), then by the norm of the result, times `target`; then shrink by ulps until the
 * computed norm is at most target * (1 - 4 eps). The margin keeps ||x|| <= target however a
 * consumer sums the squares (Math.hypot, another order): a norm bound is a privacy bound and errs
 * on the safe side. Each pass sums the squares of the values it writes, in index order: the sums
 * a separate pass over the written row would find, with one pass over the row instead of two.
 */
function rescaleRow(x: Float64Array, start: number, end: number, target: number, max: number): void {
  let s = 0;
  for (let k = start; k < end; k++) {
    const v = x[k] / max;
    x[k] = v;
    s += v * v;
  }
  const norm = Math.sqrt(s);
  let t = 0;
  for (let k = start; k < end; k++) {
    const v = (x[k] / norm) * target;
    x[k] = v;
    t += v * v;
  }
  const safe = target * (1 - 4 * Number.EPSILON);
  let guard = 0;
  while (Math.sqrt(t) > safe && guard++ < 64) {
    t = 0;
    for (let k = start; k < end; k++) {
      const v = x[k] * (1 - 2 * Number.EPSILON);
      x[k] = v;
      t += v * v;
    }
  }
}

/**
 * Rescales the row x[start, end) in place to unit norm, as `normalizeRows` does to each row (a
 * zero row stays zero). The row is rescaled exactly when `robustNorm` finds a positive norm, which
 * is when its largest |x_k| is positive (a NaN entry makes both false), so one pass finding that
 * largest entry decides.
 */
export function normalizeRowInPlace(x: Float64Array, start: number, end: number): void {
  const max = maxAbs(x, start, end);
  if (max > 0) rescaleRow(x, start, end, 1, max);
}

/** Scales the row x[start, end) in place down to norm `clipNorm` if it is longer, as `clipRows` does to each row. */
export function clipRowInPlace(x: Float64Array, start: number, end: number, clipNorm: number): void {
  const norm = robustNorm(x, start, end);
  if (norm > clipNorm) rescaleRow(x, start, end, clipNorm, maxAbs(x, start, end));
}

function copyOf(dataset: Dataset): { x: Float64Array; y: Float64Array } {
  return { x: Float64Array.from(dataset.x), y: Float64Array.from(dataset.y) };
}

/**
 * Unit-norm rows (`003` Sec. 5). The public row-norm bound afterwards is 1.
 *
 * @example
 * const unit = normalizeRows(data); // maxRowNorm(unit) <= 1
 */
export function normalizeRows(dataset: Dataset): Dataset {
  const { x, y } = copyOf(dataset);
  const { n, d } = dataset;
  for (let i = 0, start = 0; i < n; i++, start += d) normalizeRowInPlace(x, start, start + d);
  return { x, y, n, d, featureNames: dataset.featureNames };
}

/**
 * Rows with norm above `clipNorm` are scaled down to it; shorter rows are unchanged. The public
 * row-norm bound afterwards is `clipNorm`.
 */
export function clipRows(dataset: Dataset, clipNorm: number): Dataset {
  requirePositive('clipNorm', clipNorm);
  const { x, y } = copyOf(dataset);
  const { n, d } = dataset;
  for (let i = 0, start = 0; i < n; i++, start += d) clipRowInPlace(x, start, start + d, clipNorm);
  return { x, y, n, d, featureNames: dataset.featureNames };
}

/** Every row times the public constant `factor` (a norm bound B becomes |factor| B). */
export function scaleRows(dataset: Dataset, factor: number): Dataset {
  requireFinite('factor', factor);
  const x = Float64Array.from(dataset.x, (v) => v * factor);
  return { x, y: Float64Array.from(dataset.y), n: dataset.n, d: dataset.d, featureNames: dataset.featureNames };
}

const ADD_INTERCEPT_OPTIONS = optionNames<NonNullable<Parameters<typeof addIntercept>[1]>>({ value: true, rowNormBound: true });

/**
 * Appends a constant column `value` (default 1) named "(intercept)". The row-norm bound grows:
 * if every row had ||x_i|| <= B, now ||(x_i, c)|| <= sqrt(B^2 + c^2) — e.g. sqrt(2) after
 * `normalizeRows`. Pass the old bound as `rowNormBound` to get the new one (rounded up); to keep a
 * total bound of 1, clip the rows to sqrt(1 - c^2) first.
 *
 * @example
 * const { dataset, rowNormBound } = addIntercept(normalizeRows(data), { rowNormBound: 1 }); // sqrt(2)
 */
export function addIntercept(dataset: Dataset, options: { value?: number; rowNormBound?: number } = {}): { dataset: Dataset; rowNormBound?: number } {
  rejectUnknownOptions(options, ADD_INTERCEPT_OPTIONS, 'addIntercept');
  const value = requireFinite('value', options.value ?? 1);
  if (value === 0) throw new InvalidParameterError('value', value, 'non-zero');
  const { n, d } = dataset;
  const x = new Float64Array(n * (d + 1));
  for (let i = 0; i < n; i++) {
    x.set(dataset.x.subarray(i * d, (i + 1) * d), i * (d + 1));
    x[i * (d + 1) + d] = value;
  }
  const out: Dataset = { x, y: Float64Array.from(dataset.y), n, d: d + 1, featureNames: [...dataset.featureNames, '(intercept)'] };
  if (options.rowNormBound === undefined) return { dataset: out };
  const bound = requireFinite('rowNormBound', options.rowNormBound);
  return { dataset: out, rowNormBound: Math.hypot(bound, value) * (1 + 4 * Number.EPSILON) };
}

const CLIP_ROWS_MAHALANOBIS_OPTIONS = optionNames<NonNullable<Parameters<typeof clipRowsMahalanobis>[1]>>({ matrix: true, radius: true });

/**
 * The clipping of `000` Prop. 3 (and Prop. 1 with C^-1 in place of C^-2): with a public symmetric
 * positive-definite d x d matrix `matrix` (row-major; e.g. the declared covariance Sigma) and a
 * radius R_c, x_i <- R_c x_i / max(R_c, sqrt(x_i^T C^-1 x_i)), so that x_i^T C^-1 x_i <= R_c^2.
 * C must not depend on the data (Prop. 1: "how X_i is clipped should be independent of X").
 */
export function clipRowsMahalanobis(dataset: Dataset, options: { matrix: Float64Array; radius: number }): Dataset {
  rejectUnknownOptions(options, CLIP_ROWS_MAHALANOBIS_OPTIONS, 'clipRowsMahalanobis');
  const { d, n } = dataset;
  const radius = requirePositive('radius', options.radius);
  const factor = choleskyFactor(options.matrix, d, 'matrix');
  const { x, y } = copyOf(dataset);
  const z = new Float64Array(d);
  for (let i = 0, start = 0; i < n; i++, start += d) {
    // x^T C^-1 x = ||L^-1 x||^2 with C = L L^T: forward substitution.
    for (let r = 0; r < d; r++) {
      let s = x[start + r];
      for (let c = 0; c < r; c++) s -= factor[r * d + c] * z[c];
      z[r] = s / factor[r * d + r];
    }
    const m = Math.sqrt(sumSquares(z, 0, d));
    if (m > radius) {
      const scale = radius / m;
      for (let k = start; k < start + d; k++) x[k] *= scale * (1 - 2 * Number.EPSILON);
    }
  }
  return { x, y, n, d, featureNames: dataset.featureNames };
}

/**
 * Lower-triangular L with L L^T = A for a symmetric positive-definite d x d matrix (row-major),
 * by the Cholesky–Banachiewicz order. Throws `InvalidParameterError` naming `param` if A is not
 * symmetric or not positive definite.
 */
export function choleskyFactor(matrix: Float64Array, d: number, param = 'covariance'): Float64Array {
  if (!(matrix instanceof Float64Array) || matrix.length !== d * d) throw new InvalidParameterError(param, matrix, `a Float64Array of length d * d = ${d * d}`);
  for (let r = 0; r < d; r++) {
    for (let c = 0; c < r; c++) {
      const a = matrix[r * d + c];
      const b = matrix[c * d + r];
      if (!(Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b)))) throw new InvalidParameterError(`${param}[${r}, ${c}]`, a, `symmetric (== ${param}[${c}, ${r}] = ${b})`);
    }
  }
  const L = new Float64Array(d * d);
  for (let r = 0; r < d; r++) {
    for (let c = 0; c <= r; c++) {
      let s = matrix[r * d + c];
      for (let k = 0; k < c; k++) s -= L[r * d + k] * L[c * d + k];
      if (r === c) {
        if (!(s > 0)) throw new InvalidParameterError(param, `pivot ${s} at row ${r}`, 'positive definite');
        L[r * d + r] = Math.sqrt(s);
      } else L[r * d + c] = s / L[c * d + c];
    }
  }
  return L;
}
