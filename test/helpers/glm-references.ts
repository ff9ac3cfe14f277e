/**
 * References of the GLM kernels' tests (test/learners/glm/kernel-paths.test.ts, nan-clamp.test.ts),
 * written out independently of src: float32 logistic coefficients and compressed rows.
 */
import { exp32 } from '../../src/learners/glm/kernels/float32-logistic.js';
import type { SparseRows } from '../../src/learners/glm/kernels/sparse-rows.js';
import type { GlmData } from '../../src/learners/glm/types.js';

/**
 * The unclipped coefficients -y_i / (1 + e(y_i z_i)) of float32 rows as `float32-logistic.ts` defines
 * them, written out directly: theta rounded to float32 (saturated), lane l = j mod 4 summing its
 * products in float32 in order, the padded lanes adding +0, z = (l0 + l2) + (l1 + l3), then
 * -y / (1 + exp32(y z)) in float32.
 */
export function float32Coefficients(x: Float32Array, y: Float64Array, n: number, d: number, theta: Float64Array): Float64Array {
  const f = Math.fround;
  const max = 3.4028234663852886e38;
  const th = Array.from(theta, (v) => f(Math.min(max, Math.max(-max, v))));
  const c = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const lanes = [0, 0, 0, 0];
    for (let j = 0; j < 4 * Math.ceil(d / 4); j++) lanes[j % 4] = f(lanes[j % 4] + (j < d ? f(x[i * d + j] * th[j]) : 0));
    const z = f(f(lanes[0] + lanes[2]) + f(lanes[1] + lanes[3]));
    const yi = f(y[i]);
    c[i] = f(f(-yi) / f(1 + exp32(f(yi * z))));
  }
  return c;
}

/** The compressed rows of any features (`sparseRowsOf` declines dense ones): the same layout, built here. */
export function compressRows(data: GlmData): SparseRows {
  const { x, n, d } = data;
  const rowStart = new Uint32Array(n + 1);
  const columns: number[] = [];
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    rowStart[i] = columns.length;
    for (let j = 0; j < d; j++) {
      if (x[i * d + j] !== 0) {
        columns.push(j);
        values.push(x[i * d + j]);
      }
    }
  }
  rowStart[n] = columns.length;
  return { x, n, d, rowStart, columns: Uint32Array.from(columns), values: Float64Array.from(values) };
}
