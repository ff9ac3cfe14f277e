/**
 * Is the "public" validation data of `dpfit train --tune` really apart from the training data?
 * Honest tuning (Papernot & Steinke 2022) scores candidates on data it treats as public: if those
 * rows are training rows, the released choice depends on private rows through the scores, which
 * the repeatAndSelect event does not account. The user asserts that the --validation file is
 * public; this check catches the usual ways that assertion is wrong: a copy of the training data,
 * a sample of it, or training rows mixed into public ones, however reformatted.
 *
 * Checks, cheapest first: the same file (by real path), the same bytes (SHA-256), then shared
 * records. Records are compared as the schema reads them (`data/schema/records.ts`): columns by
 * the schema's names (the file's column order and extra columns do not matter), categorical
 * values as the same when the schema maps them to one slot (the model sees one value: every value
 * it does not list is in the "other" slot) or when they name one category up to their spelling
 * (case, whitespace, the spelling of a number: `RED` and ` red ` are `red`, although the schema
 * puts them in the other slot), numeric values clipped to the public bounds, through the column's
 * transform and scaled to [0, 1] by those bounds, and the label left out. A validation row is
 * SHARED when some training row has the same categorical values and every numeric value within
 * `RESOLUTION` (1/1000 of the column's declared range), found by an exact grid search
 * (`data/near-duplicates.ts`), or when some training row holds the same values in another column
 * order (a header-less copy whose columns were reordered is read by position, so its columns
 * carry the wrong names).
 *
 * The share is over the validation rows that score the candidates: the rows the schema keeps
 * (`schemaKeptRows`). A row dropped for a missing value (`"missing": "dropRow"`) scores nothing,
 * so it counts neither way: otherwise rows with a missing label would pad a copy of the training
 * data below the share while every score is computed on the copy. Every row that scores counts,
 * once per row, duplicates included: the score (accuracy, log loss, AUC, ...) is a mean over the
 * rows, so a row held k times weighs k times, and the share is the weight of shared rows in the
 * scores. Counting distinct records instead would let a few private rows, each repeated, carry
 * most of the scores' weight under the share; and it would not stop padding either: rows that are
 * not training rows dilute the share however they were made (public rows, synthetic rows, or one
 * row repeated with a different jitter each time, which no count of distinct records tells from
 * distinct public rows). That dilution is what the share does not detect: documented, not closed.
 *
 * Every training row read is compared, those the schema drops for a missing value included:
 * they are not in the denominator (which counts validation rows), so they can only make more
 * validation rows shared, and a validation row that copies a private record is private whether or
 * not training used that record.
 *
 * Why a share and not "any shared row": distinct people share records. adult.test has 26 rows
 * equal to a row of adult.data in all 14 attributes (adult.data has 49 rows equal to another of
 * its own rows) and 145 within the resolution: 0.9 % of its 16,281 rows, as expected of two random
 * parts of one census extract; no check on the records can tell those from copied ones. A copy,
 * a sample or a reformatted copy shares (nearly) every row. So the data are not disjoint when more
 * than `OVERLAP_SHARE` (5 %) of the validation rows are shared.
 *
 * The result is the data owner's: how many rows overlap is computed from the private data and
 * never goes into a model file (the report only learns that the data are not disjoint).
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
import { readTable } from '../data/node/read.js';
import { nearDuplicateRows } from '../data/near-duplicates.js';
import { schemaCsvOptions } from '../data/schema/read-options.js';
import type { Schema } from '../data/schema/types.js';
import { foldCategory, schemaKeptRows, schemaRecords } from '../data/schema/records.js';
import type { RawTable } from '../data/table.js';

/**
 * The schema's resolution: two numeric values are the same value when, clipped to the column's
 * [lower, upper], transformed and scaled to [0, 1], they differ by at most 1/1000 (Adult: 0.073
 * years of age, 2,000 of fnlwgt, 0.1 hours a week; on capital-gain's log1p scale 1.2 % of
 * 1 + the amount).
 */
