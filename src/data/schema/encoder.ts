/**
 * The schema's encoding compiled once and applied in place (`applySchema` and the chunked readers:
 * `node/read.ts` encodes each chunk of parsed rows straight into the rows' final store, the
 * out-of-core reader into its block). Each kept row is written once, at its final place: the
 * label, the features (numeric value, log1p, bins; categorical one-hot with "other"), then the
 * row transform and the intercept on the row itself. No per-cell function call, no copy of the
 * dataset per transform: the rows are those the whole-table pipeline (encode, then
 * `normalizeRows` / `scaleRows` / `clipRows`, then `addIntercept`) gives, bit for bit, since each
 * row goes through the same arithmetic in the same order (`test/data/schema/encoder.test.ts`
 * checks it against that pipeline, kept as `test/helpers/reference-apply-schema.ts`).
 *
 * Semantics (`apply.ts` states them for users): rows in order, the label first; the first
 * offending cell throws (a missing value under "error", an undeclared label, a non-finite
 * number); a missing value under "dropRow" drops the row (what was counted for the row's earlier
 * columns stays counted, as in the row-by-row order). Every output row depends on its input row
 * and the schema alone.
 *
 * Browser-safe.
 */
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import { missingColumnsError } from '../missing-columns.js';
import { findColumn, tableError, type NumericColumn, type RawColumn, type RawTable } from '../table.js';
import { clipRowInPlace, normalizeRowInPlace } from '../transforms.js';
import { requireFinite, requirePositive } from '../../validate.js';
import { labelColumn, schemaEncodedNormBound, schemaFeatureNames } from './bounds.js';
import { binIndex, numericEncodedWidth } from './numeric-encoding.js';
import type { CategoricalColumnSpec, ColumnSpec, LabelColumnSpec, NumericColumnSpec, Schema } from './types.js';

/** y of the positive class (binary labels). */
export const POSITIVE_VALUE = 1;

/** What the encoding met in the private data, per column (`PrivateDiagnostics` of `apply.ts`). */
export interface PrivateCounts {
  readonly clipped: Record<string, number>;
  readonly other: Record<string, number>;
  readonly missing: Record<string, number>;
}

/** What one call of `encode` wrote and met. */
export interface EncodedRows {
  /** Rows written (the rows read minus those dropped for a missing value). */
  readonly kept: number;
  readonly counts: PrivateCounts;
  /** Kept rows of the positive class (binary labels that are read; 0 otherwise). */
  readonly positives: number;
  /** Whether `positives` means anything (a binary label that is read). */
  readonly countsPositives: boolean;
}

type FeatureSpec = NumericColumnSpec | CategoricalColumnSpec;

const enum Op {
  Value = 0,
  Bins = 1,
  ValueAndBins = 2,
  CategoryCodes = 3,
  CategoryNumbers = 4,
}

const enum Scale {
  Unit = 0,
  Symmetric = 1,
  None = 2,
}

const enum Missing {
  Error = 0,
  DropRow = 1,
  Keep = 2,
}

const EMPTY_F64 = new Float64Array(0);
const EMPTY_I32 = new Int32Array(0);

/**
 * One feature column, resolved against a table: everything the row loop reads. A class, every
 * field set in the constructor with its final type, so that all columns share one shape and the
 * loop stays monomorphic.
 */
class ColumnOp {
  op: Op = Op.Value;
  readonly name: string;
  /** Offset of the column's first feature in a row. */
  readonly offset: number;
  readonly missing: Missing;
  /** Numeric columns: the raw values (NaN = missing); a numeric column for a categorical spec too. */
  values: Float64Array = EMPTY_F64;
  /** Categorical columns read as text: the codes (-1 = missing) and each level's slot. */
  codes: Int32Array = EMPTY_I32;
  slots: Int32Array = EMPTY_I32;
  lower = NaN;
  upper = NaN;
  fill = NaN;
  log1p = false;
  scale: Scale = Scale.Unit;
  /** t(lower), t(upper) and t(upper) - t(lower), t the column's transform. */
  lo = NaN;
  hi = NaN;
  range = NaN;
  /**
   * A scaled value with finite bounds and no transform (unit or symmetric scale): a value within
   * its bounds is neither missing, infinite nor clipped, and its scaled value needs no clamp
   * (rounding is monotone: t - lo <= range), so the row loop takes a short path for it.
   */
  plain = false;
  bins: readonly number[] = [];
  /** Categorical: the "other" slot (categories.length), and the categories, matched by number for numeric raw columns. */
  other = 0;
  categories: readonly string[] = [];
  /** Counters for this column (`PrivateCounts` entries). */
  clipped = 0;
  otherCount = 0;
  missingCount = 0;

