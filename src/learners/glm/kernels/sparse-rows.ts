/**
 * @internal The gathered kernels of `kernels.ts` (margins of a batch of rows, then the update
 * out += sum_k c_k x_{row(k)}) on the rows' nonzero entries only, for features that are mostly
 * zero (one-hot encodings: Adult's 146 features hold ~15 nonzeros a row). A DP-SGD step then
 * reads ~15 entries of each batch row instead of d, from a compressed copy (CSR: the nonzero
 * columns of each row in increasing order and their values) built once per run.
 *
 * They compute the dense kernels' numbers bit for bit, which is what lets the privacy analysis
 * (`per-example.ts` `clippedSumRoundingBound`) cover them unchanged. A term x_j t with x_j = 0 is
 * a signed zero, and adding a signed zero leaves every double unchanged but -0; so:
 * - a margin's halves E (even j) and O (odd j) start at +0 and, in round-to-nearest, a sum is -0
 *   only when both its terms are, so E and O are never -0 and the dense sweep's zero terms change
 *   nothing: E and O are the sums of their nonzero terms in increasing j, here as there;
 * - a four-row group's sum ((c0 x0j + c1 x1j) + c2 x2j) + c3 x3j equals the same sum of the terms
 *   whose x is nonzero, in the same order, up to the sign of a zero result; it is added to out[j],
 *   which starts at +0 and is therefore never -0, so that sign does not matter either, and a
 *   column where all four rows are zero adds a zero, i.e. nothing. The groups are the dense
 *   kernel's (four consecutive batch positions from the block's start, the remainder one row at a
 *   time), so the order of the additions into out is the same.
 * Non-finite theta or features would break the first point (0 x Infinity is NaN): the callers
 * check theta every step and the data once.
 */

/** The nonzero entries of an n x d row-major matrix, row by row (CSR), and the array they come from. */
export interface SparseRows {
  /** The dense features these entries were read from (to check that a caller passes the same). */
  readonly x: Float64Array;
  readonly n: number;
  readonly d: number;
  /** Row i's entries are at positions rowStart[i] .. rowStart[i + 1] - 1 (length n + 1). */
  readonly rowStart: Uint32Array;
  /** Their columns, increasing within a row. */
  readonly columns: Uint32Array;
  readonly values: Float64Array;
}

/** Above this share of nonzero entries the dense kernels are used (the compressed rows would save little). */
export const SPARSE_DENSITY = 0.25;

/**
 * The compressed rows of x (n x d, row-major), or undefined when more than `SPARSE_DENSITY` of its
 * entries are nonzero (or it holds 2^32 nonzeros or more). One pass over x.
 */
export function sparseRowsOf(x: Float64Array, n: number, d: number): SparseRows | undefined {
  let nonzeros = 0;
  for (let k = 0; k < n * d; k++) if (x[k] !== 0) nonzeros++;
  if (nonzeros > SPARSE_DENSITY * n * d || nonzeros >= 2 ** 32) return undefined;
  const rowStart = new Uint32Array(n + 1);
  const columns = new Uint32Array(nonzeros);
  const values = new Float64Array(nonzeros);
  let p = 0;
  for (let i = 0, o = 0; i < n; i++, o += d) {
    rowStart[i] = p;
    for (let j = 0; j < d; j++) {
      const v = x[o + j];
      if (v !== 0) {
        columns[p] = j;
        values[p++] = v;
      }
    }
  }
  rowStart[n] = p;
  return { x, n, d, rowStart, columns, values };
}

/**
 * z[k] = x_row . theta and yOut[k] = y[row] for the rows indices[start + k], k < count: the
 * numbers of `marginsBlock` (without norms) for the same rows.
 */
export function sparseMarginsGathered(
  rows: SparseRows, y: Float64Array, theta: Float64Array, start: number, count: number, indices: ArrayLike<number>,
  z: Float64Array, yOut: Float64Array,
): void {
  const { rowStart, columns, values } = rows;
  for (let k = 0; k < count; k++) {
    const i = indices[start + k];
    let e = 0;
    let f = 0;
    for (let p = rowStart[i], end = rowStart[i + 1]; p < end; p++) {
      const j = columns[p];
      if ((j & 1) === 0) e += values[p] * theta[j];
      else f += values[p] * theta[j];
    }
    z[k] = e + f;
    yOut[k] = y[i];
  }
}

/** Per-column scratch of `sparseAccumulateGathered` (length d each; `touched` all 0 between calls). */
export interface SparseScratch {
  readonly groupSum: Float64Array;
  readonly touched: Uint8Array;
  readonly list: Uint32Array;
}

export function newSparseScratch(d: number): SparseScratch {
  return { groupSum: new Float64Array(d), touched: new Uint8Array(d), list: new Uint32Array(d) };
}

/**
 * out += sum_k c[k] x_{indices[start + k]} for k < count: the numbers of `accumulateBlock` for the
 * same rows (four-row groups summed column by column in row order, then added to out; the
 * remainder one row at a time). `out` must not hold -0 (a sum that starts from zeros never does).
 */
export function sparseAccumulateGathered(
  rows: SparseRows, start: number, count: number, indices: ArrayLike<number>, c: Float64Array, out: Float64Array, s: SparseScratch,
): void {
  const { rowStart, columns, values } = rows;
  const { groupSum, touched, list } = s;
  let k = 0;
  for (; k + 3 < count; k += 4) {
    let listed = 0;
    for (let r = 0; r < 4; r++) {
      const ck = c[k + r];
      const i = indices[start + k + r];
      for (let p = rowStart[i], end = rowStart[i + 1]; p < end; p++) {
        const j = columns[p];
        const term = ck * values[p];
        if (touched[j] === 0) {
          touched[j] = 1;
          list[listed++] = j;
          groupSum[j] = term;
        } else groupSum[j] += term;
      }
    }
    for (let l = 0; l < listed; l++) {
      const j = list[l];
      out[j] += groupSum[j];
      touched[j] = 0;
    }
  }
  for (; k < count; k++) {
    const ck = c[k];
    if (ck === 0) continue;
    const i = indices[start + k];
    for (let p = rowStart[i], end = rowStart[i + 1]; p < end; p++) out[columns[p]] += ck * values[p];
  }
}
