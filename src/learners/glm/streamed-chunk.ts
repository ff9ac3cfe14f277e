/**
 * The clipped-gradient sum of one chunk of stored rows read from a file block by block
 * (out-of-core DP-GD, `gradient/streamed.ts`; the worker pool's streamed jobs run the same
 * function on their chunks). Each block of B rows (B d b bytes, ~1 MiB at most) is read into the
 * thread's own ring of the run's feature memory and summed at once by the in-memory kernels
 * (`accumulateClippedRangeCached`) while its bytes are still in the CPU's caches: the step costs one
 * copy from the page cache plus the kernels' work on cached rows, instead of a copy into memory far
 * larger than the caches and the kernels reading it back from DRAM.
 *
 * The same sum as in memory, bit for bit. A chunk (CHUNK_ROWS rows from a multiple of CHUNK_ROWS)
 * is cut into blocks at multiples of B rows from its start, B a power of two in [1024, CHUNK_ROWS]:
 * every piece starts at a multiple of 1024 rows from the chunk's start, so the kernels' blocks of
 * WASM_BLOCK rows, their four-row groups and the fused pass's 8- or 16-row blocks are those of the
 * in-memory pass, and each piece adds its groups to the chunk's partial sum in order, as one call
 * over the chunk would (`per-example.ts`, `clippedSumRoundingBound`: the same operations in the
 * same order, so the same public bound). The labels and thresholds are the numbers of the in-memory
 * pass: labels in the loss's convention, thresholds `clipThreshold(C, sqrt(s))` of the stored
 * squared norms s (`clip-thresholds.ts`).
 *
 * Browser-safe: the reads come through `BlockReader`.
 */
import { dataValueError } from '../../errors.js';
import type { StoredPart, StoredRowsFile } from '../../data/row-source.js';
import { clipThreshold } from './clipped-gradient.js';
import { allocateFeatures, featureMemoryOf } from './kernels/feature-memory.js';
import { accumulateClippedRangeCached, CHUNK_ROWS, type ClipScratch } from './per-example.js';
import type { FeatureArray, GlmLoss } from './types.js';

/** Reads rows row .. row + rows - 1 (inside one segment) of `part` into into[0 ..] (`StoredRows.readSync`). */
export type BlockReader = (part: StoredPart, row: number, rows: number, into: Uint8Array) => void;

/** The most bytes of features a block takes (the rows then stay in L2/L3 between the read and the sum). */
export const BLOCK_BYTES = 2 ** 20;

/**
 * Rows per block for rows of d values in `precision` stored in segments of `segmentRows`: the
 * largest power of two in [1024, min(CHUNK_ROWS, segmentRows)] whose features take at most
 * BLOCK_BYTES (1024 when none does). A block never crosses a segment or a chunk.
 */
export function streamedBlockRows(d: number, precision: 'float64' | 'float32', segmentRows: number): number {
  const rowBytes = d * (precision === 'float64' ? 8 : 4);
  let rows = 1024;
  while (2 * rows <= Math.min(CHUNK_ROWS, segmentRows) && 2 * rows * rowBytes <= BLOCK_BYTES) rows *= 2;
  return rows;
}

/**
 * A run's memory for streamed sums: `rings` rings of B rows of features (ring r: rows rB .. rB +
 * B - 1 of x, a feature memory where there is one), their labels and thresholds (`ringY`, `ringT`,
 * indexed by x's rows: in the memory's side region, read in place by the fused kernel), and, when
 * `cache`, every row's label and threshold kept after the first pass (in the same memory, after the
 * rings: later passes read only x).
 */
export interface StreamedArea {
  readonly x: FeatureArray;
  readonly d: number;
  readonly blockRows: number;
  readonly rings: number;
  readonly ringY: Float64Array;
  readonly ringT: Float64Array;
  /** Byte offsets in x.buffer of the n cached labels and the n cached thresholds; absent without a cache. */
  readonly cacheY?: number;
  readonly cacheT?: number;
}

