/**
 * Out-of-core DP-GD and DP-SGD (`learners/streamed-gradient.ts` over `data/node/stream-rows.ts`):
 * the rows streamed from a CSV or Parquet file through DuckDB, encoded chunk by chunk, give the
 * same rows, the same clipped sums and the same released model as the in-memory path
 * (`loadDataset` + `trainDpGd` / `trainDpSgd`) with the same seed, bit for bit. The reference is
 * the in-memory implementation itself: an independent path through the code (one table, one
 * encoding, one indexed sum) that the streamed one must reproduce exactly.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { convertCsvToParquet } from '../src/data/node/duckdb.js';
import { loadDataset } from '../src/data/node/read.js';
import { openStreamedDataset, parseMemorySize } from '../src/data/node/stream-rows.js';
import { parseSchema, type Schema } from '../src/data/schema.js';
import { trainDpGd } from '../src/learners/dp-gd.js';
import { trainDpSgd } from '../src/learners/dp-sgd.js';
import { CHUNK_ROWS, sumClippedGradients } from '../src/learners/glm/per-example.js';
import { toSignedLabels } from '../src/learners/glm/constants.js';
import { logisticLoss } from '../src/learners/glm/logistic.js';
import { streamedClippedSum, trainDpGdStreamed, trainDpSgdStreamed } from '../src/learners/streamed-gradient.js';
import { seededRng } from '../src/random/rng.js';
import { InvalidParameterError } from '../src/errors.js';

/** A schema exercising every encoding: value, log1p, bins, categories with "other", fill, dropRow. */
const schema: Schema = parseSchema({
  version: 1,
  provenance: 'declared',
  columns: [
    { name: 'age', type: 'numeric', lower: 17, upper: 90, bins: [30, 50, 70], encode: 'valueAndBins' },
    { name: 'income', type: 'numeric', lower: 0, upper: 1e6, transform: 'log1p', missing: 'fill', fillValue: 0 },
    { name: 'hours', type: 'numeric', lower: 0, upper: 100, missing: 'dropRow' },
    { name: 'city', type: 'categorical', categories: ['Paris', 'Lyon', 'Nice'], missing: 'other' },
    { name: 'y', type: 'label', positive: ['yes'], negative: ['no'] },
  ],
  intercept: 1,
});

/** Deterministic synthetic rows (a seeded generator): some missing values, unknown cities, out-of-bound values. */
function writeCsv(path: string, rows: number, seed: number): void {
  const rng = seededRng(seed);
  const cities = ['Paris', 'Lyon', 'Nice', 'Lille', ''];
  const lines = ['age,income,hours,city,y'];
  for (let i = 0; i < rows; i++) {
    const age = Math.floor(10 + rng.nextDouble() * 90);
    const income = rng.nextDouble() < 0.05 ? '' : (rng.nextDouble() * 2e5).toFixed(2);
    const hours = rng.nextDouble() < 0.01 ? '' : (rng.nextDouble() * 110).toFixed(1);
    const city = cities[Math.floor(rng.nextDouble() * cities.length)];
    const y = rng.nextDouble() < 0.3 + age / 200 ? 'yes' : 'no';
    lines.push(`${age},${income},${hours},${city},${y}`);
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
}

let dir: string;
let csv: string;
let parquet: string;
let smallCsv: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dpfit-ooc-'));
  csv = join(dir, 'big.csv');
  parquet = join(dir, 'big.parquet');
  smallCsv = join(dir, 'small.csv');
  // > 2 CHUNK_ROWS rows after drops: the sum has three chunks, the last one partial.
  writeCsv(csv, 2 * CHUNK_ROWS + 5000, 11);
  await convertCsvToParquet(csv, parquet, { threads: 1 });
  writeCsv(smallCsv, 3000, 12);
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** Every row of a source, concatenated. */
async function allRows(source: { d: number; scan: (f: (x: Float64Array, y: Float64Array, rows: number) => void) => Promise<void> }): Promise<{ x: number[]; y: number[] }> {
  const x: number[] = [];
  const y: number[] = [];
  await source.scan((cx, cy, rows) => {
    x.push(...cx.subarray(0, rows * source.d));
    y.push(...cy.subarray(0, rows));
  });
  return { x, y };
}

const options = { loss: 'logistic', clipNorm: 1, steps: 3, learningRate: 2, regularization: 1e-4, noiseMultiplier: 0.8, delta: 1e-6 };

describe('streamed rows', () => {
  for (const which of ['csv', 'parquet'] as const) {
    it(`are the rows loadDataset encodes (${which}, dropRow, fill, other, log1p, bins, intercept)`, async () => {
      const path = which === 'csv' ? csv : parquet;
      const memory = await loadDataset(path, schema);
      const streamed = await openStreamedDataset(path, schema);
      try {
        assert.equal(streamed.rows.n, memory.dataset.n);
        assert.equal(streamed.rows.d, memory.dataset.d);
        assert.ok(memory.privateDiagnostics.droppedRows > 0, 'the data exercise dropRow');
        assert.deepEqual(streamed.privateDiagnostics, memory.privateDiagnostics);
        assert.deepEqual(streamed.rows.featureNames, memory.dataset.featureNames);
        const rows = await allRows(streamed.rows);
        assert.deepEqual(rows.x, Array.from(memory.dataset.x));
        assert.deepEqual(rows.y, Array.from(memory.dataset.y));
      } finally {
        streamed.close();
      }
    });
  }

  it('give the clipped gradient sum of the in-memory kernel bit for bit, for any theta (property)', async () => {
    const memory = await loadDataset(parquet, schema);
    const glm = { ...memory.dataset, y: toSignedLabels(memory.dataset.y) };
    const streamed = await openStreamedDataset(parquet, schema);
    try {
      const d = glm.d;
      await fc.assert(
        fc.asyncProperty(fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: d, maxLength: d }), fc.constantFrom(0.1, 1, 3), async (values, clipNorm) => {
          const theta = Float64Array.from(values);
          const expected = sumClippedGradients(logisticLoss, glm, theta, { clipNorm });
          const out = new Float64Array(d);
          const clipped = await streamedClippedSum(logisticLoss, streamed.rows, theta, clipNorm, out);
          assert.deepEqual(Array.from(out), Array.from(expected.sum));
          assert.equal(clipped, expected.clippedCount);
        }),
        { numRuns: 4, seed: 5 },
      );
    } finally {
      streamed.close();
    }
  });
});

