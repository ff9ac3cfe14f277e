/**
 * Node-only file readers: CSV (the built-in parser of `../csv.ts`, fed in chunks so that files
 * larger than memory-friendly buffers stream; or DuckDB), Parquet (DuckDB), LIBSVM; schema files;
 * and `loadDataset`, which reads a file and applies a public schema.
 *
 * Every failure to read is a `DataFormatError` naming the file (missing file, directory, empty
 * file, malformed content), which the CLI turns into exit status 3.
 */
import { open, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { CHUNK_BYTES, readPrefix, streamFile } from './csv-stream.js';
import { extname } from 'node:path';
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import { CSV_OPTIONS, CsvParser, CsvTypeGuessError, TYPE_SAMPLE_BYTES, guessColumnTypes, type CsvColumnType, type CsvOptions } from '../csv.js';
import type { DuckDbOptions } from './duckdb.js';
import type { Dataset } from '../dataset.js';
import { parseLibsvm, type LibsvmOptions } from '../libsvm.js';
import { contiguousFeatureStore, type FeatureStore, type FeatureStoreFactory } from '../feature-store.js';
import { withZeroRows } from '../dropped-rows.js';
import { applySchema, preparedData, type PreparedData } from '../schema/apply.js';
import { addEncodedRows, schemaEncoder, type EncodedRows, type SchemaEncoder } from '../schema/encoder.js';
import { parseSchema } from '../schema/parse.js';
import { schemaCsvOptions, type SchemaReadOptions } from '../schema/read-options.js';
import type { Schema } from '../schema/types.js';
import type { RawTable } from '../table.js';
import { openError, requireFile } from './files.js';
import { optionNames, pickOptions, rejectUnknownOptions } from '../../validate.js';

export type DataFormat = 'csv' | 'parquet' | 'libsvm';
export type CsvEngine = 'builtin' | 'duckdb';

const READ_CSV_FILE_OPTIONS = optionNames<NonNullable<Parameters<typeof readCsvFile>[1]>>({ ...CSV_OPTIONS, chunkBytes: true });

/**
 * Reads a CSV file with the built-in parser, streamed in 16 MiB chunks (`chunkBytes` in tests).
 * Undeclared column types are guessed from the first MiB and confirmed while parsing; a column
 * guessed numeric that turns out to hold text makes the reader start again with it as text.
 *
 * @example
 * const table = await readCsvFile('data.csv', { columnTypes: 'numeric' });
 */
export async function readCsvFile(path: string, options: CsvOptions & { chunkBytes?: number } = {}): Promise<RawTable> {
  rejectUnknownOptions(options, READ_CSV_FILE_OPTIONS, 'readCsvFile');
  const size = await requireFile(path);
  const { chunkBytes = CHUNK_BYTES, ...rest } = options;
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 2) throw new InvalidParameterError('chunkBytes', chunkBytes, 'an integer >= 2');
  const opts = { sizeHint: size, ...rest, source: rest.source ?? path };
  const whole = size <= TYPE_SAMPLE_BYTES;
  const guess = opts.columnTypes === 'numeric' ? undefined : guessColumnTypes(await readPrefix(path, TYPE_SAMPLE_BYTES), opts, whole);
  const types = guess?.types;
  const guessed = guess?.guessed;
  for (;;) {
    const parser = new CsvParser(opts, types, guessed);
    try {
      await streamFile(path, parser, chunkBytes);
    } catch (error) {
      if (error instanceof CsvTypeGuessError && types !== undefined && guessed !== undefined) {
        types[error.column] = 'categorical';
        guessed[error.column] = false;
        continue;
      }
      throw error;
    }
    if (!parser.needsInference() || parser.rowCount === 0) return parser.finish();
    // No complete header in the first MiB: infer from a whole pass, then read again.
    const second = new CsvParser(opts, parser.inferredTypes());
    await streamFile(path, second, chunkBytes);
    return second.finish();
  }
}

const READ_LIBSVM_FILE_OPTIONS = optionNames<LibsvmOptions>({ source: true, numFeatures: true, positiveLabel: true });

