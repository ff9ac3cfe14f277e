/**
 * Rows dropped for a missing value ("missing": "dropRow") must not make n private.
 *
 * Replacing one record can turn a kept row into a dropped one (or back): if the learners saw only
 * the kept rows, n — and every released value that depends on it (the event's sampling rate
 * q = B/n, the noise calibrated from n, the grid, the normalisation 1/n) — would move with one
 * record, unaccounted. So a private TRAINING set keeps one row per record read: each dropped
 * record becomes a ZERO ROW, x = 0 (every feature, the intercept included) with a neutral label.
 *
 * A zero row is a no-op for every learner of dpfit: they are GLMs, l(theta; x, y) = f(x.theta; y),
 * whose gradient f'(x.theta; y) x vanishes at x = 0 whatever y, whose sufficient statistics
 * (RGM's sum x x^T and sum x y) get nothing from it, and whose loss value f(0; y) is a constant
 * that moves no minimiser. The released model is therefore trained on the kept rows only, while
 * n is the number of RECORDS, which is public under replace-one neighbours (a replaced record
 * leaves it unchanged) and the same for every way of reading the data (memory, out of core, SQL).
 * Replacing a dropped record by a kept one is, for the learners, replacing a zero row by a row:
 * a replace-one neighbour, covered by every replace-one sensitivity bound (a zero row satisfies
 * every row-norm bound); for the add/remove learners it is a remove plus an add (group of two).
 *
 * Their label is `PreparedData.zeroRowLabel`: any value the label's encoding accepts (x = 0 cancels
 * it): the negative class, class 0, or the numeric label's public bound nearest to 0.
 *
 * The zero rows go after the kept rows, in every path (they are no-ops, so their place changes
 * nothing but the order of the randomness; one place for all paths keeps the models equal).
 */
import type { Dataset } from './dataset.js';
import type { PreparedData } from './schema/apply.js';

/** How many zero rows a prepared training set needs: the records read minus the rows kept. */
export function droppedRowCount(prepared: Pick<PreparedData, 'dataset' | 'privateDiagnostics'>): number {
  return prepared.privateDiagnostics.rowsRead - prepared.dataset.n;
}

/**
 * The training set with one row per record read: the kept rows, then one zero row per dropped
 * record (module comment). Returns `prepared` itself when nothing was dropped.
 */
export function withZeroRows(prepared: PreparedData): PreparedData {
  const missing = droppedRowCount(prepared);
  if (missing === 0) return prepared;
  const { x, y, n, d } = prepared.dataset;
  const rows = n + missing;
  const paddedX = new Float64Array(rows * d);
  paddedX.set(x.subarray(0, n * d));
  const paddedY = new Float64Array(rows).fill(prepared.zeroRowLabel);
  paddedY.set(y.subarray(0, n));
  const dataset: Dataset = { ...prepared.dataset, x: paddedX, y: paddedY, n: rows };
  return { ...prepared, dataset };
}

/** The kept rows of a training set made by `withZeroRows` (for the data owner's own metrics). */
export function keptRows<T extends { readonly x: Float64Array | Float32Array; readonly y: Float64Array; readonly n: number; readonly d: number }>(data: T, dropped: number): T {
  if (dropped === 0) return data;
  const n = data.n - dropped;
  return { ...data, x: data.x.subarray(0, n * data.d), y: data.y.subarray(0, n), n };
}
