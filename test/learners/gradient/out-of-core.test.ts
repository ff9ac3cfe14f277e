/**
 * Out-of-core DP-GD and DP-SGD (`learners/gradient/streamed.ts` over `data/node/stream-rows.ts`):
 * the rows streamed from a CSV or Parquet file through DuckDB, encoded chunk by chunk, give the
 * same rows, the same clipped sums and the same released model as the in-memory path
 * (`loadDataset` + `trainDpGd` / `trainDpSgd`) with the same seed, bit for bit. The reference is
 * the in-memory implementation itself: an independent path through the code (one table, one
 * encoding, one indexed sum) that the streamed one must reproduce exactly.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { DuckDBInstance } from '@duckdb/node-api';
import { convertCsvToParquet, readCsvWithDuckDb, streamChunks } from '../../../src/data/node/duckdb.js';
import { loadDataset } from '../../../src/data/node/read.js';
import { openStreamedDataset, parseMemorySize } from '../../../src/data/node/stream-rows.js';
import { parseSchema } from '../../../src/data/schema/parse.js';
import type { Schema } from '../../../src/data/schema/types.js';
import { trainDpGd } from '../../../src/learners/gradient/dp-gd.js';
import { trainDpSgd } from '../../../src/learners/gradient/dp-sgd.js';
import { CHUNK_ROWS, sumClippedGradients } from '../../../src/learners/glm/per-example.js';
import { toSignedLabels } from '../../../src/learners/glm/constants.js';
import { logisticLoss } from '../../../src/learners/glm/losses/logistic.js';
import type { RowSource } from '../../../src/data/row-source.js';
import { streamedClippedSum, trainDpGdStreamed, trainDpSgdStreamed } from '../../../src/learners/gradient/streamed.js';
import { seededRng } from '../../../src/random/rng.js';
import { DataFormatError, InvalidParameterError } from '../../../src/errors.js';
import { assertFailure, assertUnchanged, snapshot } from '../../helpers/files.js';
import { runCli } from '../../helpers/people.js';

/** A schema exercising every encoding: value, log1p, bins, categories with "other", fill, dropRow. */
const schemaSpec = {
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
};
const schema: Schema = parseSchema(schemaSpec);
/** The same with a wide text column the schema ignores (read by DuckDB, never encoded). */
const wideSchemaSpec = { ...schemaSpec, columns: [...schemaSpec.columns, { name: 'note', type: 'ignore' }] };
const wideSchema: Schema = parseSchema(wideSchemaSpec);

/** DuckDB's default `buffer_size` of its CSV reader (32 MB): a larger file needs a second buffer. */
const DUCKDB_CSV_BUFFER = 32_000_000;

/**
 * Deterministic synthetic rows (a seeded generator): some missing values, unknown cities, out-of-bound values.
 * With `noteBytes`, a last column "note" of that many bytes per row (the same rows otherwise).
 */
