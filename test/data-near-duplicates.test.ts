/**
 * Records as the schema reads them (`data/schema-records.ts`) and the exact near-duplicate search
 * over them (`data/near-duplicates.ts`) that `dpfit train --tune` uses to check its --validation
 * file: the grid search finds exactly the pairs a brute-force comparison finds (fast-check, with
 * values on a lattice of the tolerance so that pairs at the tolerance itself are common, missing
 * values, and more numeric columns than the grid takes).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseCsv } from '../src/data/csv.js';
import { MAX_GRID_COLUMNS, nearDuplicateRows } from '../src/data/near-duplicates.js';
import { parseSchema, schemaCsvOptions } from '../src/data/schema.js';
import { schemaRecords, type SchemaRecords } from '../src/data/schema-records.js';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

const SCHEMA = parseSchema({
  version: 1,
  columns: [
    { name: 'age', type: 'numeric', lower: 18, upper: 90, bins: [30, 50] },
    { name: 'gain', type: 'numeric', lower: 0, upper: 99_999, transform: 'log1p' },
    { name: 'hours', type: 'numeric', lower: 0, upper: 100, scale: 'symmetric', missing: 'fill', fillValue: 25 },
    { name: 'weight', type: 'numeric', lower: 0, upper: 10, missing: 'dropRow' },
    { name: 'sex', type: 'categorical', categories: ['Female', 'Male'] },
    { name: 'work', type: 'categorical', categories: ['Private', 'State-gov'], missing: 'error' },
    { name: 'label', type: 'label', positive: ['yes'], negative: ['no'] },
  ],
});

function records(csv: string): SchemaRecords {
  return schemaRecords(parseCsv(encode(csv), schemaCsvOptions(SCHEMA)), SCHEMA);
}

test('schema records: columns by name, values clipped, transformed and scaled to [0, 1], categories as the schema maps them, no label', () => {
  const header = 'label,work,sex,weight,hours,gain,age,extra';
  const r = records(`${header}\nyes,Private,Male,5,50,0,18,1\nno,"  State-gov ",Martian,,,99999,200,2\nyes,Private,?,12,-5,1e9,54,3\n`);
  assert.equal(r.n, 3);
  assert.equal(r.numericColumns, 4);
  assert.equal(r.categoricalColumns, 2);
  const row = (i: number) => Array.from(r.numeric.subarray(4 * i, 4 * i + 4));
  // age (unit scale, bins ignored), gain (log1p), hours (the schema's "symmetric" scale is not used: [0, 1]), weight.
  assert.deepEqual(row(0), [0, 0, 0.5, 0.5]);
  // Missing hours filled with the public 25 (as training fills it); missing weight (dropRow) is NaN; age 200 clipped to 90.
  const second = row(1);
  assert.deepEqual(second.slice(0, 3), [1, 1, 0.25]);
  assert.ok(Number.isNaN(second[3]));
  assert.deepEqual(row(2), [0.5, 1, 0, 1]);
  // Quoted spaces trimmed, unknown and missing values in the other slot (as applySchema encodes them); sex before work (schema order).
  assert.deepEqual(Array.from(r.categorical), [1, 0, 2, 1, 2, 0]);
});

test('schema records: a categorical column read as numbers is matched by value, as applySchema does', () => {
  const schema = parseSchema({
    version: 1,
    columns: [
      { name: 'code', type: 'categorical', categories: ['1', '2'] },
      { name: 'y', type: 'label', lower: 0, upper: 1 },
    ],
  });
  const table = parseCsv(encode('code,y\n1,0\n2.0,1\n3,1\n,0\n'), { ...schemaCsvOptions(schema), columnTypes: { code: 'numeric', y: 'numeric' } });
  assert.deepEqual(Array.from(schemaRecords(table, schema).categorical), [0, 1, 2, 2]);
});

/** Brute force: for each probe row, is some reference row within the tolerance (equal slots)? */
function bruteForce(reference: SchemaRecords, probe: SchemaRecords, tolerance: number): number[] {
  const k = reference.numericColumns;
  const c = reference.categoricalColumns;
  return Array.from({ length: probe.n }, (_, i) => {
    for (let r = 0; r < reference.n; r++) {
      let same = true;
      for (let j = 0; j < c && same; j++) same = reference.categorical[r * c + j] === probe.categorical[i * c + j];
      for (let j = 0; j < k && same; j++) {
        const u = reference.numeric[r * k + j];
        const v = probe.numeric[i * k + j];
        same = Number.isNaN(u) || Number.isNaN(v) ? Number.isNaN(u) && Number.isNaN(v) : Math.abs(u - v) <= tolerance;
      }
      if (same) return 1;
    }
    return 0;
  });
}

/** Records with values in [0, 1] from lattice points of the tolerance (so pairs at or near it are common), NaNs and a few slots. */
function recordSets(numericColumns: number, categoricalColumns: number) {
  const value = fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: 12 }).map((m) => m * 0.001) },
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 12 }).chain((m) => fc.constantFrom(m * 0.001 + 1e-12, m * 0.001 - 1e-12, m * 0.0005)) },
    { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) },
    { weight: 1, arbitrary: fc.constant(NaN) },
  );
  const row = fc.record({
    numeric: fc.array(value, { minLength: numericColumns, maxLength: numericColumns }),
    categorical: fc.array(fc.integer({ min: -1, max: 2 }), { minLength: categoricalColumns, maxLength: categoricalColumns }),
  });
  const set = (rows: { numeric: number[]; categorical: number[] }[]): SchemaRecords => ({
    n: rows.length,
    numericColumns,
    numeric: Float64Array.from(rows.flatMap((r) => r.numeric)),
    categoricalColumns,
    categorical: Int32Array.from(rows.flatMap((r) => r.categorical)),
  });
  return fc.tuple(fc.array(row, { maxLength: 40 }).map(set), fc.array(row, { maxLength: 40 }).map(set));
}

test('near duplicates: the grid search finds exactly the pairs within the tolerance (brute force), at any number of numeric columns', () => {
  for (const [k, c] of [[1, 0], [3, 2], [MAX_GRID_COLUMNS + 3, 1], [0, 2]] as const) {
    fc.assert(
      fc.property(recordSets(k, c), fc.constantFrom(0.001, 0.0005, 0.0011), ([reference, probe], tolerance) => {
        assert.deepEqual(Array.from(nearDuplicateRows(reference, probe, tolerance)), bruteForce(reference, probe, tolerance));
      }),
      { seed: 23, numRuns: 300 },
    );
  }
});

test('near duplicates: a pair exactly at the tolerance is found, one just beyond it is not; slots must be equal', () => {
  const one = (values: number[], slot = 0): SchemaRecords => ({ n: 1, numericColumns: values.length, numeric: Float64Array.from(values), categoricalColumns: 1, categorical: Int32Array.from([slot]) });
  const reference = one([0.5, 0.25, 0]);
  assert.deepEqual(Array.from(nearDuplicateRows(reference, one([0.5 + 0.0009765625, 0.25, 0]), 0.0009765625)), [1]);
  assert.deepEqual(Array.from(nearDuplicateRows(reference, one([0.5 + 0.0009765625 * (1 + 1e-12), 0.25, 0]), 0.0009765625)), [0]);
  assert.deepEqual(Array.from(nearDuplicateRows(reference, one([0.5, 0.25, 0], 1), 0.001)), [0]);
  assert.throws(() => nearDuplicateRows(reference, one([0.5, 0.25]), 0.001), /reference's 3 and 1/);
  assert.throws(() => nearDuplicateRows(reference, reference, 0), /tolerance/);
});