describe('out-of-core training', () => {
  it('DP-GD from Parquet under a memory cap releases the in-memory model (same seed) and the same event', async () => {
    const memory = await loadDataset(parquet, schema);
    const expected = trainDpGd(memory.dataset, { ...options, rng: seededRng(3) });
    const streamed = await openStreamedDataset(parquet, schema, { maxMemory: 64 * 2 ** 20 });
    try {
      const got = await trainDpGdStreamed(streamed.rows, { ...options, rng: seededRng(3) });
      assert.deepEqual(got.model.theta, expected.model.theta);
      assert.deepEqual(got.privacy, expected.privacy);
      assert.deepEqual(got.diagnostics, expected.diagnostics);
    } finally {
      streamed.close();
    }
  });

  it('DP-SGD from CSV: batches drawn first by the generator, gathered per step; same model and event as in memory', async () => {
    const memory = await loadDataset(smallCsv, schema);
    const sgd = { loss: 'logistic', clipNorm: 1, batchSize: 120, steps: 12, learningRate: 0.5, noiseMultiplier: 1.1, delta: 1e-5, optimizer: 'adam' as const };
    const expected = trainDpSgd(memory.dataset, { ...sgd, rng: seededRng(9) });
    const streamed = await openStreamedDataset(smallCsv, schema);
    try {
      const got = await trainDpSgdStreamed(streamed.rows, { ...sgd, rng: seededRng(9) });
      assert.deepEqual(got.model.theta, expected.model.theta);
      assert.deepEqual(got.privacy, expected.privacy);
      assert.deepEqual(got.diagnostics, expected.diagnostics);
    } finally {
      streamed.close();
    }
  });

  it('refuses one-class labels as the in-memory path does', async () => {
    const path = join(dir, 'one.csv');
    writeFileSync(path, 'age,income,hours,city,y\n30,1,2,Paris,no\n40,1,2,Lyon,no\n');
    const streamed = await openStreamedDataset(path, schema);
    try {
      await assert.rejects(trainDpGdStreamed(streamed.rows, { ...options, rng: seededRng(1) }), InvalidParameterError);
    } finally {
      streamed.close();
    }
  });

  it('reads memory sizes with units and refuses sizes below 64 MiB', () => {
    assert.equal(parseMemorySize('--max-memory', '256MB'), 256e6);
    assert.equal(parseMemorySize('--max-memory', '1GiB'), 2 ** 30);
    assert.throws(() => parseMemorySize('--max-memory', '10MB'), InvalidParameterError);
    assert.throws(() => parseMemorySize('--max-memory', 'lots'), InvalidParameterError);
  });
});
