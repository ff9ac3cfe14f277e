/**
 * Out-of-core rows: a CSV or Parquet file encoded by the public schema chunk by chunk, never held
 * whole (`trainDpGdStreamed` and `trainDpSgdStreamed` train on it).
 *
 * Encoded once (the default). The opening pass reads the file once: a CSV file with dpfit's own
 * reader, each parsed chunk encoded as `loadDataset` encodes it (`read.ts` `encodeCsvFile`: the
 * same rows, diagnostics and errors), Parquet (or a CSV file whose header is not in its first MiB)
 * through DuckDB as below. The encoded rows, one per record (dropped records as zero rows after the
 * kept ones), go into a temporary binary file (`encoded-file.ts`: mode 0600, unnamed on disk, gone
 * with the process), which every later pass reads back in large segments, straight into the
 * learner's memory, instead of parsing the data file again: n is the records of that one pass,
 * and an edit of the data file afterwards changes nothing.
 *
 * Read again (`encodeOnce: false`). Each DuckDB result chunk (<= 2048 rows) becomes a small
 * `RawTable` and goes through `applySchema`. Every encoded row is a function of its raw row and
 * the schema alone (`../schema/apply.ts`), categorical cells are matched by their text (not by a
 * dictionary code), and the readers' numbers are the same doubles (`duckdb.ts`), so the streamed
 * rows are exactly the rows `loadDataset` returns, in the same order (DuckDB preserves insertion
 * order). Rows dropped by a "dropRow" policy are dropped per chunk, as in memory.
 *
 * Memory. DuckDB's own buffers are capped by `memory_limit` (a fraction of `maxMemory`) and it
 * runs one thread by default (each thread holds row groups in flight); dpfit holds one result
 * chunk and its encoding, or one CSV read buffer and one segment of the temporary file. DuckDB's
 * CSV reader holds buffers of `buffer_size` bytes (32 MB by default, two at once): under a small
 * `memory_limit` they are made smaller (`csvBufferBytes`), or DuckDB runs out of memory after the
 * first buffer.
 *
 * Every row, every pass. DuckDB's stream drops its errors (a stream that fails ends like one that
 * is finished, `duckdb.ts` `streamChunks`), so nothing here trusts the end of a stream: DuckDB
 * first counts the file's rows in a query that reports its errors, every pass must stream exactly
 * that many rows (an error naming the file otherwise, before anything is trained or released),
 * and every pass that reads to the end must encode as many rows as the opening pass. The opening
 * pass counts the encoded rows (n is public under both neighbouring relations, as in memory) and
 * gathers the owner's private diagnostics.
 */
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import type { CsvOptions } from '../csv.js';
import { addPrivateDiagnostics } from '../feature-store.js';
import type { FeatureStore } from '../feature-store.js';
import type { RowSource, StoredRows } from '../row-source.js';
import { applySchema, type PrivateDiagnostics } from '../schema/apply.js';
import { schemaEncoder, type EncodedRows } from '../schema/encoder.js';
import { schemaLabelBound, schemaRowNormBound } from '../schema/bounds.js';
import { schemaCsvOptions } from '../schema/read-options.js';
import type { RowTransform, Schema } from '../schema/types.js';
import type { RawColumn, RawTable } from '../table.js';
import {
  badValueText, copyDoubles, countRows, csvColumnNames, duckDbError, inferTextColumns, integers, kinds, NUMERIC_SOURCE, selectedColumns, selectSql, sqlString, streamChunks, type Selected,
} from './duckdb.js';
import { loadDuckDb } from './load-duckdb.js';
import { requireFile } from './files.js';
import { EncodedRowsFile, segmentRowsFor } from './encoded-file.js';
import { detectFormat, ENCODE_CHUNK_BYTES, encodeCsvFile } from './read.js';
import { optionNames, rejectUnknownOptions } from '../../validate.js';

