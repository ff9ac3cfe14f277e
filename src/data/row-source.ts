/**
 * Rows that are read, not held: the out-of-core learners (`trainDpGdStreamed`,
 * `trainDpSgdStreamed`) train on a `RowSource`, and the data layer makes one (`node/stream-rows.ts`,
 * the file's rows encoded once into a temporary file, or read through DuckDB one pass at a time).
 * Browser-safe: an interface only.
 */

/**
 * Rows read one pass at a time, always in the same order. `scan` calls `onChunk` with consecutive
 * rows (row-major x, rows x d; labels as the schema encodes them: 0/1 for binary labels) and
 * stops early when it returns false. The arrays may be reused after the callback returns.
 */
export interface RowSource {
  readonly n: number;
  readonly d: number;
  readonly featureNames?: readonly string[];
  /** What the rows are read from (a file's path), named in errors. */
  readonly source?: string;
  /** The distinct label values of the rows (from the opening pass), for the same label checks as in memory. */
  readonly labelValues: readonly number[];
  scan(onChunk: (x: Float64Array, y: Float64Array, rows: number) => boolean | void | Promise<boolean | void>): Promise<void>;
  /**
   * The rows as numbers already encoded (a temporary file written once by the opening pass:
   * `node/encoded-file.ts`), for readers that take them in large segments, straight into their
   * own memory, and for random access. Absent when every pass reads the data file again.
   */
  readonly stored?: StoredRows;
}

/**
 * Encoded rows read by segment. Segment k holds rows kS .. min(n, (k + 1) S) - 1, S =
 * `segmentRows` (a power of two, at least 1024): x (S rows of d values, row-major, float64 or
 * float32 as `precision` says), y (S float64 labels as the schema encodes them) and S float64
 * squared norms of the stored rows (sum over j = 0 .. d-1 in order of x_j * x_j), together
 * `segmentBytes` bytes; a last segment's rows past n are zero rows.
 */
export interface StoredRows {
  readonly precision: 'float64' | 'float32';
  readonly segmentRows: number;
  readonly segmentBytes: number;
  readonly segments: number;
  /**
   * Reads segment k's x, and its y and squared norms when asked for, into the given bytes (at
   * least S d b, 8 S and 8 S of them) and resolves with its number of rows.
   */
  readSegment(k: number, into: { readonly x: Uint8Array; readonly y?: Uint8Array; readonly norms?: Uint8Array }): Promise<number>;
  /** The rows at the ascending distinct positions `indices`: x (widened to float64, indices.length * d) and y. */
  readRows(indices: ArrayLike<number>, x: Float64Array, y: Float64Array): Promise<void>;
  /**
   * Reads rows row .. row + rows - 1 (inside one segment, all below n) of x, y or the squared norms
   * (`part`) into the first bytes of `into`, synchronously: out-of-core DP-GD reads blocks that fit
   * in the caches and sums each at once, while its bytes are still there (`gradient/streamed.ts`).
   */
  readSync(part: StoredPart, row: number, rows: number, into: Uint8Array): void;
  /** The same reads from another thread of this process (`data/node/stored-read.ts`: the worker pool reads its own blocks). */
  readonly file: StoredRowsFile;
}

/** Which of a stored row's parts: its d values, its label, its squared norm. */
export type StoredPart = 'x' | 'y' | 'norms';

/** An open file of stored rows (the layout above), as another thread of the same process reads it. */
export interface StoredRowsFile {
  /** The open file's descriptor (valid in every thread of the process until the rows are closed). */
  readonly fd: number;
  readonly n: number;
  readonly d: number;
  readonly precision: 'float64' | 'float32';
  readonly segmentRows: number;
  readonly segmentBytes: number;
  /** The data file, named in errors. */
  readonly source: string;
}