/** The area for n rows of d values (`streamedBlockRows` rows a block, one ring per thread), with the cache of 16 n bytes when `cache`. */
export function streamedArea(n: number, d: number, precision: 'float64' | 'float32', segmentRows: number, rings: number, cache: boolean): StreamedArea {
  const B = streamedBlockRows(d, precision, segmentRows);
  const rowBytes = d * (precision === 'float64' ? 8 : 4);
  const ringRows = rings * B;
  // The cache starts 8 ringRows bytes past the rings, so that the per-block views of it
  // (`cacheView`: shifted back by the ring's first row) never start before the buffer.
  const cacheRows = cache ? Math.ceil((8 * ringRows + 16 * n) / rowBytes) : 0;
  const x = allocateFeatures(ringRows + cacheRows, d, precision);
  const rows = ringRows + cacheRows;
  const info = featureMemoryOf(x, d);
  const side = info !== undefined && info.sideOffset >= 0;
  const ringY = side ? new Float64Array(x.buffer, info.sideOffset, rows) : new Float64Array(ringRows);
  const ringT = side ? new Float64Array(x.buffer, info.sideOffset + 8 * rows, rows) : new Float64Array(ringRows);
  if (!cache) return { x, d, blockRows: B, rings, ringY, ringT };
  const cacheY = x.byteOffset + ringRows * rowBytes + 8 * ringRows;
  return { x, d, blockRows: B, rings, ringY, ringT, cacheY, cacheT: cacheY + 8 * n };
}

/** A view v of the cached values at byte `offset` such that v[first + k] is pass row `row + k`'s (k < m). */
function cacheView(area: StreamedArea, offset: number, row: number, first: number, m: number): Float64Array {
  return new Float64Array(area.x.buffer, offset + 8 * (row - first), first + m);
}

/**
 * part += the clipped gradients of pass rows start .. end - 1 (within one chunk, end <= n), read
 * block by block into ring `ring` of the area and summed at once. Without `cached` the labels and
 * squared norms are read too and turned into the in-memory pass's labels and thresholds (into the
 * cache when the area has one, else beside the ring). Returns the clipped count.
 */
export function sumStreamedRange(
  loss: GlmLoss, read: BlockReader, area: StreamedArea, ring: number, theta: Float64Array, clipNorm: number, cached: boolean,
  start: number, end: number, scratch: ClipScratch, part: Float64Array,
): number {
  const { x, d, blockRows: B, ringY, ringT } = area;
  const first = ring * B;
  const rowBytes = x.BYTES_PER_ELEMENT * d;
  const into = new Uint8Array(x.buffer, x.byteOffset + first * rowBytes, B * rowBytes);
  const signed = loss.labels === 'signed';
  let clipped = 0;
  for (let row = start; row < end; row += B) {
    const m = Math.min(B, end - row);
    read('x', row, m, into);
    let y: Float64Array;
    let t: Float64Array;
    if (area.cacheY !== undefined && area.cacheT !== undefined) {
      y = cacheView(area, area.cacheY, row, first, m);
      t = cacheView(area, area.cacheT, row, first, m);
    } else {
      y = ringY;
      t = ringT;
    }
    if (!cached || area.cacheY === undefined) {
      read('y', row, m, new Uint8Array(y.buffer, y.byteOffset + 8 * first, 8 * m));
      read('norms', row, m, new Uint8Array(t.buffer, t.byteOffset + 8 * first, 8 * m));
      for (let i = first; i < first + m; i++) t[i] = clipThreshold(clipNorm, Math.sqrt(t[i]));
      if (signed) {
        for (let i = first; i < first + m; i++) {
          const v = y[i];
          if (v === 0 || v === -1) y[i] = -1;
          else if (v !== 1) throw dataValueError('labels', 'two classes coded 0/1 or -1/+1');
        }
      }
    }
    clipped += accumulateClippedRangeCached(loss, x, y, d, theta, t, clipNorm, first, first + m, scratch, part);
  }
  return clipped;
}

/** One pass of a streamed sum: the rows (n of them, `read` on this thread, `file` for the pool's threads), the run's area, and whether its cache holds every row's label and threshold. */
export interface StreamedPass {
  readonly n: number;
  readonly read: BlockReader;
  readonly file: StoredRowsFile;
  readonly area: StreamedArea;
  readonly cached: boolean;
}

/**
 * out += the chunk sums of a whole pass on this thread (ring 0): each chunk of CHUNK_ROWS rows
 * summed from zero, the chunk sums added to out in chunk order, as `sumClippedGradients` does.
 * Returns the clipped count.
 */
export function sumStreamedPass(loss: GlmLoss, pass: StreamedPass, theta: Float64Array, clipNorm: number, out: Float64Array, scratch: ClipScratch): number {
  const part = new Float64Array(out.length);
  let clipped = 0;
  for (let start = 0; start < pass.n; start += CHUNK_ROWS) {
    part.fill(0);
    clipped += sumStreamedRange(loss, pass.read, pass.area, 0, theta, clipNorm, pass.cached, start, Math.min(pass.n, start + CHUNK_ROWS), scratch, part);
    for (let j = 0; j < out.length; j++) out[j] += part[j];
  }
  return clipped;
}
