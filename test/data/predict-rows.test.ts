/**
 * Rows to predict have no label: `schemaCsvOptions(schema, path, { label: 'ignore' })`
 * and `applySchema(table, schema, { label: 'ignore' })` read a file with or without the label
 * column — by name with a header, by the field count without one (Adult's layout) — and the
 * features are encoded exactly as with the label; every reader agrees (built-in CSV, DuckDB CSV,
 * Parquet). Also: inputs that are devices are refused.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseCsv } from '../../src/data/csv.js';
import { convertCsvToParquet } from '../../src/data/node/duckdb.js';
import { requireFile } from '../../src/data/node/files.js';
import { loadDataset } from '../../src/data/node/read.js';
import { applySchema } from '../../src/data/schema/apply.js';
import { parseSchema } from '../../src/data/schema/parse.js';
import { schemaCsvOptions } from '../../src/data/schema/read-options.js';
import { DataFormatError } from '../../src/errors.js';

const SCHEMA = {
  version: 1,
  columns: [
    { name: 'age', type: 'numeric', lower: 0, upper: 100 },
    { name: 'sex', type: 'categorical', categories: ['F', 'M'] },
    { name: 'label', type: 'label', positive: ['yes'], negative: ['no'] },
  ],
};
const ROWS = [
  ['30', 'F', 'yes'],
  ['50', 'M', 'no'],
  ['70', 'X', 'no'],
];
const csv = (rows: string[][], header?: string[]) => `${[...(header === undefined ? [] : [header.join(',')]), ...rows.map((r) => r.join(','))].join('\n')}\n`;
const encoder = new TextEncoder();

test('with a header: the label column may be absent, or hold anything; the features are the same', () => {
  const schema = parseSchema(SCHEMA);
  const labelled = applySchema(parseCsv(encoder.encode(csv(ROWS, ['age', 'sex', 'label'])), schemaCsvOptions(schema)), schema);
  const options = schemaCsvOptions(schema, 'new.csv', { label: 'ignore' });
  assert.deepEqual(options.optionalColumns, ['label']);
  const without = applySchema(parseCsv(encoder.encode(csv(ROWS.map((r) => r.slice(0, 2)), ['age', 'sex'])), options), schema, { label: 'ignore' });
  const junk = applySchema(parseCsv(encoder.encode(csv(ROWS.map((r) => [r[0], r[1], '?']), ['age', 'sex', 'label'])), options), schema, { label: 'ignore' });
  for (const prepared of [without, junk]) {
    assert.deepEqual(Array.from(prepared.dataset.x), Array.from(labelled.dataset.x));
    assert.deepEqual(Array.from(prepared.dataset.y), [0, 0, 0]);
    assert.equal(prepared.dataset.n, 3);
  }
  // Without the option the label stays required, with a clear error.
  assert.throws(() => parseCsv(encoder.encode(csv(ROWS.map((r) => r.slice(0, 2)), ['age', 'sex'])), schemaCsvOptions(schema, 'new.csv')), /new\.csv: the file's first line does not contain the schema's column 'label'/);
  // A feature column stays required.
  assert.throws(() => parseCsv(encoder.encode(csv(ROWS.map((r) => [r[0]]), ['age'])), options), /the file's first line does not contain the schema's column 'sex'/);
});

test('without a header (Adult): one field fewer means no label; the right count with it; anything else is a ragged file', () => {
  const schema = parseSchema({ ...SCHEMA, csv: { header: false } });
  const options = schemaCsvOptions(schema, 'rows.csv', { label: 'ignore' });
  const labelled = applySchema(parseCsv(encoder.encode(csv(ROWS)), schemaCsvOptions(schema)), schema);
  const short = applySchema(parseCsv(encoder.encode(csv(ROWS.map((r) => r.slice(0, 2)))), options), schema, { label: 'ignore' });
  const full = applySchema(parseCsv(encoder.encode(csv(ROWS)), options), schema, { label: 'ignore' });
  assert.deepEqual(Array.from(short.dataset.x), Array.from(labelled.dataset.x));
  assert.deepEqual(Array.from(full.dataset.x), Array.from(labelled.dataset.x));
  assert.throws(() => parseCsv(encoder.encode('30,F\n50\n'), options), (e: unknown) => e instanceof DataFormatError && /rows\.csv, line 2: expected 2 fields, found 1/.test(e.message));
  assert.throws(() => parseCsv(encoder.encode('30\n'), options), (e: unknown) => e instanceof DataFormatError && /line 1: expected 3 fields, found 1/.test(e.message));
});

test('files: the built-in reader, DuckDB CSV and Parquet agree on unlabelled rows (loadDataset label: ignore)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-predict-rows-'));
  const schema = parseSchema(SCHEMA);
  const labelledPath = join(dir, 'labelled.csv');
  writeFileSync(labelledPath, csv(ROWS, ['age', 'sex', 'label']));
  const path = join(dir, 'new.csv');
  writeFileSync(path, csv(ROWS.map((r) => r.slice(0, 2)), ['age', 'sex']));
  const parquet = join(dir, 'new.parquet');
  await convertCsvToParquet(path, parquet, { threads: 1 });
  const expected = Array.from((await loadDataset(labelledPath, schema)).dataset.x);
  for (const [what, load] of [
    ['builtin', () => loadDataset(path, schema, { label: 'ignore' })],
    ['duckdb', () => loadDataset(path, schema, { label: 'ignore', engine: 'duckdb', threads: 1 })],
    ['parquet', () => loadDataset(parquet, schema, { label: 'ignore', threads: 1 })],
  ] as const) {
    assert.deepEqual(Array.from((await load()).dataset.x), expected, what);
  }
  const headerless = parseSchema({ ...SCHEMA, csv: { header: false } });
  const shortPath = join(dir, 'short.csv');
  writeFileSync(shortPath, csv(ROWS.map((r) => r.slice(0, 2))));
  assert.deepEqual(Array.from((await loadDataset(shortPath, headerless, { label: 'ignore', engine: 'duckdb', threads: 1 })).dataset.x), expected, 'duckdb header-less');
});

test('inputs must be regular files: devices are refused before any read', async () => {
  await assert.rejects(requireFile('/dev/zero'), (e: unknown) => e instanceof DataFormatError && /\/dev\/zero: is a character device, not a regular file/.test(e.message));
  await assert.rejects(requireFile('/dev/null'), (e: unknown) => e instanceof DataFormatError && /character device/.test(e.message));
});