  constructor(name: string, offset: number, missing: Missing) {
    this.name = name;
    this.offset = offset;
    this.missing = missing;
  }
}


/** The schema's column that a table names (the error names it, never the table's own columns: `../missing-columns.ts`). */
function schemaColumn(table: RawTable, spec: ColumnSpec): RawColumn {
  const column = findColumn(table, spec.name);
  if (column === undefined) throw missingColumnsError(table.source, [spec.name], 'columns');
  return column;
}

function transformed(log1p: boolean, v: number): number {
  return log1p ? Math.log1p(v) : v;
}

/** How the label's raw values become y, resolved against a table (a class: one shape whatever the label). */
class LabelOp {
  /** 0: numeric (regression, or ignored); 1: classes by level code; 2: classes by numeric value. */
  kind: 0 | 1 | 2 = 0;
  values: Float64Array = EMPTY_F64;
  codes: Int32Array = EMPTY_I32;
  /** kind 1: each level's class (-1: not declared). */
  levelClass: Int32Array = EMPTY_I32;
  /** kind 2: the declared numbers of each class. */
  numbers: readonly (readonly number[])[] = [];

  constructor(readonly ignored: boolean, readonly multiClass: boolean, readonly negativeValue: number) {}
}

/** The classes' declared values: one group per class (multi-class), or [negative, positive]. */
function classGroups(label: LabelColumnSpec): readonly (readonly (string | number)[])[] {
  return label.classes !== undefined
    ? label.classes.map((v) => [v])
    : [label.negative as readonly (string | number)[], label.positive as readonly (string | number)[]];
}

function labelOp(table: RawTable, spec: LabelColumnSpec, ignored: boolean): LabelOp {
  // Ignored (prediction): never read, y = 0 for every row.
  const column: RawColumn = ignored ? { kind: 'numeric', name: spec.name, values: new Float64Array(table.rowCount) } : schemaColumn(table, spec);
  const classified = (spec.positive !== undefined || spec.classes !== undefined) && !ignored;
  if (!classified && !ignored && column.kind !== 'numeric') throw new DataFormatError(table.source, 'the label is declared numeric (lower/upper) but the column holds text', undefined, spec.name);
  const op = new LabelOp(ignored, spec.classes !== undefined && !ignored, spec.encoding === 'plusMinusOne' ? -1 : 0);
  if (!classified) {
    op.values = (column as NumericColumn).values;
    return op;
  }
  const groups = classGroups(spec);
  if (column.kind === 'categorical') {
    op.kind = 1;
    op.codes = column.codes;
    op.levelClass = Int32Array.from(column.levels, (level): number => {
      const trimmed = level.trim();
      const matches = (v: string | number): boolean => (typeof v === 'number' ? trimmed !== '' && Number(trimmed) === v : v === trimmed);
      return groups.findIndex((group) => group.some(matches));
    });
    return op;
  }
  op.kind = 2;
  op.values = column.values;
  op.numbers = groups.map((group) => group.map(Number).filter((v) => !Number.isNaN(v)));
  return op;
}