/** Reads a LIBSVM/SVMlight file into a dense dataset (see `../libsvm.ts`). */
export async function readLibsvmFile(path: string, options: LibsvmOptions = {}): Promise<Dataset> {
  rejectUnknownOptions(options, READ_LIBSVM_FILE_OPTIONS, 'readLibsvmFile');
  await requireFile(path);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw openError(path, error);
  }
  return parseLibsvm(bytes, { ...options, source: options.source ?? path });
}

/**
 * The format of a file: from `format` if given, else its extension (.parquet/.pq; .libsvm/.svm/
 * .svmlight; .csv/.tsv/.txt/.data/.test and anything else: csv), and Parquet's magic bytes "PAR1".
 */
export async function detectFormat(path: string, format?: string): Promise<DataFormat> {
  if (format !== undefined) {
    if (format !== 'csv' && format !== 'parquet' && format !== 'libsvm') throw new InvalidParameterError('format', format, '"csv", "parquet" or "libsvm"');
    return format;
  }
  const ext = extname(path).toLowerCase();
  if (ext === '.parquet' || ext === '.pq') return 'parquet';
  if (ext === '.libsvm' || ext === '.svm' || ext === '.svmlight') return 'libsvm';
  const size = await requireFile(path);
  if (size >= 4) {
    const handle = await open(path, 'r');
    try {
      const magic = Buffer.alloc(4);
      await handle.read(magic, 0, 4, 0);
      if (magic.toString('latin1') === 'PAR1') return 'parquet';
    } finally {
      await handle.close();
    }
  }
  return 'csv';
}

export interface ReadTableOptions extends CsvOptions {
  /** "csv", "parquet" (default: from the extension, see `detectFormat`). LIBSVM files are read by `readLibsvmFile`. */
  format?: DataFormat;
  /** CSV engine: "builtin" (default; exact line numbers in errors) or "duckdb" (for very large files). */
  engine?: CsvEngine;
  /**
   * DuckDB threads (default: DuckDB's choice; use 1 where results are compared exactly); for
   * `loadDataset` with the built-in reader and a `parallel` reader, the threads that parse a large
   * file (default 2, or 1 when \`os.availableParallelism()\` is 1; the same rows whatever the count).
   */
  threads?: number;
}

/** readTable's own options and the readers' it forwards to: CSV options (all readers) and DuckDB's threads. */
const READ_TABLE_OPTIONS = optionNames<ReadTableOptions>({ ...CSV_OPTIONS, format: true, engine: true, threads: true });
const CSV_AND_DUCKDB_OPTIONS = optionNames<CsvOptions & DuckDbOptions>({ ...CSV_OPTIONS, threads: true });

/** Reads a CSV or Parquet file into a `RawTable`. */
export async function readTable(path: string, options: ReadTableOptions = {}): Promise<RawTable> {
  rejectUnknownOptions(options, READ_TABLE_OPTIONS, 'readTable');
  const format = await detectFormat(path, options.format);
  if (format === 'libsvm') throw new InvalidParameterError('format', format, '"csv" or "parquet" for a table (use readLibsvmFile for LIBSVM)');
  await requireFile(path);
  if (format === 'parquet') {
    const { readParquetFile } = await import('./duckdb.js');
    return readParquetFile(path, pickOptions(options, CSV_AND_DUCKDB_OPTIONS));
  }
  if ((options.engine ?? 'builtin') === 'duckdb') {
    const { readCsvWithDuckDb } = await import('./duckdb.js');
    return readCsvWithDuckDb(path, pickOptions(options, CSV_AND_DUCKDB_OPTIONS));
  }
  if (options.engine !== undefined && options.engine !== 'builtin') throw new InvalidParameterError('engine', options.engine, '"builtin" or "duckdb"');
  // (DuckDB's threads mean nothing to the built-in reader.)
  return readCsvFile(path, pickOptions(options, CSV_OPTIONS));
}

