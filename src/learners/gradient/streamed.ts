/**
 * DP-GD and DP-SGD over rows that do not fit in memory: the rows come from a `RowSource`, one
 * pass at a time (a Parquet or CSV file read through DuckDB, `data/node/stream-rows.ts`), and only
 * a bounded window of them is held at once. The runs release exactly what `trainDpGd` and
 * `trainDpSgd` release on the same rows with the same randomness, bit for bit:
 *
 * - DP-GD. The in-memory sum cuts the pass into chunks of `CHUNK_ROWS` rows by position, sums each
 *   chunk on its own and adds the chunk sums in order (`glm/per-example.ts`). The streamed sum
 *   fills a buffer of exactly those chunks from the stream and sums each with the same function,
 *   adding the chunk sums in the same order: the same floating-point operations on the same
 *   values, so the same sum, and the same public bound on its rounding error
 *   (`clippedSumRoundingBound`) holds. Memory: one chunk (CHUNK_ROWS x d doubles).
 * - DP-SGD. What is public is the schedule (n, q, T) and nothing about the batches: the batch of
 *   each step is drawn by dpfit's generator exactly as in memory (`poissonSubsampleIndices`, the
 *   same calls in the same order, interleaved with the noise draws), never by the data source;
 *   then one pass over the stream gathers those rows, in the batch's (ascending) order, and they
 *   are summed as in memory. The batch indices never depend on the data, so the privacy analysis
 *   (Poisson subsampling of an add/remove-one Gaussian, `dp-sgd.ts`) is unchanged. Memory: the
 *   batch (about q n rows). Cost: one pass of the source per step, which is what bounded memory
 *   costs without random access to the rows.
 *
 * The number of rows n must be known before training (it is public under both relations, as in
 * memory): the source counts it in an opening pass. A pass that reads to the end must see exactly
 * n rows and a batch's rows must all be there, or the run stops with an error before anything is
 * released (a source that ends early must never pass for a smaller dataset).
 */
import { DataFormatError, InvalidParameterError, dataValueError } from '../../errors.js';
import type { RowSource } from '../../data/row-source.js';
import { poissonSubsampleIndices } from '../../random/discrete.js';
import { DP_GD_OPTIONS, type DpGdOptions, dpGdUpdate, finishDpGd, setUpDpGd } from './dp-gd.js';
import type { TrainResult } from '../training.js';
import { DP_SGD_OPTIONS, setUpDpSgd, dpSgdUpdate, finishDpSgd, type DpSgdOptions } from './dp-sgd.js';
import { toSignedLabels } from '../glm/constants.js';
import { CHUNK_ROWS, sumClippedGradients } from '../glm/per-example.js';
import type { GlmLoss } from '../glm/types.js';
import { lossByName } from '../glm/losses/by-name.js';
import { rejectUnknownOptions } from '../../validate.js';

/** The label check of `dataForLoss` (losses.ts), on the label values the source saw. */
function checkLabels(loss: GlmLoss, source: RowSource): void {
  if (source.n === 0) throw new InvalidParameterError('data.n', 0, 'at least one row (the data set is empty)');
  if (loss.labels !== 'signed') return;
  const values = source.labelValues;
  if (!values.every((v) => v === 0 || v === 1 || v === -1)) throw dataValueError('labels', 'two classes coded 0/1 or -1/+1');
}

/** Labels in the loss's convention (signed losses: 0/1 to -1/+1), into `out`. */
function lossLabels(loss: GlmLoss, y: Float64Array, rows: number, out: Float64Array, at: number): void {
  if (loss.labels === 'signed') out.set(toSignedLabels(y.subarray(0, rows)), at);
  else out.set(y.subarray(0, rows), at);
}

/**
 * sum_i clip_C(grad l(theta; x_i, y_i)) over every row of the source, equal bit for bit to
 * `sumClippedGradients` on the same rows in memory (module comment). Returns the clipped count.
 */
