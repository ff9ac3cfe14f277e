/**
 * The public schema: what the data owner declares *without looking at the private data*, and the
 * only thing dpfit uses to turn raw columns into features (docs/design.md, "Data"; issue "Data").
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
 * - a per-row transform (`transforms.ts`): "normalize" (default: unit L2 rows, `003` Sec. 5),
 *   "scale" (divide by the schema's own norm bound), "clip" (to `clipNorm`) or "none"; then an
 *   optional intercept column.
 *
 * Every output row is a function of that row and the schema alone, so replacing one private row
 * changes only that row of the output (the property `test/data-schema.test.ts` checks), and the
 * row-norm bound the learners need follows from the schema (`schemaRowNormBound`), not from data.
 *
 * The JSON form is the same object (`parseSchema` validates it, `schemaToJson` writes it):
 *
 * ```json
 * {"version": 1, "columns": [
 *   {"name": "age", "type": "numeric", "lower": 17, "upper": 90},
 *   {"name": "sex", "type": "categorical", "categories": ["Female", "Male"], "missing": "other"},
 *   {"name": "income", "type": "label", "positive": [">50K"], "negative": ["<=50K"]}]}
 * ```
 *
 * Browser-safe: imports nothing from Node.
 */
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import type { CsvColumnType, CsvOptions } from '../csv.js';
import type { Dataset } from '../dataset.js';
import { findColumn, tableError, type RawColumn, type RawTable } from '../table.js';
import { binFeatureNames, binIndex, numericEncodedWidth, numericValueBound, numericValueFeature, parseNumericEncoding } from './numeric-encoding.js';
import { addIntercept, clipRows, normalizeRows, scaleRows } from '../transforms.js';
import { optionNames, rejectUnknownOptions } from '../../validate.js';

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

// ---------------------------------------------------------------------------------------------
// Validation (JSON -> Schema)
// ---------------------------------------------------------------------------------------------

function fail(source: string, where: string, message: string): never {
  throw new DataFormatError(source, `${where}: ${message}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(source: string, where: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') fail(source, where, `must be a string, got ${JSON.stringify(value)}`);
  return value;
}

function finiteNumber(source: string, where: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(source, where, `must be a finite number, got ${JSON.stringify(value)}`);
  return value;
}

function oneOf<T extends string>(source: string, where: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    fail(source, where, `must be one of ${allowed.map((a) => `"${a}"`).join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value as T;
}

function checkKeys(source: string, where: string, object: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) fail(source, where, `unknown field "${key}" (allowed: ${allowed.join(', ')})`);
  }
}

function labelValues(source: string, where: string, value: unknown): (string | number)[] | undefined {
  if (value === undefined) return undefined;
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) fail(source, where, 'must not be empty');
  for (const v of list) {
    if (typeof v !== 'string' && !(typeof v === 'number' && Number.isFinite(v))) fail(source, where, `values must be strings or finite numbers, got ${JSON.stringify(v)}`);
  }
  return list as (string | number)[];
}

