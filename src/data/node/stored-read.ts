/**
 * Synchronous reads of a block of stored rows (`StoredRows.readSync`, the layout of
 * `encoded-file.ts`) by file descriptor, so that any thread of the process can read its own
 * blocks: out-of-core DP-GD reads each block of ~1 MiB into memory that stays in the CPU's caches
 * and sums it at once (`learners/gradient/streamed.ts`, the worker pool's streamed jobs). Node only.
 */
import { readSync } from 'node:fs';
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import type { StoredPart, StoredRowsFile } from '../row-source.js';
import { describeOsError } from './files.js';

/** The byte offset in the file of row `row`'s `part`, and the bytes of one row's part. */
export function storedOffset(file: StoredRowsFile, part: StoredPart, row: number): { position: number; rowBytes: number } {
  const { d, segmentRows: S, segmentBytes } = file;
  const b = file.precision === 'float64' ? 8 : 4;
  const segment = Math.floor(row / S);
  const r = row - segment * S;
  const base = segment * segmentBytes;
  if (part === 'x') return { position: base + r * d * b, rowBytes: d * b };
  return { position: base + S * d * b + (part === 'y' ? 0 : 8 * S) + 8 * r, rowBytes: 8 };
}

/**
 * Reads rows row .. row + rows - 1 of `part` into into[0 ..]: all of their bytes, or an error
 * naming the data file (the file ended early, could not be read, or was closed).
 */
export function readStoredRowsSync(file: StoredRowsFile, part: StoredPart, row: number, rows: number, into: Uint8Array): void {
  const { n, segmentRows: S } = file;
  if (!Number.isSafeInteger(row) || !Number.isSafeInteger(rows) || row < 0 || rows < 1 || row + rows > n || Math.floor(row / S) !== Math.floor((row + rows - 1) / S)) {
    throw new InvalidParameterError('rows', `${row} .. ${row + rows - 1}`, `rows of one segment of ${S}, below n = ${n}`);
  }
  const { position, rowBytes } = storedOffset(file, part, row);
  const length = rows * rowBytes;
  if (into.byteLength < length) throw new InvalidParameterError('into.byteLength', into.byteLength, `at least ${length}`);
  if (file.fd < 0) throw new DataFormatError(file.source, 'the temporary file of the encoded rows was closed before the run ended');
  let done = 0;
  while (done < length) {
    let got: number;
    try {
      got = readSync(file.fd, into, done, length - done, position + done);
    } catch (error) {
      throw new DataFormatError(file.source, `could not read the temporary file of the encoded rows (${describeOsError((error as { code?: string }).code)})`);
    }
    if (got === 0) throw new DataFormatError(file.source, 'the temporary file of the encoded rows ended early (it was truncated)');
    done += got;
  }
}
