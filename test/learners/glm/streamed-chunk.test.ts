/**
 * Streamed sums over stored rows read block by block (`src/learners/glm/streamed-chunk.ts`, and
 * the worker pool's `addStreamedChunkSums`): the clipped-gradient sum of the in-memory pass
 * (`sumStoredClippedGradients` on the same stored rows with `clipThresholds`), bit for bit, for
 * blocks of 1024 rows to a whole chunk, float64 and float32 rows, the fused logistic kernel and the
 * blocked kernels of another loss, on this thread and on a pool of 2 threads, on a first pass and
 * on a later one that takes the labels and thresholds from the run's cache. The reference is the
 * in-memory implementation itself (one array, one call). A label other than 0/1 fails the pass
 * with the label error, and the pool still gives the right sums after it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EncodedRowsFile } from '../../../src/data/node/encoded-file.js';
import type { StoredRows } from '../../../src/data/row-source.js';
import { InvalidParameterError } from '../../../src/errors.js';
import { clipThresholds } from '../../../src/learners/glm/clip-thresholds.js';
import { toSignedLabels } from '../../../src/learners/glm/constants.js';
import { storeFeatures } from '../../../src/learners/glm/kernels/feature-memory.js';
import { lossByName } from '../../../src/learners/glm/losses/by-name.js';
import { createClippedGradientPool, type ClippedGradientPool } from '../../../src/learners/glm/parallel/parallel-clipped-sum.js';
import { CHUNK_ROWS, newClipScratch, sumStoredClippedGradients } from '../../../src/learners/glm/per-example.js';
import { BLOCK_BYTES, streamedArea, streamedBlockRows, sumStreamedPass, type StreamedPass } from '../../../src/learners/glm/streamed-chunk.js';
import { seededRng } from '../../../src/random/rng.js';

let dir: string;
let pool: ClippedGradientPool;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dpfit-streamed-chunk-'));
  pool = await createClippedGradientPool({ threads: 2 });
});
after(async () => {
  await pool.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Three chunks, the last one partial, its length neither a multiple of 1024 nor of the fused blocks. */
const N = 2 * CHUNK_ROWS + 5003;

function rows(n: number, d: number, seed: number): { x: Float64Array; y: Float64Array } {
  const rng = seededRng(seed);
  const x = Float64Array.from({ length: n * d }, () => (rng.nextDouble() - 0.5) * 2.4);
  const y = Float64Array.from({ length: n }, (_, i) => (rng.nextDouble() < 0.5 + x[i * d] / 3 ? 1 : 0));
  return { x, y };
}

function storedFile(x: Float64Array, y: Float64Array, n: number, d: number, precision: 'float64' | 'float32', segmentRows: number): { file: EncodedRowsFile; stored: StoredRows } {
  const file = new EncodedRowsFile({ d, precision, segmentRows, directory: dir, source: 'data.csv' });
  file.append(x, y, n);
  return { file, stored: file.finish() };
}