export interface StreamOptions {
  /**
   * A cap on memory in bytes: DuckDB gets a quarter of it (at least 32 MiB) as its memory_limit,
   * and the segments of the encoded rows are sized to an eighth of it (default cap 256 MiB).
   */
  readonly maxMemory?: number;
  /** DuckDB threads (default 1: each thread holds row groups in flight). */
  readonly threads?: number;
  /** "csv" or "parquet" (default: from the file, as `detectFormat`). */
  readonly format?: 'csv' | 'parquet';
  /**
   * true (default): the opening pass encodes every record once into a temporary file
   * (`encoded-file.ts`), which every later pass reads back; a CSV file is read by dpfit's own
   * reader (the rows and errors of `loadDataset`), Parquet (and a CSV whose header the reader
   * cannot find in its first MiB) through DuckDB. false: every pass reads the data file again
   * through DuckDB (no temporary file).
   */
  readonly encodeOnce?: boolean;
  /** How the temporary file stores the features: "float64" (default) or "float32" (rounded to nearest, as `--precision float32` in memory). */
  readonly precision?: 'float64' | 'float32';
  /** Where the temporary file is created (default `os.tmpdir()`, i.e. $TMPDIR). */
  readonly temporaryDirectory?: string;
}

const STREAM_OPTIONS = optionNames<StreamOptions>({ maxMemory: true, threads: true, format: true, encodeOnce: true, precision: true, temporaryDirectory: true });

/** The cap assumed for sizing segments when none is given. */
const DEFAULT_STREAM_MEMORY = 256 * 2 ** 20;

/** A streamed dataset: the rows (a `RowSource`) and what `PreparedData` says about them besides the rows. */
export interface StreamedDataset {
  readonly rows: RowSource;
  readonly rowNormBound: number;
  readonly labelBound: number;
  readonly rowTransform: RowTransform;
  readonly intercept: number | null;
  readonly privateDiagnostics: PrivateDiagnostics;
  /** Closes DuckDB. */
  close(): void;
}

/** Parses "256MB", "1.5GiB", "1e9" (bytes) into bytes. */
export function parseMemorySize(flag: string, text: string): number {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?(?:e[0-9]+)?)\s*(b|kb|kib|mb|mib|gb|gib|tb|tib)?\s*$/i.exec(text);
  const units: Record<string, number> = { b: 1, kb: 1e3, kib: 2 ** 10, mb: 1e6, mib: 2 ** 20, gb: 1e9, gib: 2 ** 30, tb: 1e12, tib: 2 ** 40 };
  const bytes = m === null ? NaN : Number(m[1]) * units[(m[2] ?? 'b').toLowerCase()];
  if (!(bytes >= 64 * 2 ** 20 && Number.isFinite(bytes))) throw new InvalidParameterError(flag, text, 'a size of at least 64MiB, e.g. 256MB or 2GiB');
  return Math.floor(bytes);
}

/** DuckDB's `memory_limit` in bytes for a cap of `maxMemory` bytes: a quarter of it, at least 32 MiB (a whole number of MiB). */
export function duckDbMemoryLimit(maxMemory: number): number {
  return Math.max(32, Math.floor(maxMemory / 4 / 2 ** 20)) * 2 ** 20;
}

/**
 * The `buffer_size` of DuckDB's CSV reader under a `memory_limit` of `limit` bytes: an eighth of it
 * per thread, between 4 MiB (a CSV line longer than a buffer is an error) and DuckDB's default,
 * 32 MB. With the default, DuckDB ran out of memory after the first buffer under a limit below
 * about 64 MiB (`--max-memory` up to about 256MB), which its stream did not report.
 */
export function csvBufferBytes(limit: number, threads: number): number {
  return Math.min(32_000_000, Math.max(4 * 2 ** 20, Math.floor(limit / 8 / threads)));
}

/** An error about row r of a chunk, renumbered to the row of the file. */
function renumber(error: unknown, offset: number): unknown {
  if (!(error instanceof DataFormatError) || offset === 0) return error;
  const m = /^(.*?: )row (\d+): (.*)$/s.exec(error.message);
  if (m === null) return error;
  const message = `row ${Number(m[2]) + offset}: ${m[3]}`;
  return new DataFormatError(error.source, message, error.line, error.column);
}

