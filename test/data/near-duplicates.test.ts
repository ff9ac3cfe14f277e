/**
 * Records as the schema reads them (`data/schema/records.ts`) and the exact near-duplicate search
 * over them (`data/near-duplicates.ts`) that `dpfit train --tune` uses to check its --validation
 * file: the grid search finds exactly the pairs a brute-force comparison finds (fast-check, with
 * values on a lattice of the tolerance so that pairs at the tolerance itself are common, missing
 * values, more numeric columns than the grid takes, and categorical aliases in any combination
 * with the slots); the aliases name a category up to its spelling; `schemaKeptRows` keeps the rows
 * `applySchema` keeps.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseCsv } from '../../src/data/csv.js';
import { MAX_GRID_COLUMNS, nearDuplicateRows } from '../../src/data/near-duplicates.js';
import { applySchema } from '../../src/data/schema/apply.js';
import { parseSchema } from '../../src/data/schema/parse.js';
import { schemaCsvOptions } from '../../src/data/schema/read-options.js';
import { foldCategory, schemaKeptRows, schemaRecords, type SchemaRecords } from '../../src/data/schema/records.js';

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

test('schema records: aliases name a category up to case, whitespace and the spelling of a number; slots stay as applySchema encodes', () => {
  const schema = parseSchema({
    version: 1,
    columns: [
      { name: 'work', type: 'categorical', categories: ['Self-emp', 'State gov', 'Private'] },
      { name: 'grade', type: 'categorical', categories: ['1', '2.5'], missing: 'error' },
      { name: 'label', type: 'label', positive: ['yes'], negative: ['no'] },
    ],
  });
  const values = [
    ['Self-emp', '1'], // listed: slot = alias
    ['SELF-EMP', '01'], // case, a number's spelling: other slot, the alias of the category
    ['  self-Emp ', '1.0'],
    ['state   GOV', '2.50'], // a run of spaces is one space
    ['State\tgov', '25e-1'], // a tab is whitespace too
    ['Stategov', '3'], // not the same text, not a listed number: other, no alias
    ['?', '1e0'], // missing (the other slot, no alias)
    ['Private!', '2.5'],
  ];
  const text = `work,grade,label\n${values.map(([w, g]) => `"${w}",${g},yes`).join('\n')}\n`;
  const r = schemaRecords(parseCsv(encode(text), schemaCsvOptions(schema)), schema);
  const slots = Array.from(r.categorical);
  const aliases = Array.from(r.categoricalAlias as Int32Array);
  // Pairs (work, grade) per row.
  const pairs = (a: number[]) => values.map((_, i) => [a[2 * i], a[2 * i + 1]]);
  assert.deepEqual(pairs(slots), [[0, 0], [3, 2], [3, 2], [3, 2], [3, 2], [3, 2], [3, 2], [3, 1]]);
  assert.deepEqual(pairs(aliases), [[0, 0], [0, 0], [0, 0], [1, 1], [1, 1], [-1, -1], [-1, 0], [-1, 1]]);
  // Applied to training, the schema encodes the same slots: aliases are for comparing only.
  const encoded = applySchema(parseCsv(encode(text), schemaCsvOptions(schema)), { ...schema, rowTransform: 'none', intercept: null }).dataset;
  const hot = (i: number) => Array.from(encoded.x.subarray(i * encoded.d, (i + 1) * encoded.d)).flatMap((v, k) => (v === 1 ? [k] : []));
  assert.deepEqual(values.map((_, i) => hot(i)), pairs(slots).map(([w, g]) => [w, 4 + g]));
  assert.equal(foldCategory(' Ünïcode  ÇASE '), 'ünïcode çase');
  assert.equal(foldCategory('STRASSE'), foldCategory('straße'.toUpperCase()));
});

test('schema records: a column read as numbers has the alias of the category of its number', () => {
  const schema = parseSchema({
    version: 1,
    columns: [
      { name: 'code', type: 'categorical', categories: ['01', '2', 'x'] },
      { name: 'y', type: 'label', lower: 0, upper: 1 },
    ],
  });
  const table = parseCsv(encode('code,y\n1,0\n2.0,1\n3,1\n,0\n'), { ...schemaCsvOptions(schema), columnTypes: { code: 'numeric', y: 'numeric' } });
  const r = schemaRecords(table, schema);
  assert.deepEqual(Array.from(r.categorical), [0, 1, 3, 3]);
  assert.deepEqual(Array.from(r.categoricalAlias as Int32Array), [0, 1, -1, -1]);
});

test('schemaKeptRows: the rows applySchema keeps (dropRow on a numeric, a categorical and the label; fill, other and error keep)', () => {
  for (const labelSpec of [{ positive: ['yes'], negative: ['no'] }, { lower: 0, upper: 9 }]) {
    const schema = parseSchema({
      version: 1,
      columns: [
        { name: 'a', type: 'numeric', lower: 0, upper: 9, missing: 'dropRow' },
        { name: 'b', type: 'numeric', lower: 0, upper: 9, missing: 'fill', fillValue: 1 },
        { name: 'c', type: 'categorical', categories: ['p', 'q'], missing: 'dropRow' },
        { name: 'd', type: 'categorical', categories: ['p', 'q'], missing: 'other' },
        { name: 'skip', type: 'ignore' },
        { name: 'label', type: 'label', ...labelSpec, missing: 'dropRow' },
      ],
    });
    const label = (i: number) => (labelSpec.lower === undefined ? ['yes', 'no'][i % 2] : String(i % 3));
    const rows = Array.from({ length: 48 }, (_, i) => [i & 1 ? '' : '3', i & 2 ? '' : '4', i & 4 ? '?' : 'p', i & 8 ? '' : 'zz', i & 16 ? '' : 'k', i & 32 ? '' : label(i)]);
    const csv = (kept: string[][]) => `a,b,c,d,skip,label\n${kept.map((r) => r.join(',')).join('\n')}\n`;
    const options = { ...schemaCsvOptions(schema), columnTypes: { ...(schemaCsvOptions(schema).columnTypes as object), skip: 'categorical' as const } };
    const table = parseCsv(encode(csv(rows)), options);
    const kept = schemaKeptRows(table, schema);
    const expected = rows.map((_, i) => (i & (1 | 4 | 32) ? 0 : 1));
    assert.deepEqual(Array.from(kept), expected);
    // applySchema on the whole table = applySchema on the kept rows alone.
    const whole = applySchema(table, schema);
    const alone = applySchema(parseCsv(encode(csv(rows.filter((_, i) => kept[i] === 1))), options), schema);
    assert.equal(whole.dataset.n, 8); // rows with none of bits 0, 2 and 5 set, of 48
    assert.deepEqual([Array.from(whole.dataset.x), Array.from(whole.dataset.y)], [Array.from(alone.dataset.x), Array.from(alone.dataset.y)]);
  }
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

/** Brute force: for each probe row, is some reference row within the tolerance (each categorical value: equal slots or equal aliases >= 0)? */
function bruteForce(reference: SchemaRecords, probe: SchemaRecords, tolerance: number): number[] {
  const k = reference.numericColumns;
  const c = reference.categoricalColumns;
  const alias = (records: SchemaRecords, at: number) => (records.categoricalAlias === undefined ? -1 : records.categoricalAlias[at]);
  return Array.from({ length: probe.n }, (_, i) => {
    for (let r = 0; r < reference.n; r++) {
      let same = true;
      for (let j = 0; j < c && same; j++) {
        same = reference.categorical[r * c + j] === probe.categorical[i * c + j] || (alias(reference, r * c + j) >= 0 && alias(reference, r * c + j) === alias(probe, i * c + j));
      }
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

/**
 * Records with values in [0, 1] from lattice points of the tolerance (so pairs at or near it are
 * common), NaNs and a few slots; with `aliases`, each categorical value also has an alias in
 * [-1, 2], in any combination with its slot (the search must be exact for any records).
 */
function recordSets(numericColumns: number, categoricalColumns: number, aliases = false) {
  const value = fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: 12 }).map((m) => m * 0.001) },
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 12 }).chain((m) => fc.constantFrom(m * 0.001 + 1e-12, m * 0.001 - 1e-12, m * 0.0005)) },
    { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) },
    { weight: 1, arbitrary: fc.constant(NaN) },
  );
  const row = fc.record({
    numeric: fc.array(value, { minLength: numericColumns, maxLength: numericColumns }),
    categorical: fc.array(fc.integer({ min: -1, max: 2 }), { minLength: categoricalColumns, maxLength: categoricalColumns }),
    alias: fc.array(fc.integer({ min: -1, max: 2 }), { minLength: categoricalColumns, maxLength: categoricalColumns }),
  });
  const set = (rows: { numeric: number[]; categorical: number[]; alias: number[] }[]): SchemaRecords => ({
    n: rows.length,
    numericColumns,
    numeric: Float64Array.from(rows.flatMap((r) => r.numeric)),
    categoricalColumns,
    categorical: Int32Array.from(rows.flatMap((r) => r.categorical)),
    ...(aliases ? { categoricalAlias: Int32Array.from(rows.flatMap((r) => r.alias)) } : {}),
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

test('near duplicates: with aliases (the same categorical value when slots or aliases are equal), the search still finds exactly the brute-force pairs', () => {
  for (const [k, c] of [[0, 1], [2, 3], [MAX_GRID_COLUMNS + 1, 2]] as const) {
    fc.assert(
      fc.property(recordSets(k, c, true), fc.constantFrom(0.001, 0.0011), ([reference, probe], tolerance) => {
        assert.deepEqual(Array.from(nearDuplicateRows(reference, probe, tolerance)), bruteForce(reference, probe, tolerance));
      }),
      { seed: 29, numRuns: 300 },
    );
  }
});

test('near duplicates: the same categorical value is not transitive: RED is red and other, red is not other', () => {
  // One categorical column, no numeric: slot 0 = red, 1 = other; alias 0 = red.
  const records = (pairs: [number, number][]): SchemaRecords => ({
    n: pairs.length, numericColumns: 0, numeric: new Float64Array(0), categoricalColumns: 1,
    categorical: Int32Array.from(pairs.map((p) => p[0])), categoricalAlias: Int32Array.from(pairs.map((p) => p[1])),
  });
  const red: [number, number] = [0, 0];
  const RED: [number, number] = [1, 0];
  const blue: [number, number] = [1, -1]; // unlisted: other slot, no alias
  assert.deepEqual(Array.from(nearDuplicateRows(records([red]), records([RED, blue, red]), 0.001)), [1, 0, 1]);
  assert.deepEqual(Array.from(nearDuplicateRows(records([blue]), records([RED, blue, red]), 0.001)), [1, 1, 0]);
  assert.deepEqual(Array.from(nearDuplicateRows(records([RED]), records([red, blue, RED]), 0.001)), [1, 1, 1]);
  // Without aliases: slots alone.
  const { categoricalAlias: _, ...slotsOnly } = records([RED]);
  assert.deepEqual(Array.from(nearDuplicateRows(slotsOnly, records([red, blue]), 0.001)), [0, 1]);
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
