/**
 * A `RawTable` is what a reader returns before any preprocessing: named columns, numeric ones as
 * `Float64Array`s (NaN marks a missing value, never a parsed one: readers refuse "NaN" and
 * "Infinity" in the data) and categorical ones dictionary-encoded (code -1 = missing). It keeps,
 * per row, where the row came from, so that errors found later (an unknown label value, a missing
 * value the schema forbids) still name the file and line.
 *
 * The typed arrays may be views into larger buffers (readers avoid a final copy): use them through
 * their own length, not through `.buffer`.
 *
 * Turning a table into a `Dataset` is the job of a public schema (`schema/`) or, for data that
 * is already numeric and bounded, of `numericTableToDataset`.
 *
 * Browser-safe: imports nothing from Node.
 */
import { DataFormatError, InvalidParameterError } from '../errors.js';
import type { Dataset } from './dataset.js';
import { optionNames, rejectUnknownOptions } from '../validate.js';

/** A numeric column; NaN = missing. */
export interface NumericColumn {
  readonly kind: 'numeric';
  readonly name: string;
  readonly values: Float64Array;
}

/** A text column, dictionary-encoded: row i holds `levels[codes[i]]`, or nothing when codes[i] = -1. */
export interface CategoricalColumn {
  readonly kind: 'categorical';
  readonly name: string;
  readonly codes: Int32Array;
  readonly levels: readonly string[];
}

export type RawColumn = NumericColumn | CategoricalColumn;

export interface RawTable {
  /** File name (or another label) used in error messages. */
  readonly source: string;
  readonly rowCount: number;
  readonly columns: readonly RawColumn[];
  /** 1-based line of the file on which row i starts, when the format has lines (CSV). */
  readonly rowLines?: Int32Array;
}

/** The column named `name`, or undefined. */
export function findColumn(table: RawTable, name: string): RawColumn | undefined {
  return table.columns.find((c) => c.name === name);
}

/**
 * A `DataFormatError` located at row `row` of the table: "file.csv, line 1042, column 'age': ...".
 * Formats without lines (Parquet) say "row N" (1-based) in the message instead.
 */
export function tableError(table: RawTable, row: number, column: string | undefined, message: string): DataFormatError {
  if (table.rowLines !== undefined && row < table.rowLines.length) return new DataFormatError(table.source, message, table.rowLines[row], column);
  return new DataFormatError(table.source, `row ${row + 1}: ${message}`, undefined, column);
}

const NUMERIC_TABLE_OPTIONS = optionNames<NonNullable<Parameters<typeof numericTableToDataset>[1]>>({ label: true, features: true });

/**
 * A table whose feature and label columns are all numeric, taken as they are. Use it only for
 * data that is already preprocessed with public bounds (e.g. LIBSVM files scaled to [-1, 1]); raw
 * columns go through a schema (`applySchema`) instead. A missing value is a `DataFormatError`.
 *
 * @example
 * const data = numericTableToDataset(table, { label: 'y' }); // every other column is a feature
 */
export function numericTableToDataset(table: RawTable, options: { label: string; features?: readonly string[] }): Dataset {
  rejectUnknownOptions(options, NUMERIC_TABLE_OPTIONS, 'numericTableToDataset');
  const labelColumn = findColumn(table, options.label);
  if (labelColumn === undefined) throw new InvalidParameterError('label', options.label, `a column of ${table.source} (its columns are not listed: they are read from the file)`);
  const featureNames = options.features ?? table.columns.filter((c) => c.name !== options.label).map((c) => c.name);
  const features = featureNames.map((name) => {
    const column = findColumn(table, name);
    if (column === undefined) throw new InvalidParameterError('features', name, `a column of ${table.source}`);
    return column;
  });
  for (const column of [...features, labelColumn]) {
    if (column.kind !== 'numeric') throw new DataFormatError(table.source, 'is not numeric (use a schema to encode text columns)', undefined, column.name);
  }
  const n = table.rowCount;
  const d = features.length;
  const x = new Float64Array(n * d);
  const columns = features.map((c) => (c as NumericColumn).values);
  // Rows outer, columns inner: x is written sequentially.
  for (let i = 0, k = 0; i < n; i++) {
    for (let j = 0; j < d; j++, k++) {
      const v = columns[j][i];
      if (v !== v) throw tableError(table, i, features[j].name, 'missing value (use a schema with a missing-value policy)');
      x[k] = v;
    }
  }
  const labels = (labelColumn as NumericColumn).values;
  for (let i = 0; i < n; i++) if (Number.isNaN(labels[i])) throw tableError(table, i, labelColumn.name, 'missing label');
  return { x, y: Float64Array.from(labels), n, d, featureNames: [...featureNames] };
}