export const RESOLUTION = 1e-3;

/** More than this share of the validation rows that score the candidates shared with the training data: not disjoint. */
export const OVERLAP_SHARE = 0.05;

export interface ValidationOverlap {
  /** Both flags name the same file (after resolving links). */
  readonly samePath: boolean;
  /** Both files have the same bytes. */
  readonly sameContent: boolean;
  /** Validation rows that score the candidates and are shared with the training data (within the resolution, or the same values in another column order). PRIVATE. */
  readonly overlappingRows: number;
  /** Validation rows that score the candidates: those the schema keeps (not dropped for a missing value). */
  readonly validationRows: number;
  /** Validation rows read, dropped ones included. */
  readonly validationRowsRead: number;
}

/** true when the validation data are not disjoint from the training data. */
export function overlaps(overlap: ValidationOverlap): boolean {
  return overlap.samePath || overlap.sameContent || overlap.overlappingRows > OVERLAP_SHARE * overlap.validationRows;
}

function fileSha256(path: string): string {
  const hash = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const read = readSync(fd, buffer, 0, buffer.length, null);
      if (read === 0) break;
      hash.update(buffer.subarray(0, read));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('base64');
}

/** A cell as text for comparing values across columns: numbers in one spelling (" 40", "40.0" and 40 alike), text folded (`foldCategory`), missing as NUL. */
function cellText(table: RawTable, column: number, row: number): string {
  const c = table.columns[column];
  if (c.kind === 'numeric') return Number.isNaN(c.values[row]) ? '\u0000' : String(c.values[row] + 0);
  if (c.codes[row] < 0) return '\u0000';
  return foldCategory(c.levels[c.codes[row]]);
}

/** Each row's feature values (the schema's feature columns, by name) as a sorted list: the row's key whatever the column order. */
function unorderedRowKeys(table: RawTable, schema: Schema, each: (key: string) => void): void {
  const names = new Set(schema.columns.filter((c) => c.type === 'numeric' || c.type === 'categorical').map((c) => c.name));
  const columns = table.columns.flatMap((c, j) => (names.has(c.name) ? [j] : []));
  for (let i = 0; i < table.rowCount; i++) {
    each(columns.map((j) => cellText(table, j, i)).sort().join('\u0001'));
  }
}

/**
 * The overlap checks between the training data (a file, or the rows read from --db) and the
 * validation file, both read with the schema.
 */
export async function validationOverlap(training: string | RawTable, validationPath: string, schema: Schema): Promise<ValidationOverlap> {
  const file = typeof training === 'string' ? training : undefined;
  const samePath = file !== undefined && realpathSync(file) === realpathSync(validationPath);
  const sameContent = samePath || (file !== undefined && fileSha256(file) === fileSha256(validationPath));
  const train = file === undefined ? (training as RawTable) : await readTable(file, schemaCsvOptions(schema, file));
  const validation = await readTable(validationPath, schemaCsvOptions(schema, validationPath));
  const shared = nearDuplicateRows(schemaRecords(train, schema), schemaRecords(validation, schema), RESOLUTION);
  const trainKeys = new Set<string>();
  unorderedRowKeys(train, schema, (key) => trainKeys.add(key));
  let row = 0;
  unorderedRowKeys(validation, schema, (key) => {
    if (trainKeys.has(key)) shared[row] = 1;
    row++;
  });
  // Only the rows that score the candidates count, on both sides of the share.
  const scoring = schemaKeptRows(validation, schema);
  let overlappingRows = 0;
  let validationRows = 0;
  for (let i = 0; i < validation.rowCount; i++) {
    validationRows += scoring[i];
    overlappingRows += scoring[i] & shared[i];
  }
  return { samePath, sameContent, overlappingRows, validationRows, validationRowsRead: validation.rowCount };
}
