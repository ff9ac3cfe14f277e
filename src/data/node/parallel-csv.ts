/**
 * A large CSV file parsed and encoded on several threads (`loadDataset` with a store in shared
 * memory, e.g. `train --method dpgd`'s): the data after the header are cut into byte ranges at
 * line feeds, each range is parsed by its own `CsvParser` (resumed after the header) and encoded
 * by the schema straight into the store, at a row offset no earlier range can reach: the line
 * feeds before it (each record ends with one), counted while the workers start. Then the ranges' rows are moved together where
 * blank lines, comment lines or dropped records left gaps. The rows, diagnostics and errors are
 * those of one parser over the whole file:
 *
 * - every encoded row depends on its raw row and the schema alone, and the ranges keep file order;
 * - each range's parser counts lines from its first byte, and the lines before it are the line
 *   feeds before it (no carriage return and no quote before the last range: a file with either
 *   there is read by one thread, since a quoted field may hold a line break and a CR may end a
 *   line), so an error names the file's line; the last range is never counted (it starts at a
 *   record's start, and no row and no line comes after it): its room is an estimate, and a last
 *   range with more records than that sends the file to one thread;
 * - the error reported is the first range's (in file order) that failed, as one parser stops at
 *   the first bad record; a column guessed numeric that holds text in a range makes the caller read
 *   the whole file again with it as text, as the one-thread reader does.
 *
 * Node only. Worker threads: `parallel-csv-worker.ts`.
 */
import type { Worker } from 'node:worker_threads';
import { DataFormatError } from '../../errors.js';
import { startModuleWorker } from '../../worker-threads.js';
import { CsvParser, CsvTypeGuessError, TYPE_SAMPLE_BYTES, type CsvColumnType, type CsvOptions } from '../csv.js';
import type { FeatureStoreFactory } from '../feature-store.js';
import { addEncodedRows, schemaEncoder, type EncodedRows } from '../schema/encoder.js';
import type { Schema } from '../schema/types.js';
import { readPrefix, streamFile } from './csv-stream.js';
import type { ParallelCsvReader, ParallelOutcome } from './read.js';
import { openError, openForReading } from './files.js';

/** Bytes scanned per read when counting a range. */
const COUNT_BYTES = 16 * 2 ** 20;

/** What a range holds, counted before it is parsed. */
export interface RangeCount {
  readonly lineFeeds: number;
  readonly quotes: boolean;
  readonly carriageReturns: boolean;
  /** The range's last byte (-1 when empty). */
  readonly lastByte: number;
}

/** Counts the line feeds of bytes [start, end) and whether a quote or a carriage return occurs there. */
export async function countCsvRange(path: string, start: number, end: number): Promise<RangeCount> {
  const handle = await openForReading(path);
  try {
    const buffer = Buffer.allocUnsafe(Math.min(COUNT_BYTES, Math.max(1, end - start)));
    let lineFeeds = 0;
    let quotes = false;
    let carriageReturns = false;
    let lastByte = -1;
    for (let position = start; position < end;) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, end - position), position);
      if (bytesRead === 0) break;
      const bytes = buffer.subarray(0, bytesRead);
      for (let at = bytes.indexOf(10); at >= 0; at = bytes.indexOf(10, at + 1)) lineFeeds++;
      if (!quotes && bytes.indexOf(34) >= 0) quotes = true;
      if (!carriageReturns && bytes.indexOf(13) >= 0) carriageReturns = true;
      lastByte = bytes[bytesRead - 1];
      position += bytesRead;
    }
    return { lineFeeds, quotes, carriageReturns, lastByte };
  } catch (error) {
    throw openError(path, error);
  } finally {
    await handle.close();
  }
}

/**
 * One range to parse and encode into rows rowOffset .. rowOffset + bound - 1 of x and y (shared
 * memory). `bound` is exact (its line feeds, counted) except for the last range, never counted:
 * there it is the room reserved, and a range with more records sends the file to one thread.
 */
export interface CsvRangeJob {
  readonly path: string;
  readonly start: number;
  readonly end: number;
  readonly chunkBytes: number;
  readonly options: CsvOptions;
  readonly types: CsvColumnType[] | undefined;
  readonly guessed: boolean[] | undefined;
  readonly names: readonly string[];
  readonly schema: Schema;
  readonly ignoreLabel: boolean;
  readonly x: Float64Array;
  readonly y: Float64Array;
  readonly rowOffset: number;
  /** The most records the range can hold (its line feeds), or may write (the last range). */
  readonly bound: number;
  /** The last range: \`bound\` is the room reserved, not a count. */
  readonly last: boolean;
}

/** Why a range stopped: a data error (the line counted from the range's first byte), a type guess to revise, or anything else. */
export type RangeFailure =
  | { readonly kind: 'data'; readonly source: string; readonly line: number | undefined; readonly column: string | undefined; readonly message: string }
  | { readonly kind: 'guess'; readonly column: number }
  | { readonly kind: 'room' }
  | { readonly kind: 'other'; readonly message: string };

