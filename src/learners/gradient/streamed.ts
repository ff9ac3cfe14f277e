/**
 * DP-GD and DP-SGD over rows that do not fit in memory: the rows come from a `RowSource`, one
 * pass at a time (a Parquet or CSV file encoded once into a temporary file, or read through DuckDB
 * on every pass, `data/node/stream-rows.ts`), and only a bounded window of them is held at once.
 * The runs release exactly what `trainDpGd` and `trainDpSgd` release on the same rows with the
 * same randomness, bit for bit:
 *
 * - Stored rows (`RowSource.stored`, the default): DP-GD reads segments of the encoded rows
 *   straight into WebAssembly feature memories, the next segment while the kernels sum the current
 *   one, and sums them with the in-memory kernels in the in-memory chunks (`storedClippedSum`); the
 *   features in the precision they were stored in (`precision`, float32 as in memory). DP-SGD
 *   reads each batch's rows at their positions.
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
import type { RowSource, StoredRows } from '../../data/row-source.js';
import { poissonSubsampleIndices } from '../../random/discrete.js';
import { DP_GD_OPTIONS, type DpGdOptions, dpGdUpdate, finishDpGd, setUpDpGd } from './dp-gd.js';
import type { TrainResult } from '../training.js';
import { DP_SGD_OPTIONS, setUpDpSgd, dpSgdUpdate, finishDpSgd, type DpSgdOptions } from './dp-sgd.js';
import { toSignedLabels } from '../glm/constants.js';
import { clipThreshold } from '../glm/clipped-gradient.js';
import { allocateFeatures, featureMemoryOf } from '../glm/kernels/feature-memory.js';
import { accumulateClippedRangeCached, CHUNK_ROWS, newClipScratch, sumClippedGradients } from '../glm/per-example.js';
import type { ClipThresholds } from '../glm/clip-thresholds.js';
import type { GradientSummer } from '../glm/gradient-summer.js';
import type { FeatureArray } from '../glm/types.js';
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
 * Where a run's segments go: two slots of S rows in one feature memory (`allocateFeatures`, 2S
 * rows: the WebAssembly kernels and the worker pool read x, and the labels and thresholds of its
 * side region, in place; one memory, so the pool is configured once per run). Slot k % 2 takes
 * segment k, the other slot the next segment while this one is summed.
 */
interface SegmentSlots {
  /** 2S rows of features. */
  readonly x: FeatureArray;
  /** 2S labels (in the loss's convention once prepared). */
  readonly y: Float64Array;
  /** 2S squared norms as read, then the clip thresholds computed from them in place. */
  readonly t: Float64Array;
  readonly thresholds: ClipThresholds;
  /** The bytes of slot s that a segment is read into. */
  readonly into: readonly { readonly x: Uint8Array; readonly y: Uint8Array; readonly norms: Uint8Array }[];
}

/** The two slots for `stored` rows of d features (a plain buffer where there is no feature memory). */
function segmentSlots(stored: StoredRows, d: number, clipNorm: number): SegmentSlots {
  const S = stored.segmentRows;
  const b = stored.precision === 'float64' ? 8 : 4;
  const x = allocateFeatures(2 * S, d, stored.precision);
  const info = featureMemoryOf(x, d);
  let y: Float64Array;
  let t: Float64Array;
  if (info !== undefined && info.sideOffset >= 0) {
    y = new Float64Array(info.memory.buffer, info.sideOffset, 2 * S);
    t = new Float64Array(info.memory.buffer, info.sideOffset + 16 * S, 2 * S);
  } else {
    const shared = typeof SharedArrayBuffer === 'undefined' ? undefined : new SharedArrayBuffer(32 * S);
    y = shared === undefined ? new Float64Array(2 * S) : new Float64Array(shared, 0, 2 * S);
    t = shared === undefined ? new Float64Array(2 * S) : new Float64Array(shared, 16 * S, 2 * S);
  }
  const bytes = (a: FeatureArray, from: number, length: number): Uint8Array => new Uint8Array(a.buffer, a.byteOffset + from, length);
  const into = [0, 1].map((slot) => ({ x: bytes(x, slot * S * d * b, S * d * b), y: bytes(y, slot * S * 8, S * 8), norms: bytes(t, slot * S * 8, S * 8) }));
  return { x, y, t, thresholds: { x, clipNorm, values: t }, into };
}