function parseColumn(source: string, index: number, raw: unknown, defaultMissing: 'error' | 'dropRow'): ColumnSpec {
  const where0 = `columns[${index}]`;
  if (!isRecord(raw)) fail(source, where0, 'must be an object');
  if (typeof raw.name !== 'string' || raw.name === '') fail(source, `${where0}.name`, 'must be a non-empty string');
  const name = raw.name;
  const where = `column '${name}'`;
  const note = optionalString(source, `${where}.note`, raw.note);
  switch (raw.type) {
    case 'numeric': {
      checkKeys(source, where, raw, ['name', 'type', 'lower', 'upper', 'scale', 'missing', 'fillValue', 'transform', 'bins', 'encode', 'note']);
      const lower = finiteNumber(source, `${where}.lower`, raw.lower);
      const upper = finiteNumber(source, `${where}.upper`, raw.upper);
      if (!(lower < upper)) fail(source, where, `lower (${lower}) must be < upper (${upper})`);
      const scale = oneOf(source, `${where}.scale`, raw.scale, ['unit', 'symmetric', 'none'] as const, 'unit');
      const missing = oneOf(source, `${where}.missing`, raw.missing, ['error', 'dropRow', 'fill'] as const, defaultMissing);
      let fillValue: number | undefined;
      if (missing === 'fill') fillValue = finiteNumber(source, `${where}.fillValue`, raw.fillValue);
      else if (raw.fillValue !== undefined) fail(source, `${where}.fillValue`, 'is only used with "missing": "fill"');
      const encoding = parseNumericEncoding(source, where, raw, lower, upper);
      return { name, type: 'numeric', lower, upper, scale, missing, ...(fillValue !== undefined ? { fillValue } : {}), ...encoding, ...(note ? { note } : {}) };
    }
    case 'categorical': {
      checkKeys(source, where, raw, ['name', 'type', 'categories', 'missing', 'note']);
      if (!Array.isArray(raw.categories) || raw.categories.length === 0) fail(source, `${where}.categories`, 'must be a non-empty list of strings');
      const seen = new Set<string>();
      for (const c of raw.categories) {
        if (typeof c !== 'string') fail(source, `${where}.categories`, `must hold strings, got ${JSON.stringify(c)}`);
        if (seen.has(c)) fail(source, `${where}.categories`, `lists "${c}" twice`);
        seen.add(c);
      }
      const missing = oneOf(source, `${where}.missing`, raw.missing, ['error', 'dropRow', 'other'] as const, 'other');
      return { name, type: 'categorical', categories: [...(raw.categories as string[])], missing, ...(note ? { note } : {}) };
    }
    case 'label': {
      checkKeys(source, where, raw, ['name', 'type', 'positive', 'negative', 'classes', 'encoding', 'lower', 'upper', 'missing', 'note']);
      if (raw.classes !== undefined) {
        const classes = labelValues(source, `${where}.classes`, raw.classes) as (string | number)[];
        if (raw.positive !== undefined || raw.negative !== undefined || raw.lower !== undefined || raw.upper !== undefined || (raw.encoding !== undefined && raw.encoding !== 'zeroOne')) {
          fail(source, where, 'a multi-class label gives "classes" only (not "positive"/"negative", "lower"/"upper", or an "encoding": y is the class index)');
        }
        if (classes.length < 2) fail(source, `${where}.classes`, 'must list at least two classes');
        if (new Set(classes.map((v) => typeof v)).size > 1) fail(source, `${where}.classes`, 'class values must be all strings or all numbers');
        if (new Set(classes.map(String)).size !== classes.length) fail(source, `${where}.classes`, 'must not repeat a class');
        const missingPolicy = oneOf(source, `${where}.missing`, raw.missing, ['error', 'dropRow'] as const, 'error');
        return { name, type: 'label', classes, encoding: 'zeroOne', missing: missingPolicy, ...(note ? { note } : {}) };
      }
      const positive = labelValues(source, `${where}.positive`, raw.positive);
      const negative = labelValues(source, `${where}.negative`, raw.negative);
      const encoding = oneOf(source, `${where}.encoding`, raw.encoding, ['zeroOne', 'plusMinusOne'] as const, 'zeroOne');
      const missing = oneOf(source, `${where}.missing`, raw.missing, ['error', 'dropRow'] as const, 'error');
      const binary = positive !== undefined || negative !== undefined;
      const numeric = raw.lower !== undefined || raw.upper !== undefined;
      if (binary === numeric) fail(source, where, 'give either "positive" and "negative" (binary label) or "lower" and "upper" (numeric label)');
      if (binary) {
        if (positive === undefined || negative === undefined) fail(source, where, 'a binary label needs both "positive" and "negative" value lists (any other value is an error)');
        const kinds = new Set([...positive, ...negative].map((v) => typeof v));
        if (kinds.size > 1) fail(source, where, 'label values must be all strings or all numbers');
        const pos = new Set(positive.map(String));
        for (const v of negative) if (pos.has(String(v))) fail(source, where, `${JSON.stringify(v)} is both positive and negative`);
        return { name, type: 'label', positive, negative, encoding, missing, ...(note ? { note } : {}) };
      }
      const lower = finiteNumber(source, `${where}.lower`, raw.lower);
      const upper = finiteNumber(source, `${where}.upper`, raw.upper);
      if (!(lower < upper)) fail(source, where, `lower (${lower}) must be < upper (${upper})`);
      return { name, type: 'label', lower, upper, encoding, missing, ...(note ? { note } : {}) };
    }
    case 'ignore':
      checkKeys(source, where, raw, ['name', 'type', 'note']);
      return { name, type: 'ignore', ...(note ? { note } : {}) };
    default:
      fail(source, `${where}.type`, `must be "numeric", "categorical", "label" or "ignore", got ${JSON.stringify(raw.type)}`);
  }
}

