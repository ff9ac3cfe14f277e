/**
 * The public schema: what the data owner declares *without looking at the private data*, and the
 * only thing dpfit uses to turn raw columns into features (docs/design.md, "Data").
 *
 * - numeric columns carry public bounds [lower, upper]: values are clipped to them, then scaled
 *   by them (never by the observed min/max, which would leak: one extreme row would move every
 *   other row's features). Two public options make heavy-tailed or non-monotone columns useful
 *   to a linear model (`numeric-encoding.ts`): `"transform": "log1p"` (scale log(1 + v) between
 *   log(1 + lower) and log(1 + upper)) and `"bins"`, cut points declared in the schema that one-hot
 *   the clipped value into intervals (`"encode"`: "bins" or "valueAndBins"). Cut points must be
 *   chosen without the private data (round numbers from domain knowledge); cut points at the
 *   data's quantiles would leak, like a min/max scaler;
 * - categorical columns carry their category list: one-hot, with one extra "other" slot for
 *   unknown values (never a new column, whose existence would reveal a row);
 * - the label column says which values are the positive class (and which the negative; any other
 *   value is an error), or gives public bounds for a numeric label;
 * - a missing-value policy per column: "error", "dropRow", "fill" (numeric, with a public
 *   `fillValue`) or "other" (categorical: the "other" slot). "dropRow" makes the number of rows
 *   depend on the data: replacing one record may remove a row, so account such data under
 *   "addOrRemoveOne" neighbours (or prefer "fill"/"other", which keep n fixed);
 * - a per-row transform (`../transforms.ts`): "normalize" (default: unit L2 rows, `003` Sec. 5),
 *   "scale" (divide by the schema's own norm bound), "clip" (to `clipNorm`) or "none"; then an
 *   optional intercept column.
 *
 * Every output row is a function of that row and the schema alone (`apply.ts`), so replacing one
 * private row changes only that row of the output (the property `test/data/schema/schema.test.ts`
 * checks), and the row-norm bound the learners need follows from the schema (`bounds.ts`,
 * `schemaRowNormBound`), not from data.
 *
 * The JSON form is the same object (`parse.ts`: `parseSchema` validates it, `schemaToJson` writes
 * it):
 *
 * ```json
 * {"version": 1, "columns": [
 *   {"name": "age", "type": "numeric", "lower": 17, "upper": 90},
 *   {"name": "sex", "type": "categorical", "categories": ["Female", "Male"], "missing": "other"},
 *   {"name": "income", "type": "label", "positive": [">50K"], "negative": ["<=50K"]}]}
 * ```
 *
 * This file holds the types of a validated schema. Browser-safe, like the whole folder: imports
 * nothing from Node.
 */

export const SCHEMA_VERSION = 1;

/** What a schema that `suggestSchema` wrote says about itself until a person reviews it. */
export const SUGGESTED_PROVENANCE = 'suggested-from-private-data';

export type NumericScale = 'unit' | 'symmetric' | 'none';
export type NumericTransform = 'identity' | 'log1p';
export type NumericEncoding = 'value' | 'bins' | 'valueAndBins';
export type MissingPolicy = 'error' | 'dropRow' | 'fill' | 'other';
export type RowTransform = 'normalize' | 'scale' | 'clip' | 'none';

export interface NumericColumnSpec {
  readonly name: string;
  readonly type: 'numeric';
  /** Public lower bound: smaller values are raised to it. */
  readonly lower: number;
  /** Public upper bound (> lower): larger values are lowered to it. */
  readonly upper: number;
  /** After clipping: "unit" maps [lower, upper] to [0, 1] (default), "symmetric" to [-1, 1], "none" keeps the value. */
  readonly scale: NumericScale;
  /** "error" (default), "dropRow" or "fill" (with `fillValue`). */
  readonly missing: 'error' | 'dropRow' | 'fill';
  /** The public value used for a missing entry with `missing: "fill"` (clipped and scaled like data). */
  readonly fillValue?: number;
  /**
   * A public monotone transform applied after clipping and before scaling: "log1p" scales
   * log(1 + v) between log(1 + lower) and log(1 + upper) (needs lower > -1). Absent: the value
   * itself ("identity", the default, is not written back).
   */
  readonly transform?: NumericTransform;
  /**
   * Public cut points c_1 < ... < c_k with lower < c_1 and c_k <= upper, in the column's raw units:
   * the clipped value is one-hot encoded into the k + 1 bins [lower, c_1), [c_1, c_2), ...,
   * [c_k, upper]. Declared without looking at the private data.
   */
  readonly bins?: readonly number[];
  /** With `bins`: "bins" (default; the bins only) or "valueAndBins" (the scaled value, then the bins). */
  readonly encode?: 'bins' | 'valueAndBins';
  /** Where the bounds come from (kept in the JSON, for reviewers). */
  readonly note?: string;
}

export interface CategoricalColumnSpec {
  readonly name: string;
  readonly type: 'categorical';
  /** The public category list; each gets one one-hot slot, plus one "other" slot for anything else. */
  readonly categories: readonly string[];
  /** "other" (default: the other slot), "error" or "dropRow". */
  readonly missing: 'error' | 'dropRow' | 'other';
  readonly note?: string;
}

export interface LabelColumnSpec {
  readonly name: string;
  readonly type: 'label';
  /** Binary label: the values of the positive class (strings or numbers). */
  readonly positive?: readonly (string | number)[];
  /** Binary label: the values of the negative class; any value in neither list is an error. */
  readonly negative?: readonly (string | number)[];
  /**
   * Multi-class label: the public list of class values; class k is encoded y = k (any other value
   * is an error). Give this instead of positive/negative.
   */
  readonly classes?: readonly (string | number)[];
  /** Binary label encoding: "zeroOne" (default, y in {0, 1}) or "plusMinusOne" (y in {-1, +1}). */
  readonly encoding: 'zeroOne' | 'plusMinusOne';
  /** Numeric label (regression): public bounds; values are clipped to them. */
  readonly lower?: number;
  readonly upper?: number;
  /** "error" (default) or "dropRow". */
  readonly missing: 'error' | 'dropRow';
  readonly note?: string;
}

export interface IgnoredColumnSpec {
  readonly name: string;
  readonly type: 'ignore';
  readonly note?: string;
}

export type ColumnSpec = NumericColumnSpec | CategoricalColumnSpec | LabelColumnSpec | IgnoredColumnSpec;

/** How CSV files described by the schema are laid out (all optional). */
export interface CsvDialectSpec {
  /** Whether files have a header line (default true). Without one, `columns` are in file order. */
  readonly header?: boolean;
  readonly delimiter?: string;
  readonly comment?: string;
  /** Tokens that mean "missing" (default ["", "?"]). */
  readonly missing?: readonly string[];
}

/** A validated schema with every default filled in. */
export interface Schema {
  readonly version: 1;
  readonly name?: string;
  readonly description?: string;
  /** "declared" (default) or "suggested-from-private-data" (written by `suggestSchema`). */
  readonly provenance: string;
  /** Shown next to a suggested schema. */
  readonly warning?: string;
  readonly csv?: CsvDialectSpec;
  /** In file order (this is the column order of header-less files). */
  readonly columns: readonly ColumnSpec[];
  /** The per-row transform applied after encoding (default "normalize"). */
  readonly rowTransform: RowTransform;
  /** Row clipping norm for rowTransform "clip". */
  readonly clipNorm?: number;
  /** Value of an intercept column appended after the row transform, or null for none (default). */
  readonly intercept: number | null;
}
