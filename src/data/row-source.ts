/**
 * Rows that are read, not held: the out-of-core learners (`trainDpGdStreamed`,
 * `trainDpSgdStreamed`) train on a `RowSource`, and the data layer makes one (`node/stream-rows.ts`,
 * a file read through DuckDB one pass at a time). Browser-safe: an interface only.
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
}
