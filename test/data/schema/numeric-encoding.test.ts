import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseCsv } from '../../../src/data/csv.js';
import { maxRowNorm, rowView } from '../../../src/data/dataset.js';
import { binIndex } from '../../../src/data/schema/numeric-encoding.js';
import { applySchema } from '../../../src/data/schema/apply.js';
import { schemaEncodedNormBound, schemaFeatureNames, schemaRowNormBound } from '../../../src/data/schema/bounds.js';
import { parseSchema, schemaToJson } from '../../../src/data/schema/parse.js';
import { schemaCsvOptions } from '../../../src/data/schema/read-options.js';
import type { Schema } from '../../../src/data/schema/types.js';
import { DataFormatError } from '../../../src/errors.js';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
const LABEL = { name: 'y', type: 'label', positive: ['yes'], negative: ['no'] };

function table(schema: Schema, header: string, rows: string[]) {
  return parseCsv(encode([header, ...rows].join('\n')), schemaCsvOptions(schema, 'people.csv'));
}

function throwsData(run: () => unknown, pattern: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof DataFormatError, `expected a DataFormatError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  });
}

test('binIndex: bins are [c_j, c_j+1), left-closed, and agree with a linear scan (property)', () => {
  const cuts = [20, 35, 40, 41, 50, 60];
  assert.deepEqual([1, 19.999, 20, 34, 35, 39.5, 40, 40.5, 41, 50, 59, 60, 99].map((v) => binIndex(cuts, v)), [0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 5, 6, 6]);
  fc.assert(
    fc.property(fc.uniqueArray(fc.integer({ min: -50, max: 50 }), { minLength: 1, maxLength: 12 }), fc.double({ min: -60, max: 60, noNaN: true }), (raw, v) => {
      const sorted = [...raw].sort((a, b) => a - b);
      const scan = sorted.filter((c) => v >= c).length; // the number of cut points at or below v
      assert.equal(binIndex(sorted, v), scan);
    }),
    { seed: 3, numRuns: 300 },
  );
});

test('bins one-hot the clipped value; log1p scales log(1 + v) between the transformed bounds', () => {
  const schema = parseSchema({
    version: 1,
    columns: [
      { name: 'age', type: 'numeric', lower: 17, upper: 90, bins: [20, 30] },
      { name: 'gain', type: 'numeric', lower: 0, upper: 99_999, transform: 'log1p', bins: [1, 99_999], encode: 'valueAndBins' },
      { name: 'loss', type: 'numeric', lower: 0, upper: 99_999, transform: 'log1p', scale: 'none' },
      LABEL,
    ],
    rowTransform: 'none',
  });
  assert.deepEqual(schemaFeatureNames(schema), [
    'age=[17,20)',
    'age=[20,30)',
    'age=[30,90]',
    'log1p(gain)',
    'gain=[0,1)',
    'gain=[1,99999)',
    'gain=[99999,99999]',
    'log1p(loss)',
  ]);
  const data = applySchema(table(schema, 'age,gain,loss,y', ['17,0,0,yes', '20,999,999,no', '29.5,99999,99999,no', '30,150000,-3,yes', '10,-5,1e9,no', '90,150000,1e9,yes']), schema);
  const rows = Array.from({ length: data.dataset.n }, (_, i) => Array.from(rowView(data.dataset, i)));
  // log1p(999) / log1p(99999) = ln(1000) / ln(100000) = 3/5 (exact reference); 150000 and 1e9 are
  // clipped to 99999 (value 1, the top-code bin); -3 and -5 to 0 (value 0, the [0,1) bin).
  assert.deepEqual(rows[0], [1, 0, 0, 0, 1, 0, 0, 0]);
  assert.equal(rows[1].slice(0, 3).join(), '0,1,0'); // 20 opens [20,30)
  assert.ok(Math.abs(rows[1][3] - 0.6) < 1e-15);
  assert.deepEqual(rows[1].slice(4, 7), [0, 1, 0]);
  assert.ok(Math.abs(rows[1][7] - Math.log(1000)) < 1e-12); // scale "none": log1p(999)
  assert.deepEqual(rows[2].slice(0, 7), [0, 1, 0, 1, 0, 0, 1]);
  assert.deepEqual(rows[3].slice(0, 7), [0, 0, 1, 1, 0, 0, 1]);
  assert.equal(rows[3][7], 0);
  assert.deepEqual(rows[4].slice(0, 7), [1, 0, 0, 0, 1, 0, 0]);
  assert.ok(Math.abs(rows[4][7] - Math.log(100000)) < 1e-12);
  assert.deepEqual(data.privateDiagnostics.clipped, { age: 1, gain: 3, loss: 3 });
  // The public norm bound: three one-hot blocks (age bins, gain bins) count 1 each, the unit gain
  // value 1, the unscaled loss value at most log1p(99999) = ln(100000).
  const bound = Math.sqrt(1 + 1 + 1 + Math.log(100000) ** 2);
  assert.ok(schemaEncodedNormBound(schema) >= bound && schemaEncodedNormBound(schema) < bound * (1 + 1e-14));
  assert.ok(maxRowNorm(data.dataset) <= schemaRowNormBound(schema));
  // The last row has every feature at its maximum and attains it: the bound is tight.
  assert.ok(Math.abs(Math.hypot(...rowView(data.dataset, 5)) - bound) < 1e-14 * bound);
});

test('missing values under fill go through the same bins; dropRow leaves no bin behind', () => {
  const schema = parseSchema({
    version: 1,
    columns: [
      { name: 'h', type: 'numeric', lower: 1, upper: 99, bins: [35], missing: 'fill', fillValue: 40 },
      { name: 'a', type: 'numeric', lower: 0, upper: 10, bins: [5], encode: 'valueAndBins', missing: 'dropRow' },
      LABEL,
    ],
    rowTransform: 'none',
  });
  // Row 2 is dropped after its h bin was written: the next kept row must not inherit it.
  const data = applySchema(table(schema, 'h,a,y', ['10,2,yes', '10,,no', '?,6,no']), schema);
  assert.equal(data.dataset.n, 2);
  assert.deepEqual(Array.from(data.dataset.x), [1, 0, 0.2, 1, 0, 0, 1, 0.6, 0, 1]);
});

test('schemas without the new fields are unchanged, and the new fields round-trip through JSON', () => {
  const old = { version: 1, columns: [{ name: 'x', type: 'numeric', lower: 0, upper: 4 }, LABEL], rowTransform: 'none' };
  const parsed = parseSchema(old);
  assert.deepEqual(schemaToJson(parsed).columns, [
    { name: 'x', type: 'numeric', lower: 0, upper: 4, scale: 'unit', missing: 'error' },
    { ...LABEL, encoding: 'zeroOne', missing: 'error' },
  ]);
  // "identity" and "value" are the defaults: accepted, not written back.
  assert.deepEqual(parseSchema({ ...old, columns: [{ ...old.columns[0], transform: 'identity', encode: 'value' }, LABEL] }), parsed);
  const binned = parseSchema({ version: 1, columns: [{ name: 'x', type: 'numeric', lower: 0, upper: 4, transform: 'log1p', bins: [1, 2] }, LABEL] });
  assert.deepEqual(schemaToJson(binned).columns, [{ name: 'x', type: 'numeric', lower: 0, upper: 4, scale: 'unit', missing: 'error', transform: 'log1p', bins: [1, 2], encode: 'bins' }, { ...LABEL, encoding: 'zeroOne', missing: 'error' }]);
  assert.deepEqual(parseSchema(JSON.parse(JSON.stringify(schemaToJson(binned)))), binned);
});

test('invalid encodings are one DataFormatError each, naming the field, the value and the valid range', () => {
  const bad = (column: Record<string, unknown>, pattern: RegExp): void =>
    throwsData(() => parseSchema({ version: 1, columns: [{ name: 'x', type: 'numeric', lower: 0, upper: 100, ...column }, LABEL] }, 's.json'), pattern);
  bad({ transform: 'log' }, /^s\.json: column 'x'\.transform: must be "identity" or "log1p", got "log"$/);
  bad({ lower: -1, transform: 'log1p' }, /column 'x'\.transform: "log1p" needs lower > -1 .* got lower = -1$/);
  bad({ bins: [] }, /column 'x'\.bins: must be a non-empty list of cut points, got \[\]$/);
  bad({ bins: 5 }, /column 'x'\.bins: must be a non-empty list of cut points, got 5$/);
  bad({ bins: [0, 10] }, /column 'x'\.bins\[0\]: must be > lower \(0\) .* got 0$/);
  bad({ bins: [10, 10] }, /column 'x'\.bins\[1\]: must be > bins\[0\] \(10\): cut points increase strictly, got 10$/);
  bad({ bins: [50, 20] }, /column 'x'\.bins\[1\]: must be > bins\[0\] \(50\)/);
  bad({ bins: [10, 101] }, /column 'x'\.bins\[1\]: must be <= upper \(100\): values are clipped to upper first, got 101$/);
  bad({ bins: [10, 'x'] }, /column 'x'\.bins\[1\]: must be a finite number, got "x"$/);
  bad({ bins: [10, null] }, /column 'x'\.bins\[1\]: must be a finite number, got null$/);
  bad({ encode: 'bins' }, /column 'x'\.encode: "bins" needs "bins" \(the public cut points\)$/);
  bad({ encode: 'valueAndBins' }, /column 'x'\.encode: "valueAndBins" needs "bins"/);
  bad({ bins: [10], encode: 'value' }, /column 'x'\.encode: "value" would ignore the declared "bins"/);
  bad({ bins: [10], encode: 'onehot' }, /column 'x'\.encode: must be "value", "bins" or "valueAndBins", got "onehot"$/);
  bad({ cuts: [10] }, /column 'x': unknown field "cuts"/);
});

test('binned and log1p columns keep the neighbour property and the public norm bound (normalize + bias)', () => {
  // Row i of the output depends on row i only, and every row obeys sqrt(1 + 1) (003 Sec. 5).
  const schema = parseSchema({
    version: 1,
    columns: [
      { name: 'age', type: 'numeric', lower: 17, upper: 90, bins: [20, 30, 40, 50, 60, 70] },
      { name: 'gain', type: 'numeric', lower: 0, upper: 99_999, transform: 'log1p', bins: [1, 1000, 10_000, 99_999], encode: 'valueAndBins', missing: 'fill', fillValue: 0 },
      { name: 'c', type: 'categorical', categories: ['a', 'b'] },
      LABEL,
    ],
    intercept: true,
  });
  const bound = schemaRowNormBound(schema);
  assert.ok(bound >= Math.SQRT2 && bound < Math.SQRT2 * (1 + 1e-14));
  const value = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e300, max: 1e300 }), fc.integer({ min: -10, max: 200_000 }));
  const row = fc.record({ age: value, gain: fc.option(value, { nil: null }), c: fc.constantFrom('a', 'b', 'zz', '?'), y: fc.constantFrom('yes', 'no') });
  const toRows = (rows: { age: number; gain: number | null; c: string; y: string }[]): string[] => rows.map((r) => `${r.age},${r.gain ?? ''},${r.c},${r.y}`);
  fc.assert(
    fc.property(fc.array(row, { minLength: 2, maxLength: 15 }), fc.nat(), row, (rows, k, replacement) => {
      const index = k % rows.length;
      const neighbour = rows.map((r, i) => (i === index ? replacement : r));
      const a = applySchema(table(schema, 'age,gain,c,y', toRows(rows)), schema).dataset;
      const b = applySchema(table(schema, 'age,gain,c,y', toRows(neighbour)), schema).dataset;
      for (let i = 0; i < rows.length; i++) {
        assert.ok(Math.hypot(...rowView(a, i)) <= bound && Math.hypot(...rowView(b, i)) <= bound);
        if (i !== index) assert.deepEqual(Array.from(rowView(b, i)), Array.from(rowView(a, i)), `row ${i} changed`);
      }
    }),
    { seed: 17, numRuns: 150 },
  );
});
