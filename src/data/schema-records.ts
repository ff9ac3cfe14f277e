/**
 * The records of a table as a public schema reads them, for comparing two files record by record
 * (`dpfit train --tune` checks that its --validation file is no copy of the training data:
 * `cli/validation-overlap.ts`). Columns are taken by the schema's names, so the file's column
 * order and any column the schema does not use do not matter; the label is left out, so a copy
 * whose labels were changed is still the same record.
 *
 * - A numeric feature column gives its value on the schema's scale before binning: missing values
 *   filled as training fills them (`"missing": "fill"`), clipped to [lower, upper], passed through
 *   the column's transform (`log1p`) and mapped to [0, 1] by the transformed bounds. Bins are
 *   left out: they put values of distinct people in one cell (Adult's age bins of five years).
 *   A missing value the schema does not fill is NaN, equal only to another missing value.
 * - A categorical feature column gives its slot as training encodes it (`applySchema`): the index
 *   of the trimmed value among `categories`, `categories.length` (the "other" slot) for any other
 *   value and for a missing one under `"missing": "other"`; -1 for a missing value otherwise. So
 *   spellings the schema maps to one category are one value.
 *
 * Browser-safe: imports nothing from Node.
 */
import { DataFormatError } from '../errors.js';
import { numericValueFeature } from './numeric-encoding.js';
import type { CategoricalColumnSpec, NumericColumnSpec, Schema } from './schema.js';
import { findColumn, type RawColumn, type RawTable } from './table.js';

export interface SchemaRecords {
  readonly n: number;
  /** Number of numeric feature columns (k). */
  readonly numericColumns: number;
  /** n x k, row-major: each value clipped, transformed and scaled to [0, 1]; NaN when missing and not filled. */
  readonly numeric: Float64Array;
  /** Number of categorical feature columns (c). */
  readonly categoricalColumns: number;
  /** n x c, row-major: the slot of each value (categories.length = other; -1 = missing and not mapped to other). */
  readonly categorical: Int32Array;
}

function resolve(table: RawTable, name: string): RawColumn {
  const column = findColumn(table, name);
  if (column === undefined) throw new DataFormatError(table.source, `column '${name}' of the schema is not in the data (columns: ${table.columns.map((c) => c.name).join(', ')})`);
  return column;
}

/** The [0, 1] value of each row of a numeric column (NaN: missing and not filled). */
function numericValues(spec: NumericColumnSpec, column: RawColumn, table: RawTable): Float64Array {
  if (column.kind !== 'numeric') throw new DataFormatError(table.source, 'is declared numeric but holds text', undefined, spec.name);
  const unit: NumericColumnSpec = { ...spec, scale: 'unit' };
  const out = new Float64Array(column.values.length);
  for (let i = 0; i < out.length; i++) {
    let v = column.values[i];
    if (Number.isNaN(v) && spec.missing === 'fill') v = spec.fillValue as number;
    out[i] = Number.isNaN(v) ? NaN : numericValueFeature(unit, Math.min(spec.upper, Math.max(spec.lower, v)));
  }
  return out;
}

/** The slot of each row of a categorical column, as `applySchema` encodes it (-1: missing, not mapped to other). */
function categoricalSlots(spec: CategoricalColumnSpec, column: RawColumn): Int32Array {
  const other = spec.categories.length;
  const missing = spec.missing === 'other' ? other : -1;
  const out = new Int32Array(column.kind === 'numeric' ? column.values.length : column.codes.length);
  if (column.kind === 'categorical') {
    const index = new Map(spec.categories.map((c, k) => [c, k] as const));
    const slots = column.levels.map((level) => index.get(level.trim()) ?? other);
    for (let i = 0; i < out.length; i++) out[i] = column.codes[i] < 0 ? missing : slots[column.codes[i]];
    return out;
  }
  // A column read as numbers for a categorical spec: matched by value, as applySchema does.
  for (let i = 0; i < out.length; i++) {
    const v = column.values[i];
    const k = Number.isNaN(v) ? -2 : spec.categories.findIndex((c) => c.trim() !== '' && Number(c) === v);
    out[i] = k === -2 ? missing : k < 0 ? other : k;
  }
  return out;
}

/**
 * The feature columns of `table` read by `schema` as comparable records (see the module comment).
 * Throws a `DataFormatError` when a feature column of the schema is absent or a numeric one holds text.
 */
export function schemaRecords(table: RawTable, schema: Schema): SchemaRecords {
  const numericSpecs = schema.columns.filter((c): c is NumericColumnSpec => c.type === 'numeric');
  const categoricalSpecs = schema.columns.filter((c): c is CategoricalColumnSpec => c.type === 'categorical');
  const n = table.rowCount;
  const k = numericSpecs.length;
  const c = categoricalSpecs.length;
  const numeric = new Float64Array(n * k);
  const categorical = new Int32Array(n * c);
  numericSpecs.forEach((spec, j) => {
    const values = numericValues(spec, resolve(table, spec.name), table);
    for (let i = 0; i < n; i++) numeric[i * k + j] = values[i];
  });
  categoricalSpecs.forEach((spec, j) => {
    const slots = categoricalSlots(spec, resolve(table, spec.name));
    for (let i = 0; i < n; i++) categorical[i * c + j] = slots[i];
  });
  return { n, numericColumns: k, numeric, categoricalColumns: c, categorical };
}
