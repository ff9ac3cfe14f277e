/**
 * A schema document (JSON, already parsed) validated into a `Schema` with every default filled in
 * (`parseSchema`), and the JSON form written back (`schemaToJson`). Every error is a
 * `DataFormatError` naming the schema file and the offending field.
 */
import { DataFormatError } from '../../errors.js';
import { parseNumericEncoding } from './numeric-encoding.js';
import {
  SCHEMA_VERSION,
  SUGGESTED_PROVENANCE,
  type CategoricalColumnSpec,
  type ColumnSpec,
  type CsvDialectSpec,
  type LabelColumnSpec,
  type NumericColumnSpec,
  type Schema,
} from './types.js';

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
    case 'numeric':
      return parseNumericColumn(source, where, raw, name, note, defaultMissing);
    case 'categorical':
      return parseCategoricalColumn(source, where, raw, name, note);
    case 'label':
      return parseLabelColumn(source, where, raw, name, note);
    case 'ignore':
      checkKeys(source, where, raw, ['name', 'type', 'note']);
      return { name, type: 'ignore', ...(note ? { note } : {}) };
    default:
      fail(source, `${where}.type`, `must be "numeric", "categorical", "label" or "ignore", got ${JSON.stringify(raw.type)}`);
  }
}

function parseNumericColumn(source: string, where: string, raw: Record<string, unknown>, name: string, note: string | undefined, defaultMissing: 'error' | 'dropRow'): NumericColumnSpec {
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

function parseCategoricalColumn(source: string, where: string, raw: Record<string, unknown>, name: string, note: string | undefined): CategoricalColumnSpec {
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

/** A label: multi-class ("classes"), binary ("positive" and "negative") or numeric ("lower" and "upper"). */
function parseLabelColumn(source: string, where: string, raw: Record<string, unknown>, name: string, note: string | undefined): LabelColumnSpec {
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