describe('streamed sums over stored rows, block by block', () => {
  it('take blocks of a power of two of rows in [1024, min(CHUNK_ROWS, segment)], at most BLOCK_BYTES when above 1024', () => {
    // 2^20 / (20 * 8) = 6553.6 rows: 4096; float32 8192; 2^20 / (2 * 8) = 65536, capped by the chunk; 1000 * 8 bytes a row: 1024.
    assert.equal(streamedBlockRows(20, 'float64', 2 ** 18), 4096);
    assert.equal(streamedBlockRows(20, 'float32', 2 ** 18), 8192);
    assert.equal(streamedBlockRows(2, 'float64', 2 ** 18), CHUNK_ROWS);
    assert.equal(streamedBlockRows(2, 'float64', 4096), 4096);
    assert.equal(streamedBlockRows(1000, 'float64', 2 ** 18), 1024);
    for (const d of [1, 3, 7, 20, 64, 129, 1000]) {
      for (const precision of ['float64', 'float32'] as const) {
        for (const S of [1024, 2048, 2 ** 15, 2 ** 18]) {
          const B = streamedBlockRows(d, precision, S);
          assert.ok(B >= 1024 && (B & (B - 1)) === 0 && B <= Math.min(CHUNK_ROWS, S) && CHUNK_ROWS % B === 0 && S % B === 0);
          assert.ok(B === 1024 || B * d * (precision === 'float64' ? 8 : 4) <= BLOCK_BYTES, `${d} ${precision} ${S}: ${B}`);
        }
      }
    }
  });

  // d and the segment size choose the block: (3, 2^16): whole chunks; (5, 1024) and (5, 4096): 1024 and 4096 rows; (40, 2^16): 2048 (f64) or 4096 (f32).
  for (const [d, segmentRows] of [[3, 2 ** 16], [5, 1024], [5, 4096], [40, 2 ** 16]] as const) {
    for (const precision of ['float64', 'float32'] as const) {
      it(`give the in-memory sum bit for bit (d ${d}, ${precision}, segments of ${segmentRows}, blocks of ${streamedBlockRows(d, precision, segmentRows)}; logistic and huber; first and cached passes; this thread and the pool)`, () => {
        const { x, y } = rows(N, d, d + segmentRows);
        const { file, stored } = storedFile(x, y, N, d, precision, segmentRows);
        try {
          const xs = storeFeatures(x, N, d, precision);
          const scratch = newClipScratch();
          for (const name of ['logistic', 'huber']) {
            const loss = lossByName(name);
            const data = { x: xs, y: loss.labels === 'signed' ? toSignedLabels(y) : y, n: N, d };
            const rng = seededRng(d);
            for (const clipNorm of [0.05, 0.8]) {
              const theta = Float64Array.from({ length: d }, () => (rng.nextDouble() - 0.5) * 3);
              const expected = sumStoredClippedGradients(loss, data, theta, { clipNorm, thresholds: clipThresholds(data, clipNorm) });
              for (const cache of [false, true]) {
                for (const where of ['this thread', 'the pool'] as const) {
                  const area = streamedArea(N, d, precision, stored.segmentRows, 2, cache);
                  for (const cached of cache ? [false, true] : [false]) {
                    const pass: StreamedPass = { n: N, read: stored.readSync, file: stored.file, area, cached };
                    const out = new Float64Array(d);
                    const clipped = where === 'this thread' ? sumStreamedPass(loss, pass, theta, clipNorm, out, scratch) : pool.addStreamedChunkSums(loss, pass, theta, clipNorm, out);
                    const what = `${name} C=${clipNorm} ${where}${cache ? (cached ? ', cached pass' : ', first pass filling the cache') : ', no cache'}`;
                    assert.deepEqual(Array.from(out), Array.from(expected.sum), what);
                    assert.equal(clipped, expected.clippedCount, what);
                  }
                }
              }
            }
          }
        } finally {
          file.close();
        }
      });
    }
  }

  it('fail a pass with a label other than 0/1 with the label error (without the value), on this thread and on the pool, which then still sums right', () => {
    const d = 4;
    const { x, y } = rows(N, d, 3);
    const bad = Float64Array.from(y);
    // One bad label in every chunk: whichever thread sums a chunk meets one.
    for (let c = 0; c < 3; c++) bad[c * CHUNK_ROWS + 777] = 2;
    const good = storedFile(x, y, N, d, 'float64', 2 ** 15);
    const broken = storedFile(x, bad, N, d, 'float64', 2 ** 15);
    try {
      const loss = lossByName('logistic');
      const theta = Float64Array.from([0.3, -0.2, 0.1, 0.5]);
      const data = { x: storeFeatures(x, N, d, 'float64'), y: toSignedLabels(y), n: N, d };
      const expected = sumStoredClippedGradients(loss, data, theta, { clipNorm: 1, thresholds: clipThresholds(data, 1) });
      const isLabelError = (e: unknown): boolean => e instanceof InvalidParameterError && /labels must be two classes coded 0\/1 or -1\/\+1/.test(e.message) && !/2/.test(e.message.replace(/\/\+1|0\/1/g, ''));
      for (let round = 0; round < 3; round++) {
        const area = streamedArea(N, d, 'float64', 2 ** 15, 2, true);
        const pass: StreamedPass = { n: N, read: broken.stored.readSync, file: broken.stored.file, area, cached: false };
        assert.throws(() => sumStreamedPass(loss, pass, theta, 1, new Float64Array(d), newClipScratch()), isLabelError);
        assert.throws(() => pool.addStreamedChunkSums(loss, pass, theta, 1, new Float64Array(d)), isLabelError);
        const out = new Float64Array(d);
        pool.addStreamedChunkSums(loss, { ...pass, read: good.stored.readSync, file: good.stored.file }, theta, 1, out);
        assert.deepEqual(Array.from(out), Array.from(expected.sum), 'the pool after the error');
      }
    } finally {
      good.file.close();
      broken.file.close();
    }
  });
});