/** Reads and validates a schema file (JSON). */
export async function readSchemaFile(path: string): Promise<Schema> {
  await requireFile(path);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw openError(path, error);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new DataFormatError(path, `is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  return parseSchema(json, path);
}

const LOAD_DATASET_OPTIONS = optionNames<Omit<ReadTableOptions, keyof CsvOptions> & SchemaReadOptions & LoadOptions>({ format: true, engine: true, threads: true, label: true, features: true, encodeChunkBytes: true, droppedRows: true, parallel: true, parallelMinBytes: true });

/**
 * Reads a CSV or Parquet file with the reader options the schema implies (column types, header,
 * delimiter, comment, missing tokens) and encodes it (`applySchema`).
 *
 * @example
 * const schema = await readSchemaFile('data/adult/adult.schema.json');
 * const { dataset, rowNormBound } = await loadDataset('data/adult/adult.data', schema);
 * const unlabelled = await loadDataset('new-rows.csv', schema, { label: 'ignore' }); // to predict: no label column needed
 */
export async function loadDataset(
  path: string, schema: Schema, options: Omit<ReadTableOptions, keyof CsvOptions> & SchemaReadOptions & LoadOptions = {},
): Promise<PreparedData> {
  rejectUnknownOptions(options, LOAD_DATASET_OPTIONS, 'loadDataset');
  const { label, features, encodeChunkBytes = ENCODE_CHUNK_BYTES, droppedRows = 'remove', parallel: _parallel, parallelMinBytes = PARALLEL_MIN_BYTES, ...readOptions } = options;
  if (droppedRows !== 'remove' && droppedRows !== 'zeroRows') throw new InvalidParameterError('droppedRows', droppedRows, "'remove' or 'zeroRows'");
  const csvOptions = { ...schemaCsvOptions(schema, path, { label }), ...readOptions };
  if ((readOptions.engine ?? 'builtin') === 'builtin' && (await detectFormat(path, readOptions.format)) === 'csv') {
    if (!Number.isSafeInteger(encodeChunkBytes) || encodeChunkBytes < 2) throw new InvalidParameterError('encodeChunkBytes', encodeChunkBytes, 'an integer >= 2');
    // Parsed and encoded chunk by chunk into the rows' final store: no raw table, no copy per transform.
    // With a parallel reader (as \`train\` gives), a large file on two threads when two CPUs are available (docs/performance.md).
    const threads = readOptions.threads ?? Math.min(2, availableParallelism());
    if (!Number.isSafeInteger(threads) || threads < 1) throw new InvalidParameterError('threads', threads, 'an integer >= 1');
    if (!Number.isSafeInteger(parallelMinBytes) || parallelMinBytes < 1) throw new InvalidParameterError('parallelMinBytes', parallelMinBytes, 'an integer >= 1');
    const parallel = options.parallel === undefined ? undefined : { reader: options.parallel, threads, minBytes: parallelMinBytes };
    const encoded = await loadCsvEncoded(path, schema, csvOptions, label, features ?? contiguousFeatureStore, encodeChunkBytes, droppedRows === 'zeroRows', parallel);
    if (encoded !== undefined) return encoded;
  }
  const table = await readTable(path, csvOptions);
  const prepared = applySchema(table, schema, { label });
  return droppedRows === 'zeroRows' ? withZeroRows(prepared) : prepared;
}

/** Appends `count` zero rows (x = 0, y = label) to a store, a block at a time (`data/dropped-rows.ts`). */
function appendZeroRows(store: FeatureStore, count: number, d: number, label: number): void {
  const block = Math.min(count, 4096);
  if (block === 0) return;
  const x = new Float64Array(block * d);
  const y = new Float64Array(block).fill(label);
  for (let done = 0; done < count; done += block) store.append(x, y, Math.min(block, count - done));
}

export interface LoadOptions {
  /**
   * CSV read by the built-in reader: where the rows are encoded into, chunk by chunk (default
   * `contiguousFeatureStore`: one growing array), so that neither the raw table nor a second copy
   * of the rows is ever held. Other formats and engines ignore it.
   */
  features?: FeatureStoreFactory;
  /** Bytes parsed per encoded chunk with `features` (default 1 MiB; small values in tests). */
  encodeChunkBytes?: number;
  /**
   * The parallel reader (`node/parallel-csv.ts` `encodeCsvParallel`, injected: it starts worker
   * threads): CSV files of at least `parallelMinBytes` bytes (default 64 MiB) are then parsed and
   * encoded on `threads` threads (default 2 when two CPUs are available) when the store is in shared memory
   * (`growingFeatures`): the same rows, diagnostics and errors as one thread. Files with a quote or
   * a carriage return are read by one thread. Absent (default): one thread.
   */
  parallel?: ParallelCsvReader;
  parallelMinBytes?: number;
  /**
   * Rows the schema drops for a missing value ("dropRow"): 'remove' (default: evaluation, public
   * data) or 'zeroRows', for PRIVATE training data: each dropped record becomes a zero row after
   * the kept rows, so that n is the number of records read and no released value depends on which
   * rows were dropped (`data/dropped-rows.ts`).
   */
  droppedRows?: 'remove' | 'zeroRows';
}

/** Bytes parsed before each chunk of rows is encoded into the store (about 5000 rows of 20 numbers: they stay in cache). */
export const ENCODE_CHUNK_BYTES = 1024 * 1024;

/** What the parallel reader did: finished, or the one-thread reader must read the file (with a revised type guess, or a store to reuse). */
export type ParallelOutcome =
  | { readonly kind: 'done'; readonly store: FeatureStore; readonly rowsRead: number; readonly encoded: EncodedRows }
  | { readonly kind: 'sequential'; readonly store?: FeatureStore; readonly revise?: number };

/**
 * A CSV reader on several threads, injected (`node/parallel-csv.ts` `encodeCsvParallel`, which
 * starts worker threads: `require('dpfit')` must not load it): encodes the file into the store of
 * `factory` as one parser would, or says that one thread must read it.
 */
export type ParallelCsvReader = (
  path: string, size: number, schema: Schema, options: CsvOptions, types: CsvColumnType[] | undefined, guessed: boolean[] | undefined,
  ignoreLabel: boolean, factory: FeatureStoreFactory, chunkBytes: number, threads: number, minBytes: number,
) => Promise<ParallelOutcome>;

/** The parallel reader and how it is used. */
export interface ParallelCsv {
  readonly reader: ParallelCsvReader;
  readonly threads: number;
  readonly minBytes: number;
}

/** Files smaller than this are read by one thread (default of `LoadOptions.parallelMinBytes`). */
export const PARALLEL_MIN_BYTES = 64 * 2 ** 20;

/** What a chunked encoding of a CSV file gives besides the rows (which went into the store). */
export interface EncodedCsv {
  /** The encoder (width, feature names, zero-row label). */
  readonly encoder: SchemaEncoder;
  /** Records read, rows kept, and what the encoding met. */
  readonly rowsRead: number;
  readonly encoded: EncodedRows;
}

/**
 * @internal The CSV file encoded chunk by chunk into the store of `factory(d)` (created when the
 * first chunk is parsed), with the built-in reader: the same rows, diagnostics and errors as
 * `applySchema` on the whole table (each encoded row depends on its raw row and the schema alone;
 * errors name the file's line from the chunk's rowLines). Each chunk is encoded straight into the
 * store's memory when it offers room (`FeatureStore.reserve`), else into one reused buffer that
 * is appended. Undefined when the reader needs a first pass to infer types (no complete header in
 * the first MiB): the caller then reads another way. Zero rows are not appended here.
 */
export async function encodeCsvFile(
  path: string, schema: Schema, csvOptions: CsvOptions, label: SchemaReadOptions['label'], factory: FeatureStoreFactory, chunkBytes: number,
  parallel?: ParallelCsv,
): Promise<{ store: FeatureStore; result: EncodedCsv } | undefined> {
  const size = await requireFile(path);
  // No size hint: the parser's arrays hold one chunk (reused), not the whole file.
  const opts = { ...pickOptions(csvOptions, CSV_OPTIONS), sizeHint: 0, source: csvOptions.source ?? path };
  const whole = size <= TYPE_SAMPLE_BYTES;
  const guess = opts.columnTypes === 'numeric' ? undefined : guessColumnTypes(await readPrefix(path, TYPE_SAMPLE_BYTES), opts, whole);
  if (guess === undefined && opts.columnTypes !== 'numeric') return undefined;
  const types = guess?.types;
  const guessed = guess?.guessed;
  const encoder = schemaEncoder(schema, label === 'ignore');
  const d = encoder.d;
  let store: FeatureStore | undefined;
  // A large file on several threads, straight into a store in shared memory (`parallel-csv.ts`: the same rows and errors).
  if (parallel !== undefined && parallel.threads > 1) {
    const outcome = await parallel.reader(path, size, schema, opts, types, guessed, label === 'ignore', factory, chunkBytes, parallel.threads, parallel.minBytes);
    if (outcome.kind === 'done') return { store: outcome.store, result: { encoder, rowsRead: outcome.rowsRead, encoded: outcome.encoded } };
    store = outcome.store;
    if (outcome.revise !== undefined && types !== undefined && guessed !== undefined) {
      types[outcome.revise] = 'categorical';
      guessed[outcome.revise] = false;
    }
  }
  for (;;) {
    const parser = new CsvParser(opts, types, guessed);
    let rowsRead = 0;
    let total: EncodedRows | undefined;
    // Rows encoded here when the store offers no room of its own (reused: no garbage per chunk).
    let scratchX = new Float64Array(0);
    let scratchY = new Float64Array(0);
    const encodeChunk = (): void => {
      const table = parser.drain(true); // encoded and dropped before parsing goes on
      if (table === undefined) return;
      // The file's rows estimated from the bytes per row of the first chunk (2% margin).
      store ??= factory(d, Math.ceil((size / Math.max(1, parser.dataByteCount)) * parser.parsedRowCount * 1.02) + 1024);
      const rows = table.rowCount;
      let part: EncodedRows;
      if (store.reserve !== undefined && store.commit !== undefined) {
        const room = store.reserve(rows);
        part = encoder.encode(table, room.x, room.y, 0, false);
        store.commit(part.kept);
      } else {
        if (scratchY.length < rows) {
          scratchX = new Float64Array(rows * d);
          scratchY = new Float64Array(rows);
        }
        part = encoder.encode(table, scratchX, scratchY, 0, false);
        store.append(scratchX, scratchY, part.kept);
      }
      rowsRead += rows;
      total = addEncodedRows(total, part);
    };
    try {
      await streamFile(path, parser, chunkBytes, encodeChunk);
    } catch (error) {
      if (error instanceof CsvTypeGuessError && types !== undefined && guessed !== undefined) {
        types[error.column] = 'categorical';
        guessed[error.column] = false;
        store?.reset();
        continue;
      }
      throw error;
    }
    if (parser.needsInference()) return undefined;
    if (total === undefined || store === undefined) {
      parser.finish(); // throws: no header or no data rows
      return undefined;
    }
    return { store, result: { encoder, rowsRead, encoded: total } };
  }
}

/**
 * `loadDataset` for a CSV file with the built-in reader, the rows encoded chunk by chunk into a
 * store (`encodeCsvFile`); undefined when the reader needs a whole first pass (the caller then
 * reads the whole table).
 */
async function loadCsvEncoded(
  path: string, schema: Schema, csvOptions: CsvOptions, label: SchemaReadOptions['label'], factory: FeatureStoreFactory, chunkBytes: number, zeroRows: boolean,
  parallel: ParallelCsv | undefined,
): Promise<PreparedData | undefined> {
  const done = await encodeCsvFile(path, schema, csvOptions, label, factory, chunkBytes, parallel);
  if (done === undefined) return undefined;
  const { store, result } = done;
  const { encoder, rowsRead, encoded } = result;
  if (zeroRows) appendZeroRows(store, rowsRead - encoded.kept, encoder.d, encoder.zeroRowLabel);
  return preparedData(schema, encoder, store.finish(), encoded, rowsRead);
}
