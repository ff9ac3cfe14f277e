/**
 * @internal Blocked kernels shared by the objective and the clipped per-example gradients. A pass
 * over the data works on blocks of BLOCK rows: (1) margins z = x . theta (and squared row norms)
 * for the block, (2) one batch call of the loss (`GlmLoss.derivatives`/`values`), so the loss's
 * own loop stays monomorphic whichever losses a process uses, (3) coefficient-times-row updates
 * while the block's rows are still in cache.
 *
 * Each kernel has two loops: a contiguous one (rows start .. start + count - 1, the full passes of
 * DP-GD and the objective), where the row offset advances by d and no index array is read, and a
 * gathered one (rows indices[start + k], the batches of DP-SGD and shuffled SGD). Both add in the
 * same order, so a pass with indices 0 .. n-1 gives bit-for-bit the same numbers as a full pass.
 * A margin is summed in two interleaved halves, z = E + O with E = ((0 + x_0 t_0) + x_2 t_2) + ...
 * over even j and O the same over odd j (the two lanes of the WebAssembly SIMD kernels, which
 * compute the same numbers); a squared norm runs over j = 0 .. d-1 in order. The rows are
 * combined four at a time (c0 x0 + c1 x1 + c2 x2 + c3 x3, then added to out), the remainder one
 * at a time. The order of a margin does not enter any privacy bound (the clamp bounds every
 * clipped gradient, whatever its margin); the order of the update does (`per-example.ts`).
 */

/** x_row . theta in the kernels' order (z = E + O, see the module comment), for the row at element offset `o`. */
export function margin(x: Float64Array, theta: Float64Array, o: number, d: number): number {
  let e = 0;
  let f = 0;
  let j = 0;
  for (; j + 1 < d; j += 2) {
    e += x[o + j] * theta[j];
    f += x[o + j + 1] * theta[j + 1];
  }
  if (j < d) e += x[o + j] * theta[j];
  return e + f;
}

/**
 * Rows per block: 256 rows x 20 features x 8 bytes = 40 KiB, inside L2, so the update pass reads
 * the block's rows from cache, not from memory (a multiple of 4, the kernels' row group).
 */
export const BLOCK = 256;

/**
 * For the rows `start .. start + count - 1` (or `indices[start + k]` when given): margins into
 * z, labels into yOut, and (when ss is not null) squared row norms into ss.
 */
export function marginsBlock(
  x: Float64Array, y: Float64Array, d: number, theta: Float64Array,
  start: number, count: number, indices: ArrayLike<number> | undefined,
  z: Float64Array, yOut: Float64Array, ss: Float64Array | null,
): void {
  if (indices === undefined) {
    if (ss === null) marginsContiguous(x, d, theta, start * d, count, z);
    else marginsNormsContiguous(x, d, theta, start * d, count, z, ss);
    for (let k = 0; k < count; k++) yOut[k] = y[start + k];
  } else {
    marginsGathered(x, d, theta, start, count, indices, z, ss);
    for (let k = 0; k < count; k++) yOut[k] = y[indices[start + k]];
  }
}

/** z[k] = x_row . theta and ss[k] = ||x_row||^2 for `count` consecutive rows from element offset `base`. */
function marginsNormsContiguous(x: Float64Array, d: number, theta: Float64Array, base: number, count: number, z: Float64Array, ss: Float64Array): void {
  for (let k = 0, o = base; k < count; k++, o += d) z[k] = marginAndNorm(x, theta, o, d, ss, k);
}

/**
 * `margin` of the row at element offset `o`, and its squared norm into ss[k] (summed over
 * j = 0 .. d-1 in order), in one sweep of the row.
 */
function marginAndNorm(x: Float64Array, theta: Float64Array, o: number, d: number, ss: Float64Array, k: number): number {
  let e = 0;
  let f = 0;
  let s0 = 0;
  let j = 0;
  for (; j + 1 < d; j += 2) {
    const a = x[o + j];
    const b = x[o + j + 1];
    e += a * theta[j];
    f += b * theta[j + 1];
    s0 += a * a;
    s0 += b * b;
  }
  if (j < d) {
    const a = x[o + j];
    e += a * theta[j];
    s0 += a * a;
  }
  ss[k] = s0;
  return e + f;
}

