/**
 * The error for a file that lacks columns the schema (or the caller) names. It names those
 * columns, which are public, and never the file's own first line: in a headerless file that line
 * is a record, and an error printed on a terminal or in a log is no release the guarantee covers
 * (docs/threat-model.md, "Messages": `column 'age' is not in the header (columns: 39, State-gov,
 * 77516, ...)` printed a record of Adult).
 */
import { DataFormatError } from '../errors.js';

/** At most this many missing names are listed; the rest are counted. */
const LISTED = 4;

/** 'a', 'b', 'c', 'd' and 3 more. */
function listNames(names: readonly string[]): string {
  const quoted = names.slice(0, LISTED).map((name) => `'${name}'`).join(', ');
  return names.length > LISTED ? `${quoted} and ${names.length - LISTED} more` : quoted;
}

/**
 * `source: the file's first line does not contain the schema's columns 'age', 'workclass' (is the
 * file headerless? ...)`. `where` says what was searched: a header line, the column list given for
 * a headerless file, or the columns a reader found (Parquet, a query).
 */
export function missingColumnsError(source: string, missing: readonly string[], where: 'header' | 'columnList' | 'columns'): DataFormatError {
  const names = listNames(missing);
  const plural = missing.length === 1 ? 'column' : 'columns';
  switch (where) {
    case 'header':
      return new DataFormatError(source, `the file's first line does not contain the schema's ${plural} ${names} (is the file headerless? then set "header": false in the schema's "csv" block)`);
    case 'columnList':
      return new DataFormatError(source, `the column list of this headerless file does not contain the ${plural} ${names}`);
    case 'columns':
      return new DataFormatError(source, `the data have no ${plural} named ${names} (the file's own column names are not shown: they are read from the file)`);
  }
}
