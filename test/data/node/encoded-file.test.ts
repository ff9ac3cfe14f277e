/**
 * The temporary file of encoded rows (`src/data/node/encoded-file.ts`): it holds private data, so
 * it has no name on disk from the moment it is created (and mode 0600 in a 0700 directory), it is
 * gone after `close` and after a failed opening pass, and what it reads back is what was written:
 * x in its precision (float32 rounded to nearest, as `Float32Array` stores it), y, and each stored
 * row's squared norm summed over j in order (the numbers `clipThresholds` starts from).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EncodedRowsFile, segmentRowsFor } from '../../../src/data/node/encoded-file.js';
import { openStreamedDataset } from '../../../src/data/node/stream-rows.js';
import { parseSchema } from '../../../src/data/schema/parse.js';
import { DataFormatError, InvalidParameterError } from '../../../src/errors.js';
import { seededRng } from '../../../src/random/rng.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpfit-encoded-file-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** This process's open file descriptors whose target lies under `under` (Linux's /proc; undefined elsewhere). */
function openFilesUnder(under: string): { fd: string; target: string }[] | undefined {
  if (!existsSync('/proc/self/fd')) return undefined;
  const found: { fd: string; target: string }[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(under)) found.push({ fd, target });
    } catch {
      // closed meanwhile
    }
  }
  return found;
}

function randomRows(rows: number, d: number, seed: number): { x: Float64Array; y: Float64Array } {
  const rng = seededRng(seed);
  const x = Float64Array.from({ length: rows * d }, () => (rng.nextDouble() - 0.5) * 3.7);
  const y = Float64Array.from({ length: rows }, () => (rng.nextDouble() < 0.4 ? 1 : 0));
  return { x, y };
}

describe('the temporary file of encoded rows', () => {
  it('has no name on disk while open (mode 0600), and is closed with the dataset', () => {
    const where = mkdtempSync(join(dir, 'tmp-'));
    const file = new EncodedRowsFile({ d: 3, precision: 'float64', segmentRows: 1024, directory: where, source: 'data.csv' });
    try {
      assert.deepEqual(readdirSync(where), [], 'no file or directory left under a name');
      const open = openFilesUnder(where);
      if (open !== undefined) {
        assert.equal(open.length, 1, 'one descriptor on the file');
        assert.match(open[0].target, /\(deleted\)$/);
        assert.equal(statSync(`/proc/self/fd/${open[0].fd}`).mode & 0o777, 0o600, 'only the owner can read it');
      }
    } finally {
      file.close();
    }
    assert.deepEqual(openFilesUnder(where) ?? [], [], 'closed');
  });

  for (const precision of ['float64', 'float32'] as const) {
    it(`reads back segments and rows as written (${precision}: x rounded as stored, y, squared norms in order)`, async () => {
      const d = 5;
      const n = 2 * 1024 + 333;
      const { x, y } = randomRows(n, d, 7);
      const file = new EncodedRowsFile({ d, precision, segmentRows: 1024, directory: dir, source: 'data.csv' });
      try {
        // Appended in uneven pieces, as an encoder's chunks come.
        for (let at = 0, piece = 1; at < n; at += piece, piece = (piece * 7) % 1500 + 1) {
          const rows = Math.min(piece, n - at);
          file.append(x.subarray(at * d, (at + rows) * d), y.subarray(at, at + rows), rows);
        }
        assert.equal(file.rowCount, n);
        assert.deepEqual([...file.labelValues].sort(), [0, 1]);
        const stored = file.finish();
        assert.equal(stored.segments, 3);
        const b = precision === 'float64' ? 8 : 4;
        assert.equal(stored.segmentBytes, 1024 * (d * b + 16));
        const into = new Uint8Array(stored.segmentBytes);
        const stored32 = Float32Array.from(x);
        for (let k = 0; k < stored.segments; k++) {
          const rows = await stored.readSegment(k, { x: into.subarray(0, 1024 * d * b), y: into.subarray(1024 * d * b, 1024 * d * b + 8 * 1024), norms: into.subarray(1024 * d * b + 8 * 1024) });
          assert.equal(rows, Math.min(1024, n - 1024 * k));
          const xs = precision === 'float64' ? new Float64Array(into.buffer, 0, 1024 * d) : new Float32Array(into.buffer, 0, 1024 * d);
          const ys = new Float64Array(into.buffer, 1024 * d * b, 1024);
          const ss = new Float64Array(into.buffer, 1024 * d * b + 8 * 1024, 1024);
          for (let r = 0; r < 1024; r++) {
            const i = 1024 * k + r;
            let s = 0;
            for (let j = 0; j < d; j++) {
              const expected = i < n ? (precision === 'float64' ? x[i * d + j] : stored32[i * d + j]) : 0;
              assert.equal(xs[r * d + j], expected);
              s += expected * expected;
            }
            assert.equal(ys[r], i < n ? y[i] : 0);
            assert.equal(ss[r], s, 'the squared norm of the stored row, summed over j in order');
          }
        }
        const indices = Uint32Array.from([0, 1, 2, 1023, 1024, 1500, n - 1]);
        const gx = new Float64Array(indices.length * d);
        const gy = new Float64Array(indices.length);
        await stored.readRows(indices, gx, gy);
        indices.forEach((i, k) => {
          for (let j = 0; j < d; j++) assert.equal(gx[k * d + j], precision === 'float64' ? x[i * d + j] : stored32[i * d + j]);
          assert.equal(gy[k], y[i]);
        });
        await assert.rejects(stored.readRows(Uint32Array.from([5, 5]), gx, gy), InvalidParameterError, 'positions ascending and distinct');
        await assert.rejects(stored.readSegment(3, { x: into, y: into, norms: into }), InvalidParameterError);
      } finally {
        file.close();
      }
    });
  }

  it('sizes segments to a power of two of at least 1024 rows within the budget', () => {
    assert.equal(segmentRowsFor(168, 64e6), 131072);
    assert.equal(segmentRowsFor(168, 1), 1024);
    assert.equal(segmentRowsFor(8, 1e12), 2 ** 18);
    assert.throws(() => new EncodedRowsFile({ d: 2, precision: 'float64', segmentRows: 1000, source: 's' }), InvalidParameterError);
  });

  it('a directory it cannot create the file in is one error naming the data file and the directory, never a value', () => {
    assert.throws(
      () => new EncodedRowsFile({ d: 2, precision: 'float64', segmentRows: 1024, directory: join(dir, 'no-such-dir'), source: 'data.csv' }),
      (error: unknown) => error instanceof DataFormatError && /^data\.csv: could not create the temporary file of the encoded rows in .*no-such-dir \(no such file or directory\): set TMPDIR/.test(error.message),
    );
  });

  it('an opening pass that fails (a bad value far into the file) leaves no file and no open descriptor', async () => {
    const where = mkdtempSync(join(dir, 'failing-'));
    const schema = parseSchema({ version: 1, columns: [{ name: 'a', type: 'numeric', lower: 0, upper: 1 }, { name: 'y', type: 'label', positive: [1], negative: [0] }] });
    const path = join(dir, 'bad.csv');
    const lines = ['a,y'];
    for (let i = 0; i < 50000; i++) lines.push(i === 40000 ? 'oops,1' : `${(i % 10) / 10},${i % 2}`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    await assert.rejects(openStreamedDataset(path, schema, { temporaryDirectory: where }), (error: unknown) => error instanceof DataFormatError && /line 40002, column 'a': a value is not a number$/.test(error.message));
    assert.deepEqual(readdirSync(where), []);
    assert.deepEqual(openFilesUnder(where) ?? [], []);
  });
});
