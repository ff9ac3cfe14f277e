/**
 * The DuckDB back-end (`@duckdb/node-api`, pinned to 1.5.5-r.5, the version verified on the project's machines): Parquet
 * files, and CSV files too large or too many for the built-in parser's single thread.
 *
 * Both produce the same `RawTable` as the built-in CSV reader, with the same rules: numbers are
 * cast by DuckDB, which rounds correctly like the built-in parser, so the doubles are identical;
 * what DuckDB accepts beyond the built-in grammar ("inf", "nan", "1_000") is an error; text is
 * trimmed; missing tokens (default "" and "?") and NULL are missing. Errors found by DuckDB (a ragged
 * CSV line) keep its line number; errors found in the values say "row N" (1-based data row).
 *
 * The module imports DuckDB lazily, so `import 'dpfit'` does not load the native library.
 * Reading is deterministic at any thread count (insertion order is preserved); pass `threads: 1`
 * anyway where results are compared bit for bit, as the stack notes advise.
 */
import { open } from 'node:fs/promises';
import type { DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import { CSV_OPTIONS, CsvParser, type CsvColumnType, type CsvOptions } from '../csv.js';
import { missingColumnsError } from '../missing-columns.js';
import type { RawColumn, RawTable } from '../table.js';
import { duckDbMessage } from './engine-message.js';
import { loadDuckDb } from './load-duckdb.js';
import { requireFile } from './files.js';
import { optionNames, pickOptions, rejectUnknownOptions } from '../../validate.js';

/** The number grammar of `parse-number.ts` as a regular expression (type inference of text columns). */
const NUMBER_PATTERN = '[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?';

export interface DuckDbOptions {
  /** DuckDB worker threads (default: DuckDB's choice). */
  threads?: number;
}

/** @internal (also used by `stream-rows.ts`) */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** @internal (also used by `stream-rows.ts`) */
export function sqlIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Turns a DuckDB error into a one-line `DataFormatError` about `path` (keeping its line number). */
/** @internal (also used by `stream-rows.ts`) */
export function duckDbError(path: string, error: unknown): DataFormatError {
  const message = error instanceof Error ? error.message : String(error);
  const line = /Line: (\d+)/.exec(message);
  const columns = /Expected Number of Columns: (\d+) Found: (\d+)/.exec(message);
  if (columns !== null) return new DataFormatError(path, `expected ${columns[1]} fields, found ${columns[2]} (DuckDB)`, line ? Number(line[1]) : undefined);
  if (/No files found|No such file/i.test(message)) return new DataFormatError(path, 'no such file');
  return new DataFormatError(path, duckDbMessage(error), line ? Number(line[1]) : undefined);
}

/**
 * Runs `work` on a fresh in-memory DuckDB connection, closed afterwards. `need` names the file and
 * the purpose in the error raised when DuckDB (an optional dependency) is not installed.
 */
export async function withDuckDb<T>(options: DuckDbOptions, work: (connection: DuckDBConnection) => Promise<T>, need: { source: string; purpose: string }): Promise<T> {
  const config: Record<string, string> = {};
  if (options.threads !== undefined) {
    if (!Number.isSafeInteger(options.threads) || options.threads < 1) throw new InvalidParameterError('threads', options.threads, 'an integer >= 1');
    config.threads = String(options.threads);
  }
  const { DuckDBInstance } = await loadDuckDb(need.source, need.purpose);
  const instance = await DuckDBInstance.create(':memory:', config);
  const connection = await instance.connect();
  try {
    return await work(connection);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** @internal (also used by `stream-rows.ts`) */
export interface Selected {
  name: string;
  kind: 'numeric' | 'categorical';
  /** The source column is stored as numbers (Parquet): only non-finite values are errors. */
  numericSource: boolean;
}

/**
 * @internal The columns to read: every column whose wanted kind is not 'skip', as numeric or
 * categorical, and whether its source stores numbers (`numericSource(j)`, e.g. a Parquet column
 * of a NUMERIC_SOURCE type). Shared by the Parquet and CSV readers, streaming and SQL engines.
 */
export function selectedColumns(names: readonly string[], wanted: readonly (CsvColumnType | 'infer')[], numericSource: (j: number) => boolean): Selected[] {
  const selected: Selected[] = [];
  names.forEach((name, j) => {
    const kind = wanted[j];
    if (kind === 'skip') return;
    selected.push({ name, kind: kind === 'categorical' ? 'categorical' : 'numeric', numericSource: numericSource(j) });
  });
  return selected;
}

/** @internal (also used by `stream-rows.ts`) */
export const NUMERIC_SOURCE = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL.*|BOOLEAN)$/i;

/**
 * The query reading `selected` from `from`, in three layers: (1) each column once, trimmed text or
 * a double; (2) per numeric column its value (NaN when missing) and whether it is an error (text
 * that is neither a number of the built-in grammar nor a missing token; a non-finite number);
 * (3) the values, the text columns, one INTEGER "bad" column (1 + the index of the first erroneous
 * column of the row, else 0) and the offending text, NULL except in erroneous cells. Numeric
 * columns hold no NULL, so they are copied out of DuckDB's vectors without per-value calls.
 */
/** @internal (also used by `stream-rows.ts`) */
export function selectSql(selected: readonly Selected[], from: string, missingTokens: readonly string[]): string {
  const missingList = [...new Set(missingTokens.map((t) => sqlString(t.trim())))].join(', ') || "''";
  const inner: string[] = [];
  const middle: string[] = [];
  const outer: string[] = [];
  const badCases: string[] = [];
  selected.forEach((s, j) => {
    const id = sqlIdentifier(s.name);
    if (s.kind === 'categorical') {
      inner.push(`trim(CAST(${id} AS VARCHAR)) AS s${j}`);
      middle.push(`s${j}`);
      outer.push(`s${j}`);
      return;
    }
    if (s.numericSource) {
      inner.push(`CAST(${id} AS DOUBLE) AS d${j}`);
      middle.push(`COALESCE(d${j}, 'NaN'::DOUBLE) AS v${j}`, `COALESCE(NOT isfinite(d${j}), false) AS b${j}`, `CAST(d${j} AS VARCHAR) AS t${j}`);
    } else {
      inner.push(`trim(CAST(${id} AS VARCHAR)) AS t${j}`);
      // DuckDB's cast accepts a superset of the built-in grammar: "inf", "nan" (caught as non-finite)
      // and digit separators "1_000" (caught here); what both accept, both round correctly.
      middle.push(
        `COALESCE(TRY_CAST(t${j} AS DOUBLE), 'NaN'::DOUBLE) AS v${j}`,
        `COALESCE(t${j} NOT IN (${missingList}) AND (TRY_CAST(t${j} AS DOUBLE) IS NULL OR NOT isfinite(TRY_CAST(t${j} AS DOUBLE)) OR contains(t${j}, '_')), false) AS b${j}`,
        `t${j}`,
      );
    }
    outer.push(`v${j}`);
    badCases.push(`WHEN b${j} THEN ${j + 1}`);
  });
  selected.forEach((s, j) => {
    if (s.kind === 'numeric') outer.push(`CASE WHEN b${j} THEN t${j} END AS x${j}`);
  });
  if (badCases.length > 0) outer.push(`CASE ${badCases.join(' ')} ELSE 0 END AS bad`);
  return `SELECT ${outer.join(', ')} FROM (SELECT ${middle.join(', ')} FROM (SELECT ${inner.join(', ')} FROM ${from}))`;
}

/** The values of a DOUBLE vector without NULLs into out[offset...]: straight from its buffer when the (pinned) API exposes it. */
/** @internal (also used by `stream-rows.ts`) */
export function copyDoubles(vector: { getItem(i: number): unknown }, count: number, out: Float64Array, offset: number): void {
  const items = (vector as { items?: unknown }).items;
  if (items instanceof Float64Array && items.length >= count) {
    out.set(items.subarray(0, count), offset);
    return;
  }
  for (let r = 0; r < count; r++) {
    const v = vector.getItem(r);
    out[offset + r] = typeof v === 'number' ? v : NaN;
  }
}

/** The values of an INTEGER vector without NULLs. */
/** @internal (also used by `stream-rows.ts`) */
export function integers(vector: { getItem(i: number): unknown }, count: number): Int32Array {
  const items = (vector as { items?: unknown }).items;
  if (items instanceof Int32Array && items.length >= count) return items;
  return Int32Array.from({ length: count }, (_, r) => Number(vector.getItem(r)));
}

/**
 * @internal (also used by `stream-rows.ts`) The number of rows of `sql`'s result, counted by DuckDB
 * in a materialised query, which reports its errors (a malformed CSV line, DuckDB's memory limit)
 * as one line naming `path`, unlike a stream (`streamChunks`).
 */
export async function countRows(connection: DuckDBConnection, sql: string, path: string): Promise<number> {
  let value: unknown;
  try {
    value = (await connection.runAndReadAll(`SELECT count(*) FROM (${sql})`)).getRows()[0][0];
  } catch (error) {
    throw duckDbError(path, error);
  }
  const rows = Number(value);
  if (!Number.isSafeInteger(rows) || rows < 0) throw new DataFormatError(path, `DuckDB's count of the rows is ${String(value)}, not a count (DuckDB)`);
  return rows;
}

/**
 * @internal (also used by `stream-rows.ts`) The non-empty chunks of `sql`'s result, streamed (one
 * chunk in memory at a time): exactly `rows` rows (`countRows` of the same query), or an error
 * naming `path` (`memoryRemedy` says how to give DuckDB more memory). A consumer may stop early
 * (`break`); a stream that ends early never passes for the end of the data.
 *
 * Why the count. A streamed DuckDB result fetches its chunks with `duckdb_fetch_chunk`, which
 * returns NULL both at the end of the result and when the query failed on the way (DuckDB ran out
 * of its `memory_limit`, a malformed CSV line after the first chunk); the error is then only in
 * `duckdb_result_error`, which @duckdb/node-api 1.5.5-r.5 does not expose, and `fetchChunk` returns
 * the same empty chunk (no rows, no columns) in both cases. So the end of a stream is the end of
 * the data only when it comes after exactly the rows DuckDB counted; DuckDB's errors at the start
 * of a stream (its first chunk is computed by `stream`) are reported as usual.
 */
export async function* streamChunks(connection: DuckDBConnection, sql: string, path: string, rows: number, memoryRemedy = 'more memory'): AsyncGenerator<DuckDBDataChunk> {
  let result;
  try {
    result = await connection.stream(sql);
  } catch (error) {
    throw duckDbError(path, error);
  }
  let seen = 0;
  for (;;) {
    let chunk;
    try {
      chunk = await result.fetchChunk();
    } catch (error) {
      throw duckDbError(path, error);
    }
    if (chunk === null || chunk.rowCount === 0) break;
    seen += chunk.rowCount;
    if (seen > rows) throw new DataFormatError(path, `DuckDB's stream of the file gave more than the ${rows} rows it counted (the file changed while it was read)`);
    yield chunk;
  }
  if (seen < rows) {
    throw new DataFormatError(path, `DuckDB's stream of the file ended before its last row (of the ${rows} it counted) and gave no reason (its streaming API drops errors): most often DuckDB ran out of its memory limit (${memoryRemedy}), or the file changed while it was read`);
  }
}

/** Reads the query of `selectSql` into table columns, every row DuckDB counted (`streamChunks`). */
export async function collect(connection: DuckDBConnection, path: string, from: string, selected: Selected[], missingTokens: readonly string[]): Promise<RawTable> {
  const sql = selectSql(selected, from, missingTokens);
  const expected = await countRows(connection, sql, path);
  const missing = new Set(missingTokens.map((t) => t.trim()));
  let capacity = 1024;
  let rows = 0;
  const numeric = selected.map((s) => (s.kind === 'numeric' ? new Float64Array(capacity) : undefined));
  const codes = selected.map((s) => (s.kind === 'categorical' ? new Int32Array(capacity) : undefined));
  const levels = selected.map(() => [] as string[]);
  const index = selected.map(() => new Map<string, number>());
  // Result layout: one vector per selected column, then x_j per numeric column, then "bad".
  const numericColumns = selected.map((s, j) => (s.kind === 'numeric' ? j : -1)).filter((j) => j >= 0);
  const badVector = numericColumns.length > 0 ? selected.length + numericColumns.length : -1;
  for await (const chunk of streamChunks(connection, sql, path, expected)) {
    const count = chunk.rowCount;
    if (badVector >= 0) {
      const bad = integers(chunk.getColumnVector(badVector), count);
      for (let r = 0; r < count; r++) {
        if (bad[r] === 0) continue;
        const j = bad[r] - 1;
        throw new DataFormatError(path, `row ${rows + r + 1}: ${badValueText(selected[j])}`, undefined, selected[j].name);
      }
    }
    if (rows + count > capacity) {
      while (rows + count > capacity) capacity *= 2;
      for (let j = 0; j < selected.length; j++) {
        const values = numeric[j];
        if (values !== undefined) {
          const grown = new Float64Array(capacity);
          grown.set(values);
          numeric[j] = grown;
        }
        const c = codes[j];
        if (c !== undefined) {
          const grown = new Int32Array(capacity);
          grown.set(c);
          codes[j] = grown;
        }
      }
    }
    for (let j = 0; j < selected.length; j++) {
      const vector = chunk.getColumnVector(j);
      if (selected[j].kind === 'numeric') {
        copyDoubles(vector, count, numeric[j] as Float64Array, rows);
        continue;
      }
      const out = codes[j] as Int32Array;
      for (let r = 0; r < count; r++) {
        const text = vector.getItem(r) as string | null;
        if (text === null || missing.has(text)) {
          out[rows + r] = -1;
          continue;
        }
        let code = index[j].get(text);
        if (code === undefined) {
          code = levels[j].length;
          levels[j].push(text);
          index[j].set(text, code);
        }
        out[rows + r] = code;
      }
    }
    rows += count;
  }
  if (rows === 0) throw new DataFormatError(path, 'the file has no data rows');
  const columns: RawColumn[] = selected.map((s, j) =>
    s.kind === 'numeric'
      ? { kind: 'numeric', name: s.name, values: (numeric[j] as Float64Array).slice(0, rows) }
      : { kind: 'categorical', name: s.name, codes: (codes[j] as Int32Array).slice(0, rows), levels: levels[j] },
  );
  return { source: path, rowCount: rows, columns };
}

/**
 * What a cell that fails its numeric column is, without its text (no message quotes the data).
 * @internal (also used by `stream-rows.ts`)
 */
export function badValueText(column: Selected): string {
  return column.numericSource ? 'a value is not a finite number' : 'a value is not a number';
}

/** The kind of each file column: declared by `columnTypes`, else from the source type. */
/** @internal (also used by `stream-rows.ts`) */
export function kinds(path: string, names: readonly string[], sourceTypes: readonly string[], columnTypes: CsvOptions['columnTypes'], optional: readonly string[] = []): (CsvColumnType | 'infer')[] {
  if (columnTypes !== undefined && columnTypes !== 'numeric') {
    const absent = Object.keys(columnTypes).filter((name) => !names.includes(name) && !optional.includes(name));
    if (absent.length > 0) throw missingColumnsError(path, absent, 'columns');
  }
  return names.map((name, j) => {
    if (columnTypes === 'numeric') return 'numeric';
    const declared = columnTypes?.[name];
    if (declared !== undefined) return declared;
    return NUMERIC_SOURCE.test(sourceTypes[j]) ? 'numeric' : 'infer';
  });
}

/** For text columns of unknown type: numeric when every non-missing value matches the number grammar. */
/** @internal (also used by `stream-rows.ts`) */
export async function inferTextColumns(connection: DuckDBConnection, from: string, names: readonly string[], wanted: (CsvColumnType | 'infer')[], missing: readonly string[]): Promise<void> {
  const open = wanted.map((k, j) => (k === 'infer' ? j : -1)).filter((j) => j >= 0);
  if (open.length === 0) return;
  const missingList = missing.map((m) => sqlString(m.trim())).join(', ') || "''";
  const checks = open.map((j) => {
    const text = `trim(CAST(${sqlIdentifier(names[j])} AS VARCHAR))`;
    return `bool_and(${text} IS NULL OR ${text} IN (${missingList}) OR regexp_full_match(${text}, '${NUMBER_PATTERN}')) AS k${j}`;
  });
  const reader = await connection.runAndReadAll(`SELECT ${checks.join(', ')} FROM ${from}`);
  const row = reader.getRows()[0];
  open.forEach((j, k) => {
    wanted[j] = row[k] === false ? 'categorical' : 'numeric';
  });
}

const CSV_AND_DUCKDB_OPTIONS = optionNames<CsvOptions & DuckDbOptions>({ ...CSV_OPTIONS, threads: true });

/**
 * Reads a Parquet file. Columns are numeric or text as stored, unless `columnTypes` says
 * otherwise (text holding numbers is parsed with the built-in grammar).
 *
 * @example
 * const table = await readParquetFile('data.parquet', { threads: 1 });
 */
export async function readParquetFile(path: string, options: CsvOptions & DuckDbOptions = {}): Promise<RawTable> {
  rejectUnknownOptions(options, CSV_AND_DUCKDB_OPTIONS, 'readParquetFile');
  await requireFile(path);
  const from = `read_parquet(${sqlString(path)})`;
  return withDuckDb(options, async (connection) => {
    let described;
    try {
      described = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${from}`)).getRowObjects();
    } catch (error) {
      throw duckDbError(path, error);
    }
    const names = described.map((r) => String(r.column_name));
    const types = described.map((r) => String(r.column_type));
    const missing = options.missing ?? ['', '?'];
    const wanted = kinds(path, names, types, options.columnTypes, options.optionalColumns);
    await inferTextColumns(connection, from, names, wanted, missing);
    const selected = selectedColumns(names, wanted, (j) => NUMERIC_SOURCE.test(types[j]));
    return collect(connection, path, from, selected, missing);
  }, { source: path, purpose: 'reading Parquet files' });
}

/** The header (or first record) of a CSV file, parsed by the built-in parser: the column names. */
/** @internal (also used by `stream-rows.ts`) */
export async function csvColumnNames(path: string, options: CsvOptions): Promise<readonly string[]> {
  const handle = await open(path, 'r');
  try {
    let size = 1 << 16;
    for (;;) {
      const buffer = Buffer.alloc(size);
      const { bytesRead } = await handle.read(buffer, 0, size, 0);
      const parser = new CsvParser({ ...pickOptions(options, CSV_OPTIONS), source: options.source ?? path, columnTypes: undefined });
      parser.consumeColumns(buffer, 0, bytesRead, bytesRead < size);
      if (parser.columnNames !== undefined) return parser.columnNames;
      if (bytesRead < size) throw new DataFormatError(path, 'the file is empty (no header and no data)');
      size *= 4;
    }
  } finally {
    await handle.close();
  }
}

/**
 * Reads a CSV file with DuckDB's parallel reader (same dialect options and result as the built-in
 * reader; errors in values say "row N" rather than the line).
 */
export async function readCsvWithDuckDb(path: string, options: CsvOptions & DuckDbOptions = {}): Promise<RawTable> {
  rejectUnknownOptions(options, CSV_AND_DUCKDB_OPTIONS, 'readCsvWithDuckDb');
  await requireFile(path);
  const header = options.header ?? true;
  // With optional columns, a header-less file's first record says which of the names it has.
  const names = header || options.columnNames === undefined || (options.optionalColumns ?? []).length > 0 ? await csvColumnNames(path, options) : options.columnNames;
  const columnsSpec = `{${names.map((name) => `${sqlString(name)}: 'VARCHAR'`).join(', ')}}`;
  const parts = [
    sqlString(path),
    `header = ${header}`,
    `delim = ${sqlString(options.delimiter ?? ',')}`,
    `quote = '"'`,
    `escape = '"'`,
    'auto_detect = false',
    `columns = ${columnsSpec}`,
  ];
  if (options.comment !== undefined) parts.push(`comment = ${sqlString(options.comment)}`);
  const from = `read_csv(${parts.join(', ')})`;
  const missing = options.missing ?? ['', '?'];
  return withDuckDb(options, async (connection) => {
    const wanted = kinds(path, names, names.map(() => 'VARCHAR'), options.columnTypes, options.optionalColumns);
    try {
      await inferTextColumns(connection, from, names, wanted, missing);
    } catch (error) {
      throw error instanceof DataFormatError ? error : duckDbError(path, error);
    }
    const selected = selectedColumns(names, wanted, () => false);
    return collect(connection, path, from, selected, missing);
  }, { source: path, purpose: 'reading this CSV file with DuckDB' });
}

const CONVERT_CSV_TO_PARQUET_OPTIONS = optionNames<NonNullable<Parameters<typeof convertCsvToParquet>[2]>>({ threads: true, delimiter: true });

/**
 * Converts a CSV file to Parquet with DuckDB's own CSV reader and type detection (a comma-separated
 * file with a header; columns become BIGINT, DOUBLE or VARCHAR — never BOOLEAN or dates, so text
 * such as "yes" stays text). Useful to prepare large inputs once; tests use it to check that both paths
 * give identical datasets.
 */
export async function convertCsvToParquet(csvPath: string, parquetPath: string, options: DuckDbOptions & { delimiter?: string } = {}): Promise<void> {
  rejectUnknownOptions(options, CONVERT_CSV_TO_PARQUET_OPTIONS, 'convertCsvToParquet');
  await requireFile(csvPath);
  await withDuckDb(options, async (connection) => {
    try {
      await connection.run(
        `COPY (SELECT * FROM read_csv(${sqlString(csvPath)}, header = true, delim = ${sqlString(options.delimiter ?? ',')}, auto_type_candidates = ['BIGINT', 'DOUBLE', 'VARCHAR'])) TO ${sqlString(parquetPath)} (FORMAT parquet)`,
      );
    } catch (error) {
      throw duckDbError(csvPath, error);
    }
  }, { source: csvPath, purpose: 'converting CSV to Parquet' });
}
