/**
 * The reference for `applySchema` (`src/data/schema/apply.ts`): the row-by-row implementation that
 * dpfit shipped before the encoder was fused into the reader's chunk loop (one function call per
 * cell, then `normalizeRows` / `scaleRows` / `clipRows` / `addIntercept` each making a new copy of
 * the dataset). Kept here unchanged, as an independent path through the code, so that the fused
 * encoder is checked against it bit for bit (`test/data/schema/encoder.test.ts`): the same rows,
 * labels, private diagnostics and errors.
 */
import { DataFormatError } from '../../src/errors.js';
import type { Dataset } from '../../src/data/dataset.js';
import { missingColumnsError } from '../../src/data/missing-columns.js';
import { findColumn, tableError, type NumericColumn, type RawColumn, type RawTable } from '../../src/data/table.js';
import { addIntercept, clipRows, normalizeRows, scaleRows } from '../../src/data/transforms.js';
import { rejectUnknownOptions } from '../../src/validate.js';
import { labelColumn, schemaEncodedNormBound, schemaFeatureNames, schemaLabelBound, schemaRowNormBound } from '../../src/data/schema/bounds.js';
import { binIndex, numericEncodedWidth, numericValueFeature } from '../../src/data/schema/numeric-encoding.js';
import { SCHEMA_READ_OPTIONS, type SchemaReadOptions } from '../../src/data/schema/read-options.js';
import type { CategoricalColumnSpec, ColumnSpec, LabelColumnSpec, NumericColumnSpec, RowTransform, Schema } from '../../src/data/schema/types.js';

/** Statistics of the private data gathered while encoding: for the owner's eyes (`dpfit data inspect`), never for release. */
interface PrivateDiagnostics {
  readonly rowsRead: number;
  readonly droppedRows: number;
  /** Per numeric column: values clipped to a bound. */
  readonly clipped: Readonly<Record<string, number>>;
  /** Per categorical column: values (unknown or missing) sent to the "other" slot. */
  readonly other: Readonly<Record<string, number>>;
  /** Per column: missing values seen. */
  readonly missing: Readonly<Record<string, number>>;
  /** Rows whose label is the positive class (binary labels). */
  readonly positives?: number;
}

interface PreparedData {
  readonly dataset: Dataset;
  /** Public bound on every row's L2 norm (from the schema: `schemaRowNormBound`). */
  readonly rowNormBound: number;
  /** Public bound on |y|. */
  readonly labelBound: number;
  readonly rowTransform: RowTransform;
  readonly intercept: number | null;
  readonly privateDiagnostics: PrivateDiagnostics;
  /**
   * The label of a zero row (`../dropped-rows.ts`: a record dropped for a missing value is a zero row
   * of the training set, so that n does not depend on the data): a value the label's encoding
   * accepts; x = 0 cancels it in every learner.
   */
  readonly zeroRowLabel: number;
}

/**
 * Encodes a table with a public schema: clip and scale numeric columns by their declared bounds,
 * one-hot categorical columns with an "other" slot, encode the label, apply the missing-value
 * policies, then the row transform and the intercept. Each output row depends only on its input
 * row and the schema.
 *
 * Throws a `DataFormatError` at the first offending cell (file, line, column): a column of the
 * schema absent from the table, a missing value under policy "error", a label value that is
 * neither positive nor negative, a non-finite number.
 *
 * @example
 * const { dataset, rowNormBound } = applySchema(table, schema); // rowNormBound = 1 by default
 */
export function referenceApplySchema(table: RawTable, schema: Schema, options: SchemaReadOptions = {}): PreparedData {
  rejectUnknownOptions(options, SCHEMA_READ_OPTIONS, 'referenceApplySchema');
  // Resolve columns first: no work before the table is known to fit the schema.
  const features = schema.columns.filter((c): c is FeatureSpec => c.type === 'numeric' || c.type === 'categorical');
  const featureColumns = features.map((spec) => schemaColumn(table, spec));
  const label = labelEncoder(table, labelColumn(schema), options.label === 'ignore');
  const layout = featureLayout(table, features, featureColumns);

  const { x, y, kept, counts, positives } = encodeRows(table, label, layout);
  const n0 = table.rowCount;
  const encoded: Dataset = {
    x: kept === n0 ? x : x.slice(0, kept * layout.width),
    y: kept === n0 ? y : y.slice(0, kept),
    n: kept,
    d: layout.width,
    featureNames: schemaFeatureNames({ ...schema, intercept: null }),
  };
  return {
    dataset: transformRows(encoded, schema),
    rowNormBound: schemaRowNormBound(schema),
    labelBound: schemaLabelBound(schema),
    rowTransform: schema.rowTransform,
    intercept: schema.intercept,
    zeroRowLabel: zeroRowLabel(label),
    privateDiagnostics: {
      rowsRead: n0,
      droppedRows: n0 - kept,
      ...counts,
      ...(label.classify !== undefined && !label.multiClass ? { positives } : {}),
    },
  };
}

