/**
 * Synchronous block reads of stored rows (`src/data/node/stored-read.ts`, `StoredRows.readSync`):
 * any block of rows inside a segment reads the bytes that the segment reads (`readSegment`, the
 * layout of `encoded-file.ts`) for x, y and the squared norms, in both precisions; a block that
 * crosses a segment or passes n, a short buffer, a closed file and a truncated file are refused
 * with errors naming the parameter or the data file.
 */
import assert from 'node:assert/strict';
import { ftruncateSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { EncodedRowsFile } from '../../../src/data/node/encoded-file.js';
import { readStoredRowsSync, storedOffset } from '../../../src/data/node/stored-read.js';
import { DataFormatError, InvalidParameterError } from '../../../src/errors.js';
import { seededRng } from '../../../src/random/rng.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpfit-stored-read-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function written(n: number, d: number, precision: 'float64' | 'float32', seed: number): EncodedRowsFile {
  const rng = seededRng(seed);
  const x = Float64Array.from({ length: n * d }, () => (rng.nextDouble() - 0.5) * 3.7);
  const y = Float64Array.from({ length: n }, () => (rng.nextDouble() < 0.4 ? 1 : 0));
  const file = new EncodedRowsFile({ d, precision, segmentRows: 1024, directory: dir, source: 'data.csv' });
  file.append(x, y, n);
  return file;
}

describe('synchronous block reads of stored rows', () => {
  it('read the bytes of the segment reads, for any block inside a segment (property)', async () => {
    for (const precision of ['float64', 'float32'] as const) {
      const n = 3 * 1024 + 300;
      const d = 5;
      const file = written(n, d, precision, 7);
      try {
        const stored = file.finish();
        const b = precision === 'float64' ? 8 : 4;
        const segments: { x: Uint8Array; y: Uint8Array; norms: Uint8Array }[] = [];
        for (let k = 0; k < stored.segments; k++) {
          const x = new Uint8Array(1024 * d * b);
          const y = new Uint8Array(8 * 1024);
          const norms = new Uint8Array(8 * 1024);
          await stored.readSegment(k, { x, y, norms });
          segments.push({ x, y, norms });
        }
        fc.assert(fc.property(fc.integer({ min: 0, max: n - 1 }), fc.integer({ min: 1, max: 1024 }), (row, want) => {
          const k = Math.floor(row / 1024);
          const rows = Math.min(want, (k + 1) * 1024 - row, n - row);
          const r = row - k * 1024;
          for (const [part, size] of [['x', d * b], ['y', 8], ['norms', 8]] as const) {
            const into = new Uint8Array(rows * size + 3);
            stored.readSync(part, row, rows, into);
            assert.deepEqual(into.subarray(0, rows * size), segments[k][part].subarray(r * size, (r + rows) * size), `${precision} ${part} rows ${row}+${rows}`);
            assert.deepEqual([...into.subarray(rows * size)], [0, 0, 0], 'nothing past the block');
          }
        }), { numRuns: 60, seed: 11 });
        // The offsets of the layout (`encoded-file.ts`): segment 2, row 5.
        const segmentBytes = 1024 * (d * b + 16);
        assert.deepEqual(storedOffset(stored.file, 'x', 2 * 1024 + 5), { position: 2 * segmentBytes + 5 * d * b, rowBytes: d * b });
        assert.deepEqual(storedOffset(stored.file, 'y', 2 * 1024 + 5), { position: 2 * segmentBytes + 1024 * d * b + 40, rowBytes: 8 });
        assert.deepEqual(storedOffset(stored.file, 'norms', 2 * 1024 + 5), { position: 2 * segmentBytes + 1024 * d * b + 8 * 1024 + 40, rowBytes: 8 });
      } finally {
        file.close();
      }
    }
  });

  it('refuse blocks across a segment or past n and short buffers, naming the range', () => {
    const file = written(2000, 3, 'float64', 8);
    try {
      const stored = file.finish();
      const into = new Uint8Array(8 * 3 * 2048);
      assert.throws(() => stored.readSync('x', 1000, 30, into), (e: unknown) => e instanceof InvalidParameterError && /rows of one segment of 1024, below n = 2000/.test(e.message));
      assert.throws(() => stored.readSync('y', 1990, 11, into), InvalidParameterError);
      assert.throws(() => stored.readSync('x', -1, 1, into), InvalidParameterError);
      assert.throws(() => stored.readSync('x', 0, 0, into), InvalidParameterError);
      assert.throws(() => stored.readSync('x', 0, 10, new Uint8Array(8 * 3 * 10 - 1)), (e: unknown) => e instanceof InvalidParameterError && /into\.byteLength/.test(e.message));
      stored.readSync('y', 1990, 10, into);
    } finally {
      file.close();
    }
  });

  it('fail with an error naming the data file when the file was truncated or closed', () => {
    const file = written(2000, 3, 'float64', 9);
    const stored = file.finish();
    const into = new Uint8Array(8 * 3 * 1024);
    try {
      ftruncateSync(stored.file.fd, 1024 * (3 * 8 + 16) + 100);
      assert.throws(() => stored.readSync('x', 1024, 100, into), (e: unknown) => e instanceof DataFormatError && /data\.csv/.test(e.message) && /ended early/.test(e.message));
      assert.throws(() => readStoredRowsSync(stored.file, 'norms', 1024, 1, into), (e: unknown) => e instanceof DataFormatError && /ended early/.test(e.message));
    } finally {
      file.close();
    }
    assert.throws(() => stored.readSync('x', 0, 10, into), (e: unknown) => e instanceof DataFormatError && /closed before the run ended/.test(e.message));
  });
});