function writeCsv(path: string, rows: number, seed: number, noteBytes = 0): void {
  const rng = seededRng(seed);
  const cities = ['Paris', 'Lyon', 'Nice', 'Lille', ''];
  const note = noteBytes > 0 ? `,${'n'.repeat(noteBytes)}` : '';
  const lines = [`age,income,hours,city,y${noteBytes > 0 ? ',note' : ''}`];
  for (let i = 0; i < rows; i++) {
    const age = Math.floor(10 + rng.nextDouble() * 90);
    const income = rng.nextDouble() < 0.05 ? '' : (rng.nextDouble() * 2e5).toFixed(2);
    const hours = rng.nextDouble() < 0.01 ? '' : (rng.nextDouble() * 110).toFixed(1);
    const city = cities[Math.floor(rng.nextDouble() * cities.length)];
    const y = rng.nextDouble() < 0.3 + age / 200 ? 'yes' : 'no';
    lines.push(`${age},${income},${hours},${city},${y}${note}`);
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
}

let dir: string;
let csv: string;
let parquet: string;
let smallCsv: string;
let wideCsv: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dpfit-ooc-'));
  csv = join(dir, 'big.csv');
  parquet = join(dir, 'big.parquet');
  smallCsv = join(dir, 'small.csv');
  wideCsv = join(dir, 'wide.csv');
  // > 2 CHUNK_ROWS rows after drops: the sum has three chunks, the last one partial.
  writeCsv(csv, 2 * CHUNK_ROWS + 5000, 11);
  await convertCsvToParquet(csv, parquet, { threads: 1 });
  writeCsv(smallCsv, 3000, 12);
  // 20000 rows of ~1.9 kB: ~38 MB, more than one buffer of DuckDB's CSV reader, few rows to train on.
  writeCsv(wideCsv, 20000, 13, 1900);
  writeFileSync(join(dir, 'schema.json'), JSON.stringify(schemaSpec));
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** Every row of a source, concatenated. */
async function allRows(source: { d: number; scan: (f: (x: Float64Array, y: Float64Array, rows: number) => void) => Promise<void> }): Promise<{ x: number[]; y: number[] }> {
  const x: number[] = [];
  const y: number[] = [];
  await source.scan((cx, cy, rows) => {
    // One value at a time: a segment of stored rows is too long to spread into push's arguments.
    for (const v of cx.subarray(0, rows * source.d)) x.push(v);
    for (const v of cy.subarray(0, rows)) y.push(v);
  });
  return { x, y };
}

const options = { loss: 'logistic', clipNorm: 1, steps: 3, learningRate: 2, regularization: 1e-4, noiseMultiplier: 0.8, delta: 1e-6 };

describe('streamed rows', () => {
  for (const which of ['csv', 'parquet'] as const) {
    it(`are the rows loadDataset encodes (${which}, dropRow, fill, other, log1p, bins, intercept)`, async () => {
      const path = which === 'csv' ? csv : parquet;
      const memory = await loadDataset(path, schema, { droppedRows: 'zeroRows' });
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
    const memory = await loadDataset(parquet, schema, { droppedRows: 'zeroRows' });
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
    const memory = await loadDataset(parquet, schema, { droppedRows: 'zeroRows' });
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
    const memory = await loadDataset(smallCsv, schema, { droppedRows: 'zeroRows' });
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

  it('trains one-class labels as the in-memory path does (refusing them was a status one record decides)', async () => {
    const path = join(dir, 'one.csv');
    writeFileSync(path, 'age,income,hours,city,y\n30,1,2,Paris,no\n40,1,2,Lyon,no\n');
    const streamed = await openStreamedDataset(path, schema);
    try {
      const out = await trainDpGdStreamed(streamed.rows, { ...options, rng: seededRng(1) });
      const memory = trainDpGd((await loadDataset(path, schema, { droppedRows: 'zeroRows' })).dataset, { ...options, rng: seededRng(1) });
      assert.deepEqual(out.model.theta, memory.model.theta);
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

/**
 * A stream that ends early must fail, not train on part of the data: `train --max-memory 256MB`
 * once trained on the first 165380 of 2e6 CSV rows and said nothing. DuckDB's CSV reader holds
 * 32 MB buffers; under the memory_limit dpfit gave it (a quarter of the cap) it could not allocate
 * the second one, and its stream ended like a finished one (`duckdb.ts` `streamChunks`). The wide
 * file below needs a second buffer with few rows.
 */
describe('out of core under a memory cap DuckDB cannot stream a 32 MB CSV buffer in', () => {
  const sgd = { loss: 'logistic', clipNorm: 1, batchSize: 200, steps: 6, learningRate: 0.5, noiseMultiplier: 1.1, delta: 1e-5 };

  it('reads every row at 64 MiB and 256MB: DP-GD and DP-SGD release the in-memory model bit for bit (same seed)', async () => {
    assert.ok(statSync(wideCsv).size > DUCKDB_CSV_BUFFER, 'the file needs more than one of DuckDB\'s default CSV buffers');
    const memory = await loadDataset(wideCsv, wideSchema, { droppedRows: 'zeroRows' });
    const expectedGd = trainDpGd(memory.dataset, { ...options, rng: seededRng(3) });
    const expectedSgd = trainDpSgd(memory.dataset, { ...sgd, rng: seededRng(4) });
    for (const maxMemory of [64 * 2 ** 20, 256e6]) {
      const streamed = await openStreamedDataset(wideCsv, wideSchema, { maxMemory });
      try {
        assert.equal(streamed.rows.n, memory.dataset.n, `${maxMemory}: every row`);
        assert.deepEqual(streamed.privateDiagnostics, memory.privateDiagnostics);
        const gd = await trainDpGdStreamed(streamed.rows, { ...options, rng: seededRng(3) });
        assert.deepEqual(gd.model.theta, expectedGd.model.theta, `${maxMemory}: DP-GD theta`);
        assert.deepEqual(gd.privacy, expectedGd.privacy);
        assert.deepEqual(gd.diagnostics, expectedGd.diagnostics);
        const got = await trainDpSgdStreamed(streamed.rows, { ...sgd, rng: seededRng(4) });
        assert.deepEqual(got.model.theta, expectedSgd.model.theta, `${maxMemory}: DP-SGD theta`);
        assert.deepEqual(got.privacy, expectedSgd.privacy);
        assert.deepEqual(got.diagnostics, expectedSgd.diagnostics);
      } finally {
        streamed.close();
      }
    }
  });

  it('a DuckDB stream that ends early without an error (its memory limit) is an error naming the file, not the end of the data', async () => {
    const instance = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '61MiB' });
    const connection = await instance.connect();
    try {
      const columns = ['age', 'income', 'hours', 'city', 'y', 'note'].map((c) => `'${c}': 'VARCHAR'`).join(', ');
      const sql = `SELECT * FROM read_csv('${wideCsv}', header = true, auto_detect = false, columns = {${columns}})`;
      // What DuckDB 1.5.5 does here, without the count: a stream that stops after the first buffer, no error.
      const result = await connection.stream(sql);
      let raw = 0;
      for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) raw += chunk.rowCount;
      assert.ok(raw > 0 && raw < 20000, `DuckDB's stream ended after ${raw} of 20000 rows without an error (the case this test is about)`);
      let seen = 0;
      await assert.rejects(
        (async () => {
          for await (const chunk of streamChunks(connection, sql, wideCsv, 20000)) seen += chunk.rowCount;
        })(),
        (error: unknown) => error instanceof DataFormatError && error.message.startsWith(`${wideCsv}: `) && /ended before its last row \(of the 20000 it counted\)/.test(error.message),
      );
      assert.equal(seen, raw, 'the rows before the early end were delivered, then the error');
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it('a CSV error past the first chunk stops DuckDB\'s readers with the error (it used to end their streams quietly)', async () => {
    const path = join(dir, 'broken.csv');
    const lines = readFileSync(csv, 'utf8').split('\n');
    lines.splice(60000, 0, '"40,1,2,Paris,yes'); // an unclosed quote on line 60001, many chunks in
    writeFileSync(path, lines.join('\n'));
    await assert.rejects(readCsvWithDuckDb(path, { columnTypes: { age: 'numeric', income: 'numeric', hours: 'numeric', city: 'categorical', y: 'categorical' }, threads: 1 }), (error: unknown) => error instanceof DataFormatError && /line 60001/.test(error.message));
    await assert.rejects(openStreamedDataset(path, schema, { maxMemory: 256e6 }), (error: unknown) => error instanceof DataFormatError && /line 60001/.test(error.message));
    // The CLI: exit 3, one line naming the file, no model file (it used to train on the rows before the line).
    const out = join(dir, 'broken-model.json');
    const before = snapshot(dir);
    const run = await runCli('train', '--data', path, '--schema', join(dir, 'schema.json'), '--method', 'dpgd', '--max-memory', '256MB', '--steps', '2', '--noise-multiplier', '1', '--out', out, '--json');
    assertFailure(run, 3, new RegExp(`^dpfit: ${path.replaceAll('.', '\\.')}, line 60001: `), 'a malformed line out of core');
    assert.equal(existsSync(out), false);
    assertUnchanged(before, snapshot(dir), 'a failed out-of-core run');
  });

  it('read again on every pass (encodeOnce: false), a file that changes between passes is refused before anything is released: fewer rows, more rows, one more dropped row', async () => {
    const path = join(dir, 'changing.csv');
    const lines = readFileSync(smallCsv, 'utf8').trimEnd().split('\n');
    const edits: Array<[string, string[], RegExp]> = [
      ['fewer rows', lines.slice(0, 2000), /ended before its last row/],
      ['more rows', [...lines, ...lines.slice(1, 10)], /more than the 3000 rows it counted/],
      // Same raw rows, one more dropped by "hours": the pass encodes a row fewer than the opening pass.
      ['one more dropped row', lines.map((line, i) => (i === 1500 ? line.split(',').map((v, j) => (j === 2 ? '' : v)).join(',') : line)), /pass 2 over the file encoded a different number of rows than the opening pass's/],
    ];
    for (const [what, changed, message] of edits) {
      copyFileSync(smallCsv, path);
      const streamed = await openStreamedDataset(path, schema, { maxMemory: 64 * 2 ** 20, encodeOnce: false });
      try {
        if (what === 'one more dropped row') assert.notEqual(lines[1500].split(',')[2], '', 'the edited row was not already dropped');
        writeFileSync(path, `${changed.join('\n')}\n`);
        await assert.rejects(trainDpGdStreamed(streamed.rows, { ...options, rng: seededRng(1) }), (error: unknown) => error instanceof DataFormatError && error.message.startsWith(`${path}: `) && message.test(error.message), what);
      } finally {
        streamed.close();
      }
    }
  });

  it('a row source that stops short on its second pass is refused before anything is released (DP-GD, DP-SGD)', async () => {
    const memory = await loadDataset(smallCsv, schema, { droppedRows: 'zeroRows' });
    const { x, y, n, d } = memory.dataset;
    /** The rows in chunks of 100, all of them on the first pass, the first 1000 on later ones. */
    const shortOnPass2 = (): RowSource => {
      let passes = 0;
      return {
        n, d, source: 'short.csv', labelValues: [0, 1],
        scan: async (onChunk) => {
          passes++;
          const end = passes === 1 ? n : 1000;
          for (let r = 0; r < end; r += 100) {
            const rows = Math.min(100, end - r);
            if ((await onChunk(x.subarray(r * d, (r + rows) * d), y.subarray(r, r + rows), rows)) === false) return;
          }
        },
      };
    };
    const refused = (error: unknown): boolean => error instanceof DataFormatError && error.message.startsWith('short.csv: ') && /nothing was released/.test(error.message);
    // DP-GD: its first step is the source's first pass, the second step the second.
    await assert.rejects(trainDpGdStreamed(shortOnPass2(), { ...options, rng: seededRng(1) }), refused);
    // DP-SGD: each step's batch is gathered in one pass; the second step's batch has rows past 1000.
    await assert.rejects(trainDpSgdStreamed(shortOnPass2(), { ...sgd, batchSize: 120, rng: seededRng(1) }), refused);
  });
});