/**
 * Validates a schema given as JSON (already parsed) and fills in the defaults. Errors are
 * `DataFormatError`s naming `source` (the schema file) and the offending field.
 *
 * @example
 * const schema = parseSchema(JSON.parse(readFileSync('adult.schema.json', 'utf8')), 'adult.schema.json');
 */
export function parseSchema(json: unknown, source = 'schema'): Schema {
  if (!isRecord(json)) fail(source, 'schema', 'must be a JSON object');
  checkKeys(source, 'schema', json, ['$comment', 'version', 'name', 'description', 'provenance', 'warning', 'csv', 'columns', 'missing', 'rowTransform', 'clipNorm', 'intercept']);
  if (json.version !== SCHEMA_VERSION) fail(source, 'version', `must be ${SCHEMA_VERSION}, got ${JSON.stringify(json.version)}`);
  const defaultMissing = oneOf(source, 'missing', json.missing, ['error', 'dropRow'] as const, 'error');
  if (!Array.isArray(json.columns) || json.columns.length === 0) fail(source, 'columns', 'must be a non-empty list');
  const columns = json.columns.map((c, i) => parseColumn(source, i, c, defaultMissing));
  const names = new Set<string>();
  for (const c of columns) {
    if (names.has(c.name)) fail(source, 'columns', `'${c.name}' is declared twice`);
    names.add(c.name);
  }
  const labels = columns.filter((c) => c.type === 'label');
  if (labels.length !== 1) fail(source, 'columns', `must declare exactly one column of type "label", found ${labels.length}`);
  if (!columns.some((c) => c.type === 'numeric' || c.type === 'categorical')) fail(source, 'columns', 'must declare at least one feature (numeric or categorical)');
  let csv: CsvDialectSpec | undefined;
  if (json.csv !== undefined) {
    if (!isRecord(json.csv)) fail(source, 'csv', 'must be an object');
    checkKeys(source, 'csv', json.csv, ['header', 'delimiter', 'comment', 'missing']);
    const { header, delimiter, comment, missing } = json.csv;
    if (header !== undefined && typeof header !== 'boolean') fail(source, 'csv.header', 'must be true or false');
    if (delimiter !== undefined && (typeof delimiter !== 'string' || delimiter.length !== 1)) fail(source, 'csv.delimiter', 'must be one character');
    if (comment !== undefined && (typeof comment !== 'string' || comment.length !== 1)) fail(source, 'csv.comment', 'must be one character');
    if (missing !== undefined && (!Array.isArray(missing) || !missing.every((m) => typeof m === 'string'))) fail(source, 'csv.missing', 'must be a list of strings');
    csv = {
      ...(header !== undefined ? { header } : {}),
      ...(delimiter !== undefined ? { delimiter } : {}),
      ...(comment !== undefined ? { comment } : {}),
      ...(missing !== undefined ? { missing: [...(missing as string[])] } : {}),
    };
  }
  const rowTransform = oneOf(source, 'rowTransform', json.rowTransform, ['normalize', 'scale', 'clip', 'none'] as const, 'normalize');
  let clipNorm: number | undefined;
  if (rowTransform === 'clip') {
    clipNorm = finiteNumber(source, 'clipNorm', json.clipNorm);
    if (!(clipNorm > 0)) fail(source, 'clipNorm', `must be > 0, got ${clipNorm}`);
  } else if (json.clipNorm !== undefined) fail(source, 'clipNorm', 'is only used with "rowTransform": "clip"');
  let intercept: number | null = null;
  if (json.intercept === true) intercept = 1;
  else if (typeof json.intercept === 'number') {
    intercept = finiteNumber(source, 'intercept', json.intercept);
    if (intercept === 0) fail(source, 'intercept', 'must not be 0 (use false for no intercept)');
  } else if (json.intercept !== undefined && json.intercept !== false && json.intercept !== null) fail(source, 'intercept', 'must be true, false or a number');
  const provenance = optionalString(source, 'provenance', json.provenance) ?? 'declared';
  const name = optionalString(source, 'name', json.name);
  const description = optionalString(source, 'description', json.description);
  const warning = optionalString(source, 'warning', json.warning);
  return {
    version: 1,
    ...(name !== undefined ? { name } : {}),
    ...(description !== undefined ? { description } : {}),
    provenance,
    ...(warning !== undefined ? { warning } : {}),
    ...(csv !== undefined ? { csv } : {}),
    columns,
    rowTransform,
    ...(clipNorm !== undefined ? { clipNorm } : {}),
    intercept,
  };
}

