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
 * - And its alias, for comparing only (training never sees it): the category the value names up to
 *   its spelling (`foldCategory`: case, surrounding and repeated whitespace, the spelling of a
 *   number), as the index of the first category of that folded text; -1 when it names none (its
 *   folded text is no category's, or it is missing). `RED` and ` red ` are in the "other" slot
 *   but have the alias of `red`. Two values of a column are the same when their slots are equal
 *   (the model sees one value) or their aliases are (the data say one value).
 *
 * `schemaKeptRows` says which rows `applySchema` keeps: those it does not drop for a missing
 * value. Only those are rows of the encoded data (and score `--tune`'s candidates).
 *
 * Browser-safe: imports nothing from Node.
 */
import { DataFormatError } from '../../errors.js';
import { missingColumnsError } from '../missing-columns.js';
import { numericValueFeature } from './numeric-encoding.js';
import type { CategoricalColumnSpec, NumericColumnSpec, Schema } from './types.js';
import { findColumn, type RawColumn, type RawTable } from '../table.js';

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
  /**
   * n x c, row-major: the alias of each value, the category it names up to its spelling (the index
   * of the first category of its folded text; -1: none). Absent: -1 everywhere (slots alone).
   */
  readonly categoricalAlias?: Int32Array;
}

/**
 * A categorical value folded for comparing: trimmed; a finite number in one spelling (`" 1.0"`,
 * `"1"` and `"1e0"` alike, as JavaScript's `Number` reads it); any other text with its whitespace
 * runs made one space and its case folded (`"Self  Emp"`, `"SELF-emp"`: `"self emp"`, `"self-emp"`).
 */
export function foldCategory(text: string): string {
  const trimmed = text.trim();
  const number = trimmed === '' ? NaN : Number(trimmed);
  if (Number.isFinite(number)) return String(number + 0);
  return trimmed.replace(/\s+/gu, ' ').toUpperCase().toLowerCase();
}

function resolve(table: RawTable, name: string): RawColumn {
  const column = findColumn(table, name);
  if (column === undefined) throw missingColumnsError(table.source, [name], 'columns');
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

/** The slot of each row of a categorical column, as `applySchema` encodes it (-1: missing, not mapped to other), and its alias (-1: none). */
function categoricalSlots(spec: CategoricalColumnSpec, column: RawColumn): { slots: Int32Array; aliases: Int32Array } {
  const other = spec.categories.length;
  const missing = spec.missing === 'other' ? other : -1;
  const n = column.kind === 'numeric' ? column.values.length : column.codes.length;
  const slots = new Int32Array(n);
  const aliases = new Int32Array(n).fill(-1);
  // The alias of a folded text: the first category of that folded text.
  const aliasOf = new Map<string, number>();
  spec.categories.forEach((c, k) => {
    const folded = foldCategory(c);
    if (!aliasOf.has(folded)) aliasOf.set(folded, k);
  });
  if (column.kind === 'categorical') {
    const index = new Map(spec.categories.map((c, k) => [c, k] as const));
    const levelSlots = column.levels.map((level) => index.get(level.trim()) ?? other);
    const levelAliases = column.levels.map((level) => aliasOf.get(foldCategory(level)) ?? -1);
    for (let i = 0; i < n; i++) {
      const code = column.codes[i];
      if (code < 0) slots[i] = missing;
      else {
        slots[i] = levelSlots[code];
        aliases[i] = levelAliases[code];
      }
    }
    return { slots, aliases };
  }
  // A column read as numbers for a categorical spec: matched by value, as applySchema does.
  for (let i = 0; i < n; i++) {
    const v = column.values[i];
    if (Number.isNaN(v)) {
      slots[i] = missing;
      continue;
    }
    const k = spec.categories.findIndex((c) => c.trim() !== '' && Number(c) === v);
    slots[i] = k < 0 ? other : k;
    aliases[i] = aliasOf.get(String(v + 0)) ?? -1;
  }
  return { slots, aliases };
}

/**
 * Which rows of `table` `applySchema` keeps (1) and which it drops (0): a row is dropped when a
 * column whose policy is `"missing": "dropRow"` (a feature or the label) has no value in it.
 * Throws a `DataFormatError` when such a column is absent.
 */
export function schemaKeptRows(table: RawTable, schema: Schema): Uint8Array {
  const kept = new Uint8Array(table.rowCount).fill(1);
  for (const spec of schema.columns) {
    if (spec.type === 'ignore' || spec.missing !== 'dropRow') continue;
    const column = resolve(table, spec.name);
    for (let i = 0; i < table.rowCount; i++) {
      if (column.kind === 'numeric' ? Number.isNaN(column.values[i]) : column.codes[i] < 0) kept[i] = 0;
    }
  }
  return kept;
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
  const categoricalAlias = new Int32Array(n * c);
  numericSpecs.forEach((spec, j) => {
    const values = numericValues(spec, resolve(table, spec.name), table);
    for (let i = 0; i < n; i++) numeric[i * k + j] = values[i];
  });
  categoricalSpecs.forEach((spec, j) => {
    const { slots, aliases } = categoricalSlots(spec, resolve(table, spec.name));
    for (let i = 0; i < n; i++) {
      categorical[i * c + j] = slots[i];
      categoricalAlias[i * c + j] = aliases[i];
    }
  });
  return { n, numericColumns: k, numeric, categoricalColumns: c, categorical, categoricalAlias };
}