/** Slot rows [from, from + rows) as read, made ready for the kernels in place: thresholds from the squared norms (`clipThresholds`' numbers), labels in the loss's convention. */
function prepareSlot(slots: SegmentSlots, from: number, rows: number, clipNorm: number, signed: boolean): void {
  const { y, t } = slots;
  for (let i = from; i < from + rows; i++) t[i] = clipThreshold(clipNorm, Math.sqrt(t[i]));
  if (!signed) return;
  for (let i = from; i < from + rows; i++) {
    const v = y[i];
    if (v === 0 || v === -1) y[i] = -1;
    else if (v !== 1) throw dataValueError('labels', 'two classes coded 0/1 or -1/+1');
  }
}

/**
 * out += the chunk sums of a segment's rows (slot rows from .. from + rows - 1, at pass position
 * `row`), on this thread: pieces cut at the in-memory pass's chunk boundaries, each chunk summed
 * from zero into `part` and added to out once complete (in chunk order, as
 * `sumStoredClippedGradients` does). Returns the clipped count.
 */
function sumSegment(loss: GlmLoss, slots: SegmentSlots, from: number, rows: number, row: number, n: number, theta: Float64Array, part: Float64Array, scratch: ReturnType<typeof newClipScratch>, out: Float64Array): number {
  const { x, y, t } = slots;
  const d = part.length;
  let clipped = 0;
  for (let a = 0; a < rows;) {
    const chunkStart = Math.floor(row / CHUNK_ROWS) * CHUNK_ROWS;
    const chunkEnd = Math.min(n, chunkStart + CHUNK_ROWS);
    const b = Math.min(rows, a + (chunkEnd - row));
    if (row === chunkStart) part.fill(0);
    clipped += accumulateClippedRangeCached(loss, x, y, d, theta, t, from + a, from + b, scratch, part);
    row += b - a;
    a = b;
    if (row === chunkEnd) for (let j = 0; j < d; j++) out[j] += part[j];
  }
  return clipped;
}

/**
 * `streamedClippedSum` over stored rows (`RowSource.stored`): each segment read straight into a
 * slot of a feature memory (the next one read while the kernels work on this one), its labels put
 * in the loss's convention and its squared norms turned into clip thresholds in place (the
 * numbers `clipThresholds` computes, `glm/clip-thresholds.ts`), then summed by the kernels of the
 * in-memory pass (`accumulateClippedRangeCached`: the fused WebAssembly pass for the logistic
 * loss) in the in-memory chunks of CHUNK_ROWS rows, each summed from zero and added to `out` in
 * order. A segment (a power of two of at least 1024 rows) either divides a chunk or is made of
 * whole chunks, so every piece of a chunk starts at a multiple of 1024 rows from the chunk's
 * start: the kernels' blocks and four-row groups are those of the in-memory pass, and the sum is
 * its sum bit for bit (`per-example.ts`, `clippedSumRoundingBound`). Segments of whole chunks go
 * to the worker pool when a summer offers it (`GradientSummer.addChunkSums`: the same chunk sums,
 * added in the same order).
 */
/**
 * A run's labels (in the loss's convention) and clip thresholds for all n rows, kept after its
 * first pass computed them (the same numbers, copied): later passes read only x. Kept when they
 * take no more memory than the two segment slots (16 n <= 2 segmentBytes).
 */
interface RowSideCache {
  readonly y: Float64Array;
  readonly t: Float64Array;
  filled: boolean;
}