export async function streamedClippedSum(loss: GlmLoss, source: RowSource, theta: Float64Array, clipNorm: number, out: Float64Array): Promise<number> {
  const { n, d } = source;
  const rowsPerChunk = Math.min(n, CHUNK_ROWS);
  const x = new Float64Array(rowsPerChunk * d);
  const y = new Float64Array(rowsPerChunk);
  const part = new Float64Array(d);
  let filled = 0;
  let seen = 0;
  let clipped = 0;
  out.fill(0);
  const flush = (): void => {
    if (filled === 0) return;
    clipped += sumClippedGradients(loss, { x: x.subarray(0, filled * d), y: y.subarray(0, filled), n: filled, d }, theta, { clipNorm, out: part }).clippedCount;
    // Chunk sums added in chunk order, as in memory (per-example.ts CHUNK_ROWS).
    for (let j = 0; j < d; j++) out[j] += part[j];
    filled = 0;
  };
  await source.scan((cx, cy, rows) => {
    let r = 0;
    while (r < rows) {
      const take = Math.min(rows - r, rowsPerChunk - filled);
      x.set(cx.subarray(r * d, (r + take) * d), filled * d);
      lossLabels(loss, cy.subarray(r, r + take), take, y, filled);
      filled += take;
      r += take;
      if (filled === rowsPerChunk) flush();
    }
    seen += rows;
  });
  flush();
  if (seen !== n) throw new DataFormatError(source.source ?? 'the row source', `a pass over the rows saw a different number of rows than the opening pass's ${n} (the source changed between passes, or ended early); nothing was released`);
  return clipped;
}

/** DP-GD (`dp-gd.ts`) over a row source: one pass per step, the same release as `trainDpGd` on the same rows. */
export async function trainDpGdStreamed(source: RowSource, options: DpGdOptions): Promise<TrainResult> {
  rejectUnknownOptions(options, DP_GD_OPTIONS, 'trainDpGdStreamed');
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  checkLabels(loss, source);
  const run = setUpDpGd(source, { ...options, featureNames: options.featureNames ?? source.featureNames });
  const theta = new Float64Array(run.d);
  const gradient = new Float64Array(run.d);
  let clippedFraction = 0;
  for (let t = 0; t < run.steps; t++) {
    const clippedCount = await streamedClippedSum(run.loss, source, theta, run.clipNorm, gradient);
    clippedFraction += clippedCount / run.n / run.steps;
    dpGdUpdate(run, options, t, gradient, theta);
  }
  return finishDpGd(run, { ...options, featureNames: options.featureNames ?? source.featureNames }, theta, clippedFraction);
}

/**
 * The rows at the (ascending, distinct) positions `batch`, gathered in one pass, labels in the
 * loss's convention: the batch in the order `sumClippedGradients` reads it with `indices`.
 */
export async function gatherRows(loss: GlmLoss, source: RowSource, batch: Uint32Array): Promise<{ x: Float64Array; y: Float64Array; n: number; d: number }> {
  const d = source.d;
  const b = batch.length;
  const x = new Float64Array(b * d);
  const y = new Float64Array(b);
  const raw = new Float64Array(1);
  let k = 0;
  let position = 0;
  await source.scan((cx, cy, rows) => {
    const end = position + rows;
    while (k < b && batch[k] < end) {
      const r = batch[k] - position;
      x.set(cx.subarray(r * d, (r + 1) * d), k * d);
      raw[0] = cy[r];
      lossLabels(loss, raw, 1, y, k);
      k++;
    }
    position = end;
    return k < b; // the rest of the pass holds no batch row
  });
  if (k !== b) throw new DataFormatError(source.source ?? 'the row source', `a pass over the rows ended before the opening pass's ${source.n} rows (the source changed between passes, or ended early); nothing was released`);
  return { x, y, n: b, d };
}

/** DP-SGD (`dp-sgd.ts`) over a row source: each step's Poisson batch drawn first, then gathered in one pass. */
export async function trainDpSgdStreamed(source: RowSource, options: DpSgdOptions): Promise<TrainResult> {
  rejectUnknownOptions(options, DP_SGD_OPTIONS, 'trainDpSgdStreamed');
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  checkLabels(loss, source);
  const withNames = { ...options, featureNames: options.featureNames ?? source.featureNames };
  const run = setUpDpSgd(source, withNames);
  const { n, d, steps, clipNorm, samplingProbability: q, rng } = run;
  const theta = new Float64Array(d);
  const gradient = new Float64Array(d);
  const counts = { clipped: 0, used: 0, emptyBatches: 0 };
  for (let t = 0; t < steps; t++) {
    // Drawn by dpfit's generator, as in memory: the source never sees a random choice it could bias.
    const batch = poissonSubsampleIndices(rng, n, q);
    if (batch.length === 0) {
      counts.emptyBatches++;
      gradient.fill(0);
    } else {
      const rows = await gatherRows(run.loss, source, batch);
      const result = sumClippedGradients(run.loss, rows, theta, { clipNorm, out: gradient });
      counts.clipped += result.clippedCount;
      counts.used += result.count;
    }
    dpSgdUpdate(run, withNames, t, gradient, theta);
  }
  return finishDpSgd(run, withNames, theta, counts);
}