/** The JSON form of a schema (round-trips through `parseSchema`). */
export function schemaToJson(schema: Schema): Record<string, unknown> {
  const { intercept, ...rest } = schema;
  return JSON.parse(JSON.stringify({ ...rest, intercept: intercept === null ? false : intercept })) as Record<string, unknown>;
}

/** Whether the schema was suggested from data and not yet reviewed (its provenance says so). */
export function isSuggestedSchema(schema: Schema): boolean {
  return schema.provenance === SUGGESTED_PROVENANCE;
}

// ---------------------------------------------------------------------------------------------
// Features and bounds (public: computed from the schema only)
// ---------------------------------------------------------------------------------------------

/** The slot name of a categorical column's "other" category. */
export function otherSlotName(column: string): string {
  return `${column}=<other>`;
}

/** The label column of the schema. */
export function labelColumn(schema: Schema): LabelColumnSpec {
  return schema.columns.find((c): c is LabelColumnSpec => c.type === 'label') as LabelColumnSpec;
}

/**
 * Feature names in output order: a numeric column gives its name (or `log1p(name)`) unless it is
 * encoded by bins only, then one `name=[a,b)` per bin; a categorical column one `name=category`
 * per category and `name=<other>`; then `(intercept)` if the schema has one.
 */
export function schemaFeatureNames(schema: Schema): string[] {
  const names: string[] = [];
  for (const c of schema.columns) {
    if (c.type === 'numeric') {
      if (c.encode !== 'bins') names.push(c.transform === 'log1p' ? `log1p(${c.name})` : c.name);
      if (c.bins !== undefined) names.push(...binFeatureNames(c));
    } else if (c.type === 'categorical') {
      for (const category of c.categories) names.push(`${c.name}=${category}`);
      names.push(otherSlotName(c.name));
    }
  }
  if (schema.intercept !== null) names.push('(intercept)');
  return names;
}

/** Rounds a bound up by a few ulps: a bound must never be below the true value. */
function roundUp(value: number): number {
  return value === 0 ? 0 : value * (1 + 4 * Number.EPSILON);
}

/**
 * The L2 norm bound of encoded rows *before* the row transform: each numeric value feature is at
 * most 1 in absolute value (or max(|t(lower)|, |t(upper)|) with scale "none", t the column's
 * transform), each binned column contributes exactly one 1 and each categorical column exactly
 * one 1, so B0 = sqrt(sum of squares). Public: it reads only the schema.
 */
export function schemaEncodedNormBound(schema: Schema): number {
  let s = 0;
  for (const c of schema.columns) {
    if (c.type === 'numeric') {
      if (c.encode !== 'bins') s += numericValueBound(c) ** 2;
      if (c.bins !== undefined) s += 1;
    } else if (c.type === 'categorical') s += 1;
  }
  return roundUp(Math.sqrt(s));
}

/**
 * The public bound on every output row's L2 norm, the `rowNormBound` the learners need:
 * B = 1 after "normalize" (003 Sec. 5) or "scale", clipNorm after "clip", B0 after "none"; an
 * intercept column of value c raises it to sqrt(B^2 + c^2) (see `addIntercept`).
 */