function describeValues(values: readonly (string | number)[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ');
}

/** The constants of the row loop. */
interface RowShape {
  readonly d: number;
  readonly width: number;
  /** Clear each row first (one-hot slots in a target that is not zeroed). */
  readonly clear: boolean;
  /** 0 none, 1 normalize, 2 scale, 3 clip. */
  readonly transform: number;
  readonly factor: number;
  readonly clipNorm: number;
  readonly intercept: number | null;
  readonly countsPositives: boolean;
}

/**
 * The rows of the table in order, each kept one written at row at + kept; returns how many were
 * kept. Counts go into the column ops and `tally` (positives, missing labels, whether the last
 * row read was dropped after writing into its slot), all updated inside the loop: code that runs
 * only after the loop (an object literal, a call) made the optimised loop bail out at every exit.
 */
function encodeLoop(table: RawTable, label: LabelOp, labelSpec: LabelColumnSpec, ops: readonly ColumnOp[], x: Float64Array, y: Float64Array, at: number, shape: RowShape, tally: Float64Array): number {
  const { d, width, clear, transform, factor, clipNorm, intercept, countsPositives } = shape;
  const n0 = table.rowCount;
  let kept = 0;
  let dirty = false; // the previous row was dropped after writing some features (into a zeroed target)
  rows: for (let i = 0; i < n0; i++) {
    const base = (at + kept) * d;
    if (clear || dirty) {
      x.fill(0, base, base + width);
      dirty = false;
    }
    // The label first: a dropped row writes nothing that stays.
    let yi: number;
    if (label.kind === 0) {
      const v = label.values[i];
      if (v !== v) {
        tally[1]++;
        if (labelSpec.missing === 'dropRow') continue;
        throw tableError(table, i, labelSpec.name, 'missing label (the schema says "missing": "error")');
      }
      if (!Number.isFinite(v)) throw tableError(table, i, labelSpec.name, 'a value is not a finite number');
      yi = label.ignored ? 0 : Math.min(labelSpec.upper as number, Math.max(labelSpec.lower as number, v));
    } else {
      let cls: number;
      if (label.kind === 1) {
        const code = label.codes[i];
        cls = code < 0 ? -2 : label.levelClass[code];
      } else {
        const v = label.values[i];
        cls = v !== v ? -2 : label.numbers.findIndex((group) => group.includes(v));
      }
      if (cls === -2) {
        tally[1]++;
        if (labelSpec.missing === 'dropRow') continue;
        throw tableError(table, i, labelSpec.name, 'missing label (the schema says "missing": "error")');
      }
      if (cls === -1) {
        const declared = label.multiClass
          ? `classes: ${describeValues(labelSpec.classes as (string | number)[])}`
          : `positive: ${describeValues(labelSpec.positive as (string | number)[])}; negative: ${describeValues(labelSpec.negative as (string | number)[])}`;
        throw tableError(table, i, labelSpec.name, `a label value that the schema does not declare (${declared})`);
      }
      yi = label.multiClass ? cls : cls === 1 ? POSITIVE_VALUE : label.negativeValue;
    }
    for (let j = 0; j < ops.length; j++) {
      const c = ops[j];
      const o = base + c.offset;
      if (c.op <= Op.ValueAndBins) {
        let v = c.values[i];
        if (c.plain && v >= c.lower && v <= c.upper) {
          // The general path's value bit for bit: its clamps change nothing here, and "+ 0" turns
          // -0 into the +0 that Math.max(0, -0) gives (v = -0, lo = +0).
          x[o] = c.scale === Scale.Unit ? (v - c.lo) / c.range + 0 : (2 * (v - c.lo)) / c.range - 1;
          continue;
        }
        if (v !== v) {
          c.missingCount++;
          if (c.missing !== Missing.Keep) {
            if (c.missing === Missing.Error) throw tableError(table, i, c.name, 'missing value (the schema says "missing": "error")');
            dirty = true;
            tally[2] = i + 1;
            continue rows;
          }
          v = c.fill;
        } else if (v === Infinity || v === -Infinity) throw tableError(table, i, c.name, 'a value is not a finite number');
        if (v < c.lower) {
          v = c.lower;
          c.clipped++;
        } else if (v > c.upper) {
          v = c.upper;
          c.clipped++;
        }
        if (c.op === Op.Bins) {
          x[o + binIndex(c.bins, v)] = 1;
          continue;
        }
        // numericValueFeature: t(v) scaled by t(lower), t(upper), clamped to the scaled range.
        const t = c.log1p ? Math.log1p(v) : v;
        let f: number;
        if (c.scale === Scale.Unit) f = Math.max(0, Math.min(1, (t - c.lo) / c.range));
        else if (c.scale === Scale.Symmetric) f = Math.max(-1, Math.min(1, (2 * (t - c.lo)) / c.range - 1));
        else f = Math.max(c.lo, Math.min(c.hi, t));
        x[o] = f;
        if (c.op === Op.ValueAndBins) x[o + 1 + binIndex(c.bins, v)] = 1;
        continue;
      }
      let slot: number;
      const missingHere = c.op === Op.CategoryCodes ? c.codes[i] < 0 : c.values[i] !== c.values[i];
      if (missingHere) {
        c.missingCount++;
        if (c.missing !== Missing.Keep) {
          if (c.missing === Missing.Error) throw tableError(table, i, c.name, 'missing value (the schema says "missing": "error")');
          dirty = true;
          tally[2] = i + 1;
          continue rows;
        }
        slot = c.other;
      } else if (c.op === Op.CategoryCodes) slot = c.slots[c.codes[i]];
      else {
        const v = c.values[i];
        const k = c.categories.findIndex((category) => category.trim() !== '' && Number(category) === v);
        slot = k < 0 ? c.other : k;
      }
      if (slot === c.other) c.otherCount++;
      x[o + slot] = 1;
    }
    // The row transform on the row itself, then the intercept (`transforms.ts`: the same arithmetic).
    if (transform === 1) normalizeRowInPlace(x, base, base + width);
    else if (transform === 2) for (let k = base; k < base + width; k++) x[k] = x[k] * factor;
    else if (transform === 3) clipRowInPlace(x, base, base + width, clipNorm);
    if (intercept !== null) x[base + width] = intercept;
    y[at + kept] = yi;
    if (countsPositives && yi === POSITIVE_VALUE) tally[0]++;
    kept++;
  }
  return kept;
}

/**
 * The schema compiled: `encode(table, x, y, at)` writes the table's kept rows from row `at` of x
 * (rows of `d` values, row-major) and y. x must hold zeros where nothing is written unless
 * `zeroed` is false (then each row is cleared first where one-hot slots are).
 */
export interface SchemaEncoder {
  /** Features per output row (the intercept included). */
  readonly d: number;
  readonly featureNames: readonly string[];
  /** The label of a zero row (`PreparedData.zeroRowLabel`). */
  readonly zeroRowLabel: number;
  encode(table: RawTable, x: Float64Array, y: Float64Array, at: number, zeroed?: boolean): EncodedRows;
}

/** Compiles `schema` (label read, or ignored for data to predict). Checks the row transform's constants first. */
export function schemaEncoder(schema: Schema, ignoreLabel = false): SchemaEncoder {
  const specs = schema.columns.filter((c): c is FeatureSpec => c.type === 'numeric' || c.type === 'categorical');
  const labelSpec = labelColumn(schema);
  const offsets: number[] = [];
  let width = 0;
  for (const spec of specs) {
    offsets.push(width);
    width += spec.type === 'numeric' ? numericEncodedWidth(spec) : spec.categories.length + 1;
  }
  // The row transform's and the intercept's constants, checked as `clipRows`, `scaleRows`, `addIntercept` do.
  const transform = schema.rowTransform;
  const clipNorm = transform === 'clip' ? requirePositive('clipNorm', schema.clipNorm as number) : 0;
  const factor = transform === 'scale' ? requireFinite('factor', 1 / schemaEncodedNormBound(schema)) : 1;
  const intercept = schema.intercept;
  if (intercept !== null) {
    requireFinite('value', intercept);
    if (intercept === 0) throw new InvalidParameterError('value', intercept, 'non-zero');
  }
  const d = width + (intercept === null ? 0 : 1);
  const featureNames = schemaFeatureNames({ ...schema, intercept: null });
  if (intercept !== null) featureNames.push('(intercept)');
  const oneHot = specs.some((s) => s.type === 'categorical' || s.bins !== undefined);
  const classified = (labelSpec.positive !== undefined || labelSpec.classes !== undefined) && !ignoreLabel;
  const multiClass = labelSpec.classes !== undefined && !ignoreLabel;
  const negativeValue = labelSpec.encoding === 'plusMinusOne' ? -1 : 0;
  const zeroRowLabel = multiClass ? 0 : classified ? negativeValue : Math.min(labelSpec.upper ?? 0, Math.max(labelSpec.lower ?? 0, 0));

  /** The feature columns resolved against the table, each checked against its declared type. */
  function columnOps(table: RawTable, columns: readonly RawColumn[]): ColumnOp[] {
    return specs.map((spec, j): ColumnOp => {
      const column = columns[j];
      const op = new ColumnOp(spec.name, offsets[j], spec.missing === 'error' ? Missing.Error : spec.missing === 'dropRow' ? Missing.DropRow : Missing.Keep);
      if (spec.type === 'numeric') {
        if (column.kind !== 'numeric') throw new DataFormatError(table.source, 'is declared numeric but holds text', undefined, spec.name);
        op.op = spec.encode === 'bins' ? Op.Bins : spec.bins !== undefined ? Op.ValueAndBins : Op.Value;
        op.values = column.values;
        op.lower = spec.lower;
        op.upper = spec.upper;
        op.fill = spec.fillValue ?? NaN;
        op.log1p = spec.transform === 'log1p';
        op.scale = spec.scale === 'unit' ? Scale.Unit : spec.scale === 'symmetric' ? Scale.Symmetric : Scale.None;
        op.lo = transformed(op.log1p, spec.lower);
        op.hi = transformed(op.log1p, spec.upper);
        op.range = op.hi - op.lo;
        op.plain = op.op === Op.Value && !op.log1p && op.scale !== Scale.None && Number.isFinite(op.lo) && Number.isFinite(op.hi) && op.range > 0 && Number.isFinite(2 * op.range);
        op.bins = spec.bins ?? [];
        return op;
      }
      op.other = spec.categories.length;
      op.categories = spec.categories;
      if (column.kind === 'categorical') {
        const index = new Map(spec.categories.map((c, k) => [c, k] as const));
        op.op = Op.CategoryCodes;
        op.codes = column.codes;
        op.slots = Int32Array.from(column.levels, (level) => index.get(level.trim()) ?? spec.categories.length);
      } else {
        op.op = Op.CategoryNumbers; // a column read as numbers: its value is matched against the categories' text
        op.values = column.values;
      }
      return op;
    });
  }

  function encode(table: RawTable, x: Float64Array, y: Float64Array, at: number, zeroed = true): EncodedRows {
    // Resolve columns first, in the order of the row-by-row path: no work before the table is known to fit the schema.
    const columns = specs.map((spec) => schemaColumn(table, spec));
    const label = labelOp(table, labelSpec, ignoreLabel);
    const ops = columnOps(table, columns);
    const shape: RowShape = { d, width, clear: oneHot && !zeroed, transform: transform === 'normalize' ? 1 : transform === 'scale' ? 2 : transform === 'clip' ? 3 : 0, factor, clipNorm, intercept, countsPositives: classified && !multiClass };
    // positives, missing labels, 1 + the last row dropped after writing into its slot
    const tally = new Float64Array(3);
    const kept = encodeLoop(table, label, labelSpec, ops, x, y, at, shape, tally);
    const positives = tally[0];
    const labelMissing = tally[1];
    // The last row read was dropped after writing some features: leave no partial row past the kept ones.
    if (tally[2] === table.rowCount) x.fill(0, (at + kept) * d, (at + kept) * d + width);
    const clipped: Record<string, number> = {};
    const other: Record<string, number> = {};
    const missing: Record<string, number> = {};
    for (const c of ops) {
      if (c.op <= Op.ValueAndBins) clipped[c.name] = c.clipped;
      else other[c.name] = c.otherCount;
      missing[c.name] = c.missingCount;
    }
    missing[labelSpec.name] = labelMissing;
    return { kept, counts: { clipped, other, missing }, positives, countsPositives: shape.countsPositives };
  }

  return { d, featureNames, zeroRowLabel, encode };
}

/** The counts of two encoded chunks together (undefined: none yet). */
export function addEncodedRows(total: EncodedRows | undefined, part: EncodedRows): EncodedRows {
  if (total === undefined) return part;
  const add = (a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>) => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v + (b[k] ?? 0)]));
  return {
    kept: total.kept + part.kept,
    counts: { clipped: add(total.counts.clipped, part.counts.clipped), other: add(total.counts.other, part.counts.other), missing: add(total.counts.missing, part.counts.missing) },
    positives: total.positives + part.positives,
    countsPositives: total.countsPositives,
  };
}