export interface CsvRangeResult {
  readonly rowsRead: number;
  readonly encoded: EncodedRows | undefined;
  readonly failure?: RangeFailure;
}

/** The last range holds more records than the room reserved for it: one thread reads the file. */
class OutOfRoom extends Error {}

function failureOf(error: unknown): RangeFailure {
  if (error instanceof OutOfRoom) return { kind: 'room' };
  if (error instanceof CsvTypeGuessError) return { kind: 'guess', column: error.column };
  if (error instanceof DataFormatError) {
    const where = [error.source, error.line !== undefined ? `line ${error.line}` : '', error.column !== undefined ? `column '${error.column}'` : ''].filter((s) => s !== '').join(', ');
    return { kind: 'data', source: error.source, line: error.line, column: error.column, message: error.message.slice(where.length + 2) };
  }
  return { kind: 'other', message: error instanceof Error ? error.message : String(error) };
}

/** Parses and encodes one range (a job of the main thread or of a worker); failures are returned, not thrown. */
export async function encodeCsvRange(job: CsvRangeJob): Promise<CsvRangeResult> {
  const encoder = schemaEncoder(job.schema, job.ignoreLabel);
  let rowsRead = 0;
  let kept = 0;
  let total: EncodedRows | undefined;
  try {
    const parser = new CsvParser(job.options, job.types, job.guessed);
    parser.resumeAfterHeader(job.names);
    const encodeChunk = (): void => {
      const table = parser.drain(true);
      if (table === undefined) return;
      // Never past the range's rows: they would overwrite the next range's (or, for the last range,
      // fall outside x, where a typed array drops writes silently).
      if (rowsRead + table.rowCount > job.bound) {
        if (job.last) throw new OutOfRoom();
        throw new Error(`internal error: a range of ${job.bound} lines held more records`);
      }
      const part = encoder.encode(table, job.x, job.y, job.rowOffset + kept, false);
      kept += part.kept;
      rowsRead += table.rowCount;
      total = addEncodedRows(total, part);
    };
    await streamFile(job.path, parser, job.chunkBytes, encodeChunk, { start: job.start, end: job.end });
  } catch (error) {
    return { rowsRead, encoded: total, failure: failureOf(error) };
  }
  return { rowsRead, encoded: total };
}

/** A worker that counts a range, then encodes it; each answer a promise (undefined: the worker failed). */
interface RangeWorker {
  count(path: string, start: number, end: number): Promise<RangeCount | undefined>;
  encode(job: CsvRangeJob): Promise<CsvRangeResult | undefined>;
  stop(): Promise<void>;
}

function startRangeWorker(): RangeWorker {
  const worker: Worker = startModuleWorker(new URL('./parallel-csv-worker', import.meta.url));
  worker.unref();
  let failed = false;
  const pending: ((value: unknown) => void)[] = [];
  const fail = (): void => {
    failed = true;
    for (const resolve of pending.splice(0)) resolve(undefined);
  };
  worker.on('message', (message: unknown) => pending.shift()?.(message));
  worker.on('error', fail);
  worker.on('exit', fail);
  const ask = <T>(message: unknown): Promise<T | undefined> => {
    if (failed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      pending.push(resolve as (value: unknown) => void);
      worker.postMessage(message);
    });
  };
  return {
    count: (path, start, end) => ask<RangeCount>({ kind: 'count', path, start, end }),
    encode: (job) => ask<CsvRangeResult>({ kind: 'encode', job }),
    stop: async () => {
      worker.off('exit', fail);
      await worker.terminate();
    },
  };
}

/**
 * The file parsed and encoded on `threads` threads (this one and threads - 1 workers) into the
 * store of `factory`, when it is large enough, has no quote and no carriage return before its
 * last range, the last range holds no more records than the room estimated for it, and the store
 * offers room in shared memory; otherwise (or when a range meets a column to revise) the caller
 * reads it with one thread. Data errors are thrown as one parser would throw them.
 */