/**
 * z[k] = x_row . theta for `count` consecutive rows from element offset `base`: two rows per sweep
 * of theta (four independent accumulators shorten the add-latency chains).
 */
export function marginsContiguous(x: Float64Array, d: number, theta: Float64Array, base: number, count: number, z: Float64Array): void {
  let k = 0;
  let o0 = base;
  for (; k + 1 < count; k += 2) {
    const o1 = o0 + d;
    let e0 = 0;
    let f0 = 0;
    let e1 = 0;
    let f1 = 0;
    let j = 0;
    for (; j + 1 < d; j += 2) {
      const t = theta[j];
      const u = theta[j + 1];
      e0 += x[o0 + j] * t;
      f0 += x[o0 + j + 1] * u;
      e1 += x[o1 + j] * t;
      f1 += x[o1 + j + 1] * u;
    }
    if (j < d) {
      e0 += x[o0 + j] * theta[j];
      e1 += x[o1 + j] * theta[j];
    }
    z[k] = e0 + f0;
    z[k + 1] = e1 + f1;
    o0 = o1 + d;
  }
  if (k < count) z[k] = margin(x, theta, o0, d);
}

/** The gathered form: rows indices[start + k]; the same per-row orders of additions. */
function marginsGathered(
  x: Float64Array, d: number, theta: Float64Array, start: number, count: number, indices: ArrayLike<number>,
  z: Float64Array, ss: Float64Array | null,
): void {
  for (let k = 0; k < count; k++) {
    const off = indices[start + k] * d;
    z[k] = ss === null ? margin(x, theta, off, d) : marginAndNorm(x, theta, off, d, ss, k);
  }
}

/**
 * out += sum_k c[k] x_{row(k)} over the block's rows, four rows per sweep of `out` (a quarter of
 * the loads and stores of out; measured 2x faster than one row per sweep on 1e6 x 20).
 */
export function accumulateBlock(
  x: Float64Array, d: number, start: number, count: number, indices: ArrayLike<number> | undefined,
  c: Float64Array, out: Float64Array,
): void {
  if (indices === undefined) accumulateContiguous(x, d, start * d, count, c, out);
  else accumulateGathered(x, d, start, count, indices, c, out);
}

function accumulateContiguous(x: Float64Array, d: number, base: number, count: number, c: Float64Array, out: Float64Array): void {
  let k = 0;
  let o0 = base;
  for (; k + 3 < count; k += 4) {
    const c0 = c[k];
    const c1 = c[k + 1];
    const c2 = c[k + 2];
    const c3 = c[k + 3];
    const o1 = o0 + d;
    const o2 = o1 + d;
    const o3 = o2 + d;
    for (let j = 0; j < d; j++) out[j] += c0 * x[o0 + j] + c1 * x[o1 + j] + c2 * x[o2 + j] + c3 * x[o3 + j];
    o0 = o3 + d;
  }
  for (; k < count; k++, o0 += d) {
    const ck = c[k];
    if (ck === 0) continue;
    for (let j = 0; j < d; j++) out[j] += ck * x[o0 + j];
  }
}

function accumulateGathered(
  x: Float64Array, d: number, start: number, count: number, indices: ArrayLike<number>, c: Float64Array, out: Float64Array,
): void {
  let k = 0;
  for (; k + 3 < count; k += 4) {
    const c0 = c[k];
    const c1 = c[k + 1];
    const c2 = c[k + 2];
    const c3 = c[k + 3];
    const o0 = indices[start + k] * d;
    const o1 = indices[start + k + 1] * d;
    const o2 = indices[start + k + 2] * d;
    const o3 = indices[start + k + 3] * d;
    for (let j = 0; j < d; j++) out[j] += c0 * x[o0 + j] + c1 * x[o1 + j] + c2 * x[o2 + j] + c3 * x[o3 + j];
  }
  for (; k < count; k++) {
    const ck = c[k];
    if (ck === 0) continue;
    const off = indices[start + k] * d;
    for (let j = 0; j < d; j++) out[j] += ck * x[off + j];
  }
}