type FeatureSpec = NumericColumnSpec | CategoricalColumnSpec;

/** The table's column that the schema names (the error names it, never the table's own columns: `../missing-columns.ts`). */
function schemaColumn(table: RawTable, spec: ColumnSpec): RawColumn {
  const column = findColumn(table, spec.name);
  if (column === undefined) throw missingColumnsError(table.source, [spec.name], 'columns');
  return column;
}

/** y of the positive class (binary labels). */
const POSITIVE_VALUE = 1;

/** How the label's raw values become y. */
interface LabelEncoder {
  readonly spec: LabelColumnSpec;
  /** The raw column; a column of zeros when the label is ignored. */
  readonly column: RawColumn;
  /** Ignored (data to predict): never read, y = 0 for every row. */
  readonly ignored: boolean;
  /** A binary or multi-class label that is read: each row's class (`labelClassifier`). */
  readonly classify: ((row: number) => number | undefined) | undefined;
  readonly multiClass: boolean;
  /** y of the negative class: 0, or -1 with "plusMinusOne". */
  readonly negativeValue: number;
}

function labelEncoder(table: RawTable, spec: LabelColumnSpec, ignored: boolean): LabelEncoder {
  // Ignored (prediction): never read, y = 0 for every row; a raw column of zeros stands in.
  const column: RawColumn = ignored ? { kind: 'numeric', name: spec.name, values: new Float64Array(table.rowCount) } : schemaColumn(table, spec);
  const classified = (spec.positive !== undefined || spec.classes !== undefined) && !ignored;
  if (!classified && !ignored && column.kind !== 'numeric') throw new DataFormatError(table.source, 'the label is declared numeric (lower/upper) but the column holds text', undefined, spec.name);
  return {
    spec,
    column,
    ignored,
    classify: classified ? labelClassifier(spec, column) : undefined,
    multiClass: spec.classes !== undefined && !ignored,
    negativeValue: spec.encoding === 'plusMinusOne' ? -1 : 0,
  };
}

/**
 * Maps each raw label to its class: for a binary label 1 (positive) or 0 (negative), for a
 * multi-class label the class index; -1 when the value is not declared, undefined when missing.
 */
function labelClassifier(label: LabelColumnSpec, column: RawColumn): (row: number) => number | undefined {
  const groups: readonly (readonly (string | number)[])[] = label.classes !== undefined
    ? label.classes.map((v) => [v])
    : [label.negative as readonly (string | number)[], label.positive as readonly (string | number)[]];
  if (column.kind === 'categorical') {
    const classes = column.levels.map((level): number => {
      const trimmed = level.trim();
      const matches = (v: string | number): boolean => (typeof v === 'number' ? trimmed !== '' && Number(trimmed) === v : v === trimmed);
      return groups.findIndex((group) => group.some(matches));
    });
    return (row) => (column.codes[row] < 0 ? undefined : classes[column.codes[row]]);
  }
  const numeric = groups.map((group) => group.map(Number).filter((v) => !Number.isNaN(v)));
  return (row) => {
    const v = column.values[row];
    if (Number.isNaN(v)) return undefined;
    return numeric.findIndex((group) => group.includes(v));
  };
}

/** The label of a zero row (`PreparedData.zeroRowLabel`). */
function zeroRowLabel(label: LabelEncoder): number {
  if (label.multiClass) return 0;
  if (label.classify !== undefined) return label.negativeValue;
  return Math.min(label.spec.upper ?? 0, Math.max(label.spec.lower ?? 0, 0));
}

/** The feature columns, each checked against its declared type, and where each one's features go in a row. */
interface FeatureLayout {
  readonly specs: readonly FeatureSpec[];
  readonly columns: readonly RawColumn[];
  /** Per categorical column read as text: level code -> slot (categories.length = other). */
  readonly slotOfLevel: readonly (readonly number[] | undefined)[];
  /** Where each column's features start in a row. */
  readonly offsets: readonly number[];
  /** Features per row. */
  readonly width: number;
}