export function schemaRowNormBound(schema: Schema): number {
  let bound: number;
  switch (schema.rowTransform) {
    case 'normalize':
    case 'scale':
      bound = 1;
      break;
    case 'clip':
      bound = schema.clipNorm as number;
      break;
    case 'none':
      bound = schemaEncodedNormBound(schema);
      break;
  }
  return schema.intercept === null ? bound : roundUp(Math.hypot(bound, schema.intercept));
}

/** The public bound on |y|: 1 for binary labels, K - 1 for K classes (y is the class index), max(|lower|, |upper|) for numeric ones. */
export function schemaLabelBound(schema: Schema): number {
  const label = labelColumn(schema);
  if (label.positive !== undefined) return 1;
  if (label.classes !== undefined) return label.classes.length - 1;
  return Math.max(Math.abs(label.lower as number), Math.abs(label.upper as number));
}

/** Whether the label's declared values are numbers (then files are read with a numeric label column). */
function labelIsNumeric(label: LabelColumnSpec): boolean {
  if (label.classes !== undefined) return typeof label.classes[0] === 'number';
  if (label.positive === undefined) return true;
  return typeof label.positive[0] === 'number';
}

/** How a file is read with a schema: `label: 'ignore'` for data to predict (the label column may be absent; if present it is not read). */
export interface SchemaReadOptions {
  readonly label?: 'required' | 'ignore';
}

/**
 * Reader options for files described by the schema: column types (numeric, categorical, skip) and
 * the CSV dialect (header, delimiter, comment byte, missing tokens). Columns of the file that the
 * schema does not name are skipped by `applySchema`.
 */