async function storedClippedSum(
  loss: GlmLoss, source: RowSource, stored: StoredRows, slots: SegmentSlots, theta: Float64Array, clipNorm: number, out: Float64Array, summer?: GradientSummer,
  cache?: RowSideCache,
): Promise<number> {
  const { n, d } = source;
  const S = stored.segmentRows;
  const signed = loss.labels === 'signed';
  const part = new Float64Array(d);
  const scratch = newClipScratch();
  // The pool reads shared memory only (a plain buffer where no feature memory could be made stays on this thread).
  const pooled = summer?.addChunkSums !== undefined && S % CHUNK_ROWS === 0 && slots.x.buffer instanceof SharedArrayBuffer ? summer.addChunkSums : undefined;
  const data = { x: slots.x, y: slots.y, n: 2 * S, d };
  out.fill(0);
  let clipped = 0;
  let row = 0;
  const cached = cache !== undefined && cache.filled;
  const read = (k: number): Promise<number> => stored.readSegment(k, cached ? { x: slots.into[k % 2].x } : slots.into[k % 2]);
  let next: Promise<number> | undefined = stored.segments > 0 ? read(0) : undefined;
  try {
    for (let k = 0; k < stored.segments; k++) {
      const rows = await (next as Promise<number>);
      const from = (k % 2) * S;
      // Read ahead: the next segment arrives while the kernels sum this one.
      next = k + 1 < stored.segments ? read(k + 1) : undefined;
      if (cached) {
        slots.y.set(cache.y.subarray(row, row + rows), from);
        slots.t.set(cache.t.subarray(row, row + rows), from);
      } else {
        prepareSlot(slots, from, rows, clipNorm, signed);
        if (cache !== undefined) {
          cache.y.set(slots.y.subarray(from, from + rows), row);
          cache.t.set(slots.t.subarray(from, from + rows), row);
        }
      }
      clipped += pooled !== undefined
        ? pooled(loss, data, theta, { clipNorm, thresholds: slots.thresholds, out }, from, from + rows)
        : sumSegment(loss, slots, from, rows, row, n, theta, part, scratch, out);
      row += rows;
    }
  } catch (error) {
    // A read still under way when the sum failed: its outcome no longer matters (the run stops with this error).
    next?.catch(() => undefined);
    throw error;
  }
  if (row !== n) throw new DataFormatError(source.source ?? 'the row source', `a pass over the rows saw a different number of rows than the opening pass's ${n} (the source changed between passes, or ended early); nothing was released`);
  if (cache !== undefined) cache.filled = true; // every row's labels and thresholds, from a complete pass
  return clipped;
}

/**
 * sum_i clip_C(grad l(theta; x_i, y_i)) over every row of the source, equal bit for bit to
 * `sumClippedGradients` on the same rows in memory (module comment). Returns the clipped count.
 * Stored rows' segments of whole chunks are summed by `summer.addChunkSums` when given (the pool).
 */
export async function streamedClippedSum(loss: GlmLoss, source: RowSource, theta: Float64Array, clipNorm: number, out: Float64Array, summer?: GradientSummer): Promise<number> {
  const stored = source.stored;
  if (stored !== undefined) return storedClippedSum(loss, source, stored, segmentSlots(stored, source.d, clipNorm), theta, clipNorm, out, summer);
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
  // The features as they are stored: float32 rows only from a source that stored them so (as `precision` rounds them in memory).
  const precision = options.precision ?? 'float64';
  const stored = source.stored;
  if (precision !== (stored?.precision ?? 'float64')) {
    throw new InvalidParameterError('precision', precision, stored === undefined ? '"float64" for rows read again on every pass (float32 needs rows stored as float32)' : `"${stored.precision}", the precision the rows were stored with`);
  }
  // Two segment slots for the run (one being summed, the next one being read).
  const slots = stored === undefined ? undefined : segmentSlots(stored, run.d, run.clipNorm);
  // The labels and thresholds of every row kept after the first step when they fit beside the slots.
  const cache: RowSideCache | undefined = stored !== undefined && 16 * run.n <= 2 * stored.segmentBytes ? { y: new Float64Array(run.n), t: new Float64Array(run.n), filled: false } : undefined;
  const theta = new Float64Array(run.d);
  const gradient = new Float64Array(run.d);
  let clippedFraction = 0;
  for (let t = 0; t < run.steps; t++) {
    const clippedCount = stored === undefined || slots === undefined
      ? await streamedClippedSum(run.loss, source, theta, run.clipNorm, gradient)
      : await storedClippedSum(run.loss, source, stored, slots, theta, run.clipNorm, gradient, options.gradientSummer, cache);
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
  if (source.stored !== undefined) {
    // Stored rows: read at their positions (the batch is drawn by dpfit's generator, never by the source).
    const raw = new Float64Array(b);
    await source.stored.readRows(batch, x, raw);
    lossLabels(loss, raw, b, y, 0);
    return { x, y, n: b, d };
  }
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
  if (source.stored !== undefined && source.stored.precision !== 'float64') {
    throw new InvalidParameterError('source.stored.precision', source.stored.precision, '"float64": DP-SGD trains on float64 rows, as in memory (open the data without precision: "float32")');
  }
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
