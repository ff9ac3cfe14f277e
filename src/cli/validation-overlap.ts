/**
 * Is the "public" validation data of `dpfit train --tune` really apart from the training data?
 * Honest tuning (Papernot & Steinke 2022) scores candidates on data it treats as public: if those
 * rows are training rows, the released choice depends on private rows through the scores, which
 * the repeatAndSelect event does not account. Three checks, cheapest first: the same file (by
 * real path), the same bytes (SHA-256), and shared records: SHA-256 of every RAW row — every
 * column of the file but the label, as read, including columns the schema skips (Adult's fnlwgt)
 * — of the validation set looked up among the training rows'. Raw rather than encoded rows: after
 * the schema's binning and normalisation distinct people collide (73 of adult.test's 16,281 rows
 * encode like a row of adult.data), while a copied record keeps every raw field.
 *
 * The result is the data owner's: how many rows overlap is computed from the private data and
 * never goes into a model file (the report only learns that the data are not disjoint).
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
import { readTable } from '../data/node/read.js';
import { schemaCsvOptions, type Schema } from '../data/schema.js';
import type { CsvColumnType } from '../data/csv.js';
import type { RawTable } from '../data/table.js';

export interface ValidationOverlap {
  /** Both flags name the same file (after resolving links). */
  readonly samePath: boolean;
  /** Both files have the same bytes. */
  readonly sameContent: boolean;
  /** Validation rows whose encoded row (features and label) is also a training row. PRIVATE. */
  readonly overlappingRows: number;
  readonly validationRows: number;
}

/** true when the validation data are not disjoint from the training data. */
export function overlaps(overlap: ValidationOverlap): boolean {
  return overlap.samePath || overlap.sameContent || overlap.overlappingRows > 0;
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

/** The table with every column of the file read (skipped ones as text), for record comparison. */
async function readAllColumns(path: string, schema: Schema): Promise<RawTable> {
  const options = schemaCsvOptions(schema, path);
  const declared: Readonly<Record<string, CsvColumnType>> = typeof options.columnTypes === 'object' ? options.columnTypes : {};
  const columnTypes: Record<string, CsvColumnType> = {};
  for (const [name, type] of Object.entries(declared)) columnTypes[name] = type === 'skip' ? 'categorical' : type;
  return readTable(path, { ...options, columnTypes });
}

/** SHA-256 of each row's raw cells, the label column left out (its spelling differs between files, e.g. Adult's '>50K.'). */
function rowHashes(table: RawTable, labelName: string, each: (hash: string) => void): void {
  const columns = table.columns.filter((c) => c.name !== labelName);
  for (let i = 0; i < table.rowCount; i++) {
    const cells = columns.map((c) => {
      if (c.kind === 'numeric') return Number.isNaN(c.values[i]) ? '\u0000' : String(c.values[i] + 0);
      return c.codes[i] < 0 ? '\u0000' : c.levels[c.codes[i]];
    });
    each(createHash('sha256').update(JSON.stringify(cells)).digest('base64'));
  }
}

/** The three overlap checks between the training and the validation files (read with the same schema). */
export async function validationOverlap(trainPath: string, validationPath: string, schema: Schema): Promise<ValidationOverlap> {
  const samePath = realpathSync(trainPath) === realpathSync(validationPath);
  const sameContent = samePath || fileSha256(trainPath) === fileSha256(validationPath);
  const label = schema.columns.find((c) => c.type === 'label')?.name ?? '';
  const validation = await readAllColumns(validationPath, schema);
  const train = await readAllColumns(trainPath, schema);
  const wanted = new Map<string, number>();
  rowHashes(validation, label, (hash) => wanted.set(hash, (wanted.get(hash) ?? 0) + 1));
  let overlappingRows = 0;
  rowHashes(train, label, (hash) => {
    const count = wanted.get(hash);
    if (count !== undefined) {
      overlappingRows += count;
      wanted.delete(hash);
    }
  });
  return { samePath, sameContent, overlappingRows, validationRows: validation.rowCount };
}