/** One DuckDB result chunk as a small RawTable (categorical cells keep their text; codes are per chunk). */
function chunkTable(path: string, chunk: { rowCount: number; getColumnVector(j: number): { getItem(i: number): unknown } }, selected: readonly Selected[], missing: ReadonlySet<string>, offset: number): RawTable {
  const count = chunk.rowCount;
  const numericColumns = selected.map((s, j) => (s.kind === 'numeric' ? j : -1)).filter((j) => j >= 0);
  if (numericColumns.length > 0) {
    const bad = integers(chunk.getColumnVector(selected.length + numericColumns.length), count);
    for (let r = 0; r < count; r++) {
      if (bad[r] === 0) continue;
      const j = bad[r] - 1;
      throw new DataFormatError(path, `row ${offset + r + 1}: ${badValueText(selected[j])}`, undefined, selected[j].name);
    }
  }
  const columns: RawColumn[] = selected.map((s, j) => {
    const vector = chunk.getColumnVector(j);
    if (s.kind === 'numeric') {
      const values = new Float64Array(count);
      copyDoubles(vector, count, values, 0);
      return { kind: 'numeric', name: s.name, values };
    }
    const codes = new Int32Array(count);
    const levels: string[] = [];
    const index = new Map<string, number>();
    for (let r = 0; r < count; r++) {
      const text = vector.getItem(r) as string | null;
      if (text === null || missing.has(text)) {
        codes[r] = -1;
        continue;
      }
      let code = index.get(text);
      if (code === undefined) {
        code = levels.length;
        levels.push(text);
        index.set(text, code);
      }
      codes[r] = code;
    }
    return { kind: 'categorical', name: s.name, codes, levels };
  });
  return { source: path, rowCount: count, columns };
}

/**
 * Opens `path` (CSV or Parquet) for streamed training with the public `schema`: one opening pass
 * counts the records and checks every value (the same errors as `loadDataset`) and, by default,
 * encodes them once into a temporary file (`StreamOptions.encodeOnce`) that each `rows.scan`
 * reads back; with `encodeOnce: false` each scan is one more pass over the data file through
 * DuckDB. Close it when done (the temporary file goes with it).
 *
 * @example
 * const data = await openStreamedDataset('big.parquet', schema, { maxMemory: 256 * 2 ** 20 });
 * try { await trainDpGdStreamed(data.rows, { clipNorm: 1, steps: 10, learningRate: 1, epsilon: 1, delta: 1e-6 }); } finally { data.close(); }
 */
