/**
 * A hand-written CSV parser over bytes (a `Uint8Array`, e.g. a Node `Buffer`), fast enough for
 * ~1e6 x 20 numeric files in well under a second on these machines (`npm run bench -- data`).
 *
 * Format accepted (RFC 4180 plus what real files do):
 * - a header line with the column names (or `header: false` and `columnNames`);
 * - a one-byte delimiter, `,` by default; spaces and tabs around unquoted fields are trimmed, so
 *   "comma" and "comma-space" files (UCI Adult: `39, State-gov, 77516`) read the same;
 * - double-quoted fields may hold delimiters, newlines and doubled quotes (`"a ""b"", c"`);
 * - `\n`, `\r\n` and `\r` line ends; blank lines are skipped wherever they are; lines starting
 *   with the optional `comment` byte are skipped (UCI's adult.test starts with `|1x3 Cross validator`);
 * - a field equal to one of the `missing` tokens (default `?` and the empty string) is missing;
 * - a UTF-8 byte-order mark is ignored.
 *
 * Column types come from the caller (a schema) or, when not given, from a first pass over the
 * data: a column is numeric when every non-missing value is a number (see `parse-number.ts`).
 * Errors are `DataFormatError`s naming the source, the line and the column:
 * `data.csv, line 1042, column 'age': a value is not a number` (no message quotes the data).
 *
 * Browser-safe: imports nothing from Node. The Node file reader (`node/read.ts`) feeds large
 * files to `CsvParser` in chunks.
 */
import { DataFormatError, InvalidParameterError } from '../errors.js';
import { missingColumnsError } from './missing-columns.js';
import { parseDecimalBytes } from './parse-number.js';
import type { RawColumn, RawTable } from './table.js';
import { optionNames, rejectUnknownOptions } from '../validate.js';

export type CsvColumnType = 'numeric' | 'categorical' | 'skip';

export interface CsvOptions {
  /** Name used in error messages (file name). Default "csv". */
  source?: string;
  /** One ASCII character; default ",". */
  delimiter?: string;
  /** Whether the first (non-blank, non-comment) line holds the column names. Default true. */
  header?: boolean;
  /** Column names, in file order: required when `header` is false (default column1, column2, ...). */
  columnNames?: readonly string[];
  /** One ASCII character: lines starting with it are skipped. Default: none. */
  comment?: string;
  /** Values that mean "missing", compared after trimming. Default ["", "?"]. */
  missing?: readonly string[];
  /**
   * Types by column name ("numeric" | "categorical" | "skip"), or "numeric" for every column.
   * Columns not listed are inferred (a first pass reads the data once more). With a header, a name
   * listed here but absent from the file is an error.
   */
  columnTypes?: Readonly<Record<string, CsvColumnType>> | 'numeric';
  /** Total size of the input in bytes, if known: lets the parser allocate its columns once. */
  sizeHint?: number;
  /**
   * Columns the file may lack (e.g. the label of data to predict): with a header, a column of
   * `columnTypes` listed here and absent from the header is no error; without a header, a first
   * record with as many fields as `columnNames` minus these columns is read with those names.
   */
  optionalColumns?: readonly string[];
}

const enum Kind {
  Numeric = 0,
  Categorical = 1,
  Skip = 2,
  Infer = 3,
}

const POW10 = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

const QUOTE = 34;
const LF = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;

/** Validated, byte-level view of `CsvOptions`. */
interface Dialect {
  source: string;
  delimiter: number;
  header: boolean;
  columnNames: readonly string[] | undefined;
  comment: number;
  missing: Uint8Array[];
  /** Some missing token spells a number: check for missing before parsing numbers. */
  missingIsNumeric: boolean;
  trimTabs: boolean;
  sizeHint: number;
  optionalColumns: readonly string[];
}

function oneByte(param: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value.length !== 1 || value.charCodeAt(0) > 127) throw new InvalidParameterError(param, value, 'one ASCII character');
  const code = value.charCodeAt(0);
  if (code === QUOTE || code === LF || code === CR) throw new InvalidParameterError(param, value, 'not a quote or line break');
  return code;
}