function featureLayout(table: RawTable, specs: readonly FeatureSpec[], columns: readonly RawColumn[]): FeatureLayout {
  const slotOfLevel = specs.map((spec, j) => {
    const column = columns[j];
    if (spec.type !== 'categorical') {
      if (column.kind !== 'numeric') throw new DataFormatError(table.source, 'is declared numeric but holds text', undefined, spec.name);
      return undefined;
    }
    const index = new Map(spec.categories.map((c, k) => [c, k] as const));
    if (column.kind === 'categorical') return column.levels.map((level) => index.get(level.trim()) ?? spec.categories.length);
    return undefined; // numeric raw column for a categorical spec: matched by text (`encodeCategorical`)
  });
  const offsets: number[] = [];
  let width = 0;
  for (const spec of specs) {
    offsets.push(width);
    width += spec.type === 'numeric' ? numericEncodedWidth(spec) : spec.categories.length + 1;
  }
  return { specs, columns, slotOfLevel, offsets, width };
}

/** What the encoding met in the private data, per column (`PrivateDiagnostics`). */
interface PrivateCounts {
  readonly clipped: Record<string, number>;
  readonly other: Record<string, number>;
  readonly missing: Record<string, number>;
}

function zeroCounts(specs: readonly FeatureSpec[], label: LabelColumnSpec): PrivateCounts {
  const clipped: Record<string, number> = {};
  const other: Record<string, number> = {};
  const missing: Record<string, number> = {};
  for (const spec of specs) {
    if (spec.type === 'numeric') clipped[spec.name] = 0;
    else other[spec.name] = 0;
    missing[spec.name] = 0;
  }
  missing[label.name] = 0;
  return { clipped, other, missing };
}

/**
 * Encodes the rows in order, the label first. A row dropped for a missing value ("dropRow") is
 * not kept: the next row is written in its place.
 */
function encodeRows(table: RawTable, label: LabelEncoder, layout: FeatureLayout): { x: Float64Array; y: Float64Array; kept: number; counts: PrivateCounts; positives: number } {
  const n0 = table.rowCount;
  const width = layout.width;
  const x = new Float64Array(n0 * width);
  const y = new Float64Array(n0);
  const counts = zeroCounts(layout.specs, label.spec);
  let positives = 0;
  let kept = 0;
  let dirty = false; // the previous row was dropped after writing some features
  for (let i = 0; i < n0; i++) {
    const base = kept * width;
    if (dirty) {
      x.fill(0, base, base + width);
      dirty = false;
    }
    // Label first: a dropped row writes nothing that stays.
    const yi = encodeLabel(table, label, i, counts);
    if (yi === undefined) continue; // nothing written yet
    if (!encodeFeatures(table, layout, i, x, base, counts)) {
      dirty = true;
      continue;
    }
    y[kept] = yi;
    if (label.classify !== undefined && !label.multiClass && yi === POSITIVE_VALUE) positives++;
    kept++;
  }
  return { x, y, kept, counts, positives };
}

/** y of row i, or undefined when the row is dropped for a missing label. */
function encodeLabel(table: RawTable, label: LabelEncoder, i: number, counts: PrivateCounts): number | undefined {
  const { spec, classify } = label;
  if (classify !== undefined) {
    const cls = classify(i);
    if (cls === undefined) return missingLabel(table, spec, i, counts);
    if (cls === -1) {
      const declared = label.multiClass
        ? `classes: ${describeValues(spec.classes as (string | number)[])}`
        : `positive: ${describeValues(spec.positive as (string | number)[])}; negative: ${describeValues(spec.negative as (string | number)[])}`;
      throw tableError(table, i, spec.name, `a label value that the schema does not declare (${declared})`);
    }
    return label.multiClass ? cls : cls === 1 ? POSITIVE_VALUE : label.negativeValue;
  }
  const v = (label.column as NumericColumn).values[i];
  if (Number.isNaN(v)) return missingLabel(table, spec, i, counts);
  if (!Number.isFinite(v)) throw tableError(table, i, spec.name, 'a value is not a finite number');
  return label.ignored ? 0 : Math.min(spec.upper as number, Math.max(spec.lower as number, v));
}