export async function openStreamedDataset(path: string, schema: Schema, options: StreamOptions = {}): Promise<StreamedDataset> {
  rejectUnknownOptions(options, STREAM_OPTIONS, 'openStreamedDataset');
  await requireFile(path);
  const format = await detectFormat(path, options.format);
  if (format === 'libsvm') throw new InvalidParameterError('format', format, '"csv" or "parquet" for streamed training');
  const threads = options.threads ?? 1;
  if (!Number.isSafeInteger(threads) || threads < 1) throw new InvalidParameterError('threads', threads, 'an integer >= 1');
  const precision = options.precision ?? 'float64';
  if (precision !== 'float64' && precision !== 'float32') throw new InvalidParameterError('precision', precision, '"float64" or "float32"');
  if ((options.encodeOnce ?? true) === false) {
    if (options.precision !== undefined) throw new InvalidParameterError('precision', options.precision, 'given only with encodeOnce (every pass reading the data file encodes float64 rows)');
    if (options.temporaryDirectory !== undefined) throw new InvalidParameterError('temporaryDirectory', options.temporaryDirectory, 'given only with encodeOnce (no temporary file otherwise)');
    return openRereadDataset(path, schema, format, threads, options.maxMemory);
  }
  const encoder = schemaEncoder(schema);
  const d = encoder.d;
  const segmentRows = segmentRowsFor(d * (precision === 'float64' ? 8 : 4), (options.maxMemory ?? DEFAULT_STREAM_MEMORY) / 8);
  const file = new EncodedRowsFile({ d, precision, segmentRows, source: path, ...(options.temporaryDirectory === undefined ? {} : { directory: options.temporaryDirectory }) });
  try {
    let opened: { rowsRead: number; kept: number; diagnostics: PrivateDiagnostics } | undefined;
    if (format === 'csv') {
      // dpfit's reader, each chunk encoded and appended: loadDataset's rows and errors, one pass.
      const store: FeatureStore = {
        append: (x, y, rows) => file.append(x, y, rows),
        reset: () => file.reset(),
        finish: () => {
          throw new Error('internal error: the temporary file is finished by openStreamedDataset');
        },
      };
      const done = await encodeCsvFile(path, schema, schemaCsvOptions(schema, path), undefined, () => store, ENCODE_CHUNK_BYTES);
      if (done !== undefined) {
        const { rowsRead, encoded } = done.result;
        opened = { rowsRead, kept: encoded.kept, diagnostics: privateDiagnosticsOf(encoded, rowsRead) };
      }
    }
    if (opened === undefined) {
      // Parquet, or a CSV file whose header the reader does not find in its first MiB: one DuckDB pass.
      file.reset();
      const passes = await openDuckDbPasses(path, schema, format, threads, options.maxMemory);
      try {
        let kept = 0;
        let diagnostics: PrivateDiagnostics | undefined;
        await passes.pass((x, y, rows, part) => {
          file.append(x, y, rows);
          kept += rows;
          diagnostics = addPrivateDiagnostics(diagnostics, part);
        });
        if (diagnostics === undefined) throw new DataFormatError(path, 'the file has no data rows');
        opened = { rowsRead: passes.fileRows, kept, diagnostics };
      } finally {
        passes.close();
      }
    }
    // Records dropped for a missing value are zero rows after the kept ones, as in memory
    // (data/dropped-rows.ts): n is the number of records, whatever was dropped.
    const dropped = opened.rowsRead - opened.kept;
    if (dropped > 0) {
      const block = Math.min(dropped, 4096);
      const zeroX = new Float64Array(block * d);
      const zeroY = new Float64Array(block).fill(encoder.zeroRowLabel);
      for (let done = 0; done < dropped; done += block) file.append(zeroX, zeroY, Math.min(block, dropped - done));
    }
    const n = file.rowCount;
    const labelValues = [...file.labelValues];
    const stored = file.finish();
    const rows: RowSource = {
      n,
      d,
      source: path,
      featureNames: encoder.featureNames,
      labelValues,
      stored,
      scan: (onChunk) => scanStored(stored, n, d, onChunk),
    };
    return {
      rows,
      rowNormBound: schemaRowNormBound(schema),
      labelBound: schemaLabelBound(schema),
      rowTransform: schema.rowTransform,
      intercept: schema.intercept,
      privateDiagnostics: opened.diagnostics,
      close: () => file.close(),
    };
  } catch (error) {
    file.close();
    throw error;
  }
}

/** One pass over stored rows, segment by segment (the next one read while the current one is used), as float64 rows. */
async function scanStored(stored: StoredRows, n: number, d: number, onChunk: Parameters<RowSource['scan']>[0]): Promise<void> {
  const S = stored.segmentRows;
  const xBytes = S * d * (stored.precision === 'float64' ? 8 : 4);
  const buffers = [0, 1].map(() => {
    const bytes = new Uint8Array(stored.segmentBytes);
    return { x: bytes.subarray(0, xBytes), y: bytes.subarray(xBytes, xBytes + 8 * S), norms: bytes.subarray(xBytes + 8 * S) };
  });
  const wide = stored.precision === 'float32' ? new Float64Array(S * d) : undefined;
  let next: Promise<number> | undefined = stored.segments > 0 ? stored.readSegment(0, buffers[0]) : undefined;
  let seen = 0;
  for (let k = 0; k < stored.segments; k++) {
    const rows = await (next as Promise<number>);
    const buffer = buffers[k % 2];
    next = k + 1 < stored.segments ? stored.readSegment(k + 1, buffers[(k + 1) % 2]) : undefined;
    let x: Float64Array;
    if (wide === undefined) x = new Float64Array(buffer.x.buffer, 0, rows * d);
    else {
      wide.set(new Float32Array(buffer.x.buffer, 0, rows * d));
      x = wide.subarray(0, rows * d);
    }
    const y = new Float64Array(buffer.y.buffer, xBytes, rows);
    seen += rows;
    let more: boolean | void;
    try {
      more = await onChunk(x, y, rows);
    } catch (error) {
      next?.catch(() => undefined); // a read under way no longer matters
      throw error;
    }
    if (more === false) {
      await next?.catch(() => undefined);
      return;
    }
  }
  if (seen !== n) throw new Error(`internal error: the temporary file held ${seen} rows, not ${n}`);
}

