/**
 * How files described by a schema are read: the reader options it implies (column types, CSV
 * dialect), and whether the label is read at all (`label: 'ignore'` for data to predict).
 */
import type { CsvColumnType, CsvOptions } from '../csv.js';
import { optionNames, rejectUnknownOptions } from '../../validate.js';
import { labelColumn } from './bounds.js';
import type { LabelColumnSpec, Schema } from './types.js';

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

/** The option names of `SchemaReadOptions` (`schemaCsvOptions` and `applySchema` refuse any other). */
export const SCHEMA_READ_OPTIONS = optionNames<SchemaReadOptions>({ label: true });

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
