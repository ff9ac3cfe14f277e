/**
 * Per-row clip thresholds t_i = C (1 - 2^-48) / ||x_i||_2 (`clipThreshold`), computed once per
 * data set instead of once per step. They are functions of the stored rows and the public clip
 * norm only (no theta, no noise), so caching them changes no number: each squared norm is summed
 * over j = 0 .. d-1 in order, as the kernels that recompute it every step do
 * (`marginsNormsContiguous`), and float32 rows are widened exactly. Clipping therefore happens on
 * the values the sum actually uses, with the same floating-point margin (`CLIP_SAFETY`).
 */
import { InvalidParameterError } from '../../errors.js';
import { requirePositiveOrInfinity } from '../../validate.js';
import { clipThreshold } from './clipped-gradient.js';
import { sideThresholds } from './kernels/feature-memory.js';
import type { FeatureArray, StoredGlmData } from './types.js';

/** Thresholds of one data set for one clip norm; `x` identifies the features they belong to. */
export interface ClipThresholds {
  readonly x: FeatureArray;
  readonly clipNorm: number;
  /** t_i for i < n (a SharedArrayBuffer where available, so that worker threads read it in place). */
  readonly values: Float64Array;
}

function thresholdsArray(n: number): Float64Array {
  return typeof SharedArrayBuffer === 'undefined' ? new Float64Array(n) : new Float64Array(new SharedArrayBuffer(n * 8));
}

function fill(x: Float64Array, d: number, clipNorm: number, out: Float64Array): void {
  const n = out.length;
  for (let i = 0, off = 0; i < n; i++, off += d) {
    let s = 0;
    for (let j = 0; j < d; j++) {
      const a = x[off + j];
      s += a * a;
    }
    out[i] = clipThreshold(clipNorm, Math.sqrt(s));
  }
}

/**
 * The thresholds of every row of `data` for clip norm C (one pass over the features). Pass them
 * to `sumClippedGradients` (`thresholds`) for the same features and C; recompute them if the
 * features change (they are checked to belong to the same array, not re-read).
 */
export function clipThresholds(data: StoredGlmData, clipNorm: number): ClipThresholds {
  requirePositiveOrInfinity('clipNorm', clipNorm);
  const { x, n, d } = data;
  if (x.length !== n * d) throw new InvalidParameterError('data.x.length', x.length, `n * d = ${n * d}`);
  // In the features' memory when it has room (the fused kernel then reads them in place).
  const values = sideThresholds(x, d) ?? thresholdsArray(n);
  // Two monomorphic copies of the loop (float64 and float32 element loads).
  if (x instanceof Float64Array) fill(x, d, clipNorm, values);
  else fill32(x, d, clipNorm, values);
  return { x, clipNorm, values };
}

function fill32(x: Float32Array, d: number, clipNorm: number, out: Float64Array): void {
  const n = out.length;
  for (let i = 0, off = 0; i < n; i++, off += d) {
    let s = 0;
    for (let j = 0; j < d; j++) {
      const a = x[off + j];
      s += a * a;
    }
    out[i] = clipThreshold(clipNorm, Math.sqrt(s));
  }
}

/** @internal Checks that `thresholds` were computed for these features, n and clip norm. */
export function checkThresholds(thresholds: ClipThresholds, data: StoredGlmData, clipNorm: number): Float64Array {
  if (thresholds.x !== data.x || thresholds.values.length !== data.n) {
    throw new InvalidParameterError('thresholds', 'computed for other features', 'clipThresholds(data, clipNorm) of the data being summed');
  }
  if (thresholds.clipNorm !== clipNorm) throw new InvalidParameterError('thresholds.clipNorm', thresholds.clipNorm, `the sum's clipNorm = ${clipNorm}`);
  return thresholds.values;
}
