/**
 * `loadDataset(..., {features})` (so that a large CSV is not held in memory twice): CSV rows
 * encoded chunk by chunk straight into a store must give exactly what encoding the whole table
 * gives — the reference is the existing whole-table path (`applySchema` on `readTable`), tested on
 * its own in data-node/data-schema — for every row transform, the intercept, dropped rows,
 * categorical levels first seen in later chunks, a column type revised after the first MiB, and
 * errors naming the same line.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { arrayFeatureStore } from '../../src/data/feature-store.js';
import { loadDataset } from '../../src/data/node/read.js';
import { parseSchema } from '../../src/data/schema/parse.js';
import { DataFormatError } from '../../src/errors.js';
import { sameBits } from '../helpers/same-bits.js';
import { featureMemoryOf, growingFeatures } from '../../src/learners/glm/kernels/feature-memory.js';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dpfit-encoded-test-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function schemaFor(rowTransform: string, intercept: boolean | number, extra: Record<string, unknown> = {}) {
  return parseSchema({
    version: 1,
    rowTransform,
    ...(rowTransform === 'clip' ? { clipNorm: 2 } : {}),
    intercept,
    columns: [
      { name: 'age', type: 'numeric', lower: 18, upper: 90, missing: 'dropRow' },
      { name: 'income_k', type: 'numeric', lower: 0, upper: 500, missing: 'fill', fillValue: 0, transform: 'log1p', bins: [10, 100], encode: 'valueAndBins' },
      { name: 'city', type: 'categorical', categories: ['Paris', 'Rome', 'Oslo'] },
      { name: 'label', type: 'label', positive: ['yes'], negative: ['no'] },
    ],
    ...extra,
  }, 'test schema');
}

/** Rows with missing values (some dropped), cities first seen late ('Lima' after row 500), long and short numbers. */
function csv(rows: number): string {
  const lines = ['age,income_k,city,label'];
  for (let i = 0; i < rows; i++) {
    const age = i % 53 === 5 ? '' : String(17 + ((i * 7) % 80) + (i % 3) / 3);
    const income = i % 7 === 3 ? '' : String((i * 0.1234567890123456789) % 600);
    const city = i > 500 && i % 5 === 0 ? 'Lima' : ['Paris', 'Rome', 'Oslo'][i % 3];
    lines.push(`${age},${income},${city},${i % 3 === 0 ? 'yes' : 'no'}`);
  }
  return `${lines.join('\n')}\n`;
}

test('rows encoded chunk by chunk into a store are the whole-table rows bit for bit (every row transform, intercept, dropped rows)', async () => {
  const path = join(dir, 'people.csv');
  await writeFile(path, csv(3000));
  for (const rowTransform of ['normalize', 'scale', 'clip', 'none']) {
    for (const intercept of [false, true, 0.5]) {
      const schema = schemaFor(rowTransform, intercept);
      const whole = await loadDataset(path, schema);
      for (const [name, features] of [['shared memory', growingFeatures], ['arrays', arrayFeatureStore]] as const) {
        const chunked = await loadDataset(path, schema, { features, encodeChunkBytes: 997 });
        sameBits(chunked.dataset, whole.dataset);
        assert.deepEqual(chunked.privateDiagnostics, whole.privateDiagnostics, `${name}: diagnostics`);
        assert.equal(chunked.rowNormBound, whole.rowNormBound);
      }
    }
  }
  const shared = await loadDataset(path, schemaFor('normalize', true), { features: growingFeatures, encodeChunkBytes: 4096 });
  assert.ok(featureMemoryOf(shared.dataset.x, shared.dataset.d) !== undefined, 'the features live in a feature memory');
  assert.ok(shared.dataset.n > 2900);
});


test('a column guessed numeric from the first MiB that holds text later is revised, as without a store', async () => {
  const lines = ['code,age,label'];
  for (let i = 0; i < 140_000; i++) lines.push(`${i < 130_000 ? i % 10 : 'A7'},${20 + (i % 50)},${i % 2 === 0 ? 'yes' : 'no'}`);
  const path = join(dir, 'revised.csv');
  await writeFile(path, `${lines.join('\n')}\n`);
  const schema = parseSchema({
    version: 1,
    rowTransform: 'none',
    columns: [
      { name: 'code', type: 'categorical', categories: ['1', '2', 'A7'] },
      { name: 'age', type: 'numeric', lower: 18, upper: 90 },
      { name: 'label', type: 'label', positive: ['yes'], negative: ['no'] },
    ],
  }, 'test schema');
  const reference = await loadDataset(path, schema);
  const chunked = await loadDataset(path, schema, { features: growingFeatures, encodeChunkBytes: 65536 });
  sameBits(chunked.dataset, reference.dataset);
  assert.deepEqual(chunked.privateDiagnostics, reference.privateDiagnostics);
});

test('errors in a later chunk name the same line as the whole-table path; empty files are refused the same way', async () => {
  const text = csv(2000).split('\n');
  text[1500] = '30,12,Paris,maybe';
  const path = join(dir, 'bad.csv');
  await writeFile(path, text.join('\n'));
  const schema = schemaFor('normalize', false);
  const message = async (run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (error) {
      assert.ok(error instanceof DataFormatError, String(error));
      return error.message;
    }
    assert.fail('no error');
  };
  const expected = await message(() => loadDataset(path, schema));
  assert.match(expected, /line 1501/);
  assert.equal(await message(() => loadDataset(path, schema, { features: growingFeatures, encodeChunkBytes: 500 })), expected);
  const empty = join(dir, 'header-only.csv');
  await writeFile(empty, 'age,income_k,city,label\n');
  assert.equal(await message(() => loadDataset(empty, schema, { features: growingFeatures })), await message(() => loadDataset(empty, schema)));
});