/** The owner's diagnostics of encoded rows (`PreparedData.privateDiagnostics`). */
function privateDiagnosticsOf(encoded: EncodedRows, rowsRead: number): PrivateDiagnostics {
  return {
    rowsRead,
    droppedRows: rowsRead - encoded.kept,
    ...encoded.counts,
    ...(encoded.countsPositives ? { positives: encoded.positives } : {}),
  };
}

/** What the DuckDB reader of a file offers: the counted records and passes over them, encoded chunk by chunk. */
interface DuckDbPasses {
  readonly fileRows: number;
  readonly selected: readonly Selected[];
  pass(onChunk: (x: Float64Array, y: Float64Array, rows: number, diagnostics: PrivateDiagnostics) => boolean | void | Promise<boolean | void>): Promise<boolean>;
  close(): void;
}

/**
 * DuckDB opened on `path` for passes over its records: every pass streams exactly the records
 * counted here by a query that reports its errors, each chunk encoded by the schema; a pass that
 * reads to the end must encode as many rows as the first.
 */
async function openDuckDbPasses(path: string, schema: Schema, format: 'csv' | 'parquet', threads: number, maxMemory: number | undefined): Promise<DuckDbPasses> {
  const csv: CsvOptions = schemaCsvOptions(schema, path);
  const missingTokens = csv.missing ?? ['', '?'];
  const config: Record<string, string> = { threads: String(threads) };
  const memoryLimit = maxMemory === undefined ? undefined : duckDbMemoryLimit(maxMemory);
  if (memoryLimit !== undefined) config.memory_limit = `${memoryLimit / 2 ** 20}MiB`;
  const { DuckDBInstance: Instance } = await loadDuckDb(path, format === 'parquet' ? 'reading Parquet files' : 'streaming a CSV file');
  const instance: DuckDBInstance = await Instance.create(':memory:', config);
  const connection: DuckDBConnection = await instance.connect();
  const close = (): void => {
    connection.closeSync();
    instance.closeSync();
  };
  try {
    let from: string;
    let names: readonly string[];
    let types: readonly string[];
    if (format === 'parquet') {
      from = `read_parquet(${sqlString(path)})`;
      let described;
      try {
        described = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${from}`)).getRowObjects();
      } catch (error) {
        throw duckDbError(path, error);
      }
      names = described.map((r) => String(r.column_name));
      types = described.map((r) => String(r.column_type));
    } else {
      const header = csv.header ?? true;
      names = header || csv.columnNames === undefined ? await csvColumnNames(path, csv) : csv.columnNames;
      types = names.map(() => 'VARCHAR');
      const parts = [sqlString(path), `header = ${header}`, `delim = ${sqlString(csv.delimiter ?? ',')}`, `quote = '"'`, `escape = '"'`, 'auto_detect = false',
        `columns = {${names.map((name) => `${sqlString(name)}: 'VARCHAR'`).join(', ')}}`];
      if (csv.comment !== undefined) parts.push(`comment = ${sqlString(csv.comment)}`);
      if (memoryLimit !== undefined) parts.push(`buffer_size = ${csvBufferBytes(memoryLimit, threads)}`);
      from = `read_csv(${parts.join(', ')})`;
    }
    const wanted = kinds(path, names, types, csv.columnTypes, csv.optionalColumns);
    try {
      await inferTextColumns(connection, from, names, wanted, missingTokens);
    } catch (error) {
      throw error instanceof DataFormatError ? error : duckDbError(path, error);
    }
    const selected = selectedColumns(names, wanted, (j) => format === 'parquet' && NUMERIC_SOURCE.test(types[j]));
    const sql = selectSql(selected, from, missingTokens);
    const missing = new Set(missingTokens.map((t) => t.trim()));

    // Every pass must stream exactly the rows DuckDB counts here (a query that reports its errors).
    const fileRows = await countRows(connection, sql, path);
    let passes = 0;
    let encodedRows: number | undefined;

    /**
     * One pass: each DuckDB chunk encoded by the schema; stops when `onChunk` returns false. A pass
     * that reads to the end encodes the opening pass's count of rows, or the file changed.
     */
    const pass: DuckDbPasses['pass'] = async (onChunk) => {
      passes++;
      let offset = 0;
      let encoded = 0;
      let stopped = false;
      for await (const chunk of streamChunks(connection, sql, path, fileRows, 'a larger --max-memory')) {
        let prepared;
        try {
          prepared = applySchema(chunkTable(path, chunk, selected, missing, offset), schema);
        } catch (error) {
          throw renumber(error, offset);
        }
        offset += chunk.rowCount;
        const { x, y, n } = prepared.dataset;
        encoded += n;
        if (n > 0 && (await onChunk(x, y, n, prepared.privateDiagnostics)) === false) {
          stopped = true;
          break;
        }
        if (n === 0) await onChunk(x, y, 0, prepared.privateDiagnostics);
      }
      if (stopped) return false;
      if (encodedRows === undefined) encodedRows = encoded;
      else if (encoded !== encodedRows) throw new DataFormatError(path, `pass ${passes} over the file encoded a different number of rows than the opening pass's ${encodedRows} (the file changed between passes)`);
      return true;
    };
    return { fileRows, selected, pass, close };
  } catch (error) {
    close();
    throw error;
  }
}

/** `openStreamedDataset` with `encodeOnce: false`: every pass reads the data file again through DuckDB. */
async function openRereadDataset(path: string, schema: Schema, format: 'csv' | 'parquet', threads: number, maxMemory: number | undefined): Promise<StreamedDataset> {
  const passes = await openDuckDbPasses(path, schema, format, threads, maxMemory);
  try {
    const { fileRows, selected, pass } = passes;
    // The opening pass: n, the label values, the owner's diagnostics; every value checked once.
    let n = 0;
    const labels = new Set<number>();
    let diagnostics: PrivateDiagnostics | undefined;
    await pass((_x, y, rows, part) => {
      n += rows;
      for (let i = 0; i < rows && labels.size <= 64; i++) labels.add(y[i]);
      diagnostics = addPrivateDiagnostics(diagnostics, part);
    });
    if (diagnostics === undefined) throw new DataFormatError(path, 'the file has no data rows');
    // The width and names do not depend on the rows: the schema's encoding of an empty table.
    const shape = applySchema({ source: path, rowCount: 0, columns: selected.map((s): RawColumn => (s.kind === 'numeric' ? { kind: 'numeric', name: s.name, values: new Float64Array(0) } : { kind: 'categorical', name: s.name, codes: new Int32Array(0), levels: [] })) }, schema);
    const d = shape.dataset.d;
    const featureNames = shape.dataset.featureNames;
    // Records dropped for a missing value are zero rows after the kept ones, as in memory
    // (data/dropped-rows.ts): n is the number of records, whatever was dropped.
    const dropped = fileRows - n;
    if (dropped > 0) labels.add(shape.zeroRowLabel);
    const zeroBlock = Math.min(dropped, 4096);
    const zeroX = new Float64Array(zeroBlock * d);
    const zeroY = new Float64Array(zeroBlock).fill(shape.zeroRowLabel);
    const rows: RowSource = {
      n: fileRows,
      d,
      source: path,
      ...(featureNames === undefined ? {} : { featureNames }),
      labelValues: [...labels],
      scan: async (onChunk) => {
        if (!(await pass((x, y, count) => (count === 0 ? undefined : onChunk(x, y, count))))) return;
        for (let done = 0; done < dropped; done += zeroBlock) {
          if ((await onChunk(zeroX, zeroY, Math.min(zeroBlock, dropped - done))) === false) return;
        }
      },
    };
    return {
      rows,
      rowNormBound: schemaRowNormBound(schema),
      labelBound: schemaLabelBound(schema),
      rowTransform: schema.rowTransform,
      intercept: schema.intercept,
      privateDiagnostics: diagnostics,
      close: passes.close,
    };
  } catch (error) {
    passes.close();
    throw error;
  }
}
