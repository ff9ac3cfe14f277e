/**
 * Out of core with the rows encoded once (`openStreamedDataset`'s default: a temporary file read
 * back in blocks, `data/node/encoded-file.ts`; summed by `streamed.ts`' stored path through the
 * in-memory kernels, `glm/streamed-chunk.ts`): the released model is the in-memory model bit for bit, with the same seed,
 * whatever the segment size (1024 rows, pieces of a chunk; 2^17 rows, several chunks per segment),
 * for float64 and float32 storage (`precision`, against `trainDpGd`'s own float32 path), for the
 * fused logistic kernel and the blocked kernels of another loss. The reference is the in-memory
 * implementation itself, an independent path (one array, one sum) that the segments must
 * reproduce. And the run uses the rows of its opening pass: a data file edited afterwards changes
 * nothing; the CLI's `--max-memory --precision float32` run is the in-memory one, byte for byte,
 * and on neighbouring files differs only in theta.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadDataset } from '../../../src/data/node/read.js';
import { openStreamedDataset } from '../../../src/data/node/stream-rows.js';
import { parseSchema } from '../../../src/data/schema/parse.js';
import type { Schema } from '../../../src/data/schema/types.js';
import { InvalidParameterError } from '../../../src/errors.js';
import { trainDpGd } from '../../../src/learners/gradient/dp-gd.js';
import { trainDpSgd } from '../../../src/learners/gradient/dp-sgd.js';
import fc from 'fast-check';
import { clipThresholds } from '../../../src/learners/glm/clip-thresholds.js';
import { toSignedLabels } from '../../../src/learners/glm/constants.js';
import { storeFeatures } from '../../../src/learners/glm/kernels/feature-memory.js';
import { createClippedGradientPool, poolGradientSummer } from '../../../src/learners/glm/parallel/parallel-clipped-sum.js';
import { lossByName } from '../../../src/learners/glm/losses/by-name.js';
import { CHUNK_ROWS, sumStoredClippedGradients } from '../../../src/learners/glm/per-example.js';
import { streamedClippedSum, trainDpGdStreamed, trainDpSgdStreamed } from '../../../src/learners/gradient/streamed.js';
import { seededRng } from '../../../src/random/rng.js';
import { assertIndistinguishable, observedText } from '../../helpers/neighbour-diff.js';
import { runCli } from '../../helpers/people.js';

const schemaSpec = {
  version: 1,
  columns: [
    { name: 'a', type: 'numeric', lower: -1, upper: 1 },
    { name: 'b', type: 'numeric', lower: 0, upper: 50, missing: 'dropRow', bins: [10, 20], encode: 'valueAndBins' },
    { name: 'c', type: 'categorical', categories: ['u', 'v'] },
    { name: 'y', type: 'label', positive: ['yes'], negative: ['no'] },
  ],
  intercept: 1,
};
const schema: Schema = parseSchema(schemaSpec);

function csvLines(rows: number, seed: number): string[] {
  const rng = seededRng(seed);
  const lines = ['a,b,c,y'];
  for (let i = 0; i < rows; i++) {
    const a = rng.nextDouble() * 2.2 - 1.1;
    const b = rng.nextDouble() < 0.01 ? '' : (rng.nextDouble() * 60).toFixed(3);
    const c = ['u', 'v', 'w'][Math.floor(rng.nextDouble() * 3)];
    lines.push(`${a.toFixed(6)},${b},${c},${rng.nextDouble() < 0.5 + a / 3 ? 'yes' : 'no'}`);
  }
  return lines;
}

let dir: string;
let csv: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpfit-ooc-encoded-'));
  csv = join(dir, 'rows.csv');
  // Three chunks of the in-memory sum, the last one partial.
  writeFileSync(csv, `${csvLines(2 * CHUNK_ROWS + 7000, 5).join('\n')}\n`);
  writeFileSync(join(dir, 'schema.json'), JSON.stringify(schemaSpec));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const options = { clipNorm: 0.7, steps: 3, learningRate: 1.5, regularization: 1e-3, noiseMultiplier: 0.9, delta: 1e-6 };

describe('out of core, rows encoded once', () => {
  // The models below are compared after the noise's grid rounding, which would hide an ulp: the sums themselves, bit for bit.
  for (const [label, maxMemory] of [['1024-row segments', 1e6], ['segments of several chunks', undefined]] as const) {
    for (const precision of ['float64', 'float32'] as const) {
      it(`give the in-memory clipped gradient sum bit for bit (${precision}, ${label}; logistic and huber, any theta: property)`, async () => {
        const memory = await loadDataset(csv, schema, { droppedRows: 'zeroRows' });
        const { n, d } = memory.dataset;
        const x = precision === 'float64' ? memory.dataset.x : storeFeatures(memory.dataset.x, n, d, 'float32');
        const signed = { x, y: toSignedLabels(memory.dataset.y), n, d };
        const real = { x, y: memory.dataset.y, n, d };
        const streamed = await openStreamedDataset(csv, schema, { precision, ...(maxMemory === undefined ? {} : { maxMemory }) });
        // The pool (2 threads) reads and sums its own chunks, block by block, whatever the segment size.
        const pool = await createClippedGradientPool({ threads: 2 });
        const pooled = poolGradientSummer(pool);
        try {
          await fc.assert(
            fc.asyncProperty(fc.array(fc.double({ min: -4, max: 4, noNaN: true }), { minLength: d, maxLength: d }), fc.constantFrom(0.05, 0.7, 3), fc.constantFrom('logistic', 'huber'), async (values, clipNorm, name) => {
              const loss = lossByName(name);
              const theta = Float64Array.from(values);
              const data = loss.labels === 'signed' ? signed : real; // as dataForLoss gives them in memory
              const expected = sumStoredClippedGradients(loss, data, theta, { clipNorm, thresholds: clipThresholds(data, clipNorm) });
              for (const summer of [undefined, pooled]) {
                const out = new Float64Array(d);
                const clipped = await streamedClippedSum(loss, streamed.rows, theta, clipNorm, out, summer);
                assert.deepEqual(Array.from(out), Array.from(expected.sum), summer === undefined ? 'this thread' : 'the worker pool');
                assert.equal(clipped, expected.clippedCount);
              }
            }),
            { numRuns: 6, seed: 28 },
          );
        } finally {
          await pool.close();
          streamed.close();
        }
      });
    }
  }

  // maxMemory 1e6: segments of 1024 rows (32 pieces per chunk); default cap: 2^17 or 2^18 rows (several chunks per segment).
  for (const [label, maxMemory, small] of [['1024-row segments', 1e6, true], ['segments of several chunks', undefined, false]] as const) {
    for (const precision of ['float64', 'float32'] as const) {
      for (const loss of ['logistic', 'huber']) {
        it(`DP-GD (${loss}, ${precision}, ${label}) releases the in-memory model, event and diagnostics bit for bit`, async () => {
          const memory = await loadDataset(csv, schema, { droppedRows: 'zeroRows' });
          assert.ok(memory.privateDiagnostics.droppedRows > 0, 'zero rows in the data');
          const expected = trainDpGd(memory.dataset, { ...options, loss, precision, rng: seededRng(3) });
          const streamed = await openStreamedDataset(csv, schema, { precision, ...(maxMemory === undefined ? {} : { maxMemory }) });
          try {
            const segmentRows = streamed.rows.stored?.segmentRows as number;
            assert.ok(small ? segmentRows === 1024 : segmentRows >= 4 * CHUNK_ROWS, `${segmentRows} rows per segment`);
            assert.deepEqual(streamed.privateDiagnostics, memory.privateDiagnostics);
            const got = await trainDpGdStreamed(streamed.rows, { ...options, loss, precision, rng: seededRng(3) });
            assert.deepEqual(got.model.theta, expected.model.theta);
            assert.deepEqual(got.privacy, expected.privacy);
            assert.deepEqual(got.diagnostics, expected.diagnostics);
            // With the worker pool, as `dpfit train --max-memory` runs it.
            const pool = await createClippedGradientPool({ threads: 2 });
            try {
              const pooled = await trainDpGdStreamed(streamed.rows, { ...options, loss, precision, rng: seededRng(3), gradientSummer: poolGradientSummer(pool) });
              assert.deepEqual(pooled.model.theta, expected.model.theta);
              assert.deepEqual(pooled.diagnostics, expected.diagnostics);
            } finally {
              await pool.close();
            }
          } finally {
            streamed.close();
          }
        });
      }
    }
  }

  it('DP-GD with rows of different norms (thresholds that differ per row, kept after the first step): every step\'s iterate is the in-memory one', async () => {
    const varied = parseSchema({ ...schemaSpec, rowTransform: 'none' });
    const memory = await loadDataset(csv, varied, { droppedRows: 'zeroRows' });
    const steps: number[][] = [];
    const run = { ...options, clipNorm: 0.4, steps: 4, noiseMultiplier: 0.5 };
    const expected = trainDpGd(memory.dataset, { ...run, rng: seededRng(5), onStep: (_t, _s, theta) => steps.push(Array.from(theta)) });
    for (const precision of ['float64', 'float32'] as const) {
      const memoryRun = precision === 'float64' ? { steps, theta: expected.model.theta } : (() => {
        const perStep: number[][] = [];
        const result = trainDpGd(memory.dataset, { ...run, precision, rng: seededRng(5), onStep: (_t, _s, theta) => perStep.push(Array.from(theta)) });
        return { steps: perStep, theta: result.model.theta };
      })();
      const streamed = await openStreamedDataset(csv, varied, { precision });
      try {
        const stored = streamed.rows.stored;
        assert.ok(stored !== undefined && 16 * streamed.rows.n <= 2 * stored.segmentBytes, 'the labels and thresholds are kept after the first step');
        const got: number[][] = [];
        const result = await trainDpGdStreamed(streamed.rows, { ...run, precision, rng: seededRng(5), onStep: (_t, _s, theta) => got.push(Array.from(theta)) });
        assert.deepEqual(got, memoryRun.steps, precision);
        assert.deepEqual(result.model.theta, memoryRun.theta);
      } finally {
        streamed.close();
      }
    }
  });

  it('DP-SGD reads its batches at their positions: the in-memory model', async () => {
    const memory = await loadDataset(csv, schema, { droppedRows: 'zeroRows' });
    const sgd = { loss: 'logistic', clipNorm: 1, batchSize: 300, steps: 9, learningRate: 0.5, noiseMultiplier: 1.1, delta: 1e-5 };
    const expected = trainDpSgd(memory.dataset, { ...sgd, rng: seededRng(8) });
    const streamed = await openStreamedDataset(csv, schema, { maxMemory: 1e6 });
    try {
      const got = await trainDpSgdStreamed(streamed.rows, { ...sgd, rng: seededRng(8) });
      assert.deepEqual(got.model.theta, expected.model.theta);
      assert.deepEqual(got.privacy, expected.privacy);
    } finally {
      streamed.close();
    }
  });

  it('trains on the rows of its opening pass: the data file edited afterwards changes nothing', async () => {
    const path = join(dir, 'edited.csv');
    const lines = csvLines(5000, 6);
    writeFileSync(path, `${lines.join('\n')}\n`);
    const expected = trainDpGd((await loadDataset(path, schema, { droppedRows: 'zeroRows' })).dataset, { ...options, rng: seededRng(4) });
    const streamed = await openStreamedDataset(path, schema);
    try {
      writeFileSync(path, `${lines.slice(0, 100).join('\n')}\n`);
      const got = await trainDpGdStreamed(streamed.rows, { ...options, rng: seededRng(4) });
      assert.deepEqual(got.model.theta, expected.model.theta);
    } finally {
      streamed.close();
    }
  });

  it('refuses a precision other than the stored one, naming it', async () => {
    const streamed = await openStreamedDataset(csv, schema, { precision: 'float32' });
    try {
      await assert.rejects(trainDpGdStreamed(streamed.rows, { ...options, rng: seededRng(1) }), (error: unknown) => error instanceof InvalidParameterError && /precision/.test(error.message) && /"float32", the precision the rows were stored with/.test(error.message));
      // DP-SGD has no float32 storage in memory: float32 rows would be another model.
      await assert.rejects(trainDpSgdStreamed(streamed.rows, { loss: 'logistic', clipNorm: 1, batchSize: 100, steps: 2, learningRate: 0.5, noiseMultiplier: 1, delta: 1e-5, rng: seededRng(1) }), (error: unknown) => error instanceof InvalidParameterError && /float64/.test(error.message));
    } finally {
      streamed.close();
    }
    const reread = await openStreamedDataset(csv, schema, { encodeOnce: false });
    try {
      await assert.rejects(trainDpGdStreamed(reread.rows, { ...options, precision: 'float32', rng: seededRng(1) }), InvalidParameterError);
    } finally {
      reread.close();
    }
    await assert.rejects(openStreamedDataset(csv, schema, { encodeOnce: false, precision: 'float32' }), InvalidParameterError);
  });
});

describe('train --max-memory --precision float32 (CLI)', () => {
  /** What the adversary of the out-of-core surface observes of one run (test/helpers/neighbour-diff.ts). */
  async function observe(path: string, ...flags: string[]) {
    const out = join(dir, 'model.json');
    const run = await runCli('train', '--data', path, '--schema', join(dir, 'schema.json'), '--method', 'dpgd', '--precision', 'float32', '--steps', '2', '--epsilon', '1', '--delta', '1e-6', '--seed', '7', '--json', '--out', out, ...flags);
    const modelText = existsSync(out) ? readFileSync(out, 'utf8') : null;
    rmSync(out, { force: true });
    return { observed: { status: run.code, stdout: observedText(run.stdout), stderr: observedText(run.stderr), modelFile: modelText === null ? null : JSON.parse(modelText) }, modelText };
  }

  it("is the in-memory float32 run byte for byte, and on D and D' (one row replaced) differs only in theta", async () => {
    const lines = csvLines(6000, 9);
    const d = join(dir, 'd.csv');
    const dPrime = join(dir, 'd-prime.csv');
    writeFileSync(d, `${lines.join('\n')}\n`);
    const other = [...lines];
    other[3000] = '-1.000000,,w,yes'; // replaced by a record the schema drops (a zero row): n is unchanged
    writeFileSync(dPrime, `${other.join('\n')}\n`);
    const a = await observe(d, '--max-memory', '64MiB');
    const b = await observe(dPrime, '--max-memory', '64MiB');
    assert.equal(a.observed.status, 0, JSON.stringify(a.observed.stderr));
    assertIndistinguishable(a.observed, b.observed, { released: ['stdout.model.theta', 'modelFile.theta'] }, 'train --max-memory 64MiB --precision float32');
    for (const [path, streamed] of [[d, a], [dPrime, b]] as const) {
      const memory = await observe(path);
      assert.deepEqual(streamed.observed, memory.observed, `${path}: out of core = in memory`);
      assert.equal(streamed.modelText, memory.modelText, `${path}: the model files byte for byte`);
    }
  });
});