export const encodeCsvParallel: ParallelCsvReader = async (
  path: string, size: number, schema: Schema, options: CsvOptions, types: CsvColumnType[] | undefined, guessed: boolean[] | undefined,
  ignoreLabel: boolean, factory: FeatureStoreFactory, chunkBytes: number, threads: number, minBytes: number,
): Promise<ParallelOutcome> => {
  if (threads < 2 || size < minBytes || options.header === false) return { kind: 'sequential' };
  // The header as one parser reads it; any trouble there is the one-thread reader's to report.
  const prefix = await readPrefix(path, TYPE_SAMPLE_BYTES);
  let dataStart: number;
  let names: readonly string[];
  let firstLine: number;
  try {
    const header = new CsvParser(options, types, guessed);
    dataStart = header.consumeColumns(prefix, 0, prefix.length, prefix.length === size);
    if (header.columnNames === undefined || dataStart >= prefix.length) return { kind: 'sequential' };
    names = header.columnNames;
    firstLine = header.lineNumber;
  } catch {
    return { kind: 'sequential' };
  }
  // Ranges of about equal bytes, each starting after a line feed.
  const ranges = Math.min(threads, Math.floor((size - dataStart) / (minBytes / 2)) || 1);
  if (ranges < 2) return { kind: 'sequential' };
  const starts = [dataStart];
  for (let k = 1; k < ranges; k++) {
    const target = dataStart + Math.floor((k * (size - dataStart)) / ranges);
    const handle = await openForReading(path);
    try {
      const window = Buffer.alloc(2 ** 20);
      const { bytesRead } = await handle.read(window, 0, window.length, target);
      const at = window.subarray(0, bytesRead).indexOf(10);
      if (at < 0) return { kind: 'sequential' };
      const start = target + at + 1;
      if (start <= starts[starts.length - 1] || start >= size) return { kind: 'sequential' };
      starts.push(start);
    } finally {
      await handle.close();
    }
  }
  const ends = [...starts.slice(1), size];
  const workers = starts.slice(1).map(() => startRangeWorker());
  try {
    // The ranges before the last are counted (their line feeds place the next range's rows and
    // number its lines), this thread's while the workers start; the last range is not: nothing
    // comes after it, so it needs neither its count nor the check below (its bytes are parsed
    // from a record's start, quotes and carriage returns included, as one parser parses them).
    const counts = await Promise.all(starts.slice(0, -1).map((start, k) => (k === 0 ? countCsvRange(path, start, ends[k]) : workers[k - 1].count(path, start, ends[k]))));
    if (counts.some((c) => c === undefined || c.quotes || c.carriageReturns)) return { kind: 'sequential' };
    const counted = counts as RangeCount[];
    const bounds = counted.map((c) => c.lineFeeds);
    const offsets: number[] = [];
    let total = 0;
    for (const bound of bounds) {
      offsets.push(total);
      total += bound;
    }
    // Room for the last range's records: at the counted ranges' bytes per line, with a margin
    // (more records send the file to one thread), and never more than it can hold (a record
    // takes at least one byte per column: its delimiters and its line end).
    const lastBytes = size - starts[ranges - 1];
    const countedBytes = starts[ranges - 1] - dataStart;
    const expected = Math.ceil((lastBytes * Math.max(1, total)) / Math.max(1, countedBytes));
    const lastRoom = Math.min(Math.floor((lastBytes + 1) / names.length) + 1, Math.ceil(expected * 1.25) + 1024);
    offsets.push(total);
    bounds.push(lastRoom);
    const encoder = schemaEncoder(schema, ignoreLabel);
    const d = encoder.d;
    const store = factory(d, total + expected);
    if (store.reserve === undefined || store.commit === undefined) return { kind: 'sequential', store };
    const room = store.reserve(total + lastRoom);
    if (!(room.x.buffer instanceof SharedArrayBuffer) || !(room.y.buffer instanceof SharedArrayBuffer)) {
      store.reset();
      return { kind: 'sequential', store };
    }
    const jobs: CsvRangeJob[] = starts.map((start, k) => ({
      path, start, end: ends[k], chunkBytes, options, types, guessed, names, schema, ignoreLabel, x: room.x, y: room.y, rowOffset: offsets[k], bound: bounds[k], last: k === ranges - 1,
    }));
    const results = await Promise.all(jobs.map((job, k) => (k === 0 ? encodeCsvRange(job) : workers[k - 1].encode(job))));
    // The first range that failed, in file order, is what one parser would have stopped at.
    let lineBase = firstLine - 1;
    for (let k = 0; k < ranges; k++) {
      const result = results[k];
      if (result === undefined) {
        store.reset();
        return { kind: 'sequential', store };
      }
      const failure = result.failure;
      if (failure !== undefined) {
        store.reset();
        if (failure.kind === 'guess') return { kind: 'sequential', store, revise: failure.column };
        if (failure.kind === 'room') return { kind: 'sequential', store };
        if (failure.kind === 'data') throw new DataFormatError(failure.source, failure.message, failure.line === undefined ? undefined : lineBase + failure.line, failure.column);
        throw new Error(failure.message);
      }
      if (k < ranges - 1) lineBase += counted[k].lineFeeds;
    }
    // The ranges' rows moved together (gaps: blank or comment lines, dropped records).
    let rowsRead = 0;
    let kept = 0;
    let encoded: EncodedRows | undefined;
    for (let k = 0; k < ranges; k++) {
      const result = results[k] as CsvRangeResult;
      if (result.encoded === undefined) continue;
      const rows = result.encoded.kept;
      if (offsets[k] !== kept && rows > 0) {
        room.x.copyWithin(kept * d, offsets[k] * d, (offsets[k] + rows) * d);
        room.y.copyWithin(kept, offsets[k], offsets[k] + rows);
      }
      kept += rows;
      rowsRead += result.rowsRead;
      encoded = addEncodedRows(encoded, result.encoded);
    }
    if (encoded === undefined) {
      store.reset();
      return { kind: 'sequential', store }; // no data rows: the one-thread reader says so
    }
    store.commit(kept);
    return { kind: 'done', store, rowsRead, encoded };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
};