export function schemaCsvOptions(schema: Schema, source?: string, options: SchemaReadOptions = {}): CsvOptions {
  rejectUnknownOptions(options, SCHEMA_READ_OPTIONS, 'schemaCsvOptions');
  const ignoreLabel = options.label === 'ignore';
  const columnTypes: Record<string, CsvColumnType> = {};
  for (const c of schema.columns) {
    if (c.type === 'numeric') columnTypes[c.name] = 'numeric';
    else if (c.type === 'categorical') columnTypes[c.name] = 'categorical';
    else if (c.type === 'label') columnTypes[c.name] = ignoreLabel ? 'skip' : labelIsNumeric(c) ? 'numeric' : 'categorical';
    else columnTypes[c.name] = 'skip';
  }
  const header = schema.csv?.header ?? true;
  return {
    ...(source !== undefined ? { source } : {}),
    header,
    ...(header ? {} : { columnNames: schema.columns.map((c) => c.name) }),
    ...(schema.csv?.delimiter !== undefined ? { delimiter: schema.csv.delimiter } : {}),
    ...(schema.csv?.comment !== undefined ? { comment: schema.csv.comment } : {}),
    ...(schema.csv?.missing !== undefined ? { missing: schema.csv.missing } : {}),
    columnTypes,
    ...(ignoreLabel ? { optionalColumns: [labelColumn(schema).name] } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Applying a schema to a table
// ---------------------------------------------------------------------------------------------

/** Statistics of the private data gathered while encoding: for the owner's eyes (`dpfit data inspect`), never for release. */
export interface PrivateDiagnostics {
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

export interface PreparedData {
  readonly dataset: Dataset;
  /** Public bound on every row's L2 norm (from the schema: `schemaRowNormBound`). */
  readonly rowNormBound: number;
  /** Public bound on |y|. */
  readonly labelBound: number;
  readonly rowTransform: RowTransform;
  readonly intercept: number | null;
  readonly privateDiagnostics: PrivateDiagnostics;
  /**
   * The label of a zero row (`dropped-rows.ts`: a record dropped for a missing value is a zero row
   * of the training set, so that n does not depend on the data): a value the label's encoding
   * accepts; x = 0 cancels it in every learner.
   */
  readonly zeroRowLabel: number;
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

function describeValues(values: readonly (string | number)[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ');
}

const SCHEMA_READ_OPTIONS = optionNames<SchemaReadOptions>({ label: true });

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
export function applySchema(table: RawTable, schema: Schema, options: SchemaReadOptions = {}): PreparedData {
  rejectUnknownOptions(options, SCHEMA_READ_OPTIONS, 'applySchema');
  // Resolve columns first: no work before the table is known to fit the schema.
  const features = schema.columns.filter((c): c is NumericColumnSpec | CategoricalColumnSpec => c.type === 'numeric' || c.type === 'categorical');
  const label = labelColumn(schema);
  const ignoreLabel = options.label === 'ignore';
  const resolve = (spec: ColumnSpec): RawColumn => {
    const column = findColumn(table, spec.name);
    if (column === undefined) throw new DataFormatError(table.source, `column '${spec.name}' of the schema is not in the data (columns: ${table.columns.map((c) => c.name).join(', ')})`);
    return column;
  };
  const featureColumns = features.map(resolve);
  // Ignored (prediction): never read, y = 0 for every row; a raw column of zeros stands in.
  const labelRaw: RawColumn = ignoreLabel ? { kind: 'numeric', name: label.name, values: new Float64Array(table.rowCount) } : resolve(label);
  const multiClass = label.classes !== undefined && !ignoreLabel;
  const binary = (label.positive !== undefined || label.classes !== undefined) && !ignoreLabel;
  if (!binary && !ignoreLabel && labelRaw.kind !== 'numeric') throw new DataFormatError(table.source, 'the label is declared numeric (lower/upper) but the column holds text', undefined, label.name);
  const classify = binary ? labelClassifier(label, labelRaw) : undefined;

  // Per-column encoders: categorical level -> slot index (categories.length = other).
  const slotOfLevel = features.map((spec, j) => {
    const column = featureColumns[j];
    if (spec.type !== 'categorical') {
      if (column.kind !== 'numeric') throw new DataFormatError(table.source, 'is declared numeric but holds text', undefined, spec.name);
      return undefined;
    }
    const index = new Map(spec.categories.map((c, k) => [c, k] as const));
    if (column.kind === 'categorical') return column.levels.map((level) => index.get(level.trim()) ?? spec.categories.length);
    return undefined; // numeric raw column for a categorical spec: matched by text below
  });
  const widths = features.map((spec) => (spec.type === 'numeric' ? numericEncodedWidth(spec) : spec.categories.length + 1));
  const offsets: number[] = [];
  let encodedWidth = 0;
  for (const w of widths) {
    offsets.push(encodedWidth);
    encodedWidth += w;
  }

  const n0 = table.rowCount;
  const x = new Float64Array(n0 * encodedWidth);
  const y = new Float64Array(n0);
  const clipped: Record<string, number> = {};
  const other: Record<string, number> = {};
  const missing: Record<string, number> = {};
  for (const spec of features) {
    if (spec.type === 'numeric') clipped[spec.name] = 0;
    else other[spec.name] = 0;
    missing[spec.name] = 0;
  }
  missing[label.name] = 0;
  let positives = 0;
  let kept = 0;
  const positiveValue = 1;
  const negativeValue = label.encoding === 'plusMinusOne' ? -1 : 0;

  let dirty = false; // the previous row was dropped after writing some features
  rows: for (let i = 0; i < n0; i++) {
    const base = kept * encodedWidth;
    if (dirty) {
      x.fill(0, base, base + encodedWidth);
      dirty = false;
    }
    // Label first: a dropped row writes nothing that stays.
    let yi: number;
    if (classify !== undefined) {
      const cls = classify(i);
      if (cls === undefined) {
        missing[label.name]++;
        if (label.missing === 'dropRow') continue rows; // nothing written yet
        throw tableError(table, i, label.name, 'missing label (the schema says "missing": "error")');
      }
      if (cls === -1) {
        const declared = multiClass
          ? `classes: ${describeValues(label.classes as (string | number)[])}`
          : `positive: ${describeValues(label.positive as (string | number)[])}; negative: ${describeValues(label.negative as (string | number)[])}`;
        throw tableError(table, i, label.name, `unknown label value '${labelRaw.kind === 'categorical' ? labelRaw.levels[labelRaw.codes[i]] : labelRaw.values[i]}' (${declared})`);
      }
      yi = multiClass ? cls : cls === 1 ? positiveValue : negativeValue;
    } else {
      const v = (labelRaw as { values: Float64Array }).values[i];
      if (Number.isNaN(v)) {
        missing[label.name]++;
        if (label.missing === 'dropRow') continue rows; // nothing written yet
        throw tableError(table, i, label.name, 'missing label (the schema says "missing": "error")');
      }
      if (!Number.isFinite(v)) throw tableError(table, i, label.name, `${v} is not a finite number`);
      yi = ignoreLabel ? 0 : Math.min(label.upper as number, Math.max(label.lower as number, v));
    }
    for (let j = 0; j < features.length; j++) {
      const spec = features[j];
      const column = featureColumns[j];
      const at = base + offsets[j];
      if (spec.type === 'numeric') {
        let v = (column as { values: Float64Array }).values[i];
        if (Number.isNaN(v)) {
          missing[spec.name]++;
          if (spec.missing === 'dropRow') {
            dirty = true;
            continue rows;
          }
          if (spec.missing === 'error') throw tableError(table, i, spec.name, 'missing value (the schema says "missing": "error")');
          v = spec.fillValue as number;
        } else if (!Number.isFinite(v)) throw tableError(table, i, spec.name, `${v} is not a finite number`);
        if (v < spec.lower) {
          v = spec.lower;
          clipped[spec.name]++;
        } else if (v > spec.upper) {
          v = spec.upper;
          clipped[spec.name]++;
        }
        if (spec.encode === 'bins') x[at + binIndex(spec.bins as readonly number[], v)] = 1;
        else {
          x[at] = numericValueFeature(spec, v);
          if (spec.bins !== undefined) x[at + 1 + binIndex(spec.bins, v)] = 1;
        }
      } else {
        let slot: number;
        const slots = slotOfLevel[j];
        if (column.kind === 'categorical') {
          const code = column.codes[i];
          if (code < 0) {
            missing[spec.name]++;
            if (spec.missing === 'dropRow') {
              dirty = true;
              continue rows;
            }
            if (spec.missing === 'error') throw tableError(table, i, spec.name, 'missing value (the schema says "missing": "error")');
            slot = spec.categories.length;
          } else slot = (slots as number[])[code];
        } else {
          const v = column.values[i];
          if (Number.isNaN(v)) {
            missing[spec.name]++;
            if (spec.missing === 'dropRow') {
              dirty = true;
              continue rows;
            }
            if (spec.missing === 'error') throw tableError(table, i, spec.name, 'missing value (the schema says "missing": "error")');
            slot = spec.categories.length;
          } else {
            const k = spec.categories.findIndex((c) => c.trim() !== '' && Number(c) === v);
            slot = k < 0 ? spec.categories.length : k;
          }
        }
        if (slot === spec.categories.length) other[spec.name]++;
        x[at + slot] = 1;
      }
    }
    y[kept] = yi;
    if (classify !== undefined && !multiClass && yi === positiveValue) positives++;
    kept++;
  }
  const encoded: Dataset = {
    x: kept === n0 ? x : x.slice(0, kept * encodedWidth),
    y: kept === n0 ? y : y.slice(0, kept),
    n: kept,
    d: encodedWidth,
    featureNames: schemaFeatureNames({ ...schema, intercept: null }),
  };
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
  const withIntercept = schema.intercept === null ? transformed : addIntercept(transformed, { value: schema.intercept }).dataset;
  return {
    dataset: withIntercept,
    rowNormBound: schemaRowNormBound(schema),
    labelBound: schemaLabelBound(schema),
    rowTransform: schema.rowTransform,
    intercept: schema.intercept,
    zeroRowLabel: multiClass ? 0 : binary ? negativeValue : Math.min(label.upper ?? 0, Math.max(label.lower ?? 0, 0)),
    privateDiagnostics: {
      rowsRead: n0,
      droppedRows: n0 - kept,
      clipped,
      other,
      missing,
      ...(classify !== undefined && !multiClass ? { positives } : {}),
    },
  };
}