function describeValues(values: readonly (string | number)[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ');
}

/** A missing label, counted: undefined under "dropRow" (the row is dropped), an error under "error". */
function missingLabel(table: RawTable, spec: LabelColumnSpec, i: number, counts: PrivateCounts): undefined {
  counts.missing[spec.name]++;
  if (spec.missing === 'dropRow') return undefined;
  throw tableError(table, i, spec.name, 'missing label (the schema says "missing": "error")');
}

/** Writes the features of row i from x[base]; false when the row is dropped for a missing value. */
function encodeFeatures(table: RawTable, layout: FeatureLayout, i: number, x: Float64Array, base: number, counts: PrivateCounts): boolean {
  const { specs, columns, slotOfLevel, offsets } = layout;
  for (let j = 0; j < specs.length; j++) {
    const spec = specs[j];
    const at = base + offsets[j];
    const written = spec.type === 'numeric'
      ? encodeNumeric(table, spec, (columns[j] as NumericColumn).values, i, x, at, counts)
      : encodeCategorical(table, spec, columns[j], slotOfLevel[j], i, x, at, counts);
    if (!written) return false;
  }
  return true;
}

/** A numeric cell, clipped to the bounds: its value feature and/or a 1 in its bin. False when the row is dropped. */
function encodeNumeric(table: RawTable, spec: NumericColumnSpec, values: Float64Array, i: number, x: Float64Array, at: number, counts: PrivateCounts): boolean {
  let v = values[i];
  if (Number.isNaN(v)) {
    if (!keepMissing(table, spec, i, counts)) return false;
    v = spec.fillValue as number;
  } else if (!Number.isFinite(v)) throw tableError(table, i, spec.name, 'a value is not a finite number');
  if (v < spec.lower) {
    v = spec.lower;
    counts.clipped[spec.name]++;
  } else if (v > spec.upper) {
    v = spec.upper;
    counts.clipped[spec.name]++;
  }
  if (spec.encode === 'bins') x[at + binIndex(spec.bins as readonly number[], v)] = 1;
  else {
    x[at] = numericValueFeature(spec, v);
    if (spec.bins !== undefined) x[at + 1 + binIndex(spec.bins, v)] = 1;
  }
  return true;
}

/** A categorical cell: a 1 in its category's slot, or in the "other" slot. False when the row is dropped. */
function encodeCategorical(
  table: RawTable, spec: CategoricalColumnSpec, column: RawColumn, slots: readonly number[] | undefined, i: number, x: Float64Array, at: number, counts: PrivateCounts,
): boolean {
  const otherSlot = spec.categories.length;
  let slot: number;
  if (column.kind === 'categorical' ? column.codes[i] < 0 : Number.isNaN(column.values[i])) {
    if (!keepMissing(table, spec, i, counts)) return false;
    slot = otherSlot;
  } else if (column.kind === 'categorical') slot = (slots as readonly number[])[column.codes[i]];
  else {
    // A column read as numbers: its value is matched against the categories' text.
    const v = column.values[i];
    const k = spec.categories.findIndex((c) => c.trim() !== '' && Number(c) === v);
    slot = k < 0 ? otherSlot : k;
  }
  if (slot === otherSlot) counts.other[spec.name]++;
  x[at + slot] = 1;
  return true;
}

/** A missing feature value, counted: false under "dropRow" (the row is dropped), an error under "error", true to fill it ("fill", "other"). */
function keepMissing(table: RawTable, spec: FeatureSpec, i: number, counts: PrivateCounts): boolean {
  counts.missing[spec.name]++;
  if (spec.missing === 'dropRow') return false;
  if (spec.missing === 'error') throw tableError(table, i, spec.name, 'missing value (the schema says "missing": "error")');
  return true;
}

/** The schema's row transform, then its intercept column. */
function transformRows(encoded: Dataset, schema: Schema): Dataset {
  let transformed: Dataset;
  switch (schema.rowTransform) {
    case 'normalize':
      transformed = normalizeRows(encoded);
      break;
    case 'scale':
      transformed = scaleRows(encoded, 1 / schemaEncodedNormBound(schema));
      break;
    case 'clip':
      transformed = clipRows(encoded, schema.clipNorm as number);
      break;
    case 'none':
      transformed = encoded;
      break;
  }
  return schema.intercept === null ? transformed : addIntercept(transformed, { value: schema.intercept }).dataset;
}