function dialectOf(options: CsvOptions): Dialect {
  const delimiter = oneByte('delimiter', options.delimiter, 44);
  const comment = oneByte('comment', options.comment, -1);
  if (comment === delimiter) throw new InvalidParameterError('comment', options.comment, 'different from the delimiter');
  const header = options.header ?? true;
  if (!header && options.columnNames !== undefined && options.columnNames.length === 0) throw new InvalidParameterError('columnNames', options.columnNames, 'a non-empty list');
  const encoder = new TextEncoder();
  const missing = (options.missing ?? ['', '?']).map((token) => encoder.encode(token.trim()));
  return {
    source: options.source ?? 'csv',
    delimiter,
    header,
    columnNames: options.columnNames,
    comment,
    missing,
    missingIsNumeric: missing.some((token) => !Number.isNaN(parseDecimalBytes(token, 0, token.length))),
    trimTabs: delimiter !== TAB,
    sizeHint: typeof options.sizeHint === 'number' && Number.isFinite(options.sizeHint) && options.sizeHint > 0 ? options.sizeHint : 0,
    optionalColumns: options.optionalColumns ?? [],
  };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes [start, end) as a string (ASCII fast path, else strict UTF-8). */
function decodeText(bytes: Uint8Array, start: number, end: number): string | undefined {
  if (end - start <= 64) {
    let ascii = true;
    for (let i = start; i < end; i++) if (bytes[i] > 127) ascii = false;
    if (ascii) {
      let text = '';
      for (let i = start; i < end; i++) text += String.fromCharCode(bytes[i]);
      return text;
    }
  }
  try {
    return utf8.decode(bytes.subarray(start, end));
  } catch {
    return undefined;
  }
}

/** Levels of a text column recognised by their bytes (a column with more levels decodes the others). */
const MATCHED_LEVELS = 16;

/** The index of the level whose bytes are bytes[start, end), or -1. */
function matchLevel(levels: readonly Uint8Array[], bytes: Uint8Array, start: number, end: number): number {
  const length = end - start;
  for (let k = 0; k < levels.length; k++) {
    const level = levels[k];
    if (level.length !== length) continue;
    let i = 0;
    while (i < length && level[i] === bytes[start + i]) i++;
    if (i === length) return k;
  }
  return -1;
}

/** A growable column being filled. */
interface Builder {
  kind: Kind;
  name: string;
  values: Float64Array;
  codes: Int32Array;
  levels: string[];
  index: Map<string, number>;
  /** The UTF-8 bytes each of the first `MATCHED_LEVELS` levels was read from (unquoted), matched before a field is decoded. */
  levelBytes: Uint8Array[];
  /** Infer pass: still possibly numeric; and whether any non-missing value was seen. */
  numeric: boolean;
}

/**
 * Raised by a `CsvParser` when a column it was told is numeric only by a guess from a sample holds
 * text: the reader starts again with that column as text. Never escapes `parseCsv`/`readCsvFile`.
 */
export class CsvTypeGuessError extends Error {
  readonly column: number;
  constructor(column: number) {
    super(`internal: column ${column} was guessed numeric from a sample but holds text`);
    this.column = column;
  }
}

/** Bytes read to guess column types before the real pass (types are confirmed by that pass). */
export const TYPE_SAMPLE_BYTES = 1 << 20;

export const CSV_OPTIONS = optionNames<CsvOptions>({ source: true, delimiter: true, header: true, columnNames: true, comment: true, missing: true, columnTypes: true, sizeHint: true, optionalColumns: true });

/**
 * One pass of CSV parsing, fed with bytes in chunks: `consume(bytes, start, end, final)` parses the
 * complete records in [start, end) and returns where the first incomplete one starts (the caller
 * keeps those bytes and appends more); with `final` the end of the bytes ends the last record.
 * Use `parseCsv` for data already in memory.
 */
export class CsvParser {
  private readonly dialect: Dialect;
  private readonly declared: CsvOptions['columnTypes'];
  private readonly inferred: readonly CsvColumnType[] | undefined;
  /** Columns whose numeric type is a guess from a sample: text in them throws `CsvTypeGuessError`. */
  private readonly guessed: readonly boolean[] | undefined;
  private names: string[] | undefined;
  private builders: Builder[] = [];
  /** Per column: numeric, eligible for the fused fast path. */
  private fastNumeric: boolean[] = [];
  /** Per column: the numeric builder's array (kept in step with `grow`). */
  private numericValues: Float64Array[] = [];
  private rows = 0;
  private capacity = 0;
  private rowLines = new Int32Array(0);
  private line = 1;
  private started = false;
  private columnsOnly = false;
  /** Bytes of the data rows parsed so far (for the size-hinted allocation). */
  private dataBytes = 0;
  /** Bytes seen so far, to skip a byte-order mark only at the very start. */
  private seenBytes = false;
  /** Rows handed over by `drain` (the size hint then no longer sizes the arrays), and the next chunk's first capacity. */
  private drained = 0;
  private nextCapacity = 0;

  /**
   * @param options the dialect and declared types
   * @param inferred column types found by a first pass (`inferTypes`); when given, every column has a type
   */
  constructor(options: CsvOptions = {}, inferred?: readonly CsvColumnType[], guessed?: readonly boolean[]) {
    rejectUnknownOptions(options, CSV_OPTIONS, 'CsvParser');
    this.dialect = dialectOf(options);
    this.declared = options.columnTypes;
    this.inferred = inferred;
    this.guessed = guessed;
    // Header-less with optional columns: the first record's field count decides the names.
    if (!this.dialect.header && !this.namesFromFirstRecord()) this.setNames(this.dialect.columnNames ? [...this.dialect.columnNames] : undefined);
  }

  /** Header-less, with column names some of which are optional: the names wait for the first record. */
  private namesFromFirstRecord(): boolean {
    const names = this.dialect.columnNames;
    return names !== undefined && this.dialect.optionalColumns.some((c) => names.includes(c));
  }

  private setNames(names: string[] | undefined): void {
    if (names === undefined) return;
    const declared = this.declared;
    const schemaNames = declared !== undefined && declared !== 'numeric' ? Object.keys(declared) : [];
    // The schema's columns first: a headerless file's first line is a record, and no message quotes it.
    const present = new Set(names);
    const absent = schemaNames.filter((name) => !present.has(name) && !this.dialect.optionalColumns.includes(name));
    if (absent.length > 0) throw missingColumnsError(this.dialect.source, absent, this.dialect.header ? 'header' : 'columnList');
    const line = this.dialect.header ? this.line : undefined;
    const seen = new Set<string>();
    for (const name of names) {
      if (name === '') throw new DataFormatError(this.dialect.source, 'a column has an empty name', line);
      if (seen.has(name)) {
        // Named only when the schema names it: other header cells are read from the file.
        const which = schemaNames.includes(name) ? `the schema's column '${name}'` : 'a column name';
        throw new DataFormatError(this.dialect.source, `${which} appears twice in the first line`, line);
      }
      seen.add(name);
    }
    this.names = names;
    this.builders = names.map((name, j) => {
      let kind: Kind;
      const type = declared === 'numeric' ? 'numeric' : declared?.[name] ?? this.inferred?.[j];
      if (type === 'numeric') kind = Kind.Numeric;
      else if (type === 'categorical') kind = Kind.Categorical;
      else if (type === 'skip') kind = Kind.Skip;
      else kind = Kind.Infer;
      return { kind, name, values: new Float64Array(0), codes: new Int32Array(0), levels: [], index: new Map(), levelBytes: [], numeric: true };
    });
    this.fastNumeric = this.builders.map((b) => b.kind === Kind.Numeric && !this.dialect.missingIsNumeric);
  }

  private grow(): void {
    let capacity = Math.max(1024, this.capacity * 2, this.nextCapacity);
    const sizeHint = this.dialect.sizeHint;
    if (sizeHint > 0 && this.rows >= 256 && this.dataBytes > 0 && this.drained === 0) {
      // Rows still to come, estimated from the bytes per row so far (2% margin); doubling remains the fallback.
      const estimate = Math.ceil((sizeHint / this.dataBytes) * this.rows * 1.02) + 256;
      if (estimate > this.capacity) capacity = estimate;
    }
    for (const b of this.builders) {
      if (b.kind === Kind.Numeric) {
        const values = new Float64Array(capacity);
        values.set(b.values);
        b.values = values;
      } else if (b.kind === Kind.Categorical) {
        const codes = new Int32Array(capacity);
        codes.set(b.codes);
        b.codes = codes;
      }
    }
    this.numericValues = this.builders.map((b) => b.values);
    const lines = new Int32Array(capacity);
    lines.set(this.rowLines);
    this.rowLines = lines;
    this.capacity = capacity;
  }

  private isMissing(bytes: Uint8Array, start: number, end: number): boolean {
    const length = end - start;
    for (const token of this.dialect.missing) {
      if (token.length !== length) continue;
      let same = true;
      for (let k = 0; k < length; k++) {
        if (bytes[start + k] !== token[k]) {
          same = false;
          break;
        }
      }
      if (same) return true;
    }
    return false;
  }

  private error(message: string, line: number, column?: string): DataFormatError {
    return new DataFormatError(this.dialect.source, message, line, column);
  }

  /** Stores field `col` of the current row; `escaped` means the text holds doubled quotes. */
  private field(col: number, bytes: Uint8Array, start: number, end: number, escaped: boolean, line: number): void {
    const b = this.builders[col];
    if (b.kind === Kind.Skip) return;
    if (b.kind === Kind.Numeric) {
      let v = this.dialect.missingIsNumeric && this.isMissing(bytes, start, end) ? NaN : parseDecimalBytes(bytes, start, end);
      if (v !== v && !this.isMissing(bytes, start, end)) {
        if (this.guessed?.[col]) throw new CsvTypeGuessError(col);
        throw this.error('a value is not a number', line, b.name);
      }
      b.values[this.rows] = v;
      return;
    }
    if (b.kind === Kind.Categorical) {
      if (this.isMissing(bytes, start, end)) {
        b.codes[this.rows] = -1;
        return;
      }
      // A level met before is recognised by its bytes (no string made); the bytes decode to one text only.
      let code = escaped ? -1 : matchLevel(b.levelBytes, bytes, start, end);
      if (code < 0) {
        const text = this.text(bytes, start, end, escaped, line);
        code = b.index.get(text) ?? -1;
        if (code < 0) {
          code = b.levels.length;
          b.levels.push(text);
          b.index.set(text, code);
          if (!escaped && code === b.levelBytes.length && code < MATCHED_LEVELS) b.levelBytes.push(new Uint8Array(bytes.subarray(start, end))); // a copy (a Buffer's slice is a view)
        }
      }
      b.codes[this.rows] = code;
      return;
    }
    // Infer: only record whether the column can stay numeric.
    if (b.numeric && Number.isNaN(parseDecimalBytes(bytes, start, end)) && !this.isMissing(bytes, start, end)) b.numeric = false;
  }

  private text(bytes: Uint8Array, start: number, end: number, escaped: boolean, line: number): string {
    const text = decodeText(bytes, start, end);
    if (text === undefined) throw this.error('a field is not valid UTF-8 text', line);
    return escaped ? text.replaceAll('""', '"') : text;
  }

  /**
   * Parses the complete records in bytes[start, end) and returns the offset where unparsed bytes
   * begin (== end when everything was consumed). With `final`, the end of input ends the record.
   */
  consume(bytes: Uint8Array, start: number, end: number, final: boolean): number {
    const { delimiter, comment, trimTabs } = this.dialect;
    let pos = start;
    if (!this.seenBytes && end - pos >= 3 && bytes[pos] === 0xef && bytes[pos + 1] === 0xbb && bytes[pos + 2] === 0xbf) pos += 3;
    if (end > pos) this.seenBytes = true;
    const tab = trimTabs ? TAB : SPACE; // the second byte trimmed around unquoted fields
    // The last line break of the bytes (-1: none): the numeric fast path runs only before it.
    let lastBreak = end - 1;
    while (lastBreak >= pos && bytes[lastBreak] !== LF && bytes[lastBreak] !== CR) lastBreak--;

    records: while (pos < end) {
      const recordStart = pos;
      const recordLine = this.line;
      // Blank and comment lines.
      let p = pos;
      while (p < end && (bytes[p] === SPACE || bytes[p] === tab)) p++;
      if (p === end) {
        if (!final) return recordStart;
        pos = end;
        break;
      }
      if (bytes[p] === LF || bytes[p] === CR) {
        pos = bytes[p] === CR && p + 1 < end && bytes[p + 1] === LF ? p + 2 : p + 1;
        if (bytes[p] === CR && p + 1 === end && !final) return recordStart;
        this.line++;
        continue;
      }
      if (p === pos && bytes[p] === comment) {
        while (p < end && bytes[p] !== LF && bytes[p] !== CR) p++;
        if (p === end) {
          if (!final) return recordStart;
          pos = end;
          break;
        }
        if (bytes[p] === CR && p + 1 === end && !final) return recordStart;
        pos = bytes[p] === CR && p + 1 < end && bytes[p + 1] === LF ? p + 2 : p + 1;
        this.line++;
        continue;
      }

      const isHeader = this.names === undefined && this.dialect.header;
      if (this.names !== undefined && this.rows === this.capacity) this.grow();
      let col = 0;
      const ncols = isHeader ? -2 : (this.names?.length ?? -1);
      // The header's names (or a header-less first record's field count); no array for a data record.
      const headerFields: string[] | undefined = ncols < 0 ? [] : undefined;
      const fastNumeric = this.fastNumeric;
      const numericValues = this.numericValues;
      const row = this.rows;
      // Fields of this record.
      for (;;) {
        // Leading spaces.
        while (p < end && (bytes[p] === SPACE || bytes[p] === tab)) p++;
        let fieldStart = p;
        let fieldEnd = p;
        let escaped = false;
        let stop = -1; // the byte after the field: delimiter, CR, LF, or end
        let stored = false;
        // Fast path: an unquoted plain decimal (no exponent, < 2^53 significand) in a numeric column,
        // parsed while it is scanned (one pass over its bytes instead of two).
        // Only before the chunk's last line break, which ends every scan below: no byte is read past
        // it, so no read checks the end (the last record of the input, if no break follows it,
        // takes the general path).
        if (p < lastBreak && col < ncols && fastNumeric[col]) {
          let q = p;
          let c = bytes[q];
          // The sign without a branch (random signs mispredict): 1 for '-', 0 otherwise.
          const minus = +(c === 45);
          c = bytes[(q += minus)];
          if (c === 43 && minus === 0) c = bytes[++q];
          // The significand's first 9 digits in an integer (integer arithmetic: a short dependency
          // chain per digit), the further ones in a double; both exact while it has <= 15 digits.
          let small = 0;
          let large = 0;
          let digits = 0;
          let scale = 0;
          while (c >= 48 && c <= 57) {
            if (digits < 9) small = small * 10 + (c - 48);
            else large = (digits === 9 ? small : large) * 10 + (c - 48);
            digits++;
            c = bytes[++q];
          }
          if (c === 46) {
            c = bytes[++q];
            while (c >= 48 && c <= 57) {
              if (digits < 9) small = small * 10 + (c - 48);
              else large = (digits === 9 ? small : large) * 10 + (c - 48);
              digits++;
              scale++;
              c = bytes[++q];
            }
          }
          if (digits > 0 && digits <= 15 && scale <= 22 && (c === delimiter || c === LF || c === CR)) {
            // <= 15 digits: the significand is an exact integer below 2^53 (Clinger's fast path, see parse-number.ts).
            const mantissa = digits <= 9 ? small : large;
            const value = scale === 0 ? mantissa : mantissa / POW10[scale];
            numericValues[col][row] = value * (1 - 2 * minus); // exact: the value or its negation (-0 for '-0')
            stored = true;
            stop = c;
            p = q;
          }
        }
        if (!stored) {
          if (p < end && bytes[p] === QUOTE) {
            const quoteLine = this.line;
            let q = p + 1;
            fieldStart = q;
            for (;;) {
              while (q < end && bytes[q] !== QUOTE) {
                if (bytes[q] === LF || (bytes[q] === CR && !(q + 1 < end && bytes[q + 1] === LF))) this.line++;
                q++;
              }
              if (q >= end) {
                if (!final) {
                  this.line = recordLine;
                  return recordStart;
                }
                throw this.error('a quoted field is not closed before the end of the file', quoteLine);
              }
              if (q + 1 < end && bytes[q + 1] === QUOTE) {
                escaped = true;
                q += 2;
                continue;
              }
              if (q + 1 >= end && !final) {
                this.line = recordLine;
                return recordStart;
              }
              break;
            }
            fieldEnd = q;
            p = q + 1;
            while (p < end && (bytes[p] === SPACE || bytes[p] === tab)) p++;
            stop = p < end ? bytes[p] : -1;
            if (stop !== -1 && stop !== delimiter && stop !== LF && stop !== CR) {
              throw this.error('a character follows a closing quote (a quoted field must end at a delimiter or a line end)', this.line, this.names?.[col]);
            }
            // Quoted content is trimmed too (numbers, missing tokens and text alike).
            while (fieldStart < fieldEnd && (bytes[fieldStart] === SPACE || bytes[fieldStart] === tab)) fieldStart++;
            while (fieldEnd > fieldStart && (bytes[fieldEnd - 1] === SPACE || bytes[fieldEnd - 1] === tab)) fieldEnd--;
          } else {
            fieldStart = p;
            while (p < end) {
              const c = bytes[p];
              if (c === delimiter || c === LF || c === CR) break;
              p++;
            }
            if (p === end && !final) {
              this.line = recordLine;
              return recordStart;
            }
            fieldEnd = p;
            while (fieldEnd > fieldStart && (bytes[fieldEnd - 1] === SPACE || bytes[fieldEnd - 1] === tab)) fieldEnd--;
            stop = p < end ? bytes[p] : -1;
          }
        }
        if (isHeader) {
          const name = decodeText(bytes, fieldStart, fieldEnd);
          if (name === undefined) throw this.error('the header is not valid UTF-8 text', recordLine);
          (headerFields as string[]).push(escaped ? name.replaceAll('""', '"') : name);
        } else if (ncols === -1) {
          (headerFields as string[]).push(''); // headerless without names: the first record fixes the column count
        } else if (col < ncols && !stored) {
          this.field(col, bytes, fieldStart, fieldEnd, escaped, recordLine);
        }
        col++;
        if (stop === delimiter) {
          p++;
          continue;
        }
        // End of record: CR, LF, CRLF or end of input.
        if (stop === CR) {
          if (p + 1 === end && !final) {
            this.line = recordLine;
            return recordStart;
          }
          p += p + 1 < end && bytes[p + 1] === LF ? 2 : 1;
          this.line++;
        } else if (stop === LF) {
          p++;
          this.line++;
        }
        break;
      }

      if (isHeader) {
        this.setNames(headerFields as string[]);
        pos = p;
        if (this.columnsOnly) return pos;
        continue records;
      }
      if (ncols === -1) {
        // Headerless with no names given: name the columns column1..k and parse this record again.
        // With names and optional columns: the names without the optional ones when the count says so.
        const given = this.dialect.columnNames;
        const without = given?.filter((name) => !this.dialect.optionalColumns.includes(name));
        this.setNames(
          given === undefined
            ? (headerFields as string[]).map((_, j) => `column${j + 1}`)
            : without !== undefined && (headerFields as string[]).length === without.length
              ? without
              : [...given],
        );
        this.line = recordLine;
        pos = recordStart;
        if (this.columnsOnly) return pos;
        continue records;
      }
      if (col !== ncols) {
        throw this.error(`expected ${ncols} fields${this.dialect.header ? ' as in the header' : ''}, found ${col}`, recordLine);
      }
      this.rowLines[this.rows] = recordLine;
      this.rows++;
      this.dataBytes += p - recordStart;
      pos = p;
    }
    return pos;
  }

  /** The column types seen by an inferring pass (numeric unless a non-number appeared). */
  inferredTypes(): CsvColumnType[] {
    return this.builders.map((b) => {
      if (b.kind === Kind.Numeric) return 'numeric';
      if (b.kind === Kind.Categorical) return 'categorical';
      if (b.kind === Kind.Skip) return 'skip';
      return b.numeric ? 'numeric' : 'categorical';
    });
  }

  /**
   * Like `consume`, but stops once the column names are known (after the header, or at the first
   * record of a header-less file): for readers that only need the names.
   */
  consumeColumns(bytes: Uint8Array, start: number, end: number, final: boolean): number {
    this.columnsOnly = true;
    try {
      return this.names !== undefined ? start : this.consume(bytes, start, end, final);
    } finally {
      this.columnsOnly = false;
    }
  }

  /** Per column: whether an inferring pass guessed it numeric (a guess when the pass saw only a sample). */
  numericGuesses(): boolean[] {
    return this.builders.map((b) => b.kind === Kind.Infer && b.numeric);
  }

  /** Whether a first pass is needed to infer some column's type. */
  needsInference(): boolean {
    return this.builders.some((b) => b.kind === Kind.Infer);
  }

  /** Whether the header (or the column list) is known yet. */
  hasColumns(): boolean {
    return this.names !== undefined;
  }

  /** The column names, once the header (or the first record of a header-less file) was read. */
  get columnNames(): readonly string[] | undefined {
    return this.names;
  }

  get rowCount(): number {
    return this.rows;
  }

  /** The line the next record starts on (1-based; lines are counted from the first byte given). */
  get lineNumber(): number {
    return this.line;
  }

  /**
   * @internal Starts this parser in the middle of a file whose header another parser of the same
   * options read (the parallel reader's ranges, `node/parallel-csv.ts`): the columns are `names`,
   * as that header gave them; no byte-order mark is skipped; lines count from 1 at the first byte
   * given (the caller adds the lines before it).
   */
  resumeAfterHeader(names: readonly string[]): void {
    if (this.names !== undefined) throw new Error('internal error: resumeAfterHeader on a parser that has its columns');
    this.seenBytes = true;
    this.setNames([...names]);
  }

  /** Bytes of the data rows parsed so far (for estimating a file's rows from its size). */
  get dataByteCount(): number {
    return this.dataBytes;
  }

  /** Data rows parsed so far, those handed over by `drain` included. */
  get parsedRowCount(): number {
    return this.drained + this.rows;
  }

  /**
   * The rows parsed so far as a table (their arrays handed over, no copy), then parsing goes on
   * into fresh arrays: a reader can encode and drop each chunk of rows instead of holding the whole
   * table. Undefined when no row is waiting (or the columns are not known yet). Categorical codes
   * index `levels`, which later chunks only extend. With `reuse`, parsing goes on into the same
   * arrays: the table is valid only until the next `consume` (no garbage per chunk).
   */
  drain(reuse = false): RawTable | undefined {
    if (this.names === undefined || this.rows === 0 || this.needsInference()) return undefined;
    const n = this.rows;
    const columns: RawColumn[] = [];
    for (const b of this.builders) {
      if (b.kind === Kind.Numeric) columns.push({ kind: 'numeric', name: b.name, values: b.values.subarray(0, n) });
      else if (b.kind === Kind.Categorical) columns.push({ kind: 'categorical', name: b.name, codes: b.codes.subarray(0, n), levels: b.levels });
    }
    const table: RawTable = { source: this.dialect.source, rowCount: n, columns, rowLines: this.rowLines.subarray(0, n) };
    this.drained += n;
    this.rows = 0;
    if (reuse) return table;
    // The next chunk starts in new arrays about as large as this one (no doubling from 1024 again).
    for (const b of this.builders) {
      b.values = new Float64Array(0);
      b.codes = new Int32Array(0);
    }
    this.numericValues = this.builders.map((b) => b.values);
    this.rowLines = new Int32Array(0);
    this.capacity = 0;
    this.nextCapacity = n;
    return table;
  }

  /** The table; throws if the input held no header or no data rows. */
  finish(): RawTable {
    if (this.names === undefined) throw new DataFormatError(this.dialect.source, 'the file is empty (no header and no data)');
    if (this.rows === 0) throw new DataFormatError(this.dialect.source, this.dialect.header ? 'the file has a header but no data rows' : 'the file has no data rows');
    const n = this.rows;
    // Nearly full arrays are returned as views (no copy, at most a third unused); others are copied.
    const trim = <T extends Float64Array | Int32Array>(a: T): T => (n >= 0.75 * a.length ? (a.subarray(0, n) as T) : (a.slice(0, n) as T));
    const columns: RawColumn[] = [];
    for (const b of this.builders) {
      if (b.kind === Kind.Numeric) columns.push({ kind: 'numeric', name: b.name, values: trim(b.values) });
      else if (b.kind === Kind.Categorical) columns.push({ kind: 'categorical', name: b.name, codes: trim(b.codes), levels: b.levels });
      else if (b.kind === Kind.Infer) throw new Error('internal error: CsvParser.finish on an inferring pass');
    }
    return { source: this.dialect.source, rowCount: n, columns, rowLines: trim(this.rowLines) };
  }
}

/**
 * Column types for the real pass: an inferring pass over the first `TYPE_SAMPLE_BYTES` (complete
 * records only) guesses numeric or text for every undeclared column. Returns undefined when the
 * sample holds no complete header. When the options declare every column's type, only the header
 * is read (the same answer: nothing is guessed).
 */
export function guessColumnTypes(sample: Uint8Array, options: CsvOptions, whole: boolean): { types: CsvColumnType[]; guessed: boolean[] } | undefined {
  const parser = new CsvParser(options);
  const records = parser.consumeColumns(sample, 0, sample.length, whole);
  if (!parser.hasColumns()) return undefined;
  if (!parser.needsInference()) return { types: parser.inferredTypes(), guessed: parser.inferredTypes().map(() => false) };
  parser.consume(sample, records, sample.length, whole);
  return { types: parser.inferredTypes(), guessed: whole ? parser.inferredTypes().map(() => false) : parser.numericGuesses() };
}

/**
 * Parses CSV bytes held in memory into a `RawTable`. Undeclared column types are guessed from the
 * first MiB and confirmed while parsing; a column guessed numeric that turns out to hold text is
 * read again as text (so the result never depends on the sample).
 *
 * @example
 * const table = parseCsv(new TextEncoder().encode('age,sex\n39, Male\n50, Female\n'));
 * // table.columns: age numeric [39, 50], sex categorical ['Male', 'Female']
 */
export function parseCsv(bytes: Uint8Array, options: CsvOptions = {}): RawTable {
  rejectUnknownOptions(options, CSV_OPTIONS, 'parseCsv');
  if (!(bytes instanceof Uint8Array)) throw new InvalidParameterError('bytes', bytes, 'a Uint8Array');
  const whole = bytes.length <= TYPE_SAMPLE_BYTES;
  const guess = options.columnTypes === 'numeric' ? undefined : guessColumnTypes(whole ? bytes : bytes.subarray(0, TYPE_SAMPLE_BYTES), options, whole);
  const types = guess?.types;
  const guessed = guess?.guessed;
  for (;;) {
    const parser = new CsvParser({ sizeHint: bytes.length, ...options }, types, guessed);
    try {
      parser.consume(bytes, 0, bytes.length, true);
    } catch (error) {
      if (error instanceof CsvTypeGuessError && types !== undefined && guessed !== undefined) {
        types[error.column] = 'categorical';
        guessed[error.column] = false;
        continue;
      }
      throw error;
    }
    if (parser.needsInference()) {
      // No complete header in the sample (a header longer than the sample): infer from everything.
      if (parser.rowCount === 0) return parser.finish(); // throws: no data rows
      return reparse(bytes, options, parser.inferredTypes());
    }
    return parser.finish();
  }
}

function reparse(bytes: Uint8Array, options: CsvOptions, types: CsvColumnType[]): RawTable {
  const parser = new CsvParser(options, types);
  parser.consume(bytes, 0, bytes.length, true);
  return parser.finish();
}
